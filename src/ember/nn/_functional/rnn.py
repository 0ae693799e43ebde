"""Fused recurrent kernels: one op per layer and direction of nn.RNN / nn.LSTM / nn.GRU (private).

NOTE [ Fused RNN kernels ]
Composing a recurrent layer from per-timestep ember ops costs dozens of Python-level ops per step, so each
layer-direction is one op whose forward and backward are NumPy loops over time:
- forward: one GEMM projects the inputs of all timesteps at once (N x I @ I x G); each step adds one GEMM
  h @ W_hh^T and does the gate math in place with `out=` ufuncs on preallocated buffers.
- backward: a loop backward over time that only carries dh (and dc); every per-step gate derivative factor is
  computed for all timesteps at once before the loop, so one step is a handful of ufuncs and one GEMM. dW_ih,
  dW_hh, the biases and dx are one big GEMM (or sum) each over all timesteps after the loop.
Sequences are always in the packed layout: rows of timestep t are [off_t, off_t + batch_sizes[t]) of an (N, .)
array, sorted by decreasing length, so step t updates only the first batch_sizes[t] rows of the state and a
finished sequence keeps its state (h_n holds each sequence's last valid step, as in torch). A padded (T, B, I)
input is the special case batch_sizes = (B,) * T. The reverse direction walks the steps backwards; a sequence
then starts (from h0) at its own last step.
Gate layout inside the kernels: the sigmoid gates come first and their weight rows are negated, so that
sigmoid(a) = 1 / (1 + exp(z)) with z = -a costs three ufuncs on one contiguous block. LSTM rows are reordered
from torch's (i, f, g, o) to (o, i, f, g): the three gates whose gradient scales with dc are contiguous, and the
g rows are scaled by -2 so that one exp block serves all four gates (tanh(a) = 2 sigmoid(2a) - 1, two cheap
ufuncs instead of a tanh, which NumPy does not vectorize as well as exp). Weight gradients are mapped back to
torch's layout at the end (the chain rule through the scaling). On a GPU, where each ufunc is a kernel launch, an
LSTM step's gate math is one kernel instead (_lstm_cuda.py).

NOTE [ RNN double backward ]
The backward is NumPy, so it is not itself differentiable. As with torch's cuDNN RNNs, a first backward with
create_graph=True works (its gradients carry a graph node) and differentiating those gradients again raises
a RuntimeError. The cells (nn.RNNCell, nn.LSTMCell, nn.GRUCell) are composed of ember ops instead and support
higher-order gradients.
"""
import threading

import numpy as np

from ..._backend import XP, jit
from ..._ops._dispatch import SAVE_BOTH, Op, dispatch, wrap
from ...autograd.grad_mode import GRAD
from . import _lstm_cuda

__all__ = []


# ----- step schedules -----

class _Plan:
    """The step schedule of one (batch_sizes, reverse) pair: row ranges in processing order, and for the
    forward direction the ranges that hold each sequence's last state."""
    __slots__ = ("batch", "finals", "reverse", "steps", "uniform")

    def __init__(self, batch_sizes, reverse):
        starts = np.concatenate(([0], np.cumsum(batch_sizes)[:-1])).tolist()
        steps = [(a, a + n) for a, n in zip(starts, batch_sizes)]
        finals = []
        for t, (a, n) in enumerate(zip(starts, batch_sizes)):
            lo = batch_sizes[t + 1] if t + 1 < len(batch_sizes) else 0
            if n > lo:
                finals.append((lo, n, a + lo))
        self.steps = steps[::-1] if reverse else steps
        self.finals = finals
        self.batch = batch_sizes[0]
        self.reverse = reverse
        self.uniform = min(batch_sizes) == batch_sizes[0]


_PLANS = {}


def _plan(batch_sizes, reverse):
    key = (batch_sizes, reverse)
    p = _PLANS.get(key)
    if p is None:
        if len(_PLANS) > 256:
            _PLANS.clear()
        p = _PLANS[key] = _Plan(batch_sizes, reverse)
    return p


