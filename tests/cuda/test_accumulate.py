"""ember._backend.accumulate on device arrays: ufunc.at and ufunc.accumulate built from what CuPy 14 has, equal
to NumPy's on every dtype (exactly, except for rounding where sums and products run in another order)."""
import ml_dtypes
import numpy as np
import pytest

from ember import _backend
from ember._backend.accumulate import accumulate, add_at, reduce_at

DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint32, np.float16, np.float32, np.float64,
          np.complex64, np.complex128, ml_dtypes.bfloat16]


@pytest.fixture
def gpu(gpu):
    _backend.cupy()  # registers the device array type, as the first CUDA tensor does
    return gpu


def _values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -9, 10, shape).astype(dtype)
    v = rng.standard_normal(shape) / 3  # thirds: not exact in float32, so a float32 detour shows
    if dtype.kind == "c":
        v = v + 1j * rng.standard_normal(shape)
    return v.astype(dtype)


def _tol(dtype):
    dtype = np.dtype(dtype)
    if dtype == ml_dtypes.bfloat16:
        return {"rtol": 3e-2, "atol": 3e-2}
    if dtype == np.float16:
        return {"rtol": 3e-3, "atol": 3e-3}
    return {"rtol": 1e-6 if dtype in (np.float32, np.complex64) else 1e-12, "atol": 1e-6}


def _check(got, want, dtype, exact=False):
    got = got.get()
    assert got.dtype == want.dtype
    if exact or np.dtype(dtype).kind in "biu":
        if got.dtype == ml_dtypes.bfloat16:  # NumPy finds NaN equal to NaN in its own float types only
            got, want = got.astype(np.float32), want.astype(np.float32)
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128), **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("index", ["rows", "pairs", "mask"])
def test_add_at(dtype, index, gpu):
    rng = np.random.default_rng(0)
    y = _values(rng, (4, 3), dtype)
    if index == "rows":
        idx = (np.array([3, 0, 3, 3, 1]),)
    elif index == "pairs":
        idx = (np.array([0, 2, 0, 0]), np.array([1, 1, 1, 2]))
    else:
        idx = (np.array([True, False, True, True]),)
    v = _values(rng, y[idx].shape, dtype)
    want = y.copy()
    np.add.at(want, idx, v)
    dev = gpu.asarray(y)
    add_at(dev, tuple(gpu.asarray(i) for i in idx), gpu.asarray(v))
    _check(dev, want, dtype)


@pytest.mark.parametrize("ufunc", [np.multiply, np.maximum, np.minimum], ids=lambda u: u.__name__)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_reduce_at(ufunc, dtype, gpu):
    if np.dtype(dtype).kind == "c" and ufunc is not np.multiply:
        pytest.skip("no order on complex numbers")
    rng = np.random.default_rng(1)
    y = _values(rng, (5, 2), dtype)
    idx = np.array([4, 0, 4, 4, 2, 0, 4, 1, 4])
    v = _values(rng, (idx.size, 2), dtype)
    if np.dtype(dtype).kind in "fcV":
        v[2, 0] = np.nan  # NumPy's maximum and minimum propagate NaN; CuPy's float atomics drop it
    want = y.copy()
    ufunc.at(want, idx, v)
    dev = gpu.asarray(y)
    reduce_at(ufunc, dev, gpu.asarray(idx), gpu.asarray(v))
    _check(dev, want, dtype, exact=ufunc is not np.multiply)


def test_reduce_at_flat_scalar_and_empty(gpu):
    y = gpu.asarray(np.arange(1.0, 5.0))
    reduce_at(np.multiply, y, gpu.asarray(np.array([1, 1, 3])), 2.0)
    np.testing.assert_array_equal(y.get(), [1.0, 8.0, 3.0, 8.0])
    reduce_at(np.maximum, y, gpu.asarray(np.zeros(0, np.int64)), gpu.asarray(np.zeros(0)))
    np.testing.assert_array_equal(y.get(), [1.0, 8.0, 3.0, 8.0])


def test_reduce_at_long_runs(gpu):
    """Runs longer than any power of two the scan steps over, and a single run holding everything."""
    rng = np.random.default_rng(2)
    for idx in (rng.integers(0, 3, 1000), np.zeros(777, np.int64)):
        v = rng.standard_normal(idx.size)
        for ufunc in (np.maximum, np.minimum):
            want = np.zeros(3)
            ufunc.at(want, idx, v)
            dev = gpu.zeros(3)
            reduce_at(ufunc, dev, gpu.asarray(idx), gpu.asarray(v))
            np.testing.assert_array_equal(dev.get(), want)
        want = np.ones(3)
        np.multiply.at(want, idx, 1 + v / 1000)
        dev = gpu.ones(3)
        reduce_at(np.multiply, dev, gpu.asarray(idx), gpu.asarray(1 + v / 1000))
        np.testing.assert_allclose(dev.get(), want, rtol=1e-12)


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum, np.logaddexp, np.add, np.multiply],
                         ids=lambda u: u.__name__)
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int16])
def test_accumulate(ufunc, axis, dtype, gpu):
    if ufunc is np.logaddexp and np.dtype(dtype).kind != "f":
        pytest.skip("logaddexp is for floats")
    rng = np.random.default_rng(3)
    x = _values(rng, (5, 1, 6) if axis != 1 else (3, 9, 2), dtype)
    if np.dtype(dtype).kind == "f":
        x.flat[[4, 11]] = [np.nan, -np.inf]
    want = ufunc.accumulate(x, axis=axis)
    got = accumulate(ufunc, gpu.asarray(x), axis)
    assert type(got) is gpu.ndarray
    got = got.get()
    if ufunc in (np.maximum, np.minimum) or np.dtype(dtype).kind != "f":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_accumulate_short_axes(gpu):
    for shape in ((0, 3), (1, 3)):
        x = np.ones(shape)
        np.testing.assert_array_equal(accumulate(np.maximum, gpu.asarray(x), 0).get(), x)


def test_the_cpu_path_is_numpys():
    y = np.zeros(3)
    add_at(y, np.array([0, 0]), 1.0)
    reduce_at(np.multiply, y, np.array([0]), 3.0)
    assert y.tolist() == [6.0, 0.0, 0.0]
    assert accumulate(np.maximum, np.array([1, 3, 2]), 0).tolist() == [1, 3, 3]
