"""ember.backends.cudnn: same as torch.backends.cudnn — the switches keep torch's names; ember's GPU convolution
reads `benchmark` (try the candidate kernels once per shape) and `deterministic`."""
import sys

__all__ = ["is_available", "version", "flags", "enabled", "benchmark", "deterministic", "allow_tf32",
           "benchmark_limit"]


def is_available():
    """Same as `torch.backends.cudnn.is_available`: True when CUDA is available to ember."""
    from .. import cuda
    return cuda.is_available()


def version():
    """Same as `torch.backends.cudnn.version`: None (ember's convolutions do not link libcudnn directly)."""
    return None


class _Flags:
    """Restores the switches on exit; `with ember.backends.cudnn.flags(enabled=False): ...`."""

    def __init__(self, **values):
        self.values = values

    def __enter__(self):
        mod = sys.modules[__name__]
        self.saved = {k: getattr(mod, k) for k in self.values}
        for k, v in self.values.items():
            setattr(mod, k, v)

    def __exit__(self, *exc):
        mod = sys.modules[__name__]
        for k, v in self.saved.items():
            setattr(mod, k, v)
        return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    """Same as `torch.backends.cudnn.flags`."""
    return _Flags(enabled=enabled, benchmark=benchmark, benchmark_limit=benchmark_limit,
                  deterministic=deterministic, allow_tf32=allow_tf32)


enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True
