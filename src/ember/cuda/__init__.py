"""ember.cuda: GPU devices through CuPy (imported only when asked for)."""
import importlib.util

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize", "manual_seed",
           "manual_seed_all"]


def _cupy():
    from .._backend import cupy
    return cupy()


def is_available():
    """Same as `torch.cuda.is_available`: True when CuPy is installed and sees an NVIDIA GPU."""
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def device_count():
    """Same as `torch.cuda.device_count`."""
    if not is_available():
        return 0
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def current_device():
    return _cupy().cuda.runtime.getDevice()


def set_device(device):
    from .._device import device as _device
    idx = device if isinstance(device, int) else _device(device).index or 0
    _cupy().cuda.runtime.setDevice(idx)


def synchronize(device=None):
    _cupy().cuda.runtime.deviceSynchronize()


def manual_seed(seed):
    """Same as `torch.cuda.manual_seed`: seeds the current GPU's generator; a no-op without a GPU, as in torch."""
    if is_available():
        from .._ops.random import default_cuda_generator
        default_cuda_generator().manual_seed(seed)


def manual_seed_all(seed):
    """Same as `torch.cuda.manual_seed_all`."""
    if is_available():
        from .._ops.random import default_cuda_generator
        for i in range(device_count()):
            default_cuda_generator(i).manual_seed(seed)


def __getattr__(name):
    if name == "amp":  # loaded on first use, as the other heavier submodules
        import importlib
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")
