"""Mask and flat-index ops: masked_fill, masked_select, masked_scatter, take, put and take_along_dim."""
import ml_dtypes
import numpy as np

from .._backend import XP, deferred
from .._dtype import FROM_NP
from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import bump_version
from ._dispatch import SAVE_NONE, Op, check_same_device, dispatch1, dispatch2
from ._inplace import inplace, make_inplace, write_out
from .index import _MASK_CTYPE, _add_at, _bshape, _fmt, _scalar_name, _t, _zeros, region_fill, region_scatter
from .scatter import _copy_then, _fill_value, _inplace_fast, _needs_grad, _pad_to, gather

__all__ = ["masked_fill", "masked_scatter", "masked_select", "put", "take", "take_along_dim"]


# ---------------------------------------------------------------- masked ops
def _mask_of(mask, name, input):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    m = mask._data
    if m.__class__ is not input._data.__class__:
        check_same_device((input, mask))
    if m.dtype.kind != "b":
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_MASK_CTYPE[FROM_NP[m.dtype].name] if name == 'masked_fill_' else _scalar_name(m)}")
    return m


def _broadcast(a, b):
    """The broadcast shape of two tensors, with torch's error."""
    try:
        return _bshape(a._data.shape, b._data.shape)
    except ValueError:
        from .binary import _broadcast_error
        raise _broadcast_error(a, b) from None


def _masked_fill_fwd(x, m, value):
    shape = _bshape(x.shape, m.shape)
    y = x.copy() if shape == x.shape else np.broadcast_to(x, shape).copy()
    np.copyto(y, value, where=m, casting="unsafe")
    return y


def _masked_fill_t_fwd(x, v, m):
    return _masked_fill_fwd(x, m, v.astype(x.dtype))


def _masked_fill_bwd(ctx, g):
    return g.masked_fill(_t(ctx.attrs[0]), 0)


def _masked_fill_t_bwd(ctx, g):
    m = _t(ctx.attrs[0])
    need = ctx.needs_input_grad
    return (g.masked_fill(m, 0) if need[0] else None, masked_select(g, m).sum() if need[1] else None)


_MASKED_FILL = Op("masked_fill", _masked_fill_fwd, _masked_fill_bwd, SAVE_NONE)
_MASKED_FILL_T = Op("masked_fill", _masked_fill_t_fwd, _masked_fill_t_bwd, SAVE_NONE, node_name="MaskedFillBackward1")


_C_TYPES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t", "uint8": "uint8_t",
            "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double"}


_FIT_LIMITS = {}  # dtype -> (lowest, highest) accepted fill value, computed once per dtype


def _fit_limits(dt):
    lim = _FIT_LIMITS.get(dt)
    if lim is None:
        if dt.kind in "iu":
            info = np.iinfo(dt)
            lim = (-int(info.max) if dt.kind == "u" else int(info.min), int(info.max))  # unsigned: wrap negatives
        else:
            big = float(ml_dtypes.finfo(dt).max)
            lim = (-big, big)
        lim = _FIT_LIMITS[dt] = lim
    return lim


def _check_fits(value, dt):
    """torch's checked conversion of a fill value to dtype dt: a complex value with an imaginary part into a real
    tensor, an integer outside the type's range (unsigned types also take negatives down to -max, wrapping), or a
    finite float beyond the type's largest raise."""
    if dt.kind in "cb":
        return
    c = value.__class__
    if c is float or c is int:  # the common case, before anything slower
        lo, hi = _fit_limits(dt)
        if lo <= value <= hi:
            return
        if c is float and dt.kind not in "iu" and (value != value or abs(value) == float("inf")):
            return  # nan and infinities pass into floating types
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES.get(dt.name, dt.name)} without overflow")
    if isinstance(value, Tensor):
        if value._data.ndim or value._data.__class__ is not np.ndarray:  # a GPU value is not read (no host wait)
            return
        value = value._data.item()
    if isinstance(value, bool):
        return
    if isinstance(value, (complex, np.complexfloating)):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPES.get(dt.name, dt.name)} without "
                               f"overflow")
        value = value.real
    _check_fits(int(value) if isinstance(value, (int, np.integer)) else float(value), dt)


def masked_fill(input, mask, value):
    """Same as `torch.masked_fill`."""
    m = _mask_of(mask, "masked_fill_", input)
    _broadcast(input, mask)
    _check_fits(value, input._data.dtype)
    v, vt = _fill_value(value, input._data, "masked_fill_")
    if vt is None:
        return dispatch1(_MASKED_FILL, input, m, v)
    return dispatch2(_MASKED_FILL_T, input, vt if vt._data.dtype == input._data.dtype else vt.to(input.dtype), m)


