"""ember.save / ember.load: PyTorch's checkpoint format (a zip of a pickle plus raw storages), without torch."""
import collections
import contextlib
import io
import os
import pickle
import struct
import sys
import zipfile
import zlib
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

import numpy as np

from . import _dtype
from ._device import device as _device
from ._tensor import Size, Tensor, _address, _contiguous_strides

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_ALIGN = 64  # torch aligns every record's data to 64 bytes, which lets mmap=True map storages in place

# NOTE [ Checkpoint format ]
# A checkpoint is what torch.save writes: a zip whose records all live under one folder (the file's stem, or
# "archive" for file objects): data.pkl (the object skeleton, pickled with protocol 2), data/<key> (the raw bytes
# of one storage each), byteorder, version, .format_version, .storage_alignment and .data/serialization_id.
# In data.pkl a storage is a persistent id ('storage', torch.<Type>Storage, key, location, numel) and a tensor is
# torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict()), with offset, size
# and stride in elements. ember writes those names verbatim (torch need not be importable: a marker object pickles
# as the GLOBAL opcode) and maps them back to ember on load. One storage is written per NumPy memory block (the
# array at the end of the `.base` chain) and dtype, so views saved together load as views of one storage.

_STORAGE_NAMES = {
    "bool": "BoolStorage", "uint8": "ByteStorage", "int8": "CharStorage", "int16": "ShortStorage",
    "int32": "IntStorage", "int64": "LongStorage", "float16": "HalfStorage", "bfloat16": "BFloat16Storage",
    "float32": "FloatStorage", "float64": "DoubleStorage", "complex64": "ComplexFloatStorage",
    "complex128": "ComplexDoubleStorage",
}


class _Global:
    """A marker that pickles as the GLOBAL `module.name`, whether or not that module can be imported."""
    __slots__ = ("module", "name")
    __name__ = "_Global"  # save_reduce reads func.__name__

    def __init__(self, module, name):
        self.module = module
        self.name = name

    def __call__(self, *args):  # save_reduce insists on a callable
        raise TypeError(f"{self.module}.{self.name} is a pickling marker")


