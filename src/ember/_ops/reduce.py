"""Reductions and scans: sums and means, products, max/min and their indices, variance, norms, all/any, cumulative
ops, median, mode and quantiles.

# NOTE [ Reduction dtypes ]
Result dtypes are torch's: sums and products of bool/integer tensors are int64, all/any give bool (uint8 for uint8
input), index outputs are int64, std/var/norm of complex input are real. float16/bfloat16 inputs accumulate in
float32 and return their own dtype, as torch's CPU kernels do.

# NOTE [ Gradients that select elements ]
amax/amin and the full max()/min()/median() spread the gradient evenly over tied elements (torch's behaviour); ops
that return indices (max(dim), median(dim), mode, cummax...) send it to the selected index. Masks and indices are
computed once in NumPy from the forward's data: they are constants of the graph, so each backward is linear in the
incoming gradient and double backward works through the same ops.
"""
import builtins
import math
import numbers
import warnings

import numpy as np

from .. import _dtype
from .. import return_types as _rt
from .._backend import XP
from .._tensor import Tensor, _wrap_dim
from .._tensor_str import SCALAR_NAMES
from ..autograd.grad_mode import GRAD
from ._dispatch import SAVE_BOTH, SAVE_INPUTS, SAVE_NONE, Op, dispatch1
from ._inplace import make_inplace, write_out

__all__ = ["sum", "mean", "nansum", "nanmean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "aminmax",
           "std", "var", "std_mean", "var_mean", "logsumexp", "norm", "all", "any", "count_nonzero", "cumsum",
           "cumprod", "cummax", "cummin", "logcumsumexp", "median", "nanmedian", "mode", "quantile", "nanquantile"]

_LOW = frozenset((_dtype.float16.np, _dtype.bfloat16.np))  # computed in float32
_F32 = np.dtype(np.float32)
_INF = math.inf


# ---------------- helpers ----------------
def dims_of(dim, ndim):
    """A normalised tuple of reduced dims (None: all)."""
    if dim is None:
        return None
    if dim.__class__ is int or isinstance(dim, numbers.Integral):
        return (_wrap_dim(dim, ndim),)
    dims = tuple(_wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {_first_repeat(dims)} appears multiple times in the list of dims")
    return dims if dims else None


def _first_repeat(dims):
    seen = set()
    for d in dims:
        if d in seen:
            return d
        seen.add(d)


def expand_grad(g, shape, dims, keepdim):
    """Broadcast a reduction's gradient back to the input shape."""
    if not keepdim and dims is not None and len(shape):
        g = g.reshape([1 if i in dims else s for i, s in enumerate(shape)])
    return g.expand(shape)


def _rdims(dim, ndim):
    """dims_of() for a forward: a zero-dim input reduces over nothing NumPy can name, so all of it."""
    dims = dims_of(dim, ndim)
    return None if ndim == 0 else dims


def _one_dim(dim, ndim):
    """A single reduced dim, as torch parses it (an int; negative counts from the end)."""
    if dim.__class__ is not int and (not isinstance(dim, numbers.Integral) or isinstance(dim, bool)):
        raise TypeError(f"argument 'dim' must be int, not {type(dim).__name__}")
    return _wrap_dim(dim, ndim)


def _count(shape, dims):
    """How many input elements each output element reduces."""
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return n


def _keep_np(a, shape, dims, keepdim):
    """A reduced array reshaped to keepdim form (size-1 reduced dims) so it broadcasts against the input."""
    if keepdim or not len(shape):
        return a
    if dims is None:
        return a.reshape((1,) * len(shape))
    return a.reshape([1 if i in dims else s for i, s in enumerate(shape)])


def _squeeze_np(a, dims, keepdim):
    if keepdim:
        return a
    return a.reshape(()) if dims is None else a.squeeze(dims)


def _const(arr, like):
    """A graph constant (no history) with like's dtype."""
    d = like._data
    return Tensor._make(arr.astype(d.dtype, copy=False) if arr.__class__ in XP else np.asarray(arr, d.dtype))


def _scalar_name(d):
    return SCALAR_NAMES[_dtype.FROM_NP[d].name]


def _is_float(d):
    k = d.kind
    return k == "f" or k == "V"


def _acc(x):
    """(array to compute on, dtype to return): float16/bfloat16 compute in float32."""
    if x.dtype in _LOW:
        return x.astype(_F32), x.dtype
    return x, None


def _cast(input, dtype):
    """input converted to a reduction's dtype= (complex to real keeps the real part, silently, as torch)."""
    d = input._data.dtype
    if d == dtype.np:
        return input
    if d.kind == "c" and dtype._cat != _dtype._COMPLEX:
        input = input.real
    return input.to(dtype)


def _back(r, dt):
    return r if dt is None else np.asarray(r).astype(dt)


def _not_implemented(kernel, x):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(x._data.dtype)}\'')


def _out(r, out, name):
    return r if out is None else write_out(r, out, name)


def _out2(r, out, name, cls):
    if out is None:
        return cls(*r)
    write_out(r[0], out[0], name)
    write_out(r[1], out[1], name)
    return cls(out[0], out[1])


def _check_nonempty(name, x, dims):
    """torch's errors for max-like reductions (no identity) over empty dims."""
    shape = x._data.shape
    if dims is None:
        if x._data.size == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               f"reduction dim with the 'dim' argument.")
        return
    for d in dims:
        if len(shape) and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


