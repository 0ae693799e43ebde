"""nn.functional: convolution, transposed convolution, unfold and fold.

# NOTE [ One N-d convolution in three ops ]
Everything here is built on three linear Ops over N-d spatial inputs (channels first, batch dim present):
  _CONV   y = conv(x, w)          im2col + one matmul per group
  _CONVT  x = convT(g, w)         the adjoint of conv in x: matmul + col2im, or at stride 1 a conv with the
                                  flipped kernel (conv_transpose, grad_input)
  _WGRAD  w = wgrad(x, g)         the adjoint of conv in w (grad_weight)
Each is bilinear, so each backward is made of the other two (and itself): double backward works to any order.
All three share the geometry attrs (stride, pad_lo, pad_hi, dilation, groups): a conv of an input of spatial size
H padded by (lo, hi) has O = (H + lo + hi - dilation*(k-1) - 1) // stride + 1 outputs per dim; hi may be negative
(conv_transpose with output_padding > padding), which crops the input instead.

# NOTE [ im2col layout ]
The column buffer is channel-major, (C, *K, N, *O): each (channel, kernel offset) row copies whole output planes
whose innermost dim reads the input with a fixed stride (a (N, *O, C, *K) layout has inner loops of kernel width).
Folding the batch into the columns makes each op ONE GEMM per group with a long inner dimension,
w (G, Cout/G, Cin/G*K) @ cols (G, Cin/G*K, N*O), instead of N small ones: measured 2-4x faster with 2 BLAS threads
on a loaded machine (each GEMM call synchronizes the BLAS threads). The price is one transpose copy of the output
(N*Cout*O elements, against Cin*K*N*O for the columns), fused with the bias add.
"""
import math
import numbers

import numpy as np

import ember

from ..._autocast import AUTOCAST, cast_args
from ..._ops._dispatch import SAVE_INPUTS, Op, dispatch, dispatch2

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "fold",
    "unfold",
]

# ---------------- array kernels ----------------
def _pad_zero(x, lo, hi):
    """x zero-padded by lo/hi on its trailing len(lo) dims; negative hi crops."""
    if not any(lo) and not any(hi):
        return x
    d = len(lo)
    lead = x.shape[:-d]
    sp = x.shape[-d:]
    shape = lead + tuple(max(n + a + b, 0) for n, a, b in zip(sp, lo, hi))
    out = np.zeros(shape, x.dtype)
    dst = (Ellipsis,) + tuple(slice(a, a + n + min(b, 0)) for n, a, b in zip(sp, lo, hi))
    src = (Ellipsis,) + tuple(slice(0, n + min(b, 0)) for n, b in zip(sp, hi))
    out[dst] = x[src]
    return out