_REBUILD_V2 = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_PARAM_STATE = _Global("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE = _Global("torch._tensor", "_rebuild_from_type_v2")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_TORCH_TENSOR = _Global("torch", "Tensor")
_TORCH_SIZE = _Global("torch", "Size")
_TORCH_DEVICE = _Global("torch", "device")
_STORAGE_GLOBALS = {name: _Global("torch", s) for name, s in _STORAGE_NAMES.items()}
_DTYPE_GLOBALS = {name: _Global("torch", name) for name in _STORAGE_NAMES}


def _parameter_cls():
    from .nn.parameter import Parameter
    return Parameter


# ---------------------------------------------------------------------------------------------------------------
# saving
# ---------------------------------------------------------------------------------------------------------------

class _StorageEntry:
    """One storage to write: a flat byte view of a memory block, and its persistent id."""
    __slots__ = ("flat", "keep", "key", "numel", "pid")

    def __init__(self, key, flat, dt, location, keep):
        self.key = key
        self.flat = flat  # 1-D uint8 view of the whole block (NumPy or CuPy)
        self.numel = flat.size // dt.itemsize
        self.pid = ("storage", _STORAGE_GLOBALS[_dtype.from_np(dt).name], key, location, self.numel)
        self.keep = keep  # keeps the arrays whose ids key this entry alive


class _StorageRef:
    """What a tensor's pickled args hold in place of a storage; pickled as its persistent id."""
    __slots__ = ("pid",)

    def __init__(self, pid):
        self.pid = pid


def _root(arr):
    """The array that owns (or first wraps) arr's memory."""
    cls = np.ndarray if isinstance(arr, np.ndarray) else type(arr)
    while isinstance(arr.base, cls):
        arr = arr.base
    return arr


def _flat_bytes(arr):
    """A 1-D uint8 view of arr's memory when that memory is one dense block with non-negative strides, else None."""
    if arr.flags.c_contiguous:
        v = arr
    elif arr.flags.f_contiguous:
        v = arr.T
    else:  # dense in some other axis order (ufunc results keep their inputs' layout)
        if any(s < 0 for s in arr.strides):
            return None
        v = arr.transpose(sorted(range(arr.ndim), key=lambda i: -arr.strides[i]))
        if not v.flags.c_contiguous:
            return None
    return v.reshape(-1).view(np.uint8)


def _location(arr):
    return "cpu" if isinstance(arr, np.ndarray) else f"cuda:{arr.device.id}"


def _view_in(arr, flat):
    """(offset, stride) in elements of arr inside the block `flat`, or None when torch cannot express it."""
    isz = arr.itemsize
    off = _address(arr) - _address(flat)
    if off < 0 or off % isz or flat.size % isz:
        return None
    shape = arr.shape
    cstrides = _contiguous_strides(shape)
    stride = []
    end = off + isz
    for n, s, cs in zip(shape, arr.strides, cstrides):
        if n == 1:
            stride.append(cs)  # any stride is valid for a size-1 dim: use torch's contiguous one
            continue
        if s < 0 or s % isz:
            return None
        stride.append(s // isz)
        end += (n - 1) * s
    if end > flat.size:
        return None
    return off // isz, tuple(stride)


class _Pickler(pickle._Pickler):
    """The pure-Python pickler, writing tensors, dtypes, devices and sizes under torch's names."""
    dispatch = dict(pickle._Pickler.dispatch)  # noqa: RUF012 (the pickle module's own protocol)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.entries = {}  # (id(block), dtype) -> _StorageEntry, in the order met
        # no Parameter can exist before ember.nn is imported: do not import it just to save tensors
        self._param = getattr(sys.modules.get("ember.nn.parameter"), "Parameter", None)

    def persistent_id(self, obj):
        return obj.pid if obj.__class__ is _StorageRef else None

    def _save_marker(self, obj):
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    def _save_dtype(self, obj):
        self.save(_DTYPE_GLOBALS[obj.name])
        self.memoize(obj)

    def _save_size(self, obj):
        self.save_reduce(_TORCH_SIZE, (tuple(obj),), obj=obj)

    def _save_device(self, obj):
        args = (obj.type,) if obj.index is None else (obj.type, obj.index)
        self.save_reduce(_TORCH_DEVICE, args, obj=obj)

    def _save_layout(self, obj):
        self.save_reduce(_GET_LAYOUT, (f"torch.{obj.name}",), obj=obj)

    dispatch[_Global] = _save_marker
    dispatch[_dtype.layout] = _save_layout
    dispatch[_dtype.dtype] = _save_dtype
    dispatch[Size] = _save_size
    dispatch[_device] = _save_device

    def reducer_override(self, obj):
        if not isinstance(obj, Tensor):
            return NotImplemented
        cls = type(obj)
        if obj.layout is not _dtype.strided:  # torch's form: the layout and the parts, themselves dense tensors
            if obj.layout is _dtype.sparse_csr:
                data = (obj.crow_indices(), obj.col_indices(), obj.values(), obj.shape)
            else:
                data = (obj._indices(), obj._values(), obj.shape, obj.is_coalesced())
            return (_REBUILD_SPARSE, (obj.layout, data))
        state = obj.__dict__ or None
        if cls is self._param:
            args = (Tensor._make(obj._data), obj._requires_grad, collections.OrderedDict())
            return (_REBUILD_PARAM_STATE, args + (dict(state),)) if state else (_REBUILD_PARAM, args)
        args = self._tensor_args(obj)
        if cls is Tensor and state is None:
            return (_REBUILD_V2, args)
        # tensors with attributes and subclasses, as torch writes them
        return (_REBUILD_FROM_TYPE, (_REBUILD_V2, _TORCH_TENSOR if cls is Tensor else cls, args, dict(state or {})))

    def _tensor_args(self, t):
        if t._requires_grad:
            _warn_if_has_hooks(t)
        arr = t._data
        ref, offset, stride = self._storage_for(arr)
        return (ref, offset, tuple(arr.shape), stride, t._requires_grad, collections.OrderedDict())

    def _storage_for(self, arr):
        if arr.size:
            root = _root(arr)
            key = (id(root), arr.dtype)
            e = self.entries.get(key)
            if e is None:
                flat = _flat_bytes(root)
                if flat is not None:
                    e = self._add(key, flat, arr.dtype, _location(arr), root)
            if e is not None:
                where = _view_in(arr, e.flat)
                if where is not None:
                    return _StorageRef(e.pid), where[0], where[1]
        # not expressible over its block (negative strides, odd layouts) or empty: a contiguous copy of its own
        key = ("copy", id(arr))
        e = self.entries.get(key)
        if e is None:
            c = arr if arr.flags.c_contiguous else arr.copy(order="C")
            e = self._add(key, c.reshape(-1).view(np.uint8), arr.dtype, _location(arr), (arr, c))
        return _StorageRef(e.pid), 0, _contiguous_strides(arr.shape)

    def _add(self, key, flat, dt, location, keep):
        e = _StorageEntry(str(len(self.entries)), flat, dt, location, keep)
        self.entries[key] = e
        return e


def _warn_if_has_hooks(t):
    """As torch: saving drops a tensor's backward hooks, so say so unless the hook is marked unserializable."""
    node = t._grad_fn or t._accum
    for output_nr, hook in (node._tensor_hooks if node is not None else None) or ():
        if output_nr == t._output_nr and not getattr(hook, "_retains_grad", False) \
                and not hasattr(hook, "__torch_unserializable__"):
            import warnings
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @ember.utils.hooks.unserializable_hook to suppress this "
                          "warning", UserWarning, stacklevel=4)


def _host_bytes(flat):
    """A buffer over the storage's bytes on the host (a copy only for GPU arrays)."""
    if not isinstance(flat, np.ndarray):
        flat = flat.get()
    return memoryview(flat)


class _ZipWriter:
    """Writes torch's zip records, each record's data aligned to 64 bytes (stored, never compressed).

    A record's header is written with its CRC-32 already known, followed by the data in one write: no second pass
    over the file, and the checksums of big records can be computed in other threads meanwhile (see `_write_zip`).
    """

    def __init__(self, f, prefix):
        self.zf = zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self.prefix = prefix
        self.crc = 0

    def write(self, name, data, crc=None):
        data = memoryview(data).cast("B")
        zf = self.zf
        zinfo = zipfile.ZipInfo(f"{self.prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        zinfo.compress_type = zipfile.ZIP_STORED
        zinfo.file_size = zinfo.compress_size = n = data.nbytes
        zinfo.CRC = zlib.crc32(data) if crc is None else crc
        zinfo.external_attr = 0o644 << 16
        fname = zinfo.filename.encode("ascii" if zinfo.filename.isascii() else "utf-8")
        zip64 = n * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule for a 20-byte zip64 extra field
        start = zf.start_dir + 30 + len(fname) + 4 + (20 if zip64 else 0)
        pad = -start % _ALIGN
        zinfo.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad  # the padding field torch writes ("FB")
        zf._writecheck(zinfo)
        zinfo.header_offset = zf.start_dir
        zf._didModify = True
        zf.fp.write(zinfo.FileHeader(zip64))
        zf.fp.write(data)
        zf.start_dir = zf.fp.tell()
        zf.filelist.append(zinfo)
        zf.NameToInfo[zinfo.filename] = zinfo
        self.crc = zlib.crc32(struct.pack("<I", zinfo.CRC), self.crc)

    def close(self):
        self.zf.close()


_PARALLEL_CRC = 1 << 20  # storages from this size on are checksummed in other threads while earlier ones are written


def _write_zip(f, prefix, pkl, entries, byteorder=True):
    w = _ZipWriter(f, prefix)
    entries = sorted(entries, key=lambda e: e.key)
    pool = None
    try:
        w.write("data.pkl", pkl)
        w.write(".format_version", b"1")
        w.write(".storage_alignment", str(_ALIGN).encode())
        if byteorder:
            w.write("byteorder", sys.byteorder.encode())
        crcs = {}
        big = [e for e in entries if isinstance(e.flat, np.ndarray) and e.flat.nbytes >= _PARALLEL_CRC]
        if big:
            from concurrent.futures import ThreadPoolExecutor
            # one thread suffices: writing a record takes longer than its checksum (both release the GIL)
            pool = ThreadPoolExecutor(1)
            crcs = {id(e): pool.submit(zlib.crc32, memoryview(e.flat)) for e in big}
        for e in entries:
            crc = crcs.get(id(e))
            w.write(f"data/{e.key}", _host_bytes(e.flat), None if crc is None else crc.result())
        w.write("version", b"3\n")
        w.write(".data/serialization_id", f"{int.from_bytes(os.urandom(8), 'little'):020d}{w.crc:020d}".encode())
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        w.close()


class _LegacyPickler(_Pickler):
    def persistent_id(self, obj):  # legacy ids end with a view_metadata field
        return obj.pid + (None,) if obj.__class__ is _StorageRef else None


def _write_legacy(f, pkl, entries, pickle_protocol):
    sys_info = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle.dump(header, f, protocol=pickle_protocol)
    f.write(pkl)
    pickle.dump([e.key for e in entries], f, protocol=pickle_protocol)
    for e in entries:
        f.write(struct.pack("<q", e.numel))
        f.write(_host_bytes(e.flat))


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Same as `torch.save`: torch's zip format, readable by `torch.load`; saving to a path is atomic.

    ember always pickles with its own (pure-Python) pickler, so `pickle_module` is accepted but not used.
    """
    is_path = isinstance(f, (str, os.PathLike))
    if is_path:
        path = os.fsdecode(os.fspath(f))
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {os.path.dirname(path) or parent} does not exist.")
    elif not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    # pickle the skeleton first: an unpicklable object fails before any file is touched
    buf = io.BytesIO()
    p = (_Pickler if _use_new_zipfile_serialization else _LegacyPickler)(buf, pickle_protocol)
    p.dump(obj)
    pkl, entries = buf.getbuffer(), list(p.entries.values())

    def write(fh, prefix):
        if _use_new_zipfile_serialization:
            _write_zip(fh, prefix, pkl, entries, not _disable_byteorder_record)
        else:
            _write_legacy(fh, pkl, entries, pickle_protocol)
    if not is_path:
        return write(f, "archive")
    stem = os.path.splitext(os.path.basename(path))[0] or "archive"
    _atomic_write(path, lambda fh: write(fh, stem))


def _atomic_write(path, write):
    """Write through a temp file in the same folder, fsync, then rename over path: all or nothing."""
    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with open(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)


def _fsync_dir(folder):
    # makes the rename itself durable (POSIX); best effort: some file systems refuse fsync on folders
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------------------------------

class _Corrupt(Exception):
    """The bytes are not a well-formed checkpoint; load() reports it as a RuntimeError naming the file."""


class _Refused(pickle.UnpicklingError):
    """A global that weights_only=True does not allow."""


class _UserError(Exception):
    """An exception raised by a user's map_location callable, passed through unchanged."""


class _StorageType:
    """What torch.<Type>Storage names unpickle to: only the dtype matters."""
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def __repr__(self):
        return f"ember storage type ({self.dtype})"


class _Storage:
    """One loaded storage: its bytes (a 1-D uint8 NumPy or CuPy array) and dtype. map_location callables get it."""
    __slots__ = ("dtype", "raw")

    def __init__(self, raw, dtype):
        self.raw = raw
        self.dtype = dtype

    @property
    def device(self):
        from ._backend import device_of
        return device_of(self.raw)

    @property
    def is_cuda(self):
        return not isinstance(self.raw, np.ndarray)

    def nbytes(self):
        return self.raw.nbytes

    def size(self):
        return self.raw.nbytes // self.dtype.itemsize

    def to(self, device, non_blocking=False):
        from ._backend import to_device
        return _Storage(to_device(self.raw, _device(device), non_blocking), self.dtype)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to(_device("cuda", device) if isinstance(device, int) or device is None else device,
                       non_blocking)

    def view(self, offset, size, stride):
        """An array over this storage, as torch's set_(storage, offset, size, stride)."""
        dt = self.dtype.np
        isz = dt.itemsize
        size = tuple(size)
        stride = tuple(stride)
        if len(size) != len(stride) or min(size + stride + (offset,), default=0) < 0:
            raise _Corrupt(f"invalid tensor geometry: offset {offset}, size {size}, stride {stride}")
        if isinstance(self.raw, np.ndarray):
            try:
                return np.ndarray(size, dt, buffer=self.raw, offset=offset * isz, strides=[s * isz for s in stride])
            except (ValueError, TypeError) as e:
                raise _Corrupt(f"a tensor of size {size} does not fit its storage: {e}") from None
        end = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride)) if 0 not in size else offset
        if end * isz > self.raw.nbytes:
            raise _Corrupt(f"a tensor of size {size} does not fit its storage")
        cp = type(self.raw)
        return cp(size, dt, memptr=self.raw.data + offset * isz, strides=[s * isz for s in stride])


