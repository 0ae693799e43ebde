"""scaled_dot_product_attention through cuDNN (nn/_functional/_sdpa_cudnn.py, NOTE [ cuDNN attention ]): outputs
and gradients against the CPU's float64 math, dropout that the backward repeats exactly, and the cases that stay
on ember's own kernels. The cuDNN checks need a GPU with the cuDNN frontend; the fallbacks run anywhere.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import cudnn as _cudnn
from ember.nn._functional import _sdpa_cudnn


def _real_cudnn(gpu):
    if getattr(gpu, "IS_FAKE", False):
        pytest.skip("the fake CuPy has no cuDNN")
    if _cudnn.module() is None:
        pytest.skip(f"no cuDNN frontend (nvidia-cudnn-frontend): {_cudnn.WHY_NOT[0]}")


def _sdpa_graphs():
    return {key[0]: entry for key, entry in _cudnn.GRAPHS.items() if key[0].startswith("sdpa")}


def _attention(qkv, dev, dtype, **kw):
    ts = [ember.tensor(a, dtype=dtype, device=dev, requires_grad=True) for a in qkv]
    y = F.scaled_dot_product_attention(*ts, **kw)
    w = np.cos(np.arange(y.numel())).reshape(y.shape)
    y.backward(ember.tensor(w, dtype=dtype, device=dev))
    return [t.detach().cpu().double().numpy() for t in [y] + [t.grad for t in ts]]


SHAPES = {"self": ((2, 3, 17, 32), (2, 3, 17, 32)), "cross": ((2, 2, 9, 64), (2, 2, 24, 64)),
          "long": ((1, 4, 300, 64), (1, 4, 300, 64))}


@pytest.mark.parametrize("dtype, tol", [(ember.float16, 2e-2), (ember.bfloat16, 8e-2)], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", list(SHAPES))
def test_cudnn_attention_matches_cpu(shape, causal, dtype, tol, gpu):
    _real_cudnn(gpu)
    qs, ks = SHAPES[shape]
    rng = np.random.default_rng(0)
    qkv = [rng.standard_normal(qs), rng.standard_normal(ks), rng.standard_normal(ks)]
    want = _attention(qkv, "cpu", ember.float64, is_causal=causal)
    _cudnn.GRAPHS.clear()
    _cudnn.UNSUPPORTED.clear()
    got = _attention(qkv, "cuda", dtype, is_causal=causal)
    assert not _cudnn.UNSUPPORTED, _cudnn.UNSUPPORTED
    graphs = _sdpa_graphs()
    assert graphs.keys() == {"sdpa", "sdpa_backward"} and all(graphs.values())  # both directions ran on cuDNN
    for g, c in zip(got, want):
        np.testing.assert_allclose(g, c, rtol=tol, atol=tol * max(1.0, np.abs(c).max()))


def test_dropout_is_the_same_in_forward_and_backward(gpu):
    """out = P_drop v is linear in v, so sum(out * w) = sum(v * dv) exactly when the backward drops what the
    forward dropped; the same seed gives the same output, and kept weights are scaled by 1 / (1 - p)."""
    _real_cudnn(gpu)
    q = ember.randn(2, 4, 64, 32, device="cuda", dtype=ember.float16)
    k = ember.randn(2, 4, 64, 32, device="cuda", dtype=ember.float16)
    v = ember.randn(2, 4, 64, 32, device="cuda", dtype=ember.float16, requires_grad=True)
    w = ember.randn(2, 4, 64, 32, device="cuda", dtype=ember.float16)
    ember.manual_seed(7)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
    (out * w).sum().backward()
    lhs = (out.double() * w.double()).sum().item()
    rhs = (v.detach().double() * v.grad.double()).sum().item()
    assert lhs == pytest.approx(rhs, rel=2e-2, abs=2e-1)
    ember.manual_seed(7)
    again = F.scaled_dot_product_attention(q, k, v.detach(), dropout_p=0.3)
    assert ember.equal(out.detach(), again)
    plain = F.scaled_dot_product_attention(q, k, v.detach())
    assert not ember.equal(out.detach(), plain)
    ones = ember.ones(1, 1, 256, 8, device="cuda", dtype=ember.float16)
    zeros = ember.zeros(1, 1, 256, 8, device="cuda", dtype=ember.float16)
    mean = F.scaled_dot_product_attention(zeros, zeros, ones, dropout_p=0.5).float().mean().item()
    assert mean == pytest.approx(1.0, abs=0.05)  # uniform weights 1/S, half dropped, the rest doubled


def test_strided_heads_from_multi_head_attention(gpu):
    """MultiheadAttention hands SDPA permuted views of its projections: strides that cuDNN takes as they are."""
    _real_cudnn(gpu)
    ember.manual_seed(0)
    mha = ember.nn.MultiheadAttention(64, 4, batch_first=True, dropout=0.0)
    x = ember.randn(3, 20, 64)
    want = mha(x, x, x, need_weights=False)[0]
    want.sum().backward()
    gw = mha.in_proj_weight.grad.clone()
    mha.zero_grad()
    mha.to("cuda", ember.float16)
    _cudnn.GRAPHS.clear()
    got = mha(x.to("cuda", ember.float16), x.to("cuda", ember.float16), x.to("cuda", ember.float16),
              need_weights=False)[0]
    got.float().sum().backward()
    assert set(_sdpa_graphs()) == {"sdpa", "sdpa_backward"}
    np.testing.assert_allclose(got.float().cpu().detach().numpy(), want.detach().numpy(), atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(mha.in_proj_weight.grad.float().cpu().numpy(), gw.numpy(), atol=5e-2, rtol=5e-2)


def test_double_backward(gpu):
    """Without dropout a double backward recomputes the composite formula; with dropout it is refused."""
    _real_cudnn(gpu)
    q, k, v = (ember.randn(1, 2, 8, 16, device="cuda", dtype=ember.float16, requires_grad=True) for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v)
    (gq,) = ember.autograd.grad(out.float().pow(2).sum(), q, create_graph=True)
    gq.float().sum().backward()
    assert k.grad is not None and ember.isfinite(k.grad).all()
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.2)
    with pytest.raises(RuntimeError, match="double backward"):
        ember.autograd.grad(out.float().sum(), q, create_graph=True)


def test_cases_cudnn_does_not_take(gpu):
    q = ember.randn(2, 2, 8, 16, device="cuda", dtype=ember.float16)
    mask = ember.ones(8, 8, dtype=ember.bool, device="cuda")
    assert not _sdpa_cudnn.usable(q._data, q._data, q._data, mask._data, 1)           # masks: ember's kernels
    assert not _sdpa_cudnn.usable(q._data, q._data, q._data, None, 2)                  # grouped heads
    f32 = q.float()._data
    assert not _sdpa_cudnn.usable(f32, f32, f32, None, 1)                              # float32: math or tiled
    odd = ember.randn(2, 2, 8, 12, device="cuda", dtype=ember.float16)._data
    assert not _sdpa_cudnn.usable(odd, odd, odd, None, 1)                              # head dim not a multiple of 8
    assert not _sdpa_cudnn.usable(np.zeros((1, 1, 8, 16), np.float16), q._data, q._data, None, 1)  # host arrays
    with ember.backends.cudnn.flags(enabled=False):
        assert not _sdpa_cudnn.usable(q._data, q._data, q._data, None, 1)
    with ember.nn.attention.sdpa_kernel(ember.nn.attention.SDPBackend.MATH):  # the math kernel only: same values
        y = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    np.testing.assert_allclose(y.float().cpu().numpy(), F.scaled_dot_product_attention(q, q, q).float().cpu().numpy(),
                               atol=1e-2)
