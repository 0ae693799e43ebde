"""ember.utils: same as torch.utils."""
from . import checkpoint, data, dlpack


def __getattr__(name):
    if name == "hooks":  # imports ember.nn, so only on first use
        import importlib
        return importlib.import_module(".hooks", __name__)
    raise AttributeError(f"module 'ember.utils' has no attribute '{name}'")
