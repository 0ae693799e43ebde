"""manual_seed converts its argument with int() as torch does; set_rng_state's type errors."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("seed, stored", [
    ("1", 1), (" 12 ", 12), (b"3", 3), (2.7, 2), (True, 1), (np.int64(5), 5), (-1, 2 ** 64 - 1),
    (-2 ** 63, 2 ** 63), (2 ** 64 - 1, 2 ** 64 - 1),
])
def test_manual_seed_accepts_what_int_accepts(seed, stored):
    g = ember.manual_seed(seed)
    assert g is ember.default_generator
    assert ember.initial_seed() == stored


def test_manual_seed_with_string_reproduces_int_seed():
    ember.manual_seed("7")
    a = ember.rand(3).tolist()
    ember.manual_seed(7)
    assert ember.rand(3).tolist() == a
    ember.manual_seed(ember.tensor(7))
    assert ember.rand(3).tolist() == a


def test_manual_seed_errors_are_int_errors():
    with pytest.raises(ValueError, match=r"invalid literal for int\(\) with base 10: '1.5'"):
        ember.manual_seed("1.5")
    with pytest.raises(TypeError, match="int\\(\\) argument must be a string, a bytes-like object or a real number, "
                                        "not 'NoneType'"):
        ember.manual_seed(None)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        ember.manual_seed(2 ** 64)
    # a Generator's own manual_seed takes no strings
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got str"):
        ember.Generator().manual_seed("1")


@pytest.mark.parametrize("state, typename", [([1, 2], "list"), (None, "NoneType"),
                                             (np.zeros(3, np.uint8), "numpy.ndarray")])
def test_set_rng_state_rejects_non_tensors(state, typename):
    with pytest.raises(TypeError) as e:
        ember.set_rng_state(state)
    assert str(e.value) == f"expected a ember.ByteTensor, but got {typename}"
    with pytest.raises(TypeError) as e:
        ember.Generator().set_state(state)
    assert str(e.value) == f"expected a ember.ByteTensor, but got {typename}"


def test_set_rng_state_rejects_non_byte_tensors():
    with pytest.raises(TypeError, match="^RNG state must be a ember.ByteTensor$"):
        ember.set_rng_state(ember.zeros(3))


def test_set_rng_state_round_trip():
    s = ember.get_rng_state()
    a = ember.rand(4).tolist()
    ember.set_rng_state(s)
    assert ember.rand(4).tolist() == a
