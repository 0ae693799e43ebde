"""Tensor creation: from data, filled, ranges, special matrices; Tensor.fill_/zero_ and the Tensor.new_* family."""
import builtins
import itertools
import math
import warnings

import numpy as np

from .. import _dtype
from .._backend import XP, check_cuda_dtype, default_device, module_for, to_device
from .._device import CPU
from .._device import device as _device
from .._dtype import (
    FROM_NP,
    channels_last,
    channels_last_3d,
    contiguous_format,
    get_default_dtype,
    layout,
    memory_format,
    preserve_format,
)
from .._tensor import Size, Tensor
from ..autograd.grad_mode import GRAD
from ..autograd.graph import bump_version
from ._dispatch import Op, dispatch, dispatch1, dispatch2, wrap
from ._inplace import _ASSIGN, _FILL_INTO, check_leaf, commit, view_needs_grad, write_out

__all__ = [
    "arange",
    "as_tensor",
    "asarray",
    "complex",
    "empty",
    "empty_like",
    "empty_permuted",
    "empty_strided",
    "eye",
    "from_dlpack",
    "from_numpy",
    "frombuffer",
    "full",
    "full_like",
    "heaviside",
    "linspace",
    "logspace",
    "ones",
    "ones_like",
    "polar",
    "range",
    "scalar_tensor",
    "tensor",
    "tril_indices",
    "triu_indices",
    "zeros",
    "zeros_like",
    # the layout and memory-format names live with the dtypes; exported here with the creation functions
    "layout",
    "memory_format",
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
    "preserve_format",
]

_PY_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)
_UNSUPPORTED_NP = ("can't convert np.ndarray of type {}. The only supported types are: float64, float32, float16, "
                   "complex64, complex128, int64, int32, int16, int8, uint8, and bool.")
