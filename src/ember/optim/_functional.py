"""Array kernels of the optimizers: in-place updates on the raw arrays of parameters, gradients and state.

NOTE [ Optimizer kernels ]
An update is a short chain of in-place ufunc calls (`out=`) on the arrays themselves, never Tensor ops: no graph,
no dispatch, no temporaries beyond one or two scratch buffers. Three choices shape it:
- Chunking. Contiguous arrays are processed in flat slices of `_CHUNK` elements (1 MiB of float32): the scratch
  buffers stay small and reused (no per-step allocation, however large the parameter), and a slice's chain runs
  on cache-resident data. On a 32 MiB-L3 machine this measured on par with whole-array passes; 64K-element slices
  or smaller lose to per-call overhead.
- BLAS axpy. `y += a * x` is a single pass with BLAS (scipy's saxpy/daxpy) where NumPy needs a multiply and an
  add; large float32/float64 arrays use it, small ones and other dtypes use the two ufuncs (scipy is imported on
  the first step that has an array large enough to need it).
- Constants as 0-d arrays of the working dtype: NumPy converts a Python float operand on every call, which costs
  more than a small slice's arithmetic.
Adam's denominator is folded as (step_size * sqrt(bc2)) * m / (sqrt(v) + eps * sqrt(bc2)), the same value as torch's
step_size * m / (sqrt(v) / sqrt(bc2) + eps) up to rounding, one pass shorter.
Kernels receive a row of arrays (parameter first), a list of scratch buffers of the row's size and a tuple of
constants; `run` feeds them chunk by chunk. Complex arrays are viewed as real pairs, as torch does.
"""
import os
import threading

import numpy as np

from . import _fused_cuda

_CHUNK = 1 << 18
_BLAS_MIN = 1 << 15
_AXPY = {}
_BLAS_LOADED = [False]
_tls = threading.local()

_sqrt, _add, _mul, _div, _sub, _square = np.sqrt, np.add, np.multiply, np.divide, np.subtract, np.square


def _load_blas():
    """scipy's BLAS axpy, loaded once; that BLAS library runs on one thread (see _threads.pin_single_threaded)."""
    _BLAS_LOADED[0] = True
    try:
        from scipy.linalg import blas
    except ImportError:  # pragma: no cover - scipy is a dependency
        return
    _AXPY[np.dtype(np.float32)] = blas.saxpy
    _AXPY[np.dtype(np.float64)] = blas.daxpy
    from .. import _threads
    _threads.pin_single_threaded(os.sep + "scipy.libs" + os.sep)  # a wheel install; elsewhere scipy shares NumPy's


def axpy(x, y, a, t):
    """y += a * x in place; t is scratch the size of x (x itself when x may be overwritten)."""
    if y.size >= _BLAS_MIN and y.ndim == 1:
        if not _BLAS_LOADED[0]:
            _load_blas()
        f = _AXPY.get(y.dtype)
        if f is not None and y.__class__ is np.ndarray:
            r = f(x, y, a=a)
            if r is not y:  # BLAS worked on a copy (never expected for our contiguous slices)
                y[...] = r
            return
    _mul(x, a, out=t)
    _add(y, t, out=y)


def const(x, dt):
    """A constant operand for arrays whose work_dtype is dt: a 0-d array on NumPy (cheaper per call than a Python
    float, which NumPy converts every time), the float itself for device arrays."""
    return float(x) if dt is None else np.array(x, dt)


def work_dtype(arr):
    """Dtype of the constants of a kernel over arr: float64 for float64 data, float32 otherwise (half precisions
    compute in float32 and round once per op, as torch's CPU kernels do); None for device arrays."""
    if arr.__class__ is not np.ndarray:
        return None
    d = arr.dtype
    return np.float64 if d == np.float64 or d == np.complex128 else np.float32


def real(a):
    """A complex array as an array of real pairs (a view), as torch.view_as_real; others unchanged."""
    if a.dtype.kind == "c":
        return a.view(a.real.dtype) if a.flags.c_contiguous else np.ascontiguousarray(a).view(a.real.dtype)
    return a


def _scratch(dtype, n, k):
    """k reusable flat buffers of n elements (per thread), so steps do not allocate."""
    cache = getattr(_tls, "bufs", None)
    if cache is None:
        cache = _tls.bufs = {}
    key = (dtype, k)
    bufs = cache.get(key)
    if bufs is None or bufs[0].size < n:
        bufs = cache[key] = [np.empty(max(n, 1), dtype) for _ in range(k)]
    return [b[:n] for b in bufs]


