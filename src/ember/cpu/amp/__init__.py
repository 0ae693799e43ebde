"""ember.cpu.amp: same as torch.cpu.amp (deprecated spellings of ember.amp)."""
from ..._amp_aliases import cpu_autocast as autocast

__all__ = ["autocast"]
