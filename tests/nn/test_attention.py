"""F.scaled_dot_product_attention (direct and tiled paths), F.multi_head_attention_forward, nn.MultiheadAttention."""
import math
import tracemalloc

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember.nn._functional import attention as attn_impl
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad

# ------------------------------------------------------------------------------------------------------------------
# NumPy reference
# ------------------------------------------------------------------------------------------------------------------

def ref_sdpa(q, k, v, mask=None, causal=False, scale=None, group=1):
    """The direct formula; fully masked rows give zeros (as torch's CPU kernel)."""
    if group > 1:
        k = np.repeat(k, group, axis=-3)
        v = np.repeat(v, group, axis=-3)
    sc = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ np.swapaxes(k, -1, -2)) * sc
    L, S = q.shape[-2], k.shape[-2]
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    den = e.sum(-1, keepdims=True)
    return (e / np.where(den == 0, 1.0, den)) @ v


@pytest.fixture(params=["direct", "tiled"])
def path(request, monkeypatch):
    """Run a test through both kernels; tiny blocks make the tiled path walk several tiles."""
    if request.param == "tiled":
        monkeypatch.setattr(attn_impl, "_DIRECT_MAX", 0)
        monkeypatch.setattr(attn_impl, "_BLOCK_Q", 3)
        monkeypatch.setattr(attn_impl, "_BLOCK_K", 4)
    return request.param


def _qkv(B=(2, 3), L=7, S=9, E=4, Ev=5, Hk=None):
    def make(rng):
        kb = B if Hk is None else B[:-1] + (Hk,)
        return [rng.standard_normal(B + (L, E)), rng.standard_normal(kb + (S, E)), rng.standard_normal(kb + (S, Ev))]
    return make


def _with(make, extra):
    return lambda rng: make(rng) + [extra(rng)]


def _bool_mask(shape, full_row=None):
    def make(rng):
        m = rng.random(shape) > 0.35
        if full_row is not None:
            m[..., full_row, :] = False
        return m
    return make


SPECS = [
    OpSpec("plain", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), ref_sdpa, _qkv()),
    OpSpec("causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
           lambda q, k, v: ref_sdpa(q, k, v, causal=True), _qkv()),
    OpSpec("causal_long_q", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
           lambda q, k, v: ref_sdpa(q, k, v, causal=True), _qkv(L=11, S=6)),
    OpSpec("scale", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
           lambda q, k, v: ref_sdpa(q, k, v, scale=0.3), _qkv()),
    OpSpec("bool_mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
           lambda q, k, v, m: ref_sdpa(q, k, v, mask=m), _with(_qkv(), _bool_mask((7, 9))), nondiff=(3,)),
    OpSpec("bool_mask_full_row", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
           lambda q, k, v, m: ref_sdpa(q, k, v, mask=m), _with(_qkv(), _bool_mask((3, 7, 9), full_row=2)),
           nondiff=(3,)),
    OpSpec("float_mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
           lambda q, k, v, m: ref_sdpa(q, k, v, mask=m), _with(_qkv(), lambda r: r.standard_normal((2, 1, 7, 9))),
           nondiff=(3,)),
    OpSpec("mask_and_causal",
           lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True),
           lambda q, k, v, m: ref_sdpa(q, k, v, mask=m, causal=True), _with(_qkv(), _bool_mask((7, 9))),
           nondiff=(3,)),
    OpSpec("gqa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
           lambda q, k, v: ref_sdpa(q, k, v, group=3), _qkv(B=(2, 6), Hk=2)),
    OpSpec("gqa_causal_mask",
           lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True, enable_gqa=True),
           lambda q, k, v, m: ref_sdpa(q, k, v, mask=m, causal=True, group=2),
           _with(_qkv(B=(1, 4), Hk=2), lambda r: r.standard_normal((7, 9))), nondiff=(3,)),
    OpSpec("3d", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), ref_sdpa, _qkv(B=(3,))),
    OpSpec("2d", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), ref_sdpa, _qkv(B=())),
    OpSpec("broadcast_batch", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), ref_sdpa,
           lambda r: [r.standard_normal((2, 3, 5, 4)), r.standard_normal((3, 6, 4)), r.standard_normal((3, 6, 2))]),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_sdpa_forward(spec, path):
    check_forward(spec, np.float64)
    check_forward(spec, np.float32)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_sdpa_gradcheck(spec, path):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.name in ("plain", "bool_mask_full_row", "gqa_causal_mask")],
                         ids=repr)
def test_sdpa_gradgradcheck(spec, path):
    spec.inputs = _shrink(spec)
    check_gradgrad(spec)


def _shrink(spec):
    # gradgradcheck is quadratic in the input size: keep the tensors small
    make = spec.inputs
    return lambda rng: [a[:1] if a.ndim >= 4 else a for a in make(rng)]


def test_sdpa_learned_float_mask_gets_grad(path):
    rng = np.random.default_rng(1)
    q, k, v = (ember.tensor(rng.standard_normal((2, 5, 3)), requires_grad=True) for _ in range(3))
    bias = ember.tensor(rng.standard_normal((5, 5)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v, attn_mask=b),
                                    (q, k, v, bias))


