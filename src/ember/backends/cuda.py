"""ember.backends.cuda: same as torch.backends.cuda (TF32 and attention-kernel switches)."""
from ._precision import PRECISION

__all__ = ["is_built", "matmul", "enable_flash_sdp", "flash_sdp_enabled", "enable_mem_efficient_sdp",
           "mem_efficient_sdp_enabled", "enable_math_sdp", "math_sdp_enabled", "enable_cudnn_sdp", "cudnn_sdp_enabled",
           "preferred_linalg_library"]


def is_built():
    """Same as `torch.backends.cuda.is_built`: True when CuPy is installed (ember's CUDA path is CuPy)."""
    import importlib.util
    return importlib.util.find_spec("cupy") is not None


class _Matmul:
    """`ember.backends.cuda.matmul`: allow_tf32 mirrors the float32 matmul precision, as in torch."""
    __slots__ = ()
    _flags = {"allow_fp16_reduced_precision_reduction": True, "allow_bf16_reduced_precision_reduction": True}

    @property
    def allow_tf32(self):
        return PRECISION[0] != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        PRECISION[0] = "high" if value else "highest"

    def __getattr__(self, name):
        try:
            return _Matmul._flags[name]
        except KeyError:
            raise AttributeError(f"Unknown attribute {name}") from None

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            return object.__setattr__(self, name, value)
        if name not in _Matmul._flags:
            raise AttributeError(f"Unknown attribute {name}")
        _Matmul._flags[name] = bool(value)


matmul = _Matmul()
# the attention kernels scaled_dot_product_attention may use (ember.nn.attention.sdpa_kernel sets them too)
_SDP = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}


def enable_flash_sdp(enabled):
    """Same as `torch.backends.cuda.enable_flash_sdp`."""
    _SDP["flash"] = bool(enabled)


def flash_sdp_enabled():
    """Same as `torch.backends.cuda.flash_sdp_enabled`."""
    return _SDP["flash"]


def enable_mem_efficient_sdp(enabled):
    """Same as `torch.backends.cuda.enable_mem_efficient_sdp`."""
    _SDP["mem_efficient"] = bool(enabled)


def mem_efficient_sdp_enabled():
    """Same as `torch.backends.cuda.mem_efficient_sdp_enabled`."""
    return _SDP["mem_efficient"]


def enable_math_sdp(enabled):
    """Same as `torch.backends.cuda.enable_math_sdp`."""
    _SDP["math"] = bool(enabled)


def math_sdp_enabled():
    """Same as `torch.backends.cuda.math_sdp_enabled`."""
    return _SDP["math"]


def enable_cudnn_sdp(enabled):
    """Same as `torch.backends.cuda.enable_cudnn_sdp`."""
    _SDP["cudnn"] = bool(enabled)


def cudnn_sdp_enabled():
    """Same as `torch.backends.cuda.cudnn_sdp_enabled`."""
    return _SDP["cudnn"]


def preferred_linalg_library(backend=None):
    """Same as `torch.backends.cuda.preferred_linalg_library`: CuPy chooses (cuSOLVER); reported as 'default'."""
    return "default"