def _prev(Y, h0, prev, n):
    """The state entering a step of n rows: the previous step's rows, topped up from h0 for sequences that
    start here (reverse direction of a packed batch)."""
    if prev is None:
        return h0[:n]
    a, m = prev
    if n <= m:
        return Y[a:a + n]
    buf = _xp().empty((n,) + Y.shape[1:], Y.dtype)
    buf[:m] = Y[a:a + m]
    buf[m:] = h0[m:n]
    return buf


def _final(Y, plan):
    """Each sequence's state after its last step."""
    if plan.reverse:
        return Y[:plan.batch].copy()
    out = _xp().empty((plan.batch,) + Y.shape[1:], Y.dtype)
    for lo, hi, a in plan.finals:
        out[lo:hi] = Y[a:a + hi - lo]
    return out


def _entering(hps, Y, h0, plan):
    """What the backward needs of the per-step entering states: for a full batch, (row offset, array) pieces
    in data order without a copy (h0 and one view of the outputs); otherwise the list of per-step states."""
    if not plan.uniform:
        return hps
    N, B = Y.shape[0], plan.batch
    return ((0, Y[B:]), (N - B, h0)) if plan.reverse else ((0, h0), (B, Y[:N - B]))


def _pieces(entering, plan):
    """_entering's result as (pieces, pooled stack to return or None)."""
    if plan.uniform:
        return entering, None
    hps = entering[::-1] if plan.reverse else entering
    out = _get((sum(len(h) for h in hps),) + hps[0].shape[1:], hps[0].dtype)
    np.concatenate(hps, out=out)
    return ((0, out),), out


# ----- scratch buffers (NOTE [ RNN buffer pool ]) -----
# NOTE [ RNN buffer pool ]
# A training step allocates tens of MB of (N, gates) work arrays per layer. Fresh large arrays come from mmap
# and pay a page fault per 4 KiB on first touch (measured: ~5 ms for 8 MB against ~0.5 ms to refill a reused
# one). Work arrays the kernels own outright are therefore taken from and returned to a small pool: backward
# temporaries when the backward ends, the forward's saved arrays when the graph node drops them (_Saved.__del__).
# Arrays that reach the user (outputs, gradients) never come from the pool.

_POOL = {}
_LOCAL = threading.local()
_POOL_BYTES = [0]
_POOL_CAP = 1 << 28
_POOL_PER_KEY = 4


def _get(shape, dt):
    xp = _xp()
    if xp is not np:  # device arrays come from CuPy's own pool
        return xp.empty(shape, dt)
    lst = _POOL.get((shape, dt))
    if lst:
        try:
            a = lst.pop()
        except IndexError:   # another thread took it
            return np.empty(shape, dt)
        _POOL_BYTES[0] -= a.nbytes
        return a
    return np.empty(shape, dt)


def _put(*arrays):
    for a in arrays:
        if a is None or a.__class__ is not np.ndarray or _POOL_BYTES[0] + a.nbytes > _POOL_CAP:
            continue
        lst = _POOL.setdefault((a.shape, a.dtype), [])
        if len(lst) < _POOL_PER_KEY:
            lst.append(a)
            _POOL_BYTES[0] += a.nbytes


class _Saved:
    """What a forward keeps for its backward; `own` are pool arrays returned when the graph drops this."""
    __slots__ = ("own", "vals")

    def __init__(self, vals, own):
        self.vals = vals
        self.own = own

    def __del__(self, _put=_put):   # bound now: module globals may be gone at interpreter exit
        own, self.own = self.own, ()
        self.vals = None
        _put(*own)


def _sigmoid_(s):
    # s holds z = -a: sigmoid(a) = 1 / (1 + exp(z))
    np.exp(s, out=s)
    np.add(s, 1, out=s)
    np.divide(1, s, out=s)   # faster than np.reciprocal for float32


