"""Reductions: sums and means, products, max/min and their indices, all/any and count_nonzero. Statistics
(var/std, logsumexp, norm, median, mode, quantiles) live in stats.py and cumulative ops in scan.py; all three
share the helpers of _reduce_util.py (dims_of, expand_grad, ...).

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
import math
import numbers

import numpy as np

from .. import _dtype
from .. import return_types as _rt
from .._autocast import AUTOCAST, cast_one
from .._backend import XP, maybe_any
from .._tensor import Tensor
from .._dtype import SCALAR_NAMES
from ._dispatch import SAVE_BOTH, SAVE_INPUTS, SAVE_NONE, Op, dispatch1
from ._inplace import write_out
from ._reduce_util import (_F32, _LOW, _acc, _acc_dtype, _back, _cast, _check_nonempty, _conj, _const, _count,
                           _index_bwd, _is_float, _keep_np, _not_implemented, _one_dim, _out, _out2, _rdims,
                           _scalar_name, _zero_dim_pair, dims_of, expand_grad)
from .scan import _FLIP, _exclusive_cumprod

__all__ = ["sum", "mean", "nansum", "nanmean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "aminmax",
           "all", "any", "count_nonzero"]


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


def _not_tensor(name, x):
    """torch's error for a reduction called on a list or number (a common slip for Python's built-ins)."""
    return TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Same as `torch.sum`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if dtype is not None:
        input = _cast(input, dtype)
    elif AUTOCAST[0]:
        input = cast_one("sum", input)
    try:
        nd = input._data.ndim
    except AttributeError:
        raise _not_tensor("sum", input) from None
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


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Same as `torch.mean`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    try:
        kind = input._data.dtype.kind
    except AttributeError:
        raise _not_tensor("mean", input) from None
    if dtype is not None or kind not in "fcV":
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


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Same as `torch.nansum`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
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


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Same as `torch.nanmean`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
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


def _prod_grad(x, y, g, dim):
    """d(prod x)/dx_j = prod_{i != j} x_i along dim; y and g broadcast against x."""
    if not maybe_any(x._data == 0):
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


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """Same as `torch.prod` (a single int dim, as torch)."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if dtype is not None:
        input = _cast(input, dtype)
    elif AUTOCAST[0]:
        input = cast_one("prod", input)
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
        from . import binary
        fn = _binary_fns[name] = getattr(binary, name)
    return fn(input, other, out=out) if out is not None else fn(input, other)


def _minmax(name, input, dim, keepdim, other, out):
    if other is not None or isinstance(dim, Tensor):
        return _elementwise("maximum" if name == "max" else "minimum", input, dim if other is None else other, out)
    try:
        d = input._data
    except AttributeError:
        raise _not_tensor(name, input) from None
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


def max(input, dim=None, keepdim=False, *, other=None, out=None, axis=None, keepdims=None):
    """Same as `torch.max`: the maximum, (values, indices) along dim, or the elementwise maximum with a tensor."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _minmax("max", input, dim, keepdim, other, out)


def min(input, dim=None, keepdim=False, *, other=None, out=None, axis=None, keepdims=None):
    """Same as `torch.min`: the minimum, (values, indices) along dim, or the elementwise minimum with a tensor."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _minmax("min", input, dim, keepdim, other, out)


def _amax(name, op, input, dim, keepdim, out):
    if input._data.dtype.kind == "c":
        raise _not_implemented(f"{name[1:]}_values_cpu", input)
    dims = dims_of(dim, input._data.ndim)
    _check_nonempty(name, input, dims)
    return _out(dispatch1(op, input, None if input._data.ndim == 0 else dims, keepdim), out, name)


def amax(input, dim=(), keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.amax`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _amax("amax", AMAX, input, dim, keepdim, out)


def amin(input, dim=(), keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.amin`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _amax("amin", AMIN, input, dim, keepdim, out)


def _arg_fwd(argf):
    def fwd(x, dim, keepdim):
        if dim is None or x.ndim == 0:
            r = argf(x).astype(np.int64)  # a NumPy scalar on the CPU, a 0-d array on the GPU
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


def argmax(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.argmax`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _argext("argmax", ARGMAX, input, dim, keepdim, out)


def argmin(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.argmin`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
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
    return _out2(r, out, "aminmax", _rt.aminmax, exact_dtype=True)


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


def all(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.all`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _logical_reduce("all", ALL, input, dim, keepdim, out)


def any(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.any`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _logical_reduce("any", ANY, input, dim, keepdim, out)


def _count_nonzero_fwd(x, dims):
    r = np.count_nonzero(x, axis=dims)  # a Python int from NumPy over all dims, a 0-d array from CuPy
    return np.int64(r) if r.__class__ is int else r.astype(np.int64, copy=False)


COUNT_NONZERO = Op("count_nonzero", _count_nonzero_fwd)


def count_nonzero(input, dim=None, *, axis=None):
    """Same as `torch.count_nonzero`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    return dispatch1(COUNT_NONZERO, input, _rdims(dim, input._data.ndim))


# ---------------- binding ----------------
def _bind():
    for name in __all__:
        setattr(Tensor, name, globals()[name])


_bind()
