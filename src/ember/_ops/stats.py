"""Statistics: var/std (and var_mean/std_mean), logsumexp, norm, median/nanmedian/mode and quantile/nanquantile.
Result dtypes and gradients follow the NOTEs of reduce.py."""
import builtins
import math
import numbers
import warnings

import numpy as np

from .. import _dtype
from .. import return_types as _rt
from .._autocast import AUTOCAST, cast_one
from .._backend import XP, deferred, maybe_any, sort_keys
from .._tensor import Tensor
from .._dtype import SCALAR_NAMES
from ._dispatch import SAVE_BOTH, SAVE_NONE, Op, dispatch1
from ._inplace import write_out
from ._reduce_util import (_INF, _acc, _back, _cast, _const, _count, _index_bwd, _is_float, _keep_np, _not_implemented,
                           _one_dim, _out, _out2, _rdims, _scalar_name, _select, _squeeze_np, _take, _zero_dim_pair,
                           dims_of, expand_grad)
from .binary import where
from .reduce import _spread, _spread_bwd, mean

__all__ = ["std", "var", "std_mean", "var_mean", "logsumexp", "norm", "median", "nanmedian", "mode", "quantile",
           "nanquantile", "cov", "corrcoef"]


# ---------------- var / std / var_mean / std_mean ----------------
def _moments(x, dims, correction):
    """(sum of squared deviations, mean), both with the reduced dims kept, in the compute dtype; and the
    divisor max(0, N - correction)."""
    xc, _ = _acc(x)
    n = _count(x.shape, dims)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = xc.sum(axis=dims, keepdims=True) / n
        d = xc - m
        if d.dtype.kind == "c":
            sq = d.real * d.real + d.imag * d.imag
        elif d.__class__ in XP:
            sq = np.multiply(d, d, out=d)
        else:  # a zero-dim input gives a NumPy scalar
            sq = d * d
        ss = sq.sum(axis=dims, keepdims=True)
    return ss, m, builtins.max(0, n - correction)


_REAL = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}


def _real_dtype(dt):
    return _REAL.get(dt, dt)


def _var_fwd(x, dims, keepdim, correction, root):
    ss, _, div = _moments(x, dims, correction)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = ss / div
        if root:
            v = np.sqrt(v)
    return _squeeze_np(v, dims, keepdim).astype(_real_dtype(x.dtype), copy=False)


def _var_mean_fwd(x, dims, keepdim, correction, root):
    ss, m, div = _moments(x, dims, correction)
    with np.errstate(invalid="ignore", divide="ignore"):
        v = ss / div
        if root:
            v = np.sqrt(v)
    return (_squeeze_np(v, dims, keepdim).astype(_real_dtype(x.dtype), copy=False),
            _squeeze_np(m, dims, keepdim).astype(x.dtype, copy=False))


def _var_grad(x, gv, dims, keepdim, correction):
    """d var / dx = 2 (x - mean) / (N - correction)."""
    shape = x._data.shape
    div = builtins.max(0, _count(shape, dims) - correction)
    scale = 2.0 / div if div > 0 else _INF
    return expand_grad(gv, shape, dims, keepdim) * (scale * (x - mean(x, dims, True)))


def _std_to_var_grad(g, y):
    """d std = d var / (2 std); torch gives 0 where std is 0."""
    yd = y._data
    zero = yd == 0
    if maybe_any(zero):
        return g / (2 * (y + _const(zero, y))) * _const(~zero, y)
    return g / (2 * y)


def _var_bwd(ctx, g):
    dims, keepdim, correction, root = ctx.attrs
    if root:
        g = _std_to_var_grad(g, ctx.output)
    return _var_grad(ctx.inputs[0], g, dims, keepdim, correction)


def _var_mean_bwd(ctx, gs):
    x = ctx.inputs[0]
    dims, keepdim, correction, root = ctx.attrs
    gv, gm = gs
    gx = None
    if gv is not None:
        if root:
            gv = _std_to_var_grad(gv, ctx.outputs[0])
        gx = _var_grad(x, gv, dims, keepdim, correction)
    if gm is not None:
        shape = ctx.shapes[0]
        part = expand_grad(gm / _count(shape, dims), shape, dims, keepdim)
        gx = part if gx is None else gx + part
    return gx


