"""The fake CuPy fails where CuPy 14.2 fails (the rules recorded in tests/cuda/cupy_api.py) and works where it works.

The tables run on the `gpu` fixture: the fake without a GPU, real CuPy on a machine with one, where they check
that the recorded rules still hold.
"""
import operator
import re
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

from . import cupy_api, fake_cupy


def _at(name, dtype):
    """ufunc.at with repeated integer indices on an array of dtype."""
    def run(cp):
        y = cp.zeros(3, dtype)
        getattr(cp, name).at(y, cp.asarray(np.array([0, 1, 0])), cp.ones(3, dtype))
    return run


# (id, a call on the cupy module, the exception CuPy raises, a piece of its message)
REJECTED = [
    # implicit device-to-host conversion
    ("np.asarray", lambda cp: np.asarray(cp.ones(3)), TypeError, "Implicit conversion to a NumPy array"),
    ("np.array of 0-d arrays", lambda cp: np.array([cp.ones(()), cp.ones(())]), TypeError, "Implicit conversion"),
    ("__array__", lambda cp: cp.ones(3).__array__(), TypeError, "Implicit conversion"),
    ("operator.index", lambda cp: operator.index(cp.zeros((), np.int64)), TypeError, "integer"),
    ("list index", lambda cp: [1, 2][cp.zeros((), np.int64)], TypeError, "indices must be integers"),
    # Python scalars from arrays: through a host copy, with NumPy's rules
    ("float of 3 elements", lambda cp: float(cp.ones(3)), TypeError, ""),
    ("int of 3 elements", lambda cp: int(cp.ones(3, np.int64)), TypeError, ""),
    ("bool of 3 elements", lambda cp: bool(cp.ones(3)), ValueError, "truth value of an array"),
    # host operands in device ops
    ("host right operand", lambda cp: cp.ones(3) + np.ones(3), TypeError, "Unsupported type"),
    ("host left operand", lambda cp: np.ones(3) + cp.ones(3), TypeError, "Unsupported type"),
    # ufunc methods CuPy does not implement
    ("multiply.at", _at("multiply", np.float64), NotImplementedError,
     "`cupy_multiply.at` is not supported yet"),
    ("np.multiply.at", lambda cp: np.multiply.at(cp.ones(3), cp.asarray(np.array([0, 0])), 2.0),
     NotImplementedError, "multiply.at"),
    ("np.divide.at", lambda cp: np.divide.at(cp.ones(3), cp.asarray(np.array([0])), 2.0), NotImplementedError,
     "divide.at"),
    ("maximum.accumulate", lambda cp: np.maximum.accumulate(cp.ones(3)), NotImplementedError,
     "`cupy_maximum.accumulate` is not supported yet"),
    ("minimum.accumulate", lambda cp: np.minimum.accumulate(cp.ones(3)), NotImplementedError, "accumulate"),
    ("logaddexp.accumulate", lambda cp: np.logaddexp.accumulate(cp.ones(3)), NotImplementedError, "accumulate"),
    ("maximum.reduce", lambda cp: np.maximum.reduce(cp.ones(3)), NotImplementedError, "reduce"),
    ("multiply.reduceat", lambda cp: np.multiply.reduceat(cp.ones(3), cp.asarray(np.array([0, 2]))),
     NotImplementedError, "reduceat"),
    # ufunc.at dtypes CuPy's atomics lack
    ("add.at complex128", _at("add", np.complex128), TypeError, "cupy.add.at only supports"),
    ("add.at int8", _at("add", np.int8), TypeError, "cupy.add.at only supports"),
    ("add.at bool", _at("add", np.bool_), TypeError, "cupy.add.at only supports"),
    ("maximum.at float16", _at("maximum", np.float16), TypeError, "cupy.maximum.at only supports"),
    ("minimum.at int16", _at("minimum", np.int16), TypeError, "cupy.minimum.at only supports"),
    # NumPy functions and names CuPy does not have
    ("np.nanquantile", lambda cp: np.nanquantile(cp.ones(3), 0.5), TypeError, "no implementation found"),
    ("np.linalg.vector_norm", lambda cp: np.linalg.vector_norm(cp.ones(3)), TypeError, "no implementation found"),
    ("np.linalg.matrix_norm", lambda cp: np.linalg.matrix_norm(cp.ones((2, 2))), TypeError, "no implementation"),
    ("np.linalg.multi_dot", lambda cp: np.linalg.multi_dot([cp.ones((2, 2))] * 3), TypeError, "no implementation"),
    ("np.spacing (a ufunc CuPy lacks)", lambda cp: np.spacing(cp.ones(3)), TypeError, ""),
    ("cupy.insert", lambda cp: cp.insert, AttributeError, "insert"),
    ("cupy.seterr", lambda cp: cp.seterr, AttributeError, "seterr"),
    ("cupy.linalg.vector_norm", lambda cp: cp.linalg.vector_norm, AttributeError, "vector_norm"),
    # ndarray attributes CuPy does not have
    ("ndarray.setflags", lambda cp: cp.ones(3).setflags, AttributeError, "setflags"),
    ("ndarray.resize", lambda cp: cp.ones(3).resize, AttributeError, "resize"),
    ("ndarray.ctypes", lambda cp: cp.ones(3).ctypes, AttributeError, "ctypes"),
    ("ndarray.__array_interface__", lambda cp: cp.ones(3).__array_interface__, AttributeError, "interface"),
    ("ndarray.to_device", lambda cp: cp.ones(3).to_device, AttributeError, "to_device"),
    # keyword arguments CuPy's functions and methods do not take
    ("ndarray.max(initial=)", lambda cp: cp.ones(3).max(initial=0.0), TypeError, "initial"),
    ("ndarray.sum(where=)", lambda cp: cp.ones(3).sum(where=cp.ones(3, bool)), TypeError, "where"),
    ("np.amax(initial=)", lambda cp: np.amax(cp.ones(3), initial=0.0), TypeError, "initial"),
    ("cupy.sort(stable=)", lambda cp: cp.sort(cp.ones(3), stable=True), TypeError, "stable"),
    ("cupy.argsort(stable=)", lambda cp: cp.argsort(cp.ones(3), stable=True), TypeError, "stable"),
    # dtypes CuPy refuses
    ("float8_e4m3fn array", lambda cp: cp.asarray(np.zeros(3, ml_dtypes.float8_e4m3fn)), ValueError,
     "Unsupported dtype float8_e4m3fn"),
    ("float8_e5m2 zeros", lambda cp: cp.zeros(3, ml_dtypes.float8_e5m2), ValueError, "Unsupported dtype float8_e5m2"),
    ("astype float8", lambda cp: cp.ones(3).astype(ml_dtypes.float8_e4m3fn), ValueError, "Unsupported dtype"),
    ("int4 array", lambda cp: cp.zeros(3, ml_dtypes.int4), ValueError, "Unsupported dtype int4"),
    ("object array", lambda cp: cp.zeros(3, object), ValueError, "Unsupported dtype object"),
    # where with a Python condition
    ("cupy.where(bool)", lambda cp: cp.where(True, cp.ones(3), cp.zeros(3)), AttributeError,
     "'bool' object has no attribute 'astype'"),
    ("np.where(bool)", lambda cp: np.where(False, cp.ones(3), cp.zeros(3)), AttributeError, "astype"),
    ("polygamma(int, x)", lambda cp: _special(cp).polygamma(1, cp.ones(3)), AttributeError, "astype"),
    # a host array written into a device slice
    ("fill(host array)", lambda cp: cp.ones(3).fill(np.ones(3)), ValueError, "non-scalar numpy.ndarray"),
    ("slice = host array", lambda cp: cp.ones(3).__setitem__(slice(1, None), np.ones(2)), ValueError,
     "non-scalar numpy.ndarray cannot be used for fill"),
    ("slice = list", lambda cp: cp.ones(3).__setitem__(slice(1, None), [1.0, 2.0]), ValueError, "non-scalar"),
    # linalg.solve does not broadcast batch dimensions
    ("linalg.solve broadcast", lambda cp: cp.linalg.solve(cp.eye(3), cp.ones((2, 3, 4))), ValueError,
     "a must have (..., M, M) shape"),
]


