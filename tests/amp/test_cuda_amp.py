"""ember.cuda.amp: torch's deprecated spellings, with torch's class names, modules and warnings."""
import warnings

import pytest

import ember
from ember.amp import GradScaler as AmpGradScaler


def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category, str(x.message)) for x in w]


def test_cuda_autocast_class_and_deprecation():
    a, w = _caught(lambda: ember.cuda.amp.autocast(enabled=False))
    assert type(a).__name__ == "autocast" and type(a).__qualname__ == "autocast"
    assert type(a).__module__ == "ember.cuda.amp.autocast_mode"
    assert isinstance(a, ember.amp.autocast) and a.device == "cuda" and a.fast_dtype == ember.float16
    assert w == [(FutureWarning, ("`ember.cuda.amp.autocast(args...)` is deprecated. Please use "
                                  "`ember.amp.autocast('cuda', args...)` instead."))]
    assert ember.cuda.amp.autocast_mode.autocast is ember.cuda.amp.autocast


@pytest.mark.skipif(ember.cuda.is_available(), reason="the warning is for machines without CUDA")
def test_cuda_autocast_without_cuda_disables_with_torchs_text():
    a, w = _caught(lambda: ember.cuda.amp.autocast())
    assert (UserWarning, "CUDA is not available or torch_xla is imported. Disabling autocast.") in w
    with a:
        assert not ember.is_autocast_enabled("cuda")
    _, w = _caught(lambda: ember.autocast("cuda"))
    assert w == [(UserWarning, "CUDA is not available or torch_xla is imported. Disabling autocast.")]


def test_cuda_grad_scaler_class_and_deprecation():
    s, w = _caught(lambda: ember.cuda.amp.GradScaler(enabled=False))
    assert type(s).__name__ == "GradScaler" and type(s).__module__ == "ember.cuda.amp.grad_scaler"
    assert isinstance(s, AmpGradScaler) and not s.is_enabled()
    assert w == [(FutureWarning, ("`ember.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                                  "`ember.amp.GradScaler('cuda', args...)` instead."))]


@pytest.mark.skipif(ember.cuda.is_available(), reason="the warning is for machines without CUDA")
def test_cuda_grad_scaler_without_cuda():
    msg = "ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."
    s, w = _caught(lambda: ember.cuda.amp.GradScaler())
    assert not s.is_enabled() and (UserWarning, msg) in w
    s, w = _caught(lambda: AmpGradScaler("cuda"))
    assert not s.is_enabled() and w == [(UserWarning, msg)]


def test_cuda_custom_fwd_bwd_take_no_device_type():
    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        Double.forward = staticmethod(ember.cuda.amp.custom_fwd(Double.forward.__func__
                                                               if hasattr(Double.forward, "__func__")
                                                               else Double.forward))
        Double.backward = staticmethod(ember.cuda.amp.custom_bwd(Double.backward))
        wrap = ember.cuda.amp.custom_fwd(cast_inputs=ember.float32)
    assert callable(wrap)
    x = ember.ones(2, requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    _, w = _caught(lambda: ember.cuda.amp.custom_bwd(lambda ctx, g: g))
    assert w == [(FutureWarning, ("`ember.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                                  "`ember.amp.custom_bwd(args..., device_type='cuda')` instead."))]