# ---------------- gather / scatter along a dim (private, differentiable) ----------------
# The backward of every index-returning op: the gradient goes to the selected positions. The two ops are each
# other's adjoint, so double backward needs nothing else.
def _scatter_fwd(g, idx, dim, shape):
    xp = XP[g.__class__]
    out = xp.zeros(shape, g.dtype)
    if idx.shape[dim] == 1:  # one index per line: nothing to accumulate
        xp.put_along_axis(out, idx, g, dim)
    else:
        ix = list(np.ogrid[tuple(slice(s) for s in idx.shape)])
        ix[dim] = idx
        np.add.at(out, tuple(ix), g)
    return out


def _take_bwd(ctx, g):
    idx, dim = ctx.attrs
    shape = list(ctx.shapes[0])
    for i, s in enumerate(idx.shape):  # the input may broadcast against the indices
        if i != dim:
            shape[i] = builtins.max(shape[i], s)
    return dispatch1(_SCATTER, g, idx, dim, tuple(shape))


_SCATTER = Op("_scatter_add", _scatter_fwd, lambda ctx, g: dispatch1(_TAKE, g, ctx.attrs[0], ctx.attrs[1]),
              node_name="ScatterAddBackward0")
_TAKE = Op("_take_along_dim", lambda x, idx, dim: np.take_along_axis(x, idx, dim), _take_bwd,
           node_name="GatherBackward0")


def _take(x, idx, dim):
    return dispatch1(_TAKE, x, idx, dim)


def _index_bwd(ctx, gs):
    """Backward of (values, indices) ops: ctx.attrs starts with (dim, keepdim); ctx.extra holds the indices with
    the reduced dim kept (None for a zero-dim input)."""
    g = gs[0]
    if g is None:
        return None
    idx = ctx.extra
    if idx is None:
        return g
    dim, keepdim = ctx.attrs[0], ctx.attrs[1]
    if not keepdim and idx.ndim != g._data.ndim:
        g = g.unsqueeze(dim)
    return dispatch1(_SCATTER, g, idx, dim, ctx.shapes[0])


def _select(x, idx, dim, keepdim):
    """((values, indices), kept indices) for indices of shape keepdim-form."""
    v = np.take_along_axis(x, idx, dim)
    if keepdim:
        return (v, idx), idx
    return (v.squeeze(dim), idx.squeeze(dim)), idx


def _zero_dim_pair(x):
    return (x.copy(), np.zeros((), np.int64)), None


# ---------------- linear private ops used by scan backwards ----------------
def _flip_fwd(x, dim):
    return np.ascontiguousarray(np.flip(x, dim))


_FLIP = Op("flip", _flip_fwd, lambda ctx, g: dispatch1(_FLIP, g, ctx.attrs[0]))


def _rcumsum_fwd(g, dim):
    return np.ascontiguousarray(np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim))


# reverse cumulative sum: the adjoint of cumsum
_RCUMSUM = Op("_reverse_cumsum", _rcumsum_fwd, lambda ctx, g: cumsum(g, ctx.attrs[0]))


def _rcumsum(g, dim):
    return dispatch1(_RCUMSUM, g, dim)


def _shift_fwd(x, dim, fill, step):
    """Shift along dim by one (step=1: towards the end), filling the vacated slot with `fill`."""
    out = np.empty_like(x)
    n = x.shape[dim]
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    src[dim], dst[dim] = (slice(0, n - 1), slice(1, n)) if step > 0 else (slice(1, n), slice(0, n - 1))
    out[tuple(dst)] = x[tuple(src)]
    edge = [slice(None)] * x.ndim
    edge[dim] = slice(0, 1) if step > 0 else slice(n - 1, n)
    out[tuple(edge)] = fill
    return out


_SHIFT = Op("_shift", _shift_fwd, lambda ctx, g: dispatch1(_SHIFT, g, ctx.attrs[0], 0, -ctx.attrs[2]))


def _exclusive_cumprod(x, dim):
    """prod_{i<j} x_i along dim (1 at the first position)."""
    return cumprod(dispatch1(_SHIFT, x, dim, 1, 1), dim)


# ---------------- sum / mean / nansum / nanmean ----------------
# NOTE [ Sums through BLAS ]
# NumPy's pairwise sum runs at about half of memory bandwidth. A matrix-vector product with a vector of ones reads
# the data once at full speed, so large contiguous float sums over the whole tensor or its trailing dims go through
# BLAS in rows of at most 4096 elements (short accumulation chains keep float32 precise), and the row sums are then
# added pairwise by NumPy.
_ONES = {}
_BLAS_MIN = 1 << 16


def _ones(n, dtype):
    v = _ONES.get((n, dtype))
    if v is None:
        v = _ONES[(n, dtype)] = np.ones(n, dtype)
    return v


def _blas_sum(x, dims, keepdim):
    """x's sum over `dims` (None: all) through gemv, or None where that does not apply."""
    n = x.size
    nd = x.ndim
    if dims is None:
        cols = 1024 if n % 1024 == 0 else (512 if n % 512 == 0 else 0)
        if not cols:
            return None
        r = (x.reshape(-1, cols) @ _ones(cols, x.dtype)).sum()
        return r.reshape((1,) * nd) if keepdim else r
    k = nd - len(dims)
    if sorted(dims) != list(range(k, nd)):
        return None
    rows = math.prod(x.shape[:k])
    cols = n // rows if rows else 0
    if cols > 4096 or cols < 16:
        return None
    r = x.reshape(-1, cols) @ _ones(cols, x.dtype)
    shape = x.shape[:k] + ((1,) * len(dims) if keepdim else ())
    return r.reshape(shape)


