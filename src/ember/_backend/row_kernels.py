"""Row kernels for the GPU: layer/RMS norm, softmax/log_softmax and cross-entropy, one launch per pass.

NOTE [ Row kernels ]
On a GPU a training step is bound by the host's launches, and the ops over the last dimension were chains of
them: a layer norm forward and backward took 26 launches, a cross-entropy loss 34. Here each row-wise pass is
one CuPy RawModule kernel with one thread block per row (blockDim a power of two from 32 to 1024, strided over
the row, reductions by warp shuffles and shared memory), in the data's precision (float32 or float64), the
arithmetic in the order of the NumPy paths they replace, so results agree with the CPU to rounding. Callers ask
`available(array)` first: False for host arrays, other dtypes, a CuPy without RawModule (the tests' fake) or
after a compilation failed; then they run their NumPy/CuPy chains, which stay complete.
Every kernel takes C-contiguous (rows, n) arrays; pointers that a case does not use get the first array and a
flag, never a null. The column sums of layer norm's weight and bias gradients are two passes (partial sums of
row blocks, then their sum), so they are deterministic.
"""
import numpy as np

from . import XP

_SOURCE = r"""
template <typename T> __device__ __forceinline__ T neg_inf();
template <> __device__ __forceinline__ float neg_inf<float>() { return __int_as_float(0xff800000); }
template <> __device__ __forceinline__ double neg_inf<double>() { return __longlong_as_double(0xfff0000000000000ULL); }

template <typename T> __device__ __forceinline__ T larger(T a, T b) { return a > b ? a : b; }

template <typename T, bool MAX> __device__ __forceinline__ T warp_reduce(T v) {
    for (int o = 16; o > 0; o >>= 1) {
        T other = __shfl_xor_sync(0xffffffffu, v, o);
        v = MAX ? larger(v, other) : v + other;
    }
    return v;
}

// the sum (or max) of v over the block, returned to every thread; sh holds 33 values
template <typename T, bool MAX> __device__ T block_reduce(T v, T* sh) {
    v = warp_reduce<T, MAX>(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    __syncthreads();  // sh may still be read from the previous reduction
    if (lane == 0) sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? sh[lane] : (MAX ? neg_inf<T>() : T(0));
        v = warp_reduce<T, MAX>(v);
        if (lane == 0) sh[32] = v;
    }
    __syncthreads();
    return sh[32];
}

// layer norm (center) or RMS norm statistics of each row, and the normalized row
template <typename T>
__global__ void norm_fwd(const T* x, T* xhat, T* mean, T* rstd, long long n, double eps, int center) {
    __shared__ T sh[33];
    const T* xr = x + blockIdx.x * n;
    T* hr = xhat + blockIdx.x * n;
    T mu = 0;
    if (center) {
        T s = 0;
        for (long long j = threadIdx.x; j < n; j += blockDim.x) s += xr[j];
        mu = block_reduce<T, false>(s, sh) * (T(1) / T(n));
    }
    T q = 0;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
        T d = xr[j] - mu;
        q += d * d;
    }
    T var = block_reduce<T, false>(q, sh) * (T(1) / T(n));
    T r = T(1) / sqrt(var + T(eps));
    for (long long j = threadIdx.x; j < n; j += blockDim.x) hr[j] = (xr[j] - mu) * r;
    if (threadIdx.x == 0) {
        if (center) mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = r;
    }
}

// gx = r * (gs - xhat * mean(gs * xhat) - mean(gs)), gs = g * w (the mean(gs) term for layer norm only), with
// xhat = (x - mean) * r recomputed from the input as the forward computed it
template <typename T>
__global__ void norm_bwd(const T* g, const T* x, const T* mean, const T* rstd, const T* w, T* gx, long long n,
                         int has_w, int center) {
    __shared__ T sh[33];
    const long long base = blockIdx.x * n;
    const T* gr = g + base;
    const T* xr = x + base;
    const T r = rstd[blockIdx.x], mu = center ? mean[blockIdx.x] : T(0);
    T a = 0, c = 0;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
        T gs = has_w ? gr[j] * w[j] : gr[j];
        a += gs * ((xr[j] - mu) * r);
        c += gs;
    }
    a = block_reduce<T, false>(a, sh) * r * (T(1) / T(n));
    c = center ? block_reduce<T, false>(c, sh) * r * (T(1) / T(n)) : T(0);
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
        T gs = has_w ? gr[j] * w[j] : gr[j];
        gx[base + j] = gs * r - ((xr[j] - mu) * r) * a - c;
    }
}

// partial column sums of g * xhat and g over blocks of rows (xhat recomputed as above): part is
// (2, gridDim.y, n); block (32, 8)
template <typename T>
__global__ void col_partials(const T* g, const T* x, const T* mean, const T* rstd, T* part, long long m, long long n,
                             long long rows, int center) {
    __shared__ T sw[8][33], sb[8][33];
    const long long col = blockIdx.x * 32LL + threadIdx.x;
    const long long r0 = blockIdx.y * rows, r1 = min(m, r0 + rows);
    T aw = 0, ab = 0;
    if (col < n) {
        for (long long i = r0 + threadIdx.y; i < r1; i += 8) {
            T gv = g[i * n + col];
            aw += gv * ((x[i * n + col] - (center ? mean[i] : T(0))) * rstd[i]);
            ab += gv;
        }
    }
    sw[threadIdx.y][threadIdx.x] = aw;
    sb[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && col < n) {
        for (int k = 1; k < 8; ++k) {
            aw += sw[k][threadIdx.x];
            ab += sb[k][threadIdx.x];
        }
        part[blockIdx.y * n + col] = aw;
        part[(gridDim.y + blockIdx.y) * n + col] = ab;
    }
}

template <typename T>
__global__ void col_finish(const T* part, T* gw, T* gb, long long parts, long long n, int has_w, int has_b) {
    const long long col = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (col >= n) return;
    T aw = 0, ab = 0;
    for (long long p = 0; p < parts; ++p) {
        aw += part[p * n + col];
        ab += part[(parts + p) * n + col];
    }
    if (has_w) gw[col] = aw;
    if (has_b) gb[col] = ab;
}

// softmax or log_softmax of each row (y may be x); with attention, rows whose max is not finite are shifted by 0
// (a fully masked row gives zeros) and lse gets each row's log-sum-exp
template <typename T>
__global__ void softmax_fwd(const T* x, T* y, T* lse, long long n, int log_out, int attention) {
    __shared__ T sh[33];
    const long long base = blockIdx.x * n;
    const T* xr = x + base;
    T* yr = y + base;
    T m = neg_inf<T>();
    for (long long j = threadIdx.x; j < n; j += blockDim.x) m = larger(m, xr[j]);
    m = block_reduce<T, true>(m, sh);
    if (attention && !isfinite(m)) m = 0;
    T s = 0;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) s += exp(xr[j] - m);
    s = block_reduce<T, false>(s, sh);
    if (log_out) {
        const T ls = log(s);
        for (long long j = threadIdx.x; j < n; j += blockDim.x) yr[j] = (xr[j] - m) - ls;
    } else {
        const T d = (attention && s == T(0)) ? T(1) : s;
        for (long long j = threadIdx.x; j < n; j += blockDim.x) yr[j] = exp(xr[j] - m) / d;
    }
    if (attention && threadIdx.x == 0) lse[blockIdx.x] = m + log(s);
}

// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g)
template <typename T>
__global__ void softmax_bwd(const T* g, const T* y, T* gx, long long n, int log_in) {
    __shared__ T sh[33];
    const long long base = blockIdx.x * n;
    const T* gr = g + base;
    const T* yr = y + base;
    T s = 0;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) s += log_in ? gr[j] : gr[j] * yr[j];
    s = block_reduce<T, false>(s, sh);
    for (long long j = threadIdx.x; j < n; j += blockDim.x)
        gx[base + j] = log_in ? gr[j] - exp(yr[j]) * s : yr[j] * (gr[j] - s);
}

// cross-entropy's targets, in one block: t clipped into [0, c) (ignored ones to 0), the per-sample coefficient
// s = w[t] (1 without weights, 0 where ignored) times `scale` (divided by the sum of those for the mean), and a
// deferred-check record: rec = [code, value] for the first target outside [0, c) that is not ignored, else [0, 0]
template <typename T>
__global__ void class_targets(const long long* t, const T* w, long long* safe, T* s, long long* rec, long long n,
                              long long c, long long ignore, int has_w, int mean, double scale, long long code) {
    __shared__ T sh[33];
    __shared__ long long first[33];
    T tot = 0;
    long long bad = n;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        const long long k = t[i];
        const bool valid = k != ignore;
        if (valid && (k < 0 || k >= c) && i < bad) bad = i;
        const long long kk = (valid && k >= 0 && k < c) ? k : 0;
        safe[i] = kk;
        const T wi = valid ? (has_w ? w[kk] : T(1)) : T(0);
        s[i] = wi;
        tot += wi;
    }
    for (int o = 16; o > 0; o >>= 1) bad = min(bad, __shfl_xor_sync(0xffffffffu, bad, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) first[warp] = bad;
    tot = block_reduce<T, false>(tot, sh);  // its barriers publish first[]
    if (threadIdx.x == 0) {
        long long b = n;
        for (int k = 0; k < (int)(blockDim.x >> 5); ++k) b = min(b, first[k]);
        rec[0] = b < n ? code : 0;
        rec[1] = b < n ? t[b] : 0;
    }
    const T f = mean ? T(scale) / tot : T(scale);
    for (long long i = threadIdx.x; i < n; i += blockDim.x) s[i] *= f;
}

// per-row loss s * (lse - x[t]) and the row's log-sum-exp, kept for the backward
template <typename T>
__global__ void class_loss(const T* x, const long long* t, const T* s, T* loss, T* lse, long long n) {
    __shared__ T sh[33];
    const T* xr = x + blockIdx.x * n;
    T m = neg_inf<T>();
    for (long long j = threadIdx.x; j < n; j += blockDim.x) m = larger(m, xr[j]);
    m = block_reduce<T, true>(m, sh);
    T e = 0;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) e += exp(xr[j] - m);
    e = block_reduce<T, false>(e, sh);
    if (threadIdx.x == 0) {
        const T l = log(e) + m;
        lse[blockIdx.x] = l;
        loss[blockIdx.x] = s[blockIdx.x] * (l - xr[t[blockIdx.x]]);
    }
}

// gx = gs * (softmax(x) - onehot(t)), gs = s * g (g one value, or one per row)
template <typename T>
__global__ void class_loss_bwd(const T* x, const long long* t, const T* s, const T* lse, const T* g, T* gx,
                               long long n, int per_row) {
    const long long row = blockIdx.x;
    const T gs = s[row] * g[per_row ? row : 0];
    const T l = lse[row];
    const long long k = t[row];
    const T* xr = x + row * n;
    for (long long j = threadIdx.x; j < n; j += blockDim.x) {
        T v = gs * exp(xr[j] - l);
        gx[row * n + j] = j == k ? v - gs : v;
    }
}
"""

