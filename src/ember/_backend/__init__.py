"""The array layer: NumPy on the CPU, CuPy on the GPU (imported only when a GPU tensor is asked for)."""
import ml_dtypes
import numpy as np

from .._device import CPU, DEFAULT_DEVICES, device
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
            "CUDA is not available: ember's GPU support needs CuPy (install ember's cuda12 or cuda13 extra, for "
            "the CUDA version of the NVIDIA driver) and an NVIDIA GPU"
        ) from None
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            raise RuntimeError
    except Exception:
        raise RuntimeError("CUDA is not available: CuPy is installed but found no NVIDIA GPU") from None
    if XP.get(cp.ndarray) is not cp:
        XP[cp.ndarray] = cp
        _cuda_bf16[0] = cupy_bf16_missing(cp)
        from .cuda_alloc import _install
        _install(cp)  # every GPU allocation goes through ember's counting allocator (memory_allocated, peaks)
    return cp


# NOTE [ bfloat16 on CUDA ]
# CuPy 14 holds ml_dtypes' bfloat16 when NumPy is 2.1.2 or newer (with older NumPy, CuPy leaves its bfloat16
# loops out): elementwise math, comparisons, casts both ways, sum/prod/min/max/mean (accumulated in float32) and
# cuBLAS matmul (matmul_bf16 below). Its sorts (Thrust, CUB) have no bfloat16, so sort keys are widened to float32
# (sort_keys below). Older CuPy has no bfloat16, and no CuPy has ml_dtypes' other types (float8_*, int4...):
# check_cuda_dtype refuses those where a tensor is put on a GPU, with ember's error naming the dtype, instead of
# CuPy's "Unsupported dtype" from inside a kernel.
_cuda_bf16 = [None]  # None when the imported CuPy holds bfloat16, else why not (set on import)


def cupy_bf16_missing(cp):
    """None when this CuPy (with this NumPy) holds bfloat16 arrays, else what is missing."""
    version = getattr(cp, "__version__", "0")
    try:
        major = int(version.split(".")[0])
    except ValueError:
        major = 0
    if major < 14:
        return f"CuPy {version} has no bfloat16 (CuPy 14 or newer has)"
    if np.lib.NumpyVersion(np.__version__) < "2.1.2":
        return f"CuPy's bfloat16 needs NumPy 2.1.2 or newer (NumPy {np.__version__} is installed)"
    return None


_native_bf16_gemm = [True]  # cleared the first time CuPy's bfloat16 GEMM raises


def matmul_bf16(a, b):
    """a @ b of two bfloat16 arrays, as bfloat16 (one rounding of a float32-accumulated product).

    NumPy has no bfloat16 BLAS: it multiplies in float32. CuPy 14 calls cuBLAS's bfloat16 GEMM (float32
    accumulation, tensor cores). Where that raises (a cuBLAS or GPU without it), the product is taken in float32
    on the GPU instead, which always works, and stays so for the rest of the process.
    """
    if a.__class__ is not np.ndarray and _deferred.CAPTURING[0] is not None:
        return matmul(a, b)
    if a.__class__ is not np.ndarray and _native_bf16_gemm[0]:
        try:
            return XP[a.__class__].matmul(a, b).astype(a.dtype, copy=False)
        except (TypeError, RuntimeError):
            _native_bf16_gemm[0] = False
    return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)


def where(condition, x, y):
    """np.where(condition, x, y) in the dtype of x and y (arrays or scalars of one dtype: the caller promotes).
    CuPy's where has no bfloat16 loop and answers float32; there bfloat16 is selected by its bit patterns, exact and
    without a float32 temporary."""
    like = x if x.__class__ in XP else y
    if like.__class__ is not np.ndarray and like.__class__ in XP and like.dtype == _BF16:
        return XP[like.__class__].where(condition, _bf16_bits(x), _bf16_bits(y)).view(_BF16)
    return np.where(condition, x, y)


def _bf16_bits(v):
    """A bfloat16 device array's bits as uint16 (a view); a host value's as a NumPy uint16 scalar (a kernel
    argument, not a copy to the device)."""
    if v.__class__ is not np.ndarray and v.__class__ in XP:
        return v.view(np.uint16)
    return np.asarray(v, dtype=_BF16).view(np.uint16)[()]


def sort_keys(arr):
    """arr as the keys of a sort, partition or binary search: bfloat16 as float32, an exact widening. NumPy's sorts
    compare ml_dtypes' bfloat16 one element pair at a time and misorder arrays that hold NaN; CuPy's sorts (Thrust,
    CUB) have no bfloat16 at all."""
    return arr.astype(np.float32) if arr.dtype == _BF16 else arr


def check_cuda_dtype(dt):
    """Refuse, before CuPy sees them, the dtypes CuPy cannot hold (NOTE [ bfloat16 on CUDA ])."""
    if dt.num >= 256:  # NPY_USERDEF: a dtype from outside NumPy (ml_dtypes' bfloat16, float8_*, int4...)
        _refuse_cuda_dtype(dt)


def _refuse_cuda_dtype(dt):
    if dt != _BF16:
        raise TypeError(f"{dt.name} tensors are not supported on device cuda: CuPy has no {dt.name} type; use "
                        "bfloat16, float16 or float32 on the GPU")
    if _cuda_bf16[0] is not None:
        raise RuntimeError(f"bfloat16 tensors on device cuda need CuPy 14 or newer with NumPy 2.1.2 or newer: "
                           f"{_cuda_bf16[0]}. Install ember's cuda12 or cuda13 extra (see the README), or use "
                           "float16 or float32 on the GPU")


def host(array):
    """A device array copied to the host, after raising any device check that failed (see NOTE [ Deferred device
    checks ] in deferred.py): every read of device values that makes the host wait goes through here."""
    if _deferred.CAPTURING[0] is not None:
        raise_capturing("reading device values on the host (.item(), .cpu(), .tolist(), .numpy(), printing, bool())")
    if _deferred._pending:
        _deferred.synchronize()
    return array.get()


def matmul(a, b):
    """np.matmul(a, b); while a CUDA graph is captured, device products run as ember's own kernel, since CuPy
    refuses to capture cuBLAS (captured_gemm.py)."""
    if _deferred.CAPTURING[0] is None or a.__class__ is np.ndarray:
        return np.matmul(a, b)
    from .captured_gemm import matmul as captured
    return captured(a, b)


def raise_capturing(what):
    """The error for host work a CUDA graph capture cannot contain (NOTE [ CUDA graphs ] in ember/cuda/graphs.py)."""
    raise RuntimeError(f"operation not permitted when stream is capturing: {what} makes the host wait for the GPU, "
                       "which a CUDA graph capture cannot contain; do it before or after the captured region")


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
            from .pinned import empty_pinned
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
    return DEFAULT_DEVICES[-1] if DEFAULT_DEVICES else CPU


def set_default_device(dev):
    """Same as `torch.set_default_device`: where factory functions put tensors when no device is given."""
    DEFAULT_DEVICES.clear()
    if dev is not None:
        DEFAULT_DEVICES.append(device(dev))
