"""ember.nn.attention: same as torch.nn.attention — choosing the kernels of scaled_dot_product_attention.

ember has two attention kernels of its own: the math path (the attention matrix in full) and a tiled one that
never forms it (flash attention's idea). On the CPU they stand for torch's MATH and FLASH_ATTENTION backends. On
CUDA the fused backends (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION) run cuDNN's fused attention where
the cuDNN frontend is installed and cuDNN supports the case (NOTE [ cuDNN attention ] in
nn/_functional/_sdpa_cudnn.py), else the tiled kernel; MATH is the math path.
"""
import contextlib
import enum

from ...backends.cuda import _SDP

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    """Same as `torch.nn.attention.SDPBackend`."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_FLAG = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
         SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn",
         SDPBackend.OVERRIDEABLE: "overrideable"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Same as `torch.nn.attention.sdpa_kernel`: within the block, scaled_dot_product_attention may use only
    the given backends; the previous choice comes back on exit. (ember has one kernel per choice, so the
    priority order of `set_priority` changes nothing.)"""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = dict(_SDP)
    wanted = {_FLAG.get(b) for b in backends}
    try:
        for name in _SDP:
            _SDP[name] = name in wanted
        yield {}
    finally:
        _SDP.update(previous)
