"""softmax, log_softmax, softmin and gumbel_softmax (ember.nn.functional re-exports them).

# NOTE [ Softmax kernels ]
The forward is one max-subtracted pass in NumPy (row sums over the last dim through BLAS). The backward
(softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g), with exp(y) taken from the forward's
exponentials rather than a second exp) runs in NumPy when no graph of the backward is wanted, and as ember ops
on the saved output when it is (create_graph=True), so double backward works without a second set of formulas.
"""
import warnings

import ml_dtypes
import numpy as np

from .._autocast import AUTOCAST, cast_args
from .._backend import XP, row_kernels
from .._tensor import Tensor
from ..autograd.grad_mode import GRAD
from ._dispatch import SAVE_OUTPUT, Op, dispatch1

__all__ = ["gumbel_softmax", "log_softmax", "softmax", "softmin"]

_LOW = (np.float16, ml_dtypes.bfloat16)  # computed in float32, rounded once, as torch


_ONES = {}
_BLAS = (np.dtype(np.float32), np.dtype(np.float64))


def _sum_keep(e, dim):
    """e.sum(dim, keepdims=True); the last dim of a contiguous float array goes through BLAS (one fast pass)."""
    if dim == e.ndim - 1 and e.dtype in _BLAS and e.__class__ is np.ndarray and e.flags.c_contiguous and e.size:
        n = e.shape[-1]
        ones = _ONES.get((n, e.dtype))
        if ones is None:
            ones = _ONES[(n, e.dtype)] = np.ones(n, e.dtype)
        return (e.reshape(-1, n) @ ones).reshape(e.shape[:-1] + (1,))
    return e.sum(dim, keepdims=True)


def _rows(x, dim):
    """x as C-contiguous (rows, n) for the GPU's row kernels (NOTE [ Row kernels ]), or None."""
    if row_kernels.available(x) and dim == x.ndim - 1 and x.size and x.flags.c_contiguous:
        return x.reshape(-1, x.shape[-1])
    return None


def _grad_rows(g, y, dim):
    """(g, y) as rows for the row kernels' backward, or None."""
    y2 = _rows(y, dim)
    if y2 is None or g.dtype != y.dtype:
        return None
    return XP[g.__class__].ascontiguousarray(g).reshape(y2.shape), y2


def _softmax_fwd(x, dim):
    x2 = _rows(x, dim)
    if x2 is not None:
        return row_kernels.softmax_forward(x2, XP[x.__class__].empty_like(x2)).reshape(x.shape)
    low = x.dtype if x.dtype.type in _LOW else None
    if low is not None:
        x = x.astype(np.float32)
    if x.ndim == 0 or x.size == 0:
        y = np.ones_like(x)
    else:
        y = np.subtract(x, x.max(dim, keepdims=True))
        np.exp(y, out=y)
        y /= _sum_keep(y, dim)
    return y if low is None else y.astype(low)


def _softmax_bwd(ctx, g):
    y = ctx.output
    dim = ctx.attrs[0]
    if GRAD[0]:
        return (y * (g - (g * y).sum(dim, keepdim=True)),)
    yd, gd = y._data, g._data
    if yd.ndim == 0:
        return (Tensor._make(np.zeros_like(yd)),)
    rows = _grad_rows(gd, yd, dim)
    if rows is not None:
        return (Tensor._make(row_kernels.softmax_backward(*rows).reshape(yd.shape)),)
    t = np.multiply(gd, yd)
    s = _sum_keep(t, dim)
    t -= yd * s
    return (Tensor._make(t),)


