"""Shared-memory storage: anonymous memory files (memfd) mapped MAP_SHARED, sent between processes by descriptor."""
import ctypes
import errno
import mmap
import os
import tempfile
import weakref

import numpy as np

__all__ = ["BatchArena", "SharedRegion", "SharedStorage", "empty_shared", "holder_of", "is_shared", "new_storage",
           "open_storage", "share_memory_", "storage_of", "too_many_files"]

# NOTE [ Shared memory without names ]
# Each shared storage is one anonymous memory file (os.memfd_create) mapped MAP_SHARED. The file has no name, so
# nothing can leak in /dev/shm: the memory is freed when the last descriptor and the last mapping are gone, in
# whichever process that happens. The descriptor is what travels to other processes (multiprocessing's fd passing,
# see reductions.py). Space is reserved with posix_fallocate, so running out of memory raises a clear error here
# instead of a SIGBUS at the first write. mmap is called through libc rather than the mmap module because the
# module keeps a second, private duplicate of the descriptor: one descriptor per storage is all we need.

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_munmap = _libc.munmap
_munmap.restype = ctypes.c_int
_munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value
_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_MAP_SHARED = mmap.MAP_SHARED
_HAVE_MEMFD = hasattr(os, "memfd_create")
_SHM_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()

# every live storage of this process by file identity, so a storage received twice (or sent back) maps once
_by_key = weakref.WeakValueDictionary()


class SharedStorage:
    """One MAP_SHARED mapping of a whole memory file; owns the descriptor. NumPy arrays over it keep it alive."""
    __slots__ = ("__array_interface__", "__weakref__", "addr", "fd", "key", "nbytes")

    def __init__(self, fd, nbytes):
        size = max(nbytes, 1)  # mmap refuses empty mappings
        addr = _mmap(None, size, _PROT_RW, _MAP_SHARED, fd, 0)
        if addr is None or addr == _MAP_FAILED:
            e = ctypes.get_errno()
            os.close(fd)
            raise OSError(e, f"mmap of {size} bytes of shared memory failed: {os.strerror(e)}")
        self.fd = fd
        self.nbytes = nbytes
        self.addr = addr
        st = os.fstat(fd)
        self.key = (st.st_dev, st.st_ino)
        self.__array_interface__ = {"data": (addr, False), "shape": (nbytes,), "typestr": "|u1", "version": 3}
        _by_key[self.key] = self

    def __del__(self):
        try:
            _munmap(self.addr, max(self.nbytes, 1))
            os.close(self.fd)
        except (OSError, TypeError, AttributeError):  # half-built, or at interpreter shutdown
            pass

    def array(self):
        """The whole storage as a flat uint8 array (its base is this storage)."""
        return np.asarray(self)


def _new_fd(nbytes):
    if _HAVE_MEMFD:
        return os.memfd_create("ember_shared", os.MFD_CLOEXEC)
    fd, path = tempfile.mkstemp(prefix="ember_", dir=_SHM_DIR)
    os.unlink(path)  # no name left behind; the descriptor keeps the file
    return fd


def _free_bytes():
    # memfd memory comes out of RAM (not the /dev/shm mount); the file fallback out of its directory's filesystem
    if _HAVE_MEMFD:
        try:
            with open("/proc/meminfo") as f:
                for line in f:
                    if line.startswith("MemAvailable:"):
                        return int(line.split()[1]) * 1024, "available memory (MemAvailable)"
        except OSError:
            pass
    st = os.statvfs(_SHM_DIR)
    return st.f_bavail * st.f_frsize, _SHM_DIR


def _out_of_space(nbytes, err):
    free, where = _free_bytes()
    if where == _SHM_DIR:
        more = (f"or enlarge {_SHM_DIR} (in a container: `docker run --shm-size=8g ...`; otherwise "
                f"`mount -o remount,size=8G {_SHM_DIR}`)")
    else:  # memfd memory is limited by RAM and the container's memory limit, not by the /dev/shm mount
        more = "or give the process more memory (in a container: `docker run --memory=...`)"
    return RuntimeError(
        f"ember.multiprocessing: could not allocate {nbytes} bytes of shared memory ({os.strerror(err.errno)}); "
        f"only {free} bytes are free in {where}. Shared memory holds the tensors sent between processes (DataLoader "
        f"batches, share_memory_()). Use fewer DataLoader workers (num_workers), a smaller batch_size or "
        f"prefetch_factor, free some memory, {more}.")


