"""Reductions."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap_dim
from ._dispatch import SAVE_NONE, Op, dispatch1
from ._inplace import write_out

__all__ = ["sum", "mean"]


def dims_of(dim, ndim):
    """A normalised tuple of reduced dims (None: all)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        return (_wrap_dim(dim, ndim),)
    dims = tuple(_wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims} appears multiple times in the list of dims")
    return dims if dims else None


def expand_grad(g, shape, dims, keepdim):
    """Broadcast a reduction's gradient back to the input shape."""
    if not keepdim and dims is not None and len(shape):
        g = g.reshape([1 if i in dims else s for i, s in enumerate(shape)])
    return g.expand(shape)


def _sum_fwd(x, dims, keepdim, np_dtype):
    if x.ndim == 0 and dims is not None:
        dims = None
    return x.sum(axis=dims, keepdims=keepdim, dtype=np_dtype)


SUM = Op("sum", _sum_fwd, lambda ctx, g: expand_grad(g, ctx.shapes[0], ctx.attrs[0], ctx.attrs[1]), SAVE_NONE)


def _acc_dtype(x, dtype):
    if dtype is not None:
        return dtype.np
    k = x._data.dtype.kind
    if k in "bi" or k == "u":
        return np.int64
    return None


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.sum`."""
    if dtype is not None and input._data.dtype != dtype.np:
        input = input.to(dtype)
    r = dispatch1(SUM, input, dims_of(dim, input._data.ndim), keepdim, _acc_dtype(input, dtype))
    return r if out is None else write_out(r, out, "sum")


def _mean_fwd(x, dims, keepdim):
    if x.ndim == 0 and dims is not None:
        dims = None
    return x.mean(axis=dims, keepdims=keepdim, dtype=x.dtype)


def _mean_bwd(ctx, g):
    shape = ctx.shapes[0]
    dims, keepdim = ctx.attrs
    n = 1
    for i, s in enumerate(shape):
        if dims is None or i in dims:
            n *= s
    return expand_grad(g / n, shape, dims, keepdim)


MEAN = Op("mean", _mean_fwd, _mean_bwd, SAVE_NONE)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.mean`."""
    if dtype is not None:
        input = input.to(dtype)
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_dtype.FROM_NP[input._data.dtype].name.capitalize()}")
    r = dispatch1(MEAN, input, dims_of(dim, input._data.ndim), keepdim)
    return r if out is None else write_out(r, out, "mean")


Tensor.sum = sum
Tensor.mean = mean
