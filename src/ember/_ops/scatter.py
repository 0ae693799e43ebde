"""Dim-wise indexing ops: gather, scatter, scatter_add, scatter_reduce and the index_* ops (index_select,
index_add, index_copy, index_fill, index_reduce), with their in-place variants."""
import warnings

import numpy as np

from .._backend import XP, deferred
from .._backend.accumulate import add_at, reduce_at
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import GRAD
from ..autograd.graph import FORWARD, bump_version
from ._dispatch import SAVE_NONE, Op, check_same_device, dispatch1, dispatch2
from ._inplace import inplace, make_inplace, write_out
from .index import _ALL, _NUMBER, _add_rows, _fmt, _scalar_for, _scalar_name, _t, _zeros, region_scatter

__all__ = ["gather", "index_add", "index_copy", "index_fill", "index_reduce", "index_select", "scatter", "scatter_add",
           "scatter_reduce"]


# ---------------------------------------------------------------- shared checks for dim-wise ops
def _dim_index(index, name, message, allow32=True, empty_any=False):
    """index's array, checked to hold int64 (or int32) values; with empty_any, an empty index of any dtype passes
    (gather and scatter in torch)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64 and not (allow32 and a.dtype == np.int32) and not (empty_any and a.size == 0):
        raise RuntimeError(message.format(_scalar_name(a)))
    return a


_BOUNDS = "index {v} is out of bounds for dimension {dim} with size {n}"


def _check_bounds(idx, n, dim, exc=RuntimeError, fmt=_BOUNDS):
    """idx, checked to lie in [0, n); on a GPU clipped into it, the check reported at the next synchronization."""
    if idx.__class__ is not np.ndarray:
        return deferred.check_range(XP[idx.__class__], idx, 0, n, exc, fmt.format(v="{}", dim=dim, n=n))
    # one pass: seen as unsigned, negative indices are huge
    if idx.size and idx.view(np.uint64 if idx.dtype.itemsize == 8 else np.uint32).max() >= n:
        v = int(idx[(idx < 0) | (idx >= n)].reshape(-1)[0])
        raise exc(fmt.format(v=v, dim=dim, n=n))
    return idx


def _same_dtype(a, b, message):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(message.format(_scalar_name(a._data), _scalar_name(b._data)))


def _fill_value(value, arr, name):
    """A Python number or 0-dim tensor used as a fill value: (number or None, tensor or None)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return None, value
    if not isinstance(value, _NUMBER):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type(value).__name__}")
    return _scalar_for(value, arr), None


def _lin(shape, dim, idx):
    """Flat positions, in a C-contiguous array of `shape`, that scatter along dim writes for index idx."""
    nd = len(shape)
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    lin = idx.astype(np.int64)  # a new array: updated in place below
    xp = np if idx.__class__ is np.ndarray else XP[idx.__class__]
    if strides[dim] != 1:
        lin *= strides[dim]
    for d in range(nd):
        n = idx.shape[d]
        if d != dim and n > 1:
            lin += xp.arange(0, n * strides[d], strides[d], dtype=np.int64).reshape((n,) + (1,) * (nd - d - 1))
    return lin.reshape(-1)


def _part(src, idx):
    """The leading block of src that an index of idx's shape uses."""
    shape = idx.shape
    if src.shape == shape:
        return src
    if src.ndim < len(shape):  # a 0-d src (torch reads it as one element)
        src = src.reshape((1,) * len(shape))
    return src[tuple(slice(0, s) for s in shape)]


def _contig(fn, y, *args):
    """Run an in-place kernel that needs a C-contiguous array on y (any layout)."""
    if y.flags.c_contiguous:
        fn(y, *args)
        return
    tmp = y.copy()  # C order, on either device
    fn(tmp, *args)
    y[...] = tmp


def _pad_to(g, shape):
    """g placed at the start of zeros(shape) (differentiable): a gradient for the used block of a larger input."""
    if g._data.shape == tuple(shape):
        return g
    return region_scatter(g, shape, tuple(slice(0, s) for s in g._data.shape) + (Ellipsis,), None)