def run(kernel, rows, ntmp):
    """Apply kernel(arrays, scratch, consts) to each (arrays, consts) row, in cache-sized chunks where possible; rows
    of device arrays go to the kernel's one-launch GPU version where it has one (NOTE [ Fused device updates ])."""
    fused = _FUSED.get(kernel)
    if fused is not None:
        rows = list(rows)
        if any(arrays[0].__class__ is not np.ndarray for arrays, _ in rows):
            rows = _fused_cuda.update(fused, rows)
    for arrays, c in rows:
        p = arrays[0]
        if p.__class__ is np.ndarray and all(a.flags.c_contiguous for a in arrays):
            flat = [a.reshape(-1) for a in arrays]
            n = p.size
            if n <= _CHUNK:
                kernel(flat, _scratch(p.dtype, n, ntmp), c)
                continue
            tmps = _scratch(p.dtype, _CHUNK, ntmp)
            for s in range(0, n, _CHUNK):
                e = s + _CHUNK
                if e > n:
                    tmps = [t[:n - s] for t in tmps]
                kernel([a[s:e] for a in flat], tmps, c)
        else:  # strided or device arrays: one pass over the whole arrays
            kernel(list(arrays), [p.__class__(p.shape, p.dtype) if p.__class__ is not np.ndarray
                                  else np.empty_like(p) for _ in range(ntmp)], c)


def grad_of(p, g, t, wd, maximize):
    """The gradient the update uses: -g when maximizing, plus wd * p (L2 weight decay, None for none); written into
    t if it differs from g."""
    if wd is not None:
        _mul(p, wd, out=t)
        (_sub if maximize else _add)(t, g, out=t)
        return t
    if maximize:
        np.negative(g, out=t)
        return t
    return g


# ---------------------------------------------------------------- kernels
# Each comment gives torch's update for one parameter; g is the gradient after maximize / L2 weight decay.

def sgd(a, t, c):
    # buf = momentum * buf + (1 - dampening) * g  (buf = g on the first step); g = g + momentum * buf if nesterov
    # else buf; p -= lr * g
    wd, momentum, damp1, nesterov, maximize, neg_lr, init = c
    p, g = a[0], a[1]
    g = grad_of(p, g, t[0], wd, maximize)
    if len(a) == 3:
        buf = a[2]
        if init:
            np.copyto(buf, g)
        else:
            _mul(buf, momentum, out=buf)
            if damp1 is None:
                _add(buf, g, out=buf)
            else:
                axpy(g, buf, damp1, t[1])
        if nesterov:
            if g is not t[0]:
                np.copyto(t[0], g)
                g = t[0]
            axpy(buf, g, momentum, t[1])
        else:
            g = buf
    axpy(g, p, neg_lr, t[1])


def decayed_grad(p, g, scratch, wd, decoupled, maximize):
    """The gradient with weight decay: decoupled (AdamW) shrinks p itself first, otherwise wd * p joins g."""
    if decoupled:
        if wd is not None:
            _mul(p, wd, out=p)
        return grad_of(p, g, scratch, None, maximize)
    return grad_of(p, g, scratch, wd, maximize)


def adam_moments(g, m, v, b1, w1, b2, w2, scratch):
    """Adam's moment updates in place: m = b1 m + w1 g, v = b2 v + w2 g^2."""
    _mul(m, b1, out=m)
    axpy(g, m, w1, scratch)
    _mul(v, b2, out=v)
    _square(g, out=scratch)
    axpy(scratch, v, w2, scratch)


def adam(a, t, c):
    # m = lerp(m, g, 1 - b1); v = b2 * v + (1 - b2) * g^2; vmax = max(vmax, v) if amsgrad;
    # p -= lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)     (AdamW first does p *= 1 - lr * wd)
    wd, decoupled, maximize, b1, w1, b2, w2, eps_s, neg_s, amsgrad = c
    p, g, m, v = a[0], a[1], a[2], a[3]
    g = decayed_grad(p, g, t[1], wd, decoupled, maximize)
    adam_moments(g, m, v, b1, w1, b2, w2, t[0])
    if amsgrad:
        np.maximum(a[4], v, out=a[4])
        v = a[4]
    d = t[0]
    _sqrt(v, out=d)
    _add(d, eps_s, out=d)
    _div(m, d, out=d)
    axpy(d, p, neg_s, d)


def adamax(a, t, c):
    # m = lerp(m, g, 1 - b1); u = max(b2 * u, |g| + eps); p -= lr / bc1 * m / u
    wd, maximize, b1, w1, b2, eps, neg_clr = c
    p, g, m, u = a
    g = grad_of(p, g, t[1], wd, maximize)
    _mul(m, b1, out=m)
    axpy(g, m, w1, t[0])
    _mul(u, b2, out=u)
    np.abs(g, out=t[0])
    _add(t[0], eps, out=t[0])
    np.maximum(u, t[0], out=u)
    _div(m, u, out=t[0])
    axpy(t[0], p, neg_clr, t[0])


def nadam(a, t, c):
    # m, v as Adam; d = sqrt(v / bc2) + eps; p += c_g * g / d + c_m * m / d
    wd, decoupled, maximize, b1, w1, b2, w2, bc2, eps, c_g, c_m = c
    p, g, m, v = a
    g = decayed_grad(p, g, t[2], wd, decoupled, maximize)
    adam_moments(g, m, v, b1, w1, b2, w2, t[0])
    d = t[0]
    _div(v, bc2, out=d)
    _sqrt(d, out=d)
    _add(d, eps, out=d)
    _div(g, d, out=t[1])
    axpy(t[1], p, c_g, t[1])
    _div(m, d, out=t[1])
    axpy(t[1], p, c_m, t[1])


