"""ember.utils: same as torch.utils."""
from . import data
