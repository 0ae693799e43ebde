"""Gradient clipping: clip_grad_norm_, clip_grad_value_, get_total_norm and clip_grads_with_norm_.

They work on the gradients' arrays directly (no graph, whatever the grad mode): the 2-norm of a gradient is one
`dot` over its raveled memory, and clipping is one in-place multiply (or clip) per gradient.
"""
import math
import types
import warnings

import numpy as np

from ..._backend import host, xp_of
from ..._tensor import Tensor
from ...autograd.graph import bump_version

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]

_NONFINITE_MSG = ("The total norm of order {} for gradients from `parameters` is non-finite, so it cannot be clipped. "
                  "To disable this error and scale the gradients by the non-finite norm anyway, set "
                  "`error_if_nonfinite=False`")


def _acc_dtype(dt):
    # half precisions accumulate in float32, as torch's CPU reductions do; complex norms are real
    if dt.kind == "c":
        return np.float64 if dt == np.complex128 else np.float32
    return np.float64 if dt == np.float64 else np.float32


def _norm_dtype(dt):
    # the dtype of torch.linalg.vector_norm's result for a tensor of dtype dt
    if dt.kind == "c":
        return np.dtype(np.float64 if dt == np.complex128 else np.float32)
    return dt


def _vector_norm(xp, a, p):
    """The p-norm of array a (any shape) as a 0-dim array of the accumulation dtype."""
    acc = _acc_dtype(a.dtype)
    flat = a.reshape(-1)
    if p == 2.0:
        if a.dtype.kind == "c":
            return xp.sqrt(xp.vdot(flat, flat).real.astype(acc))
        if flat.dtype != acc:
            flat = flat.astype(acc)
        return xp.sqrt(xp.dot(flat, flat))
    mag = xp.abs(flat)
    if mag.dtype != acc:
        mag = mag.astype(acc)
    if p == math.inf:
        if not mag.size:
            raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor because the "
                               "operation does not have an identity")
        return mag.max()
    if p == -math.inf:
        if not mag.size:
            raise RuntimeError("linalg.vector_norm cannot compute the -inf norm on an empty tensor because the "
                               "operation does not have an identity")
        return mag.min()
    if p == 0.0:
        return xp.asarray(xp.count_nonzero(mag), dtype=acc)
    if p == 1.0:
        return mag.sum(dtype=acc)
    return (mag ** p).sum(dtype=acc) ** (1.0 / p)


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _fast_two_norm(arrays):
    """The total 2-norm when every array is a NumPy float32 (or every one float64) array, else None."""
    dt = arrays[0].dtype
    if dt not in _FAST_DTYPES:
        return None
    sq = []
    for a in arrays:
        if a.__class__ is not np.ndarray or a.dtype != dt:
            return None
        f = a.reshape(-1)
        sq.append(np.dot(f, f))
    norms = np.sqrt(np.array(sq, dtype=dt))  # each norm rounded to dt, as torch's stacked norms are
    return np.sqrt(np.dot(norms, norms))


_FAST_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Same as `torch.nn.utils.get_total_norm`: the norm of the per-tensor norms."""
    from ..._ops.creation import tensor
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    arrays = [t._data for t in tensors]
    cls = arrays[0].__class__
    if cls is not np.ndarray and all(a.__class__ is cls for a in arrays):
        total = _device_total_norm(xp_of(arrays[0]), arrays, norm_type)
        if error_if_nonfinite and not bool(xp_of(total).isfinite(total)):  # the one host read, as in torch
            raise RuntimeError(_NONFINITE_MSG.format(norm_type))
        return Tensor._make(total)
    total = _fast_two_norm(arrays) if norm_type == 2.0 else None
    if total is None:
        total = _total_norm(arrays, norm_type)
    total = np.asarray(total)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(_NONFINITE_MSG.format(norm_type))
    xp = xp_of(arrays[0])
    return Tensor._make(total if xp is np else xp.asarray(total))


def _total_norm(arrays, norm_type):
    dtype = _norm_dtype(arrays[0].dtype)
    norms = []
    for a in arrays:
        nd = _norm_dtype(a.dtype)
        dtype = np.promote_types(dtype, nd)
        # each norm is rounded to its own dtype before the final norm, as torch's stacked norms are
        norms.append(float(_vector_norm(xp_of(a), a, norm_type).astype(nd)))
    return np.asarray(_vector_norm(np, np.array(norms, dtype=_acc_dtype(dtype)), norm_type), dtype=dtype)


def _device_total_norm(xp, arrays, norm_type):
    """_total_norm on the GPU: computed there, never read by the host."""
    dtype = _norm_dtype(arrays[0].dtype)
    norms = []
    for a in arrays:
        nd = _norm_dtype(a.dtype)
        dtype = np.promote_types(dtype, nd)
        norms.append(_vector_norm(xp, a, norm_type).astype(nd))
    acc = _acc_dtype(dtype)
    return _vector_norm(xp, xp.stack([n.astype(acc) for n in norms]), norm_type).astype(dtype)


def _grads(parameters):
    return [p._grad for p in parameters if p._grad is not None]


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Same as `torch.nn.utils.clip_grads_with_norm_`: grads *= min(max_norm / (total_norm + 1e-6), 1)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = _grads(parameters)
    max_norm = float(max_norm)
    if not grads:
        return
    tn = total_norm._data if isinstance(total_norm, Tensor) else np.asarray(total_norm, dtype=np.float32)
    if tn.__class__ is not np.ndarray:
        if all(g._data.__class__ is tn.__class__ for g in grads):
            return _clip_on_device(grads, max_norm, tn)
        tn = host(tn)
    # computed in total_norm's dtype (a Python float is weak, as in torch)
    coef = np.minimum(max_norm / (tn + 1e-6), 1.0)
    # a factor of exactly 1 leaves every value as it is: only the version counters move, as after torch's mul_
    scale = not coef >= 1.0
    cast = {}
    for g in grads:
        a = g._data
        if scale:
            c = cast.get(a.dtype)
            if c is None:
                c = cast[a.dtype] = coef.astype(a.dtype)
            if a.__class__ is np.ndarray:
                np.multiply(a, c, out=a)
            else:
                xp_of(a).multiply(a, xp_of(a).asarray(c), out=a)
        bump_version(g, "mul_")


def _clip_on_device(grads, max_norm, tn):
    # every gradient is multiplied, by 1 where the norm is below max_norm: deciding to skip would read the GPU
    xp = xp_of(tn)
    coef = xp.minimum(max_norm / (tn + 1e-6), 1.0)
    cast = {}
    for g in grads:
        a = g._data
        c = cast.get(a.dtype)
        if c is None:
            c = cast[a.dtype] = coef.astype(a.dtype)
        xp.multiply(a, c, out=a)
        bump_version(g, "mul_")


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Same as `torch.nn.utils.clip_grad_norm_`: returns the total norm of the gradients before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    total_norm = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Same as `torch.nn.utils.clip_grad_norm` (deprecated alias of clip_grad_norm_)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Same as `torch.nn.utils.clip_grad_value_`: clamps every gradient into [-clip_value, clip_value] in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    for g in _grads(parameters):
        a = g._data
        if a.dtype.kind == "c":
            raise RuntimeError("clamp is not supported for complex types")
        xp = xp_of(a)
        lo, hi = xp.asarray(-clip_value, dtype=a.dtype), xp.asarray(clip_value, dtype=a.dtype)
        xp.clip(a, lo, hi, out=a)
        bump_version(g, "clamp_")
