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

# NOTE [ Flat grid convolution ]
At stride 1 (the common case) the columns are built on a flat grid instead: the input is copied once, channel
first, into a zero-filled (C, N*prod(G) + shift) buffer whose cells of G >= S + max(lo, hi) (and >= O) elements per
dim are shared by neighbouring images and rows, so that every padding read lands on a zero. Output position q of
the grid reads input q + shift_j for kernel offset j (shift_j = sum_i j_i*dil_i*gridstride_i): each column row is
ONE contiguous slab copy (the im2col above copies rows of output-width length), and a 1x1 kernel needs no copy at
all. The GEMM then runs over all N*prod(G) grid positions and the O-sized cells are cut out of its result, which
wastes (prod(G) - prod(O)) / prod(O) of the flops: 6% at 32x32, 27% at 8x8 with a 3x3 kernel; _use_grid weighs
that against the copies saved (it wins for few channels, where copies dominate, and loses for many).
The adjoints use the same grid: the output gradient, laid on the grid behind a lead of the largest shift, is
convolved with the flipped kernel (the input gradient) and multiplied by the columns (the weight gradient); the
backward of a conv builds it once for both. On the grid, columns are built and multiplied a few MB at a time
(NOTE [ Column chunks ]), so no full column buffer exists; the im2col layout keeps its column buffer in ctx.extra
for the weight gradient when the weight requires grad and the buffer is at most _SAVE_BYTES (recomputing it cost
about a third of the weight gradient; the budget keeps large images from holding K times their input per layer).
Measured (1 thread, min of runs, loaded machine): column build 1.7 -> 1.0 ms on (32,16,32,32) 3x3; forward + backward
of that conv 1.95x -> 1.76x torch's time, (32,64,8,8) 1.6x -> 1.4x. What remains is mostly GEMM time: OpenBLAS
reaches 50-85 GFLOP/s on these shapes (worst with 16 output rows), and torch's whole step costs about what our GEMMs
alone do (oneDNN convolves directly, without a column buffer).
"""
import math
import numbers

import numpy as np

import ember

from ..._autocast import AUTOCAST, cast_args
from ..._backend import XP, jit
from ..._ops._dispatch import SAVE_INPUTS, Op, dispatch, dispatch1, dispatch2
from ...autograd.grad_mode import GRAD
from . import _conv_cudnn

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
def _xp(a):
    """The array module of a (NumPy or CuPy)."""
    return np if a.__class__ is np.ndarray else XP[a.__class__]


def _strided(base, shape, strides, offset=0):
    """A view of contiguous array base with the given shape and byte strides, starting offset elements in."""
    if base.__class__ is np.ndarray:
        return np.ndarray(shape, base.dtype, buffer=base, offset=offset * base.itemsize, strides=strides)
    return XP[base.__class__].lib.stride_tricks.as_strided(base.reshape(-1)[offset:], shape, strides)


def _pad_zero(x, lo, hi):
    """x zero-padded by lo/hi on its trailing len(lo) dims; negative hi crops."""
    if not any(lo) and not any(hi):
        return x
    d = len(lo)
    lead = x.shape[:-d]
    sp = x.shape[-d:]
    shape = lead + tuple(max(n + a + b, 0) for n, a, b in zip(sp, lo, hi))
    out = _xp(x).zeros(shape, x.dtype)
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
        xp = _xp(xp).ascontiguousarray(xp)
    sn, sc, *ss = xp.strides
    shape = (xp.shape[1], *k, xp.shape[0], *osz)
    strides = (sc, *(st * d for st, d in zip(ss, dil)), sn, *(st * s for st, s in zip(ss, stride)))
    return _strided(xp, shape, strides)


def _im2col(x, k, stride, lo, hi, dil, groups):
    """(cols (G, Cin/G*prod(K), N*prod(O)), O) for input x (N, Cin, *S): see NOTE [ im2col layout ]."""
    osz = _out_size(x.shape[2:], k, stride, lo, hi, dil)
    v = _windows(_pad_zero(x, lo, hi), k, osz, stride, dil)
    cols = _xp(x).empty(v.shape, x.dtype)
    np.copyto(cols, v)
    return cols.reshape(groups, x.shape[1] // groups * math.prod(k), x.shape[0] * math.prod(osz)), osz


def _channel_major(g, groups):
    """g (N, C, *O) as a contiguous (G, C/G, N*prod(O)) copy."""
    n, c = g.shape[:2]
    gt = _xp(g).empty((c, n) + g.shape[2:], g.dtype)
    np.copyto(gt, g.swapaxes(0, 1))
    return gt.reshape(groups, c // groups, n * math.prod(g.shape[2:]))


def _batch_major(y, n, b=None):
    """y (C, N*O) back to torch's (N, C, O) layout, adding bias b in the same pass."""
    c = y.shape[0]
    yt = y.reshape(c, n, y.shape[1] // n if n else 0).swapaxes(0, 1)
    out = _xp(y).empty(yt.shape, y.dtype)
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


# ---------------- stride-1 kernels on a flat grid: see NOTE [ Flat grid convolution ] ----------------
def _grid_geom(sp, k, lo, hi, dil):
    """(out size, grid size, grid strides, largest kernel shift) of a stride-1 conv of spatial size sp."""
    osz = tuple(n + a + b - dd * (kk - 1) for n, kk, a, b, dd in zip(sp, k, lo, hi, dil))
    gsz = tuple(max(n + max(a, b, 0), o) for n, a, b, o in zip(sp, lo, hi, osz))
    gst = [1] * len(gsz)
    for i in range(len(gsz) - 2, -1, -1):
        gst[i] = gst[i + 1] * gsz[i + 1]
    smax = sum((kk - 1) * dd * st for kk, dd, st in zip(k, dil, gst))
    return osz, gsz, tuple(gst), smax


def _use_grid(sp, k, stride, lo, hi, dil, cout):
    """Whether a conv runs on the flat grid (stride 1): when the copies it saves outweigh the GEMM work it wastes."""
    if any(s != 1 for s in stride):
        return False
    osz, gsz, _, _ = _grid_geom(sp, k, lo, hi, dil)
    if min(osz) <= 0 or math.prod(gsz) > _GRID_WASTE * math.prod(osz):
        return False
    # the waste costs Cout MACs per wasted position and input element, the saving is a fixed cost per element that
    # grows as rows get short (the im2col copies rows of output width): measured crossover (1 thread) about
    # waste * Cout = 4 at width 32, 6 at 16, 10 at 8 (e.g. 16x16 maps: grid 10% faster at 16 channels, 5% slower
    # at 64)
    return (math.prod(gsz) / math.prod(osz) - 1) * cout <= 2 + 64 / osz[-1]


_GRID_WASTE = 1.6  # the most grid positions per output position


def _to_grid(a, gsz, off, lead, tail):
    """a (N, C, *S) as a zero-filled flat grid (C, lead + N*prod(gsz) + tail), a's cells at offset off."""
    n, c = a.shape[:2]
    size = n * math.prod(gsz)
    buf = _xp(a).zeros((c, lead + size + tail), a.dtype)
    v = buf[:, lead:lead + size].reshape((c, n) + gsz)
    np.copyto(v[(slice(None), slice(None)) + tuple(slice(o, o + m) for o, m in zip(off, a.shape[2:]))],
              a.swapaxes(0, 1))
    return buf


def _from_grid(y, n, gsz, off, sp, b=None):
    """The (N, C, *sp) cells at offset off of flat grid rows y (C, >= N*prod(gsz)), adding bias b."""
    c = y.shape[0]
    v = y[:, :n * math.prod(gsz)].reshape((c, n) + gsz)
    v = v[(slice(None), slice(None)) + tuple(slice(o, o + m) for o, m in zip(off, sp))].swapaxes(0, 1)
    out = _xp(y).empty(v.shape, y.dtype)
    if b is None:
        np.copyto(out, v)
    else:
        np.add(v, b.reshape((-1,) + (1,) * len(sp)), out=out)
    return out


def _grid_view(buf, groups, k, dil, gst, start, n):
    """Columns start..start+n of the column buffer of flat grid buf (C, T), as a (G, C/G, *K, n) view of buf: row
    (c, j) is buf[c, shift_j + start:shift_j + start + n]."""
    c, t = buf.shape
    it = buf.itemsize
    shape = (groups, c // groups) + tuple(k) + (n,)
    strides = (c // groups * t * it, t * it) + tuple(dd * st * it for dd, st in zip(dil, gst)) + (it,)
    return _strided(buf, shape, strides, start)


# NOTE [ Column chunks ]
# A GEMM against the whole column buffer streams it through memory twice (written by the copy, read back by the
# GEMM): 19 MB for a 16-channel 3x3 conv of 32 images of 32x32. Built and multiplied a few MB at a time, each
# chunk is still in cache when the GEMM reads it: the 16-channel conv ran 1.7x faster, wider ones 1.1-1.2x.
_CHUNK_BYTES = 4 << 20


def _chunks(rows, itemsize, size):
    step = max(2048, _CHUNK_BYTES // (rows * itemsize))
    step = 1 << (step.bit_length() - 1)
    return [(s, min(step, size - s)) for s in range(0, size, step)]


def _grid_matmul(wm, buf, groups, k, dil, gst, size):
    """wm (G, M, C/G*K) @ the column buffer of flat grid buf: (G, M, size), built chunk by chunk."""
    rows = wm.shape[2]
    if math.prod(k) == 1:  # the grid rows are the columns
        return _matmul(wm, buf[:, :size].reshape(groups, rows, size))
    out = _xp(wm).empty((groups, wm.shape[1], size), wm.dtype)
    direct = wm.dtype in (np.float32, np.float64)  # BLAS writes straight into the output's columns
    for start, n in _chunks(rows, buf.itemsize, size):
        cols = _xp(buf).empty((groups, buf.shape[0] // groups) + tuple(k) + (n,), buf.dtype)
        np.copyto(cols, _grid_view(buf, groups, k, dil, gst, start, n))
        if direct:
            np.matmul(wm, cols.reshape(groups, rows, n), out=out[:, :, start:start + n])
        else:
            out[:, :, start:start + n] = _matmul(wm, cols.reshape(groups, rows, n))
    return out


def _grid_matmul_t(gm, buf, groups, k, dil, gst, size):
    """gm (G, M, size) @ the column buffer of flat grid buf, transposed: (G, M, C/G*K), summed chunk by chunk."""
    if gm.dtype.kind == "V" or gm.dtype == np.float16:  # summed in float32, rounded once
        f = np.float32
        return _grid_matmul_t(gm.astype(f), buf.astype(f), groups, k, dil, gst, size).astype(gm.dtype)
    rows = buf.shape[0] // groups * math.prod(k)
    if math.prod(k) == 1:
        return _matmul(gm, buf[:, :size].reshape(groups, rows, size).transpose(0, 2, 1))
    # the larger of the two output dims goes first (as in _wgrad_gemm): with rows first, OpenBLAS ran the 16-64
    # channel 3x3 weight gradients of bench/ 1.15-1.8x faster
    rows_first = rows >= gm.shape[1]
    out = _xp(gm).zeros((groups, rows, gm.shape[1]) if rows_first else (groups, gm.shape[1], rows), gm.dtype)
    for start, n in _chunks(rows, buf.itemsize, size):
        cols = _xp(buf).empty((groups, buf.shape[0] // groups) + tuple(k) + (n,), buf.dtype)
        np.copyto(cols, _grid_view(buf, groups, k, dil, gst, start, n))
        cols = cols.reshape(groups, rows, n)
        gc = gm[:, :, start:start + n]
        out += np.matmul(cols, gc.transpose(0, 2, 1)) if rows_first else np.matmul(gc, cols.transpose(0, 2, 1))
    return out.transpose(0, 2, 1) if rows_first else out


def _grad_grid(g, xsp, k, lo, hi, dil):
    """Output gradient g (N, Cout, *O) on the flat grid of input size xsp, led by the largest shift (zeros)."""
    _, gsz, _, smax = _grid_geom(xsp, k, lo, hi, dil)
    return _to_grid(g, gsz, (0,) * len(k), smax, 0)


def _conv_grid(x, w, lo, hi, dil, groups, b):
    """Stride-1 conv on the flat grid: (y, column buffer)."""
    k = w.shape[2:]
    osz, gsz, gst, smax = _grid_geom(x.shape[2:], k, lo, hi, dil)
    size = x.shape[0] * math.prod(gsz)
    cout = w.shape[0]
    y = _grid_matmul(w.reshape(groups, cout // groups, -1), _to_grid(x, gsz, lo, 0, smax), groups, k, dil, gst, size)
    # no column buffer is kept: the weight gradient rebuilds its chunks in cache (NOTE [ Column chunks ])
    return _from_grid(y.reshape(cout, size), x.shape[0], gsz, (0,) * len(k), osz, b), None


def _convt_grid(g, w, lo, hi, dil, groups, xsp, b, gp):
    """Stride-1 adjoint of conv in x on the flat grid: a conv of the output gradient with the flipped kernel."""
    k = w.shape[2:]
    _, gsz, gst, smax = _grid_geom(xsp, k, lo, hi, dil)
    if gp is None:
        gp = _to_grid(g, gsz, (0,) * len(k), smax, 0)
    size = g.shape[0] * math.prod(gsz)
    wf = _flip_kernel(w, groups)
    x = _grid_matmul(wf.reshape(groups, wf.shape[0] // groups, -1), gp, groups, k, dil, gst, size)
    return _from_grid(x.reshape(wf.shape[0], size), g.shape[0], gsz, lo, xsp, b)


def _wgrad_grid(x, g, lo, hi, dil, groups, k, cols, gp):
    """Stride-1 adjoint of conv in w on the flat grid: (G, Cout/G, Lq) @ cols^T."""
    _, gsz, gst, smax = _grid_geom(x.shape[2:], k, lo, hi, dil)
    size = x.shape[0] * math.prod(gsz)
    if gp is None:
        gp = _to_grid(g, gsz, (0,) * len(k), smax, 0)
    cout = g.shape[1]
    gm = gp[:, smax:smax + size].reshape(groups, cout // groups, size)
    if cols is not None:
        return _wgrad_gemm(gm, cols, x.shape[1], k)
    wt = _grid_matmul_t(gm, _to_grid(x, gsz, lo, 0, smax), groups, k, dil, gst, size)
    return wt.reshape((cout, x.shape[1] // groups) + tuple(k))


def _wgrad_gemm(gm, cols, cin, k):
    """(G, Cout/G, L) @ (G, Cin/G*K, L)^T as a (Cout, Cin/G, *K) weight."""
    # one GEMM over L per group. Its long inner dim made OpenBLAS (2 threads, loaded machine) show 5-50x
    # slowdown spikes whenever the output's row count was the smaller of its two dims; put the larger one first
    groups = gm.shape[0]
    shape = (groups * gm.shape[1], cin // groups) + tuple(k)
    if gm.shape[1] >= cols.shape[1]:
        return _matmul(gm, cols.transpose(0, 2, 1)).reshape(shape)
    wt = _matmul(cols, gm.transpose(0, 2, 1))
    return _xp(wt).ascontiguousarray(wt.transpose(0, 2, 1)).reshape(shape)


_SAVE_BYTES = 64 << 20  # the largest column buffer a conv keeps for its weight gradient


def _conv_cols(x, w, stride, lo, hi, dil, groups, b=None):
    """(y, column buffer) of conv(x, w) + b."""
    if _use_grid(x.shape[2:], w.shape[2:], stride, lo, hi, dil, w.shape[0]):
        return _conv_grid(x, w, lo, hi, dil, groups, b)
    cols, osz = _im2col(x, w.shape[2:], stride, lo, hi, dil, groups)
    cout = w.shape[0]
    y = _matmul(w.reshape(groups, cout // groups, cols.shape[1]), cols)  # (G, Cout/G, N*O)
    return _batch_major(y.reshape(cout, y.shape[2]), x.shape[0], b).reshape((x.shape[0], cout) + osz), cols


def _conv_fwd(x, w, stride, lo, hi, dil, groups, save=False, b=None):
    """(y, the column buffer when save and small enough: the weight gradient reuses it, else None)."""
    if _conv_cudnn.usable(x):
        y = _conv_cudnn.forward(x, w, stride, lo, hi, dil)
        if y is not None:
            if b is not None:
                y += b.reshape((-1,) + (1,) * len(lo))
            return y, None
    y, cols = _conv_cols(x, w, stride, lo, hi, dil, groups, b)
    return y, (cols if save and cols is not None and cols.nbytes <= _SAVE_BYTES else None)


def _conv_b_fwd(x, w, b, stride, lo, hi, dil, groups, save=False):
    return _conv_fwd(x, w, stride, lo, hi, dil, groups, save, b)


def _convt_fwd(g, w, stride, lo, hi, dil, groups, xsp, gp=None, b=None):
    """The adjoint of conv in x: g (N, Cout, *O), w (Cout, Cin/G, *K) -> (N, Cin, *xsp); gp: g on the flat grid
    when the caller already built it."""
    if _conv_cudnn.usable(g):
        x = _conv_cudnn.data_grad(g, w, stride, lo, hi, dil, groups, xsp)
        if x is not None:
            if b is not None:
                x += b.reshape((-1,) + (1,) * len(lo))
            return x
    if g.shape[0] and _use_grid(xsp, w.shape[2:], stride, lo, hi, dil, w.shape[0]):
        return _convt_grid(g, w, lo, hi, dil, groups, xsp, b, gp)
    if g.shape[0] and _PHASES and all(dd == 1 for dd in dil) and any(st > 1 for st in stride):
        return _convt_phases(g, w, stride, lo, groups, xsp, b)
    n, cout = g.shape[:2]
    osz = g.shape[2:]
    k = w.shape[2:]
    full = tuple(dd * (kk - 1) - a for dd, kk, a in zip(dil, k, lo))
    if cout <= w.shape[1] * groups and all(st == 1 for st in stride) and min(full) >= 0:
        # stride 1: a full conv of g with the flipped, channel-swapped kernel. Its column buffer holds Cout*K
        # rows against Cin*K for the GEMM + col2im scatter below, so it wins when Cout <= Cin (measured ~1.5x on
        # 64->64 3x3; with Cout >> Cin, e.g. a first layer, the scatter is several times cheaper)
        hi2 = tuple(m - o + a for m, o, a in zip(xsp, osz, lo))
        return _conv_cols(g, _flip_kernel(w, groups), stride, full, hi2, dil, groups, b)[0]
    cin = w.shape[1] * groups
    wm = w.reshape(groups, cout // groups, w[0].size).transpose(0, 2, 1)  # (G, Cin/G*K, Cout/G)
    cols = _matmul(wm, _channel_major(g, groups))  # (G, Cin/G*K, N*O)
    cols = cols.reshape((cin, math.prod(k), n) + osz)
    need = tuple((o - 1) * s + dd * (kk - 1) + 1 for o, s, dd, kk in zip(osz, stride, dil, k))
    buf = _xp(cols).zeros((n, cin) + tuple(max(a + m, e) for a, m, e in zip(lo, xsp, need)), cols.dtype)
    _col2im(cols, buf, k, stride, dil)
    x = buf[(Ellipsis,) + tuple(slice(a, a + m) for a, m in zip(lo, xsp))]
    if b is not None:
        return x + b.reshape((-1,) + (1,) * len(lo))
    return x if x.flags.c_contiguous else _xp(x).ascontiguousarray(x)


def _col2im(cols, buf, k, stride, dil):
    """buf (N, C, *P) += the columns cols (C, prod(K), N, *O) of a convolution, each at its kernel offset."""
    if len(k) == 2 and cols.__class__ is np.ndarray and cols.dtype in jit.DTYPES and jit.enabled():
        from ._jit_kernels import col2im_2d
        col2im_2d(cols, buf, *k, *stride, *dil)
        return
    osz = cols.shape[3:]
    for j, off in enumerate(np.ndindex(*k)):  # one strided add per kernel offset
        sl = (Ellipsis,) + tuple(slice(o * dd, o * dd + (m - 1) * s + 1, s)
                                 for o, dd, m, s in zip(off, dil, osz, stride))
        buf[sl] += cols[:, j].swapaxes(0, 1)


def _convt_phases(g, w, stride, lo, groups, xsp, b):
    """Strided adjoint of conv in x as prod(stride) stride-1 ones: the input positions of one phase (padded position
    r mod stride) receive g through the kernel taps r, r + stride, ... only, a stride-1 transposed conv with that
    sub-kernel. Same GEMM flops as GEMM + col2im, but the strided scatter-adds (2.5x the GEMM's time on a 3x3
    stride-2 conv) become slab copies and one strided write per phase: measured 1.1-1.6x faster on 3x3 stride-2
    shapes. (Stacking the phases as channels of one GEMM, sub-kernels zero-padded, was slower: 16/9 the flops.)"""
    k = w.shape[2:]
    osz = g.shape[2:]
    x = _xp(g).zeros(g.shape[:1] + (w.shape[1] * groups,) + tuple(xsp), g.dtype)
    for r in np.ndindex(*stride):
        kr = tuple((kk - ri + s - 1) // s for kk, ri, s in zip(k, r, stride))  # taps of this phase
        m0 = tuple(max(a - ri + s - 1, 0) // s for a, ri, s in zip(lo, r, stride))  # first phase row inside x
        mr = tuple((a + n - 1 - ri) // s + 1 for a, n, ri, s in zip(lo, xsp, r, stride))  # phase rows needed
        if min(kr) <= 0 or any(m <= a for m, a in zip(mr, m0)):
            continue
        wr = _xp(w).ascontiguousarray(w[(Ellipsis,) + tuple(slice(ri, None, s) for ri, s in zip(r, stride))])
        hi = tuple(o - m + kk - 1 for o, m, kk in zip(osz, mr, kr))
        one = (1,) * len(k)
        xr = _convt_fwd(g, wr, one, (0,) * len(k), hi, one, groups, mr)
        x[(Ellipsis,) + tuple(slice(ri + s * a - lo_, None, s) for ri, s, a, lo_ in zip(r, stride, m0, lo))] = \
            xr[(Ellipsis,) + tuple(slice(a, None) for a in m0)]
    if b is not None:
        x += b.reshape((-1,) + (1,) * len(k))
    return x


_PHASES = True  # strided input gradients by phases (tests compare with col2im)


def _flip_kernel(w, groups):
    """(Cout, Cin/G, *K) -> (Cin, Cout/G, *K) with every spatial dim reversed: the kernel of the adjoint conv."""
    cout, cg = w.shape[:2]
    k = w.shape[2:]
    wt = w.reshape((groups, cout // groups, cg) + k).swapaxes(1, 2)
    wt = wt[(Ellipsis,) + (slice(None, None, -1),) * len(k)]
    return _xp(wt).ascontiguousarray(wt).reshape((groups * cg, cout // groups) + k)


def _convt_b_fwd(g, w, b, stride, lo, hi, dil, groups, xsp):
    return _convt_fwd(g, w, stride, lo, hi, dil, groups, xsp, None, b)


def _wgrad_fwd(x, g, stride, lo, hi, dil, groups, k, cols=None, gp=None):
    """The adjoint of conv in w: x (N, Cin, *S), g (N, Cout, *O) -> (Cout, Cin/G, *K). cols: the forward's column
    buffer of x when it kept one; gp: g on the flat grid when the caller already built it."""
    if _conv_cudnn.usable(x):
        gw = _conv_cudnn.weight_grad(x, g, stride, lo, hi, dil, groups, k)
        if gw is not None:
            return gw
    if x.shape[0] and _use_grid(x.shape[2:], k, stride, lo, hi, dil, g.shape[1]):
        return _wgrad_grid(x, g, lo, hi, dil, groups, k, cols, gp)
    if cols is None:
        cols, _ = _im2col(x, k, stride, lo, hi, dil, groups)  # (G, Cin/G*K, N*O)
    return _wgrad_gemm(_channel_major(g, groups), cols, x.shape[1], k)


# ---------------- backward formulas ----------------
def _conv_bwd(ctx, g):
    x, w = ctx.inputs[0], ctx.inputs[1]
    attrs = ctx.attrs[:5]
    need = ctx.needs_input_grad
    xsp, k = tuple(x.shape[2:]), tuple(w.shape[2:])
    gp = None
    if need[0] and need[1] and x.shape[0] and not _conv_cudnn.usable(g._data) and \
            _use_grid(xsp, k, *attrs[:4], w.shape[0]):
        # built once for both gradients, by an op: ember.compile's capture sees it computed from g
        gp = dispatch1(_GRAD_GRID, g, xsp, k, *attrs[1:4])._data
    gx = dispatch2(_CONVT, g, w, *attrs, xsp, gp) if need[0] else None
    gw = dispatch2(_WGRAD, x, g, *attrs, k, ctx.extra, gp) if need[1] else None
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


_GRAD_GRID = Op("convolution_grad_grid", _grad_grid)
_CONV = Op("convolution", _conv_fwd, _conv_bwd, SAVE_INPUTS, extra=True, node_name="ConvolutionBackward0")
_CONV_B = Op("convolution", _conv_b_fwd, _conv_bwd, SAVE_INPUTS, extra=True, node_name="ConvolutionBackward0")
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


def _check_conv(x, w, b, groups, transposed, bias_first=False):
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
    if bias_first and b is not None and b.dtype != x.dtype:
        # torch's numeric-padding convolution compares the bias first, naming C++ types
        raise RuntimeError(f"Input type ({_cname(x.dtype)}) and bias type ({_cname(b.dtype)}) should be the same")
    if x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
        bad = w.dtype if x.dtype != w.dtype else b.dtype
        raise RuntimeError(f"expected scalar type {_tname(x.dtype)} but found {_tname(bad)}")


def _cname(dt):
    name = str(dt).rpartition(".")[2]
    return {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "int64": "long int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "float32": "float", "float64": "double"}.get(name, name)


def _tname(dt):
    name = str(dt).rpartition(".")[2]
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(name, name)


def _convnd(x, w, b, stride, padding, dilation, groups, d, name):
    if AUTOCAST[0]:
        x, w, b = cast_args(name, (x, w, b))
    x, unb = _batchify(x, d, name)
    _check_conv(x, w, b, groups, False, not isinstance(padding, str))
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
    # keep the column buffer for the weight gradient only when there will be one
    attrs = (stride, lo, hi, dil, groups, w._requires_grad and GRAD[0])
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
    eye = ember.tensor(np.eye(math.prod(k), dtype=x._data.dtype).reshape((math.prod(k), 1) + k), device=x.device)
    w = eye.repeat(c, 1, 1, 1)
    y = dispatch2(_CONV, x, w, stride, pad, pad, dil, c)  # (N, C*K, *O)
    y = y.reshape(n, c * math.prod(k), math.prod(osz))
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
    eye = ember.tensor(np.eye(kk, dtype=x._data.dtype).reshape((kk, 1) + k), device=x.device)
    w = eye.repeat(c, 1, 1, 1)
    y = dispatch2(_CONVT, x.reshape((n, ck) + osz), w, stride, pad, pad, dil, c, size)
    return y.squeeze(0) if unb else y