def _out_size(sp, k, stride, lo, hi, dil):
    return tuple((n + a + b - d * (kk - 1) - 1) // s + 1 for n, kk, s, a, b, d in zip(sp, k, stride, lo, hi, dil))


def _windows(xp, k, osz, stride, dil):
    """A (C, *K, N, *O) view of the patches of padded input xp (N, C, *S) (no copy)."""
    # built straight from strides: sliding_window_view + slicing costs ~40 us of Python per call
    if not xp.flags.c_contiguous:
        xp = np.ascontiguousarray(xp)
    sn, sc, *ss = xp.strides
    shape = (xp.shape[1], *k, xp.shape[0], *osz)
    strides = (sc, *(st * d for st, d in zip(ss, dil)), sn, *(st * s for st, s in zip(ss, stride)))
    return np.ndarray(shape, xp.dtype, buffer=xp, strides=strides)


def _im2col(x, k, stride, lo, hi, dil, groups):
    """(cols (G, Cin/G*prod(K), N*prod(O)), O) for input x (N, Cin, *S): see NOTE [ im2col layout ]."""
    osz = _out_size(x.shape[2:], k, stride, lo, hi, dil)
    v = _windows(_pad_zero(x, lo, hi), k, osz, stride, dil)
    cols = np.empty(v.shape, x.dtype)
    np.copyto(cols, v)
    return cols.reshape(groups, x.shape[1] // groups * math.prod(k), x.shape[0] * math.prod(osz)), osz


def _channel_major(g, groups):
    """g (N, C, *O) as a contiguous (G, C/G, N*prod(O)) copy."""
    n, c = g.shape[:2]
    gt = np.empty((c, n) + g.shape[2:], g.dtype)
    np.copyto(gt, g.swapaxes(0, 1))
    return gt.reshape(groups, c // groups, n * math.prod(g.shape[2:]))


def _batch_major(y, n, b=None):
    """y (C, N*O) back to torch's (N, C, O) layout, adding bias b in the same pass."""
    c = y.shape[0]
    yt = y.reshape(c, n, y.shape[1] // n if n else 0).swapaxes(0, 1)
    out = np.empty(yt.shape, y.dtype)
    if b is None:
        np.copyto(out, yt)
    else:
        np.add(yt, b[:, None], out=out)
    return out


def _matmul(a, b):
    """np.matmul keeping the operands' dtype: half-precision products are computed in float32 (BLAS), rounded once."""
    if a.dtype.kind == "V" or a.dtype == np.float16:
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return np.matmul(a, b)


def _conv_fwd(x, w, stride, lo, hi, dil, groups, b=None):
    cols, osz = _im2col(x, w.shape[2:], stride, lo, hi, dil, groups)
    cout = w.shape[0]
    y = _matmul(w.reshape(groups, cout // groups, cols.shape[1]), cols)  # (G, Cout/G, N*O)
    return _batch_major(y.reshape(cout, y.shape[2]), x.shape[0], b).reshape((x.shape[0], cout) + osz)


def _conv_b_fwd(x, w, b, stride, lo, hi, dil, groups):
    return _conv_fwd(x, w, stride, lo, hi, dil, groups, b)


def _convt_fwd(g, w, stride, lo, hi, dil, groups, xsp, b=None):
    """The adjoint of conv in x: g (N, Cout, *O), w (Cout, Cin/G, *K) -> (N, Cin, *xsp)."""
    n, cout = g.shape[:2]
    osz = g.shape[2:]
    k = w.shape[2:]
    full = tuple(dd * (kk - 1) - a for dd, kk, a in zip(dil, k, lo))
    if cout <= w.shape[1] * groups and all(st == 1 for st in stride) and min(full) >= 0:
        # stride 1: a full conv of g with the flipped, channel-swapped kernel. Its column buffer holds Cout*K
        # rows against Cin*K for the GEMM + col2im scatter below, so it wins when Cout <= Cin (measured ~1.5x on
        # 64->64 3x3; with Cout >> Cin, e.g. a first layer, the scatter is several times cheaper)
        hi2 = tuple(m - o + a for m, o, a in zip(xsp, osz, lo))
        return _conv_fwd(g, _flip_kernel(w, groups), stride, full, hi2, dil, groups, b)
    cin = w.shape[1] * groups
    wm = w.reshape(groups, cout // groups, w[0].size).transpose(0, 2, 1)  # (G, Cin/G*K, Cout/G)
    cols = _matmul(wm, _channel_major(g, groups))  # (G, Cin/G*K, N*O)
    cols = cols.reshape((cin, math.prod(k), n) + osz)
    need = tuple((o - 1) * s + dd * (kk - 1) + 1 for o, s, dd, kk in zip(osz, stride, dil, k))
    buf = np.zeros((n, cin) + tuple(max(a + m, e) for a, m, e in zip(lo, xsp, need)), cols.dtype)
    # col2im: one strided add per kernel offset
    for j, off in enumerate(np.ndindex(*k)):
        sl = (Ellipsis,) + tuple(slice(o * dd, o * dd + (m - 1) * s + 1, s)
                                 for o, dd, m, s in zip(off, dil, osz, stride))
        buf[sl] += cols[:, j].swapaxes(0, 1)
    x = buf[(Ellipsis,) + tuple(slice(a, a + m) for a, m in zip(lo, xsp))]
    if b is not None:
        return x + b.reshape((-1,) + (1,) * len(lo))
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


def _flip_kernel(w, groups):
    """(Cout, Cin/G, *K) -> (Cin, Cout/G, *K) with every spatial dim reversed: the kernel of the adjoint conv."""
    cout, cg = w.shape[:2]
    k = w.shape[2:]
    wt = w.reshape((groups, cout // groups, cg) + k).swapaxes(1, 2)
    wt = wt[(Ellipsis,) + (slice(None, None, -1),) * len(k)]
    return np.ascontiguousarray(wt).reshape((groups * cg, cout // groups) + k)


def _convt_b_fwd(g, w, b, stride, lo, hi, dil, groups, xsp):
    return _convt_fwd(g, w, stride, lo, hi, dil, groups, xsp, b)


def _wgrad_fwd(x, g, stride, lo, hi, dil, groups, k):
    """The adjoint of conv in w: x (N, Cin, *S), g (N, Cout, *O) -> (Cout, Cin/G, *K)."""
    cout = g.shape[1]
    cols, _ = _im2col(x, k, stride, lo, hi, dil, groups)  # (G, Cin/G*K, N*O)
    # one GEMM over N*O per group. Its long inner dim made OpenBLAS (2 threads, loaded machine) show 5-50x
    # slowdown spikes whenever the output's row count was the smaller of its two dims; put the larger one first
    gm = _channel_major(g, groups)
    if gm.shape[1] >= cols.shape[1]:
        return _matmul(gm, cols.transpose(0, 2, 1)).reshape((cout, x.shape[1] // groups) + tuple(k))
    wt = _matmul(cols, gm.transpose(0, 2, 1))
    return np.ascontiguousarray(wt.transpose(0, 2, 1)).reshape((cout, x.shape[1] // groups) + tuple(k))


# ---------------- backward formulas ----------------
def _conv_bwd(ctx, g):
    x, w = ctx.inputs[0], ctx.inputs[1]
    attrs = ctx.attrs
    need = ctx.needs_input_grad
    gx = _convt(g, w, attrs, tuple(x.shape[2:])) if need[0] else None
    gw = _wgrad(x, g, attrs, tuple(w.shape[2:])) if need[1] else None
    if len(ctx.inputs) == 2:
        return gx, gw
    gb = g.sum((0,) + tuple(range(2, g.dim()))) if need[2] else None
    return gx, gw, gb


def _convt_bwd(ctx, gx):
    g, w = ctx.inputs[0], ctx.inputs[1]
    attrs = ctx.attrs[:5]
    need = ctx.needs_input_grad
    gg = _conv(gx, w, attrs) if need[0] else None
    gw = _wgrad(gx, g, attrs, tuple(w.shape[2:])) if need[1] else None
    if len(ctx.inputs) == 2:
        return gg, gw
    gb = gx.sum((0,) + tuple(range(2, gx.dim()))) if need[2] else None
    return gg, gw, gb


def _wgrad_bwd(ctx, gw):
    x, g = ctx.inputs
    attrs = ctx.attrs[:5]
    need = ctx.needs_input_grad
    gx = _convt(g, gw, attrs, tuple(x.shape[2:])) if need[0] else None
    gg = _conv(x, gw, attrs) if need[1] else None
    return gx, gg


_CONV = Op("convolution", _conv_fwd, _conv_bwd, SAVE_INPUTS, node_name="ConvolutionBackward0")
_CONV_B = Op("convolution", _conv_b_fwd, _conv_bwd, SAVE_INPUTS, node_name="ConvolutionBackward0")
_CONVT = Op("convolution_transpose", _convt_fwd, _convt_bwd, SAVE_INPUTS, node_name="ConvolutionBackward0")
_CONVT_B = Op("convolution_transpose", _convt_b_fwd, _convt_bwd, SAVE_INPUTS, node_name="ConvolutionBackward0")
_WGRAD = Op("convolution_weight", _wgrad_fwd, _wgrad_bwd, SAVE_INPUTS, node_name="ConvolutionBackwardBackward0")


def _conv(x, w, attrs):
    return dispatch2(_CONV, x, w, *attrs)


def _convt(g, w, attrs, xsp):
    return dispatch2(_CONVT, g, w, *attrs[:5], xsp)


def _wgrad(x, g, attrs, k):
    return dispatch2(_WGRAD, x, g, *attrs[:5], k)


# ---------------- argument parsing ----------------
def _tup(v, d, name):
    if isinstance(v, numbers.Integral):
        return (int(v),) * d
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * d
    if len(v) != d:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {d} values to match the "
                           f"convolution dimensions, but got {name}={list(v)}")
    return v


def _batchify(x, d, name):
    """(input with a batch dim, whether one was added); checks the input rank."""
    nd = x.dim()
    if nd == d + 2:
        return x, False
    if nd == d + 1:
        return x.unsqueeze(0), True
    raise RuntimeError(f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {name}, but got input of "
                       f"size: {list(x.shape)}")


def _check_conv(x, w, b, groups, transposed):
    wshape = list(w.shape)
    if w.dim() != x.dim():
        raise RuntimeError(f"Expected {w.dim()}-dimensional input for {w.dim()}-dimensional weight {wshape}, but "
                           f"got {x.dim()}-dimensional input of size {list(x.shape)} instead")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    c = x.shape[1]
    if not transposed:
        if w.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{wshape}] instead")
        if c != w.shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {wshape}, expected input{list(x.shape)} to "
                               f"have {w.shape[1] * groups} channels, but got {c} channels instead")
        cout = w.shape[0]
    else:
        if c != w.shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {wshape}, expected input{list(x.shape)} to have "
                               f"{w.shape[0]} channels, but got {c} channels instead")
        if w.shape[0] % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
                               f"but got weight of size [{wshape}] instead")
        cout = w.shape[1] * groups
    if b is not None and (b.dim() != 1 or b.shape[0] != cout):
        raise RuntimeError(f"Given weight of size {wshape}, expected bias to be 1-dimensional with {cout} "
                           f"elements, but got bias of size {list(b.shape)} instead")
    if x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
        bad = w.dtype if x.dtype != w.dtype else b.dtype
        raise RuntimeError(f"expected scalar type {_tname(x.dtype)} but found {_tname(bad)}")


def _tname(dt):
    name = str(dt).rpartition(".")[2]
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(name, name)


def _convnd(x, w, b, stride, padding, dilation, groups, d, name):
    if AUTOCAST[0]:
        x, w, b = cast_args(name, (x, w, b))
    x, unb = _batchify(x, d, name)
    _check_conv(x, w, b, groups, False)
    stride = _tup(stride, d, "stride")
    dil = _tup(dilation, d, "dilation")
    k = tuple(w.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * d
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            tot = tuple(dd * (kk - 1) for dd, kk in zip(dil, k))
            lo = tuple(t // 2 for t in tot)
            hi = tuple(t - t // 2 for t in tot)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        lo = hi = _tup(padding, d, "padding")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in lo):
        raise RuntimeError("negative padding is not supported")
    if any(dd <= 0 for dd in dil):
        raise RuntimeError("dilation should be greater than zero")
    sp = tuple(x.shape[2:])
    if any(n + a + b < dd * (kk - 1) + 1 for n, a, b, dd, kk in zip(sp, lo, hi, dil, k)):
        padded = [n + a + b for n, a, b in zip(sp, lo, hi)]
        eff = [dd * (kk - 1) + 1 for dd, kk in zip(dil, k)]
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input "
                           f"size")
    attrs = (stride, lo, hi, dil, groups)
    y = dispatch2(_CONV, x, w, *attrs) if b is None else dispatch(_CONV_B, (x, w, b), *attrs)
    return y.squeeze(0) if unb else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Same as `torch.nn.functional.conv1d`."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Same as `torch.nn.functional.conv2d`."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Same as `torch.nn.functional.conv3d`."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _convtnd(x, w, b, stride, padding, output_padding, groups, dilation, d, name):
    if AUTOCAST[0]:
        x, w, b = cast_args(name, (x, w, b))
    x, unb = _batchify(x, d, name)
    _check_conv(x, w, b, groups, True)
    stride = _tup(stride, d, "stride")
    pad = _tup(padding, d, "padding")
    opad = _tup(output_padding, d, "output_padding")
    dil = _tup(dilation, d, "dilation")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    if any(op >= s and op >= dd for op, s, dd in zip(opad, stride, dil)):
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                           f"output_padding_height: {opad[0]} output_padding_width: {opad[-1]} stride_height: "
                           f"{stride[0]} stride_width: {stride[-1]} dilation_height: {dil[0]} dilation_width: "
                           f"{dil[-1]}")
    k = tuple(w.shape[2:])
    sp = tuple(x.shape[2:])
    xsp = tuple((i - 1) * s - 2 * p + dd * (kk - 1) + op + 1
                for i, s, p, dd, kk, op in zip(sp, stride, pad, dil, k, opad))
    if any(n <= 0 for n in xsp):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sp))}). Calculated output size "
                           f"per channel: ({' x '.join(map(str, xsp))}). Output size is too small")
    hi = tuple(p - op for p, op in zip(pad, opad))
    attrs = (stride, pad, hi, dil, groups, xsp)
    y = dispatch2(_CONVT, x, w, *attrs) if b is None else dispatch(_CONVT_B, (x, w, b), *attrs)
    return y.squeeze(0) if unb else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Same as `torch.nn.functional.conv_transpose1d`."""
    return _convtnd(input, weight, bias, stride, padding, output_padding, groups, dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Same as `torch.nn.functional.conv_transpose2d`."""
    return _convtnd(input, weight, bias, stride, padding, output_padding, groups, dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Same as `torch.nn.functional.conv_transpose3d`."""
    return _convtnd(input, weight, bias, stride, padding, output_padding, groups, dilation, 3, "conv_transpose3d")


# ---------------- unfold / fold ----------------
def _pair(v, name):
    if isinstance(v, numbers.Integral):
        return (int(v),) * 2
    return tuple(int(i) for i in v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Same as `torch.nn.functional.unfold`: (N, C, H, W) -> (N, C*kH*kW, L)."""
    x = input
    if x.dim() not in (3, 4):
        raise RuntimeError(f"Input Error: Only 3D or 4D input Tensors are supported (got {x.dim()}D)")
    unb = x.dim() == 3
    if unb:
        x = x.unsqueeze(0)
    k, dil, pad, stride = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"), _pair(padding, "padding"),
                           _pair(stride, "stride"))
    n, c = x.shape[:2]
    osz = _out_size(tuple(x.shape[2:]), k, stride, pad, pad, dil)
    if any(o <= 0 for o in osz):
        raise RuntimeError(f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size=({k[0]}, "
                           f"{k[1]}), dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), calculated shape "
                           f"of the array of sliding blocks as ({osz[0]}, {osz[1]}), but its components must be at "
                           f"least one.")
    # unfold is a conv with an identity weight per channel: route it through the same Op (and its backward)
    eye = ember.tensor(np.eye(math.prod(k), dtype=x._data.dtype).reshape((math.prod(k), 1) + k))
    w = eye.repeat(c, 1, 1, 1)
    y = dispatch2(_CONV, x, w, stride, pad, pad, dil, c)  # (N, C*K, *O)
    y = y.reshape(n, c * math.prod(k), -1)
    return y.squeeze(0) if unb else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Same as `torch.nn.functional.fold`: (N, C*kH*kW, L) -> (N, C, H, W)."""
    x = input
    if x.dim() not in (2, 3):
        raise RuntimeError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got "
                           f"{x.dim()}D)")
    unb = x.dim() == 2
    if unb:
        x = x.unsqueeze(0)
    size, k, dil, pad, stride = (_pair(output_size, "output_size"), _pair(kernel_size, "kernel_size"),
                                 _pair(dilation, "dilation"), _pair(padding, "padding"), _pair(stride, "stride"))
    n, ck, nl = x.shape
    kk = math.prod(k)
    if ck % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={ck} and kernel_size=({k[0]}, {k[1]}).")
    osz = _out_size(size, k, stride, pad, pad, dil)
    if osz[0] * osz[1] != nl:
        raise RuntimeError(f"Given output_size=({size[0]}, {size[1]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({dil[0]}, {dil[1]}), padding=({pad[0]}, {pad[1]}), stride=({stride[0]}, "
                           f"{stride[1]}), expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {osz[0]} * {osz[1]} = {osz[0] * osz[1]}, but got input.size(2)={nl}.")
    c = ck // kk
    eye = ember.tensor(np.eye(kk, dtype=x._data.dtype).reshape((kk, 1) + k))
    w = eye.repeat(c, 1, 1, 1)
    y = dispatch2(_CONVT, x.reshape((n, ck) + osz), w, stride, pad, pad, dil, c, size)
    return y.squeeze(0) if unb else y
