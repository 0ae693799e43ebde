"""ember.hub: torch.hub's names, each raising a clear error when called (see ember._unavailable)."""
from ._unavailable import unavailable

__getattr__ = unavailable(
    "torch.hub", "ember does not download models or code. Download the checkpoint yourself and load it with "
    "ember.load(path) (weights_only, as torch.load) into a model your program defines")