# ---------------------------------------------------------------- gather / scatter
def _gather_fwd(x, idx, dim):
    if x.ndim == 0:
        return x.reshape(1)[idx.reshape(-1)].reshape(idx.shape)
    if x.flags.c_contiguous and x.__class__ is np.ndarray:  # flat positions: cheaper than take_along_axis
        return x.reshape(-1).take(_lin(x.shape, dim, idx)).reshape(idx.shape)
    if any(s < x.shape[d] for d, s in enumerate(idx.shape) if d != dim):
        x = x[tuple(_ALL if d == dim else slice(0, s) for d, s in enumerate(idx.shape))]
    return np.take_along_axis(x, idx, axis=dim)


def _gather_bwd(ctx, g):
    dim, idx = ctx.attrs
    z = _t(_zeros(ctx.shapes[0], g._data))
    return _scatter_add_t(z, g, dim, idx)


_GATHER = Op("gather", lambda x, dim, idx: _gather_fwd(x, idx, dim), _gather_bwd, SAVE_NONE)


def _gather_args(input, dim, index, name="gather"):
    idx = _dim_index(index, name, name + "(): Expected dtype int32/int64 for index", empty_any=True)
    x = input._data
    if idx.__class__ is not x.__class__:
        check_same_device((input, index))
    dim = _wrap_dim(dim, x.ndim)
    if max(idx.ndim, 1) != max(x.ndim, 1) and idx.size:  # an empty index may have any shape, as in torch
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if x.ndim and idx.ndim:
        for d in range(x.ndim):
            if d != dim and idx.shape[d] > x.shape[d]:
                raise RuntimeError(f"Size does not match at dimension {d} expected index {_fmt(idx.shape)} to be no "
                                   f"larger than self {_fmt(x.shape)} apart from dimension {dim}")
    return dim, _check_bounds(idx, x.shape[dim] if x.ndim else 1, dim)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Same as `torch.gather`."""
    dim, idx = _gather_args(input, dim, index)
    if idx.size == 0 and idx.ndim != input._data.ndim:
        r = input.reshape(-1)[:0].reshape(idx.shape)  # nothing gathered: empty, of the index's shape
    else:
        r = dispatch1(_GATHER, input, dim, idx)
    return r if out is None else write_out(r, out, "gather", (input, index), exact_dtype=True)


def _gather_t(x, dim, idx):
    return dispatch1(_GATHER, x, dim, idx)


def _k_scatter(y, dim, idx, src):
    y.reshape(-1)[_lin(y.shape, dim, idx)] = src if not hasattr(src, "shape") or not src.shape else \
        _part(src, idx).reshape(-1)


def _k_scatter_add(y, dim, idx, src):
    add_at(y.reshape(-1), _lin(y.shape, dim, idx), _part(src, idx).reshape(-1))


def _as_nd(a):
    return a.reshape(1) if a.ndim == 0 else a


def _scatter_fwd(kernel, x, src, dim, idx):
    y = _as_nd(x).copy()
    kernel(y, dim, _as_nd(idx), src if np.ndim(src) == 0 else _as_nd(src))
    return y.reshape(x.shape)


def _src_grad(ctx, g, dim, idx):
    return _pad_to(_gather_t(g, dim, idx), ctx.shapes[1])


def _scatter_bwd(ctx, g):
    dim, idx = ctx.attrs
    need = ctx.needs_input_grad
    gx = _scatter_value_t(g, dim, idx, 0) if need[0] else None
    return gx, (_src_grad(ctx, g, dim, idx) if need[1] else None)


def _scatter_add_bwd(ctx, g):
    dim, idx = ctx.attrs
    return g, (_src_grad(ctx, g, dim, idx) if ctx.needs_input_grad[1] else None)


def _no_reduce_grad(ctx, g):
    raise RuntimeError("the derivative for 'scatter' with a `reduce` argument is not implemented")


_SCATTER = Op("scatter", lambda x, s, dim, idx: _scatter_fwd(_k_scatter, x, s, dim, idx), _scatter_bwd, SAVE_NONE)
_SCATTER_VALUE = Op("scatter", lambda x, dim, idx, v: _scatter_fwd(_k_scatter, x, v, dim, idx),
                    lambda ctx, g: _scatter_value_t(g, ctx.attrs[0], ctx.attrs[1], 0), SAVE_NONE,
                    node_name="ScatterBackward1")
_SCATTER_ADD = Op("scatter_add", lambda x, s, dim, idx: _scatter_fwd(_k_scatter_add, x, s, dim, idx),
                  _scatter_add_bwd, SAVE_NONE)


def _k_scatter_multiply(y, dim, idx, src):
    lin = _lin(y.shape, dim, idx)
    v = src if np.ndim(src) == 0 else _part(src, idx).reshape(-1)
    reduce_at(np.multiply, y.reshape(-1), lin, v)


def _k_scatter_add_value(y, dim, idx, src):
    lin = _lin(y.shape, dim, idx)
    v = src if np.ndim(src) == 0 else _part(src, idx).reshape(-1)
    v = np.broadcast_to(v.astype(y.dtype, copy=False), lin.shape) if v.__class__ in XP else y.dtype.type(v)
    add_at(y.reshape(-1), lin, v)


_SCATTER_REDUCE_KERNELS = {"add": _k_scatter_add_value, "multiply": _k_scatter_multiply}
_SCATTER_REDUCE_OLD = Op("scatter", lambda x, s, dim, idx, k: _scatter_fwd(k, x, s, dim, idx), _no_reduce_grad,
                         SAVE_NONE, node_name="torch::autograd::NotImplemented")
_SCATTER_REDUCE_OLD_VALUE = Op("scatter", lambda x, dim, idx, v, k: _scatter_fwd(k, x, v, dim, idx), _no_reduce_grad,
                               SAVE_NONE, node_name="torch::autograd::NotImplemented")


def _scatter_add_t(x, src, dim, idx):
    return dispatch2(_SCATTER_ADD, x, src, dim, idx)


def _scatter_value_t(x, dim, idx, value):
    return dispatch1(_SCATTER_VALUE, x, dim, idx, value)


def _scatter_args(input, dim, index, src, name="scatter"):
    idx = _dim_index(index, name, "scatter(): Expected dtype int32/int64 for index", empty_any=True)
    x = input._data
    dim = _wrap_dim(dim, x.ndim)
    if max(idx.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    s = src._data if isinstance(src, Tensor) else None
    if s is not None and max(s.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if x.ndim and idx.ndim:
        for d in range(x.ndim):
            if (d != dim and idx.shape[d] > x.shape[d]) or (s is not None and idx.shape[d] > s.shape[d]):
                raise RuntimeError(f"Expected index {_fmt(idx.shape)} to be no larger than self {_fmt(x.shape)} "
                                   f"apart from dimension {dim}" + (f" and to be no larger size than src "
                                                                    f"{_fmt(s.shape)}" if s is not None else ""))
    if s is not None and s.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return dim, _check_bounds(idx, x.shape[dim] if x.ndim else 1, dim)


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """Same as `torch.scatter` (src a tensor, or a number given as src or value)."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    dim, idx = _scatter_args(input, dim, index, src)
    if reduce is not None:
        r = _scatter_reduce_old(input, dim, idx, src, reduce)
    elif isinstance(src, Tensor):
        r = dispatch2(_SCATTER, input, src, dim, idx)
    else:
        v, vt = _fill_value(src, input._data, "scatter")
        r = dispatch1(_SCATTER_VALUE, input, dim, idx, v) if vt is None else dispatch2(
            _SCATTER, input, vt.expand(idx.shape).to(input.dtype), dim, idx)
    return r if out is None else write_out(r, out, "scatter")