def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, _Storage):
        raise _Corrupt(f"expected a storage to rebuild a tensor from, got {type(storage).__name__}")
    return Tensor._make(storage.view(storage_offset, size, stride))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _set_state(obj, state):
    # torch's state: a dict of attributes, or (dict, slots) for classes with __slots__
    if not state:
        return obj
    if isinstance(state, tuple):
        if len(state) != 2:
            raise _Corrupt(f"invalid serialized state: {state!r}")
        state, slots = state
        for k, v in (slots or {}).items():
            setattr(obj, k, v)
    for k, v in (state or {}).items():
        setattr(obj, k, v)
    return obj


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return _parameter_cls()(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if not (isinstance(new_type, type) and issubclass(new_type, Tensor) and isinstance(ret, Tensor)):
        raise _Corrupt(f"cannot rebuild a tensor of type {new_type!r}")
    if type(ret) is not new_type:
        ret = ret.as_subclass(new_type)
    return _set_state(ret, state)


def _get_layout(name):
    lay = {"torch.strided": _dtype.strided, "torch.sparse_coo": _dtype.sparse_coo,
           "torch.sparse_csr": _dtype.sparse_csr}.get(name)
    if lay is None:
        raise RuntimeError(f"ember supports the strided, sparse_coo and sparse_csr layouts, not {name}")
    return lay


def _rebuild_sparse_tensor(layout, data):
    """A sparse tensor from torch's form: (indices, values, size[, is_coalesced]) for COO, (crow_indices,
    col_indices, values, size) for CSR."""
    from . import sparse
    if layout == _dtype.sparse_coo and len(data) in (3, 4):
        indices, values, size = data[:3]
        return sparse.sparse_coo_tensor(indices, values, size, is_coalesced=data[3] if len(data) == 4 else None)
    if layout == _dtype.sparse_csr and len(data) == 4:
        return sparse.sparse_csr_tensor(*data)
    raise _Corrupt(f"cannot rebuild a sparse tensor of layout {layout} from {len(data)} parts")


def _unsupported(name, what):
    def refuse(*args):
        raise RuntimeError(f"ember cannot load this checkpoint: it holds {what} (torch._utils.{name}), which has "
                           f"no ember equivalent")
    return refuse


def _torch_names():
    """torch's global names in checkpoints -> ember's objects."""
    names = {
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.serialization._get_layout": _get_layout,
        "torch._utils._rebuild_sparse_tensor": _rebuild_sparse_tensor,
        "torch.Size": Size,
        "torch.device": _device,
        "torch.Tensor": Tensor,
        "torch._tensor.Tensor": Tensor,
        "torch.UntypedStorage": _StorageType(_dtype.uint8),
        "torch.storage.UntypedStorage": _StorageType(_dtype.uint8),
    }
    for d in _dtype.ALL:
        names["torch." + d.name] = d
        names["torch." + _STORAGE_NAMES[d.name]] = _StorageType(d)
    for fn, what in (("_rebuild_qtensor", "a quantized tensor"), ("_rebuild_nested_tensor", "a nested tensor"),
                     ("_rebuild_meta_tensor_no_storage", "a meta tensor"),
                     ("_rebuild_wrapper_subclass", "a tensor subclass"),
                     ("_rebuild_device_tensor_from_numpy", "a tensor of an unsupported device"),
                     ("_rebuild_xla_tensor", "an XLA tensor")):
        names["torch._utils." + fn] = _unsupported(fn, what)
    return names


_SAFE = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "builtins.set": set,
    "builtins.complex": complex,
    "builtins.bytearray": bytearray,
    "_codecs.encode": __import__("codecs").encode,  # how protocol 2 pickles bytes
    "ember._dtype._dtype_by_name": _dtype._dtype_by_name,
    "ember._device.device": _device,
    "ember._tensor.Size": Size,
}
_TORCH = {}  # filled on first load (Parameter needs ember.nn)
_user_globals = []