def _tanh(x, out):
    # tanh(x) = 2 / (1 + exp(-2x)) - 1: NumPy's float32 exp is about twice as fast as its tanh
    np.multiply(x, -2, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    np.divide(2, out, out=out)
    np.subtract(out, 1, out=out)


# ----- weight layouts (NOTE [ Fused RNN kernels ]) -----

def _lstm_in(w, H):
    """torch's (i, f, g, o) rows -> (o, i, f, g); sigmoid rows scaled by -1, g rows by -2."""
    out = _get(w.shape, w.dtype)
    np.negative(w[3 * H:], out=out[:H])
    np.negative(w[:2 * H], out=out[H:3 * H])
    np.multiply(w[2 * H:3 * H], -2, out=out[3 * H:])
    return out


def _lstm_out(g, H):
    """Gradients w.r.t. _lstm_in's weights -> gradients w.r.t. torch's (chain rule through the scaling)."""
    out = np.empty_like(g)   # a gradient the user receives: never pooled
    np.negative(g[H:3 * H], out=out[:2 * H])
    np.multiply(g[3 * H:], -2, out=out[2 * H:3 * H])
    np.negative(g[:H], out=out[3 * H:])
    return out


def _gru_in(w, H, out=None):
    """torch's (r, z, n) rows with r and z negated (also the inverse, for gradients)."""
    out = _get(w.shape, w.dtype) if out is None else out
    np.negative(w[:2 * H], out=out[:2 * H])
    out[2 * H:] = w[2 * H:]
    return out


def _transposed(w):
    """A pooled C-contiguous copy of w.T: per-step GEMMs with few rows run faster on a contiguous operand."""
    out = _get(w.shape[::-1], w.dtype)
    np.copyto(out, w.T)
    return out


def _wgrad(dZ, pieces, fix, H):
    """dZ^T @ X (X given as (row offset, rows) pieces), mapped to torch's layout by `fix` (None: as is)."""
    shape, dt = (dZ.shape[1], pieces[0][1].shape[1]), dZ.dtype
    t = _get(shape, dt)
    u = _get(shape, dt) if len(pieces) > 1 else None
    for k, (off, p) in enumerate(pieces):
        np.matmul(dZ[off:off + len(p)].T, p, out=u if k else t)
        if k:
            t += u
    if fix is None:
        g = t.copy()
    else:
        g = fix(t, H, np.empty_like(t)) if fix is _gru_in else fix(t, H)
    _put(t, u)
    return g


# ----- LSTM -----

def _compiled(a, HR):
    """Whether an LSTM's steps run the compiled gate kernels (_jit_rnn.py): float32 CPU arrays, no projection."""
    return HR is None and a.__class__ is np.ndarray and a.dtype == np.float32 and jit.enabled()


def _lstm_forward(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, plan):
    H = w_hh.shape[0] // 4
    wi, wh = _lstm_in(w_ih, H), _lstm_in(w_hh, H)
    whT = _transposed(wh)
    N, dt = x.shape[0], x.dtype
    G = np.matmul(x, wi.T, out=_get((N, 4 * H), dt))
    # the bias is added per step, to the small recurrent product, rather than in a pass over all of G
    # (measured: the pass over the out-of-cache G costs more than the per-step adds)
    b = _lstm_in(b_ih + b_hh, H) if b_ih is not None else None
    B, P = h0.shape
    Y = _xp().empty((N, P), dt)
    C = _get((N, H), dt)
    TC = _get((N, H), dt)
    HR = _get((N, H), dt) if w_hr is not None else None
    tmp = _xp().empty((B, 4 * H), dt)
    tmph = _xp().empty((B, H), dt)
    hps, cps = [], []
    prev = None
    # ufuncs bound to locals: 64 steps x ~20 calls make the global + attribute lookups measurable
    matmul, add, mul, sub, div, exp = np.matmul, np.add, np.multiply, np.subtract, np.divide, np.exp
    H2, H3 = 2 * H, 3 * H
    wrT = w_hr.T if HR is not None else None
    fused = HR is None and x.__class__ is not np.ndarray and _lstm_cuda.available(x)
    step = None
    if _compiled(x, HR):
        from ._jit_rnn import lstm_forward_step as step
        bz = b if b is not None else np.zeros(4 * H, dt)
    with np.errstate(over="ignore"):
        for a, e in plan.steps:
            n = e - a
            hp, cp = _prev(Y, h0, prev, n), _prev(C, c0, prev, n)
            g = G[a:e]
            t = tmp[:n]
            matmul(hp, whT, out=t)
            if step is not None:  # the compiled CPU kernel (never together with the GPU's: fused is False)
                step(g, t, bz, cp, C[a:e], TC[a:e], Y[a:e])
            if step is not None or fused and _lstm_cuda.forward_step(g, t, b, cp, C[a:e], TC[a:e], Y[a:e], H):
                hps.append(hp)
                cps.append(cp)
                prev = (a, n)
                continue
            if b is not None:
                add(t, b, out=t)
            add(g, t, out=g)
            exp(g, out=g)               # sigmoid of the negated rows, see _sigmoid_
            add(g, 1, out=g)
            div(1, g, out=g)
            gg = g[:, H3:]
            mul(gg, 2, out=gg)
            sub(gg, 1, out=gg)
            c = C[a:e]
            mul(g[:, H2:H3], cp, out=c)
            u = tmph[:n]
            mul(g[:, H:H2], gg, out=u)
            add(c, u, out=c)
            tc = TC[a:e]
            mul(c, -2, out=tc)          # tanh(c) = 2 / (1 + exp(-2c)) - 1, see _tanh
            exp(tc, out=tc)
            add(tc, 1, out=tc)
            div(2, tc, out=tc)
            sub(tc, 1, out=tc)
            if HR is None:
                mul(g[:, :H], tc, out=Y[a:e])
            else:
                mul(g[:, :H], tc, out=HR[a:e])
                matmul(HR[a:e], wrT, out=Y[a:e])
            hps.append(hp)
            cps.append(cp)
            prev = (a, n)
    _put(whT, b)
    saved = _Saved((x, wi, wh, w_hr, G, TC, HR, _entering(hps, Y, h0, plan), _entering(cps, C, c0, plan)),
                   (G, C, TC, HR, wi, wh))
    return (Y, _final(Y, plan), _final(C, plan)), saved


def _lstm_backward(saved, plan, gy, ghn, gcn, need):
    x, wi, wh, w_hr, G, TC, HR, hin, cin = saved.vals
    (hin, Hp), (cin, Cp) = _pieces(hin, plan), _pieces(cin, plan)
    N, H4 = G.shape
    H = H4 // 4
    B, P = plan.batch, hin[0][1].shape[1]
    dt = G.dtype
    o, i, f, gg = G[:, :H], G[:, H:2 * H], G[:, 2 * H:3 * H], G[:, 3 * H:]
    # derivative factors for all steps at once; sigmoid gates are differentiated w.r.t. z = -a
    F = _get((N, 4, H), dt)
    sd = _get((N, H), dt)
    np.subtract(o, 1, out=sd)
    np.multiply(sd, o, out=sd)                # -o(1-o)
    np.multiply(sd, TC, out=F[:, 0])          # dz_o = dhr * F0
    np.subtract(i, 1, out=sd)
    np.multiply(sd, i, out=sd)
    np.multiply(sd, gg, out=F[:, 1])          # dz_i = dc * F1
    np.subtract(f, 1, out=sd)
    np.multiply(sd, f, out=sd)
    for off, cp in cin:
        np.multiply(sd[off:off + len(cp)], cp, out=F[off:off + len(cp), 2])   # dz_f = dc * F2
    np.multiply(gg, gg, out=sd)
    np.subtract(sd, 1, out=sd)
    np.multiply(sd, i, out=F[:, 3])
    np.multiply(F[:, 3], 0.5, out=F[:, 3])    # dz_g = dc * F3, z_g = -2 a_g
    K = np.multiply(TC, TC, out=_get((N, H), dt))
    np.subtract(1, K, out=K)
    np.multiply(K, o, out=K)                  # dc += dhr * K
    dh = _xp().zeros((B, P), dt) if ghn is None else ghn.astype(dt)
    dc = _xp().zeros((B, H), dt) if gcn is None else gcn.astype(dt)
    dZ = _get((N, H4), dt)
    DH = _get((N, P), dt) if HR is not None else None
    tmp = _xp().empty((B, H), dt)
    tmp2 = _xp().empty((B, H), dt)
    fused = HR is None and G.__class__ is not np.ndarray and _lstm_cuda.available(G)
    step = None
    if _compiled(G, HR):
        from ._jit_rnn import lstm_backward_step as step
        gy0 = np.zeros((B, H), dt)
    for a, e in reversed(plan.steps):
        n = e - a
        dht = dh[:n]
        if step is not None:  # the compiled CPU kernel (never together with the GPU's: fused is False)
            step(dht, gy0[:n] if gy is None else gy[a:e], K[a:e], F[a:e], f[a:e], dc[:n], dZ[a:e])
        if step is not None or fused and _lstm_cuda.backward_step(dht, None if gy is None else gy[a:e], K[a:e], F[a:e], G[a:e], dc[:n],
                                              dZ[a:e], H):
            np.matmul(dZ[a:e], wh, out=dht)
            continue
        if gy is not None:
            np.add(dht, gy[a:e], out=dht)
        if DH is None:
            dhr = dht
        else:
            DH[a:e] = dht
            dhr = np.matmul(dht, w_hr, out=tmp2[:n])
        dct = dc[:n]
        u = tmp[:n]
        np.multiply(dhr, K[a:e], out=u)
        np.add(dct, u, out=dct)
        z3 = dZ[a:e].reshape(n, 4, H)
        np.multiply(F[a:e, 1:], dct[:, None, :], out=z3[:, 1:])
        np.multiply(F[a:e, 0], dhr, out=z3[:, 0])
        np.multiply(dct, f[a:e], out=dct)
        np.matmul(dZ[a:e], wh, out=dht)
    gx = dZ @ wi if need[0] else None
    gwi = _wgrad(dZ, ((0, x),), _lstm_out, H) if need[3] else None
    gwh = _wgrad(dZ, hin, _lstm_out, H) if need[4] else None
    gb = _lstm_out(dZ.sum(0), H) if len(need) > 6 and (need[5] or need[6]) else None
    gwr = DH.T @ HR if HR is not None and need[-1] else None
    _put(F, sd, K, dZ, DH, Hp, Cp)
    out = [gx, dh, dc, gwi, gwh]
    if len(need) > 6:
        out += [gb, gb]
    if HR is not None:
        out.append(gwr)
    return out


# ----- GRU -----

def _gru_forward(x, h0, w_ih, w_hh, b_ih, b_hh, plan):
    H = w_hh.shape[0] // 3
    wi, wh = _gru_in(w_ih, H), _gru_in(w_hh, H)
    N, dt = x.shape[0], x.dtype
    XP = np.matmul(x, wi.T, out=_get((N, 3 * H), dt))
    bh = None
    if b_ih is not None:
        bi = _gru_in(b_ih, H)
        XP += bi
        _put(bi)
        bh = _gru_in(b_hh, H)
    B = h0.shape[0]
    Y = _xp().empty((N, H), dt)
    HH = _get((N, 3 * H), dt)
    tmp = _xp().empty((B, H), dt)
    whT = _transposed(wh)
    hps = []
    prev = None
    with np.errstate(over="ignore"):
        for a, e in plan.steps:
            n = e - a
            hp = _prev(Y, h0, prev, n)
            hh = HH[a:e]
            np.matmul(hp, whT, out=hh)
            if bh is not None:
                np.add(hh, bh, out=hh)
            g = XP[a:e]
            rz = g[:, :2 * H]
            np.add(rz, hh[:, :2 * H], out=rz)
            _sigmoid_(rz)
            nn = g[:, 2 * H:]
            u = tmp[:n]
            np.multiply(g[:, :H], hh[:, 2 * H:], out=u)
            np.add(nn, u, out=nn)
            np.tanh(nn, out=nn)
            y = Y[a:e]
            np.subtract(hp, nn, out=y)      # h' = n + z * (h - n)
            np.multiply(y, g[:, H:2 * H], out=y)
            np.add(y, nn, out=y)
            hps.append(hp)
            prev = (a, n)
    _put(whT, bh)
    saved = _Saved((x, wi, wh, XP, HH, _entering(hps, Y, h0, plan)), (XP, HH, wi, wh))
    return (Y, _final(Y, plan)), saved


def _gru_backward(saved, plan, gy, ghn, need):
    x, wi, wh, XP, HH, hin = saved.vals
    hin, Hp = _pieces(hin, plan)
    N, H3 = XP.shape
    H = H3 // 3
    B = plan.batch
    dt = XP.dtype
    r, z, nn, hn = XP[:, :H], XP[:, H:2 * H], XP[:, 2 * H:], HH[:, 2 * H:]
    # Fn = (1-z)(1-n^2): da_n = dh * Fn; hidden-side factors Fh = [dz_r, dz_z, d(hn)] / dh
    Fn = np.multiply(nn, nn, out=_get((N, H), dt))
    np.subtract(1, Fn, out=Fn)
    u = np.subtract(1, z, out=_get((N, H), dt))
    np.multiply(Fn, u, out=Fn)
    Fh = _get((N, 3, H), dt)
    np.subtract(r, 1, out=u)
    np.multiply(u, r, out=u)                    # -r(1-r)
    np.multiply(u, hn, out=u)
    np.multiply(u, Fn, out=Fh[:, 0])
    for off, hp in hin:
        np.subtract(nn[off:off + len(hp)], hp, out=u[off:off + len(hp)])   # -(h - n) z (1-z)
    np.multiply(u, z, out=u)
    np.subtract(1, z, out=Fh[:, 1])
    np.multiply(Fh[:, 1], u, out=Fh[:, 1])
    np.multiply(Fn, r, out=Fh[:, 2])
    dh = _xp().zeros((B, H), dt) if ghn is None else ghn.astype(dt)
    dGh = _get((N, H3), dt)
    dGx = _get((N, H3), dt)
    tmp = _xp().empty((B, H), dt)
    for a, e in reversed(plan.steps):
        n = e - a
        dht = dh[:n]
        if gy is not None:
            np.add(dht, gy[a:e], out=dht)
        np.multiply(Fh[a:e], dht[:, None, :], out=dGh[a:e].reshape(n, 3, H))
        np.multiply(Fn[a:e], dht, out=dGx[a:e, 2 * H:])
        t = tmp[:n]
        np.multiply(dht, z[a:e], out=t)
        np.matmul(dGh[a:e], wh, out=dht)
        np.add(dht, t, out=dht)
    dGx[:, :2 * H] = dGh[:, :2 * H]
    gx = dGx @ wi if need[0] else None
    gwi = _wgrad(dGx, ((0, x),), _gru_in, H) if need[2] else None
    gwh = _wgrad(dGh, hin, _gru_in, H) if need[3] else None
    out = [gx, dh, gwi, gwh]
    if len(need) > 4:
        out.append(_gru_in(dGx.sum(0), H, _xp().empty(H3, dt)) if need[4] else None)
        out.append(_gru_in(dGh.sum(0), H, _xp().empty(H3, dt)) if need[5] else None)
    _put(Fn, u, Fh, dGh, dGx, Hp)
    return out


# ----- Elman RNN (tanh / relu) -----

def _rnn_forward(x, h0, w_ih, w_hh, b_ih, b_hh, plan, relu):
    Y = x @ w_ih.T   # pre-activations, then activations in place
    if b_ih is not None:
        Y += b_ih + b_hh
    B = h0.shape[0]
    tmp = _xp().empty((B, Y.shape[1]), Y.dtype)
    whT = _transposed(w_hh)
    hps = []
    prev = None
    for a, e in plan.steps:
        n = e - a
        hp = _prev(Y, h0, prev, n)
        y = Y[a:e]
        t = tmp[:n]
        np.matmul(hp, whT, out=t)
        np.add(y, t, out=y)
        if relu:
            np.maximum(y, 0, out=y)
        else:
            np.tanh(y, out=y)
        hps.append(hp)
        prev = (a, n)
    _put(whT)
    saved = _Saved((x, w_ih, w_hh, Y, _entering(hps, Y, h0, plan), relu), ())
    return (Y, _final(Y, plan)), saved


def _rnn_backward(saved, plan, gy, ghn, need):
    x, w_ih, w_hh, Y, hin, relu = saved.vals
    hin, Hp = _pieces(hin, plan)
    dt = Y.dtype
    D = _get(Y.shape, dt)
    if relu:
        np.greater(Y, 0, out=D)
    else:
        np.multiply(Y, Y, out=D)
        np.subtract(1, D, out=D)
    dh = _xp().zeros((plan.batch, Y.shape[1]), dt) if ghn is None else ghn.astype(dt)
    dZ = _get(Y.shape, dt)
    for a, e in reversed(plan.steps):
        dht = dh[:e - a]
        if gy is not None:
            np.add(dht, gy[a:e], out=dht)
        np.multiply(dht, D[a:e], out=dZ[a:e])
        np.matmul(dZ[a:e], w_hh, out=dht)
    out = [dZ @ w_ih if need[0] else None, dh, dZ.T @ x if need[2] else None,
           _wgrad(dZ, hin, None, 0) if need[3] else None]
    if len(need) > 4:
        gb = dZ.sum(0) if need[4] or need[5] else None
        out += [gb, gb]
    _put(D, dZ, Hp)
    return out


# ----- the op -----

class _Spec:
    """Non-tensor arguments of one layer-direction op."""
    __slots__ = ("bias", "mode", "plan", "proj")

    def __init__(self, mode, plan, bias, proj):
        self.mode = mode
        self.plan = plan
        self.bias = bias
        self.proj = proj


def _xp(_local=_LOCAL):
    """The array module the running kernel allocates from (NumPy, or CuPy inside a device layer)."""
    return getattr(_local, "xp", np)


def _on_device(fn, x, *args):
    """fn(*args) with the kernels allocating from x's array module."""
    _LOCAL.xp = XP[x.__class__]
    try:
        return fn(*args)
    finally:
        _LOCAL.xp = np


def _layer_fwd(*args):
    if args[0].__class__ is not np.ndarray:
        return _on_device(_layer_fwd_any, args[0], *args)
    return _layer_fwd_any(*args)


def _layer_fwd_any(*args):
    sp = args[-1]
    x = args[0]
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim == 3 else x
    w = list(args[1:-1])
    if sp.mode == "LSTM":
        h0, c0, w_ih, w_hh = w[:4]
        b_ih, b_hh = (w[4], w[5]) if sp.bias else (None, None)
        w_hr = w[-1] if sp.proj else None
        outs, saved = _lstm_forward(x2, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, sp.plan)
    else:
        h0, w_ih, w_hh = w[:3]
        b_ih, b_hh = (w[3], w[4]) if sp.bias else (None, None)
        if sp.mode == "GRU":
            outs, saved = _gru_forward(x2, h0, w_ih, w_hh, b_ih, b_hh, sp.plan)
        else:
            outs, saved = _rnn_forward(x2, h0, w_ih, w_hh, b_ih, b_hh, sp.plan, sp.mode == "RNN_RELU")
    if x.ndim == 3:
        outs = (outs[0].reshape(x.shape[:2] + outs[0].shape[1:]),) + outs[1:]
    return outs, saved


def _flat(g):
    if g is None:
        return None
    d = g._data
    return d.reshape(-1, d.shape[-1]) if d.ndim == 3 else d


def _layer_bwd(ctx, grads):
    inputs = ctx.inputs    # checks saved tensors against in-place changes (and a freed graph)
    if inputs[0]._data.__class__ is not np.ndarray:
        return _on_device(_layer_bwd_any, inputs[0]._data, ctx, grads, inputs)
    return _layer_bwd_any(ctx, grads, inputs)


def _layer_bwd_any(ctx, grads, inputs):
    _ = ctx.outputs   # the same check for the outputs the backward reads
    sp = ctx.attrs[0]
    need = ctx.needs_input_grad
    gy = _flat(grads[0])
    ghn = None if grads[1] is None else grads[1]._data
    if sp.mode == "LSTM":
        gcn = None if grads[2] is None else grads[2]._data
        out = _lstm_backward(ctx.extra, sp.plan, gy, ghn, gcn, need)
    elif sp.mode == "GRU":
        out = _gru_backward(ctx.extra, sp.plan, gy, ghn, need)
    else:
        out = _rnn_backward(ctx.extra, sp.plan, gy, ghn, need)
    xs = inputs[0].shape
    if out[0] is not None and len(xs) == 3:
        out[0] = out[0].reshape(xs)
    out = [g if nd else None for g, nd in zip(out, need)]
    if GRAD[0]:
        return _once_differentiable(inputs, grads, out)
    return tuple(None if g is None else wrap(g) for g in out)


_LAYER_OPS = {
    3: Op("lstm_layer", _layer_fwd, _layer_bwd, save=SAVE_BOTH, nout=3, extra=True),
    2: Op("rnn_layer", _layer_fwd, _layer_bwd, save=SAVE_BOTH, nout=2, extra=True),
}


# ----- double backward (NOTE [ RNN double backward ]) -----

def _no_double_backward(ctx, g):
    raise RuntimeError("double backward through ember's fused RNN/LSTM/GRU layers is not supported (their backward "
                       "is not differentiable, like torch's cuDNN RNNs); use nn.RNNCell/LSTMCell/GRUCell in a "
                       "loop where higher-order gradients are needed")


def _pass_through(*args):
    r = args[-1]
    return r[0] if len(r) == 1 else r


_ONCE_OPS = {}


def _once_differentiable(inputs, grads, out):
    """Gradients as tensors whose own backward raises: create_graph works, differentiating them again does not."""
    keep = [k for k, g in enumerate(out) if g is not None]
    if not keep:
        return tuple(out)
    op = _ONCE_OPS.get(len(keep))
    if op is None:
        op = _ONCE_OPS[len(keep)] = Op("rnn_backward", _pass_through, _no_double_backward, nout=len(keep),
                                       node_name="RnnBackwardBackward0")
    deps = tuple(t for t in tuple(inputs) + tuple(grads) if t is not None)
    res = dispatch(op, deps, tuple(out[k] for k in keep))
    if len(keep) == 1:
        res = (res,)
    full = [None] * len(out)
    for k, t in zip(keep, res):
        full[k] = t
    return tuple(full)


def rnn_layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    """One layer, one direction: (output, h_n, c_n) for LSTM, (output, h_n) otherwise.

    x is (T, B, I) or packed data (N, I) with batch_sizes (a tuple of ints); h0/c0 are (B, .).
    """
    if batch_sizes is None:
        batch_sizes = (x.shape[1],) * x.shape[0]
    sp = _Spec(mode, _plan(batch_sizes, reverse), b_ih is not None, w_hr is not None)
    ins = [x, h0]
    if mode == "LSTM":
        ins.append(c0)
    ins += [w_ih, w_hh]
    if b_ih is not None:
        ins += [b_ih, b_hh]
    if w_hr is not None:
        ins.append(w_hr)
    return dispatch(_LAYER_OPS[3 if mode == "LSTM" else 2], tuple(ins), sp)
