"""Compiled CPU kernels of batch norm's training statistics and backward (NOTE [ Compiled CPU kernels ] in
_backend/jit.py).

Imported only where `jit.enabled()`. x is seen as (N, C, HW), C-contiguous, float32 or float64. The NumPy path
(NOTE [ Fused normalization ]) takes about four passes for the statistics and xhat and six for the backward; here
the statistics are two reading passes and one writing xhat, the backward one reading pass (the per channel sums)
and one writing the input gradient, xhat recomputed from x as the GPU's row kernels do. Sums are accumulated in
float64 (reassociated, so LLVM vectorizes them), which is at least as accurate as NumPy's float32 einsum. Measured
on one core (min of 30): a 16-channel 32x32 batch of 32, forward 0.35 -> 0.14 ms, backward 0.48 -> 0.20 ms; 64
channels at 8x8, 0.11 -> 0.06 and 0.15 -> 0.09 ms. bench/ nn/batch_norm (forward + backward, ember/torch, 2
threads): 32x16x32x32 1.72 -> 1.10, 32x64x8x8 1.93 -> 1.42 (EMBER_JIT=0 against the kernels).
"""
import numpy as np

from ..._backend import jit

_FASTMATH = {"reassoc", "contract", "nsz"}  # sums may be reordered; NaN and infinities keep their meaning


@jit.kernel(fastmath=_FASTMATH)
def channel_stats(x, eps, mean, var, rstd, xhat):
    """Per channel mean, biased variance and 1/sqrt(var + eps) of x (N, C, HW) into (C,) arrays of x's dtype, and
    xhat = (x - mean) * rstd."""
    n, c, hw = x.shape
    count = max(n * hw, 1)
    for ch in range(c):
        s = 0.0
        for i in range(n):
            row = x[i, ch]
            for j in range(hw):
                s += row[j]
        m = s / count
        v = 0.0
        for i in range(n):
            row = x[i, ch]
            for j in range(hw):
                d = row[j] - m
                v += d * d
        v /= count
        mean[ch] = m
        var[ch] = v
        rstd[ch] = 1.0 / np.sqrt(v + eps)
        mf, rf = mean[ch], rstd[ch]  # in x's dtype, as the backward recomputes xhat
        for i in range(n):
            row, out = x[i, ch], xhat[i, ch]
            for j in range(hw):
                out[j] = (row[j] - mf) * rf


@jit.kernel(fastmath=_FASTMATH)
def channel_backward(g, x, mean, rstd, w, gx, gw, gb):
    """Batch norm's backward with batch statistics: gw = sum(g * xhat), gb = sum(g) per channel (C,), and
    gx = (g - xhat * gw / n - gb / n) * w * rstd (w: ones without a weight)."""
    n, c, hw = g.shape
    count = max(n * hw, 1)
    for ch in range(c):
        mf, rf = mean[ch], rstd[ch]
        sg = 0.0
        sgx = 0.0
        for i in range(n):
            gr, xr = g[i, ch], x[i, ch]
            for j in range(hw):
                gj = gr[j]
                sg += gj
                sgx += gj * ((xr[j] - mf) * rf)
        gw[ch] = sgx
        gb[ch] = sg
        a, b, scale = gw[ch] / count, gb[ch] / count, w[ch] * rf
        for i in range(n):
            gr, xr, out = g[i, ch], x[i, ch], gx[i, ch]
            for j in range(hw):
                out[j] = (gr[j] - ((xr[j] - mf) * rf) * a - b) * scale
