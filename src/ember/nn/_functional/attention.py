"""Attention: scaled_dot_product_attention (direct or FlashAttention-style tiled) and multi_head_attention_forward.

NOTE [ Tiled attention ]
For long sequences the (L, S) score matrix does not fit comfortably in memory, so the forward walks query blocks
and, inside each, key blocks, keeping a running row maximum `m`, running sum `l` and an unnormalised output
accumulator (the online softmax of FlashAttention). It saves only the output and the row log-sum-exp; the backward
recomputes each tile's probabilities exp(s - lse) and accumulates dQ, dK, dV block by block. Short sequences take
a direct path (one matmul, softmax, matmul) that also keeps the probabilities for the backward, which is faster
when the whole matrix is small (on a GPU it keeps none and computes them again in the backward, one product and
one row kernel, so that a training step's memory stays near torch's, whose fused kernels keep none). Both paths run on NumPy arrays inside one Op; batch and head dimensions are
vectorised by broadcasting matmul.
"""
import math
import warnings

import numpy as np

import ember

from ..._autocast import AUTOCAST, cast_args
from ..._backend import XP, device_of, row_kernels
from ..._ops import random as _random
from ..._ops._dispatch import SAVE_BOTH, Op, dispatch, dispatch1, wrap
from ...autograd.grad_mode import GRAD
from ...backends.cuda import _SDP
from . import _sdpa_cudnn
from . import dropout as _fdropout
from . import linear as _flinear

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]

# The direct path is used while the whole score tensor holds at most _DIRECT_MAX elements (64 MiB in float32)
# and each (batch, head) matrix at most _DIRECT_MAX_LS: measured on CPU, the direct path is 10-30% faster up to
# L = S = 1024; beyond that the tiled path costs about the same time and a fraction of the memory.
_DIRECT_MAX = 1 << 24
_DIRECT_MAX_LS = 1024 * 1024
_BLOCK_Q = 256
_BLOCK_K = 512


# ----------------------------------------------------------------------------------------------------------------
# NumPy kernels
# ----------------------------------------------------------------------------------------------------------------

def _tile_bias(s, mask, causal, i0, i1, j0, j1):
    """Apply the mask and the causal rule to the score tile s (rows i0:i1, columns j0:j1) in place."""
    if mask is not None:
        mt = mask[..., i0:i1, j0:j1]
        if mt.dtype == np.bool_:
            np.copyto(s, -np.inf, where=~mt)
        else:
            s += mt
    if causal and j1 - 1 > i0:
        xp = np if s.__class__ is np.ndarray else XP[s.__class__]
        rows = xp.arange(i0, i1)[:, None]
        cols = xp.arange(j0, j1)[None, :]
        np.copyto(s, -np.inf, where=cols > rows)
    return s


