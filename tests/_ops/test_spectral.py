"""stft / istft against a NumPy reference, round trips, errors and gradients."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from tests.helpers import assert_close


def _np_stft(x, n_fft, hop, window, center=True, pad_mode="reflect", normalized=False, onesided=True):
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode=pad_mode)
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    frames = np.stack([x[..., t * hop:t * hop + n_fft] * window for t in range(n_frames)], -2)
    spec = np.fft.rfft(frames, axis=-1) if onesided else np.fft.fft(frames, axis=-1)
    if normalized:
        spec = spec / np.sqrt(n_fft)
    return np.swapaxes(spec, -1, -2)


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("shape", [(40,), (3, 37)])
@pytest.mark.parametrize("kw", [{"n_fft": 8}, {"n_fft": 8, "hop_length": 3}, {"n_fft": 9, "center": False},
                                {"n_fft": 8, "normalized": True}, {"n_fft": 8, "onesided": False},
                                {"n_fft": 8, "pad_mode": "constant"}])
def test_stft_matches_numpy(shape, kw):
    x = _x(*shape)
    n_fft, hop = kw["n_fft"], kw.get("hop_length", kw["n_fft"] // 4)
    win = np.hanning(n_fft + 1)[:-1]
    got = ember.stft(ember.tensor(x), window=ember.tensor(win), return_complex=True, **kw)
    ref = _np_stft(x, n_fft, hop, win, kw.get("center", True), kw.get("pad_mode", "reflect"),
                   kw.get("normalized", False), kw.get("onesided", True))
    assert got.dtype == ember.complex128
    assert_close(got, ref, atol=1e-10)


def test_stft_short_window_is_centered_and_dtype():
    x = _x(30)
    win = np.arange(1.0, 6.0)
    got = ember.stft(ember.tensor(x, dtype=ember.float32), 8, 2, 5, ember.tensor(win, dtype=ember.float32),
                     return_complex=True)
    assert got.dtype == ember.complex64
    assert_close(got, _np_stft(x, 8, 2, np.r_[0.0, win, 0.0, 0.0]), atol=1e-4, rtol=1e-4)


def test_stft_return_complex_false_and_method():
    x = ember.tensor(_x(20))
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        r = x.stft(8, window=ember.ones(8, dtype=ember.float64), return_complex=False)
    c = x.stft(8, window=ember.ones(8, dtype=ember.float64), return_complex=True)
    assert r.shape == (5, 11, 2)
    assert_close(r, np.stack([c.real.numpy(), c.imag.numpy()], -1), atol=1e-12)
    with pytest.warns(UserWarning, match="A window was not provided"):
        ember.stft(x, 8, return_complex=True)


def test_stft_complex_input_is_two_sided():
    x = _x(20) + 1j * _x(20, seed=1)
    got = ember.stft(ember.tensor(x), 8, window=ember.ones(8, dtype=ember.float64))
    assert got.shape == (8, 11)
    assert_close(got, _np_stft(x, 8, 2, np.ones(8), onesided=False), atol=1e-10)


def test_stft_errors():
    x = ember.tensor(_x(20))
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter be given for real inputs"):
        ember.stft(x, 8)
    w = ember.ones(8, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="expected 0 < n_fft < 20, but got n_fft=30"):
        ember.stft(x, 30, window=ember.ones(30), center=False, return_complex=True)
    with pytest.raises(RuntimeError, match="expected hop_length > 0, but got hop_length=0"):
        ember.stft(x, 8, 0, window=w, return_complex=True)
    with pytest.raises(RuntimeError, match="expected 0 < win_length <= n_fft, but got win_length=9"):
        ember.stft(x, 8, 2, 9, window=ember.ones(9), return_complex=True)
    with pytest.raises(RuntimeError, match="expected a 1D window tensor of size equal to win_length=8"):
        ember.stft(x, 8, window=ember.ones(5), return_complex=True)
    with pytest.raises(RuntimeError, match="expected a 1D or 2D tensor"):
        ember.stft(x.reshape(1, 2, 10), 4, window=ember.ones(4), return_complex=True)


@pytest.mark.parametrize("kw", [{"n_fft": 8}, {"n_fft": 8, "hop_length": 3, "win_length": 6}, {"n_fft": 8, "normalized": True},
                                {"n_fft": 16, "hop_length": 4}])
@pytest.mark.parametrize("shape", [(40,), (2, 41)])
def test_istft_round_trip(kw, shape):
    x = ember.tensor(_x(*shape))
    win = ember.hann_window(kw.get("win_length", kw["n_fft"]), dtype=ember.float64)
    spec = ember.stft(x, window=win, return_complex=True, **kw)
    back = ember.istft(spec, window=win, length=shape[-1], **kw)
    assert back.dtype == ember.float64 and back.shape == x.shape
    assert_close(back, x.numpy(), atol=1e-10)


def test_istft_two_sided_and_lengths():
    x = ember.tensor(_x(40))
    win = ember.hann_window(8, dtype=ember.float64)
    spec = ember.stft(x, 8, window=win, onesided=False, return_complex=True)
    assert_close(ember.istft(spec, 8, window=win), x.numpy(), atol=1e-10)
    c = ember.istft(spec, 8, window=win, return_complex=True)
    assert c.dtype == ember.complex128
    assert_close(c, x.numpy().astype(complex), atol=1e-10)
    one = ember.stft(x, 8, window=win, return_complex=True)
    assert_close(ember.istft(one, 8, window=win, length=30), x.numpy()[:30], atol=1e-10)
    with pytest.warns(UserWarning, match="shorter than the length parameter"):
        padded = ember.istft(one, 8, window=win, length=45)
    # the centered frames reach 4 samples past the end (the reflect padding); the rest is zero-filled
    xr = x.numpy()
    assert_close(padded, np.r_[xr, xr[-2:-6:-1], 0.0], atol=1e-10)


def test_istft_errors():
    x = ember.tensor(_x(40))
    win = ember.hann_window(8, dtype=ember.float64)
    spec = ember.stft(x, 8, window=win, return_complex=True)
    with pytest.raises(RuntimeError, match="istft requires a complex-valued input tensor"):
        ember.istft(spec.real, 8, window=win)
    with pytest.raises(RuntimeError, match="to match n_fft when onesided=False, but got 5"):
        ember.istft(spec, 8, window=win, onesided=False)
    with pytest.raises(RuntimeError, match="Cannot have onesided output if window or input is complex"):
        ember.istft(spec, 8, window=win, return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        ember.istft(ember.stft(x, 8, window=win, center=False, return_complex=True), 8, window=win, center=False)
    with pytest.warns(UserWarning, match="A window was not provided"):
        ember.istft(ember.stft(x, 8, window=ember.ones(8, dtype=ember.float64), return_complex=True), 8)


def test_stft_gradcheck():
    x = ember.tensor(_x(2, 12)).requires_grad_()
    w = ember.tensor(_x(6, seed=1)).requires_grad_()
    fn = lambda x, w: ember.view_as_real(ember.stft(x, 6, 2, window=w, return_complex=True))
    assert gradcheck(fn, [x, w])
    assert gradgradcheck(fn, [x, w])


def test_istft_gradcheck():
    win = ember.hann_window(8, dtype=ember.float64)
    with warnings.catch_warnings():
        spec = ember.stft(ember.tensor(_x(24)), 8, window=win, return_complex=True)
    re = spec.real.detach().clone().requires_grad_()
    im = spec.imag.detach().clone().requires_grad_()
    assert gradcheck(lambda re, im: ember.istft(ember.complex(re, im), 8, window=win), [re, im])


def test_istft_two_sided_real_output_reads_nonnegative_bins():
    win = ember.hann_window(8, dtype=ember.float64)
    spec = ember.stft(ember.tensor(_x(40)), 8, window=win, onesided=False, return_complex=True)
    noisy = spec.clone()
    noisy[5:] = noisy[5:] + 3j  # the negative-frequency bins are ignored for a real result
    assert_close(ember.istft(noisy, 8, window=win), ember.istft(spec[:5], 8, window=win).numpy(), atol=1e-12)
