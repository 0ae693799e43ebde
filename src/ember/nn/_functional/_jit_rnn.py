"""Compiled CPU kernels of the LSTM's per-step gate math (NOTE [ Compiled CPU kernels ] in _backend/jit.py).

Imported only where `jit.enabled()`. The NumPy loop of rnn.py (NOTE [ Fused RNN kernels ]) spends about 17 ufunc
calls per forward step and 6 per backward step on (batch, hidden) blocks; here each step is one pass. float32
only: the gates use `tanh32`, a rational approximation accurate to float32 (at most 6 ulp from the exact tanh, NaN
kept, exactly +-1 beyond |x| > 9), which LLVM vectorizes, where numba's `np.exp`/`np.tanh` are scalar calls, 3x
slower than NumPy's SIMD loops (float64 keeps the NumPy path). Measured on one core (batch 32, hidden 256, min of
500): a forward step's gate math 61 -> 22 us, a backward step's 20 -> 17.5 us; the 2-layer LSTM training step of
bench/ 4.5-6% faster (A/B in one process, 2 threads). First compile about 1.3 s, then numba's disk cache.

The weights arrive in rnn.py's layout: rows (o, i, f, g), sigmoid rows negated and g rows scaled by -2, so each
gate's pre-activation z gives sigmoid(a) = 1/2 - tanh(z/2)/2 and tanh(a_g) = -tanh(z/2). The kernels store what
the NumPy path stores (the gate values in G, the cell states, tanh of them, the outputs), so either backward
serves either forward.
"""
import numpy as np

from ..._backend import jit

# tanh(x) ~ x P(x^2) / Q(x^2) on |x| <= 9 (beyond, tanh(x) rounds to +-1 in float32): a weighted least-squares fit
# of the relative error, iterated towards minimax; checked against float64 tanh in tests/nn/test_jit_kernels.py
_P = [np.float32(c) for c in (9.99999976e-01, 1.33806484e-01, 3.49515675e-03, 2.06027005e-05, 1.33472602e-08)]
_Q = [np.float32(c) for c in (4.67139633e-01, 2.58752975e-02, 3.28495964e-04, 7.77321930e-07)]
_P0, _P1, _P2, _P3, _P4 = _P
_Q1, _Q2, _Q3, _Q4 = _Q
_ONE, _HALF, _CLAMP = np.float32(1.0), np.float32(0.5), np.float32(9.0)

_FASTMATH = {"contract"}  # fused multiply-adds only: no assumption about NaNs or infinities


@jit.kernel_inline(fastmath=_FASTMATH)
def tanh32(x):
    s = x * x
    r = x * (_P0 + s * (_P1 + s * (_P2 + s * (_P3 + s * _P4)))) / (_ONE + s * (_Q1 + s * (_Q2 + s * (_Q3 + s * _Q4))))
    # selects, not min/max: a NaN fails both comparisons and stays NaN
    r = _ONE if x > _CLAMP else r
    return -_ONE if x < -_CLAMP else r


@jit.kernel(fastmath=_FASTMATH)
def _forward_row(zo, zi, zf, zg, to, ti, tf, tg, bo, bi, bf, bg, cp, c, tc, y):
    # one row of gates, each argument a contiguous (H,) vector: LLVM vectorizes the loop over them
    for j in range(zo.shape[0]):
        o = _HALF - _HALF * tanh32(_HALF * (zo[j] + to[j] + bo[j]))
        i = _HALF - _HALF * tanh32(_HALF * (zi[j] + ti[j] + bi[j]))
        f = _HALF - _HALF * tanh32(_HALF * (zf[j] + tf[j] + bf[j]))
        g = -tanh32(_HALF * (zg[j] + tg[j] + bg[j]))
        zo[j], zi[j], zf[j], zg[j] = o, i, f, g
        cj = f * cp[j] + i * g
        t = tanh32(cj)
        c[j], tc[j], y[j] = cj, t, o * t


@jit.kernel(fastmath=_FASTMATH)
def lstm_forward_step(g, t, b, cp, c, tc, y):
    """One step, rows (n, 4H) of the input projections g (replaced by the gate values), the recurrent product t,
    the bias b (4H,), the entering cell state cp (n, H): writes the cell state c, tanh(c) tc and the output y."""
    h = c.shape[1]
    for r in range(g.shape[0]):
        gr, tr = g[r], t[r]
        _forward_row(gr[:h], gr[h:2 * h], gr[2 * h:3 * h], gr[3 * h:], tr[:h], tr[h:2 * h], tr[2 * h:3 * h],
                     tr[3 * h:], b[:h], b[h:2 * h], b[2 * h:3 * h], b[3 * h:], cp[r], c[r], tc[r], y[r])


@jit.kernel(fastmath=_FASTMATH)
def _backward_row(dh, gy, k, f0, f1, f2, f3, fg, dc, z0, z1, z2, z3):
    for j in range(dh.shape[0]):
        d = dh[j] + gy[j]
        cj = dc[j] + d * k[j]
        z0[j] = f0[j] * d
        z1[j] = f1[j] * cj
        z2[j] = f2[j] * cj
        z3[j] = f3[j] * cj
        dc[j] = cj * fg[j]


@jit.kernel(fastmath=_FASTMATH)
def lstm_backward_step(dh, gy, k, fac, fgate, dc, dz):
    """One backward step over n rows: dh (n, H) the output gradient carried back (gy (n, H) added: zeros where
    the step has none), k (n, H) dc/dh, fac (n, 4, H) the gate factors, fgate (n, H) the forget gate; updates dc
    (n, H) in place and writes the pre-activation gradients dz (n, 4H)."""
    h = dh.shape[1]
    for r in range(dh.shape[0]):
        fr, zr = fac[r], dz[r]
        _backward_row(dh[r], gy[r], k[r], fr[0], fr[1], fr[2], fr[3], fgate[r], dc[r], zr[:h], zr[h:2 * h],
                      zr[2 * h:3 * h], zr[3 * h:])