def _softmax_rows(s):
    """Row softmax of s in place and the row log-sum-exp; fully masked rows give zeros and lse = -inf."""
    if row_kernels.available(s) and s.flags.c_contiguous and s.size:  # NOTE [ Row kernels ]
        lse = XP[s.__class__].empty(s.shape[:-1] + (1,), s.dtype)
        row_kernels.softmax_forward(s.reshape(-1, s.shape[-1]), s.reshape(-1, s.shape[-1]), lse=lse)
        return s, lse
    m = s.max(-1, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    s -= m
    np.exp(s, out=s)
    l = s.sum(-1, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = m + np.log(l)
    l[l == 0] = 1.0
    s /= l
    return s, lse


def _probs(q, k, mask, causal):
    """The whole probability matrix and the row log-sum-exp (q pre-scaled)."""
    return _softmax_rows(_tile_bias(q @ np.swapaxes(k, -1, -2), mask, causal, 0, q.shape[-2], 0, k.shape[-2]))


def _direct_fwd(q, k, v, mask, causal, keep):
    p, lse = _probs(q, k, mask, causal)
    out = (p if keep is None else _dropped(p, keep)) @ v
    return out, lse, p


def _dropped(x, keep):
    """x with attention dropout's mask applied: keep is (boolean mask, 1 / (1 - p)), one kernel on a GPU."""
    return _fdropout._masked_fwd(x, *keep)


def _tile(keep, i0, i1, j0, j1):
    return keep[0][..., i0:i1, j0:j1], keep[1]


def _tiled_fwd(q, k, v, mask, causal, keep):
    L, S = q.shape[-2], k.shape[-2]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    xp = np if q.__class__ is np.ndarray else XP[q.__class__]
    out = xp.empty(batch + (L, v.shape[-1]), dtype=q.dtype)
    lse = xp.empty(batch + (L, 1), dtype=q.dtype)
    kt = np.swapaxes(k, -1, -2)
    for i0 in range(0, L, _BLOCK_Q):
        i1 = min(i0 + _BLOCK_Q, L)
        qi = q[..., i0:i1, :]
        m = xp.full(batch + (i1 - i0, 1), -np.inf, dtype=q.dtype)
        l = xp.zeros_like(m)
        acc = xp.zeros(batch + (i1 - i0, v.shape[-1]), dtype=q.dtype)
        jend = min(S, i1) if causal else S
        for j0 in range(0, jend, _BLOCK_K):
            j1 = min(j0 + _BLOCK_K, S)
            s = _tile_bias(qi @ kt[..., j0:j1], mask, causal, i0, i1, j0, j1)
            m_new = np.maximum(m, s.max(-1, keepdims=True))
            m_safe = np.where(np.isfinite(m_new), m_new, 0.0)
            s -= m_safe
            np.exp(s, out=s)
            alpha = np.exp(m - m_safe)
            l *= alpha
            l += s.sum(-1, keepdims=True)
            acc *= alpha
            if keep is not None:
                s = _dropped(s, _tile(keep, i0, i1, j0, j1))
            acc += s @ v[..., j0:j1, :]
            m = m_new
        with np.errstate(divide="ignore"):
            lse[..., i0:i1, :] = np.where(np.isfinite(m), m, 0.0) + np.log(l)
        l[l == 0] = 1.0
        out[..., i0:i1, :] = acc / l
    return out, lse


def _direct_bwd(q, k, v, out, g, p, keep):
    """q arrives pre-scaled, so dK comes out scaled; dQ still needs the scale."""
    pd = p if keep is None else _dropped(p, keep)
    dv = np.swapaxes(pd, -1, -2) @ g
    dp = g @ np.swapaxes(v, -1, -2)
    if keep is not None:
        dp = _dropped(dp, keep)
    D = (g * out).sum(-1, keepdims=True)
    ds = p * (dp - D)
    return ds @ k, np.swapaxes(ds, -1, -2) @ q, dv


def _tiled_bwd(q, k, v, out, g, lse, mask, causal, keep):
    L, S = q.shape[-2], k.shape[-2]
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    xp = np if q.__class__ is np.ndarray else XP[q.__class__]
    dq = xp.zeros(batch + q.shape[-2:], dtype=q.dtype)
    dk = xp.zeros(batch + k.shape[-2:], dtype=q.dtype)
    dv = xp.zeros(batch + v.shape[-2:], dtype=q.dtype)
    D = (g * out).sum(-1, keepdims=True)
    kt = np.swapaxes(k, -1, -2)
    vt = np.swapaxes(v, -1, -2)
    for i0 in range(0, L, _BLOCK_Q):
        i1 = min(i0 + _BLOCK_Q, L)
        qi, gi, Di = q[..., i0:i1, :], g[..., i0:i1, :], D[..., i0:i1, :]
        lse_i = lse[..., i0:i1, :]
        jend = min(S, i1) if causal else S
        for j0 in range(0, jend, _BLOCK_K):
            j1 = min(j0 + _BLOCK_K, S)
            s = _tile_bias(qi @ kt[..., j0:j1], mask, causal, i0, i1, j0, j1)
            s -= lse_i
            p = np.exp(s, out=s)
            p[np.isnan(p)] = 0.0  # fully masked rows: -inf - (-inf)
            dp = gi @ vt[..., :, j0:j1]
            if keep is not None:
                kp = _tile(keep, i0, i1, j0, j1)
                dv[..., j0:j1, :] += np.swapaxes(_dropped(p, kp), -1, -2) @ gi
                dp = _dropped(dp, kp)
            else:
                dv[..., j0:j1, :] += np.swapaxes(p, -1, -2) @ gi
            dp -= Di
            dp *= p
            dq[..., i0:i1, :] += dp @ k[..., j0:j1, :]
            dk[..., j0:j1, :] += np.swapaxes(dp, -1, -2) @ qi
    return dq, dk, dv


# ----------------------------------------------------------------------------------------------------------------
# The Op
# ----------------------------------------------------------------------------------------------------------------

def _compute_dtype(dt):
    return dt if dt in (np.float32, np.float64) else np.dtype(np.float32)


def _sdpa_fwd(q, k, v, mask, causal, scale, group, keep):
    dt = q.dtype
    cdt = _compute_dtype(dt)
    if group > 1:
        k = np.repeat(k, group, axis=-3)
        v = np.repeat(v, group, axis=-3)
    qs = q.astype(cdt, copy=False) * cdt.type(scale)
    k = k.astype(cdt, copy=False)
    v = v.astype(cdt, copy=False)
    if mask is not None and mask.dtype != np.bool_:
        mask = mask.astype(cdt, copy=False)
    ls = q.shape[-2] * k.shape[-2]
    if ls <= _DIRECT_MAX_LS and ls * math.prod(np.broadcast_shapes(q.shape[:-2], k.shape[:-2])) <= _DIRECT_MAX:
        out, lse, p = _direct_fwd(qs, k, v, mask, causal, keep)
        if q.__class__ is not np.ndarray:
            p = True  # on a GPU the backward computes it again (one product, one kernel): memory, as torch's kernels
    else:
        (out, lse), p = _tiled_fwd(qs, k, v, mask, causal, keep), None
    return out.astype(dt, copy=False), (lse, p)


def _sdpa_bwd(ctx, g):
    q, k, v = ctx.inputs
    mask, causal, scale, group, keep = ctx.attrs
    if GRAD[0]:  # create_graph: differentiate the composite formula instead
        return _math_backward(ctx, g)
    lse, p = ctx.extra
    dt = q._data.dtype
    cdt = _compute_dtype(dt)
    qa, ka, va = q._data.astype(cdt, copy=False), k._data.astype(cdt, copy=False), v._data.astype(cdt, copy=False)
    if group > 1:
        ka = np.repeat(ka, group, axis=-3)
        va = np.repeat(va, group, axis=-3)
    out = ctx.output._data.astype(cdt, copy=False)
    ga = g._data.astype(cdt, copy=False)
    sc = cdt.type(scale)
    if mask is not None and mask.dtype != np.bool_:
        mask = mask.astype(cdt, copy=False)
    if p is True:  # the direct path without its probabilities kept
        qs = qa * sc
        dq, dk, dv = _direct_bwd(qs, ka, va, out, ga, _probs(qs, ka, mask, causal)[0], keep)
    elif p is not None:
        dq, dk, dv = _direct_bwd(qa * sc, ka, va, out, ga, p, keep)
    else:
        dq, dk, dv = _tiled_bwd(qa * sc, ka, va, out, ga, lse, mask, causal, keep)
    dq *= sc
    if group > 1:
        dk = dk.reshape(dk.shape[:-3] + (-1, group) + dk.shape[-2:]).sum(-3)
        dv = dv.reshape(dv.shape[:-3] + (-1, group) + dv.shape[-2:]).sum(-3)
    return wrap(dq.astype(dt, copy=False)), wrap(dk.astype(dt, copy=False)), wrap(dv.astype(dt, copy=False))


_SDPA = Op("scaled_dot_product_attention", _sdpa_fwd, _sdpa_bwd, save=SAVE_BOTH, extra=True,
           node_name="ScaledDotProductFlashAttentionForCpuBackward0")


def _cudnn_fwd(q, k, v, res, causal, scale, dropout_p):
    return res  # computed before dispatch: cuDNN may refuse a signature, and then ember's kernels run instead


def _cudnn_bwd(ctx, g):
    q, k, v = ctx.inputs
    causal, scale, dropout_p = ctx.attrs[1:]
    if GRAD[0]:
        if dropout_p:
            raise RuntimeError("scaled_dot_product_attention: double backward through cuDNN attention with dropout "
                               "is not supported; run it under sdpa_kernel(SDPBackend.MATH)")
        return _math_backward_of(q, k, v, None, causal, scale, 1, None, g, ctx.needs_input_grad)
    grads = _sdpa_cudnn.backward(q._data, k._data, v._data, ctx.output._data, g._data, ctx.extra, causal, scale,
                                 dropout_p)
    if grads is None:
        if dropout_p:
            raise RuntimeError("scaled_dot_product_attention: cuDNN computed the forward but refuses its backward "
                               f"(q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, {q.dtype})")
        with ember.enable_grad():  # record the composite formula to differentiate it once
            return _math_backward_of(q, k, v, None, causal, scale, 1, None, g, ctx.needs_input_grad, False)
    return tuple(wrap(d) for d in grads)


_SDPA_CUDNN = Op("scaled_dot_product_attention", _cudnn_fwd, _cudnn_bwd, save=SAVE_BOTH, extra=True,
                 node_name="ScaledDotProductCudnnAttentionBackward0")


def _math_attention(q, k, v, mask, causal, scale, group, keep):
    """The composite (differentiable to any order) formula; mask is a Tensor or None."""
    if group > 1:
        k = k.repeat_interleave(group, dim=-3)
        v = v.repeat_interleave(group, dim=-3)
    s = ember.matmul(q * scale, k.transpose(-2, -1))
    L, S = q.shape[-2], k.shape[-2]
    if causal:
        s = s.masked_fill(ember.ones(L, S, dtype=ember.bool, device=q.device).triu(1), float("-inf"))
    if mask is not None:
        s = s.masked_fill(mask.logical_not(), float("-inf")) if mask.dtype == ember.bool else s + mask
    m = s.detach().amax(-1, keepdim=True)
    m = m.masked_fill(~ember.isfinite(m), 0.0)
    e = (s - m).exp()
    den = e.sum(-1, keepdim=True)
    p = e / den.masked_fill(den == 0, 1.0)
    if keep is not None:
        p = p * (ember.Tensor._make(keep[0]).to(p.dtype) * keep[1])
    return ember.matmul(p, v)


def _math_backward(ctx, g):
    q, k, v = ctx.inputs
    mask, causal, scale, group, keep = ctx.attrs
    mt = None if mask is None else ember.Tensor._make(mask.copy())
    return _math_backward_of(q, k, v, mt, causal, scale, group, keep, g, ctx.needs_input_grad)


def _math_backward_of(q, k, v, mask, causal, scale, group, keep, g, needs, create_graph=True):
    want = [t for t, need in zip((q, k, v), needs) if need]
    grads = iter(ember.autograd.grad(_math_attention(q, k, v, mask, causal, scale, group, keep), want, g,
                                     create_graph=create_graph, allow_unused=True))
    return tuple(next(grads) if need else None for need in needs)


# ----------------------------------------------------------------------------------------------------------------
# Public functions
# ----------------------------------------------------------------------------------------------------------------

_DT_NAME = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def _dt_name(t):
    return _DT_NAME.get(str(t.dtype).replace("ember.", ""), str(t.dtype))


def _keep_fwd(q, shape, p):
    """The keep mask of attention dropout (True with probability 1 - p), as dropout's."""
    return _random._engine(None, device_of(q)).keep(shape, p)


_KEEP = Op("attention_dropout_mask", _keep_fwd)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """Same as `torch.nn.functional.scaled_dot_product_attention`.

    Long sequences are computed tile by tile without forming the full attention matrix (see NOTE [ Tiled
    attention ]). A float `attn_mask` that requires grad takes the composite path and receives its gradient.
    """
    if AUTOCAST[0]:
        query, key, value, attn_mask = cast_args("scaled_dot_product_attention", (query, key, value, attn_mask))
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            f"Expected query, key, and value to have the same dtype, but got query.dtype: {_dt_name(query)} "
            f"key.dtype: {_dt_name(key)} and value.dtype: {_dt_name(value)} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError("scaled_dot_product_attention: query, key and value must have at least 2 dimensions")
    if not query.is_floating_point():
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating point dtype, got {query.dtype}")
    E = query.shape[-1]
    if key.shape[-1] != E:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{_bh(query)}, {E}] but got: [{_bh(key)}, {key.shape[-1]}].")
    if key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: key and value must have the same sequence length, "
                           f"got {key.shape[-2]} and {value.shape[-2]}")
    group = 1
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3 and query.shape[-3] != key.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or value.shape[-3] != hk:
            raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
        group = hq // hk
    mask_arr = None
    if attn_mask is not None:
        if attn_mask.dtype != ember.bool and attn_mask.dtype != query.dtype:
            raise RuntimeError(
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: "
                f"{_dt_name(attn_mask)} and  query.dtype: {_dt_name(query)} instead.")
        mask_arr = attn_mask._data
        L, S = query.shape[-2], key.shape[-2]
        if mask_arr.ndim < 2 or mask_arr.shape[-2:] != (L, S):
            mask_arr = np.broadcast_to(mask_arr, np.broadcast_shapes(mask_arr.shape, (L, S)))
    sc = 1.0 / math.sqrt(E) if scale is None else float(scale)
    fused = _SDP["flash"] if query._data.__class__ is np.ndarray else \
        _SDP["flash"] or _SDP["mem_efficient"] or _SDP["cudnn"]
    if fused and _sdpa_cudnn.usable(query._data, key._data, value._data, mask_arr, group) and dropout_p < 1.0:
        res = _sdpa_cudnn.forward(query._data, key._data, value._data, bool(is_causal), sc, float(dropout_p))
        if res is not None:
            return dispatch(_SDPA_CUDNN, (query, key, value), res, bool(is_causal), sc, float(dropout_p))
    keep = None
    if dropout_p > 0.0:
        L, S = query.shape[-2], key.shape[-2]
        shape = tuple(np.broadcast_shapes(query.shape[:-2], key.shape[:-2])) + (L, S)
        if dropout_p >= 1.0:
            keep = ember.zeros(shape, dtype=ember.bool, device=query.device)._data, 1.0
        else:  # drawn by an op: tracing (ember.compile) sees the draw
            keep = dispatch1(_KEEP, query, shape, dropout_p)._data, 1.0 / (1.0 - dropout_p)
    if not (fused or _SDP["math"]):
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to "
                           "turning off both the math kernel and the fused kernels.")
    if attn_mask is not None and attn_mask.requires_grad and GRAD[0] or not fused:
        return _math_attention(query, key, value, attn_mask, is_causal, sc, group, keep)
    return dispatch(_SDPA, (query, key, value), mask_arr, bool(is_causal), sc, group, keep)