def _log_softmax_fwd(x, dim):
    """The log-probabilities, and (exp(x - max), its sum) kept for the backward: softmax without a second exp
    (on the GPU's row kernels, () instead: their backward takes exp(y))."""
    x2 = _rows(x, dim)
    if x2 is not None:
        return row_kernels.softmax_forward(x2, XP[x.__class__].empty_like(x2), log=True).reshape(x.shape), ()
    low = x.dtype if x.dtype.type in _LOW else None
    if low is not None:
        x = x.astype(np.float32)
    if x.ndim == 0 or x.size == 0:
        y = np.zeros_like(x)
        return (y if low is None else y.astype(low)), None
    y = np.subtract(x, x.max(dim, keepdims=True))
    e = np.exp(y)
    se = _sum_keep(e, dim)
    y -= np.log(se)
    return (y if low is None else y.astype(low)), (e, se)


def _log_softmax_bwd(ctx, g):
    y = ctx.output
    dim = ctx.attrs[0]
    if GRAD[0]:
        return (g - y.exp() * g.sum(dim, keepdim=True),)
    gd = g._data
    if ctx.extra is None:
        return (Tensor._make(np.zeros_like(y._data)),)
    if not ctx.extra:  # the row kernels' forward
        rows = _grad_rows(gd, y._data, dim)
        if rows is not None:
            return (Tensor._make(row_kernels.softmax_backward(*rows, log=True).reshape(gd.shape)),)
        return (g - y.exp() * g.sum(dim, keepdim=True),)
    e, se = ctx.extra
    t = np.multiply(e, _sum_keep(gd, dim) / se)
    return (Tensor._make(np.subtract(gd, t, out=t)),)


SOFTMAX = Op("softmax", _softmax_fwd, _softmax_bwd, SAVE_OUTPUT, node_name="SoftmaxBackward0")
LOG_SOFTMAX = Op("log_softmax", _log_softmax_fwd, _log_softmax_bwd, SAVE_OUTPUT, extra=True,
                 node_name="LogSoftmaxBackward0")


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _prep(x, dim, dtype, name):
    if dtype is not None:
        x = x.to(dtype)
    nd = x._data.ndim
    if dim is None:
        dim = _get_softmax_dim(name, nd, 4)
    n = nd if nd else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    if x._data.dtype.kind not in "fcV":  # V: bfloat16
        kind = "softmax" if name != "log_softmax" else "log_softmax"
        raise NotImplementedError(f'"{kind}_lastdim_kernel_impl" not implemented for \'{_type_name(x)}\'')
    return x, (dim % n if nd else 0)


def _type_name(x):
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(x._data.dtype.name, x._data.dtype.name)


def softmax(input, dim=None, _stacklevel=3, dtype=None, *, axis=None):
    """Same as `torch.nn.functional.softmax`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if AUTOCAST[0] and dtype is None:  # CUDA autocast runs it in float32
        input = cast_args("softmax", (input,))[0]
    input, dim = _prep(input, dim, dtype, "softmax")
    return dispatch1(SOFTMAX, input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None, *, axis=None):
    """Same as `torch.nn.functional.log_softmax`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if AUTOCAST[0] and dtype is None:
        input = cast_args("log_softmax", (input,))[0]
    input, dim = _prep(input, dim, dtype, "log_softmax")
    return dispatch1(LOG_SOFTMAX, input, dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """Same as `torch.nn.functional.softmin`."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), 4)
    return softmax(-input, dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Same as `torch.nn.functional.gumbel_softmax`."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=2)
    gumbels = -logits.detach().new_empty(logits.shape).exponential_().log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = y_soft.detach().new_zeros(logits.shape).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _tensor_softmax(self, dim=None, dtype=None, *, axis=None):
    """Same as `torch.Tensor.softmax`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("softmax() missing 1 required positional argument: 'dim'")
    return softmax(self, dim, dtype=dtype)


def _tensor_log_softmax(self, dim=None, dtype=None, *, axis=None):
    """Same as `torch.Tensor.log_softmax`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("log_softmax() missing 1 required positional argument: 'dim'")
    return log_softmax(self, dim, dtype=dtype)


Tensor.softmax = _tensor_softmax
Tensor.log_softmax = _tensor_log_softmax