def _sum_fwd(x, dims, keepdim, np_dtype):
    if x.size >= _BLAS_MIN and np_dtype is None and (x.dtype == _F32 or x.dtype == np.float64) and \
            x.flags.c_contiguous and x.__class__ is np.ndarray:
        r = _blas_sum(x, dims, keepdim)
        if r is not None:
            return r
    if np_dtype is None and x.dtype in _LOW:
        return x.sum(axis=dims, keepdims=keepdim, dtype=_F32).astype(x.dtype)
    return x.sum(axis=dims, keepdims=keepdim, dtype=np_dtype)


def _sum_bwd(ctx, g):
    return expand_grad(g, ctx.shapes[0], ctx.attrs[0], ctx.attrs[1])


SUM = Op("sum", _sum_fwd, _sum_bwd, SAVE_NONE, node_name="SumBackward0")
SUM_DIM = Op("sum", _sum_fwd, _sum_bwd, SAVE_NONE, node_name="SumBackward1")


def _acc_dtype(x, dtype):
    if dtype is not None:
        return dtype.np
    k = x._data.dtype.kind
    if k == "b" or k == "i" or k == "u":
        return np.int64
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.sum`."""
    if dtype is not None:
        input = _cast(input, dtype)
    nd = input._data.ndim
    dims = dims_of(dim, nd) if dim is not None else None
    r = dispatch1(SUM if dim is None else SUM_DIM, input, None if nd == 0 else dims, keepdim,
                  _acc_dtype(input, dtype))
    return r if out is None else write_out(r, out, "sum")


def _mean_fwd(x, dims, keepdim):
    n = _count(x.shape, dims)
    low = x.dtype in _LOW
    s = x.sum(axis=dims, keepdims=keepdim, dtype=_F32 if low else None)
    if n == 0:
        with np.errstate(invalid="ignore", divide="ignore"):
            s = s / n
    elif s.__class__ in XP:
        s /= n
    else:
        s = s / n
    return s.astype(x.dtype) if low else s


def _mean_bwd(ctx, g):
    shape = ctx.shapes[0]
    dims, keepdim = ctx.attrs
    return expand_grad(g / _count(shape, dims), shape, dims, keepdim)


MEAN = Op("mean", _mean_fwd, _mean_bwd, SAVE_NONE, node_name="MeanBackward0")
MEAN_DIM = Op("mean", _mean_fwd, _mean_bwd, SAVE_NONE, node_name="MeanBackward1")


def _float_dtype_check(name, input, dtype):
    if dtype is not None:
        if dtype._cat < _dtype._FLOAT:
            raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be either a floating "
                               f"point or complex dtype. Got: {SCALAR_NAMES[dtype.name]}")
        return _cast(input, dtype)
    if not _is_float(input._data.dtype) and input._data.dtype.kind != "c":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_scalar_name(input._data.dtype)}")
    return input


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.mean`."""
    if dtype is not None or input._data.dtype.kind not in "fcV":
        input = _float_dtype_check("mean", input, dtype)
    nd = input._data.ndim
    r = dispatch1(MEAN if dim is None else MEAN_DIM, input, _rdims(dim, nd), keepdim)
    return r if out is None else write_out(r, out, "mean")


def _nansum_fwd(x, dims, keepdim, np_dtype):
    if not _is_float(x.dtype) and x.dtype.kind != "c":
        return x.sum(axis=dims, keepdims=keepdim, dtype=np_dtype)
    xc, dt = _acc(x)
    return _back(np.nansum(xc, axis=dims, keepdims=keepdim, dtype=np_dtype), dt)


def _nansum_bwd(ctx, g):
    x = ctx.inputs[0]
    dims, keepdim = ctx.attrs[:2]
    return expand_grad(g, ctx.shapes[0], dims, keepdim) * _const(~np.isnan(x._data), x)


NANSUM = Op("nansum", _nansum_fwd, _nansum_bwd, SAVE_INPUTS)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.nansum`."""
    if dtype is not None:
        input = _cast(input, dtype)
    if input._data.dtype.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    r = dispatch1(NANSUM, input, _rdims(dim, input._data.ndim), keepdim, _acc_dtype(input, dtype))
    return _out(r, out, "nansum")


