"""ember.cpu: same as torch.cpu."""
from . import amp

__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize"]


def is_available():
    """Same as `torch.cpu.is_available`: always True."""
    return True


def device_count():
    """Same as `torch.cpu.device_count`."""
    return 1


def current_device():
    """Same as `torch.cpu.current_device`."""
    return "cpu"


def synchronize(device=None):
    """Same as `torch.cpu.synchronize`: CPU work is synchronous."""
