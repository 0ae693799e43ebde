"""The deprecated per-device spellings torch keeps: torch.cpu.amp.autocast, torch.cuda.amp.autocast/GradScaler."""
import warnings

from .amp.autocast_mode import autocast as _autocast
from .amp.grad_scaler import GradScaler as _GradScaler
from ._dtype import bfloat16, float16


def _deprecated(old, device):
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `ember.amp.{old.rsplit('.', 1)[1]}('{device}', "
                  f"args...)` instead.", FutureWarning, stacklevel=3)


class cpu_autocast(_autocast):
    """Same as `torch.cpu.amp.autocast` (deprecated there too)."""

    def __init__(self, enabled=True, dtype=bfloat16, cache_enabled=True):
        _deprecated("ember.cpu.amp.autocast", "cpu")
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class cuda_autocast(_autocast):
    """Same as `torch.cuda.amp.autocast` (deprecated there too)."""

    def __init__(self, enabled=True, dtype=float16, cache_enabled=True):
        _deprecated("ember.cuda.amp.autocast", "cuda")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class cuda_GradScaler(_GradScaler):
    """Same as `torch.cuda.amp.GradScaler` (deprecated there too)."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        _deprecated("ember.cuda.amp.GradScaler", "cuda")
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