def _nanmean_fwd(x, dims, keepdim):
    xc, dt = _acc(x)
    valid = ~np.isnan(xc)
    s = np.nansum(xc, axis=dims, keepdims=keepdim)
    n = valid.sum(axis=dims, keepdims=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = s / n
    return _back(r.astype(xc.dtype, copy=False), dt)


def _nanmean_bwd(ctx, g):
    x = ctx.inputs[0]
    dims, keepdim = ctx.attrs
    valid = ~np.isnan(x._data)
    n = valid.sum(axis=dims, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = valid / n
    return expand_grad(g, ctx.shapes[0], dims, keepdim) * _const(w, x)


NANMEAN = Op("nanmean", _nanmean_fwd, _nanmean_bwd, SAVE_INPUTS)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.nanmean`."""
    if dtype is not None:
        input = _cast(input, dtype)
    d = input._data.dtype
    if d.kind == "c":
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if not _is_float(d):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_scalar_name(d)}")
    r = dispatch1(NANMEAN, input, _rdims(dim, input._data.ndim), keepdim)
    return _out(r, out, "nanmean")


# ---------------- prod ----------------
def _prod_fwd(x, dim, keepdim, np_dtype):
    if np_dtype is None and x.dtype in _LOW:
        return x.prod(axis=dim, keepdims=keepdim, dtype=_F32).astype(x.dtype)
    return x.prod(axis=dim, keepdims=keepdim, dtype=np_dtype)


def _conj(t):
    return t.conj() if t._data.dtype.kind == "c" else t


def _prod_grad(x, y, g, dim):
    """d(prod x)/dx_j = prod_{i != j} x_i along dim; y and g broadcast against x."""
    if not (x._data == 0).any():
        return g * _conj(y / x)
    # with zeros, y / x is undefined: the product of the others is the exclusive products from both ends
    left = _exclusive_cumprod(x, dim)
    right = dispatch1(_FLIP, _exclusive_cumprod(dispatch1(_FLIP, x, dim), dim), dim)
    return g * _conj(left * right)


def _prod_bwd(ctx, g):
    x, y = ctx.inputs[0], ctx.output
    dim, keepdim = ctx.attrs[:2]
    shape = ctx.shapes[0]
    if not len(shape):
        return g
    if dim is None:
        return _prod_grad(x.reshape(-1), y.reshape(1), g.reshape(1), 0).reshape(shape)
    if not keepdim:
        g, y = g.unsqueeze(dim), y.unsqueeze(dim)
    return _prod_grad(x, y, g, dim)


PROD = Op("prod", _prod_fwd, _prod_bwd, SAVE_BOTH, node_name="ProdBackward0")
PROD_DIM = Op("prod", _prod_fwd, _prod_bwd, SAVE_BOTH, node_name="ProdBackward1")


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.prod` (a single int dim, as torch)."""
    if dtype is not None:
        input = _cast(input, dtype)
    nd = input._data.ndim
    if dim is None:
        r = dispatch1(PROD, input, None, keepdim, _acc_dtype(input, dtype))
    else:
        if not isinstance(dim, numbers.Integral):
            raise TypeError(f"prod() received an invalid combination of arguments - got (Tensor, "
                            f"{type(dim).__name__}), but expected one of:\n * (Tensor input, *, torch.dtype dtype = "
                            f"None)\n * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, "
                            f"Tensor out = None)\n")
        d = _one_dim(dim, nd)
        r = dispatch1(PROD_DIM, input, None if nd == 0 else d, keepdim, _acc_dtype(input, dtype))
    return _out(r, out, "prod")


# ---------------- max / min / amax / amin / argmax / argmin / aminmax ----------------
def _spread(x, y, dims, keepdim, nan_ties):
    """Weights mask/count spreading a reduced value's gradient evenly over the elements equal to it (a graph
    constant). nan_ties: NaN results select the NaN elements (max()/median()); otherwise, as torch's amax, a NaN
    result gives NaN gradients."""
    xd = x._data
    yd = _keep_np(y._data, xd.shape, dims, keepdim)
    mask = xd == yd
    if nan_ties and _is_float(xd.dtype):
        mask |= np.isnan(xd) & np.isnan(yd)
    count = mask.sum(axis=dims, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = mask / count
    return _const(w, x)


def _spread_bwd(nan_ties, full=False):
    def bwd(ctx, g):
        dims, keepdim = (None, False) if full else (ctx.attrs[0], ctx.attrs[1])
        w = _spread(ctx.inputs[0], ctx.output, dims, keepdim, nan_ties)
        return expand_grad(g, ctx.shapes[0], dims, keepdim) * w
    return bwd


MAX_ALL = Op("max", lambda x: x.max(), _spread_bwd(True, True), SAVE_BOTH, node_name="MaxBackward1")
MIN_ALL = Op("min", lambda x: x.min(), _spread_bwd(True, True), SAVE_BOTH, node_name="MinBackward1")
AMAX = Op("amax", lambda x, dims, keepdim: x.max(axis=dims, keepdims=keepdim), _spread_bwd(False), SAVE_BOTH)
AMIN = Op("amin", lambda x, dims, keepdim: x.min(axis=dims, keepdims=keepdim), _spread_bwd(False), SAVE_BOTH)


def _max_dim_fwd(reduce, argf):
    def fwd(x, dim, keepdim):
        if x.ndim == 0:
            return _zero_dim_pair(x)
        # two C passes beat one pass plus a gather; both pick the first NaN, as torch does
        idx = argf(x, axis=dim, keepdims=True)
        return (reduce(x, axis=dim, keepdims=keepdim), idx if keepdim else idx.squeeze(dim)), idx
    return fwd


MAX_DIM = Op("max", _max_dim_fwd(np.max, np.argmax), _index_bwd, SAVE_NONE, nout=2, extra=True,
             node_name="MaxBackward0")
MIN_DIM = Op("min", _max_dim_fwd(np.min, np.argmin), _index_bwd, SAVE_NONE, nout=2, extra=True,
             node_name="MinBackward0")

_binary_fns = {}


def _elementwise(name, input, other, out):
    fn = _binary_fns.get(name)
    if fn is None:
        import ember
        fn = _binary_fns[name] = getattr(ember, name)
    return fn(input, other, out=out) if out is not None else fn(input, other)


def _minmax(name, input, dim, keepdim, other, out):
    if other is not None or isinstance(dim, Tensor):
        return _elementwise("maximum" if name == "max" else "minimum", input, dim if other is None else other, out)
    d = input._data
    if d.dtype.kind == "c":
        if dim is None:
            raise _not_implemented(f"{name}_all", input)
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, keepdim=bool)")
        _check_nonempty(name, input, None)
        return _out(dispatch1(MAX_ALL if name == "max" else MIN_ALL, input), out, name)
    dim = _one_dim(dim, d.ndim)
    _check_nonempty(name, input, (dim,))
    r = dispatch1(MAX_DIM if name == "max" else MIN_DIM, input, dim, keepdim)
    return _out2(r, out, name, _rt.max if name == "max" else _rt.min)


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """Same as `torch.max`: the maximum, (values, indices) along dim, or the elementwise maximum with a tensor."""
    return _minmax("max", input, dim, keepdim, other, out)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    """Same as `torch.min`: the minimum, (values, indices) along dim, or the elementwise minimum with a tensor."""
    return _minmax("min", input, dim, keepdim, other, out)


def _amax(name, op, input, dim, keepdim, out):
    if input._data.dtype.kind == "c":
        raise _not_implemented(f"{name[1:]}_values_cpu", input)
    dims = dims_of(dim, input._data.ndim)
    _check_nonempty(name, input, dims)
    return _out(dispatch1(op, input, None if input._data.ndim == 0 else dims, keepdim), out, name)


def amax(input, dim=(), keepdim=False, *, out=None):
    """Same as `torch.amax`."""
    return _amax("amax", AMAX, input, dim, keepdim, out)


def amin(input, dim=(), keepdim=False, *, out=None):
    """Same as `torch.amin`."""
    return _amax("amin", AMIN, input, dim, keepdim, out)


def _arg_fwd(argf):
    def fwd(x, dim, keepdim):
        if dim is None or x.ndim == 0:
            r = np.asarray(argf(x), np.int64)
            return r.reshape((1,) * x.ndim) if keepdim else r
        return argf(x, axis=dim, keepdims=keepdim)
    return fwd


ARGMAX = Op("argmax", _arg_fwd(np.argmax))
ARGMIN = Op("argmin", _arg_fwd(np.argmin))


def _argext(name, op, input, dim, keepdim, out):
    d = input._data
    if d.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if d.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if d.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    else:
        dim = _one_dim(dim, d.ndim)
        _check_nonempty(name, input, (dim,))
    return _out(dispatch1(op, input, dim, keepdim), out, name)


def argmax(input, dim=None, keepdim=False, *, out=None):
    """Same as `torch.argmax`."""
    return _argext("argmax", ARGMAX, input, dim, keepdim, out)


def argmin(input, dim=None, keepdim=False, *, out=None):
    """Same as `torch.argmin`."""
    return _argext("argmin", ARGMIN, input, dim, keepdim, out)


def _aminmax_bwd(ctx, gs):
    x = ctx.inputs[0]
    dims, keepdim = ctx.attrs
    shape = ctx.shapes[0]
    ys = ctx.outputs
    gx = None
    for g, y in zip(gs, ys):
        if g is not None:
            part = expand_grad(g, shape, dims, keepdim) * _spread(x, y, dims, keepdim, False)
            gx = part if gx is None else gx + part
    return gx


AMINMAX = Op("aminmax", lambda x, dims, keepdim: (x.min(axis=dims, keepdims=keepdim),
                                                  x.max(axis=dims, keepdims=keepdim)),
             _aminmax_bwd, SAVE_BOTH, nout=2)


def aminmax(input, *, dim=None, keepdim=False, out=None):
    """Same as `torch.aminmax`."""
    d = input._data
    if d.dtype.kind == "c":
        raise _not_implemented("aminmax_cpu", input)
    if dim is None:
        if d.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = None
    else:
        dims = (_one_dim(dim, d.ndim),)
        if d.ndim and d.shape[dims[0]] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims[0]} to have non-zero size.")
    r = dispatch1(AMINMAX, input, None if d.ndim == 0 else dims, keepdim)
    return _out2(r, out, "aminmax", _rt.aminmax)


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
    if zero.any():
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


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Same as `torch.var`."""
    dims, c = _var_args("var", input, dim, unbiased, correction)
    return _out(dispatch1(VAR, input, dims, keepdim, c, False), out, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Same as `torch.std`."""
    dims, c = _var_args("std", input, dim, unbiased, correction)
    return _out(dispatch1(STD, input, dims, keepdim, c, True), out, "std")


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Same as `torch.var_mean`: the tuple (var, mean)."""
    dims, c = _var_args("var_mean", input, dim, unbiased, correction)
    r = dispatch1(VAR_MEAN, input, dims, keepdim, c, False)
    return r if out is None else (write_out(r[0], out[0], "var_mean"), write_out(r[1], out[1], "var_mean"))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """Same as `torch.std_mean`: the tuple (std, mean)."""
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


def logsumexp(input, dim, keepdim=False, *, out=None):
    """Same as `torch.logsumexp`."""
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    input = _float_input(input)
    return _out(dispatch1(LOGSUMEXP, input, _rdims(dim, input._data.ndim), keepdim), out, "logsumexp")


# ---------------- norm ----------------
def _vnorm_fwd(x, ord, dims, keepdim):
    xc, _ = _acc(x)
    rdt = _real_dtype(x.dtype)
    if ord == 2 and dims is None and xc.dtype.kind == "f" and xc.flags.c_contiguous:
        flat = xc.reshape(-1)
        r = np.sqrt(np.dot(flat, flat))  # BLAS: no temporary
        return np.asarray(r, rdt).reshape((1,) * x.ndim if keepdim else ())
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
    return np.asarray(r).astype(rdt, copy=False)


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
    ysafe = y + _const(yz, y) if yz.any() else y  # torch: zero gradient where the norm is 0
    ye = expand_grad(ysafe, shape, dims, keepdim)
    if ord == 2:
        return g * x / ye
    # general p: g * sgn(x) |x|^(p-1) / norm^(p-1); torch gives 0 where x is 0 or the norm is 0
    xz = x._data == 0
    ax = x * _sgn(x) if x._data.dtype.kind != "c" else x.abs()
    if xz.any():
        ax = ax + _const(xz, ax)
    gx = g * _sgn(x) * ax ** (ord - 1) / ye ** (ord - 1)
    keep = ~xz
    if yz.any():
        keep &= ~_keep_np(yz, shape, dims, keepdim)
    return gx if keep.all() else gx * _const(keep, ax)


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
        from .. import linalg
        r = linalg.matrix_norm(input, p, dims, keepdim, dtype=dtype)
        return _out(r, out, "norm")
    return _out(vector_norm(input, p, dim, keepdim, dtype=dtype), out, "norm")


# ---------------- all / any / count_nonzero ----------------
def _all_fwd(x, dims, keepdim):
    r = x.all(axis=dims, keepdims=keepdim)
    return r.astype(np.uint8) if x.dtype == np.uint8 else r


def _any_fwd(x, dims, keepdim):
    r = x.any(axis=dims, keepdims=keepdim)
    return r.astype(np.uint8) if x.dtype == np.uint8 else r


def _truth_fwd(x):
    r = x != 0
    return r.astype(np.uint8) if x.dtype == np.uint8 else r


ALL = Op("all", _all_fwd)
ANY = Op("any", _any_fwd)
_TRUTH = Op("ne", _truth_fwd)


def _logical_reduce(name, op, input, dim, keepdim, out):
    if dim is not None and not isinstance(dim, numbers.Integral) and len(dim) == 0:
        r = dispatch1(_TRUTH, input)  # torch: an empty dim list reduces nothing
    else:
        r = dispatch1(op, input, _rdims(dim, input._data.ndim), keepdim)
    return _out(r, out, name)


def all(input, dim=None, keepdim=False, *, out=None):
    """Same as `torch.all`."""
    return _logical_reduce("all", ALL, input, dim, keepdim, out)


def any(input, dim=None, keepdim=False, *, out=None):
    """Same as `torch.any`."""
    return _logical_reduce("any", ANY, input, dim, keepdim, out)


COUNT_NONZERO = Op("count_nonzero", lambda x, dims: np.asarray(np.count_nonzero(x, axis=dims), np.int64))


def count_nonzero(input, dim=None):
    """Same as `torch.count_nonzero`."""
    return dispatch1(COUNT_NONZERO, input, _rdims(dim, input._data.ndim))


# ---------------- cumsum / cumprod ----------------
# torch's CPU scans accumulate in a wider type (float32 in double, float16/bfloat16 in float): without it a
# float32 cumsum of 2**24 ones stalls at 16777216
_SCAN_ACC = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128),
             _dtype.float16.np: _F32, _dtype.bfloat16.np: _F32}