def _special(cp):
    import importlib
    return importlib.import_module("cupyx.scipy.special")


@pytest.mark.parametrize("call, exc, match", [pytest.param(*r[1:], id=r[0]) for r in REJECTED])
def test_rejected_as_cupy_rejects(call, exc, match, gpu):
    with pytest.raises(exc, match=re.escape(match) if match else None):
        call(gpu)


@pytest.mark.parametrize("call, name, what", [
    pytest.param(lambda cp, a, i: a.scatter_add(i, cp.ones(3)), "scatter_add", "cupy.add.at", id="scatter_add"),
    pytest.param(lambda cp, a, i: a.scatter_max(i, cp.ones(3)), "scatter_max", "cupy.maximum.at", id="scatter_max"),
    pytest.param(lambda cp, a, i: a.scatter_min(i, cp.ones(3)), "scatter_min", "cupy.minimum.at", id="scatter_min"),
    pytest.param(lambda cp, a, i: sys.modules["cupyx"].scatter_add(a, i, cp.ones(3)), "scatter_add", "cupy.add.at",
                 id="cupyx.scatter_add"),
])
def test_deprecated_scatter_methods_warn(call, name, what, gpu):
    a, i = gpu.zeros(3), gpu.asarray(np.array([0, 1, 0]))
    with pytest.warns(DeprecationWarning, match=f"`ndarray.{name}` is deprecated.*{what}"):
        call(gpu, a, i)