def _reserve(fd, nbytes):
    try:
        os.posix_fallocate(fd, 0, max(nbytes, 1))
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.ENOMEM, errno.EFBIG):
            os.close(fd)
            raise _out_of_space(nbytes, e) from None
        if e.errno in (errno.EINVAL, errno.EOPNOTSUPP):  # a filesystem without fallocate
            os.ftruncate(fd, max(nbytes, 1))
        else:
            os.close(fd)
            raise


def too_many_files(err):
    """The error for running out of file descriptors (each shared storage holds one)."""
    return RuntimeError(
        f"ember.multiprocessing: too many open files ({err}): every tensor storage in shared memory holds one file "
        f"descriptor in each process that uses it. Raise the limit (`ulimit -n`, or resource.setrlimit("
        f"resource.RLIMIT_NOFILE, ...)), keep fewer shared tensors alive (e.g. copy received tensors you keep with "
        f".clone()), or share fewer, larger tensors.")


def new_storage(nbytes):
    """A fresh zero-filled shared storage of nbytes bytes."""
    try:
        fd = _new_fd(nbytes)
    except OSError as e:
        if e.errno in (errno.EMFILE, errno.ENFILE):
            raise too_many_files(e) from None
        raise
    _reserve(fd, nbytes)
    return SharedStorage(fd, nbytes)


def open_storage(fd, nbytes):
    """The storage for a received descriptor: the one already mapped in this process if any (fd is then closed)."""
    st = os.fstat(fd)
    s = _by_key.get((st.st_dev, st.st_ino))
    if s is not None:
        os.close(fd)
        return s
    return SharedStorage(fd, nbytes)


class SharedRegion:
    """A byte range of a SharedStorage that is a storage of its own for the tensors over it (their storage_offset
    counts from its start, and ember.save writes only its bytes), so that several tensors can share one memory file
    and travel with one descriptor; see NOTE [ One memory file per batch ]."""
    __slots__ = ("__array_interface__", "__weakref__", "nbytes", "offset", "storage")

    def __init__(self, storage, offset, nbytes):
        self.storage = storage
        self.offset = offset
        self.nbytes = nbytes
        self.__array_interface__ = {"data": (storage.addr + offset, False), "shape": (nbytes,), "typestr": "|u1",
                                    "version": 3}

    def array(self):
        """The region as a flat uint8 array (its base is this region)."""
        return np.asarray(self)


def holder_of(arr):
    """The SharedRegion or SharedStorage that an array's memory lives in (the innermost one), or None."""
    b = arr.base
    while b is not None:
        c = b.__class__
        if c is SharedRegion or c is SharedStorage:
            return b
        b = getattr(b, "base", None)
    return None


def storage_of(arr):
    """The SharedStorage an array's memory lives in, or None."""
    b = holder_of(arr)
    return b.storage if b.__class__ is SharedRegion else b


# NOTE [ One memory file per batch ]
# A fresh memory file costs a system call to reserve its pages, a mapping, and one descriptor pass (a socket
# connection to the sender) per message, so a DataLoader worker puts all tensors of one batch (images and labels)
# into one file: BatchArena hands out aligned regions of it. The file is sized from the largest batch seen so far
# (the first one from its first tensor, plus a page); what does not fit gets a file of its own. Each tensor still sees a storage of
# its own (a SharedRegion), as with torch's collate, where the labels never share a storage with the images.
_ALIGN = 64
_SLACK = 4096