_COPY_WARNING = ("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                 "sourceTensor.detach().clone().requires_grad_(True), rather than ember.tensor(sourceTensor).")
# the C type names torch's checked scalar conversion reports ("value cannot be converted to type ...")
_C_NAMES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
            "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
            "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


# ----- argument helpers -----

def _check_dtype(dtype, fname):
    if dtype is not None and dtype.__class__ is not _dtype.dtype:
        raise TypeError(f"{fname}(): argument 'dtype' must be ember.dtype, not {type(dtype).__name__}")


def _resolve_device(device):
    if device is None:
        return default_device()
    return _device(device)


def _finish(arr, device, requires_grad):
    """Wrap a CPU array as a tensor on `device`, with requires_grad as the factory functions set it."""
    if device is not None:
        dev = _device(device)
        if dev.type != "cpu":
            arr = to_device(arr, dev)
    elif default_device().type != "cpu":
        arr = to_device(arr, default_device())
    t = Tensor._make(arr)
    if requires_grad:
        _set_requires_grad(t)
    return t


def _set_requires_grad(t):
    if t._data.dtype.kind not in "fcV":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t._requires_grad = True


def _out(result, out, name):
    return result if out is None else write_out(result, out, name)


def _compute_limits(dt):
    if dt._cat == _dtype._INT:
        info = np.iinfo(dt.np)
        hi = builtins.int(info.max)
        return (-hi, hi) if info.min == 0 else (builtins.int(info.min), hi)
    info = _dtype.finfo(dt)
    return info.min, info.max


_LIMITS = {}


def _limits(dt):
    """(lowest, highest) values a scalar may have to be stored in dt without overflow, by torch's rules
    (unsigned types also accept negatives down to -max, which wrap)."""
    lim = _LIMITS.get(dt)
    if lim is None:
        lim = _LIMITS[dt] = _compute_limits(dt)
    return lim


def _checked_scalar(value, dt, names=None):
    """value converted for storage in dt; RuntimeError where torch reports an overflow."""
    name = (names or _C_NAMES)[dt.name]
    if dt is _dtype.bool:
        return builtins.bool(value)
    if isinstance(value, (builtins.complex, np.complexfloating)):
        if dt._cat == _dtype._COMPLEX:
            return value
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        value = value.real
    lo, hi = _limits(dt.to_real())
    if dt._cat == _dtype._INT:
        if isinstance(value, (builtins.float, np.floating)):
            if not math.isfinite(value):
                raise RuntimeError(f"value cannot be converted to type {name} without overflow")
            value = math.trunc(value)
        value = builtins.int(value)
        if not lo <= value <= hi:
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        return value if value >= 0 or np.iinfo(dt.np).min < 0 else value % (1 << (8 * dt.itemsize))
    if math.isfinite(value) and not lo <= value <= hi:
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    return value


# ----- from data -----

def _leaf_dtype(x):
    """The dtype torch infers for one scalar of nested data."""
    if x.__class__ is builtins.float:
        return get_default_dtype()
    if x.__class__ is builtins.int:
        return _dtype.int64
    if x.__class__ is builtins.bool:
        return _dtype.bool
    if x.__class__ is builtins.complex:
        return _dtype.default_complex()
    if isinstance(x, (Tensor, np.ndarray, np.generic)):
        try:
            return FROM_NP[x.dtype if x.__class__ is not Tensor else x._data.dtype]
        except KeyError:
            raise TypeError(_UNSUPPORTED_NP.format(x.dtype)) from None
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _infer_dtype(leaves, kinds):
    """torch's inference: the promotion of every scalar's dtype (Python floats count as the default dtype)."""
    if kinds <= {builtins.float, builtins.int, builtins.bool, builtins.complex}:
        if builtins.complex in kinds:
            return _dtype.default_complex()
        if builtins.float in kinds:
            return get_default_dtype()
        return _dtype.int64 if builtins.int in kinds else _dtype.bool
    result = None
    for k in kinds:
        if k in _PY_SCALARS:
            d = _leaf_dtype(k())
            result = d if result is None else _dtype.promote_types(result, d)
    for x in leaves:
        if x.__class__ not in _PY_SCALARS:
            d = _leaf_dtype(x)
            result = d if result is None else _dtype.promote_types(result, d)
    return result


_SCALAR_TYPES = frozenset(_PY_SCALARS)
_LIST_TYPES = frozenset((list, tuple))


def _is_seq(x):
    return isinstance(x, (list, tuple, builtins.range)) or (x.__class__ is np.ndarray and x.ndim > 0)


def _flatten(data):
    """(shape, flat list of scalars, their types, whether a sequence held NumPy arrays) of nested sequences, with
    torch's errors for ragged or mixed input. Each level is checked with set(map(...)) so plain lists of numbers
    never loop in Python."""
    shape = []
    level = [data]
    arrays = False
    while level:
        kinds = set(map(type, level))
        if kinds <= _SCALAR_TYPES:
            return shape, level, kinds, arrays
        if kinds <= _LIST_TYPES:
            lens = set(map(len, level))
        elif not any(_is_seq(x) for x in level):
            for x in level:
                if isinstance(x, (str, bytes)):
                    raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
            return shape, level, kinds, arrays
        else:
            arrays = arrays or (np.ndarray in kinds and len(shape) > 0)
            for x in level:
                if not _is_seq(x):
                    raise TypeError(f"new(): invalid data type '{type(x).__name__}'" if isinstance(x, (str, bytes))
                                    else "not a sequence")
            lens = set(map(len, level))
        n = len(level[0])
        if len(lens) > 1:
            bad = next(len(x) for x in level if len(x) != n)
            raise ValueError(f"expected sequence of length {n} at dim {len(shape)} (got {bad})")
        shape.append(n)
        level = list(itertools.chain.from_iterable(level))
    return shape, level, set(), arrays


def _tensor_scalar(t):
    d = t._data
    if d.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return t.item()


def _cast(src, dt):
    """src (a NumPy array) as dtype dt: complex to real drops the imaginary part (with torch's warning);
    float to integer truncates; overflow gives inf or wraps, as a C cast does."""
    if src.dtype == dt.np:
        return src
    if src.dtype.kind == "c" and dt._cat != _dtype._COMPLEX:
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
        src = src.real
    with np.errstate(over="ignore", invalid="ignore"):
        if src.dtype.kind == "f" and dt._cat == _dtype._INT:
            src = src.astype(np.int64)
        return src.astype(dt.np)


def _check_int_range(src, dt):
    lo, hi = _limits(dt)
    if src.size and src.dtype.kind in "fiu":
        with np.errstate(invalid="ignore"):
            bad = (not np.isfinite(src).all()) if src.dtype.kind == "f" else False
            if bad or src.min() < lo or src.max() > hi:
                raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")


def _array_from_leaves(leaves, shape, dt, kinds):
    if not kinds <= _SCALAR_TYPES and any(isinstance(x, Tensor) for x in leaves):
        leaves = [_tensor_scalar(x) if isinstance(x, Tensor) else x for x in leaves]
    if not leaves:
        return np.zeros(shape, dt.np)
    try:
        src = np.array(leaves)
    except OverflowError:
        raise ValueError("Overflow when unpacking long long") from None
    if src.dtype.kind == "O" or (src.dtype == np.uint64 and builtins.int in kinds):
        raise ValueError("Overflow when unpacking long long")
    if src.dtype.kind == "c" and dt._cat != _dtype._COMPLEX:
        raise TypeError("must be real number, not complex")
    if dt._cat == _dtype._INT and src.dtype != dt.np:
        _check_int_range(src, dt)
    return _cast(src, dt).reshape(shape)


def _native(arr):
    if arr.dtype not in FROM_NP:
        if arr.dtype.newbyteorder("=") in FROM_NP and not arr.dtype.isnative:
            raise ValueError("given numpy array has byte order different from the native byte order. Conversion "
                             "between byte orders is currently not supported.")
        raise TypeError(_UNSUPPORTED_NP.format(f"numpy.{arr.dtype.type.__name__}"))
    return arr


_DT_NAMES = {k: k for k in _C_NAMES}


def _scalar_array(x, dtype):
    """A 0-d array from a Python number, with torch.tensor's checks."""
    dt = dtype or _leaf_dtype(x)
    if dtype is None and x.__class__ is builtins.int and not -2 ** 63 <= x < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if x.__class__ is builtins.complex and dt._cat != _dtype._COMPLEX:
        raise TypeError("must be real number, not complex")
    if dt._cat == _dtype._INT:
        x = _checked_scalar(x, dt, _DT_NAMES)
    elif dt._cat != _dtype._BOOL and x.__class__ is builtins.int:
        x = builtins.float(x)
    with np.errstate(over="ignore"):
        return np.array(x, dt.np)


def _from_data(data, dtype):
    """A new NumPy array holding `data` (nested sequences, scalars, arrays, tensors) with torch's dtype rules."""
    c = data.__class__
    if c is builtins.float or c is builtins.int or c is builtins.bool or c is builtins.complex:
        return _scalar_array(data, dtype)
    if isinstance(data, Tensor):
        arr = data._data if data._data.__class__ is np.ndarray else data._data.get()
        return _cast(arr, dtype) if dtype is not None and arr.dtype != dtype.np else arr.copy()
    if c is np.ndarray:
        arr = _native(data)
        return _cast(arr, dtype) if dtype is not None and arr.dtype != dtype.np else arr.copy()
    if isinstance(data, np.generic):
        return _from_data(np.asarray(data), dtype)
    if c in XP or hasattr(data, "__cuda_array_interface__"):  # a CuPy array: to the host here, back by _finish
        return _from_data(data.get(), dtype)
    shape, leaves, kinds, arrays = _flatten(data)
    if arrays and leaves and not _LIST_OF_ARRAYS_WARNED[0]:
        _LIST_OF_ARRAYS_WARNED[0] = True  # once per process, as torch
        warnings.warn(_LIST_OF_ARRAYS_MSG, UserWarning, stacklevel=3)
    dt = dtype or (_infer_dtype(leaves, kinds) if leaves else get_default_dtype())
    return _array_from_leaves(leaves, shape, dt, kinds)


_LIST_OF_ARRAYS_WARNED = [False]
_LIST_OF_ARRAYS_MSG = ("Creating a tensor from a list of numpy.ndarrays is extremely slow. Please consider converting "
                       "the list to a single numpy.ndarray with numpy.array() before converting to a tensor.")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.tensor`: always copies. NumPy arrays with negative strides are accepted (copied)."""
    _check_dtype(dtype, "tensor")
    if isinstance(data, Tensor):
        warnings.warn(_COPY_WARNING, UserWarning, stacklevel=2)
    return _finish(_from_data(data, dtype), device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Same as `torch.as_tensor`: shares memory with a tensor or NumPy array when dtype and device allow."""
    _check_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        if device is None and dtype is None:
            return data
        return data.to(device=device, dtype=dtype)
    if data.__class__ is np.ndarray and (dtype is None or dtype.np == data.dtype) and (
            device is None or _device(device).type == "cpu") and not any(s < 0 for s in data.strides):
        return from_numpy(data)
    return _finish(_from_data(data, dtype), device, False)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """Same as `torch.asarray`: shares memory unless a copy is asked for or needed."""
    _check_dtype(dtype, "asarray")
    if copy:
        t = _finish(_from_data(obj, dtype), device, False) if not isinstance(obj, Tensor) else \
            obj.detach().to(device=device, dtype=dtype, copy=True)
    else:
        shareable = isinstance(obj, (Tensor, np.ndarray)) or hasattr(obj, "__array_interface__") or \
            hasattr(obj, "__dlpack__")
        if copy is False and not shareable:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        if not isinstance(obj, (Tensor, np.ndarray)) and shareable:
            obj = from_dlpack(obj) if hasattr(obj, "__dlpack__") else np.asarray(obj)
        t = as_tensor(obj, dtype=dtype, device=device)
        if copy is False and isinstance(obj, (Tensor, np.ndarray)) and (
                dtype is not None and dtype.np != obj.dtype if isinstance(obj, np.ndarray) else
                t is not obj and t._data is not obj._data):
            raise ValueError("can't alias tensor: a copy is needed to change its dtype or device")
    if requires_grad:
        t = t.detach() if t._requires_grad or t is obj else t
        _set_requires_grad(t)
    return t


def from_numpy(ndarray):
    """Same as `torch.from_numpy`: the tensor and the array share memory."""
    if ndarray.__class__ is not np.ndarray:
        if isinstance(ndarray, np.ndarray):  # a subclass (np.memmap, ...): its memory, as a plain array
            return from_numpy(ndarray.view(np.ndarray))
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__module__.replace('builtins', '')}"
                        f"{'.' if type(ndarray).__module__ != 'builtins' else ''}{type(ndarray).__name__})")
    _native(ndarray)
    if min(ndarray.strides, default=0) < 0:
        raise ValueError("At least one stride in the given numpy array is negative, and tensors with negative "
                         "strides are not currently supported. (You can probably work around this by making a copy "
                         "of your array  with array.copy().) ")
    if not ndarray.flags.writeable and not _READONLY_WARNED[0]:
        _READONLY_WARNED[0] = True  # once per process, as torch
        warnings.warn(_READONLY_MSG, UserWarning, stacklevel=2)
    return Tensor._make(ndarray)


_READONLY_WARNED = [False]
_READONLY_MSG = (
    "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. This means writing to "
    "this tensor will result in undefined behavior. You may want to copy the array to protect its data or make it "
    "writable before converting it to a tensor. This type of warning will be suppressed for the rest of this program.")


def from_dlpack(ext_tensor):
    """Same as `torch.from_dlpack`: shares memory with any object implementing the DLPack protocol."""
    if isinstance(ext_tensor, Tensor):
        return Tensor._make(ext_tensor._data)
    if not hasattr(ext_tensor, "__dlpack__"):  # a bare capsule (anything else is refused as an invalid one)
        from .._backend.dlpack import _array_from_capsule
        return Tensor._make(_array_from_capsule(ext_tensor))
    kind, _ = ext_tensor.__dlpack_device__() if hasattr(ext_tensor, "__dlpack_device__") else (1, 0)
    if kind == 1:  # kDLCPU
        return Tensor._make(_native(np.from_dlpack(ext_tensor)))
    cp = module_for(_device("cuda"))
    return Tensor._make(cp.from_dlpack(ext_tensor))


_BUFFER_WARNED = [False]


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """Same as `torch.frombuffer`: the tensor shares the buffer's memory."""
    _check_dtype(dtype, "frombuffer")
    mv = memoryview(buffer)
    nbytes, isz = mv.nbytes, dtype.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if count < 0 and (nbytes - offset) % isz:
        raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset ({offset} bytes) must be a "
                         f"multiple of element size ({isz})")
    if mv.readonly and not _BUFFER_WARNED[0]:
        _BUFFER_WARNED[0] = True
        warnings.warn("The given buffer is not writable, and ember does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to "
                      "a tensor. This type of warning will be suppressed for the rest of this program.",
                      UserWarning, stacklevel=2)
    arr = np.frombuffer(buffer, dtype.np, count, offset)
    if mv.readonly:
        arr = np.lib.stride_tricks.as_strided(arr, writeable=True) if arr.flags.writeable else _writable_alias(arr)
    return _finish(arr, None, requires_grad)


def _writable_alias(arr):
    # torch writes through a read-only buffer's memory; build a writable NumPy view over the same address
    iface = dict(arr.__array_interface__)
    iface["data"] = (iface["data"][0], False)

    class _Holder:
        __array_interface__ = iface
        keep = arr
    return np.asarray(_Holder())


# ----- filled -----

def size_args(size, fname=None):
    """The shape from *size: ints, one sequence of ints, an ember.Size, NumPy ints or one-element tensors."""
    if len(size) == 1 and size[0].__class__ is not builtins.int:
        if not isinstance(size[0], (builtins.int, np.integer, Tensor)):
            size = size[0]
            if not isinstance(size, (list, tuple)):
                raise TypeError(f"{fname or 'factory'}(): argument 'size' (position 1) must be tuple of ints, not "
                                f"{type(size).__name__}")
    for s in size:
        if s.__class__ is not builtins.int:
            return _size_slow(size, fname)
    if size and min(size) < 0:
        _negative_size(size, fname)
    return tuple(size)


def _size_slow(size, fname):
    shape = []
    for i, s in enumerate(size):
        if s.__class__ is builtins.int or isinstance(s, np.integer):
            shape.append(builtins.int(s))
        elif isinstance(s, Tensor) and s._data.size == 1 and s._data.dtype.kind in "iub":
            shape.append(builtins.int(s.item()))
        else:
            raise TypeError(f"{fname or 'factory'}(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"type must be tuple of ints,but got {type(s).__name__}\"")
    if shape and min(shape) < 0:
        _negative_size(shape, fname)
    return tuple(shape)


def _negative_size(shape, fname):
    if fname == "zeros":
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    s = min(shape)
    raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{', '.join(map(str, shape))}]")


def _filled(fill, shape, dtype, device, requires_grad):
    dev = device if device is CPU else _resolve_device(device)
    dt = (dtype or get_default_dtype()).np
    if dev is CPU or dev.type == "cpu":
        arr = np.empty(shape, dt) if fill is None else (np.zeros(shape, dt) if fill == 0 else np.full(shape, fill, dt))
    else:
        xp = module_for(dev)
        check_cuda_dtype(dt)
        with xp.cuda.Device(xp.cuda.runtime.getDevice() if dev.index is None else dev.index):
            arr = xp.empty(shape, dt) if fill is None else xp.full(shape, fill, dt)
    t = Tensor._make(arr)
    if requires_grad:
        _set_requires_grad(t)
    return t


def _factory(fill, size, out, dtype, device, requires_grad, name):
    _check_dtype(dtype, name)
    shape = size_args(size, name)
    if out is not None:
        return write_out(_filled(fill, shape, dtype or out.dtype, out.device, False), out, name)
    return _filled(fill, shape, dtype, device, requires_grad)


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.zeros` (sizes positional, or as size=)."""
    return _factory(0, args if size is None else (size,), out, dtype, device, requires_grad, "zeros")


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.ones` (sizes positional, or as size=)."""
    return _factory(1, args if size is None else (size,), out, dtype, device, requires_grad, "ones")


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
          memory_format=None):
    """Same as `torch.empty` (sizes positional, or as size=)."""
    if memory_format is not None and memory_format is not contiguous_format:
        return _empty_in_format(args if size is None else (size,), out, dtype, device, requires_grad, memory_format)
    return _factory(None, args if size is None else (size,), out, dtype, device, requires_grad, "empty")


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """Same as `torch.empty_permuted`: dimension physical_layout[0] outermost in memory, the last innermost."""
    size, order = tuple(size), tuple(physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(order))):
        raise RuntimeError(f"physical_layout must be a permutation of the dimensions, got {list(order)}")
    return relaid(_filled(None, [size[p] for p in order], dtype, device, False), order, requires_grad)


