"""ember.library: torch.library's names, each raising a clear error when called (see ember._unavailable)."""
from ._unavailable import unavailable

__getattr__ = unavailable(
    "torch.library", "ember has no operator registry to extend. Write the op as a Python function of ember "
    "ops, or as an ember.autograd.Function with its own forward and backward")
