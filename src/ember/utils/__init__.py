"""ember.utils: same as torch.utils."""
from . import checkpoint, data, dlpack


def __getattr__(name):
    if name in ("hooks", "_pytree", "benchmark"):  # loaded on first use (hooks imports ember.nn)
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