def _bh(t):
    return t.shape[0] * t.shape[1] if t.dim() >= 4 else (t.shape[0] if t.dim() == 3 else 1)


def _linear(x, w, b):
    return _flinear.linear(x, w, b)


def _float_mask(mask, name, dtype):
    """MHA masks: bool True means 'masked out'; turned into an additive float mask."""
    if mask is None:
        return None
    if mask.dtype != ember.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if mask.dtype == ember.bool:
        return ember.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(mask, float("-inf"))
    return mask


def _pad_last(mask):
    return None if mask is None else ember.cat([mask, ember.zeros(mask.shape[:-1] + (1,), dtype=mask.dtype, device=mask.device)], -1)


def _project(query, key, value, w, b, sep, qw, kw, vw):
    if not sep:
        if query is key and key is value:
            return _linear(query, w, b).chunk(3, dim=-1)
        wq, wk, wv = w.chunk(3)
        bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
        return _linear(query, wq, bq), _linear(key, wk, bk), _linear(value, wv, bv)
    bq, bk, bv = (None, None, None) if b is None else b.chunk(3)
    return _linear(query, qw, bq), _linear(key, kw, bk), _linear(value, vw, bv)


def _check_mha_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D "
                                 f"but found {key_padding_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                         "query tensor")


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Same as `torch.nn.functional.multi_head_attention_forward` (sequence-first inputs)."""
    batched = _check_mha_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if key_padding_mask is not None and attn_mask is not None and key_padding_mask.dtype != attn_mask.dtype and \
            (key_padding_mask.dtype == ember.bool or key_padding_mask.is_floating_point()):
        warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both "
                      "instead.", UserWarning, stacklevel=2)
    key_padding_mask = _float_mask(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # the hint alone drives the causal rule
    else:
        attn_mask = _float_mask(attn_mask, "attn_mask", query.dtype)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if not use_separate_proj_weight and key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                       q_proj_weight, k_proj_weight, v_proj_weight)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = ember.cat([k, bias_k.repeat(1, bsz, 1)])
        v = ember.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")
    # (seq, batch, embed) -> (batch, heads, seq, head_dim) as views: no copies before the kernel
    H = num_heads
    q = q.reshape(tgt_len, bsz, H, head_dim).permute(1, 2, 0, 3)
    k = k.reshape(k.shape[0], bsz, H, head_dim).permute(1, 2, 0, 3) if static_k is None else \
        _static(static_k, bsz, H, head_dim, "k")
    v = v.reshape(v.shape[0], bsz, H, head_dim).permute(1, 2, 0, 3) if static_v is None else \
        _static(static_v, bsz, H, head_dim, "v")
    if add_zero_attn:
        zeros = ember.zeros((bsz, H, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = ember.cat([k, zeros], 2), ember.cat([v, zeros], 2)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    src_len = k.shape[2]
    if attn_mask is not None:  # (1 or N*H, L, S) -> (1 or N, 1 or H, L, S)
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else attn_mask.reshape(bsz, H, -1, src_len)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        s = ember.matmul(q * math.sqrt(1.0 / float(head_dim)), k.transpose(-2, -1))
        if attn_mask is not None:
            s = s + attn_mask
        w = _softmax_last(s)
        if dropout_p > 0.0:
            keep = (ember.rand(w.shape, device=w.device) >= dropout_p).to(w.dtype)
            w = w * keep / (1.0 - dropout_p)
        out = _merge_heads(ember.matmul(w, v), out_proj_weight, out_proj_bias, tgt_len, bsz, embed_dim)
        if average_attn_weights:
            w = w.mean(dim=1)
        if not batched:
            out, w = out.squeeze(1), w.squeeze(0)
        return out, w
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = _merge_heads(out, out_proj_weight, out_proj_bias, tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    return out, None


def _softmax_last(s):
    softmax = getattr(ember, "softmax", None)  # the fused kernel when present
    return softmax(s, -1) if softmax is not None else (s - s.logsumexp(-1, keepdim=True)).exp()


def _merge_heads(out, w, b, tgt_len, bsz, embed_dim):
    """(batch, heads, seq, head_dim) -> output projection of (seq, batch, embed)."""
    out = out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
    return _linear(out, w, b).reshape(tgt_len, bsz, -1)


def _static(t, bsz, num_heads, head_dim, name):
    if t.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {bsz * num_heads}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t.reshape(bsz, num_heads, t.shape[1], head_dim)
