"""autocast: regions in which matmul-like ops run in lower precision (NOTE [ Autocast ] in ember/_autocast.py)."""
import copy
import functools
import warnings

from .. import _autocast as state
from .._dtype import bfloat16, float16, float32, float64
from .._dtype import dtype as _dtype_cls

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_SUPPORTED = {"cpu": (bfloat16, float16), "cuda": (bfloat16, float16, float32)}


def is_autocast_available(device_type):
    """Same as `torch.amp.is_autocast_available`."""
    return device_type in state.ENABLED


def _cuda_available():
    from .. import cuda
    return cuda.is_available()


def _cuda_bf16_supported():
    from .. import cuda
    return cuda.is_bf16_supported()


class autocast:
    """Same as `torch.autocast`: a context manager and decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            from .._device import device
            device(device_type)  # raises for an unknown device string, as torch
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = state.DTYPE[device_type] if dtype is None else dtype
        if not isinstance(self.fast_dtype, _dtype_cls):
            raise ValueError(f"Expected `dtype` of type `torch.dtype`, got: `{type(self.fast_dtype)}`")
        self._cache_enabled = state.CACHE_ENABLED[0] if cache_enabled is None else cache_enabled
        if enabled and device_type == "cuda" and not _cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        if enabled and device_type == "cuda" and self.fast_dtype is bfloat16 and not _cuda_bf16_supported():
            raise RuntimeError("Current CUDA Device does not support bfloat16. Please switch dtype to float16.")
        if enabled and self.fast_dtype not in _SUPPORTED[device_type]:
            names = ", ".join(str(d) for d in _SUPPORTED[device_type])
            warnings.warn(f"In {device_type.upper()} autocast, but the target dtype is not supported. Disabling "
                          f"autocast.\n{device_type.upper()} Autocast only supports dtypes of {names} currently.",
                          stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        dev = self.device
        self.prev = (state.ENABLED[dev], state.DTYPE[dev], state.CACHE_ENABLED[0])
        state.ENABLED[dev] = self._enabled
        state.DTYPE[dev] = self.fast_dtype
        state.CACHE_ENABLED[0] = self._cache_enabled
        state.AUTOCAST[0] = any(state.ENABLED.values())
        state.NESTING[0] += 1
        return self

    def __exit__(self, *exc):
        state.NESTING[0] -= 1
        if state.NESTING[0] == 0:
            state.clear_cache()
        dev = self.device
        state.ENABLED[dev], state.DTYPE[dev], state.CACHE_ENABLED[0] = self.prev
        state.AUTOCAST[0] = any(state.ENABLED.values())
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with copy.copy(self):  # a fresh object per call: recursive calls keep their own saved state
                return func(*args, **kwargs)
        return decorated


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Same as `torch.amp.custom_fwd`: a custom Function's forward runs under the caller's autocast state, or,
    with cast_inputs, with its floating-point tensor inputs cast to cast_inputs and autocast disabled."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = state.DTYPE[device_type]
        if cast_inputs is None:
            args[0]._fwd_used_autocast = state.ENABLED[device_type]
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False  # backward then runs without autocast, as the forward did
        if not state.ENABLED[device_type]:
            return fwd(*args, **kwargs)
        args = tuple(_cast_input(a, cast_inputs, device_type) for a in args)
        kwargs = {k: _cast_input(v, cast_inputs, device_type) for k, v in kwargs.items()}
        with autocast(device_type=device_type, enabled=False):
            return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Same as `torch.amp.custom_bwd`: backward runs under the autocast state its forward ran under."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


def _cast_input(value, dtype, device_type):
    if hasattr(value, "_data") and value.is_floating_point() and value.dtype is not float64 \
            and value.device.type == device_type:
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_input(v, dtype, device_type) for v in value)
    if isinstance(value, dict):
        return {k: _cast_input(v, dtype, device_type) for k, v in value.items()}
    return value
