"""The array layer: NumPy on the CPU, CuPy on the GPU (imported only when a GPU tensor is asked for)."""
import ml_dtypes
import numpy as np

from .._device import CPU, device
from . import deferred as _deferred

_BF16 = np.dtype(ml_dtypes.bfloat16)

# NOTE [ Floating-point exceptions ]
# torch never warns about overflow, division by zero or invalid operations (1 / 0 is inf, 0 / 0 is nan, log(-1)
# is nan); NumPy warns by default. A per-call np.errstate costs more than a small add itself, so the error state
# is set once, here, for the importing thread (NumPy keeps it per thread; ember's own worker threads set it too).
np.seterr(all="ignore")

# NOTE [ Keeping freed host memory ]
# glibc serves large arrays with fresh mmaps and returns them to the OS when freed, so an op that allocates the
# same temporaries every call (im2col buffers, gradients) pays page faults each time: a small conv2d took 4-6 ms
# instead of 1.1 ms. Arrays below 256 MiB are therefore served from the heap, and up to 512 MiB of freed heap is
# kept for reuse: the CPU counterpart of a caching allocator. It applies to the whole process (glibc only).
def _keep_freed_memory():
    import ctypes
    import sys
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 256 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 512 << 20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # not glibc: leave the allocator alone
        pass


_keep_freed_memory()

# type(array) -> array module; CuPy's entry is added when CuPy is first imported
XP = {np.ndarray: np}
_default_devices = []


def xp_of(array):
    return XP[type(array)]


def read_only(arr):
    """True for a read-only NumPy array (a broadcast view); CuPy arrays have no such flag."""
    return arr.__class__ is np.ndarray and not arr.flags.writeable


if np.lib.NumpyVersion(np.__version__) >= "2.1.0":
    def _numpy_reshape_view(arr, shape):
        if arr.flags.c_contiguous:  # always a view; the copy= keyword alone would double the cost
            return arr.reshape(shape)
        try:
            return arr.reshape(shape, copy=False)
        except ValueError:  # the strides allow no view of that shape
            return None
else:
    def _numpy_reshape_view(arr, shape):  # NumPy 2.0 has no reshape(copy=False); its .shape setter never copies
        view = arr.view()
        try:
            view.shape = shape
        except AttributeError:
            return None
        return view


def reshape_view(arr, shape):
    """arr with a new shape over the same memory, or None where its strides allow no such view (NumPy's
    reshape would copy). NumPy 2.5 deprecates assigning .shape, the old way to ask for this."""
    if isinstance(arr, np.ndarray):
        return _numpy_reshape_view(arr, shape)
    out = arr.reshape(shape)  # CuPy's reshape copies exactly when no view exists; a copy lives elsewhere
    return out if out.data.ptr == arr.data.ptr or arr.size == 0 else None


_SCIPY = {}


def scipy_module(array, name):
    """scipy.<name> for NumPy arrays, cupyx.scipy.<name> for CuPy arrays (None where that is not installed),
    imported on first use: scipy is slow to import."""
    key = (array.__class__, name)
    mod = _SCIPY.get(key)
    if mod is None:
        import importlib
        try:
            mod = importlib.import_module(("scipy." if array.__class__ is np.ndarray else "cupyx.scipy.") + name)
        except ImportError:
            mod = False
        _SCIPY[key] = mod
    return mod or None


def device_of(array):
    if type(array) is np.ndarray:
        return CPU
    return device("cuda", array.device.id)


def cupy():
    """Import CuPy on first use, with a clear error where it or a GPU is missing."""
    try:
        import cupy as cp
    except ImportError:
        raise RuntimeError(
            "CUDA is not available: ember's GPU support needs CuPy (pip install 'ember[cuda]') and an NVIDIA GPU"
        ) from None
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError
    except Exception:
        raise RuntimeError("CUDA is not available: CuPy is installed but found no NVIDIA GPU") from None
    if XP.get(cp.ndarray) is not cp:
        XP[cp.ndarray] = cp
        from ..cuda.memory import _install
        _install(cp)  # every GPU allocation goes through ember's counting allocator (memory_allocated, peaks)
    return cp


def check_cuda_dtype(dt):
    """CuPy has no bfloat16: refuse it clearly rather than with CuPy's own error."""
    if dt == _BF16:
        raise RuntimeError("bfloat16 tensors on CUDA are not supported yet (CuPy has no bfloat16 type); use "
                           "float16 or float32 on the GPU")


def host(array):
    """A device array copied to the host, after raising any device check that failed (see NOTE [ Deferred device
    checks ] in deferred.py): every read of device values that makes the host wait goes through here."""
    if _deferred._pending:
        _deferred.synchronize()
    return array.get()


def maybe_any(mask):
    """mask.any() for a NumPy array; True for a device array, whose answer would make the host wait for the GPU:
    code that only skips work when nothing is set takes the general path there."""
    return mask.__class__ is not np.ndarray or mask.any()


def module_for(dev):
    """The array module for an ember device."""
    if dev.type == "cpu":
        return np
    return cupy()


def to_device(array, dev, non_blocking=False):
    """Move an array to a device; the same array when it is already there."""
    if dev.type == "cpu":
        if type(array) is np.ndarray:
            return array
        if non_blocking:  # into page-locked memory, queued on the current stream: the caller synchronizes
            from ..cuda._pinned import empty_pinned
            out = empty_pinned(array.shape, array.dtype)
            array.get(stream=XP[type(array)].cuda.get_current_stream(), out=out, blocking=False)
            return out
        return host(array)
    cp = cupy()
    check_cuda_dtype(array.dtype)
    idx = dev.index if dev.index is not None else cp.cuda.runtime.getDevice()
    if type(array) is cp.ndarray and array.device.id == idx:
        return array
    with cp.cuda.Device(idx):
        if type(array) is np.ndarray:
            out = cp.empty(array.shape, array.dtype)
            src = array if array.flags.c_contiguous else np.ascontiguousarray(array)
            # non_blocking: queued on the current stream (asynchronous when src is page-locked, as in torch)
            out.set(src, stream=cp.cuda.get_current_stream() if non_blocking else None)
            return out
        return cp.asarray(array)


def default_device():
    return _default_devices[-1] if _default_devices else CPU


def push_default_device(dev):
    _default_devices.append(device(dev))


def pop_default_device():
    _default_devices.pop()


def set_default_device(dev):
    """Same as `torch.set_default_device`: where factory functions put tensors when no device is given."""
    _default_devices.clear()
    if dev is not None:
        _default_devices.append(device(dev))