def _empty_in_format(size, out, dtype, device, requires_grad, memory_format):
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    t = _factory(None, size, out, dtype, device, requires_grad, "empty")
    order = like_order(t, memory_format, "empty")  # checks the format against the rank
    if order is None or out is not None:
        return t
    shape = t._data.shape
    return relaid(_filled(None, [shape[p] for p in order], dtype, device, False), order, requires_grad)


def _fill_value(fill_value, dtype):
    """(value, dtype) for full(): the dtype is inferred from the value like torch, the value checked for it."""
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _dtype.scalar_dtype(fill_value)
    return _checked_scalar(fill_value, dtype), dtype


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    """Same as `torch.full`: the dtype is inferred from fill_value when not given."""
    _check_dtype(dtype, "full")
    if not isinstance(size, (list, tuple)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    if out is not None and dtype is None:
        dtype = out.dtype
    value, dtype = _fill_value(fill_value, dtype)
    return _factory(value, (size,), out, dtype, device, requires_grad, "full")


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.empty_strided`."""
    _check_dtype(dtype, "empty_strided")
    shape, stride = size_args((size,), "empty_strided"), tuple(builtins.int(s) for s in stride)
    if len(shape) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality of strides "
                           f"({len(stride)})")
    dt = (dtype or get_default_dtype()).np
    n = 0 if 0 in shape else 1 + builtins.sum((s - 1) * st for s, st in zip(shape, stride))
    buf = np.empty(n, dt)
    arr = np.lib.stride_tricks.as_strided(buf, shape, tuple(st * dt.itemsize for st in stride))
    return _finish(arr, device, requires_grad)


# NOTE [ Memory formats of *_like results ]
# A *_like result is laid out as torch lays it out: preserve_format (the default) keeps the input's dim order
# (a channels_last input gives a channels_last result, a transposed one a transposed one), computed from the
# input's strides as torch's infer_dense_strides does; channels_last(_3d) and contiguous_format force a layout.
# The result is made in C order over the permuted shape, then transposed back (a view with the wanted strides).

def _dense_order(shape, strides):
    """The dims of an array from slowest to fastest, by torch's infer_dense_strides: sorted by stride, a larger
    dim first among equal strides, zero strides left where they are."""
    nd = len(shape)
    perm = list(builtins.range(nd - 1, -1, -1))  # fastest first
    for i in builtins.range(1, nd):
        d1 = i
        for d0 in builtins.range(i - 1, -1, -1):
            s0, s1 = strides[perm[d0]], strides[perm[d1]]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                break
            if s0 > s1 or shape[perm[d0]] > shape[perm[d1]]:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            else:
                break
    return perm[::-1]


def like_order(input, memory_format, name):
    """The dim order (slowest first) of a *_like result, or None for C order; see NOTE [ Memory formats of *_like
    results ]."""
    if memory_format is None or memory_format is preserve_format:
        d = input._data
        if d.flags.c_contiguous:
            return None
        order = _dense_order(d.shape, d.strides)
    elif memory_format is contiguous_format:
        return None
    elif memory_format is channels_last or memory_format is channels_last_3d:
        nd = 4 if memory_format is channels_last else 5
        if input._data.ndim != nd:
            raise RuntimeError(f"required rank {nd} tensor to use {memory_format.name} format")
        order = [0] + list(builtins.range(2, nd)) + [1]
    else:
        from .unary import py_typename
        raise TypeError(f"{name}(): argument 'memory_format' must be ember.memory_format, not "
                        f"{py_typename(memory_format)}")
    return None if order == sorted(order) else order


def relaid(t, order, requires_grad):
    """A tensor made over the permuted shape of `order`, transposed back to the logical shape (a leaf)."""
    inv = [0] * len(order)
    for i, p in enumerate(order):
        inv[p] = i
    r = Tensor._make(t._data.transpose(inv))
    if requires_grad:
        _set_requires_grad(r)
    return r


def _like(fill, input, dtype, device, requires_grad, memory_format, name):
    dev = device if device is not None else input.device
    if memory_format is None and input._data.flags.c_contiguous:
        return _filled(fill, input._data.shape, dtype or input.dtype, dev, requires_grad)
    order = like_order(input, memory_format, name)
    if order is None:
        return _filled(fill, input._data.shape, dtype or input.dtype, dev, requires_grad)
    shape = input._data.shape
    return relaid(_filled(fill, [shape[p] for p in order], dtype or input.dtype, dev, False), order, requires_grad)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.zeros_like`."""
    return _like(0, input, dtype, device, requires_grad, memory_format, "zeros_like")


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.ones_like`."""
    return _like(1, input, dtype, device, requires_grad, memory_format, "ones_like")


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.empty_like`."""
    return _like(None, input, dtype, device, requires_grad, memory_format, "empty_like")


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """Same as `torch.full_like`: the dtype is input's unless given."""
    value, dtype = _fill_value(fill_value, dtype or input.dtype)
    return _like(value, input, dtype, device, requires_grad, memory_format, "full_like")


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.scalar_tensor`: the default dtype unless given."""
    _check_dtype(dtype, "scalar_tensor")
    dt = dtype or get_default_dtype()
    if isinstance(s, Tensor):
        s = s.item()
    return _finish(np.array(s, dt.np), device, requires_grad)


# ----- ranges -----

def _number(v, name):
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    if not isinstance(v, (builtins.int, builtins.float, builtins.complex)):
        raise TypeError(f"{name}(): argument must be a number, not {type(v).__name__}")
    return v


def _fmt(v):
    return repr(v) if isinstance(v, builtins.float) and not v.is_integer() or isinstance(v, builtins.float) and \
        not math.isfinite(v) else str(builtins.int(v)) if isinstance(v, builtins.float) else str(v)


def _arange_array(start, end, step, dt):
    """torch's arange: integer dtypes compute in int64 from truncated bounds, floating ones in double (float for
    half types) from a length of ceil((end - start) / step)."""
    if dt._cat in (_dtype._INT, _dtype._BOOL):
        if dt is _dtype.bool:
            raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
        xs, xe, xst = (math.trunc(v) if isinstance(v, builtins.float) else builtins.int(v) for v in (start, end, step))
        if step == 0:
            raise RuntimeError("step must be nonzero")
        if xst == 0 and dt is _dtype.int64:  # a step that truncates to 0 (other int types just repeat start)
            raise ValueError("step must be nonzero")
        _check_range_sign(xs, xe, xst, start, end)
        if dt is _dtype.int64:
            sgn = (xst > 0) - (xst < 0)
            n = builtins.int((xe - xs + xst - sgn) / xst) if abs(xe - xs) < 2 ** 52 else (xe - xs + xst - sgn) // xst
        else:
            n = math.ceil((builtins.float(end) - builtins.float(start)) / builtins.float(step))
        return (xs + np.arange(max(n, 0), dtype=np.int64) * xst).astype(dt.np)
    acc = np.float32 if dt in (_dtype.float16, _dtype.bfloat16) else np.float64
    xs, xe, xst = (acc(v.real if isinstance(v, builtins.complex) else v) for v in (start, end, step))
    if xst == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xs) and math.isfinite(xe)):
        raise RuntimeError(f"unsupported range: {_fmt(start)} -> {_fmt(end)}")
    _check_range_sign(xs, xe, xst, start, end)
    n = math.ceil((builtins.float(end.real if isinstance(end, builtins.complex) else end) - builtins.float(
        start.real if isinstance(start, builtins.complex) else start)) / builtins.float(
        step.real if isinstance(step, builtins.complex) else step))
    with np.errstate(over="ignore"):
        return (xs + np.arange(max(n, 0), dtype=acc) * xst).astype(dt.np)


def _check_range_sign(xs, xe, xst, start, end):
    if (xst > 0 and xe < xs) or (xst < 0 and xe > xs):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")


def arange(start=None, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    """Same as `torch.arange`: int64 for integer arguments, the default dtype otherwise."""
    _check_dtype(dtype, "arange")
    if end is None:
        if start is None:
            raise TypeError("arange() missing 1 required positional argument: 'end'")
        start, end = 0, start
    elif start is None:  # arange(end=n)
        start = 0
    if start.__class__ is builtins.int and end.__class__ is builtins.int and step.__class__ is builtins.int and (
            dtype is None or dtype is _dtype.int64) and out is None and step and (end - start) * step >= 0:
        return _finish(np.arange(start, end, step, dtype=np.int64), device, requires_grad)
    start, end, step = _number(start, "arange"), _number(end, "arange"), _number(step, "arange")
    if dtype is None:
        dtype = out.dtype if out is not None else _dtype.int64 if all(
            isinstance(v, builtins.int) for v in (start, end, step)) else get_default_dtype()
    arr = _arange_array(start, end, step, dtype)
    return _out(_finish(arr, device, requires_grad), out, "arange")


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """Same as `torch.range` (deprecated): includes `end`; the default dtype unless given."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    _check_dtype(dtype, "range")
    if end is None:
        start, end = 0, start
    start, end, step = _number(start, "range"), _number(end, "range"), _number(step, "range")
    dt = dtype or (out.dtype if out is not None else get_default_dtype())
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_fmt(start)} -> {_fmt(end)}")
    _check_range_sign(start, end, step, start, end)
    n = math.floor((end - start) / step) + 1
    acc = np.int64 if dt._cat == _dtype._INT else np.float64
    arr = (acc(start) + np.arange(n, dtype=acc) * acc(step)).astype(dt.np)
    return _out(_finish(arr, device, requires_grad), out, "range")


