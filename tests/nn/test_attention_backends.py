"""ember.nn.attention: SDPBackend and sdpa_kernel choose the kernel of scaled_dot_product_attention."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.backends import cuda as backends_cuda
from ember.nn.attention import SDPBackend, sdpa_kernel
from tests.helpers import assert_close


def _qkv():
    rng = np.random.default_rng(0)
    return [ember.tensor(rng.standard_normal((2, 3, 6, 4)).astype(np.float32), requires_grad=True) for _ in range(3)]


def _reference(q, k, v):
    s = q @ k.transpose(0, 1, 3, 2) / 2.0
    s = s + np.triu(np.full((6, 6), -np.inf), 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def test_backend_enum_matches_torch():
    assert [(b.name, b.value) for b in SDPBackend] == [
        ("ERROR", -1), ("MATH", 0), ("FLASH_ATTENTION", 1), ("EFFICIENT_ATTENTION", 2), ("CUDNN_ATTENTION", 3),
        ("OVERRIDEABLE", 4)]
    assert repr(SDPBackend.MATH) == "<SDPBackend.MATH: 0>" and str(SDPBackend.MATH) == "SDPBackend.MATH"
    assert ember.nn.attention.SDPBackend is SDPBackend


@pytest.mark.parametrize("backends, node", [
    (SDPBackend.MATH, "UnsafeViewBackward0"),
    ([SDPBackend.FLASH_ATTENTION], "ScaledDotProductFlashAttentionForCpuBackward0"),
    ([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION], "ScaledDotProductFlashAttentionForCpuBackward0"),
])
def test_chosen_kernel_runs_and_both_agree(backends, node):
    q, k, v = _qkv()
    with sdpa_kernel(backends):
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert type(y.grad_fn).__name__ == node
    assert_close(y, _reference(*(t.detach().numpy().astype(np.float64) for t in (q, k, v))), rtol=1e-5, atol=1e-6)
    y.sum().backward()
    assert q.grad is not None and k.grad is not None and v.grad is not None


def test_flags_are_set_inside_and_restored_after():
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION]):
        assert backends_cuda.math_sdp_enabled() and backends_cuda.cudnn_sdp_enabled()
        assert not backends_cuda.flash_sdp_enabled() and not backends_cuda.mem_efficient_sdp_enabled()
    assert backends_cuda.flash_sdp_enabled() and backends_cuda.math_sdp_enabled()
    with pytest.raises(ValueError):
        with sdpa_kernel(SDPBackend.MATH):
            raise ValueError
    assert backends_cuda.flash_sdp_enabled()


def test_no_viable_kernel_on_the_cpu_raises_torchs_error():
    q, k, v = _qkv()
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION]):
        with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_attention was found"):
            F.scaled_dot_product_attention(q, k, v)
    backends_cuda.enable_math_sdp(False)
    backends_cuda.enable_flash_sdp(False)
    try:
        with pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(q, k, v)
    finally:
        backends_cuda.enable_math_sdp(True)
        backends_cuda.enable_flash_sdp(True)


def test_bad_backends_argument():
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("MATH"):
            pass
