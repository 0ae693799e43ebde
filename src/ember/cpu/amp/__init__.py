"""ember.cpu.amp: same as torch.cpu.amp (deprecated spellings of ember.amp)."""
from .autocast_mode import autocast

__all__ = ["autocast"]
