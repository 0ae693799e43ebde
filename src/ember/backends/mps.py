"""ember.backends.mps: Apple GPUs are not a backend of ember."""

__all__ = ["is_available", "is_built"]


def is_available():
    """Same as `torch.backends.mps.is_available`: always False."""
    return False


def is_built():
    """Same as `torch.backends.mps.is_built`: always False."""
    return False