def _global_name(obj):
    if isinstance(obj, tuple):  # (obj, "module.name") as torch accepts
        return obj[1]
    return f"{obj.__module__}.{obj.__qualname__}"


def add_safe_globals(safe_globals):
    """Same as `torch.serialization.add_safe_globals`: allow these classes/functions in weights_only loads."""
    for g in safe_globals:
        if isinstance(g, tuple) and (len(g) != 2 or not isinstance(g[1], str)):
            raise ValueError(f"Expected tuple of (obj, str) in add_safe_globals, got {g!r}")
    _user_globals.extend(safe_globals)


def get_safe_globals():
    """Same as `torch.serialization.get_safe_globals`."""
    return list(_user_globals)


def clear_safe_globals():
    """Same as `torch.serialization.clear_safe_globals`."""
    _user_globals.clear()


class safe_globals:
    """Same as `torch.serialization.safe_globals`: a context manager adding safe globals for its duration."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._saved = list(_user_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _user_globals[:] = self._saved


def _refusal(full):
    if full.startswith("builtins."):  # torch names builtins bare: "GLOBAL slice"
        full = full[len("builtins."):]
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
        "only if you trust the source of the checkpoint. \n\t(1) Re-running `ember.load` with `weights_only` set "
        "to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
        "file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the "
        "recommended steps in the following error message.\n\tWeightsUnpickler error: Unsupported global: "
        f"GLOBAL {full} was not an allowed global by default. Please use "
        f"`ember.serialization.add_safe_globals([{full}])` or the `ember.serialization.safe_globals([{full}])` "
        "context manager to allowlist this global if you trust this class/function.")


class _FindClass:
    """find_class for ember's unpicklers: torch names map to ember; weights_only allows only a fixed set."""

    def find_class(self, module, name):
        if (module, name) in NAME_MAPPING:  # protocol 2 files spell builtins as __builtin__
            module, name = NAME_MAPPING[(module, name)]
        elif module in IMPORT_MAPPING:
            module = IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        obj = _TORCH.get(full)
        if obj is not None:
            return obj
        if full == "torch.nn.parameter.Parameter":
            return _parameter_cls()
        if self.weights_only:
            obj = _SAFE.get(full)
            if obj is None:
                obj = next((g[0] if isinstance(g, tuple) else g for g in reversed(_user_globals)
                            if _global_name(g) == full), None)
            if obj is None:
                raise _Refused(_refusal(full))
            return obj
        if module == "torch" or module.startswith("torch."):
            raise RuntimeError(f"ember cannot load the PyTorch object {full}: only tensors, Parameters, dtypes, "
                               f"devices and sizes from PyTorch checkpoints have ember equivalents")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        return self.storages(pid)


