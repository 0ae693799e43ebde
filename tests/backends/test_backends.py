import pytest

import ember


@pytest.fixture(autouse=True)
def _restore_precision():
    saved = ember.get_float32_matmul_precision()
    yield
    ember.set_float32_matmul_precision(saved)


def test_matmul_precision_and_allow_tf32_mirror_each_other():
    assert ember.get_float32_matmul_precision() == "highest"
    assert ember.backends.cuda.matmul.allow_tf32 is False
    ember.set_float32_matmul_precision("medium")
    assert ember.backends.cuda.matmul.allow_tf32 is True
    ember.backends.cuda.matmul.allow_tf32 = False
    assert ember.get_float32_matmul_precision() == "highest"
    with pytest.warns(UserWarning, match="x is not one of 'highest', 'high', or 'medium'"):
        ember.set_float32_matmul_precision("x")
    assert ember.get_float32_matmul_precision() == "highest"


def test_matmul_reduced_precision_flags_and_unknown_names():
    m = ember.backends.cuda.matmul
    assert m.allow_fp16_reduced_precision_reduction is True
    m.allow_bf16_reduced_precision_reduction = False
    try:
        assert m.allow_bf16_reduced_precision_reduction is False
    finally:
        m.allow_bf16_reduced_precision_reduction = True
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        m.foo = 1


def test_cudnn_flags_context_restores_the_switches():
    cudnn = ember.backends.cudnn
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, False, True)
    with cudnn.flags(enabled=False, benchmark=True, deterministic=True):
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (False, True, True)
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)
    assert cudnn.is_available() == ember.cuda.is_available()


def test_sdp_switches():
    cuda = ember.backends.cuda
    assert cuda.flash_sdp_enabled() and cuda.mem_efficient_sdp_enabled() and cuda.math_sdp_enabled()
    cuda.enable_flash_sdp(False)
    try:
        assert not cuda.flash_sdp_enabled()
    finally:
        cuda.enable_flash_sdp(True)


def test_cpu_and_mps():
    assert ember.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
    assert ember.backends.mps.is_available() is False