VAR = Op("var", _var_fwd, _var_bwd, SAVE_BOTH, node_name="VarBackward0")
STD = Op("std", _var_fwd, _var_bwd, SAVE_BOTH, node_name="StdBackward0")
VAR_MEAN = Op("var_mean", _var_mean_fwd, _var_mean_bwd, SAVE_BOTH, nout=2)
STD_MEAN = Op("std_mean", _var_mean_fwd, _var_mean_bwd, SAVE_BOTH, nout=2)


def _var_args(name, input, dim, unbiased, correction):
    """torch's overloads: (dim, unbiased, keepdim), (unbiased) and (dim, *, correction, keepdim)."""
    if isinstance(dim, bool):
        if unbiased is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    elif isinstance(correction, Tensor):
        correction = correction.item()
    d = input._data
    if not _is_float(d.dtype) and d.dtype.kind != "c":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = _rdims(dim, d.ndim)
    if _count(d.shape, dims) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      f"factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return dims, correction


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None, keepdims=None):
    """Same as `torch.var`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    dims, c = _var_args("var", input, dim, unbiased, correction)
    return _out(dispatch1(VAR, input, dims, keepdim, c, False), out, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None, keepdims=None):
    """Same as `torch.std`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    dims, c = _var_args("std", input, dim, unbiased, correction)
    return _out(dispatch1(STD, input, dims, keepdim, c, True), out, "std")


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None, keepdims=None):
    """Same as `torch.var_mean`: the tuple (var, mean)."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    dims, c = _var_args("var_mean", input, dim, unbiased, correction)
    r = dispatch1(VAR_MEAN, input, dims, keepdim, c, False)
    return r if out is None else (write_out(r[0], out[0], "var_mean"), write_out(r[1], out[1], "var_mean"))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None, keepdims=None):
    """Same as `torch.std_mean`: the tuple (std, mean)."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    dims, c = _var_args("std_mean", input, dim, unbiased, correction)
    r = dispatch1(STD_MEAN, input, dims, keepdim, c, True)
    return r if out is None else (write_out(r[0], out[0], "std_mean"), write_out(r[1], out[1], "std_mean"))