def _scan(fn, x, dim, np_dtype):
    if x.ndim == 0:
        return x.astype(np_dtype or x.dtype)
    if np_dtype is None:
        acc = _SCAN_ACC.get(x.dtype)
        if acc is not None:
            return fn(x, axis=dim, dtype=acc).astype(x.dtype)
    return fn(x, axis=dim, dtype=np_dtype)


def _cumsum_fwd(x, dim, np_dtype):
    return _scan(np.cumsum, x, dim, np_dtype)


CUMSUM = Op("cumsum", _cumsum_fwd, lambda ctx, g: _rcumsum(g, ctx.attrs[0]) if len(ctx.shapes[0]) else g)


def _scan_args(input, dim, dtype):
    if dtype is not None:
        input = _cast(input, dtype)
    return input, _one_dim(dim, input._data.ndim)


def cumsum(input, dim, *, dtype=None, out=None):
    """Same as `torch.cumsum`."""
    input, dim = _scan_args(input, dim, dtype)
    return _out(dispatch1(CUMSUM, input, dim, _acc_dtype(input, dtype)), out, "cumsum")


def _cumprod_fwd(x, dim, np_dtype):
    return _scan(np.cumprod, x, dim, np_dtype)


def _cumprod_bwd(ctx, g):
    # dy_k/dx_j = prod_{i<=k, i!=j} x_i for k >= j, so grad_j = sum_{k>=j} g_k y_k / x_j where x_j != 0
    x, y = ctx.inputs[0], ctx.output
    dim = ctx.attrs[0]
    xd = x._data
    if xd.ndim == 0:
        return g
    zero = xd == 0
    if not zero.any():
        return _rcumsum(g * _conj(y), dim) / _conj(x)
    # Past the first zero of a line every product holds that zero: no gradient. Before it, the formula above
    # holds. At it, grad_z = sum_{k>=z} g_k prod_{i<=k, i!=z} x_i: the cumprod with that zero replaced by one.
    if GRAD[0]:  # create_graph: the masked formula below is exact but not differentiable at the zeros
        return _cumprod_grad_quadratic(x, g, dim)
    seen = np.cumsum(zero, axis=dim)
    before = seen == 0
    first = zero & (seen == 1)
    xs = x * _const(before, x) + _const(~before, x)
    ga = _rcumsum(g * _conj(y), dim) / _conj(xs) * _const(before, x)
    w = cumprod(x * _const(~first, x) + _const(first, x), dim)
    gb = _rcumsum(g * _conj(w), dim) * _const(first, x)
    return ga + gb


