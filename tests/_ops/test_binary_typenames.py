"""Binary ops with operands that are neither tensors nor numbers: torch's TypeError texts; number operands."""
import numpy as np
import pytest

import ember


def _msg(fn, arg, pos, typename):
    return f"{fn}(): argument '{arg}' (position {pos}) must be Tensor, not {typename}"


@pytest.mark.parametrize("fn", ["add", "sub", "mul", "div"])
def test_ndarray_input_is_rejected(fn):
    with pytest.raises(TypeError) as e:
        getattr(ember, fn)(np.ones(2), 1)
    assert type(e.value).__name__ == "TypeError"
    assert str(e.value) == _msg(fn, "input", 1, "numpy.ndarray")


_MISMATCH = "      didn't match because some of the arguments have invalid types: (!numpy.ndarray!, !int!)\n"


@pytest.mark.parametrize("fn, overloads", [
    ("rsub", " * (Tensor input, Tensor other, *, Number alpha = 1)\n * (Tensor input, Number other, Number alpha = "
             "1)\n"),
    ("remainder", " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Number self, Tensor other)\n"
                  + _MISMATCH + " * (Tensor input, Number other, *, Tensor out = None)\n"),
    ("floor_divide", " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other)\n"
                     + _MISMATCH),
    ("true_divide", " * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor input, Number other)\n"
                    + _MISMATCH),
])
def test_ndarray_input_lists_the_overloads(fn, overloads):
    with pytest.raises(TypeError) as e:
        getattr(ember, fn)(np.ones(2), 1)
    assert str(e.value) == (f"{fn}() received an invalid combination of arguments - got (numpy.ndarray, int), but "
                            f"expected one of:\n" + overloads)


def test_remainder_of_two_numbers_is_an_error():
    with pytest.raises(TypeError, match=r"^remainder\(\) received an invalid combination of arguments - got "
                                        r"\(int, int\)"):
        ember.remainder(2, 3)


def test_list_and_none_input_are_rejected():
    with pytest.raises(TypeError) as e:
        ember.add([1.0], ember.ones(1))
    assert str(e.value) == _msg("add", "input", 1, "list")
    with pytest.raises(TypeError) as e:
        ember.add(None, 1)
    assert str(e.value) == _msg("add", "input", 1, "NoneType")


def test_bad_other_operand():
    t = ember.ones(2)
    with pytest.raises(TypeError) as e:
        ember.add(t, [1.0])
    assert str(e.value) == _msg("add", "other", 2, "list")
    with pytest.raises(TypeError) as e:
        ember.div(t, "x")
    assert str(e.value) == _msg("div", "other", 2, "str")
    with pytest.raises(TypeError) as e:
        ember.maximum(t, np.ones(2))
    assert str(e.value) == _msg("maximum", "other", 2, "numpy.ndarray")
    with pytest.raises(TypeError) as e:
        ember.atan2(np.ones(2), t)
    assert str(e.value) == _msg("atan2", "input", 1, "numpy.ndarray")


def test_operators_still_give_python_type_error():
    with pytest.raises(TypeError, match="unsupported operand type"):
        ember.ones(2) + "s"
    with pytest.raises(TypeError, match="unsupported operand type"):
        ember.ones(2) - [1.0]


def test_two_numbers_wrap_the_first_as_tensor():
    r = ember.add(1, 2)
    assert r.dtype == ember.int64 and r.item() == 3 and r.shape == ()
    r = ember.mul(2.0, 3)
    assert r.dtype == ember.float32 and r.item() == 6.0
    assert ember.sub(1, 2).item() == -1
    r = ember.div(1, 2)
    assert r.dtype == ember.float32 and r.item() == 0.5
    assert ember.floor_divide(7, 2).item() == 3
    assert ember.true_divide(1, 2).item() == 0.5
    assert ember.add(1, ember.ones(2)).tolist() == [2.0, 2.0]
