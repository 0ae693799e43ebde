"""ufunc.at and ufunc.accumulate for NumPy and CuPy arrays.

NumPy has both for every ufunc and dtype, and the CPU path calls them directly. CuPy 14 has less:
- add.at for int32, int64, uint32, uint64, float16, float32 and float64 only;
- maximum.at / minimum.at whose float versions go through float32 (`fmaxf` in cupy/atomics.cuh: float64 values
  are rounded, and NaN is dropped rather than propagated), exact for 32- and 64-bit integers only;
- no multiply.at, and accumulate for add and multiply only.
The rest is built here from what CuPy has: a wider dtype for the small integer, bool and bfloat16 sums, real and
imaginary parts for complex sums, a sort and a log-step (Hillis-Steele) segmented scan for scattered products and
extremes, and a log-step scan along the axis for running extremes and logaddexp.
"""
import numpy as np

from . import XP

_ADD_AT = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64, np.float16, np.float32,
                                          np.float64))
_EXACT_MINMAX_AT = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64))


def _values(xp, v, dtype):
    """v as a device array of y's dtype: CuPy's scatter kernels want the array's own type."""
    v = v if v.__class__ is xp.ndarray else xp.asarray(v)
    return v.astype(dtype, copy=False)


def add_at(y, idx, v):
    """y[idx] += v in place, repeated indices summed: np.add.at."""
    if y.__class__ is np.ndarray:
        np.add.at(y, idx, v)
        return
    xp = XP[y.__class__]
    dt = y.dtype
    v = _values(xp, v, dt)
    if dt in _ADD_AT:
        xp.add.at(y, idx, v)
    elif dt.kind == "c":
        add_at(y.real, idx, v.real)
        add_at(y.imag, idx, v.imag)
    else:  # bool, 8/16-bit integers, bfloat16: sum in a wider type (bool: any nonzero sum is True, as NumPy's)
        wide = np.float32 if dt.kind == "V" or dt.kind == "f" else np.int32
        t = y.astype(wide)
        xp.add.at(t, idx, v.astype(wide))
        y[...] = t.astype(dt)


def reduce_at(ufunc, y, idx, v):
    """ufunc.at(y, idx, v) in place for np.multiply, np.maximum or np.minimum, with idx a 1-D array of
    non-negative positions along y's first axis and v broadcastable to idx.shape + y.shape[1:]."""
    if y.__class__ is np.ndarray:
        ufunc.at(y, idx, v)
        return
    xp = XP[y.__class__]
    v = xp.broadcast_to(_values(xp, v, y.dtype), idx.shape + y.shape[1:])
    if ufunc is not np.multiply and y.dtype in _EXACT_MINMAX_AT:
        getattr(xp, ufunc.__name__).at(y, idx, v)
        return
    if idx.size == 0:
        return
    order = xp.argsort(idx)
    keys = idx[order]
    vals = _spread_last(keys, _segment_scan(ufunc, keys, v[order]))
    y[keys] = ufunc(y[keys], vals)  # every member of a run carries the run's total: repeated writes agree


def _runs(same, ndim):
    return same.reshape(same.shape + (1,) * (ndim - 1))


def _segment_scan(ufunc, keys, vals):
    """Inclusive scan of vals within runs of equal (sorted) keys, in log2(n) steps. vals is overwritten."""
    n, d = keys.shape[0], 1
    while d < n:
        same = _runs(keys[d:] == keys[:-d], vals.ndim)
        vals[d:] = XP[vals.__class__].where(same, ufunc(vals[d:], vals[:-d]), vals[d:])
        d *= 2
    return vals


def _spread_last(keys, vals):
    """Every element of a run of equal keys set to the run's last element, in log2(n) steps."""
    n, d = keys.shape[0], 1
    while d < n:
        same = _runs(keys[:-d] == keys[d:], vals.ndim)
        vals[:-d] = XP[vals.__class__].where(same, vals[d:], vals[:-d])
        d *= 2
    return vals


def accumulate(ufunc, x, axis):
    """ufunc.accumulate(x, axis=axis)."""
    if x.__class__ is np.ndarray:
        return ufunc.accumulate(x, axis=axis)
    xp = XP[x.__class__]
    if ufunc is np.add:
        return xp.cumsum(x, axis=axis)
    if ufunc is np.multiply:
        return xp.cumprod(x, axis=axis)
    y = x.copy()
    ym = xp.moveaxis(y, axis, 0)
    n, d = ym.shape[0], 1
    while d < n:  # after the step of shift d, y[i] combines x[i - 2d + 1 .. i]
        ym[d:] = ufunc(ym[d:], ym[:-d])
        d *= 2
    return y