# ---------------- logsumexp ----------------
def _lse_fwd(x, dims, keepdim):
    if x.ndim == 0:
        return x.copy()
    xc, dt = _acc(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        if xc.size == 0:
            r = np.log(np.exp(xc).sum(axis=dims, keepdims=True))
        else:
            m = xc.max(axis=dims, keepdims=True)
            m[~np.isfinite(m)] = 0  # all -inf (or an inf/nan) lines: shifting by them would give nan
            e = np.exp(xc - m)
            r = np.log(e.sum(axis=dims, keepdims=True))
            r += m
    return _back(_squeeze_np(r, dims, keepdim), dt)


def _lse_bwd(ctx, g):
    x, y = ctx.inputs[0], ctx.output
    dims, keepdim = ctx.attrs
    shape = ctx.shapes[0]
    return expand_grad(g, shape, dims, keepdim) * (x - expand_grad(y, shape, dims, keepdim)).exp()


LOGSUMEXP = Op("logsumexp", _lse_fwd, _lse_bwd, SAVE_BOTH)


def _float_input(x):
    return x.to(_dtype.get_default_dtype()) if x._data.dtype.kind in "biu" else x


def logsumexp(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.logsumexp`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    if AUTOCAST[0]:
        input = cast_one("logsumexp", input)
    input = _float_input(input)
    return _out(dispatch1(LOGSUMEXP, input, _rdims(dim, input._data.ndim), keepdim), out, "logsumexp")


# ---------------- norm ----------------
def _vnorm_fwd(x, ord, dims, keepdim):
    xc, _ = _acc(x)
    rdt = _real_dtype(x.dtype)
    if ord == 2 and dims is None and xc.dtype.kind == "f" and xc.flags.c_contiguous:
        flat = xc.reshape(-1)
        r = np.sqrt(np.dot(flat, flat))  # BLAS: no temporary
        return r.astype(rdt).reshape((1,) * x.ndim if keepdim else ())
    a = np.abs(xc)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if ord == 2:
            r = np.sqrt(np.multiply(a, a, out=a).sum(axis=dims, keepdims=keepdim))
        elif ord == 1:
            r = a.sum(axis=dims, keepdims=keepdim)
        elif ord == _INF:
            r = a.max(axis=dims, keepdims=keepdim)
        elif ord == -_INF:
            r = a.min(axis=dims, keepdims=keepdim)
        elif ord == 0:
            r = (a != 0).sum(axis=dims, keepdims=keepdim, dtype=a.dtype)
        else:
            r = np.power(np.power(a, ord).sum(axis=dims, keepdims=keepdim), 1.0 / ord)
    return r.astype(rdt, copy=False)


def _sgn(x):
    """sgn(x) as a graph constant (x / |x| for complex, 0 at 0)."""
    xd = x._data
    if xd.dtype.kind == "c":
        a = np.abs(xd)
        with np.errstate(invalid="ignore", divide="ignore"):
            s = np.where(a == 0, 0, xd / np.where(a == 0, 1, a))
        return _const(s, x)
    return _const(np.sign(xd), x)


def _vnorm_bwd(ctx, g):
    x, y = ctx.inputs[0], ctx.output
    ord, dims, keepdim = ctx.attrs
    shape = ctx.shapes[0]
    if ord == 0:
        return None
    g = expand_grad(g, shape, dims, keepdim)
    if ord == 1:
        return g * _sgn(x)
    if ord == _INF or ord == -_INF:
        ax = Tensor._make(np.abs(x._data))
        return g * _sgn(x) * _spread(ax, y, dims, keepdim, False)
    yd = y._data
    yz = yd == 0
    ysafe = y + _const(yz, y) if maybe_any(yz) else y  # torch: zero gradient where the norm is 0
    ye = expand_grad(ysafe, shape, dims, keepdim)
    if ord == 2:
        return g * x / ye
    # general p: g * sgn(x) |x|^(p-1) / norm^(p-1); torch gives 0 where x is 0 or the norm is 0
    xz = x._data == 0
    ax = x * _sgn(x) if x._data.dtype.kind != "c" else x.abs()
    if maybe_any(xz):
        ax = ax + _const(xz, ax)
    gx = g * _sgn(x) * ax ** (ord - 1) / ye ** (ord - 1)
    keep = ~xz
    if maybe_any(yz):
        keep &= ~_keep_np(yz, shape, dims, keepdim)
    return gx if keep.__class__ is np.ndarray and keep.all() else gx * _const(keep, ax)


VECTOR_NORM = Op("linalg_vector_norm", _vnorm_fwd, _vnorm_bwd, SAVE_BOTH)


def _fmt_ord(ord):
    return str(int(ord)) if math.isfinite(ord) and float(ord).is_integer() else str(ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm's computation (shared by norm)."""
    if isinstance(ord, Tensor):
        ord = ord.item()
    ord = float(ord)
    d = x._data
    if not _is_float(d.dtype) and d.dtype.kind != "c":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_scalar_name(d.dtype)}")
    if dtype is not None:
        if dtype._cat < _dtype._FLOAT:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{SCALAR_NAMES[dtype.name]}")
        if _dtype.promote_types(_dtype.FROM_NP[d.dtype], dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_scalar_name(d.dtype)}) should be "
                               f"convertible without narrowing to the specified dtype ({SCALAR_NAMES[dtype.name]})")
        x = _cast(x, dtype)
        d = x._data
    dims = dims_of(dim, d.ndim)
    if ord < 0 or ord == _INF:
        _check_norm_empty(d, dims, ord)
    return dispatch1(VECTOR_NORM, x, ord, None if d.ndim == 0 else dims, keepdim)


def _check_norm_empty(d, dims, ord):
    if dims is None:
        if d.size == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_fmt_ord(ord)} norm on an empty tensor "
                               f"because the operation does not have an identity")
        return
    for i in dims:
        if d.ndim and d.shape[i] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_fmt_ord(ord)} norm on the dimension "
                               f"{i}because this dimension is empty and the operation does not have an identity")


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Same as `torch.norm`: vector norms for numeric p (and 'fro' over at most two dims), 'nuc' through
    ember.linalg.matrix_norm."""
    if isinstance(dim, numbers.Integral):
        dim = (dim,)
    if p is None:
        p = "fro"
    if AUTOCAST[0] and dtype is None:
        input = cast_one("linalg_vector_norm", input)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return _out(vector_norm(input, 2, dim, keepdim, dtype=dtype), out, "norm")
        dims = tuple(range(input._data.ndim)) if dim is None else tuple(dim)
        if p not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if input._data.ndim < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
        from .norms import matrix_norm
        r = matrix_norm(input, p, dims, keepdim, dtype=dtype)
        return _out(r, out, "norm")
    return _out(vector_norm(input, p, dim, keepdim, dtype=dtype), out, "norm")


# ---------------- median / nanmedian / mode ----------------
def _median_all_fwd(x, ignore_nan):
    flat = x.reshape(-1)
    if flat.__class__ is not np.ndarray and flat.size and _is_float(x.dtype):  # no host read: NaNs sort last
        xp = XP[flat.__class__]
        n, nn = flat.size, xp.isnan(flat).sum()
        k = xp.maximum(n - nn - 1, 0) // 2 if ignore_nan else xp.where(nn > 0, n - nn, (n - 1) // 2)
        return flat[xp.argsort(sort_keys(flat))[k]]
    if _is_float(x.dtype):
        nan = np.isnan(flat)
        if nan.any():
            if not ignore_nan:
                return np.full_like(flat, np.nan, shape=())
            flat = flat[~nan]
        if flat.size == 0:
            return np.full_like(flat, np.nan, shape=())
    k = (flat.size - 1) // 2
    return np.partition(sort_keys(flat), k)[k].astype(flat.dtype, copy=False)


MEDIAN_ALL = Op("median", _median_all_fwd, _spread_bwd(True, True), SAVE_BOTH)
NANMEDIAN_ALL = Op("nanmedian", _median_all_fwd, _spread_bwd(True, True), SAVE_BOTH)


def _median_dim_fwd(x, dim, keepdim, ignore_nan):
    if x.ndim == 0:
        return _zero_dim_pair(x)
    n = x.shape[dim]
    # NaNs sort last; ties keep their order, as torch picks them
    order = np.argsort(sort_keys(x), axis=dim, kind="stable")
    if _is_float(x.dtype):
        nn = np.isnan(x).sum(axis=dim, keepdims=True)
        if ignore_nan:
            k = np.maximum(n - nn - 1, 0) // 2
        else:
            k = np.where(nn > 0, n - nn, (n - 1) // 2)
    else:
        shape = list(x.shape)
        shape[dim] = 1
        k = np.full(shape, (n - 1) // 2)
    return _select(x, np.take_along_axis(order, k, dim), dim, keepdim)


MEDIAN_DIM = Op("median", _median_dim_fwd, _index_bwd, SAVE_NONE, nout=2, extra=True, node_name="MedianBackward1")
NANMEDIAN_DIM = Op("nanmedian", _median_dim_fwd, _index_bwd, SAVE_NONE, nout=2, extra=True,
                   node_name="NanmedianBackward1")


def _median(name, input, dim, keepdim, out, ignore_nan):
    d = input._data
    if d.dtype.kind == "c" or d.dtype.kind == "b":
        raise _not_implemented("median_cpu" if dim is None else "median_out", input)
    if dim is None:
        return _out(dispatch1(NANMEDIAN_ALL if ignore_nan else MEDIAN_ALL, input, ignore_nan), out, name)
    dim = _one_dim(dim, d.ndim)
    if d.ndim and d.shape[dim] == 0:
        raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
    r = dispatch1(NANMEDIAN_DIM if ignore_nan else MEDIAN_DIM, input, dim, keepdim, ignore_nan)
    return _out2(r, out, name, _rt.nanmedian if ignore_nan else _rt.median)


def median(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.median`: the lower median of all elements, or (values, indices) along dim."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _median("median", input, dim, keepdim, out, False)


def nanmedian(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.nanmedian`: median() ignoring NaNs."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _median("nanmedian", input, dim, keepdim, out, True)


def _mode_fwd(x, dim, keepdim):
    if x.ndim == 0:
        return _zero_dim_pair(x)
    xm = np.moveaxis(x, dim, -1)
    lead, n = xm.shape[:-1], xm.shape[-1]
    rows = xm.reshape(-1, n)
    order = np.argsort(sort_keys(rows), axis=1, kind="stable")
    s = np.take_along_axis(rows, order, 1)
    # runs of equal values in each sorted row; the mode is the first longest run (so the smallest value), its
    # index the last occurrence (the run's end, as the sort is stable)
    xp = np if x.__class__ is np.ndarray else XP[x.__class__]
    new = xp.ones(s.shape, bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    run = np.cumsum(new.reshape(-1)) - 1
    length = np.bincount(run)[run].reshape(s.shape) if run.size else xp.zeros(s.shape, np.int64)
    start = np.argmax(length, axis=1)[:, None]
    end = start + np.take_along_axis(length, start, 1) - 1
    v = np.take_along_axis(s, start, 1).reshape(lead)
    i = np.take_along_axis(order, end, 1).reshape(lead).astype(np.int64)
    ik = np.expand_dims(i, dim)
    if keepdim:
        return (np.expand_dims(v, dim), ik), ik
    return (v, i), ik


MODE = Op("mode", _mode_fwd, _index_bwd, SAVE_NONE, nout=2, extra=True)


def mode(input, dim=-1, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.mode`: the most frequent value (the smallest among equally frequent ones) and the index of
    its last occurrence."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    d = input._data
    if d.dtype.kind == "c":
        raise _not_implemented("mode_cpu", input)
    dim = _one_dim(dim, d.ndim)
    if d.ndim and d.shape[dim] == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    return _out2(dispatch1(MODE, input, dim, keepdim), out, "mode", _rt.mode)


# ---------------- quantile / nanquantile ----------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_array(input, q):
    """q as an array of the input's dtype (0-d for a scalar q; torch computes positions in it), checked as torch
    checks it."""
    if isinstance(q, Tensor):
        if q._data.dtype != input._data.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q._data.ndim > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        qa = q._data
        if qa.__class__ is not np.ndarray:  # reported at the next synchronization, replaced by 0 meanwhile
            ok = (qa >= 0) & (qa <= 1)
            deferred.fail_if_any(XP[qa.__class__], ~ok, RuntimeError, "quantile() q values must be in the range "
                                 "[0, 1]")
            return XP[qa.__class__].where(ok, qa, qa.dtype.type(0))
        if ((qa < 0) | (qa > 1)).any():
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        return qa
    q = float(q)
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    d = input._data
    return np.asarray(q, d.dtype) if d.__class__ is np.ndarray else XP[d.__class__].asarray(q, d.dtype)


def _quantile_positions(xd, dim, qa, interpolation, ignore_nan):
    """(low index, high index, weight, d weight / d q) into the sorted dim, shaped (len(q), ..., 1, ...)."""
    n = xd.shape[dim]
    nn = np.isnan(xd).sum(axis=dim, keepdims=True)
    last = ((n - nn - 1) if ignore_nan else nn * 0 + (n - 1)).astype(xd.dtype)
    qb = qa.reshape((-1,) + (1,) * xd.ndim)
    pos = qb * last
    fixed = last < 0 if ignore_nan else nn > 0
    if ignore_nan:
        pos = np.where(fixed, 0, pos)  # all NaN: the first (NaN) element
    else:
        pos = np.where(fixed, n - 1, pos)  # any NaN: the last sorted element, a NaN
    if interpolation == "nearest":
        pos = np.round(pos)
    lo, hi = np.floor(pos), np.ceil(pos)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    w = 0.5 if interpolation == "midpoint" else pos - lo
    slope = np.where(fixed, 0, last) if interpolation == "linear" else None
    return lo.astype(np.intp), hi.astype(np.intp), w, slope


def _quantile(name, input, q, dim, keepdim, interpolation, out, ignore_nan):
    d = input._data
    if d.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if d.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    qa = _q_array(input, q)
    x = input
    if dim is None:
        x, dim, out_dim = input.reshape(-1), 0, None
    else:
        dim = out_dim = _one_dim(dim, d.ndim)
        if d.ndim == 0:
            x = input.reshape(1)
    xd = x._data
    order = np.argsort(sort_keys(xd), axis=dim, kind="stable")[None]
    lo, hi, w, slope = _quantile_positions(xd, dim, qa, interpolation, ignore_nan)
    x1 = x.unsqueeze(0)
    vlo = _take(x1, np.take_along_axis(order, lo, dim + 1), dim + 1)
    if interpolation in ("lower", "higher", "nearest"):
        r = vlo
    else:
        vhi = _take(x1, np.take_along_axis(order, hi, dim + 1), dim + 1)
        r = vlo + (vhi - vlo) * (w if isinstance(w, float) else _const(w, x))
        if slope is not None and isinstance(q, Tensor) and q.requires_grad:
            # q's part, zero in value: d r / d q = (n - 1) (hi - lo), none where NaNs fix the position (there
            # hi - lo is NaN, and masked rather than multiplied by 0)
            qt = q.reshape((-1,) + (1,) * xd.ndim)
            step = where(Tensor._make(slope == 0), r.new_zeros(()), (vhi - vlo) * _const(slope, x))
            r = r + (qt - qt.detach()) * step
    return _out(r.reshape(list(qa.shape) + _quantile_tail(input._data.shape, out_dim, keepdim)), out, name)


def _quantile_tail(shape, dim, keepdim):
    """The output's dims after q's: the input's, with dim (all dims for None) removed or kept as 1."""
    if dim is None:
        return [1] * len(shape) if keepdim else []
    if keepdim:
        return [1 if i == dim else s for i, s in enumerate(shape)]
    return [s for i, s in enumerate(shape) if i != dim]


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Same as `torch.quantile`."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, out, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """Same as `torch.nanquantile`."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, out, True)


# ---------------- binding ----------------
def _bind():
    for name in __all__:
        if name not in ("std_mean", "var_mean"):  # functions only, as in torch
            setattr(Tensor, name, globals()[name])


# ---------------- cov / corrcoef (composites of differentiable ops) ----------------
def _check_weights(name, w, n):
    if w is None:
        return None
    if w._data.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {w._data.ndim} dimensions")
    if w._data.size != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w._data.size} != {n}")
    if name == "fweights" and w._data.dtype.kind not in "iu":
        raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                           f"{SCALAR_NAMES[w.dtype.name]} dtype")
    if name == "aweights" and not _is_float(w._data.dtype):
        raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights with "
                           f"{SCALAR_NAMES[w.dtype.name]} dtype")
    if bool((w._data < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction=1, fweights=None, aweights=None):
    """Same as `torch.cov`."""
    nd = input._data.ndim
    if nd > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {nd} "
                           "dimensions")
    x = input.reshape(1, -1) if nd < 2 else input
    x = _float_input(x)
    n = x.shape[1]
    fw = _check_weights("fweights", fweights, n)
    aw = _check_weights("aweights", aweights, n)
    w = fw if aw is None else aw if fw is None else fw * aw
    if w is None:
        avg = x.mean(1)
        norm_factor = n - correction
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        norm_factor = w_sum - (correction * (w * aw).sum() / w_sum if aw is not None else correction)
    if float(norm_factor) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0 if isinstance(norm_factor, Tensor) else 0
    xm = x - avg.unsqueeze(1)
    xw = xm if w is None else xm * w
    c = (xm @ xw.mT.conj()) / norm_factor
    return c.squeeze()


def corrcoef(input):
    """Same as `torch.corrcoef`."""
    c = cov(input)
    if c._data.ndim == 0:
        return c / c  # one variable: nan for a constant, else 1, as in torch
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c.clamp(-1, 1) if not c.is_complex() else c


_bind()
