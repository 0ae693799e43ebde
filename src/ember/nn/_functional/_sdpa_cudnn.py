"""scaled_dot_product_attention on a GPU through cuDNN's fused attention (flash attention), when NVIDIA's cuDNN
frontend is installed.

NOTE [ cuDNN attention ]
cuDNN's SDPA graphs compute softmax(q k^T * scale) v without forming the (L, S) matrix: the forward writes the
output and, per query row, the float32 log-sum-exp ("stats", (B, H, L, 1)) that the backward graph needs to
recompute the probabilities tile by tile. Dropout happens inside both kernels from a seed and an offset (int64 device
scalars, the seed drawn from ember's generator), so the backward drops exactly what the forward dropped without a
mask ever being stored. Taken where cuDNN supports the case: float16/bfloat16 (B, H, L, E) tensors on a GPU with
equal head counts, head dims that are multiples of 8 up to 128, no attn_mask (is_causal is top-left, as torch's),
any dropout below 1. Everything else -- and a signature cuDNN refuses (NOTE [ cuDNN graphs ]) -- takes ember's
own kernels. Graphs are cached per shapes, strides, dtype, scale, causal flag and dropout probability.
Double backward through this path is not supported (as with torch's fused kernels): it raises.
"""
import os

import numpy as np

import ember

from ... import backends
from ..._backend import XP
from ..._backend import cudnn as _cudnn

ENABLED = os.environ.get("EMBER_CUDNN_SDPA", "1") == "1"


def usable(q, k, v, mask, group):
    """Whether cuDNN may compute attention on device arrays q, k, v (NOTE [ cuDNN attention ])."""
    if not ENABLED or mask is not None or group != 1 or not backends.cudnn.enabled:
        return False
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4 or not (q.dtype == k.dtype == v.dtype):
        return False
    B, H, _, E = q.shape
    if k.shape[:2] != (B, H) or v.shape[:2] != (B, H) or k.shape[3] != E or 0 in q.shape or 0 in k.shape \
            or 0 in v.shape:
        return False
    ev = v.shape[3]
    if E % 8 or ev % 8 or E > 128 or ev > 128:
        return False
    cudnn = _cudnn.for_array(q)
    return cudnn is not None and q.dtype != np.float32 and _cudnn.data_type(cudnn, q.dtype) is not None


def _last_dim_dense(a):
    """a with unit stride in its last dim and 16-byte alignment (cuDNN reads rows of E elements)."""
    if a.strides[-1] == a.itemsize and a.data.ptr % 16 == 0 and all(s % 16 == 0 for s in a.strides[:-1]):
        return a
    return _cudnn.packed(a)


def _tensor(g, name, a, dt):
    return g.tensor(name=name, dim=list(a.shape), stride=_cudnn.elements(a), data_type=dt)


def _rng_tensors(cudnn, g, dropout_p):
    if not dropout_p:
        return {}, None
    seed = g.tensor(name="seed", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=cudnn.data_type.INT64)
    offset = g.tensor(name="offset", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=cudnn.data_type.INT64)
    return {"seed": seed, "offset": offset}, (float(dropout_p), seed, offset)


def _mask_kwargs(cudnn, causal, dropout):
    kw = {} if dropout is None else {"dropout": dropout}
    if causal:
        kw.update(diagonal_alignment=cudnn.diagonal_alignment.TOP_LEFT, diagonal_band_right_bound=0)
    return kw


