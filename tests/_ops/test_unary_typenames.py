"""Argument type errors of unary ops name the type as torch prints it (CPython's tp_name)."""
import numpy as np
import pytest

import ember
from ember._ops.unary import py_typename


@pytest.mark.parametrize("value, name", [
    ([1.0], "list"), (np.ones(2), "numpy.ndarray"), (1, "int"), (np.float64(1), "numpy.float64"),
    (np.int64(1), "numpy.int64"), (None, "NoneType"), (ember.float32, "ember.dtype"),
    (ember.device("cpu"), "ember.device"), (ember.Size([2]), "ember.Size"), (range(2), "range"), ("x", "str"),
])
def test_py_typename(value, name):
    assert py_typename(value) == name


def test_python_classes_print_their_bare_name():
    class Local:
        pass
    assert py_typename(Local()) == "Local"
    assert py_typename(ember.nn.Linear(1, 1)) == "Linear"


@pytest.mark.parametrize("fn", ["relu", "sigmoid", "exp", "sin", "abs", "tanh"])
def test_unary_rejects_ndarray_with_qualified_name(fn):
    with pytest.raises(TypeError) as e:
        getattr(ember, fn)(np.ones(2))
    assert str(e.value) == f"{fn}(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"


def test_unary_rejects_list_and_number():
    with pytest.raises(TypeError, match=r"^exp\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        ember.exp([1.0])
    with pytest.raises(TypeError, match=r"^abs\(\): argument 'input' \(position 1\) must be Tensor, not int$"):
        ember.abs(1)
    with pytest.raises(TypeError, match=r"must be Tensor, not ember\.Size$"):
        ember.sin(ember.Size([2]))
