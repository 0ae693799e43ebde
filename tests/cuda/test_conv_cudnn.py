"""Convolutions through cuDNN (nn/_functional/_conv_cudnn.py, NOTE [ cuDNN convolutions ]): forward, input and
weight gradients against the CPU's float64 results, on a GPU with the cuDNN frontend installed; elsewhere the
fallback is checked (no frontend, or a frontend that cannot start, leaves conv.py's own kernels in charge).
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import cudnn as _cudnn
from ember.nn._functional import _conv_cudnn

CASES = {
    "conv2d_pad": (lambda x, w: F.conv2d(x, w, padding=1), (2, 3, 9, 8), (4, 3, 3, 3)),
    "conv2d_stride_dilation": (lambda x, w: F.conv2d(x, w, stride=2, padding=2, dilation=2), (2, 4, 11, 10),
                               (6, 4, 3, 3)),
    "conv2d_groups": (lambda x, w: F.conv2d(x, w, stride=(2, 1), groups=2), (2, 4, 7, 7), (6, 2, 3, 3)),
    "conv2d_same_even_kernel": (lambda x, w: F.conv2d(x, w, padding="same"), (1, 3, 6, 6), (2, 3, 4, 4)),
    "conv2d_1x1": (lambda x, w: F.conv2d(x, w), (4, 8, 5, 5), (16, 8, 1, 1)),
    "conv1d": (lambda x, w: F.conv1d(x, w, stride=2, padding=1), (2, 3, 17), (5, 3, 3)),
    "conv3d": (lambda x, w: F.conv3d(x, w, padding=1), (1, 2, 5, 4, 6), (3, 2, 3, 3, 3)),
    "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
                         (2, 4, 5, 5), (4, 3, 3, 3)),
}


@pytest.fixture(autouse=True)
def cudnn_on(monkeypatch):
    """cuDNN convolutions are opt-in (EMBER_CUDNN_CONV=1); these tests turn them on."""
    monkeypatch.setattr(_conv_cudnn, "ENABLED", True)


def _real_cudnn(gpu):
    if getattr(gpu, "IS_FAKE", False):
        pytest.skip("the fake CuPy has no cuDNN")
    cudnn = _cudnn.module()
    if cudnn is None:
        pytest.skip(f"no cuDNN frontend (nvidia-cudnn-frontend): {_cudnn.WHY_NOT[0]}")


def _run(fn, xs, ws, dev, dtype):
    x = ember.tensor(xs, dtype=dtype, device=dev, requires_grad=True)
    w = ember.tensor(ws, dtype=dtype, device=dev, requires_grad=True)
    y = fn(x, w)
    y.backward(ember.tensor(np.cos(np.arange(y.numel())).reshape(y.shape), dtype=dtype, device=dev))
    return [t.detach().cpu().double().numpy() for t in (y, x.grad, w.grad)]


@pytest.mark.parametrize("dtype, tol", [(ember.float32, 1e-4), (ember.float16, 1e-2), (ember.bfloat16, 6e-2)],
                         ids=["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", list(CASES))
def test_cudnn_matches_cpu(name, dtype, tol, gpu):
    _real_cudnn(gpu)
    fn, xshape, wshape = CASES[name]
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal(xshape), rng.standard_normal(wshape) / np.sqrt(np.prod(wshape[1:]))
    want = _run(fn, xs, ws, "cpu", ember.float64)
    _cudnn.UNSUPPORTED.clear()
    with ember.backends.cudnn.flags(enabled=True, allow_tf32=False):
        got = _run(fn, xs, ws, "cuda", dtype)
    assert not _cudnn.UNSUPPORTED, _cudnn.UNSUPPORTED  # every graph ran on cuDNN
    for g, c in zip(got, want):
        np.testing.assert_allclose(g, c, rtol=tol, atol=tol * max(1.0, np.abs(c).max()))


def test_cudnn_is_used_for_each_direction(gpu):
    _real_cudnn(gpu)
    _cudnn.GRAPHS.clear()
    x = ember.randn(2, 3, 8, 8, device="cuda", requires_grad=True)
    w = ember.randn(4, 3, 3, 3, device="cuda", requires_grad=True)
    F.conv2d(x, w, padding=1).sum().backward()
    kinds = {key[1] for key, entry in _cudnn.GRAPHS.items() if entry is not None}
    assert kinds == {"fprop", "dgrad", "wgrad"}


def test_disabled_or_unavailable_cudnn_falls_back(gpu, monkeypatch):
    """cudnn.enabled = False, no frontend, or not opted in: conv.py's own kernels, same results."""
    x = ember.randn(2, 3, 8, 8, device="cuda", requires_grad=True)
    w = ember.randn(4, 3, 3, 3, device="cuda", requires_grad=True)
    with ember.backends.cudnn.flags(enabled=False):
        assert not _conv_cudnn.usable(x._data)
        y = F.conv2d(x, w, padding=1)
    monkeypatch.setattr(_cudnn, "_MODULE", [False])
    assert not _conv_cudnn.usable(x._data)
    monkeypatch.setattr(_cudnn, "_MODULE", [None])
    monkeypatch.setattr(_conv_cudnn, "ENABLED", False)
    assert not _conv_cudnn.usable(x._data)
    y2 = F.conv2d(x, w, padding=1)
    np.testing.assert_allclose(y.detach().cpu().numpy(), y2.detach().cpu().numpy(), rtol=1e-5, atol=1e-5)
    assert not _conv_cudnn.usable(np.zeros(3, np.float32))  # host arrays never


def test_float64_stays_off_cudnn(gpu):
    x = ember.randn(1, 2, 5, 5, dtype=ember.float64, device="cuda")
    assert not _conv_cudnn.usable(x._data)


def test_arrays_of_the_fake_cupy_never_reach_cudnn(fake_gpu, monkeypatch):
    """The NumPy-backed stand-in's pointers are host memory: with a real cuDNN loaded they must still stay away."""
    monkeypatch.setattr(_cudnn, "_MODULE", [object()])  # as if the frontend had loaded
    x = ember.randn(1, 2, 5, 5, device="cuda")
    assert _cudnn.for_array(x._data) is None and not _conv_cudnn.usable(x._data)
    assert _cudnn.for_array(np.zeros(3, np.float32)) is None
