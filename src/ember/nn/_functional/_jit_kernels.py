"""Compiled CPU kernels of convolution and pooling (NOTE [ Compiled CPU kernels ] in _backend/jit.py).

Imported only where `jit.enabled()`: importing it imports numba. Each kernel handles float32/float64 planes; the
callers keep their NumPy path for everything else. Times: one core of an AMD EPYC (Zen 4), medians, against the
NumPy path they replace; together they make the MNIST-style CNN training step of bench/ 12% faster (84-86 -> 73-76 ms
on 2 threads, the two paths alternating in one process).
"""
import numpy as np

from ..._backend import jit


@jit.kernel
def col2im_2d(cols, out, kh, kw, sh, sw, dh, dw):
    """out (N, C, H, W), zero-filled, += the columns cols (C, kh*kw, N, OH, OW) of a 2-d convolution: the input
    gradient's scatter-add. One pass per (image, channel) plane instead of one strided NumPy add per kernel offset
    over the whole batch: 11.9 -> 6.8 ms for a 3x3 conv 32 -> 64 channels, 64 images of 26x26."""
    C, N, OH, OW = cols.shape[0], cols.shape[2], cols.shape[3], cols.shape[4]
    for c in range(C):  # cols read in memory order
        for i in range(kh):
            for j in range(kw):
                t = i * kw + j
                w0 = j * dw
                for n in range(N):
                    for oh in range(OH):
                        h = oh * sh + i * dh
                        if sw == 1:  # a contiguous row: vectorized
                            for ow in range(OW):
                                out[n, c, h, ow + w0] += cols[c, t, n, oh, ow]
                        else:
                            for ow in range(OW):
                                out[n, c, h, ow * sw + w0] += cols[c, t, n, oh, ow]


@jit.kernel
def max_pool_2d(x, out, idx, kh, kw, sh, sw, ph, pw, dh, dw):
    """Max pooling of planes x (P, H, W) into out (P, OH, OW), with idx the flat in-plane position of each
    window's maximum: torch's rule (the first maximum, or the last NaN; padding never wins). One pass over each
    window instead of a NumPy pass per kernel offset for the max and another for the argmax. With scatter_planes:
    forward + backward of a 2x2 pool of 64 images x 64 channels of 24x24, 11.6 -> 7.3 ms."""
    P, H, W = x.shape
    OH, OW = out.shape[1], out.shape[2]
    for p in range(P):
        plane = x[p]
        for oh in range(OH):
            h0 = oh * sh - ph
            i0 = 0
            while h0 + i0 * dh < 0:
                i0 += 1
            for ow in range(OW):
                w0 = ow * sw - pw
                j0 = 0
                while w0 + j0 * dw < 0:
                    j0 += 1
                best = -np.inf
                at = (h0 + i0 * dh) * W + w0 + j0 * dw
                for i in range(i0, kh):
                    h = h0 + i * dh
                    if h >= H:
                        break
                    for j in range(j0, kw):
                        w = w0 + j * dw
                        if w >= W:
                            break
                        v = plane[h, w]
                        if v > best or np.isnan(v):
                            best = v
                            at = h * W + w
                out[p, oh, ow] = best
                idx[p, oh, ow] = at


@jit.kernel
def scatter_planes(g, idx, out):
    """out (P, S), zero-filled, += g (P, Q) at in-plane positions idx (P, Q): max pooling's backward, one pass
    instead of np.bincount's float64 sums and the cast back."""
    P, Q = g.shape
    for p in range(P):
        row = out[p]
        for q in range(Q):
            row[idx[p, q]] += g[p, q]
