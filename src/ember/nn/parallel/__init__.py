"""ember.nn.parallel: same as `torch.nn.parallel` (DataParallel runs the module on one device)."""
from .data_parallel import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
