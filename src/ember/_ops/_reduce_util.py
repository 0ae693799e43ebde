"""Helpers shared by the reductions (reduce.py), the statistics (stats.py) and the scans (scan.py): dims, dtypes,
out= handling, and the private differentiable gather/scatter along a dim that is the backward of every
index-returning op (see NOTE [ Gradients that select elements ] in reduce.py)."""
import builtins
import math
import numbers

import numpy as np

from .. import _dtype
from .._backend import XP
from .._backend.accumulate import add_at
from .._tensor import Tensor, _wrap_dim
from .._dtype import SCALAR_NAMES
from ._dispatch import Op, dispatch1
from ._inplace import write_out

__all__ = []  # private helpers only

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
    if arr.__class__ is d.__class__:
        return Tensor._make(arr.astype(d.dtype, copy=False))
    return Tensor._make(np.asarray(arr, d.dtype) if d.__class__ is np.ndarray else XP[d.__class__].asarray(arr, d.dtype))


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
    return r if dt is None else r.astype(dt)  # NumPy scalars have astype too


def _not_implemented(kernel, x):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(x._data.dtype)}\'')


def _out(r, out, name):
    return r if out is None else write_out(r, out, name)


def _out2(r, out, name, cls, exact_dtype=False):
    if out is None:
        return cls(*r)
    write_out(r[0], out[0], name, exact_dtype=exact_dtype)
    write_out(r[1], out[1], name, exact_dtype=exact_dtype)
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


def _acc_dtype(x, dtype):
    if dtype is not None:
        return dtype.np
    k = x._data.dtype.kind
    if k == "b" or k == "i" or k == "u":
        return np.int64
    return None


def _conj(t):
    return t.conj() if t._data.dtype.kind == "c" else t


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
        add_at(out, tuple(ix), g)
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