def test_sdpa_grad_fn_name_and_dtypes():
    q = ember.randn(2, 4, 3, requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert out.dtype == ember.float32
    assert F.scaled_dot_product_attention(q.double(), q.double(), q.double()).dtype == ember.float64
    h = q.detach().half()
    out16 = F.scaled_dot_product_attention(h, h, h)
    assert out16.dtype == ember.float16
    assert_close(out16.float(), ref_sdpa(*[h.float().numpy()] * 3), atol=2e-3, rtol=2e-3)


def test_sdpa_tiled_matches_direct_on_long_sequence(monkeypatch):
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 300, 16)).astype(np.float32) for _ in range(3))
    g = rng.standard_normal((2, 300, 16)).astype(np.float32)
    results = []
    for limit in (10 ** 9, 0):
        monkeypatch.setattr(attn_impl, "_DIRECT_MAX", limit)
        monkeypatch.setattr(attn_impl, "_BLOCK_Q", 64)
        monkeypatch.setattr(attn_impl, "_BLOCK_K", 128)
        ts = [ember.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ts, is_causal=True)
        out.backward(ember.tensor(g))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, atol=2e-5, rtol=1e-4)


def test_sdpa_tiled_memory_stays_small():
    L, d = 4096, 64
    rng = np.random.default_rng(3)
    q, k, v = (ember.tensor(rng.standard_normal((1, L, d)).astype(np.float32), requires_grad=True)
               for _ in range(3))
    full = L * L * 4
    tracemalloc.start()
    try:
        out = F.scaled_dot_product_attention(q, k, v)
        _, peak_fwd = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        out.sum().backward()
        _, peak_bwd = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak_fwd < full / 8, (peak_fwd, full)
    assert peak_bwd < full / 8, (peak_bwd, full)
    assert_close(out[0, :3], ref_sdpa(q[0, :3].detach().numpy(), k[0].detach().numpy(), v[0].detach().numpy()),
                 atol=1e-5, rtol=1e-4)


def test_sdpa_dropout():
    q = ember.randn(2, 6, 4)
    v = ember.randn(2, 6, 4)
    assert (F.scaled_dot_product_attention(q, q, v, dropout_p=1.0) == 0).all()
    ember.manual_seed(0)
    a = F.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    ember.manual_seed(0)
    b = F.scaled_dot_product_attention(q, q, v, dropout_p=0.5)
    assert_close(a, b.numpy())
    # The dropped-out weights are rescaled by 1/(1-p): averaged over many draws the result is unbiased.
    q, k = ember.ones(1, 400, 1), ember.ones(1, 200, 1)
    vals = ember.arange(200.0).reshape(1, 200, 1)
    outs = F.scaled_dot_product_attention(q, k, vals, dropout_p=0.3)
    assert abs(float(outs.mean()) - 99.5) < 3.0


def test_sdpa_dropout_gradcheck():
    rng = np.random.default_rng(4)
    q, k, v = (ember.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True) for _ in range(3))

    def fn(q, k, v):
        ember.manual_seed(7)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4)
    assert ember.autograd.gradcheck(fn, (q, k, v))


def test_sdpa_errors():
    q = ember.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype, but got "
                                           "query.dtype: float key.dtype: double and value.dtype: float instead."):
        F.scaled_dot_product_attention(q, q.double(), q)
    with pytest.raises(RuntimeError, match="batch2"):
        F.scaled_dot_product_attention(q, ember.randn(2, 3, 5), ember.randn(2, 3, 4))
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide"):
        F.scaled_dot_product_attention(ember.randn(1, 3, 2, 4), ember.randn(1, 2, 2, 4), ember.randn(1, 2, 2, 4),
                                       enable_gqa=True)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(3, 3, dtype=ember.int64))


# ------------------------------------------------------------------------------------------------------------------
# multi-head attention
# ------------------------------------------------------------------------------------------------------------------

def _ref_mha(x, w_in, b_in, w_out, b_out, heads, kpm=None):
    """Self-attention on (L, N, E) in NumPy; kpm True = padded."""
    L, N, E = x.shape
    hd = E // heads
    qkv = x @ w_in.T + b_in
    q, k, v = (qkv[..., i * E:(i + 1) * E].reshape(L, N, heads, hd).transpose(1, 2, 0, 3) for i in range(3))
    mask = None if kpm is None else ~kpm[:, None, None, :]
    out = ref_sdpa(q, k, v, mask=mask)
    out = out.transpose(2, 0, 1, 3).reshape(L, N, E)
    return out @ w_out.T + b_out


