"""Dropout: elementwise, channel-wise (feature) and alpha dropout.

Masks come from ember's default generator, so ember.manual_seed makes them reproducible (the numbers differ
from torch's); on the CPU from 16 random bits per element (NOTE [ Dropout masks from 16 bits ] in _ops/random.py). The op is y = x * m + c for a constant array m (mask times scale) and constant c (alpha dropout's
shift), whose backward g * m is the same op again: double backward works.
"""
import warnings

import numpy as np

from ..._backend import XP
from ..._backend.kernels import Kernels
from ..._dtype import FROM_NP, SCALAR_NAMES
from ..._ops._dispatch import Op, dispatch1
from ..._ops._inplace import make_inplace
from ..._ops.random import _engine
from ._args import check_tensor

__all__ = ["alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]

_ALPHA = 1.7580993408473766  # selu's -scale * alpha: the value dropped units take in alpha dropout


def _mul_fwd(x, m):
    return x * m


def _affine_fwd(x, m, c):
    y = x * m
    y += c
    return y


_MASK = Op("mul", _mul_fwd, lambda ctx, g: dispatch1(_MASK, g, ctx.attrs[0]), node_name="MulBackward0")
_AFFINE = Op("add", _affine_fwd, lambda ctx, g: dispatch1(_MASK, g, ctx.attrs[0]), node_name="AddBackward0")


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, shape, p):
    """A float mask of `shape` (broadcastable to input): 1 with probability 1 - p."""
    d = input._data
    dt = d.dtype if d.dtype.kind == "f" else np.dtype(np.float32)
    return _engine(None, input.device).keep(shape, p).astype(dt)


# NOTE [ Dropout on the GPU ]
# There the mask is kept as booleans (a quarter of a float32 mask's memory, as torch keeps it) and y = x * keep *
# scale is one kernel, forward and backward (the same op again, so double backward works). The draws are the
# CPU path's: uniform numbers in x's dtype compared with p.
_DRAWN = (np.dtype(np.float32), np.dtype(np.float64))
_MASKED = Kernels(lambda xp, name, wide: xp.ElementwiseKernel(
    "T x, bool keep, float64 scale", "T y", f"y = keep ? (T)(({wide})x * ({wide})scale) : (T)0",
    f"ember_dropout_{wide}"))


def _masked_fwd(x, keep, scale):
    y = XP[x.__class__].empty(np.broadcast_shapes(x.shape, keep.shape), x.dtype)
    if not (_MASKED.available(x) and _MASKED("apply", x, (x, keep, scale, y))):
        np.multiply(x, keep, out=y)
        y *= scale
    return y


def _draw_fwd(x, shape, p, device):
    """The scaled keep mask of dropout on x: 1 / (1 - p) with probability 1 - p, else 0, in x's dtype."""
    eng = _engine(None, device)
    dt = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    return eng.xp.multiply(eng.keep(shape, p), 1.0 / (1.0 - p), dtype=dt).astype(x.dtype, copy=False)


_DRAW = Op("dropout_mask", _draw_fwd)
_MASK_BOOL = Op("mul", _masked_fwd, lambda ctx, g: dispatch1(_MASK_BOOL, g, *ctx.attrs), node_name="MulBackward0")


def _apply(input, p, shape, alpha):
    """x * mask / (1 - p) (alpha: torch's affine alpha-dropout transform), computed out of place."""
    d = input._data
    if p == 1.0:
        m = (np if d.__class__ is np.ndarray else XP[d.__class__]).zeros((), d.dtype)
        return dispatch1(_MASK, input, m) if not alpha else dispatch1(_AFFINE, input, m, d.dtype.type(0))
    if not alpha:
        if d.dtype in _DRAWN and _MASKED.available(d):  # NOTE [ Dropout on the GPU ]
            return dispatch1(_MASK_BOOL, input, _engine(None, input.device).uniform(shape, d.dtype) >= p,
                             1.0 / (1.0 - p))
        keep = dispatch1(_DRAW, input, shape, p, input.device)._data  # an op: traced and replayed (compile)
        return dispatch1(_MASK, input, keep)
    keep = _keep_mask(input, shape, p)
    a = 1.0 / np.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = ((keep - 1) * (_ALPHA * a) + _ALPHA * a * p).astype(d.dtype, copy=False)
    keep *= a
    return dispatch1(_AFFINE, input, keep.astype(d.dtype, copy=False), shift)


def _run(input, p, training, inplace, shape_of, alpha, name):
    _check_p(p)
    check_tensor(input, name)
    if not training or p == 0.0 or input._data.size == 0:
        return input
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError("result type Float can't be cast to the desired output type " + _int_name(input))
    shape = shape_of(input._data.shape)
    if inplace:
        return _INPLACE(input, _apply, p, shape, alpha)
    return _apply(input, p, shape, alpha)


def _int_name(input):
    return SCALAR_NAMES[FROM_NP[input._data.dtype].name]


def _inplace_runner(self, fn, *args):
    return fn(self, *args)


# fn(self, *args) written into self with torch's in-place autograd rules
_INPLACE = make_inplace(_inplace_runner, "dropout_")


def _same(shape):
    return shape


def _features(shape):
    """The mask shape of feature dropout: one draw per (batch, channel)."""
    return shape[:2] + (1,) * (len(shape) - 2)


def dropout(input, p=0.5, training=True, inplace=False):
    """Same as `torch.nn.functional.dropout`."""
    return _run(input, p, training, inplace, _same, False, "dropout")


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Same as `torch.nn.functional.alpha_dropout`."""
    return _run(input, p, training, inplace, _same, True, "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Same as `torch.nn.functional.feature_alpha_dropout`."""
    if input._data.ndim < 2 and training and p != 0:
        _check_p(p)
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _run(input, p, training, inplace, _features, True, "feature_alpha_dropout")


def _feature_dropout(input, p, training, inplace, batched):
    """Channel-wise dropout; an unbatched input (one dim fewer) is dropped per channel."""
    _check_p(p)
    if batched:
        return _run(input, p, training, inplace, _features, False, "feature_dropout")
    return _run(input, p, training, inplace, lambda s: s[:1] + (1,) * (len(s) - 1), False, "feature_dropout")


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Same as `torch.nn.functional.dropout1d`."""
    _check_p(p)
    nd = input._data.ndim
    if nd not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d "
                           f"exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           f"dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, nd == 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Same as `torch.nn.functional.dropout2d`."""
    _check_p(p)
    nd = input._data.ndim
    if nd not in (3, 4):
        warnings.warn(f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an "
                      f"error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      f"inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    if nd < 2 and training and p != 0:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _feature_dropout(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Same as `torch.nn.functional.dropout3d`."""
    _check_p(p)
    nd = input._data.ndim
    if nd not in (4, 5):
        warnings.warn(f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an "
                      f"error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      f"spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      f"inputs).", stacklevel=2)
    if nd < 2 and training and p != 0:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    return _feature_dropout(input, p, training, inplace, nd == 5)
