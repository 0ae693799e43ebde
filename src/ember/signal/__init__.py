"""ember.signal: same as torch.signal (its window functions)."""
from . import windows

__all__ = ["windows"]
