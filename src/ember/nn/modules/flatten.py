"""Flatten, Unflatten and Identity: modules that only reshape (or pass through) their input."""
from .module import Module

__all__ = ["Flatten", "Identity", "Unflatten"]


class Identity(Module):
    """Same as `torch.nn.Identity`: returns its input; any constructor arguments are ignored."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Flatten(Module):
    """Same as `torch.nn.Flatten`."""
    __constants__ = ("start_dim", "end_dim")

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Same as `torch.nn.Unflatten`."""
    __constants__ = ("dim", "unflattened_size")

    def __init__(self, dim, unflattened_size):
        super().__init__()
        _require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _require_tuple_int(size):
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type {type(size).__name__}")
    for i, s in enumerate(size):
        if not isinstance(s, int):
            raise TypeError(f"unflattened_size must be tuple of ints, but found element of type {type(s).__name__} "
                            f"at pos {i}")
