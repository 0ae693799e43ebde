"""ember.fx: torch.fx's names, each raising a clear error when called (see ember._unavailable)."""
from ._unavailable import unavailable

__getattr__ = unavailable(
    "torch.fx", "ember has no symbolic tracing or graph rewriting: it runs modules eagerly. Call the module itself "
    "(ember.compile and ember.jit.trace return it unchanged)")
