"""ember.signal.windows: same as torch.signal.windows — the window functions of scipy.signal.windows, computed
by scipy in float64 and returned in the requested float dtype."""
from ... import _dtype
from ..._ops.creation import tensor as _tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _window(name, checked_as, M, sym, dtype, device, requires_grad, **params):
    """scipy.signal.windows.<name>(M, **params, sym=sym) as a tensor, after torch's checks (`checked_as` is the
    name torch's messages give: the cosine-sum windows report as general_cosine)."""
    if not isinstance(M, int) or isinstance(M, bool):
        raise TypeError(f"{name}() window length M must be an int, got {type(M).__name__}")
    if M < 0:
        raise ValueError(f"{checked_as} requires non-negative window length, got M={M}")
    dtype = _dtype._default[0] if dtype is None else dtype
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{checked_as} expects float32 or float64 dtypes, got: {dtype}")
    import scipy.signal.windows as scipy_windows  # scipy is slow to import: only when a window is asked for
    values = getattr(scipy_windows, name)(M, **params, sym=sym) if M else []
    return _tensor(values, dtype=dtype, device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.bartlett`."""
    return _window("bartlett", "bartlett", M, sym, dtype, device, requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.blackman`."""
    return _window("blackman", "blackman", M, sym, dtype, device, requires_grad)


def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.cosine`."""
    return _window("cosine", "cosine", M, sym, dtype, device, requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.exponential`."""
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    return _window("exponential", "exponential", M, sym, dtype, device, requires_grad, center=center, tau=tau)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.gaussian`."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _window("gaussian", "gaussian", M, sym, dtype, device, requires_grad, std=std)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.kaiser`."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _window("kaiser", "kaiser", M, sym, dtype, device, requires_grad, beta=beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.general_cosine`."""
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    return _window("general_cosine", "general_cosine", M, sym, dtype, device, requires_grad,
                   a=[float(c) for c in a])


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.general_hamming`."""
    return _window("general_hamming", "general_cosine", M, sym, dtype, device, requires_grad, alpha=alpha)


def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.hamming`."""
    return _window("hamming", "general_cosine", M, sym, dtype, device, requires_grad)


def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.hann`."""
    return _window("hann", "general_cosine", M, sym, dtype, device, requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.signal.windows.nuttall`."""
    return _window("nuttall", "general_cosine", M, sym, dtype, device, requires_grad)