def radam(a, t, c):
    # m, v as Adam; with the variance tractable (rho_t > 5): p -= lr * rect * sqrt(bc2) / bc1 * m / (sqrt(v) + eps)
    # else p -= lr / bc1 * m
    wd, decoupled, maximize, b1, w1, b2, w2, eps, rectified, coef = c
    p, g, m, v = a
    g = decayed_grad(p, g, t[1], wd, decoupled, maximize)
    adam_moments(g, m, v, b1, w1, b2, w2, t[0])
    if rectified:
        d = t[0]
        _sqrt(v, out=d)
        _add(d, eps, out=d)
        _div(m, d, out=d)
        axpy(d, p, coef, d)
    else:
        axpy(m, p, coef, t[0])


def rmsprop(a, t, c):
    # sq = alpha * sq + (1 - alpha) * g^2; avg = sqrt(sq - gavg^2) (centered, gavg = lerp(gavg, g, 1 - alpha))
    # or sqrt(sq), plus eps; buf = momentum * buf + g / avg; p -= lr * buf   (no momentum: p -= lr * g / avg)
    wd, maximize, alpha, w, eps, momentum, centered, neg_lr = c
    p, g, sq = a[0], a[1], a[2]
    g = grad_of(p, g, t[1], wd, maximize)
    _mul(sq, alpha, out=sq)
    _square(g, out=t[0])
    axpy(t[0], sq, w, t[0])
    d = t[0]
    if centered:
        gavg = a[-1]
        _mul(gavg, alpha, out=gavg)
        axpy(g, gavg, w, d)
        _square(gavg, out=d)
        _sub(sq, d, out=d)
        _sqrt(d, out=d)
    else:
        _sqrt(sq, out=d)
    _add(d, eps, out=d)
    _div(g, d, out=d)
    if momentum is not None:
        buf = a[3]
        _mul(buf, momentum, out=buf)
        _add(buf, d, out=buf)
        d = buf
    axpy(d, p, neg_lr, t[0])


def adagrad(a, t, c):
    # sum += g^2; p -= clr * g / (sqrt(sum) + eps),  clr = lr / (1 + (step - 1) * lr_decay)
    wd, maximize, eps, neg_clr = c
    p, g, s = a
    g = grad_of(p, g, t[1], wd, maximize)
    _square(g, out=t[0])
    _add(s, t[0], out=s)
    d = t[0]
    _sqrt(s, out=d)
    _add(d, eps, out=d)
    _div(g, d, out=d)
    axpy(d, p, neg_clr, d)


def adadelta(a, t, c):
    # sq = rho * sq + (1 - rho) * g^2; delta = sqrt(acc + eps) / sqrt(sq + eps) * g;
    # acc = rho * acc + (1 - rho) * delta^2; p -= lr * delta
    wd, maximize, rho, w, eps, neg_lr = c
    p, g, sq, acc = a
    g = grad_of(p, g, t[2], wd, maximize)
    _mul(sq, rho, out=sq)
    _square(g, out=t[0])
    axpy(t[0], sq, w, t[0])
    std, delta = t[0], t[1]
    _add(sq, eps, out=std)
    _sqrt(std, out=std)
    _add(acc, eps, out=delta)
    _sqrt(delta, out=delta)
    _div(delta, std, out=delta)
    _mul(delta, g, out=delta)
    _mul(acc, rho, out=acc)
    _square(delta, out=std)
    axpy(std, acc, w, std)
    axpy(delta, p, neg_lr, std)


def asgd(a, t, c):
    # p *= 1 - lambd * eta; p -= eta * g; ax += (p - ax) * mu  (ax = p while mu == 1)
    wd, maximize, decay, neg_eta, mu = c
    p, g, ax = a
    g = grad_of(p, g, t[1], wd, maximize)
    _mul(p, decay, out=p)
    axpy(g, p, neg_eta, t[0])
    if mu is None:
        np.copyto(ax, p)
    else:
        _sub(p, ax, out=t[0])
        _mul(t[0], mu, out=t[0])
        _add(ax, t[0], out=ax)


def rprop(a, t, c):
    # s = sign(g * prev); step = clamp(step * (etaplus | etaminus | 1), min, max) by s; g = 0 where s < 0;
    # p -= sign(g) * step; prev = g
    maximize, etaplus, etaminus, step_min, step_max = c
    p, g, prev, size = a
    g = grad_of(p, g, t[1], None, maximize)
    sgn = t[0]
    _mul(g, prev, out=sgn)
    np.sign(sgn, out=sgn)
    factor = np.where(sgn > 0, etaplus, np.where(sgn < 0, etaminus, 1)).astype(size.dtype, copy=False)
    _mul(size, factor, out=size)
    np.clip(size, step_min, step_max, out=size)
    np.copyto(prev, g)
    prev[sgn < 0] = 0
    np.sign(prev, out=sgn)
    _mul(sgn, size, out=sgn)
    _sub(p, sgn, out=p)


_FUSED = {sgd: _fused_cuda.sgd, adam: _fused_cuda.adam}