_UNPICKLERS = {}


def _unpickler_cls(base):
    cls = _UNPICKLERS.get(base)
    if cls is None:
        cls = _UNPICKLERS[base] = type("_Unpickler", (_FindClass, base), {})
    return cls


def _unpickle(cls, data, storages, weights_only, args):
    u = cls(data, **args)
    u.weights_only = weights_only
    u.storages = storages
    return u.load()


# ----- map_location -----

def _restore_default(storage, location):
    location = str(location)
    try:
        dev = _device(location)
    except RuntimeError:  # a location no ember device parses ("mps", "xla:0", a typo in map_location)
        raise RuntimeError(f"don't know how to restore data location of ember.storage.UntypedStorage (tagged with "
                           f"{location})") from None
    if dev.type == "cuda":
        from . import cuda
        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but ember.cuda.is_available() is "
                               "False. If you are running on a CPU-only machine, please use ember.load with "
                               "map_location=ember.device('cpu') to map your storages to the CPU.")
        if dev.index is not None and dev.index >= cuda.device_count():
            raise RuntimeError(f"Attempting to deserialize object on CUDA device {dev.index} but "
                               f"ember.cuda.device_count() is {cuda.device_count()}. Please use ember.load with "
                               f"map_location to map your storages to an existing device.")
    if dev == storage.device:
        return storage
    return storage.to(dev)