@pytest.mark.parametrize("call, dtype", [
    (lambda cp, a, c: cp.where(c, a, a), np.float32),
    (lambda cp, a, c: cp.where(c, a, np.asarray(0, ml_dtypes.bfloat16)[()]), np.float32),
    (lambda cp, a, c: cp.clip(a, -1, 1), np.float32),
    (lambda cp, a, c: a.clip(-1, 1), np.float32),
    (lambda cp, a, c: cp.around(a, 1), np.float32),
    (lambda cp, a, c: a.round(), np.float32),
    (lambda cp, a, c: cp.divmod(a, a)[0], np.float32),
    (lambda cp, a, c: cp.maximum(a, a), ml_dtypes.bfloat16),
    (lambda cp, a, c: cp.add(a, a), ml_dtypes.bfloat16),
    (lambda cp, a, c: cp.remainder(a, a), ml_dtypes.bfloat16),
], ids=["where", "where_scalar", "clip", "a.clip", "around", "a.round", "divmod", "maximum", "add", "remainder"])
def test_bfloat16_without_a_kernel_loop_comes_back_float32(call, dtype, gpu):
    """CuPy computes bfloat16 operands of a kernel without a bfloat16 loop in float32, and answers float32."""
    a = gpu.asarray(np.array([0.5, -1.5, 2.25], ml_dtypes.bfloat16))
    assert call(gpu, a, a > 0).dtype == np.dtype(dtype)


def test_float_maximum_at_goes_through_float32(gpu):
    """CuPy's atomicMax/atomicMin for float and double use fmaxf/fminf: float64 results are rounded to float32,
    and NaN never wins. Positions no index touches keep their exact values."""
    x = 1 / 3
    y = gpu.asarray(np.array([0.0, x, 5.0]))
    gpu.maximum.at(y, gpu.asarray(np.array([0, 0, 1])), gpu.asarray(np.array([x, np.nan, -1.0])))
    np.testing.assert_array_equal(y.get(), [np.float32(x), np.float32(x), 5.0])
    z = gpu.asarray(np.array([2.0], np.float32))
    gpu.minimum.at(z, gpu.asarray(np.array([0])), gpu.asarray(np.array([np.nan], np.float32)))
    assert z.get()[0] == 2.0


# what CuPy has keeps working
def _setitem(a, key, value):
    a[key] = value
    return a


WORKS = [
    ("add.at float64", _at("add", np.float64)),
    ("add.at float16", _at("add", np.float16)),
    ("add.at int64", _at("add", np.int64)),
    ("add.at int32", _at("add", np.int32)),
    ("maximum.at int64", _at("maximum", np.int64)),
    ("minimum.at int32", _at("minimum", np.int32)),
    ("add.accumulate", lambda cp: np.add.accumulate(cp.ones(3))),
    ("multiply.accumulate", lambda cp: np.multiply.accumulate(cp.ones((2, 3)), axis=1)),
    ("add.reduce", lambda cp: np.add.reduce(cp.ones(3))),
    ("multiply.reduce", lambda cp: cp.multiply.reduce(cp.ones(3))),
    ("add.reduceat", lambda cp: np.add.reduceat(cp.ones(4), cp.asarray(np.array([0, 2])))),
    ("maximum.outer", lambda cp: np.maximum.outer(cp.ones(2), cp.ones(3))),
    ("cupy.where(numpy bool)", lambda cp: cp.where(np.True_, cp.ones(3), cp.zeros(3))),
    ("cupy.where(mask)", lambda cp: cp.where(cp.ones(3) > 0, cp.ones(3), 0.0)),
    ("slice = device array", lambda cp: _setitem(cp.ones(3), slice(1, None), cp.zeros(2))),
    ("slice = scalar", lambda cp: _setitem(cp.ones(3), slice(1, None), 5.0)),
    ("slice = numpy scalar", lambda cp: _setitem(cp.ones(3), slice(1, None), np.float32(5.0))),
    ("index array = host array", lambda cp: _setitem(cp.ones(3), np.array([0, 2]), np.zeros(2))),
    ("fill(0-d host array)", lambda cp: cp.ones(3).fill(np.array(2.0))),
    ("asarray(host array)", lambda cp: cp.asarray(np.ones(3))),
    ("asarray(bfloat16 host array)", lambda cp: cp.asarray(np.ones(3, ml_dtypes.bfloat16))),
    ("array(list of device 0-d arrays)", lambda cp: cp.array([cp.ones(()), cp.zeros(())])),
    ("take(host indices)", lambda cp: cp.ones(3).take(np.array([0, 2]))),
    ("np.concatenate", lambda cp: np.concatenate([cp.ones(2), cp.ones(3)])),
    ("np.linalg.norm", lambda cp: np.linalg.norm(cp.ones(3))),
    ("linalg.solve same batch", lambda cp: cp.linalg.solve(cp.ones((2, 3, 3)) + cp.eye(3), cp.ones((2, 3, 4)))),
    ("polygamma(array, x)", lambda cp: _special(cp).polygamma(cp.asarray(1), cp.ones(3))),
    ("float(0-d)", lambda cp: float(cp.ones(()))),
    ("int(0-d)", lambda cp: int(cp.ones((), np.int64))),
    ("bool(0-d)", lambda cp: bool(cp.ones((), bool))),
    ("get", lambda cp: cp.ones(3).get()),
    ("asnumpy", lambda cp: cp.asnumpy(cp.ones(3))),
]


