"""OptimizedModule: what ember.compile returns for a module."""
from ..nn.modules.module import Module
from ._region import CompiledFunction

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """Same as torch's OptimizedModule: the compiled wrapper of a module, which it holds as `_orig_mod` (so its
    state_dict keys start with "_orig_mod."); other attributes are the module's."""

    def __init__(self, mod, fullgraph=False):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", CompiledFunction(mod, mod, fullgraph, name=type(mod).__name__))

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)
