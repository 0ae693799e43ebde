"""ember.backends.cpu: same as torch.backends.cpu."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """Same as `torch.backends.cpu.get_cpu_capability`: the widest SIMD set NumPy's kernels use here."""
    import numpy as np
    found = np._core._multiarray_umath.__cpu_features__
    for name, label in (("AVX512F", "AVX512"), ("AVX2", "AVX2")):
        if found.get(name):
            return label
    return "DEFAULT"