@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in WORKS])
def test_what_cupy_has_works(call, gpu):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call(gpu)


def test_results_are_device_arrays_and_views(gpu):
    a = gpu.arange(6.0).reshape(2, 3)
    s = a.sum()
    assert type(s) is gpu.ndarray and s.shape == ()  # 0-d arrays where NumPy answers scalars
    e = a[1, 2]
    assert type(e) is gpu.ndarray and float(e) == 5.0
    e.fill(7.0)  # a 0-d view: writing through it changes a
    assert float(a[1, 2]) == 7.0
    v = a[:, 1:]
    v += 1
    assert a.get()[0, 1] == 2.0 and v.base is (a.base if a.base is not None else a)
    assert type(np.concatenate([a, a])) is gpu.ndarray and type(np.linalg.norm(a)) is gpu.ndarray


# the fake itself
def test_namespaces_hold_only_cupy_names(fake_gpu):
    extra = {"IS_FAKE", "ndarray", "ufunc", "cuda", "random", "linalg", "fft", "lib"}
    names = {n for n in dir(fake_gpu) if not n.startswith("_")}
    assert names - extra <= set(cupy_api.FUNCTIONS["cupy"]) | set(cupy_api.CONSTANTS)
    assert {n for n in dir(fake_gpu.linalg) if not n.startswith("_")} <= set(cupy_api.FUNCTIONS["cupy.linalg"])
    special = sys.modules["cupyx.scipy.special"]
    assert {n for n in dir(special) if not n.startswith("_")} <= set(cupy_api.FUNCTIONS["cupyx.scipy.special"])
    attrs = set(cupy_api.NDARRAY_METHODS) | set(cupy_api.NDARRAY_ATTRIBUTES)
    assert {n for n in dir(fake_gpu.ndarray) if not n.startswith("_")} <= attrs
    assert fake_gpu.__version__.startswith(cupy_api.VERSION)


def test_fake_refuses_host_arrays_in_routines(fake_gpu):
    """CuPy's kernels take device arrays only, so its routines refuse host arrays (a few convert them): the fake
    refuses them in every routine."""
    with pytest.raises(TypeError, match="Unsupported type"):
        fake_gpu.concatenate([fake_gpu.ones(2), np.ones(2)])


def test_fake_cannot_compile_kernels(fake_gpu):
    for name in ("ElementwiseKernel", "RawKernel", "ReductionKernel", "fuse"):
        assert not hasattr(fake_gpu, name)


def test_recorded_rules_are_the_ones_enforced():
    """The data the fake follows says what the tables above assume (regenerate it with make_cupy_api.py)."""
    m = cupy_api.UFUNC_METHODS
    assert m["accumulate"] == ["add", "multiply"] and m["reduce"] == ["add", "multiply"] and m["reduceat"] == ["add"]
    assert "multiply" not in m["at"] and "complex128" not in m["at"]["add"] and "float16" not in m["at"]["maximum"]
    assert "bfloat16" in cupy_api.DTYPES and "float8_e4m3fn" in cupy_api.REJECTED_DTYPES
    assert cupy_api.FLOAT_ATOMIC_MINMAX["max double"] == "fmaxf"
    assert fake_cupy._LOSSY_MINMAX_AT[("maximum", "float64")][1] is np.float32
