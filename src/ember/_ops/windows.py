"""Window functions: torch.hann_window, hamming_window, blackman_window, bartlett_window, kaiser_window."""
import numpy as np

from .. import _dtype
from .creation import tensor

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]

# the C names torch's TensorOptions print in its dtype error
_C_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _window(name, fn, window_length, periodic, dtype, device, requires_grad):
    """Evaluates fn(n, N) (n = 0..N-1 as float64) for the symmetric window of length N, as torch: a periodic
    window is the symmetric one of length window_length + 1 without its last point."""
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{_C_NAMES.get(dtype.name, dtype.name)}, device=cpu, layout=Strided (default), "
                           f"requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if window_length <= 1:
        vals = np.ones(window_length)
    else:
        n_pts = window_length + 1 if periodic else window_length
        vals = fn(np.arange(n_pts, dtype=np.float64), n_pts)[:window_length]
    return tensor(vals, dtype=dtype, device=device, requires_grad=requires_grad)


def _cosine_sum(coeffs):
    def fn(n, size):
        x = 2.0 * np.pi * n / (size - 1)
        return sum(c * np.cos(k * x) for k, c in enumerate(coeffs))
    return fn


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """Same as `torch.hann_window`."""
    return _window("hann_window", _cosine_sum((0.5, -0.5)), window_length, periodic, dtype, device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """Same as `torch.hamming_window`."""
    return _window("hamming_window", _cosine_sum((alpha, -beta)), window_length, periodic, dtype, device,
                   requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """Same as `torch.blackman_window`."""
    return _window("blackman_window", _cosine_sum((0.42, -0.5, 0.08)), window_length, periodic, dtype, device,
                   requires_grad)


def _bartlett(n, size):
    return 1.0 - np.abs(2.0 * n / (size - 1) - 1.0)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """Same as `torch.bartlett_window`."""
    return _window("bartlett_window", _bartlett, window_length, periodic, dtype, device, requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """Same as `torch.kaiser_window`."""
    def fn(n, size):
        half = (size - 1) / 2.0
        return np.i0(beta * np.sqrt(np.clip(1.0 - ((n - half) / half) ** 2, 0.0, None))) / np.i0(beta)
    return _window("kaiser_window", fn, window_length, periodic, dtype, device, requires_grad)
