"""ember.cpu.amp.autocast_mode: same as torch.cpu.amp.autocast_mode (the deprecated spelling of ember.amp's)."""
import warnings

from ..._dtype import bfloat16
from ...amp import autocast_mode as _amp

__all__ = ["autocast"]


class autocast(_amp.autocast):
    """Same as `torch.cpu.amp.autocast`: `ember.amp.autocast("cpu", ...)` (deprecated in torch too)."""

    def __init__(self, enabled=True, dtype=bfloat16, cache_enabled=True):
        warnings.warn("`ember.cpu.amp.autocast(args...)` is deprecated. Please use `ember.amp.autocast('cpu', "
                      "args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