def forward(q, k, v, causal, scale, dropout_p):
    """(out, (stats, seed, offset)) for usable() arrays, or None where cuDNN is not used for this signature."""
    q, k, v = _last_dim_dense(q), _last_dim_dense(k), _last_dim_dense(v)
    B, H, L, _ = q.shape
    xp = XP[q.__class__]
    out = xp.empty((B, H, L, v.shape[3]), q.dtype)
    stats = xp.empty((B, H, L, 1), np.float32)
    ins = {"q": q, "k": k, "v": v}
    rng = None
    if dropout_p:
        dev = ember.device("cuda", xp.cuda.runtime.getDevice())
        rng = (ember.randint(0, 2 ** 31 - 1, (1, 1, 1, 1), dtype=ember.int64, device=dev)._data,
               xp.zeros((1, 1, 1, 1), np.int64))
        ins["seed"], ins["offset"] = rng

    def build(cudnn, handle):
        dt = _cudnn.data_type(cudnn, q.dtype)
        g = cudnn.pygraph(io_data_type=dt, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
        t = {name: _tensor(g, name, a, dt) for name, a in (("q", q), ("k", k), ("v", v))}
        extra, dropout = _rng_tensors(cudnn, g, dropout_p)
        t.update(extra)
        o, st = g.sdpa(name="sdpa", q=t["q"], k=t["k"], v=t["v"], generate_stats=True, attn_scale=scale,
                       **_mask_kwargs(cudnn, causal, dropout))
        o.set_output(True).set_dim(list(out.shape)).set_stride(_cudnn.contiguous_strides(out.shape)).set_data_type(dt)
        st.set_output(True).set_dim(list(stats.shape)).set_stride(_cudnn.contiguous_strides(stats.shape)) \
            .set_data_type(cudnn.data_type.FLOAT)
        t["out"], t["stats"] = o, st
        return _cudnn.finish(cudnn, g), t

    key = ("sdpa", q.shape, q.strides, k.shape, k.strides, v.shape, v.strides, q.dtype.str, bool(causal),
           float(scale), float(dropout_p))
    if _cudnn.run(key, build, ins, {"out": out, "stats": stats}, q) is None:
        return None
    return out, (stats, rng)


def backward(q, k, v, out, g, saved, causal, scale, dropout_p):
    """(dq, dk, dv) of the attention forward() computed, for the output gradient g; None where cuDNN refuses."""
    stats, rng = saved
    q, k, v = _last_dim_dense(q), _last_dim_dense(k), _last_dim_dense(v)
    g = _cudnn.packed(g.astype(out.dtype, copy=False))
    xp = XP[q.__class__]
    grads = {"dq": xp.empty(q.shape, q.dtype), "dk": xp.empty(k.shape, k.dtype), "dv": xp.empty(v.shape, v.dtype)}
    ins = {"q": q, "k": k, "v": v, "o": out, "do": g, "stats": stats}
    if rng is not None:
        ins["seed"], ins["offset"] = rng
    deterministic = backends.cudnn.deterministic

    def build(cudnn, handle):
        dt = _cudnn.data_type(cudnn, q.dtype)
        gr = cudnn.pygraph(io_data_type=dt, intermediate_data_type=cudnn.data_type.FLOAT,
                           compute_data_type=cudnn.data_type.FLOAT, handle=handle)
        t = {name: _tensor(gr, name, a, dt) for name, a in (("q", q), ("k", k), ("v", v), ("o", out), ("do", g))}
        t["stats"] = _tensor(gr, "stats", stats, cudnn.data_type.FLOAT)
        extra, dropout = _rng_tensors(cudnn, gr, dropout_p)
        t.update(extra)
        dq, dk, dv = gr.sdpa_backward(name="sdpa_backward", q=t["q"], k=t["k"], v=t["v"], o=t["o"], dO=t["do"],
                                      stats=t["stats"], attn_scale=scale,
                                      use_deterministic_algorithm=deterministic,
                                      **_mask_kwargs(cudnn, causal, dropout))
        for name, d in (("dq", dq), ("dk", dk), ("dv", dv)):
            a = grads[name]
            d.set_output(True).set_dim(list(a.shape)).set_stride(_cudnn.contiguous_strides(a.shape)).set_data_type(dt)
            t[name] = d
        return _cudnn.finish(cudnn, gr), t

    key = ("sdpa_backward", q.shape, q.strides, k.shape, k.strides, v.shape, v.strides, q.dtype.str, bool(causal),
           float(scale), float(dropout_p), deterministic)
    if _cudnn.run(key, build, ins, grads, q) is None:
        return None
    return grads["dq"], grads["dk"], grads["dv"]
