"""ember.nn.parallel: same as `torch.nn.parallel` (DistributedDataParallel; DataParallel is not provided)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
