"""Page-locked host memory for fast, asynchronous host-device copies.

A pinned tensor is an ordinary CPU tensor whose NumPy array lies in memory from CuPy's pinned pool
(cupy.cuda.alloc_pinned_memory); CuPy copies from and to such arrays asynchronously on the current stream.
"""
import sys

import numpy as np

from .._ops._dispatch import Op, dispatch1


def empty_pinned(shape, dtype):
    """An uninitialised NumPy array in page-locked memory."""
    cp = sys.modules["cupy"]
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    mem = cp.cuda.alloc_pinned_memory(max(size * dtype.itemsize, 1))  # CuPy's pinned pool caches these blocks
    return np.frombuffer(mem, dtype, size).reshape(shape)


def _pinned_copy(x):
    out = empty_pinned(x.shape, x.dtype)
    out[...] = x
    return out


_PIN = Op("_pin_memory", _pinned_copy, lambda ctx, g: g)


def pin_memory(tensor):
    """Same as `torch.Tensor.pin_memory`: a copy in page-locked memory (the tensor itself if already pinned)."""
    from . import is_available
    if not is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if tensor._data.__class__ is not np.ndarray:
        raise RuntimeError(f"cannot pin a tensor on {tensor.device}: only dense CPU tensors can be pinned")
    from . import _state
    _state.cupy()
    if is_pinned(tensor):
        return tensor
    return dispatch1(_PIN, tensor)


def _owner(arr):
    """The object that owns an array's memory (walking views and buffers)."""
    base = arr
    while True:
        nxt = getattr(base, "base", None) if isinstance(base, np.ndarray) else getattr(base, "obj", None)
        if nxt is None:
            return base
        base = nxt


def is_pinned(tensor):
    """Same as `torch.Tensor.is_pinned`: whether the tensor's memory is page-locked (False without a GPU)."""
    arr = tensor._data
    cp = sys.modules.get("cupy")
    if arr.__class__ is not np.ndarray or cp is None or arr.base is None:
        return False
    pinned = getattr(cp.cuda, "pinned_memory", None)
    if pinned is None:
        return False
    return isinstance(_owner(arr), (pinned.PinnedMemoryPointer, pinned.PinnedMemory))