def _scatter_reduce_old(input, dim, idx, src, reduce):
    kernel = _SCATTER_REDUCE_KERNELS.get(reduce)
    if kernel is None:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      UserWarning, stacklevel=3)
        return dispatch2(_SCATTER_REDUCE_OLD, input, src, dim, idx, kernel)
    return dispatch1(_SCATTER_REDUCE_OLD_VALUE, input, dim, idx, _scalar_for(src, input._data), kernel)


def scatter_add(input, dim, index, src):
    """Same as `torch.scatter_add`."""
    dim, idx = _scatter_args(input, dim, index, src, "scatter_add")
    return dispatch2(_SCATTER_ADD, input, src, dim, idx)


def _inplace_fast(self, name, kernel, *kargs):
    """An in-place op with nothing requiring grad: run `kernel(self_array, *kargs)` directly."""
    _contig(kernel, self._data if self._data.ndim else self._data.reshape(1), *kargs)
    bump_version(self, name)
    return self


def _needs_grad(self, *others):
    if FORWARD[0] is not None:  # the general path carries the tangents (NOTE [ Forward-mode AD ])
        return True
    if not GRAD[0]:
        return False
    if self._requires_grad:
        return True
    for o in others:
        if isinstance(o, Tensor) and o._requires_grad:
            return True
    return False


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """Same as `torch.Tensor.scatter_`."""
    if src is None:
        src = value
    if reduce is not None or _needs_grad(self, src) or isinstance(src, Tensor) and src._data.ndim == 0:
        return inplace(self, scatter, (dim, index, src), {"reduce": reduce}, "scatter_")
    dim, idx = _scatter_args(self, dim, index, src)
    s = src._data if isinstance(src, Tensor) else _fill_value(src, self._data, "scatter")[0]
    return _inplace_fast(self, "scatter_", _k_scatter, dim, _as_nd(idx), s if np.ndim(s) == 0 else _as_nd(s))