def _fill(mha, rng):
    with ember.no_grad():
        for p in mha.parameters():
            p.copy_(ember.tensor(rng.standard_normal(tuple(p.shape)) * 0.3))


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_matches_numpy(need_weights):
    rng = np.random.default_rng(5)
    mha = nn.MultiheadAttention(8, 2).double()
    _fill(mha, rng)
    x = rng.standard_normal((5, 3, 8))
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    out, w = mha(*[ember.tensor(x)] * 3, key_padding_mask=ember.tensor(kpm), need_weights=need_weights)
    expected = _ref_mha(x, mha.in_proj_weight.detach().numpy(), mha.in_proj_bias.detach().numpy(),
                        mha.out_proj.weight.detach().numpy(), mha.out_proj.bias.detach().numpy(), 2, kpm)
    assert_close(out, expected, atol=1e-10)
    if need_weights:
        assert tuple(w.shape) == (3, 5, 5)
        assert_close(w.sum(-1), np.ones((3, 5)), atol=1e-12)
        assert_close(w[1, :, 3:], np.zeros((5, 2)))
    else:
        assert w is None


def test_mha_parameters_and_init():
    mha = nn.MultiheadAttention(12, 3)
    assert list(mha.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert mha.q_proj_weight is None and mha.bias_k is None
    assert (mha.in_proj_bias == 0).all() and (mha.out_proj.bias == 0).all()
    bound = math.sqrt(6.0 / (12 + 36))
    assert float(mha.in_proj_weight.detach().abs().max()) <= bound
    assert type(mha.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    assert isinstance(mha.out_proj, nn.Linear)
    sep = nn.MultiheadAttention(12, 3, kdim=5, vdim=7, add_bias_kv=True, bias=False)
    assert list(sep.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v",
                                      "out_proj.weight"]
    assert tuple(sep.k_proj_weight.shape) == (12, 5) and tuple(sep.v_proj_weight.shape) == (12, 7)
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 3)


def test_mha_batch_first_unbatched_and_average():
    rng = np.random.default_rng(6)
    mha = nn.MultiheadAttention(8, 4, batch_first=True).eval()
    x = ember.tensor(rng.standard_normal((2, 5, 8)).astype(np.float32))
    out, w = mha(x, x, x)
    ref = nn.MultiheadAttention(8, 4).eval()
    ref.load_state_dict(mha.state_dict())
    out_sf, w_sf = ref(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))
    assert_close(out, out_sf.transpose(0, 1).detach().numpy(), atol=1e-6)
    assert_close(w, w_sf.detach().numpy(), atol=1e-6)
    out_u, w_u = mha(x[0], x[0], x[0], average_attn_weights=False)
    assert tuple(out_u.shape) == (5, 8) and tuple(w_u.shape) == (4, 5, 5)
    assert_close(out_u, out[0].detach().numpy(), atol=1e-6)
    assert_close(w_u.mean(0), w[0].detach().numpy(), atol=1e-6)


def test_mha_causal_hint_and_masks_agree():
    rng = np.random.default_rng(7)
    mha = nn.MultiheadAttention(8, 2).eval()
    x = ember.tensor(rng.standard_normal((6, 2, 8)).astype(np.float32))
    causal = nn.Transformer.generate_square_subsequent_mask(6)
    bool_mask = ember.ones(6, 6, dtype=ember.bool).triu(1)
    a = mha(x, x, x, attn_mask=causal, need_weights=False)[0]
    b = mha(x, x, x, attn_mask=causal, is_causal=True, need_weights=False)[0]
    c = mha(x, x, x, attn_mask=bool_mask)[0]
    three_d = bool_mask.unsqueeze(0).expand(4, 6, 6)
    d = mha(x, x, x, attn_mask=three_d, need_weights=False)[0]
    for other in (b, c, d):
        assert_close(other, a.detach().numpy(), atol=1e-6)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
        mha(x, x, x, attn_mask=ember.zeros(5, 6))


def test_mha_gradcheck_all_options():
    rng = np.random.default_rng(8)
    mha = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5).double()
    q = ember.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    k = ember.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)
    v = ember.tensor(rng.standard_normal((4, 2, 5)), requires_grad=True)
    kpm = ember.tensor(np.array([[False] * 4, [False, False, True, True]]))
    for nw in (True, False):
        assert ember.autograd.gradcheck(
            lambda q, k, v, nw=nw: mha(q, k, v, key_padding_mask=kpm, need_weights=nw)[0], (q, k, v))
    assert ember.autograd.gradcheck(lambda q, k, v: mha(q, k, v)[1], (q, k, v))


def test_mha_dropout_train_vs_eval():
    mha = nn.MultiheadAttention(8, 2, dropout=0.5)
    x = ember.randn(4, 2, 8)
    mha.eval()
    a = mha(x, x, x)[0]
    assert_close(mha(x, x, x)[0], a.detach().numpy())
    mha.train()
    ember.manual_seed(0)
    b = mha(x, x, x, need_weights=False)[0]
    assert not np.allclose(b.detach().numpy(), a.detach().numpy())
    out = mha(x, x, x)
    out[0].sum().backward()
    assert mha.in_proj_weight.grad is not None


def test_mha_pickle_and_deepcopy_roundtrip():
    import copy
    import pickle
    mha = nn.MultiheadAttention(8, 2).eval()
    x = ember.randn(3, 2, 8)
    expected = mha(x, x, x)[0].detach().numpy()
    for clone in (pickle.loads(pickle.dumps(mha)), copy.deepcopy(mha)):
        assert type(clone.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert_close(clone(x, x, x)[0], expected)
