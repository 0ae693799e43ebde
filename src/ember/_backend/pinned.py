"""Page-locked host memory for fast, asynchronous host-device copies.

A pinned array is an ordinary NumPy array whose memory comes from CuPy's pinned pool (cupy.cuda.alloc_pinned_memory);
CuPy copies from and to such arrays asynchronously on the current stream.
"""
import sys

import numpy as np


def empty_pinned(shape, dtype):
    """An uninitialised NumPy array in page-locked memory."""
    cp = sys.modules["cupy"]
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    mem = cp.cuda.alloc_pinned_memory(max(size * dtype.itemsize, 1))  # CuPy's pinned pool caches these blocks
    return np.frombuffer(mem, dtype, size).reshape(shape)


def require_gpu():
    """Pinning needs a GPU, as in torch: its error where CuPy or a GPU is missing."""
    from . import cupy
    try:
        cupy()
    except RuntimeError:
        raise RuntimeError("Cannot access accelerator device when none is available.") from None


def pinned_copy(x):
    """A copy of NumPy array x in page-locked memory."""
    out = empty_pinned(x.shape, x.dtype)
    out[...] = x
    return out


def _owner(arr):
    """The object that owns an array's memory (walking views and buffers)."""
    base = arr
    while True:
        nxt = getattr(base, "base", None) if isinstance(base, np.ndarray) else getattr(base, "obj", None)
        if nxt is None:
            return base
        base = nxt


def is_pinned(arr):
    """Whether a NumPy array's memory is page-locked (False without CuPy)."""
    cp = sys.modules.get("cupy")
    if arr.__class__ is not np.ndarray or cp is None or arr.base is None:
        return False
    pinned = getattr(cp.cuda, "pinned_memory", None)
    if pinned is None:
        return False
    return isinstance(_owner(arr), (pinned.PinnedMemoryPointer, pinned.PinnedMemory))
