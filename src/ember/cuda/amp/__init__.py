"""ember.cuda.amp: same as torch.cuda.amp (deprecated spellings of ember.amp)."""
from . import autocast_mode, grad_scaler  # noqa: F401 - torch.cuda.amp has these submodules
from .autocast_mode import autocast, custom_bwd, custom_fwd
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