def _cumprod_grad_quadratic(x, g, dim):
    """grad_k = prod_{i<k} x_i * sum_{m>=k} g_m prod_{k<i<=m} x_i, from differentiable ops on an n x n grid (grid
    axis 0 is k, the scanned dim moves to dim + 1). O(n^2): only for double backward through zeros, as torch."""
    xd = x._data
    n, nd = xd.shape[dim], xd.ndim
    k = np.arange(n).reshape((n,) + (1,) * nd)
    i = np.arange(n).reshape([n if a == dim + 1 else 1 for a in range(nd + 1)])
    after = np.broadcast_to(i > k, (n,) + (1,) * dim + (n,) + (1,) * (nd - dim - 1))
    partial = cumprod(x.unsqueeze(0) * _const(after, x) + _const(~after, x), dim + 1)  # prod_{k<i<=m} x_i
    s = (g.unsqueeze(0) * partial * _const(i >= k, x)).sum(dim + 1)
    s = s.permute(*range(1, dim + 1), 0, *range(dim + 1, nd))
    return _exclusive_cumprod(x, dim) * s


CUMPROD = Op("cumprod", _cumprod_fwd, _cumprod_bwd, SAVE_BOTH)


def cumprod(input, dim, *, dtype=None, out=None):
    """Same as `torch.cumprod`."""
    input, dim = _scan_args(input, dim, dtype)
    return _out(dispatch1(CUMPROD, input, dim, _acc_dtype(input, dtype)), out, "cumprod")