def scatter_add_(self, dim, index, src):
    """Same as `torch.Tensor.scatter_add_`."""
    if _needs_grad(self, src):
        return inplace(self, scatter_add, (dim, index, src), {}, "scatter_add_")
    dim, idx = _scatter_args(self, dim, index, src, "scatter_add")
    return _inplace_fast(self, "scatter_add_", _k_scatter_add, dim, _as_nd(idx), _as_nd(src._data))


# ---------------------------------------------------------------- scatter_reduce / index_reduce
def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    if dtype.kind == "b":
        return reduce == "amin"
    return -np.inf if reduce == "amax" else np.inf


_REDUCE_UFUNC = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _counts(shape, lin, include_self):
    n = 1
    for s in shape:
        n *= s
    return np.bincount(lin, minlength=n).reshape(shape) + (1 if include_self else 0)


def _k_scatter_reduce(y, dim, idx, src, reduce, include_self):
    lin = _lin(y.shape, dim, idx)
    v = _part(src, idx).reshape(-1)
    flat = y.reshape(-1)
    if not include_self:
        flat[lin] = _identity(reduce, y.dtype)
    if reduce in ("sum", "mean"):
        add_at(flat, lin, v)
    else:
        reduce_at(_REDUCE_UFUNC[reduce], flat, lin, v)
    if reduce == "mean":
        cnt = np.maximum(_counts(y.shape, lin, include_self), 1)
        if y.dtype.kind in "iu":
            np.floor_divide(y, cnt.astype(y.dtype), out=y)
        else:
            np.true_divide(y, cnt, out=y, casting="unsafe")


def _scatter_reduce_fwd(x, src, dim, idx, reduce, include_self):
    y = x.copy()
    _k_scatter_reduce(y, dim, idx, src, reduce, include_self)
    return y


def _scattered(shape, lin):
    m = (np if lin.__class__ is np.ndarray else XP[lin.__class__]).zeros(shape, dtype=bool)
    m.reshape(-1)[lin] = True
    return m


def _scatter_reduce_bwd(ctx, g):
    dim, idx, reduce, include_self = ctx.attrs
    shape = ctx.shapes[0]
    lin = _lin(shape, dim, idx)
    if reduce in ("sum", "mean"):
        if reduce == "mean":
            g = g / _t(np.maximum(_counts(shape, lin, include_self), 1).astype(g._data.dtype))
        gx = g if include_self else g.masked_fill(_t(_scattered(shape, lin)), 0)
        return gx, _src_grad(ctx, g, dim, idx)
    x, src = (t._data for t in ctx.inputs)
    y = ctx.outputs[0]._data
    if reduce == "prod":
        cx, cs = _prod_others(x, _part(src, idx), y, lin, include_self)
        return g * _t(cx), _pad_to(_gather_t(g, dim, idx) * _t(cs), ctx.shapes[1])
    # ties share the gradient; like torch, self counts as a tie even when include_self=False
    hit_x = x == y
    hit_s = _part(src, idx) == _gather_fwd(y, idx, dim)
    cnt = hit_x.astype(np.float64)
    add_at(cnt.reshape(-1), lin, hit_s.reshape(-1))
    share = hit_x / cnt
    if not include_self:
        share[_scattered(shape, lin)] = 0
    gx = g * _t(share.astype(g._data.dtype))
    gs = _gather_t(g / _t(cnt.astype(g._data.dtype)), dim, idx) * _t(hit_s.astype(g._data.dtype))
    return gx, _pad_to(gs, ctx.shapes[1])


