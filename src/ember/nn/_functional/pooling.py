"""nn.functional: pooling (max, average, adaptive, Lp) and max unpooling.

Kernels work on the last `nd` axes of an array of any leading shape, so batched and unbatched inputs share one
path. Window views come from sliding_window_view; backward passes are their own Ops (max: scatter-add of the
gradient to the argmax positions; average: an even spread), each differentiable again through its partner Op.
"""
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view as _np_windows

from ..._backend import XP, deferred, jit
from ..._ops._dispatch import Op, dispatch1
from ...autograd.grad_mode import GRAD
from ...autograd.graph import FORWARD
from ._args import check_tensor

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d",
    "adaptive_max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


def _dev(a, x):
    """Host constant a (index table, divisor, map) on x's device."""
    if x.__class__ is np.ndarray or a.__class__ is not np.ndarray:
        return a
    return XP[x.__class__].asarray(a)


def sliding_window_view(x, shape, axis):
    if x.__class__ is np.ndarray:
        return _np_windows(x, shape, axis=axis)
    return XP[x.__class__].lib.stride_tricks.sliding_window_view(x, shape, axis=axis)


def _tuple(v, nd, what, name):
    """Expand an int (or 1-tuple) argument to `nd` ints, with torch's error for a wrong length."""
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return (int(v[0]),) * nd
        if len(v) != nd:
            raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of {_WORDS[nd]} ints")
        return tuple(int(e) for e in v)
    return (int(v),) * nd


_WORDS = {1: "one", 2: "two", 3: "three"}


def _check_dims(x, nd, name):
    if x.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    shape = list(x.shape)
    if 0 in shape[x.ndim - nd - 1:]:  # an empty batch is fine, an empty channel or spatial dimension is not
        if nd == 3:
            kernel = "max_pool3d_with_indices_out_cpu_template" if name.startswith("max") else name
            raise RuntimeError(f"{kernel}(): Expected input's non-batch dimensions to have positive length, but "
                               f"input has a shape of {shape} and non-batch dimension "
                               f"{shape[x.ndim - nd:].index(0) if 0 in shape[x.ndim - nd:] else 0} has length zero!")
        if name == "max_pool1d":
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{shape}")
        if nd == 1:  # torch pools 1-d inputs as (N, C, 1, L)
            shape.insert(len(shape) - 1, 1)
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{shape}")


def _out_size(size, k, s, p, d, ceil):
    """Torch's pooling output length, including the ceil_mode rule that the last window starts inside."""
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


def _geometry(x, nd, name, kernel_size, stride, padding, dilation, ceil_mode):
    """Parse and validate pooling arguments once; returns (k, s, p, d, out_sizes)."""
    k = _tuple(kernel_size, nd, "kernel_size", name)
    s = k if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0) else \
        _tuple(stride, nd, "stride", name)
    p = _tuple(padding, nd, "padding", name)
    d = _tuple(dilation, nd, "dilation", name)
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    if min(p) < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {min(p)}" if name == "max_pool1d"
                           else f"pad must be non-negative, but got pad: {min(p)}")
    if min(k) <= 0:
        raise RuntimeError(f"kernel_size must be greater than zero, but got kH: {k[0]} kW: {k[-1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation={d}")
    for ki, pi, di in zip(k, p, d):
        if pi > ((ki - 1) * di + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pi}, "
                               f"kernel_size={ki} and dilation={di}")
    sp = x.shape[-nd:]
    outs = tuple(_out_size(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd))
    if min(outs) < 1:
        planes = x.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (planes,) + tuple(sp)))}). Calculated output "
                           f"size: ({'x'.join(map(str, (planes,) + outs))}). Output size is too small")
    return k, s, p, d, outs


def _pad_widths(x, nd, p, hi):
    return [(0, 0)] * (x.ndim - nd) + [(p[i], hi[i]) for i in range(nd)]