def masked_fill_(self, mask, value):
    """Same as `torch.Tensor.masked_fill_`."""
    if _needs_grad(self, value):
        return inplace(self, masked_fill, (mask, value), {}, "masked_fill_")
    m = _mask_of(mask, "masked_fill_", self)
    _check_fits(value, self._data.dtype)
    shape = _broadcast(self, mask)
    if shape != self._data.shape:
        raise RuntimeError(f"output with shape {_fmt(self._data.shape)} doesn't match the broadcast shape "
                           f"{_fmt(shape)}")
    v, vt = _fill_value(value, self._data, "masked_fill_")
    np.copyto(self._data, v if vt is None else vt._data, where=m, casting="unsafe")
    bump_version(self, "masked_fill_")
    return self


def _masked_select_fwd(x, m):
    shape = _bshape(x.shape, m.shape)
    if shape == x.shape and shape == m.shape:
        return x[m]
    return np.broadcast_to(x, shape)[np.broadcast_to(m, shape)]


def _masked_select_bwd(ctx, g):
    m = ctx.attrs[0]
    shape = _bshape(ctx.shapes[0], m.shape)
    return _masked_scatter_t(_t(_zeros(shape, g._data)), _t(m), g)


_MASKED_SELECT = Op("masked_select", _masked_select_fwd, _masked_select_bwd, SAVE_NONE)


def masked_select(input, mask, *, out=None):
    """Same as `torch.masked_select`."""
    if not isinstance(mask, Tensor) or mask._data.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _broadcast(input, mask)
    r = dispatch1(_MASKED_SELECT, input, mask._data)
    return r if out is None else write_out(r, out, "masked_select", (input, mask))


def _masked_scatter_fwd(x, s, m):
    shape = _bshape(x.shape, m.shape)
    y = np.broadcast_to(x, shape).copy()
    mb = np.broadcast_to(m, shape)
    n = int(np.count_nonzero(mb))
    y[mb] = s.reshape(-1)[:n]
    return y


def _masked_scatter_bwd(ctx, g):
    m = _t(ctx.attrs[0])
    need = ctx.needs_input_grad
    gx = g.masked_fill(m, 0) if need[0] else None
    gs = None
    if need[1]:
        shape = ctx.shapes[1]
        numel = int(np.prod(shape))
        gs = _pad_to(masked_select(g, m), (numel,)).reshape(shape)
    return gx, gs


_MASKED_SCATTER = Op("masked_scatter", _masked_scatter_fwd, _masked_scatter_bwd, SAVE_NONE)


def _masked_scatter_t(x, mask, source):
    return dispatch2(_MASKED_SCATTER, x, source, mask._data)


def _masked_scatter_args(input, mask, source):
    m = _mask_of(mask, "masked_scatter_", input)
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_scalar_name(input._data)} and {_scalar_name(source._data)}")
    shape = _broadcast(input, mask)
    if np.count_nonzero(np.broadcast_to(m, shape)) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return m


def masked_scatter(input, mask, source):
    """Same as `torch.masked_scatter`."""
    _masked_scatter_args(input, mask, source)
    return _masked_scatter_t(input, mask, source)


# ---------------------------------------------------------------- take / put / take_along_dim
def _long_index(index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_scalar_name(a)}")
    return a


def _take_bwd(ctx, g):
    shape = ctx.shapes[0]
    n = int(np.prod(shape))
    return region_scatter(g, (n,), None, (ctx.attrs[0],)).reshape(shape)


_TAKE = Op("take", lambda x, idx: x.reshape(-1).take(idx), _take_bwd, SAVE_NONE)


def take(input, index, *, out=None):
    """Same as `torch.take`."""
    idx = _long_index(index, "take")
    r = dispatch1(_TAKE, input, _take_index(idx, input._data.size))
    return r if out is None else write_out(r, out, "take", (input, index))


def _take_index(idx, n):
    """idx checked to lie in [-n, n), negatives wrapped; on a GPU clipped, reported at the next synchronization."""
    if idx.__class__ is not np.ndarray:
        idx = deferred.check_range(XP[idx.__class__], idx, -n, n, IndexError,
                                   f"out of range: tried to access index {{}} on a tensor of {n} elements.")
        return np.where(idx < 0, idx + n, idx)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        v = int(idx[(idx < -n) | (idx >= n)].reshape(-1)[0])
        raise IndexError(f"out of range: tried to access index {v} on a tensor of {n} elements.")
    return np.where(idx < 0, idx + n, idx) if idx.size and idx.min() < 0 else idx