def _prod_others(x, s, y, lin, include_self):
    """For every contributor of a product, the product of the other contributors (exact with zeros)."""
    flat_s = s.reshape(-1)
    xp = np if x.__class__ is np.ndarray else XP[x.__class__]
    zeros = xp.zeros(x.size, dtype=np.int64)
    nz = xp.ones(x.size, dtype=x.dtype)
    if include_self:
        zeros += (x.reshape(-1) == 0)
        nz = np.where(x.reshape(-1) == 0, 1, x.reshape(-1)).astype(x.dtype)
    add_at(zeros, lin, (flat_s == 0).astype(np.int64))
    reduce_at(np.multiply, nz, lin, np.where(flat_s == 0, 1, flat_s).astype(x.dtype))

    def others(v, z, p):
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(v != 0, np.where(z == 0, p / np.where(v == 0, 1, v), 0), np.where(z == 1, p, 0))
        return r.astype(x.dtype)
    cx = others(x.reshape(-1), zeros, nz).reshape(x.shape)
    if not include_self:
        cx = np.where(_scattered(x.shape, lin), 0, 1).astype(x.dtype)
    cs = others(flat_s, zeros[lin], nz[lin]).reshape(s.shape)
    return cx, cs


_SCATTER_REDUCE = Op("scatter_reduce", _scatter_reduce_fwd, _scatter_reduce_bwd, 3)
_INDEX_REDUCE = Op("index_reduce", _scatter_reduce_fwd, _scatter_reduce_bwd, 3)
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Same as `torch.scatter_reduce`."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    dim, idx = _scatter_args(input, dim, index, src, "scatter_reduce")
    if input._data.ndim == 0:
        return scatter_reduce(input.reshape(1), 0, index.reshape(1), src.reshape(1), reduce,
                              include_self=include_self, out=out).reshape(())
    r = dispatch2(_SCATTER_REDUCE, input, src, dim, idx, reduce, bool(include_self))
    return r if out is None else write_out(r, out, "scatter_reduce")


def _expand_index(idx, dim, shape):
    """A 1-D index along dim, repeated over the other dims of shape (index_* ops as scatter ops)."""
    view = [1] * len(shape)
    view[dim] = -1
    return np.broadcast_to(idx.reshape(view), shape)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Same as `torch.index_reduce`."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    x = input if input._data.ndim else input.reshape(1)
    s = source if source._data.ndim else source.reshape(1)
    dim, idx = _index_args(x, dim, index, s, "index_reduce_",
                           "index_reduce_(): Expected dtype int32/int64 for index but got: {}")
    _same_dtype(x, s, "index_reduce_(): self ({}) and source ({}) must have the same scalar type")
    r = dispatch2(_INDEX_REDUCE, x, s, dim, _expand_index(idx, dim, s._data.shape), reduce, bool(include_self))
    r = r if input._data.ndim else r.reshape(())
    return r if out is None else write_out(r, out, "index_reduce")


# ---------------------------------------------------------------- index_select / index_add / index_copy / index_fill
def _index_args(x, dim, index, source, name, message, bounds_exc=RuntimeError, bounds_prefix=""):
    """dim and a checked 1-D index array for the index_* ops (source: a tensor of matching shape, or None)."""
    idx = _dim_index(index, name, message)
    a = x._data
    dim = _wrap_dim(dim, a.ndim)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{_scalar_name(idx)} and size: {_fmt(idx.shape)}")
    idx = idx.reshape(-1)
    n = a.shape[dim] if a.ndim else 1
    if source is not None:
        s = source._data
        ns = s.shape[dim] if s.ndim else 1
        if idx.size != ns:
            raise RuntimeError(f"{name}(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                               f"({ns}), for dim: {dim}")
        if max(s.ndim, 1) != max(a.ndim, 1) or any(s.shape[d] != a.shape[d] for d in range(a.ndim) if d != dim):
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified "
                               f"dimension. Got self.shape = {_fmt(a.shape)} source.shape = {_fmt(s.shape)}")
    return dim, _check_bounds(idx, n, dim, bounds_exc, bounds_prefix + _BOUNDS)