def _restore_fn(map_location):
    if map_location is None:
        return _restore_default
    if isinstance(map_location, dict):
        return lambda s, loc: _restore_default(s, map_location.get(loc, loc))
    if isinstance(map_location, bytes):
        map_location = map_location.decode()
    if isinstance(map_location, (str, _device)):
        return lambda s, loc: _restore_default(s, map_location)
    if not callable(map_location):
        raise TypeError(f"map_location should be None, a string, an ember.device, a dict or a callable, got "
                        f"{type(map_location).__name__}")

    def restore(s, loc):
        try:
            r = map_location(s, loc)
        except Exception as e:  # noqa: BLE001 (the caller's own error, re-raised unchanged by load)
            raise _UserError(e) from None
        if r is None:
            return _restore_default(s, loc)
        if not isinstance(r, _Storage):
            # torch raises RuntimeError here too
            raise RuntimeError(f"map_location must return a storage (or None), got {type(r).__name__}")  # noqa: TRY004
        return r
    return restore


def _decode(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _storage_dtype(storage_type):
    if not isinstance(storage_type, _StorageType):
        raise _Corrupt(f"invalid storage type {storage_type!r}")
    return storage_type.dtype


# ----- the zip format -----

class _ZipStorages:
    """persistent_load for zip checkpoints: reads each storage once, when the pickle first names it."""

    def __init__(self, f, restore, mm):
        try:
            self.zf = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, zlib.error, struct.error, ValueError, EOFError, OSError) as e:
            raise _Corrupt(f"not a readable zip archive ({e})") from None
        names = self.zf.namelist()
        if not names or "/" not in names[0]:
            raise _Corrupt("the zip archive has no checkpoint records")
        self.prefix = names[0].split("/", 1)[0]
        self.f = f
        self.mm = mm
        self.restore = restore
        self.loaded = {}
        self.pool = None
        self.checks = []
        self.swap = self.record("byteorder", optional=True) not in (None, sys.byteorder.encode())

    def record(self, name, optional=False):
        try:
            return self.zf.read(f"{self.prefix}/{name}")
        except KeyError:
            if optional:
                return None
            if name == "data.pkl" and f"{self.prefix}/constants.pkl" in self.zf.namelist():
                raise RuntimeError("this is a TorchScript archive (torch.jit.save): ember cannot load TorchScript "
                                   "programs") from None
            raise _Corrupt(f"the record {self.prefix}/{name} is missing") from None
        except (zipfile.BadZipFile, zlib.error, struct.error, EOFError) as e:
            raise _Corrupt(f"the record {self.prefix}/{name} is damaged ({e})") from None

    def _raw(self, key, nbytes):
        name = f"{self.prefix}/data/{key}"
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise _Corrupt(f"the record {name} is missing") from None
        if info.file_size != nbytes:
            raise _Corrupt(f"the record {name} holds {info.file_size} bytes, expected {nbytes}")
        if info.compress_type != zipfile.ZIP_STORED:  # not written by torch or ember, but valid zip
            return np.frombuffer(bytearray(self.record(f"data/{key}")), np.uint8)
        self.f.seek(info.header_offset)
        head = self.f.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise _Corrupt(f"the local header of {name} is damaged")
        start = info.header_offset + 30 + sum(struct.unpack("<HH", head[26:30]))
        if self.mm is not None:
            if start + nbytes > len(self.mm):
                raise _Corrupt(f"the record {name} is truncated")
            return np.frombuffer(self.mm, np.uint8, nbytes, start)
        raw = np.empty(nbytes, np.uint8)
        self.f.seek(start)
        crc = None
        for i in range(0, nbytes, _CHUNK):
            chunk = raw[i:i + _CHUNK]
            if _read_into(self.f, chunk) != chunk.size:
                raise _Corrupt(f"the record {name} is truncated")
            if not _CHECK_STORAGE_CRC:
                continue
            if nbytes < _SMALL:
                crc = zlib.crc32(chunk)
            else:  # checksum in the background while the next chunk is read (both release the GIL)
                crc = self._pool().submit(_crc_after, crc, chunk)
        if _CHECK_STORAGE_CRC:
            self.checks.append((name, info.CRC, crc))
        return raw

    def _pool(self):
        if self.pool is None:
            from concurrent.futures import ThreadPoolExecutor
            self.pool = ThreadPoolExecutor(min(4, os.cpu_count() or 1))
        return self.pool

    def finish(self):
        """Wait for the background checksums and check every storage's CRC-32."""
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None
        for name, expected, crc in self.checks:
            if (crc.result() if hasattr(crc, "result") else crc or 0) != expected:
                raise _Corrupt(f"the record {name} is damaged (CRC-32 mismatch)")

    def __call__(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5 or _decode(pid[0]) != "storage":
            raise _Corrupt(f"unknown persistent id {pid!r}")
        _, storage_type, key, location, numel = pid
        s = self.loaded.get(key)
        if s is None:
            dt = _storage_dtype(storage_type)
            raw = self._raw(_decode(key), numel * dt.itemsize)
            if self.swap:
                raw.view(dt.np).byteswap(inplace=True)
            s = self.loaded[key] = self.restore(_Storage(raw, dt), _decode(location))
        return s


_CHUNK = 8 << 20


_SMALL = 1 << 20
# NOTE [ Storage checksums ]
# torch.load does not check the CRC-32 of storage records, so a flipped bit loads silently. ember checks it
# (data.pkl's CRC is checked by zipfile), overlapping the checksum of one chunk with the read of the next; it
# costs about as much CPU time as the read itself. mmap=True never reads the data up front, so it never checks.
_CHECK_STORAGE_CRC = True


def _crc_after(prev, chunk):
    # chunks of one record are chained through futures; tasks start in submission order, so this never deadlocks
    return zlib.crc32(chunk, 0 if prev is None else prev.result())


def _read_into(f, arr):
    view = memoryview(arr)
    readinto = getattr(f, "readinto", None)
    if readinto is None:
        data = f.read(len(view))
        view[:len(data)] = data
        return len(data)
    n = 0
    while n < len(view):  # raw files may return short reads
        k = readinto(view[n:])
        if not k:
            break
        n += k
    return n


# ----- the legacy (pre-1.6) format -----

class _LegacyStorages:
    """persistent_load for legacy files: storages are created empty and filled after the pickle."""

    def __init__(self):
        self.roots = {}  # key -> (_Storage, location)
        self.views = {}

    def __call__(self, pid):
        if not isinstance(pid, tuple) or _decode(pid[0]) != "storage" or len(pid) != 6:
            if isinstance(pid, tuple) and _decode(pid[0]) == "module":
                return pid[1]
            raise _Corrupt(f"unknown persistent id {pid!r}")
        _, storage_type, key, location, numel, view = pid
        dt = _storage_dtype(storage_type)
        entry = self.roots.get(key)
        if entry is None:
            entry = self.roots[key] = (self.make(key, dt, numel), _decode(location))
        s = entry[0]
        if view is None:
            return s
        view_key, offset, size = view
        v = self.views.get(view_key)
        if v is None:
            isz = s.dtype.itemsize
            v = self.views[view_key] = _Storage(s.raw[offset * isz:(offset + size) * isz], s.dtype)
        return v

    def make(self, key, dt, numel):
        return _Storage(np.empty(numel * dt.itemsize, np.uint8), dt)


class _RestoredStorages(_LegacyStorages):
    """The second pass over a legacy pickle: storages already read and moved by map_location."""

    def __init__(self, restored):
        super().__init__()
        self.restored = restored

    def make(self, key, dt, numel):
        return self.restored[key]


def _load_legacy(f, cls, restore, weights_only, args):
    def small():
        return _unpickle(cls, f, None, weights_only, args)
    if small() != MAGIC_NUMBER:
        raise _Corrupt("invalid magic number")
    protocol = small()
    if protocol != PROTOCOL_VERSION:
        raise _Corrupt(f"invalid protocol version: {protocol}")
    sys_info = small()
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    start = f.tell()
    storages = _LegacyStorages()
    result = _unpickle(cls, f, storages, weights_only, args)
    keys = small()
    order = "<" if little else ">"
    for key in keys:
        s = storages.roots[key][0]
        head = f.read(8)
        if len(head) != 8 or struct.unpack(order + "q", head)[0] * s.dtype.itemsize != s.raw.nbytes:
            raise _Corrupt(f"the data of storage {key} is truncated or does not match its size")
        if _read_into(f, s.raw) != s.raw.nbytes:
            raise _Corrupt(f"the data of storage {key} is truncated")
        if little != (sys.byteorder == "little"):
            s.raw.view(s.dtype.np).byteswap(inplace=True)
    restored = {k: restore(s, loc) for k, (s, loc) in storages.roots.items()}
    if all(restored[k].raw is s.raw for k, (s, _) in storages.roots.items()):
        return result
    f.seek(start)  # some storage moved: rebuild the objects over the moved storages
    return _unpickle(cls, f, _RestoredStorages(restored), weights_only, args)


# ----- load -----

_CORRUPT = (_Corrupt, EOFError, pickle.UnpicklingError, zipfile.BadZipFile, zlib.error, struct.error,
            UnicodeDecodeError)
# with weights_only only ember's own functions run, so these too can only come from malformed bytes
_CORRUPT_WEIGHTS = _CORRUPT + (ValueError, KeyError, IndexError, TypeError, AttributeError, OverflowError)


def _forced_weights_only(weights_only):
    """weights_only as torch's environment switches set it (a full-pickle load only where the call left it unset)."""
    yes = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in yes
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in yes
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` "
                           "should be set, but both were set.")
    if force:
        return True
    if force_no and weights_only is None:
        import warnings
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` "
                      "argument was not explicitly passed to `torch.load`, forcing weights_only=False.", UserWarning,
                      stacklevel=3)
        return False
    return weights_only


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Same as `torch.load`: reads ember's and PyTorch's checkpoints (zip and pre-1.6 formats, and .safetensors).
    torch's switches TORCH_FORCE_WEIGHTS_ONLY_LOAD and TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD are honoured as torch does."""
    weights_only = _forced_weights_only(weights_only)
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        if pickle_load_args:
            import warnings
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    restore = _restore_fn(map_location)
    is_path = isinstance(f, (str, os.PathLike))
    if is_path and os.fspath(f).endswith(".safetensors"):
        return _load_safetensors(os.fspath(f), map_location)
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    if not _TORCH:
        _TORCH.update(_torch_names())
    cls = _unpickler_cls(pickle.Unpickler if pickle_module is None else pickle_module.Unpickler)
    name = os.fspath(f) if is_path else f"the {type(f).__name__} object"
    corrupt = _CORRUPT_WEIGHTS if weights_only else _CORRUPT
    try:
        with open(f, "rb") if is_path else contextlib.nullcontext(f) as fh:
            return _load_from(fh, name, cls, restore, weights_only, mmap, pickle_load_args)
    except _Refused as e:
        raise pickle.UnpicklingError(str(e)) from None
    except _UserError as e:
        raise e.args[0] from None
    except corrupt as e:
        reason = str(e) if isinstance(e, _Corrupt) else f"{type(e).__name__}: {e}".rstrip(": ")
        raise RuntimeError(f"{name} is not a valid ember/PyTorch checkpoint: {reason}") from None


