"""Tensor creation: from data, filled, ranges."""
import builtins
import numbers

import numpy as np

from .. import _dtype
from .._backend import default_device, module_for, to_device
from .._device import device as _device
from .._dtype import FROM_NP, get_default_dtype
from .._tensor import Tensor

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
           "ones_like", "full_like", "empty_like", "arange"]


def _infer_dtype(data):
    """torch's dtype inference for nested Python data: bool < int (int64) < float (default) < complex."""
    cat = -1
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            return None
        elif isinstance(x, np.ndarray):
            return None
        elif isinstance(x, (builtins.bool, np.bool_)):
            cat = max(cat, 0)
        elif isinstance(x, (builtins.int, np.integer)):
            cat = max(cat, 1)
        elif isinstance(x, (builtins.float, np.floating)):
            cat = max(cat, 2)
        elif isinstance(x, (builtins.complex, np.complexfloating)):
            cat = max(cat, 3)
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    if cat == 3:
        return _dtype.default_complex()
    return (_dtype.bool, _dtype.int64, get_default_dtype(), get_default_dtype())[cat] if cat >= 0 else \
        get_default_dtype()


def _resolve_device(device):
    if device is None:
        return default_device()
    return _device(device)


def _from_data(data, dtype):
    """A NumPy array from nested data, with torch's dtype inference."""
    if isinstance(data, Tensor):
        arr = data._data
        if arr.__class__ is not np.ndarray:
            arr = arr.get()
        return arr.astype(dtype.np) if dtype is not None else arr.copy()
    if isinstance(data, np.ndarray):
        if dtype is None:
            if data.dtype not in FROM_NP:
                raise TypeError(f"can't convert np.ndarray of type {data.dtype}. The only supported types are: "
                                f"float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                                f"uint8, and bool.")
            return data.copy()
        return data.astype(dtype.np)
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, Tensor) for x in data):
            data = [_from_data(x, None) if isinstance(x, Tensor) else x for x in data]
    inferred = _infer_dtype(data) if dtype is None else dtype
    if inferred is None:
        arr = np.array(data)
        return arr
    try:
        return np.array(data, dtype=inferred.np)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists or a number: {e}") from None


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.tensor`: always copies."""
    arr = _from_data(data, dtype)
    if arr.dtype.kind == "f" and dtype is None and isinstance(data, np.ndarray) is False and not isinstance(
            data, Tensor):
        pass
    dev = _resolve_device(device)
    if dev.type != "cpu":
        arr = to_device(arr, dev)
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data, dtype=None, device=None):
    """Same as `torch.as_tensor`: shares memory with a tensor or NumPy array when dtype and device allow."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (device is not None or dtype is not None) else data
    if isinstance(data, np.ndarray) and data.dtype in FROM_NP and (dtype is None or dtype.np == data.dtype):
        t = from_numpy(data)
        return t if device is None else t.to(device)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Same as `torch.asarray`."""
    t = tensor(obj, dtype=dtype, device=device) if copy else as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray):
    """Same as `torch.from_numpy`: the tensor and the array share memory."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if ndarray.dtype not in FROM_NP:
        raise TypeError(f"can't convert np.ndarray of type {ndarray.dtype}. The only supported types are: float64, "
                        f"float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a copy "
                         "of your array  with array.copy().) ")
    return Tensor._make(ndarray)


def size_args(size):
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = size[0]
    if len(size) == 1 and isinstance(size[0], Tensor):
        size = size[0].tolist()
    try:
        shape = tuple(builtins.int(s) for s in size)
    except TypeError:
        raise TypeError(f"expected a sequence of integers as the size, got {size!r}") from None
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{', '.join(map(str, shape))}]")
    return shape


def _filled(fill, shape, dtype, device, requires_grad):
    dev = _resolve_device(device)
    xp = module_for(dev)
    dt = (dtype or get_default_dtype()).np
    if dev.type == "cpu":
        arr = np.empty(shape, dt) if fill is None else (np.zeros(shape, dt) if fill == 0 else np.full(shape, fill, dt))
    else:
        with xp.cuda.Device(dev.index or 0):
            arr = xp.empty(shape, dt) if fill is None else xp.full(shape, fill, dt)
    t = Tensor._make(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.zeros`."""
    return _filled(0, size_args(size), dtype, device, requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.ones`."""
    return _filled(1, size_args(size), dtype, device, requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """Same as `torch.empty`."""
    return _filled(None, size_args(size), dtype, device, requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.full`: the dtype is inferred from fill_value when not given."""
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    return _filled(fill_value, size_args((size,)), dtype, device, requires_grad)


def _like(fill, input, dtype, device, requires_grad):
    return _filled(fill, input._data.shape, dtype or input.dtype, device if device is not None else input.device,
                   requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.zeros_like`."""
    return _like(0, input, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.ones_like`."""
    return _like(1, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.empty_like`."""
    return _like(None, input, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.full_like`."""
    return _like(fill_value, input, dtype, device, requires_grad)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.arange`: int64 for integer arguments, the default dtype otherwise."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = _dtype.int64 if all(isinstance(v, (builtins.int, np.integer)) for v in vals) else get_default_dtype()
    start, end, step = vals
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    n = builtins.int(np.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64) * step).astype(dtype.np) if dtype.np.kind in "fcV" or any(
        isinstance(v, builtins.float) for v in vals) else np.arange(start, end, step, dtype=dtype.np)
    t = Tensor._make(arr)
    dev = _resolve_device(device)
    if dev.type != "cpu":
        t = t.to(dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _new_like(self, fill, size, dtype, device, requires_grad):
    return _filled(fill, size_args(size), dtype or self.dtype, device if device is not None else self.device,
                   requires_grad)


Tensor.new_zeros = lambda self, *size, dtype=None, device=None, requires_grad=False, **kw: _new_like(
    self, 0, size, dtype, device, requires_grad)
Tensor.new_ones = lambda self, *size, dtype=None, device=None, requires_grad=False, **kw: _new_like(
    self, 1, size, dtype, device, requires_grad)
Tensor.new_empty = lambda self, *size, dtype=None, device=None, requires_grad=False, **kw: _new_like(
    self, None, size, dtype, device, requires_grad)
Tensor.new_full = lambda self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kw: _new_like(
    self, fill_value, (size,), dtype, device, requires_grad)
Tensor.new_tensor = lambda self, data, *, dtype=None, device=None, requires_grad=False, **kw: tensor(
    data, dtype=dtype or self.dtype, device=device if device is not None else self.device,
    requires_grad=requires_grad)