_KERNELS = ("norm_fwd", "norm_bwd", "col_partials", "col_finish", "softmax_fwd", "softmax_bwd", "class_targets",
            "class_loss", "class_loss_bwd")
_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_modules = {}  # CuPy module -> {(kernel, C type): function}, or None after a failed compilation


def _functions(xp):
    fns = _modules.get(xp, False)
    if fns is False:
        try:
            names = [f"{k}<{t}>" for k in _KERNELS for t in _TYPES.values()]
            mod = xp.RawModule(code=_SOURCE, options=("-std=c++14",), name_expressions=names)
            fns = {(k, t): mod.get_function(f"{k}<{t}>") for k in _KERNELS for t in _TYPES.values()}
        except Exception as e:
            if type(e).__name__ != "CompileException":
                raise
            fns = None
        _modules[xp] = fns
    return fns


def available(arr):
    """Whether the row kernels can run on arr: a float32/float64 array of a CuPy that compiles kernels."""
    if arr.__class__ is np.ndarray or arr.dtype not in _TYPES:
        return False
    xp = XP.get(arr.__class__)
    return xp is not None and hasattr(xp, "RawModule") and _functions(xp) is not None


def _threads(n):
    t = 32
    while t < n and t < 1024:
        t *= 2
    return t


def _launch(name, like, grid, block, args):
    """Launch a kernel whose module `available` has built."""
    _modules[XP[like.__class__]][(name, _TYPES[like.dtype])](grid, block, args)