def _dim_front(a, dim):
    """a viewed with dim first (0-dim arrays as 1-element vectors)."""
    if a.ndim == 0:
        return a.reshape(1)
    return a if dim == 0 else np.moveaxis(a, dim, 0)


def _k_index_add(y, dim, idx, src, alpha):
    s = _dim_front(src, dim)
    _add_rows(_dim_front(y, dim), idx, s if alpha == 1 else s * y.dtype.type(alpha))


def _k_index_copy(y, dim, idx, src):
    _dim_front(y, dim)[idx] = _dim_front(src, dim)


def _k_index_fill(y, dim, idx, value):
    _dim_front(y, dim)[idx] = value


def _copy_then(kernel):
    def fwd(x, *args):
        y = x.copy()
        kernel(y, *args)
        return y
    return fwd


def _index_select_fwd(x, dim, idx):
    return x.take(idx, axis=dim) if x.ndim else x.reshape(1).take(idx).reshape(idx.shape[:0] + x.shape)


def _index_select_bwd(ctx, g):
    dim, idx = ctx.attrs
    return _index_add_t(_t(_zeros(ctx.shapes[0], g._data)), g, dim, idx, 1)


def _index_add_bwd(ctx, g):
    dim, idx, alpha = ctx.attrs
    gs = _index_select_t(g, dim, idx) if ctx.needs_input_grad[1] else None
    return g, (gs if gs is None or alpha == 1 else gs * alpha)


def _index_copy_bwd(ctx, g):
    dim, idx = ctx.attrs
    need = ctx.needs_input_grad
    return (_index_fill_t(g, dim, idx, 0) if need[0] else None,
            _index_select_t(g, dim, idx) if need[1] else None)


def _index_fill_tensor_bwd(ctx, g):
    dim, idx = ctx.attrs
    need = ctx.needs_input_grad
    gv = None
    if need[1]:  # each filled position once, however often the index names it
        xp = np if idx.__class__ is np.ndarray else XP[idx.__class__]
        gv = _index_select_t(g, dim, xp.unique(idx)).sum()
    return (_index_fill_t(g, dim, idx, 0) if need[0] else None, gv)


_INDEX_SELECT = Op("index_select", _index_select_fwd, _index_select_bwd, SAVE_NONE)
_INDEX_ADD = Op("index_add", _copy_then(lambda y, s, dim, idx, alpha: _k_index_add(y, dim, idx, s, alpha)),
                _index_add_bwd, SAVE_NONE)
_INDEX_COPY = Op("index_copy", _copy_then(lambda y, s, dim, idx: _k_index_copy(y, dim, idx, s)), _index_copy_bwd,
                 SAVE_NONE)
_INDEX_FILL = Op("index_fill", _copy_then(_k_index_fill),
                 lambda ctx, g: _index_fill_t(g, ctx.attrs[0], ctx.attrs[1], 0), SAVE_NONE)
_INDEX_FILL_T = Op("index_fill", _copy_then(lambda y, v, dim, idx: _k_index_fill(y, dim, idx, v)),
                   _index_fill_tensor_bwd, SAVE_NONE, node_name="IndexFillBackward1")


def _index_select_t(x, dim, idx):
    return dispatch1(_INDEX_SELECT, x, dim, idx)


def _index_add_t(x, src, dim, idx, alpha):
    return dispatch2(_INDEX_ADD, x, src, dim, idx, alpha)


def _index_fill_t(x, dim, idx, value):
    return dispatch1(_INDEX_FILL, x, dim, idx, value)


def index_select(input, dim, index, *, out=None):
    """Same as `torch.index_select`."""
    idx = _dim_index(index, "index_select", "index_select(): Expected dtype int32 or int64 for index")
    dim = _wrap_dim(dim, input._data.ndim)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    x = input._data
    idx = _check_bounds(idx, x.shape[dim] if x.ndim else 1, dim,
                        fmt="INDICES element is out of DATA bounds, id={v} axis_dim={n}")
    r = dispatch1(_INDEX_SELECT, input, dim, idx.reshape(-1) if x.ndim else idx)
    return r if out is None else write_out(r, out, "index_select")