def _load_from(f, name, cls, restore, weights_only, mmap, args):
    if not getattr(f, "seekable", lambda: True)():
        f = io.BytesIO(f.read())
    pos = f.tell()
    head = f.read(4)
    f.seek(pos)
    if not head:
        raise _Corrupt("the file is empty")
    if head != b"PK\x03\x04":
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with `ember.save(..., "
                               "_use_new_zipfile_serialization=True)`, please ember.save your checkpoint with this "
                               "option in order to use mmap.")
        return _load_legacy(f, cls, restore, weights_only, args)
    mm = None
    if mmap:
        import mmap as _mmap
        mm = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_COPY)  # copy-on-write, like torch's MAP_PRIVATE
    storages = _ZipStorages(f, restore, mm)
    try:
        result = _unpickle(cls, io.BytesIO(storages.record("data.pkl")), storages, weights_only, args)
    finally:
        if storages.pool is not None:
            storages.pool.shutdown(wait=True)
    storages.finish()
    return result


def _load_safetensors(path, map_location):
    device = "cpu"
    # torch raises RuntimeError for these
    if isinstance(map_location, dict):
        what = "dict"
    elif callable(map_location) and not isinstance(map_location, _device):
        what = "callable"
    else:
        what = None
    if what is not None:
        raise RuntimeError(f"Loading safetensors file with {what} map_location is not supported. Use a device "
                           "string or ember.device instead.")
    if map_location is not None:
        device = str(map_location)
    from .utils.safetensors import load_file
    return load_file(path, device=device)