# ---------------- cummax / cummin ----------------
def _cumext_fwd(ufunc):
    def fwd(x, dim):
        if x.ndim == 0:
            return _zero_dim_pair(x)
        v = ufunc.accumulate(x, axis=dim)
        # torch's index: the latest position holding the running extreme (ties and NaNs move it forward)
        mark = x == v
        if _is_float(x.dtype):
            mark |= np.isnan(x)
        pos = np.arange(x.shape[dim]).reshape([-1 if i == dim else 1 for i in range(x.ndim)])
        idx = np.maximum.accumulate(np.where(mark, pos, 0), axis=dim)
        return (v, idx), idx
    return fwd


def _cumext_bwd(ctx, gs):
    g = gs[0]
    if g is None:
        return None
    idx = ctx.extra
    if idx is None:
        return g
    return dispatch1(_SCATTER, g, idx, ctx.attrs[0], ctx.shapes[0])


CUMMAX = Op("cummax", _cumext_fwd(np.maximum), _cumext_bwd, SAVE_NONE, nout=2, extra=True)
CUMMIN = Op("cummin", _cumext_fwd(np.minimum), _cumext_bwd, SAVE_NONE, nout=2, extra=True)


def _cumext(name, op, cls, input, dim, out):
    if input._data.dtype.kind == "c":
        raise _not_implemented(f"{name}_cpu", input)
    r = dispatch1(op, input, _one_dim(dim, input._data.ndim))
    return _out2(r, out, name, cls)


def cummax(input, dim, *, out=None):
    """Same as `torch.cummax`."""
    return _cumext("cummax", CUMMAX, _rt.cummax, input, dim, out)


def cummin(input, dim, *, out=None):
    """Same as `torch.cummin`."""
    return _cumext("cummin", CUMMIN, _rt.cummin, input, dim, out)


# ---------------- logcumsumexp ----------------
def _lcse_fwd(x, dim):
    if x.ndim == 0:
        return x.copy()
    xc, dt = _acc(x)
    if xc.dtype.kind == "c":
        with np.errstate(divide="ignore", invalid="ignore"):
            m = xc.real.max(axis=dim, keepdims=True) if xc.size else 0
            m = np.where(np.isfinite(m), m, 0)
            return np.log(np.cumsum(np.exp(xc - m), axis=dim)) + m
    return _back(np.logaddexp.accumulate(xc, axis=dim), dt)


def _log_or_lowest(t):
    """log(t) where t > 0, else the lowest finite float: unlike -inf it keeps the log-space sums below free of
    inf - inf, so the double backward stays finite (torch's formulation)."""
    z = t._data <= 0
    if not z.any():
        return t.log()
    lowest = np.finfo(t._data.dtype).min
    return (t * _const(~z, t) + _const(z, t)).log() + _const(np.where(z, lowest, 0), t)


def _rlcse(t, dim):
    """logcumsumexp from the end of the dim."""
    return dispatch1(_FLIP, logcumsumexp(dispatch1(_FLIP, t, dim), dim), dim)


def _lcse_bwd(ctx, g):
    # grad_j = sum_{k>=j} g_k exp(x_j - y_k), summed in log space separately for the positive and negative g
    x, y = ctx.inputs[0], ctx.output
    dim = ctx.attrs[0]
    if x._data.ndim == 0:
        return g
    if x._data.dtype.kind == "c":
        return (x.exp() * _rcumsum(g * (-y).exp().conj(), dim).conj()).conj()
    with np.errstate(invalid="ignore", over="ignore"):
        gp = (x + _rlcse(_log_or_lowest(g) - y, dim)).exp()
        gn = (x + _rlcse(_log_or_lowest(-g) - y, dim)).exp()
    return gp - gn