_INDEX_ADD_MSG = "index_add_(): Expected dtype int32/int64 for index but got: {}"


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """Same as `torch.index_add`."""
    dim, idx = _index_args(input, dim, index, source, "index_add_", _INDEX_ADD_MSG)
    _same_dtype(input, source, "index_add_(): self ({}) and source ({}) must have the same scalar type")
    r = dispatch2(_INDEX_ADD, input, source, dim, idx, alpha)
    return r if out is None else write_out(r, out, "index_add")


def index_add_(self, dim, index, source, *, alpha=1):
    """Same as `torch.Tensor.index_add_`."""
    if _needs_grad(self, source):
        return inplace(self, index_add, (dim, index, source), {"alpha": alpha}, "index_add_")
    dim, idx = _index_args(self, dim, index, source, "index_add_", _INDEX_ADD_MSG)
    _same_dtype(self, source, "index_add_(): self ({}) and source ({}) must have the same scalar type")
    _k_index_add(self._data, dim, idx, source._data, alpha)
    bump_version(self, "index_add_")
    return self


_INDEX_COPY_MSG = "index_copy_(): Expected a long tensor for index, but got {}"


def _index_copy_args(input, dim, index, source):
    if isinstance(index, Tensor) and index._data.dtype != np.int64:
        raise RuntimeError(_INDEX_COPY_MSG.format(_scalar_name(index._data)))
    sn, dn = source._data.ndim, input._data.ndim
    if sn and dn and sn != dn:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({sn}), destination dimensionality ({dn})")
    try:
        dim, idx = _index_args(input, dim, index, source, "index_copy_", _INDEX_COPY_MSG, IndexError, "index_copy_(): ")
    except RuntimeError as e:
        msg = str(e)
        if "Number of indices" in msg:
            raise IndexError(msg.replace("source.size(dim): ", "source.size(dim) ").split(", for dim")[0]) from None
        raise
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_scalar_name(input._data)} and (source) {_scalar_name(source._data)}")
    return dim, idx


def index_copy(input, dim, index, source, *, out=None):
    """Same as `torch.index_copy`."""
    dim, idx = _index_copy_args(input, dim, index, source)
    r = dispatch2(_INDEX_COPY, input, source, dim, idx)
    return r if out is None else write_out(r, out, "index_copy")


def index_copy_(self, dim, index, source):
    """Same as `torch.Tensor.index_copy_`."""
    if _needs_grad(self, source):
        return inplace(self, index_copy, (dim, index, source), {}, "index_copy_")
    dim, idx = _index_copy_args(self, dim, index, source)
    _k_index_copy(self._data, dim, idx, source._data)
    bump_version(self, "index_copy_")
    return self


def _index_fill_args(input, dim, index, value):
    if isinstance(index, Tensor) and index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(index, Tensor) and index._data.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    dim, idx = _index_args(input, dim, index, None, "index_fill_", "", IndexError)
    v, vt = _fill_value(value, input._data, "index_fill_")
    return dim, idx, v, vt


def index_fill(input, dim, index, value):
    """Same as `torch.index_fill`."""
    dim, idx, v, vt = _index_fill_args(input, dim, index, value)
    if vt is None:
        return dispatch1(_INDEX_FILL, input, dim, idx, v)
    return dispatch2(_INDEX_FILL_T, input, vt.to(input.dtype), dim, idx)


def index_fill_(self, dim, index, value):
    """Same as `torch.Tensor.index_fill_`."""
    if _needs_grad(self, value):
        return inplace(self, index_fill, (dim, index, value), {}, "index_fill_")
    dim, idx, v, vt = _index_fill_args(self, dim, index, value)
    _k_index_fill(self._data, dim, idx, v if vt is None else vt._data.astype(self._data.dtype))
    bump_version(self, "index_fill_")
    return self


# ---------------------------------------------------------------- binding
for _name in ("gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add", "index_copy",
              "index_fill", "index_reduce", "scatter_", "scatter_add_", "index_add_", "index_copy_", "index_fill_"):
    setattr(Tensor, _name, globals()[_name])
Tensor.scatter_reduce_ = make_inplace(scatter_reduce, "scatter_reduce_")
Tensor.index_reduce_ = make_inplace(index_reduce, "index_reduce_")