def _steps(steps, name):
    if isinstance(steps, Tensor):
        steps = steps.item()
    if not isinstance(steps, (builtins.int, np.integer)) or isinstance(steps, builtins.bool):
        raise TypeError(f"{name}(): argument 'steps' must be int, not {type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return builtins.int(steps)


def _compute_type(dt):
    """The type torch's linspace kernel steps in: double for integer results, the result's own type otherwise."""
    if dt._cat in (_dtype._INT, _dtype._BOOL):
        return np.float64
    return dt.np


def _lin_positions(start, end, steps, ct):
    """linspace points in type ct, filled from both ends as torch does (exact endpoints, symmetric rounding)."""
    s, e = ct.type(start), ct.type(end)
    if steps == 1:
        return np.array([s], ct)
    step = (e - s) / ct.type(steps - 1)
    idx = np.arange(steps)
    half = steps // 2
    lo = s + step * idx[:half].astype(ct)
    hi = e - step * (steps - idx[half:] - 1).astype(ct)
    return np.concatenate((lo, hi))


def _linspace_array(start, end, steps, dt):
    if steps == 0:
        return np.empty(0, dt.np)
    ct = np.dtype(_compute_type(dt))
    if dt._cat in (_dtype._INT, _dtype._BOOL):
        # integer start/end first (truncated), the step in double
        start, end = (math.trunc(v.real if isinstance(v, builtins.complex) else v) for v in (start, end))
    elif dt._cat == _dtype._FLOAT:
        start, end = (v.real if isinstance(v, builtins.complex) else v for v in (start, end))
    with np.errstate(over="ignore", invalid="ignore"):
        return _lin_positions(start, end, steps, ct).astype(dt.np)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """Same as `torch.linspace`."""
    _check_dtype(dtype, "linspace")
    start, end = _number(start, "linspace"), _number(end, "linspace")
    steps = _steps(steps, "linspace")
    if dtype is None:
        dtype = out.dtype if out is not None else _dtype.default_complex() if isinstance(
            start, builtins.complex) or isinstance(end, builtins.complex) else get_default_dtype()
    return _out(_finish(_linspace_array(start, end, steps, dtype), device, requires_grad), out, "linspace")


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """Same as `torch.logspace`: base ** linspace(start, end, steps), the power taken in double."""
    _check_dtype(dtype, "logspace")
    start, end = _number(start, "logspace"), _number(end, "logspace")
    steps = _steps(steps, "logspace")
    if dtype is None:
        dtype = out.dtype if out is not None else get_default_dtype()
    if steps == 0:
        arr = np.empty(0, dtype.np)
    else:
        ct = np.dtype(np.float64 if dtype._cat in (_dtype._INT, _dtype._BOOL) else dtype.np)
        if ct.kind not in "fc":
            ct = np.dtype(np.float32)  # bfloat16 steps in float32 (exact for its values)
        exps = _lin_positions(start.real if ct.kind != "c" and isinstance(start, builtins.complex) else start,
                              end.real if ct.kind != "c" and isinstance(end, builtins.complex) else end, steps, ct)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            base_c = np.complex128(base) if ct.kind == "c" else np.float64(base)
            arr = np.power(base_c, exps.astype(np.complex128 if ct.kind == "c" else np.float64))
            arr = _cast(arr, dtype)
    return _out(_finish(arr, device, requires_grad), out, "logspace")


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.eye`."""
    _check_dtype(dtype, "eye")
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is None:
        m = n
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt = dtype or (out.dtype if out is not None else get_default_dtype())
    return _out(_finish(np.eye(n, m, dtype=dt.np), device, requires_grad), out, "eye")


def _tri_indices(row, col, offset, dtype, device, name, lower):
    _check_dtype(dtype, name)
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = dtype or _dtype.int64
    if dt._cat != _dtype._INT:
        raise NotImplementedError(f"\"{name}\" not implemented for '{_scalar_name(dt)}'")
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return _finish(np.stack((r, c)).astype(dt.np), device, False)


def _scalar_name(dt):
    from .._dtype import SCALAR_NAMES
    return SCALAR_NAMES[dt.name]


def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=False):
    """Same as `torch.tril_indices`."""
    return _tri_indices(row, col, offset, dtype, device, "tril_indices", True)


def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=False):
    """Same as `torch.triu_indices`."""
    return _tri_indices(row, col, offset, dtype, device, "triu_indices", False)


# ----- complex construction -----

def _real_bwd(ctx, g):
    return (dispatch2(_COMPLEX, g, zeros_like(g)),)


def _imag_bwd(ctx, g):
    return (dispatch2(_COMPLEX, zeros_like(g), g),)


# real/imag parts as copies: the gradient pieces of complex() and polar()
_REAL = Op("real", lambda z: z.real.copy(), _real_bwd, node_name="RealBackward0")
_IMAG = Op("imag", lambda z: z.imag.copy(), _imag_bwd, node_name="ImagBackward0")


def _complex_fwd(re, im):
    xp = XP[re.__class__]
    out = xp.empty(np.broadcast_shapes(re.shape, im.shape), np.result_type(re.dtype, np.complex64))
    out.real = re
    out.imag = im
    return out


_COMPLEX = Op("complex", _complex_fwd, lambda ctx, g: (dispatch1(_REAL, g), dispatch1(_IMAG, g)),
              node_name="ComplexBackward0")


def _check_real_pair(a, b):
    da, db = FROM_NP[a._data.dtype], FROM_NP[b._data.dtype]
    if da not in (_dtype.float16, _dtype.float32, _dtype.float64) or db not in (
            _dtype.float16, _dtype.float32, _dtype.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_scalar_name(da)} "
                           f"and {_scalar_name(db)}")
    if da is not db:
        raise RuntimeError(f"Expected object of scalar type {_scalar_name(da)} but got scalar type "
                           f"{_scalar_name(db)} for second argument")
    if da is _dtype.float16:
        raise RuntimeError("ember has no complex32 dtype: complex() needs float32 or float64 inputs")


def complex(real, imag, *, out=None):
    """Same as `torch.complex` (float16 inputs are refused: ember has no complex32)."""
    _check_real_pair(real, imag)
    r = dispatch2(_COMPLEX, real, imag)
    if out is not None and out._data.dtype != r._data.dtype:
        names = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}
        raise RuntimeError(f"Expected object of scalar type {names.get(r._data.dtype.name, r._data.dtype.name)} but "
                           f"got scalar type {names.get(out._data.dtype.name, out._data.dtype.name)} for argument "
                           f"'out'")
    return _out(r, out, "complex")


def _polar_fwd(r, theta):
    xp = XP[r.__class__]
    out = _complex_fwd(r * xp.cos(theta), r * xp.sin(theta))
    return out, None


def _polar_bwd(ctx, g):
    # grad_abs = Re(conj(g) * sgn(out)), grad_angle = Re(conj(g) * 1j * out) = Im(g * conj(out)); the
    # coefficients are taken as constants (double backward through them is not supported)
    y = ctx.output._data
    xp = XP[y.__class__]
    mag = xp.abs(y)
    sgn = xp.where(mag == 0, 0, y / xp.where(mag == 0, 1, mag))
    ga = dispatch1(_REAL, g * wrap(xp.conj(sgn))) if ctx.needs_input_grad[0] else None
    gt = dispatch1(_IMAG, g * wrap(xp.conj(y))) if ctx.needs_input_grad[1] else None
    return ga, gt


_POLAR = Op("polar", _polar_fwd, _polar_bwd, save=2, extra=True, node_name="PolarBackward0")


def polar(abs, angle, *, out=None):
    """Same as `torch.polar` (double backward is not supported)."""
    _check_real_pair(abs, angle)
    return _out(dispatch2(_POLAR, abs, angle), out, "polar")


def _heaviside_fwd(x, v):
    xp = XP[x.__class__]
    return xp.where(x == 0, v, (x > 0).astype(x.dtype)).astype(x.dtype)


_HEAVISIDE = Op("heaviside", _heaviside_fwd, None)


def heaviside(input, values, *, out=None):
    """Same as `torch.heaviside` (not differentiable, as in torch)."""
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if input._data.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if GRAD[0] and (input._requires_grad or values._requires_grad):
        raise RuntimeError("the derivative for 'heaviside' is not implemented.")
    return _out(dispatch(_HEAVISIDE, (input, values)), out, "heaviside")


Tensor.heaviside = heaviside


def _heaviside_(self, values):
    """Same as `torch.Tensor.heaviside_`."""
    return self.copy_(heaviside(self, values))


Tensor.heaviside_ = _heaviside_


# ----- Tensor.fill_ / zero_ -----

def _fill_bwd(ctx, g):
    return (zeros_like(g),)


def _fill_tensor_bwd(ctx, g):
    return zeros_like(g) if ctx.needs_input_grad[0] else None, g.sum() if ctx.needs_input_grad[1] else None


_FILL = Op("fill", lambda x, v: np.full_like(x, v) if x.__class__ is np.ndarray else XP[x.__class__].full_like(x, v),
           _fill_bwd, node_name="FillBackward2")
_FILL_T = Op("fill", lambda x, v: XP[x.__class__].full_like(x, v.reshape(())), _fill_tensor_bwd,
             node_name="FillBackward3")
_ZERO = Op("zero", lambda x: XP[x.__class__].zeros_like(x), _fill_bwd, node_name="ZeroBackward0")


def _fill_inplace(self, op, name, *args):
    if self._base is not None and view_needs_grad(self):  # a view made under no_grad of a base in the graph
        check_leaf(self)
    if GRAD[0] and (self._requires_grad or any(a._requires_grad for a in args if isinstance(a, Tensor))):
        check_leaf(self)
        src = Tensor._make(self._data)
        src._requires_grad, src._grad_fn, src._output_nr = self._requires_grad, self._grad_fn, self._output_nr
        src._accum = self._accum
        tensors = (src,) + tuple(a for a in args if isinstance(a, Tensor))
        attrs = tuple(a for a in args if not isinstance(a, Tensor))
        commit(self, dispatch(op, tensors, *attrs), name)
        return self
    return None


def fill_(self, value):
    """Same as `torch.Tensor.fill_`."""
    if isinstance(value, Tensor):
        if value._data.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._data.ndim} dimensions.")
        if value._data.dtype != self._data.dtype:
            value = value.to(self.dtype)
        if _fill_inplace(self, _FILL_T, "fill_", value) is None:
            if value._data.__class__ is self._data.__class__:
                _ASSIGN.fwd(self._data, value._data)
            else:  # a CPU scalar into GPU memory (or back)
                self._data.fill(value.item())
            bump_version(self, "fill_")
        return self
    v = _checked_scalar(value, FROM_NP[self._data.dtype])
    if _fill_inplace(self, _FILL, "fill_", v) is None:
        _FILL_INTO.fwd(self._data, v)
        bump_version(self, "fill_")
    return self


def zero_(self):
    """Same as `torch.Tensor.zero_`."""
    if _fill_inplace(self, _ZERO, "zero_") is None:
        _FILL_INTO.fwd(self._data, 0)
        bump_version(self, "zero_")
    return self


Tensor.fill_ = fill_
Tensor.zero_ = zero_


# ----- Tensor.new_* -----

def _new_dtype_device(self, dtype, device):
    return dtype or FROM_NP[self._data.dtype], device if device is not None else self.device


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Same as `torch.Tensor.new_tensor`: a copy of data with self's dtype and device unless given."""
    if isinstance(data, Tensor):
        warnings.warn(_COPY_WARNING.replace("ember.tensor(sourceTensor)", "tensor.new_tensor(sourceTensor)"),
                      UserWarning, stacklevel=2)
    dt, dev = _new_dtype_device(self, dtype, device)
    return _finish(_from_data(data, dt), dev, requires_grad)


def _new_filled(self, fill, size, dtype, device, requires_grad, name):
    dt, dev = _new_dtype_device(self, dtype, device)
    return _filled(fill, size_args(size, name), dt, dev, requires_grad)


def _new_zeros(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Same as `torch.Tensor.new_zeros`."""
    return _new_filled(self, 0, args if size is None else (size,), dtype, device, requires_grad, "new_zeros")


def _new_ones(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Same as `torch.Tensor.new_ones`."""
    return _new_filled(self, 1, args if size is None else (size,), dtype, device, requires_grad, "new_ones")


def _new_empty(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Same as `torch.Tensor.new_empty`."""
    return _new_filled(self, None, args if size is None else (size,), dtype, device, requires_grad, "new_empty")


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """Same as `torch.Tensor.new_full`: self's dtype unless given (not inferred from fill_value)."""
    dt, dev = _new_dtype_device(self, dtype, device)
    value, dt = _fill_value(fill_value, dt)
    return _filled(value, size_args((size,), "new_full"), dt, dev, requires_grad)


def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                       pin_memory=False):
    """Same as `torch.Tensor.new_empty_strided`."""
    dt, dev = _new_dtype_device(self, dtype, device)
    return empty_strided(size, stride, dtype=dt, device=dev, requires_grad=requires_grad)


Tensor.new_tensor = _new_tensor
Tensor.new_zeros = _new_zeros
Tensor.new_ones = _new_ones
Tensor.new_empty = _new_empty
Tensor.new_full = _new_full
Tensor.new_empty_strided = _new_empty_strided


# NOTE [ The legacy constructors ]
# Tensor(sequence), Tensor(*sizes), Tensor(Size) and Tensor() build with the default float dtype; t.new(...) with
# t's dtype and device. They are creation ops, so they live here and are bound onto the class like the rest.
def _legacy_new(cls, *args, device=None):
    if not args:
        t = empty(0, device=device)
    elif len(args) == 1 and not isinstance(args[0], builtins.int):
        a = args[0]
        if isinstance(a, Tensor):
            t = a  # torch returns the given tensor itself
        elif isinstance(a, Size):
            t = empty(a, device=device)
        elif isinstance(a, (builtins.float, builtins.complex, str)):
            what = f"invalid data type '{type(a).__name__}'" if isinstance(a, str) else \
                f"data must be a sequence (got {type(a).__name__})"
            raise TypeError(f"new(): {what}")
        else:
            t = tensor(a, dtype=_dtype.get_default_dtype(), device=device)
    else:
        t = empty(*args, device=device)
    if cls is Tensor:
        return t
    return t.as_subclass(cls)


def _new(self, *args, device=None):
    """Same as `torch.Tensor.new`: the legacy constructor with this tensor's dtype and device."""
    dev = self.device if device is None else device
    if not args:
        return empty(0, dtype=self.dtype, device=dev)
    a = args[0]
    if len(args) == 1 and not isinstance(a, builtins.int):
        if isinstance(a, Tensor):
            if a.dtype is not self.dtype:
                raise TypeError(f"expected {self.dtype} (got {a.dtype})")
            return a
        if isinstance(a, Size):
            return empty(a, dtype=self.dtype, device=dev)
        if isinstance(a, (builtins.float, builtins.complex, str)):
            raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
        return tensor(a, dtype=self.dtype, device=dev)
    return empty(*args, dtype=self.dtype, device=dev)


Tensor.__new__ = _legacy_new
Tensor.new = _new