LOGCUMSUMEXP = Op("logcumsumexp", _lcse_fwd, _lcse_bwd, SAVE_BOTH)


def logcumsumexp(input, dim, *, out=None):
    """Same as `torch.logcumsumexp`."""
    d = input._data
    if not _is_float(d.dtype) and d.dtype.kind != "c":
        raise _not_implemented("logcumsumexp_out_cpu", input)
    return _out(dispatch1(LOGCUMSUMEXP, input, _one_dim(dim, d.ndim)), out, "logcumsumexp")


# ---------------- median / nanmedian / mode ----------------
def _median_all_fwd(x, ignore_nan):
    flat = x.reshape(-1)
    if _is_float(x.dtype):
        nan = np.isnan(flat)
        if nan.any():
            if not ignore_nan:
                return np.asarray(np.nan, x.dtype)
            flat = flat[~nan]
        if flat.size == 0:
            return np.asarray(np.nan, x.dtype)
    k = (flat.size - 1) // 2
    return np.partition(flat, k)[k]


MEDIAN_ALL = Op("median", _median_all_fwd, _spread_bwd(True, True), SAVE_BOTH)
NANMEDIAN_ALL = Op("nanmedian", _median_all_fwd, _spread_bwd(True, True), SAVE_BOTH)


def _median_dim_fwd(x, dim, keepdim, ignore_nan):
    if x.ndim == 0:
        return _zero_dim_pair(x)
    n = x.shape[dim]
    order = np.argsort(x, axis=dim, kind="stable")  # NaNs sort last; ties keep their order, as torch picks them
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


def median(input, dim=None, keepdim=False, *, out=None):
    """Same as `torch.median`: the lower median of all elements, or (values, indices) along dim."""
    return _median("median", input, dim, keepdim, out, False)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """Same as `torch.nanmedian`: median() ignoring NaNs."""
    return _median("nanmedian", input, dim, keepdim, out, True)


def _mode_fwd(x, dim, keepdim):
    if x.ndim == 0:
        return _zero_dim_pair(x)
    xm = np.moveaxis(x, dim, -1)
    lead, n = xm.shape[:-1], xm.shape[-1]
    rows = xm.reshape(-1, n)
    order = np.argsort(rows, axis=1, kind="stable")
    s = np.take_along_axis(rows, order, 1)
    # runs of equal values in each sorted row; the mode is the first longest run (so the smallest value), its
    # index the last occurrence (the run's end, as the sort is stable)
    new = np.ones(s.shape, bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    run = np.cumsum(new.reshape(-1)) - 1
    length = np.bincount(run)[run].reshape(s.shape) if run.size else np.zeros(s.shape, np.int64)
    start = np.argmax(length, axis=1)[:, None]
    end = start + np.take_along_axis(length, start, 1) - 1
    v = np.take_along_axis(s, start, 1).reshape(lead)
    i = np.take_along_axis(order, end, 1).reshape(lead).astype(np.int64)
    ik = np.expand_dims(i, dim)
    if keepdim:
        return (np.expand_dims(v, dim), ik), ik
    return (v, i), ik


MODE = Op("mode", _mode_fwd, _index_bwd, SAVE_NONE, nout=2, extra=True)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """Same as `torch.mode`: the most frequent value (the smallest among equally frequent ones) and the index of
    its last occurrence."""
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
        qa = np.asarray(q._data)
        if ((qa < 0) | (qa > 1)).any():
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        return qa
    q = float(q)
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    return np.asarray(q, input._data.dtype)


def _quantile_positions(xd, dim, qa, interpolation, ignore_nan):
    """(low index, high index, weight) into the sorted dim, shaped (len(q), ..., 1, ...)."""
    n = xd.shape[dim]
    nn = np.isnan(xd).sum(axis=dim, keepdims=True)
    last = ((n - nn - 1) if ignore_nan else np.full(nn.shape, n - 1)).astype(xd.dtype)
    qb = qa.reshape((-1,) + (1,) * xd.ndim)
    pos = qb * last
    if ignore_nan:
        pos = np.where(last < 0, 0, pos)  # all NaN: the first (NaN) element
    else:
        pos = np.where(nn > 0, n - 1, pos)  # any NaN: the last sorted element, a NaN
    if interpolation == "nearest":
        pos = np.round(pos)
    lo, hi = np.floor(pos), np.ceil(pos)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    w = 0.5 if interpolation == "midpoint" else pos - lo
    return lo.astype(np.intp), hi.astype(np.intp), w


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
    order = np.argsort(xd, axis=dim, kind="stable")[None]
    lo, hi, w = _quantile_positions(xd, dim, qa, interpolation, ignore_nan)
    x1 = x.unsqueeze(0)
    vlo = _take(x1, np.take_along_axis(order, lo, dim + 1), dim + 1)
    if interpolation in ("lower", "higher", "nearest"):
        r = vlo
    else:
        vhi = _take(x1, np.take_along_axis(order, hi, dim + 1), dim + 1)
        r = vlo + (vhi - vlo) * (w if isinstance(w, float) else _const(w, x))
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
    Tensor.cumsum_ = make_inplace(cumsum, "cumsum_")
    Tensor.cumprod_ = make_inplace(cumprod, "cumprod_")


_bind()
