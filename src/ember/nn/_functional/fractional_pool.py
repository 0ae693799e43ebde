"""nn.functional: fractional max pooling (Graham, "Fractional Max-Pooling", 2014).

Every (batch, channel) plane pools over windows whose starts follow a pseudo-random sequence drawn from one
sample u per spatial dimension. The windows are gathered by flat in-plane index and reduced with torch's rule
(the first maximum wins, a NaN beats everything and the last NaN wins); the backward scatters the gradient to the
argmax positions with max pooling's SCATTER Op, so double backward comes with it.
"""
import math
import operator

import numpy as np

from ..._backend import XP
from ..._ops._dispatch import Op, dispatch1, dispatch2
from ..._ops.random import rand
from ..._tensor import Tensor
from ...autograd.grad_mode import GRAD
from ...autograd.graph import FORWARD
from ._args import check_tensor, not_tensor, type_name
from .pooling import _TYPE_NAMES, SCATTER

__all__ = [
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}
# The sample column each spatial dimension draws from: torch's 2-d kernel gives column 0 to the width, its 3-d
# kernel gives the columns in order (time, height, width).
_COLUMN = {2: (1, 0), 3: (0, 1, 2)}
_WORDS = {2: "Ints", 3: "three Ints"}
_FLOATS = ("float16", "bfloat16", "float32", "float64")


# --- window starts ----------------------------------------------------------------------------------------------

# NOTE [ Fractional pooling sequence ]
# Along a dimension of length n pooled to o windows of size k, plane p's windows start at
#     start_i = trunc((i + u_p) * alpha) - trunc(u_p * alpha),  alpha = (n - k) / (o - 1),  for i < o - 1,
# and the last window at n - k. As in torch's CPU kernel the arithmetic runs in the samples' dtype (float32
# rounding for float32 inputs, half rounding for half ones), each operation rounded. Samples outside [0, 1)
# are used as given; a start that would fall outside the input (where torch reads out of bounds) is clamped.

def _trunc(xp, v):
    """C's (int) cast of v as int64; NaN, infinities and values beyond int32 give 0."""
    v = xp.trunc(v.astype(np.float64))
    return xp.where(xp.abs(v) < 2.0 ** 31, v, 0).astype(np.int64)


def _starts(xp, u, n, o, k):
    """(P, o) window starts along one dimension from the samples u (P,)."""
    last = xp.full((u.shape[0], min(o, 1)), n - k, dtype=np.int64)
    if o <= 1:
        return last
    t = u.dtype.type
    alpha = t(n - k) / t(o - 1)
    head = _trunc(xp, (xp.arange(o - 1).astype(u.dtype)[None] + u[:, None]) * alpha) - _trunc(xp, u * alpha)[:, None]
    return xp.concatenate([xp.clip(head, 0, n - k), last], axis=1)


def _windows(xp, u, sp, outs, k):
    """(P, prod(outs)) flat in-plane start of every window, and (prod(k),) the flat offset of each kernel element
    from its window's start, in row-major order (torch's scan order)."""
    nd = len(sp)
    planes = u.shape[0]
    base, delta, stride = 0, np.zeros(k, np.int64), 1
    for d in range(nd - 1, -1, -1):
        shape = [planes] + [1] * nd
        shape[1 + d] = outs[d]
        base = base + _starts(xp, u[:, _COLUMN[nd][d]], sp[d], outs[d], k[d]).reshape(shape) * stride
        shape = [1] * nd
        shape[d] = k[d]
        delta = delta + np.arange(k[d]).reshape(shape) * stride
        stride *= sp[d]
    return base.reshape(planes, math.prod(outs)), delta.reshape(-1)


# --- the op -----------------------------------------------------------------------------------------------------

def _fractional_fwd(x, u, nd, k, outs):
    xp = XP[x.__class__]
    sp = x.shape[-nd:]
    lead = x.shape[:-nd]
    n = lead[0] if len(lead) == 2 else 1  # an unbatched input uses the first row of samples
    planes, size = math.prod(lead), math.prod(sp)
    base, delta = _windows(xp, u[:n].reshape(planes, nd), sp, outs, k)
    delta = delta if x.__class__ is np.ndarray else xp.asarray(delta)
    # w[j]: kernel element j of every window, gathered from the flat input (one row per kernel element, so that
    # the reductions below run over whole rows rather than along a short inner axis)
    at = (base + (xp.arange(planes) * size)[:, None]).reshape(-1)
    w = xp.take(x.reshape(-1), at[None] + delta[:, None])
    best = w.max(0)  # a NaN propagates
    # the first maximum: scanning kernel elements downwards, as max pooling does
    kk = w.shape[0]
    arg = xp.full(best.shape, kk - 1, dtype=np.int8 if kk < 128 else np.int64)
    for j in range(kk - 2, -1, -1):
        arg -= (arg - j) * (w[j] == best)
    if x.__class__ is not np.ndarray or xp.isnan(best).any():
        for j in range(kk):  # torch keeps the last NaN it meets (on a GPU, done whether or not there is one)
            xp.copyto(arg, j, where=xp.isnan(w[j]))
    idx = base.reshape(-1) + delta[arg]
    return best.reshape(lead + outs), idx.reshape(lead + outs)