def _rows(a):
    m = a.shape[0]
    return m, a.size // m if m else 0


def norm_forward(x2, eps, center):
    """(mean or None, rstd, xhat) of the C-contiguous rows x2 (m, n): layer norm (center) or RMS norm."""
    xp = XP[x2.__class__]
    m, n = _rows(x2)
    xhat = xp.empty_like(x2)
    rstd = xp.empty(m, x2.dtype)
    mean = xp.empty(m, x2.dtype) if center else rstd
    _launch("norm_fwd", x2, (m,), (_threads(n // 4),), (x2, xhat, mean, rstd, np.int64(n), np.float64(eps),
                                                       np.int32(center)))
    return (mean if center else None), rstd, xhat


def norm_backward(g2, x2, mean, rstd, w):
    """The input gradient of layer norm (mean given) or RMS norm (mean None) as rows, from the input rows x2 and
    the forward's statistics (m,); w the weight (n,) or None."""
    xp = XP[g2.__class__]
    m, n = _rows(g2)
    gx = xp.empty_like(g2)
    _launch("norm_bwd", g2, (m,), (_threads(n // 4),),
            (g2, x2, rstd if mean is None else mean, rstd, g2 if w is None else w, gx, np.int64(n),
             np.int32(w is not None), np.int32(mean is not None)))
    return gx


def weight_bias_grads(g2, x2, mean, rstd, need_w, need_b):
    """Column sums of g2 * xhat and of g2 (the weight's and the bias's gradients), each None unless needed."""
    xp = XP[g2.__class__]
    m, n = _rows(g2)
    tiles = -(-n // 32)
    parts = max(1, min(-(-m // 8), -(-1024 // tiles)))
    rows = -(-m // parts)
    parts = -(-m // rows)
    part = xp.empty((2, parts, n), g2.dtype)
    _launch("col_partials", g2, (tiles, parts), (32, 8), (g2, x2, rstd if mean is None else mean, rstd, part,
                                                          np.int64(m), np.int64(n), np.int64(rows),
                                                          np.int32(mean is not None)))
    gw = xp.empty(n, g2.dtype) if need_w else part
    gb = xp.empty(n, g2.dtype) if need_b else part
    _launch("col_finish", g2, (-(-n // 256),), (256,),
            (part, gw, gb, np.int64(parts), np.int64(n), np.int32(need_w), np.int32(need_b)))
    return (gw if need_w else None), (gb if need_b else None)


def softmax_forward(x2, out, log=False, lse=None):
    """softmax (log_softmax with log) of each row of x2 into out (which may be x2); with an lse array (m,), the
    attention variant: rows whose max is not finite are shifted by 0 and lse gets each row's log-sum-exp."""
    m, n = _rows(x2)
    _launch("softmax_fwd", x2, (m,), (_threads(n // 4),),
            (x2, out, x2 if lse is None else lse, np.int64(n), np.int32(log), np.int32(lse is not None)))
    return out


def softmax_backward(g2, y2, log=False):
    """The input gradient of softmax (log_softmax with log) from the output rows y2."""
    xp = XP[g2.__class__]
    m, n = _rows(g2)
    gx = xp.empty_like(g2)
    _launch("softmax_bwd", g2, (m,), (_threads(n // 4),), (g2, y2, gx, np.int64(n), np.int32(log)))
    return gx


def class_targets(t, w, c, ignore_index, mean, scale, code, dtype):
    """(safe targets, per-sample coefficients, check record) of cross-entropy's class targets t (int64, 1-D) on
    the GPU in one launch; see class_targets in the source. w, if given, has `dtype`."""
    xp = XP[t.__class__]
    n = t.shape[0]
    safe = xp.empty(n, np.int64)
    s = xp.empty(n, dtype)
    rec = xp.empty(2, np.int64)
    _launch("class_targets", s, (1,), (_threads(n),),
            (t, s if w is None else w, safe, s, rec, np.int64(n), np.int64(c), np.int64(ignore_index),
             np.int32(w is not None), np.int32(mean), np.float64(scale), np.int64(code)))
    return safe, s, rec


def class_loss(x2, t, s):
    """(per-row losses, per-row log-sum-exp) of cross-entropy over the rows of x2 with safe targets t."""
    xp = XP[x2.__class__]
    m, n = _rows(x2)
    loss = xp.empty(m, x2.dtype)
    lse = xp.empty(m, x2.dtype)
    _launch("class_loss", x2, (m,), (_threads(n // 4),), (x2, t, s, loss, lse, np.int64(n)))
    return loss, lse


def class_loss_backward(x2, t, s, lse, g):
    """cross-entropy's input gradient as rows; g the output gradient (one value, or one per row)."""
    xp = XP[x2.__class__]
    m, n = _rows(x2)
    gx = xp.empty_like(x2)
    g = xp.ascontiguousarray(g.astype(x2.dtype, copy=False))
    _launch("class_loss_bwd", x2, (m,), (_threads(n // 4),), (x2, t, s, lse, g, gx, np.int64(n), np.int32(g.size > 1)))
    return gx