def _k_put(y, idx, src, accumulate):
    flat = y.reshape(-1)
    if accumulate:
        _add_at(flat, idx.reshape(-1), src.reshape(-1))
    else:
        flat[idx.reshape(-1)] = src.reshape(-1)


def _put_flat_bwd(ctx, g):
    idx, accumulate = ctx.attrs
    need = ctx.needs_input_grad
    gx = None
    if need[0]:
        gx = g if accumulate else region_fill(g.reshape(-1), None, (idx.reshape(-1),), 0).reshape(ctx.shapes[0])
    gs = dispatch1(_TAKE, g, idx.reshape(-1)).reshape(ctx.shapes[1]) if need[1] else None
    return gx, gs


_PUT = Op("put", _copy_then(lambda y, s, idx, accumulate: _k_put(y, idx, s, accumulate)), _put_flat_bwd, SAVE_NONE)


def _put_args(input, index, source):
    idx = _long_index(index, "put_")
    if not isinstance(source, Tensor):
        raise TypeError(f"put(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source._data.size != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source._data.size}, index.numel() = {idx.size}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"put_(): self ({_scalar_name(input._data)}) and source ({_scalar_name(source._data)}) "
                           f"must have the same scalar type")
    return _take_index(idx, input._data.size)


def put(input, index, source, accumulate=False):
    """Same as `torch.put`."""
    idx = _put_args(input, index, source)
    return dispatch2(_PUT, input, source, idx, bool(accumulate))


def put_(self, index, source, accumulate=False):
    """Same as `torch.Tensor.put_`."""
    if _needs_grad(self, source):
        return inplace(self, put, (index, source, accumulate), {}, "put_")
    idx = _put_args(self, index, source)
    return _inplace_fast(self, "put_", _k_put, idx, source._data, bool(accumulate))


def take_along_dim(input, indices, dim=None, *, out=None):
    """Same as `torch.take_along_dim`."""
    if not isinstance(indices, Tensor) or indices._data.dtype != np.int64:
        got = _scalar_name(indices._data) if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"ember.take_along_dim(): dtype of indices should be Long but got {got}")
    n = input.numel() if dim is None else input.shape[_wrap_dim(dim, input.dim())] if input.dim() else 1
    indices = indices + (indices < 0) * n  # torch counts negative indices from the end
    if dim is None:
        r = gather(input.reshape(-1), 0, indices.reshape(-1))
    else:
        x, idx = input._data, indices._data
        dim = _wrap_dim(dim, x.ndim)
        if x.ndim != idx.ndim:
            raise RuntimeError(f"ember.take_along_dim(): input and indices should have the same number of "
                               f"dimensions, but got {x.ndim} dimensions for input, and {idx.ndim} dimensions for "
                               f"indices")
        xs, ids = list(x.shape), list(idx.shape)
        xs[dim] = ids[dim] = 1
        shape = _broadcast(_t(np.empty(xs, dtype=np.bool_)), _t(np.empty(ids, dtype=np.bool_)))
        xs, ids = list(shape), list(shape)
        xs[dim], ids[dim] = x.shape[dim], idx.shape[dim]
        xe = input if tuple(xs) == x.shape else input.expand(xs)
        ie = indices if tuple(ids) == idx.shape else indices.expand(ids)
        r = gather(xe, dim, ie)
    return r if out is None else write_out(r, out, "take_along_dim")


def _fill_diagonal_(self, fill_value, wrap=False):
    """Same as `torch.Tensor.fill_diagonal_`."""
    shape = self._data.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(shape, dtype=bool)
    np.fill_diagonal(mask, True, wrap=wrap)  # NumPy's wrap rule for tall matrices is torch's
    return self.masked_fill_(Tensor._make(mask).to(self.device), fill_value)


Tensor.fill_diagonal_ = _fill_diagonal_


# ---------------------------------------------------------------- binding
for _name in ("masked_fill", "masked_select", "masked_scatter", "take", "take_along_dim", "put", "masked_fill_",
              "put_"):
    setattr(Tensor, _name, globals()[_name])
Tensor.masked_scatter_ = make_inplace(masked_scatter, "masked_scatter_")
