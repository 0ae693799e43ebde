"""Same as `safetensors.torch` for ember tensors: save_file/load_file/save/load, through safetensors' NumPy API.

safetensors is an optional dependency (pip install safetensors). Shared or overlapping tensors are saved as
copies (safetensors.torch refuses them), and complex128 has no safetensors dtype.
"""
import numpy as np

from .. import _dtype
from .._tensor import Tensor

__all__ = ["load", "load_file", "load_model", "save", "save_file", "save_model"]


def _package():
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError("ember.utils.safetensors needs the safetensors package: pip install safetensors") from None
    return safetensors


# safetensors' dtype codes that ember has
_CODES = {"F64": _dtype.float64, "F32": _dtype.float32, "F16": _dtype.float16, "BF16": _dtype.bfloat16,
          "I64": _dtype.int64, "I32": _dtype.int32, "I16": _dtype.int16, "I8": _dtype.int8, "U8": _dtype.uint8,
          "BOOL": _dtype.bool, "C64": _dtype.complex64}


def _arrays(tensors):
    """name -> C-contiguous host array, checking what safetensors can hold."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, ember.Tensor] but received {type(tensors)}")  # noqa: TRY004
    out = {}
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected ember.Tensor but received {type(v)}")  # noqa: TRY004
        if v.dtype is _dtype.complex128:
            raise ValueError(f"Key `{k}`: safetensors has no complex128 dtype; convert it to complex64 first")
        arr = v._data if v._data.__class__ is np.ndarray else v._data.get()
        out[k] = np.ascontiguousarray(arr)  # safetensors reads raw memory: strided views must be copied
    return out


def _tensors(arrays, device):
    from .._backend import to_device
    from .._device import device as _device
    dev = _device(device)
    out = {}
    for k, arr in arrays.items():
        if arr.dtype not in _dtype.FROM_NP:
            raise TypeError(f"Key `{k}`: ember has no dtype for the safetensors dtype {arr.dtype}")
        if not arr.flags.writeable:
            arr = arr.copy()
        out[k] = Tensor._make(arr if dev.type == "cpu" else to_device(arr, dev))
    return out


def save(tensors, metadata=None):
    """Same as `safetensors.torch.save`: the safetensors bytes of a dict of tensors."""
    return _package().numpy.save(_arrays(tensors), metadata=metadata)


def save_file(tensors, filename, metadata=None):
    """Same as `safetensors.torch.save_file`."""
    _package().numpy.save_file(_arrays(tensors), filename, metadata=metadata)


def load(data):
    """Same as `safetensors.torch.load`: tensors from safetensors bytes."""
    arrays = {}
    for name, view in _package().deserialize(data):
        dt = _CODES.get(view["dtype"])
        if dt is None:
            raise TypeError(f"Key `{name}`: ember has no dtype for the safetensors dtype {view['dtype']}")
        arrays[name] = np.frombuffer(view["data"], dt.np).reshape(view["shape"]).copy()
    return _tensors(arrays, "cpu")


def load_file(filename, device="cpu"):
    """Same as `safetensors.torch.load_file`."""
    return _tensors(_package().numpy.load_file(filename), device)


def save_model(model, filename, metadata=None, force_contiguous=False):
    """Same as `safetensors.torch.save_model`: the model's state_dict (shared tensors saved as copies)."""
    save_file(dict(model.state_dict()), filename, metadata={"format": "pt"} if metadata is None else metadata)


def load_model(model, filename, strict=True, device="cpu"):
    """Same as `safetensors.torch.load_model`: returns (missing, unexpected) key lists."""
    result = model.load_state_dict(load_file(filename, device=device), strict=strict)
    return result.missing_keys, result.unexpected_keys
