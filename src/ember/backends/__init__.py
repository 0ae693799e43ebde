"""ember.backends: same as torch.backends — switches read by the GPU kernels (the CPU path has no choices to make)."""
from . import cpu, cuda, cudnn, mps

__all__ = ["cpu", "cuda", "cudnn", "mps"]
