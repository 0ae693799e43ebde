"""ember.cuda.amp: same as torch.cuda.amp (deprecated spellings of ember.amp)."""
from ..._amp_aliases import cuda_GradScaler as GradScaler, cuda_autocast as autocast
from ...amp.autocast_mode import custom_bwd, custom_fwd

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]