def _window_offsets(sp, outs, k, s, p, d):
    """Flat in-plane input position of each window's origin (shape outs, int64; negative inside padding) and
    the offset of each kernel element from it (shape prod(k))."""
    nd = len(sp)
    base = np.zeros(outs, dtype=np.int64)
    delta = np.zeros(k, dtype=np.int64)
    stride = 1
    for i in range(nd - 1, -1, -1):
        shape = [1] * nd
        shape[i] = outs[i]
        base += (np.arange(outs[i]) * s[i] - p[i]).reshape(shape) * stride
        shape = [1] * nd
        shape[i] = k[i]
        delta += (np.arange(k[i]) * d[i] * stride).reshape(shape)
        stride *= sp[i]
    return base, delta.reshape(-1)


def _pick(windows, positions, lead, outs):
    """Max over the last axis of windows (lead + (P, K)) and the flat plane index of each winner."""
    am = windows.argmax(-1)
    out = np.take_along_axis(windows, am[..., None], -1)[..., 0]
    idx = positions[XP[am.__class__].arange(positions.shape[0]), am]
    return out.reshape(lead + outs), idx.reshape(lead + outs)


# --- scatter / gather by flat in-plane index: the max pooling backward pair ---------------------------------

def _gather_fwd(x, idx, nd):
    lead = x.shape[:-nd]
    flat = x.reshape(lead + (-1,))
    return np.take_along_axis(flat, idx.reshape(lead + (-1,)), -1).reshape(idx.shape)


def _gather_bwd(ctx, g):
    return (dispatch1(SCATTER, g, ctx.attrs[0], ctx.shapes[0][-ctx.attrs[1]:]),)


def _scatter_fwd(g, idx, sp):
    """Sum g into planes of shape sp at flat positions idx (torch's max pool backward)."""
    nd = len(sp)
    lead = g.shape[:-nd]
    planes, size = math.prod(lead), math.prod(sp)
    if g.__class__ is np.ndarray and g.dtype in jit.DTYPES and jit.enabled():
        from ._jit_kernels import scatter_planes
        out = np.zeros((planes, size), g.dtype)
        scatter_planes(g.reshape(planes, -1), idx.reshape(planes, -1), out)
        return out.reshape(lead + tuple(sp))
    where = idx.reshape(planes, -1) + (XP[idx.__class__].arange(planes) * size)[:, None]
    out = np.bincount(where.ravel(), weights=g.reshape(-1), minlength=planes * size)
    return out.astype(g.dtype, copy=False).reshape(lead + tuple(sp))


def _scatter_bwd(ctx, g):
    return (dispatch1(GATHER, g, ctx.attrs[0], len(ctx.attrs[1])),)


GATHER = Op("max_pool_gather", _gather_fwd, _gather_bwd)
SCATTER = Op("max_pool_scatter", _scatter_fwd, _scatter_bwd, node_name="MaxPoolWithIndicesBackwardBackward0")


# --- max pooling ------------------------------------------------------------------------------------------------