class BatchArena:
    """Allocates the tensors of one batch in one shared storage (between `begin()` and `end()`)."""
    __slots__ = ("need", "predict", "storage", "used")

    def __init__(self):
        self.predict = 0  # bytes of the largest batch so far: the size of the next storage
        self.storage = None
        self.used = self.need = 0

    def begin(self):
        self.storage = None
        self.used = self.need = 0

    def end(self):
        self.predict = max(self.predict, self.need)
        self.storage = None  # the batch's tensors keep it alive

    def alloc(self, shape, dtype):
        """A zero-filled array of the given shape and NumPy dtype in shared memory (see `empty_shared`)."""
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        nbytes = dtype.itemsize
        for d in shape:
            nbytes *= d
        self.need = -(-self.need // _ALIGN) * _ALIGN + nbytes
        if self.storage is None:
            # before the first batch, room for small tensors (labels) after this one: one page more
            self.storage = new_storage(self.predict or -(-nbytes // _ALIGN) * _ALIGN + _SLACK)
        start = -(-self.used // _ALIGN) * _ALIGN
        if self.storage is not None and start + nbytes <= self.storage.nbytes:
            region = SharedRegion(self.storage, start, nbytes)
            self.used = start + nbytes
        else:
            region = SharedRegion(new_storage(nbytes), 0, nbytes)
        return region.array().view(dtype).reshape(shape)


def _address(arr):
    return arr.__array_interface__["data"][0]


def empty_shared(shape, dtype):
    """A NumPy array of the given shape and NumPy dtype (zero-filled) whose memory is shared between processes."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    return new_storage(nbytes).array()[:nbytes].view(dtype).reshape(shape)


def _to_shared(arr):
    # a copy of arr alone in a new shared storage, with the same memory layout when arr is dense
    order = "F" if arr.flags.f_contiguous and not arr.flags.c_contiguous else "C"
    out = empty_shared(arr.shape[::-1] if order == "F" else arr.shape, arr.dtype)
    if order == "F":
        out = out.T
    np.copyto(out, arr, casting="no")
    return out


# NOTE [ Moving memory into shared memory ]
# torch moves a whole storage, so every view of it moves at once. An ember view holds a NumPy view of its base's
# memory, so share_memory_ copies the whole memory block that owns the data (the last ndarray in the array's base
# chain) byte for byte into a new shared storage, points the tensor and its ember base there, and records the move on
# that base: a view of the same base moved later (shared, or sent) lands at its place in the same storage, so views
# sent together stay views of one memory. Views not moved yet keep the old memory meanwhile. The record is keyed by
# the ember base, not by the NumPy memory, so a tensor made later from the same NumPy array gets a fresh copy (and
# never an outdated snapshot).
_moved = {}  # id(ember base tensor) -> (weakref to it, weakref to its old owner array, SharedStorage)


def _owner(arr):
    o = arr
    b = arr.base
    while b.__class__ is np.ndarray:
        o = b
        b = b.base
    return o


def _forget(key, ref):
    ent = _moved.get(key)
    if ent is not None and ent[0] is ref:
        del _moved[key]


def _storage_for(root, owner):
    # the shared storage that owner's memory was (or now is) moved to on behalf of the ember tensor root
    key = id(root)
    ent = _moved.get(key)
    if ent is not None and ent[0]() is root and ent[1]() is owner:
        return ent[2]
    if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
        return None
    storage = new_storage(owner.nbytes)
    ctypes.memmove(storage.addr, _address(owner), owner.nbytes)
    _moved[key] = (weakref.ref(root, lambda r, k=key: _forget(k, r)), weakref.ref(owner), storage)
    return storage


def _relocate(arr, owner, storage):
    return np.ndarray(arr.shape, arr.dtype, buffer=storage.array(), offset=_address(arr) - _address(owner),
                      strides=arr.strides)


def share_memory_(tensor):
    """Same as `torch.Tensor.share_memory_`: moves the data into shared memory in place (no-op if already there).

    A view moves the memory of its base with it; see NOTE [ Moving memory into shared memory ].
    """
    arr = tensor._data
    if arr.__class__ is not np.ndarray:  # CUDA memory is shared through CUDA IPC: nothing to do, as in torch
        return tensor
    if storage_of(arr) is not None:
        return tensor
    if arr.size == 0:
        tensor._data = empty_shared(arr.shape, arr.dtype)
        return tensor
    base = tensor._base
    if base is not None and base._data.__class__ is not np.ndarray:
        base = None
    owner = _owner(arr)
    storage = _storage_for(tensor if base is None else base, owner)
    if storage is None:  # a strided owner (as_strided): copy just this tensor
        tensor._data = _to_shared(arr)
        return tensor
    tensor._data = _relocate(arr, owner, storage)
    if base is not None and base._data.size and storage_of(base._data) is None and _owner(base._data) is owner:
        base._data = _relocate(base._data, owner, storage)
    return tensor


def is_shared(tensor):
    """Same as `torch.Tensor.is_shared`: True when the data lives in shared memory."""
    arr = tensor._data
    if arr.__class__ is not np.ndarray:
        return True  # CUDA tensors count as shared, as in torch
    return storage_of(arr) is not None
