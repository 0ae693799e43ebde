"""CuPy loading for ember.cuda and device-argument parsing (CuPy is imported only when a GPU is asked for)."""
import sys

_cp = None  # CuPy, once ember.cuda has set it up (allocator installed)


def cupy():
    """CuPy with ember's allocator installed; ember's clear RuntimeError without CuPy or a GPU."""
    cp = _cp
    if cp is None or sys.modules.get("cupy") is not cp:  # also when tests swap the cupy module
        _setup()
    return _cp


def _setup():
    global _cp
    from .._backend import cupy as load
    cp = load()  # raises "CUDA is not available: ..." where CuPy or a GPU is missing
    from .._backend.cuda_alloc import _install
    _install(cp)
    _cp = cp


def loaded():
    """CuPy when it is already in use by this process (without importing it); else None."""
    cp = sys.modules.get("cupy")
    if cp is None:
        return None
    if cp is not _cp:
        try:
            _setup()
        except RuntimeError:  # CuPy imported by someone else, but no GPU
            return None
    return _cp


def device_index(device, optional=True):
    """The GPU index of an int, 'cuda:1', ember.device or ember.cuda.device; None means the current GPU."""
    from .._device import device as _Device
    if isinstance(device, str):
        device = _Device(device)
    if isinstance(device, _Device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        device = device.index
    elif hasattr(device, "idx") and not isinstance(device, int):  # an ember.cuda.device context manager
        device = device.idx
    if device is None:
        if not optional:
            raise ValueError("Expected a ember.device with a specified index or an integer, but got:None")
        return cupy().cuda.runtime.getDevice()
    if isinstance(device, bool) or not isinstance(device, int):
        msg = f"Expected a ember.device with a specified index or an integer, but got:{device}"
        raise ValueError(msg)  # noqa: TRY004 - torch's type
    return device
