"""nn.functional: pad.

Constant padding is its own adjoint up to sign: the gradient of pad(x, p) is pad(g, -p) (negative pads crop), so
one Op serves forward, backward and double backward. Reflect, replicate and circular padding gather each padded
dim through an index array; their backward scatter-adds through the same arrays (a linear pair of Ops).
"""
import numpy as np

from ..._backend import XP
from ..._ops._dispatch import Op, dispatch1
from ..._ops.index import _add_at
from ._args import check_tensor

__all__ = ["pad"]


# ---------------- constant ----------------
def _const_fwd(x, pairs, value):
    """pairs: ((lo, hi), ...) for the trailing dims, in natural dim order."""
    d = len(pairs)
    crop = (Ellipsis,) + tuple(slice(-lo if lo < 0 else 0, n + hi if hi < 0 else n)
                               for (lo, hi), n in zip(pairs, x.shape[x.ndim - d:]))
    x = x[crop]
    widths = ((0, 0),) * (x.ndim - d) + tuple((max(lo, 0), max(hi, 0)) for lo, hi in pairs)
    if not any(lo or hi for lo, hi in widths):
        return x.copy()
    return np.pad(x, widths, constant_values=value)


def _dev(idx, x):
    """Index array idx (host) on x's device."""
    return idx if idx is None or x.__class__ is np.ndarray else XP[x.__class__].asarray(idx)


def _const_bwd(ctx, g):
    return (dispatch1(_CONST, g, tuple((-lo, -hi) for lo, hi in ctx.attrs[0]), 0),)


_CONST = Op("constant_pad_nd", _const_fwd, _const_bwd, node_name="ConstantPadNdBackward0")


# ---------------- reflect / replicate / circular ----------------
def _gather_fwd(x, idxs):
    """idxs: one index array (or None) per trailing dim."""
    d = len(idxs)
    for i, idx in enumerate(idxs):
        if idx is not None:
            x = np.take(x, _dev(idx, x), axis=x.ndim - d + i)
    return x


def _scatter_fwd(g, idxs, sizes):
    d = len(idxs)
    for i, (idx, n) in enumerate(zip(idxs, sizes)):
        if idx is not None:
            ax = g.ndim - d + i
            gm = np.moveaxis(g, ax, -1)
            out = XP[g.__class__].zeros(gm.shape[:-1] + (n,), g.dtype)
            _add_at(out, (Ellipsis, _dev(idx, g)), gm)
            g = np.moveaxis(out, -1, ax)
    return g


def _gather_bwd(ctx, g):
    x_shape = ctx.shapes[0]
    idxs = ctx.attrs[0]
    return (dispatch1(_SCATTER, g, idxs, tuple(x_shape[len(x_shape) - len(idxs):])),)


def _scatter_bwd(ctx, g):
    return (dispatch1(_GATHER, g, ctx.attrs[0]),)


_GATHER = Op("pad_gather", _gather_fwd, _gather_bwd)
_SCATTER = Op("pad_scatter", _scatter_fwd, _scatter_bwd)
_NODE_NAMES = {"reflect": ("ReflectionPad{}DBackward0", "ReflectionPad{}DBackwardBackward0"),
               "replicate": ("ReplicationPad{}DBackward0", "ReplicationPad{}DBackwardBackward0"),
               "circular": ("CircularPad{}DBackward0", "CircularPad{}DBackwardBackward0")}
_OPS = {(mode, d): (Op("pad_gather", _gather_fwd, _gather_bwd, node_name=names[0].format(d)),
                    Op("pad_scatter", _scatter_fwd, _scatter_bwd, node_name=names[1].format(d)))
        for mode, names in _NODE_NAMES.items() for d in (1, 2, 3)}


def _index(n, lo, hi, mode):
    i = np.arange(-lo, n + hi)
    if mode == "replicate":
        return np.clip(i, 0, n - 1)
    if mode == "circular":
        # torch crops negative pads first, then wraps around what is left
        base = np.arange(max(-lo, 0), n - max(-hi, 0))
        return base[np.arange(-max(lo, 0), len(base) + max(hi, 0)) % len(base)]
    i = np.abs(i)  # reflect about 0 and about n-1
    return np.where(i >= n, 2 * (n - 1) - i, i)


def _check_modes(x, p, mode, value):
    nd = len(p) // 2
    if nd > 3 or x.dim() not in (nd + 1, nd + 2):
        raise NotImplementedError(f"Padding size {len(p)} is not supported for {x.dim()}D input tensor.\n"
                                  "Supported combinations for non-constant padding:\n"
                                  "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                                  "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                                  "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    sp = x.shape[x.dim() - nd:]
    if 0 in x.shape[x.dim() - nd - 1:]:
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(x.shape)}")
    pairs = [(p[2 * i], p[2 * i + 1]) for i in range(nd)][::-1]
    for j, ((lo, hi), n) in enumerate(zip(pairs, sp)):
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {x.dim() - nd + j} of input "
                               f"{list(x.shape)}")
        if mode == "circular" and (lo > n or hi > n):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if n + lo + hi <= 0:
            raise RuntimeError(f"input tensor is too small for the requested padding: {list(x.shape)}")
    return pairs


def pad(input, pad, mode="constant", value=None):
    """Same as `torch.nn.functional.pad`."""
    check_tensor(input, "pad")
    p = tuple(int(v) for v in pad)
    if len(p) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(p) // 2 > input.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(p)} and input of dimension {input.dim()}")
    if mode == "constant":
        nd = len(p) // 2
        pairs = tuple((p[2 * i], p[2 * i + 1]) for i in range(nd))[::-1]
        for (lo, hi), n in zip(pairs, input.shape[input.dim() - nd:]):
            if n + lo + hi < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
        return dispatch1(_CONST, input, pairs, 0 if value is None else value)
    if mode not in _NODE_NAMES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = _check_modes(input, p, mode, value)
    sp = input.shape[input.dim() - len(pairs):]
    idxs = tuple(None if lo == hi == 0 else _index(n, lo, hi, mode) for (lo, hi), n in zip(pairs, sp))
    return dispatch1(_OPS[mode, len(pairs)][0], input, idxs)
