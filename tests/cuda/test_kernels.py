"""ember._backend.kernels: fused kernels are built once per module and precision, run only on GPU arrays that
CuPy can compile for, and a failed compilation sends every later call back to the ufunc chains. The kernels
themselves (optimizer updates, LSTM steps) are compared with the CPU by test_optim_cuda and test_nn_cuda on a GPU.
"""
import types

import numpy as np
import pytest

from ember import _backend
from ember._backend.kernels import Kernels


class CompileException(Exception):
    """Named as CuPy's compiler error, which is what Kernels recognizes."""


class _Array:
    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)


@pytest.fixture
def stand_in():
    """A CuPy-like module with ElementwiseKernel, registered for _Array; `built` logs kernel builds, `calls` runs."""
    xp = types.ModuleType("stand_in_cupy")
    xp.ElementwiseKernel, xp.built, xp.calls = object, [], []
    _backend.XP[_Array] = xp
    yield xp
    del _backend.XP[_Array]


def _make(xp, name, wide):
    xp.built.append((name, wide))
    return lambda *args: xp.calls.append((name, wide, args))


def test_built_once_per_name_and_precision_and_called_with_the_args(stand_in):
    k = Kernels(_make)
    assert k("step", _Array(np.float32), (1, 2)) and k("step", _Array(np.float16), (3,))
    assert k("step", _Array(np.float64), (4,))
    assert stand_in.built == [("step", "float"), ("step", "double")]
    assert stand_in.calls == [("step", "float", (1, 2)), ("step", "float", (3,)), ("step", "double", (4,))]


def test_available_only_for_float_arrays_of_a_module_with_kernels(stand_in):
    k = Kernels(_make)
    assert k.available(_Array(np.float32)) and k.available(_Array(np.float64))
    assert not k.available(_Array(np.int64)) and not k.available(_Array(np.complex64))
    assert not k.available(np.zeros(3, np.float32))  # NumPy has no ElementwiseKernel: the chains run


def test_a_failed_compilation_falls_back_for_good(stand_in):
    def make(xp, name, wide):
        def kernel(*args):
            raise CompileException("nvrtc: error")
        return kernel
    k = Kernels(make)
    assert k("step", _Array(np.float32), ()) is False
    assert k.broken and not k.available(_Array(np.float32))


def test_other_errors_are_raised(stand_in):
    def make(xp, name, wide):
        def kernel(*args):
            raise ValueError("bad shapes")
        return kernel
    k = Kernels(make)
    with pytest.raises(ValueError, match="bad shapes"):
        k("step", _Array(np.float32), ())
    assert not k.broken
