"""ember.utils.hooks: same as torch.utils.hooks."""
from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook"]


def unserializable_hook(f):
    """Same as `torch.utils.hooks.unserializable_hook`: marks a tensor hook as one that saving may drop quietly."""
    f.__torch_unserializable__ = True
    return f
