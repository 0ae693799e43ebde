"""ember.export: torch.export's names, each raising a clear error when called (see ember._unavailable)."""
from ._unavailable import unavailable

__getattr__ = unavailable(
    "torch.export", "ember has no exported-program format: it runs modules eagerly. Save the weights with "
    "ember.save(model.state_dict(), path) and rebuild the model in code to run it elsewhere")
