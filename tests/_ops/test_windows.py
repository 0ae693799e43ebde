"""Window functions against NumPy's and hand-computed windows."""
import numpy as np
import pytest

import ember
from tests.helpers import assert_close

NAMES = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _numpy_window(name, length):
    """NumPy's symmetric windows (kaiser with torch's default beta=12)."""
    if name == "kaiser_window":
        return np.kaiser(length, 12.0)
    return getattr(np, {"hann_window": "hanning"}.get(name, name.split("_")[0]))(length)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("length", [2, 3, 8, 9, 16])
def test_symmetric_and_periodic_match_numpy(name, length):
    fn = getattr(ember, name)
    assert_close(fn(length, False, dtype=ember.float64), _numpy_window(name, length), atol=1e-12)
    # a periodic window is the symmetric one of length + 1 without its last point
    assert_close(fn(length, dtype=ember.float64), _numpy_window(name, length + 1)[:-1], atol=1e-12)


def test_hand_values():
    assert_close(ember.hann_window(4), [0.0, 0.5, 1.0, 0.5])
    assert_close(ember.bartlett_window(5, False), [0.0, 0.5, 1.0, 0.5, 0.0])
    assert_close(ember.hamming_window(5, False, 0.5, 0.4), [0.1, 0.5, 0.9, 0.5, 0.1])
    assert_close(ember.hamming_window(3, True, 0.6), [0.6 - 0.46, 0.6 + 0.23, 0.6 + 0.23])
    assert_close(ember.kaiser_window(4, False, 0.0, dtype=ember.float64), np.ones(4), atol=1e-12)
    assert_close(ember.kaiser_window(6, True, 5.0, dtype=ember.float64), np.kaiser(7, 5.0)[:-1], atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_short_lengths_dtype_and_flags(name):
    fn = getattr(ember, name)
    assert fn(0).shape == (0,) and fn(0).dtype == ember.float32
    assert fn(1).tolist() == [1.0] and fn(1, False).tolist() == [1.0]
    assert fn(5, dtype=ember.float64).dtype == ember.float64
    assert fn(5, dtype=ember.float16).dtype == ember.float16
    w = fn(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    ember.set_default_dtype(ember.float64)
    try:
        assert fn(3).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("name", NAMES)
def test_errors(name):
    fn = getattr(ember, name)
    with pytest.raises(RuntimeError, match=f"{name} requires non-negative window_length, got window_length=-1"):
        fn(-1)
    with pytest.raises(RuntimeError, match=f"{name} expects floating point dtypes, got: TensorOptions\\(dtype=long"):
        fn(4, dtype=ember.int64)
