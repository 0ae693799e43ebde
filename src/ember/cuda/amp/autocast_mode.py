"""ember.cuda.amp.autocast_mode: same as torch.cuda.amp.autocast_mode (deprecated spellings of ember.amp's)."""
import functools
import warnings

from ..._dtype import float16
from ...amp import autocast_mode as _amp

__all__ = ["autocast", "custom_bwd", "custom_fwd"]


def _deprecated(old, new):
    warnings.warn(f"`ember.cuda.amp.{old}` is deprecated. Please use `ember.amp.{new}` instead.", FutureWarning,
                  stacklevel=3)


class autocast(_amp.autocast):
    """Same as `torch.cuda.amp.autocast`: `ember.amp.autocast("cuda", ...)` (deprecated in torch too)."""

    def __init__(self, enabled=True, dtype=float16, cache_enabled=True):
        _deprecated("autocast(args...)", "autocast('cuda', args...)")
        super().__init__("cuda", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Same as `torch.cuda.amp.custom_fwd`: `ember.amp.custom_fwd(..., device_type="cuda")` (deprecated)."""
    _deprecated("custom_fwd(args...)", "custom_fwd(args..., device_type='cuda')")
    return functools.partial(_amp.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Same as `torch.cuda.amp.custom_bwd`: `ember.amp.custom_bwd(..., device_type="cuda")` (deprecated)."""
    _deprecated("custom_bwd(args...)", "custom_bwd(args..., device_type='cuda')")
    return functools.partial(_amp.custom_bwd, device_type="cuda")(bwd)