def _fractional_bwd(ctx, g):
    return dispatch1(SCATTER, g, ctx.extra, ctx.shapes[0][-ctx.attrs[0]:]), None


_FRACTIONAL = {nd: Op(f"fractional_max_pool{nd}d", _fractional_fwd, _fractional_bwd, extra=True,
                      node_name=f"FractionalMaxPool{nd}DBackward0") for nd in (2, 3)}
_FRACTIONAL_NOGRAD = Op("fractional_max_pool", _fractional_fwd, nout=2)


# --- arguments --------------------------------------------------------------------------------------------------

def _is_int(v):
    if isinstance(v, bool):
        return False
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


def _ints(v, nd, arg, position):
    """kernel_size / output_size as nd ints, with torch's errors (a sequence must have exactly nd elements)."""
    name = f"fractional_max_pool{nd}d"
    if not isinstance(v, (tuple, list)):
        if not _is_int(v):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of ints, not "
                            f"{type_name(v)}")
        return (operator.index(v),) * nd
    for i, e in enumerate(v):
        if not _is_int(e):
            if i == 0:
                raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be tuple of ints, but found "
                                f"element of type {type_name(e)} at pos 0")
            raise TypeError(f"{name}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type_name(e)}\"")
    if len(v) != nd:
        raise RuntimeError(f"{name}: {arg} must either be a single Int or tuple of {_WORDS[nd]}")
    return tuple(operator.index(e) for e in v)


def _ratio_size(input, nd, output_ratio):
    """torch's output size for an output_ratio: int(size * ratio) per spatial dimension."""
    ratio = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (output_ratio,) * nd
    if nd == 2 and len(ratio) > 2:
        raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
    return [int(input.size(i - nd) * ratio[i]) for i in range(nd)]


def _check(input, nd, k, outs, samples):
    """torch's checks, in its order: input shape, window fit, output shape, samples."""
    name = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    shape = list(input.shape)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {shape}")
    for i in range(1, input.ndim):  # torch lets the first dimension be empty, batched or not
        if shape[i] == 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, but "
                               f"got{shape} with dimension {i} being empty.")
    for axis, n, ki, o in zip(_AXES[nd], shape[-nd:], k, outs):
        # torch's 3-d check is strict: the windows may not reach the input's last element
        if o + ki - 1 > n or (nd == 3 and o + ki - 1 == n):
            raise RuntimeError(f"{name}: pool {axis} {ki} too large relative to input {axis} {n}")
    if min(outs) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {next(o for o in outs if o < 0)}: "
                           f"{shape[:-nd] + list(outs)}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[0] < (shape[0] if input.ndim == nd + 2 else 1):
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    dt = input._data.dtype.name
    if dt not in _FLOATS:
        tname = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(dt, _TYPE_NAMES.get(dt, dt))
        raise NotImplementedError(f'"fractional_max_pool{nd}d_out_frame" not implemented for \'{tname}\'')


def _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    name = f"fractional_max_pool{nd}d"
    check_tensor(input, name)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        output_size = _ratio_size(input, nd, output_ratio)
    if _random_samples is None:
        if input.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        n = 1 if input.ndim == nd + 1 else input.size(0)
        _random_samples = rand(n, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    elif not isinstance(_random_samples, Tensor):
        raise not_tensor(name, "random_samples", 4, _random_samples)
    k = _ints(kernel_size, nd, "kernel_size", 2)
    outs = _ints(output_size, nd, "output_size", 3)
    if min(k) <= 0:  # torch pools empty windows (-inf) or reads out of bounds here
        raise RuntimeError(f"{name}(): kernel_size must be greater than zero, but got kernel_size={list(k)}")
    if _random_samples._requires_grad and GRAD[0]:
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to argument 'random_samples'. "
                           f"This input cannot have requires_grad True.")
    _check(input, nd, k, outs, _random_samples)
    if input._requires_grad and GRAD[0]:
        out = dispatch2(_FRACTIONAL[nd], input, _random_samples, nd, k, outs)
        return out, Tensor._make(out.grad_fn.extra)
    out, idx = dispatch2(_FRACTIONAL_NOGRAD, input, _random_samples, nd, k, outs)
    if FORWARD[0] is not None:
        FORWARD[0].picked(out, input, idx, nd)
    return out, idx


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Same as `torch.nn.functional.fractional_max_pool2d` (output_ratio may be a number; kernel_size must be > 0)."""
    out, idx = _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, idx) if return_indices else out


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """Same as `torch.nn.functional.fractional_max_pool3d` (kernel_size must be > 0)."""
    out, idx = _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, idx) if return_indices else out


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Same as `torch.nn.functional.fractional_max_pool2d_with_indices` (as fractional_max_pool2d)."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Same as `torch.nn.functional.fractional_max_pool3d_with_indices` (as fractional_max_pool3d)."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)
