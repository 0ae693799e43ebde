"""ember.signal.windows against closed forms (and scipy where the form is long), dtypes and torch's errors."""
import math

import numpy as np
import pytest

import ember
from ember.signal import windows as W
from tests.helpers import assert_close


def _n(M, sym):
    return np.arange(M), (M - 1 if sym else M)


@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("M", [1, 2, 7, 8])
def test_cosine_sum_windows_match_their_formulas(M, sym):
    n, N = _n(M, sym)
    N = max(N, 1)
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * n / N)
    hamming = 0.54 - 0.46 * np.cos(2 * np.pi * n / N)
    blackman = 0.42 - 0.5 * np.cos(2 * np.pi * n / N) + 0.08 * np.cos(4 * np.pi * n / N)
    gen = 0.6 - 0.3 * np.cos(2 * np.pi * n / N) + 0.1 * np.cos(4 * np.pi * n / N)
    for got, want in ((W.hann(M, sym=sym, dtype=ember.float64), hann),
                      (W.hamming(M, sym=sym, dtype=ember.float64), hamming),
                      (W.general_hamming(M, alpha=0.54, sym=sym, dtype=ember.float64), hamming),
                      (W.blackman(M, sym=sym, dtype=ember.float64), blackman),
                      (W.general_cosine(M, a=[0.6, 0.3, 0.1], sym=sym, dtype=ember.float64), gen)):
        assert_close(got, want if M > 1 else np.ones(1), atol=1e-12, rtol=0)


def test_other_windows():
    n = np.arange(7)
    assert_close(W.gaussian(7, std=2.0, dtype=ember.float64), np.exp(-0.5 * ((n - 3) / 2.0) ** 2), atol=1e-12)
    assert_close(W.exponential(7, tau=2.0, dtype=ember.float64), np.exp(-np.abs(n - 3) / 2.0), atol=1e-12)
    assert_close(W.exponential(5, center=1.0, sym=False, dtype=ember.float64), np.exp(-np.abs(np.arange(5) - 1.0)),
                 atol=1e-12)
    assert_close(W.cosine(7, dtype=ember.float64), np.sin(np.pi * (n + 0.5) / 7), atol=1e-12)
    assert_close(W.bartlett(7, dtype=ember.float64), 1 - np.abs(n - 3) / 3, atol=1e-12)
    assert_close(W.kaiser(7, beta=12.0, dtype=ember.float64), np.i0(12 * np.sqrt(1 - ((n - 3) / 3) ** 2)) / np.i0(12),
                 atol=1e-12)
    nut = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
    want = sum((-1) ** k * a * np.cos(2 * np.pi * k * n / 6) for k, a in enumerate(nut))
    assert_close(W.nuttall(7, dtype=ember.float64), want, atol=1e-12)


def test_dtypes_devices_and_grad():
    w = W.hann(4)
    assert w.dtype == ember.float32 and w.shape == (4,) and W.hann(0).shape == (0,)
    assert W.kaiser(3, dtype=ember.float64).dtype == ember.float64
    r = W.blackman(5, requires_grad=True)
    assert r.requires_grad and r.is_leaf
    assert math.isclose(float(W.hann(3)[1]), 1.0)


@pytest.mark.parametrize("call, exc, message", [
    (lambda: W.hann(-1), ValueError, "general_cosine requires non-negative window length, got M=-1"),
    (lambda: W.kaiser(-2), ValueError, "kaiser requires non-negative window length, got M=-2"),
    (lambda: W.bartlett(3, dtype=ember.int64), ValueError, "bartlett expects float32 or float64 dtypes"),
    (lambda: W.hann(3, dtype=ember.float16), ValueError, "general_cosine expects float32 or float64 dtypes"),
    (lambda: W.gaussian(3, std=0), ValueError, "Standard deviation must be positive, got: 0 instead."),
    (lambda: W.kaiser(3, beta=-1), ValueError, "beta must be non-negative, got: -1 instead."),
    (lambda: W.exponential(3, tau=0), ValueError, "Tau must be positive, got: 0 instead."),
    (lambda: W.exponential(3, center=1.0), ValueError, "Center must be None for symmetric windows"),
    (lambda: W.general_cosine(3, a=[]), ValueError, "Coefficients cannot be empty"),
    (lambda: W.general_cosine(3, a=0.5), TypeError, "Coefficients must be a list/tuple"),
    (lambda: W.hann(2.5), TypeError, "window length M must be an int"),
])
def test_bad_arguments(call, exc, message):
    with pytest.raises(exc, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