def _max_fwd(x, nd, k, s, p, d, outs, offsets):
    sp = x.shape[-nd:]
    if nd == 2 and x.__class__ is np.ndarray and x.dtype in jit.DTYPES and x.size and jit.enabled():
        from ._jit_kernels import max_pool_2d
        planes = x.reshape((-1,) + sp)
        best = np.empty((planes.shape[0],) + outs, x.dtype)
        idx = np.empty(best.shape, np.int64)
        max_pool_2d(planes, best, idx, *k, *s, *p, *d)
        lead = x.shape[:-nd]
        return best.reshape(lead + outs), idx.reshape(lead + outs)
    hi = [max(0, (outs[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 - sp[i] - p[i]) for i in range(nd)]
    if any(p) or any(hi):
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        x = np.pad(x, _pad_widths(x, nd, p, hi), constant_values=low)
    w = sliding_window_view(x, tuple((k[i] - 1) * d[i] + 1 for i in range(nd)), axis=tuple(range(-nd, 0)))
    w = w[(Ellipsis,) + tuple(slice(0, (outs[i] - 1) * s[i] + 1, s[i]) for i in range(nd))
          + tuple(slice(None, None, d[i]) for i in range(nd))]
    # Running max over the kernel elements: a loop over the few kernel offsets, each step one strided slice of
    # the window view. The argmax is found afterwards with branch-free arithmetic (masked writes with a random
    # mask are several times slower): scanning offsets downwards leaves the first maximum, as in torch.
    kernel = [(Ellipsis,) + j for j in np.ndindex(*k)]
    best = w[kernel[0]].copy()
    for j in kernel[1:]:
        np.maximum(best, w[j], out=best)
    n = len(kernel)
    arg = XP[best.__class__].full(best.shape, n - 1, dtype=np.int8 if n < 128 else np.int32)
    for j in range(n - 2, -1, -1):
        arg -= (arg - j) * (w[kernel[j]] == best)
    if any(p) or any(hi):
        # a window whose maximum is the padding value itself (-inf) points at its first real element, as torch's
        # (padding never wins a tie)
        first = _dev(_first_inside(outs, k, s, p, d).astype(arg.dtype), x)
        arg = XP[arg.__class__].where(best == low, first, arg)
    if best.dtype.kind == "f" and (best.__class__ is not np.ndarray or np.isnan(best).any()):
        xp = XP[best.__class__]
        for j in range(n):  # torch keeps the last NaN it meets (on a GPU, done whether or not there is one)
            xp.copyto(arg, j, where=xp.isnan(w[kernel[j]]))
    base, delta = offsets
    return best, _dev(delta, x)[arg] + _dev(base, x)


def _first_inside(outs, k, s, p, d):
    """(outs) the flat kernel offset of each window's first element inside the unpadded input."""
    firsts = [np.minimum(-(-np.maximum(p[i] - np.arange(outs[i]) * s[i], 0) // d[i]), k[i] - 1)
              for i in range(len(outs))]
    return np.ravel_multi_index(np.meshgrid(*firsts, indexing="ij"), k)


def _max_bwd(ctx, g):
    nd = ctx.attrs[0]
    return (dispatch1(SCATTER, g, ctx.extra, ctx.shapes[0][-nd:]),)


_MAX = {nd: Op(f"max_pool{nd}d", _max_fwd, _max_bwd, extra=True, node_name=f"MaxPool{nd}DWithIndicesBackward0")
        for nd in (1, 2, 3)}


def _max_pool(nd, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    name = f"max_pool{nd}d"
    check_tensor(input, name)
    _check_dims(input, nd, name)
    k, s, p, d, outs = _geometry(input, nd, name, kernel_size, stride, padding, dilation, ceil_mode)
    offsets = _window_offsets(input.shape[-nd:], outs, k, s, p, d)
    if input._requires_grad and GRAD[0]:
        out = dispatch1(_MAX[nd], input, nd, k, s, p, d, outs, offsets)
        return (out, _make(out.grad_fn.extra)) if return_indices else out
    out, idx = dispatch1(_MAX_NOGRAD, input, nd, k, s, p, d, outs, offsets)
    if FORWARD[0] is not None:
        FORWARD[0].picked(out, input, idx, nd)
    return (out, idx) if return_indices else out


_MAX_NOGRAD = Op("max_pool_with_indices", _max_fwd, nout=2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Same as `torch.nn.functional.max_pool1d`."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Same as `torch.nn.functional.max_pool2d`."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Same as `torch.nn.functional.max_pool3d`."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """Same as `torch.nn.functional.max_pool1d_with_indices`."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """Same as `torch.nn.functional.max_pool2d_with_indices`."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """Same as `torch.nn.functional.max_pool3d_with_indices`."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, True)


# --- max unpooling ----------------------------------------------------------------------------------------------

def _unpool_fwd(x, idx, sp):
    nd = len(sp)
    lead = x.shape[:-nd]
    out = XP[x.__class__].zeros(lead + (math.prod(sp),), dtype=x.dtype)
    np.put_along_axis(out, idx.reshape(lead + (-1,)), x.reshape(lead + (-1,)), -1)
    return out.reshape(lead + tuple(sp))


def _unpool_bwd(ctx, g):
    return (dispatch1(GATHER, g, ctx.attrs[0], len(ctx.attrs[1])),)


_UNPOOL = {nd: Op(f"max_unpool{nd}d", _unpool_fwd, _unpool_bwd, node_name=f"MaxUnpool{nd}DBackward0")
           for nd in (1, 2, 3)}


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    name = f"max_unpool{nd}d"
    k = _tuple(kernel_size, nd, "kernel_size", name)
    s = k if stride is None else _tuple(stride, nd, "stride", name)
    p = _tuple(padding, nd, "padding", name)
    sp = input.shape[-nd:]
    default = tuple((sp[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(nd))
    if output_size is None:
        out_sp = default
    else:
        out_sp = tuple(int(v) for v in output_size)
        if len(out_sp) == nd + 2 or (len(out_sp) == nd + 1 and input.ndim == nd + 1):
            out_sp = out_sp[-nd:]
        if len(out_sp) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has "
                             f"a length of '{len(out_sp)}'")
        for i in range(nd):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < out_sp[i] < hi:
                raise ValueError(f'invalid output_size "{list(out_sp)}" (dim {i} must be between {lo} and {hi})')
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: {list(indices.shape)}")
    idx = indices._data
    size = math.prod(out_sp)
    if idx.__class__ is not np.ndarray and idx.size:  # reported at the next synchronization, clipped meanwhile
        xp = XP[idx.__class__]
        lo, hi = idx.min(), idx.max()
        deferred.defer(xp, (lo < 0) | (hi >= size), xp.where(hi >= size, hi, lo), RuntimeError,
                       f"Found an invalid max index: {{}} (output volumes are of size {'x'.join(map(str, out_sp))}")
        idx = xp.clip(idx, 0, size - 1)
    elif idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx.max() if idx.max() >= size else idx.min()
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, out_sp))}")
    return dispatch1(_UNPOOL[nd], input, idx, out_sp)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Same as `torch.nn.functional.max_unpool1d`."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Same as `torch.nn.functional.max_unpool2d`."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Same as `torch.nn.functional.max_unpool3d`."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# --- average pooling --------------------------------------------------------------------------------------------
# Geometry G = (nd, k, s, p, hi, outs, sp, divisor): hi is the extra right padding ceil_mode needs, divisor an
# array over output positions (or a number).

def _blocks(G):
    """Whether windows tile the input exactly (stride == kernel, no padding, sizes divisible): a reshape."""
    _, k, s, p, hi, outs, sp, _ = G
    return s == k and not any(p) and not any(hi) and all(o * kk == n for o, kk, n in zip(outs, k, sp))


def _split(outs, k):
    """(o_0, k_0, o_1, k_1, ...): the block shape of tiled windows."""
    return tuple(v for o, kk in zip(outs, k) for v in (o, kk))


def _avg_fwd(x, G):
    nd, k, s, p, hi, outs, _, div = G
    if math.prod(k) > 16 and _blocks(G):
        # large tiled windows (global pooling): one reduction over the window axes beats a loop over offsets
        lead = x.shape[:-nd]
        if all(o == 1 for o in outs):
            flat = x.reshape(lead + (math.prod(x.shape[-nd:]),))
            if x.__class__ is np.ndarray and x.dtype.kind == "f" and flat.flags.c_contiguous:
                # a BLAS matrix-vector product with 1/div: 2.5x faster than sum + divide
                return (flat @ np.full(flat.shape[-1], 1 / div, x.dtype)).reshape(lead + outs)
            out = flat.sum(-1).reshape(lead + outs)
        else:
            out = x.reshape(lead + _split(outs, k)).sum(tuple(range(-2 * nd + 1, 0, 2)))
        return _divide(out, _dev(div, x))
    if any(p) or any(hi):
        x = np.pad(x, _pad_widths(x, nd, p, hi))
    w = sliding_window_view(x, k, axis=tuple(range(-nd, 0)))
    w = w[(Ellipsis,) + tuple(slice(0, (outs[i] - 1) * s[i] + 1, s[i]) for i in range(nd)) + (slice(None),) * nd]
    # Sum kernel element by kernel element: each step adds one strided slice (much faster than a reduction over
    # the window axes of the view, whose strides defeat NumPy's pairwise summation).
    kernel = list(np.ndindex(*k))
    out = w[(Ellipsis,) + kernel[0]].copy()
    for j in kernel[1:]:
        out += w[(Ellipsis,) + j]
    return _divide(out, _dev(div, x))


def _divide(out, div):
    """out / div, in place for floats; int64 (which torch pools too) divides with truncation toward zero."""
    if out.dtype.kind in "fcV":
        out /= div
        return out
    q = out // div
    q += (q * div != out) & (out < 0)
    return q


def _avg_spread(g, G):
    """Transpose of _avg_fwd: each output gradient shared evenly over its window."""
    nd, k, s, p, hi, outs, sp, div = G
    g = g / _dev(div, g)
    lead = g.shape[:-nd]
    xp = XP[g.__class__]
    if _blocks(G):
        # tiled windows: plain copies, no zeroed buffer to add into. Small windows copy g once per kernel offset
        # (3x faster than one broadcast copy, whose inner loop is the kernel width); large ones broadcast
        acc = xp.empty(lead + _split(outs, k), g.dtype)
        if math.prod(k) <= 16:
            for off in np.ndindex(*k):
                acc[(Ellipsis,) + _split((slice(None),) * nd, off)] = g
        else:
            np.copyto(acc, g.reshape(lead + _split(outs, (1,) * nd)))
        return acc.reshape(lead + tuple(sp))
    full = tuple(sp[i] + p[i] + hi[i] for i in range(nd))
    acc = xp.zeros(lead + full, dtype=g.dtype)
    for off in np.ndindex(*k):
        acc[(Ellipsis,) + tuple(slice(off[i], off[i] + (outs[i] - 1) * s[i] + 1, s[i]) for i in range(nd))] += g
    return acc[(Ellipsis,) + tuple(slice(p[i], p[i] + sp[i]) for i in range(nd))]


def _avg_bwd(ctx, g):
    return (dispatch1(_AVG_SPREAD, g, ctx.attrs[0]),)


def _avg_spread_bwd(ctx, g):
    return (dispatch1(_AVG[ctx.attrs[0][0]], g, ctx.attrs[0]),)


_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}
_AVG = {nd: Op(f"avg_pool{nd}d", _avg_fwd, _avg_bwd, node_name=f"AvgPool{nd}DBackward0") for nd in (1, 2, 3)}
_AVG_SPREAD = Op("avg_pool_backward", _avg_spread, _avg_spread_bwd, node_name="AvgPoolBackwardBackward0")


def _divisor(sp, k, s, p, outs, count_include_pad, divisor_override, dtype):
    if divisor_override is not None:
        if divisor_override == 0:
            raise RuntimeError("divisor must be not zero")
        return divisor_override
    nd = len(sp)
    div = np.ones(outs, dtype=dtype)
    for i in range(nd):
        start = np.arange(outs[i]) * s[i] - p[i]
        end = np.minimum(start + k[i], sp[i] + p[i])
        n = end - start if count_include_pad else np.minimum(end, sp[i]) - np.maximum(start, 0)
        shape = [1] * nd
        shape[i] = outs[i]
        div = div * n.reshape(shape)
    return div


def _avg_pool(nd, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    name = f"avg_pool{nd}d"
    check_tensor(input, name)
    _check_dims(input, nd, name)
    dt = input._data.dtype
    if dt.kind not in "fcV" and dt != np.int64:
        kernel = "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d"  # torch pools 1-d inputs in 2-d
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TYPE_NAMES.get(dt.name, dt.name)}\'')
    k, s, p, _d, outs = _geometry(input, nd, name, kernel_size, stride, padding, 1, ceil_mode)
    sp = tuple(input.shape[-nd:])
    hi = tuple(max(0, (outs[i] - 1) * s[i] + k[i] - sp[i] - p[i]) for i in range(nd))
    div = _divisor(sp, k, s, p, outs, count_include_pad, divisor_override, input._data.dtype)
    return dispatch1(_AVG[nd], input, (nd, k, s, p, hi, outs, sp, div))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Same as `torch.nn.functional.avg_pool1d`."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Same as `torch.nn.functional.avg_pool2d`."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Same as `torch.nn.functional.avg_pool3d`."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# --- separable linear maps: adaptive average pooling (and interpolation, in vision.py) --------------------------
# maps: tuple of (axis, M, idx): the axis (negative) is replaced by M @ x along it; idx, when given, says M is a
# row selection (M[r, idx[r]] == 1) and the map is a cheap take.

def _separable_fwd(x, maps):
    for axis, m, idx in maps:
        if idx is not None:
            x = np.take(x, _dev(idx, x), axis=axis)
        elif axis == -1:
            x = x @ _dev(m.T.astype(x.dtype, copy=False), x)
        else:
            x = np.moveaxis(np.moveaxis(x, axis, -1) @ _dev(m.T.astype(x.dtype, copy=False), x), -1, axis)
    return x


def _separable_bwd(ctx, g):
    maps = tuple((axis, m.T, None) for axis, m, _ in reversed(ctx.attrs[0]))
    return (dispatch1(SEPARABLE_T, g, maps),)


def separable_op(node_name):
    """An Op applying per-axis linear maps, with torch's grad_fn name."""
    return Op("separable", _separable_fwd, _separable_bwd, node_name=node_name)


SEPARABLE_T = separable_op("SeparableBackward0")


def _adaptive_bounds(size, out):
    i = np.arange(out)
    return (i * size) // out, -((-(i + 1) * size) // out)


def _adaptive_matrix(size, out):
    start, end = _adaptive_bounds(size, out)
    cols = np.arange(size)
    m = (cols >= start[:, None]) & (cols < end[:, None])
    return m / (end - start)[:, None]


def _adaptive_size(output_size, input, nd, name):
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != nd:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
        sizes = tuple(output_size)
    else:
        sizes = (output_size,) * nd
    outs = tuple(input.shape[-nd + i] if v is None else int(v) for i, v in enumerate(sizes))
    if min(outs) < 0:
        if name.startswith("adaptive_max"):
            lead = list(input.shape[:-nd])
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: {lead + list(outs)}")
        shown = ((1,) + outs) if nd == 1 else outs  # torch's 1-d pooling runs as 2-d
        kernel = "adaptive_avg_pool3d" if nd == 3 else "adaptive_avg_pool2d"
        values = ", ".join(map(str, shown[:2])) + "".join(f",{v}" for v in shown[2:])
        raise RuntimeError(f"{kernel}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{values}}}")
    return outs


def _check_adaptive(input, nd, name, output_size=None):
    if nd > 1 and isinstance(output_size, (tuple, list)) and input.ndim <= len(output_size):
        # torch's Python wrappers of the 2-d and 3-d pools check a sequence output_size first
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                               f"input has sizes {list(input.shape)} with dimension {i} being empty")


_ADAPTIVE_AVG = {nd: separable_op(f"AdaptiveAvgPool{nd}DBackward0") for nd in (1, 2, 3)}
_ADAPTIVE_BLOCK = {nd: Op(f"adaptive_avg_pool{nd}d", _avg_fwd, _avg_bwd, node_name=f"AdaptiveAvgPool{nd}DBackward0")
                   for nd in (1, 2, 3)}


def _adaptive_avg(nd, input, output_size):
    name = f"adaptive_avg_pool{nd}d"
    _check_adaptive(input, nd, name, output_size)
    dt = input._data.dtype
    if dt.kind not in "fcV":
        tname = _TYPE_NAMES.get(dt.name, dt.name)
        if all(o == 1 for o in _adaptive_size(output_size, input, nd, name)):  # torch takes a mean there
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                               f"or complex dtype. Got: {tname}")
        kernel = "adaptive_avg_pool3d_cpu" if nd == 3 else "adaptive_avg_pool2d"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{tname}\'')
    outs = _adaptive_size(output_size, input, nd, name)
    sp = tuple(input.shape[-nd:])
    if all(o and n % o == 0 for n, o in zip(sp, outs)) and input._data.dtype.kind in "fc":
        # equal windows (global pooling included): average pooling with stride == kernel, a reshape and a sum
        k = tuple(n // o for n, o in zip(sp, outs))
        zero = (0,) * nd
        return dispatch1(_ADAPTIVE_BLOCK[nd], input, (nd, k, k, zero, zero, outs, sp, math.prod(k)))
    maps = tuple((i - nd, _adaptive_matrix(sp[i], outs[i]), None) for i in range(nd) if sp[i] != outs[i])
    if not maps:
        maps = ((-1, np.eye(sp[-1]), np.arange(sp[-1])),)
    return dispatch1(_ADAPTIVE_AVG[nd], input, maps)


def adaptive_avg_pool1d(input, output_size):
    """Same as `torch.nn.functional.adaptive_avg_pool1d`."""
    return _adaptive_avg(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Same as `torch.nn.functional.adaptive_avg_pool2d`."""
    return _adaptive_avg(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Same as `torch.nn.functional.adaptive_avg_pool3d`."""
    return _adaptive_avg(3, input, output_size)


# --- adaptive max pooling ---------------------------------------------------------------------------------------

def _adaptive_max_fwd(x, nd, gather, positions, outs):
    w = x[(Ellipsis,) + tuple(_dev(i, x) for i in gather)]
    positions = _dev(positions, x)
    lead = w.shape[:-2 * nd]
    return _pick(w.reshape(lead + (positions.shape[0], positions.shape[1])), positions, lead, outs)


def _adaptive_max_bwd(ctx, g):
    return (dispatch1(SCATTER, g, ctx.extra, ctx.shapes[0][-ctx.attrs[0]:]),)


_ADAPTIVE_MAX = {nd: Op(f"adaptive_max_pool{nd}d", _adaptive_max_fwd, _adaptive_max_bwd, extra=True,
                        node_name=f"AdaptiveMaxPool{nd}DBackward0") for nd in (1, 2, 3)}
_ADAPTIVE_MAX_NOGRAD = Op("adaptive_max_pool", _adaptive_max_fwd, nout=2)


def _adaptive_windows(sp, outs):
    """Index arrays selecting every adaptive window (short windows repeat their last element, harmless for max)
    laid out as (o_0..o_n, j_0..j_n), and the flat plane position table (prod(outs), prod(lengths))."""
    nd = len(sp)
    gather, lengths = [], []
    flat = 0
    stride = math.prod(sp)
    for i in range(nd):
        start, end = _adaptive_bounds(sp[i], outs[i])
        n = int((end - start).max())
        ix = np.minimum(start[:, None] + np.arange(n), end[:, None] - 1)
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = outs[i], n
        ix = ix.reshape(shape)
        gather.append(ix)
        stride //= sp[i]
        flat = flat + ix * stride
        lengths.append(n)
    return tuple(gather), np.broadcast_to(flat, outs + tuple(lengths)).reshape(math.prod(outs), -1)


def _adaptive_max(nd, input, output_size, return_indices):
    name = f"adaptive_max_pool{nd}d"
    _check_adaptive(input, nd, name, output_size)
    outs = _adaptive_size(output_size, input, nd, name)
    gather, positions = _adaptive_windows(input.shape[-nd:], outs)
    if input._requires_grad and GRAD[0]:
        out = dispatch1(_ADAPTIVE_MAX[nd], input, nd, gather, positions, outs)
        return (out, _make(out.grad_fn.extra)) if return_indices else out
    out, idx = dispatch1(_ADAPTIVE_MAX_NOGRAD, input, nd, gather, positions, outs)
    if FORWARD[0] is not None:
        FORWARD[0].picked(out, input, idx, nd)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Same as `torch.nn.functional.adaptive_max_pool1d`."""
    return _adaptive_max(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Same as `torch.nn.functional.adaptive_max_pool2d`."""
    return _adaptive_max(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Same as `torch.nn.functional.adaptive_max_pool3d`."""
    return _adaptive_max(3, input, output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Same as `torch.nn.functional.adaptive_max_pool1d_with_indices`."""
    return _adaptive_max(1, input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Same as `torch.nn.functional.adaptive_max_pool2d_with_indices`."""
    return _adaptive_max(2, input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Same as `torch.nn.functional.adaptive_max_pool3d_with_indices`."""
    return _adaptive_max(3, input, output_size, True)


# --- Lp pooling: torch's composite ------------------------------------------------------------------------------

def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    import ember
    k = _tuple(kernel_size, nd, "kernel_size", f"lp_pool{nd}d")
    out = _avg_pool(nd, input.pow(norm_type), kernel_size, stride, 0, ceil_mode, True, None)
    out = ember.sign(out) * ember.relu(ember.abs(out))
    return out.mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Same as `torch.nn.functional.lp_pool1d`."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Same as `torch.nn.functional.lp_pool2d`."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Same as `torch.nn.functional.lp_pool3d`."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


def _make(arr):
    from ..._tensor import Tensor
    return Tensor._make(arr)
