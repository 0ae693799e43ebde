"""A stand-in for CuPy backed by NumPy, so ember's device plumbing runs in tests on machines without a GPU.

It mimics the parts of CuPy that ember uses and, above all, CuPy's strictness: a device array mixed with a
host (numpy.ndarray) operand raises TypeError, NumPy functions return device arrays, and host data reaches the
device only through cupy.asarray/array. Creating host arrays with np.empty/np.zeros... is not caught here
(NumPy does not dispatch them); the tests catch it by checking the type of every result.
"""
import importlib.machinery
import types

import numpy as np


class _Device:
    """cupy.cuda.Device: a context manager selecting a GPU (there is one: id 0)."""

    def __init__(self, device=None):
        self.id = 0 if device is None else int(getattr(device, "id", device))
        if not 0 <= self.id < _COUNT[0]:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id}")
        self._prev = []

    def __enter__(self):
        self._prev.append(_CURRENT[0])
        _CURRENT[0] = self.id
        return self

    def __exit__(self, *exc):
        _CURRENT[0] = self._prev.pop()

    def use(self):
        _CURRENT[0] = self.id

    def synchronize(self):
        pass

    def __eq__(self, other):
        return isinstance(other, _Device) and other.id == self.id

    def __hash__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


_COUNT = [1]
_CURRENT = [0]


def _host(x):
    """A device array as the NumPy array it wraps; raises on host arrays, as CuPy does."""
    if type(x) is np.ndarray:
        raise TypeError(f"Unsupported type {np.ndarray}")
    if isinstance(x, ndarray):
        return x.view(np.ndarray)
    return x


def _unwrap(x):
    if isinstance(x, ndarray):
        return x.view(np.ndarray)
    if type(x) is np.ndarray:
        raise TypeError(f"Unsupported type {np.ndarray}")
    if type(x) in (list, tuple):
        return type(x)(_unwrap(i) for i in x)
    return x


def _wrap(x):
    if isinstance(x, np.ndarray):
        return x.view(ndarray)
    if isinstance(x, np.generic):  # CuPy returns 0-d arrays where NumPy returns scalars
        return np.asarray(x).view(ndarray)
    if type(x) in (list, tuple):
        return type(x)(_wrap(i) for i in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # np.linalg's named results
        return type(x)(*[_wrap(i) for i in x])
    return x


class ndarray(np.ndarray):
    """A device array: a NumPy array that refuses to mix with host arrays."""

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if getattr(np, ufunc.__name__, None) is not ufunc:  # CuPy maps only NumPy's own ufuncs (not scipy's)
            return NotImplemented
        if method == "at":  # CuPy takes host index arrays in ufunc.at, as in indexing
            args = [_host(inputs[0]), _unwrap_key(inputs[1])] + [_host(x) for x in inputs[2:]]
        else:
            args = [_host(x) for x in inputs]
        if out is not None:
            kwargs["out"] = tuple(_host(o) for o in out)
        r = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(r)

    def __array_function__(self, func, types, args, kwargs):
        if np.ndarray in types:
            raise TypeError(f"Unsupported type {np.ndarray}")
        r = func(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()})
        if func is np.count_nonzero and r.__class__ is int:  # NumPy 2.0 answers an int, CuPy a 0-d array
            r = np.intp(r)
        return _wrap(r)

    def __setitem__(self, key, value):
        if type(value) is np.ndarray and value.ndim:
            raise TypeError(f"Unsupported type {np.ndarray}")
        np.ndarray.__setitem__(self.view(np.ndarray), _unwrap_key(key), _host(value) if value.__class__ is ndarray
                               else value)

    def __getitem__(self, key):
        return _wrap(np.ndarray.__getitem__(self.view(np.ndarray), _unwrap_key(key)))

    def get(self, stream=None, order="C", out=None, blocking=True):
        """Copy to the host."""
        a = np.array(self.view(np.ndarray), order=order)
        if out is not None:
            out[...] = a
            return out
        return a

    def set(self, arr, stream=None):
        if type(arr) is not np.ndarray:
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        self.view(np.ndarray)[...] = arr

    @property
    def device(self):
        return _Device(0)

    @property
    def __cuda_array_interface__(self):
        i = self.__array_interface__
        return {"shape": i["shape"], "typestr": i["typestr"], "data": i["data"], "strides": i["strides"],
                "version": 3}

    @property
    def flags(self):
        """CuPy's flags: no writeable (device arrays are never read-only)."""
        f = np.ndarray.flags.__get__(self)
        return types.SimpleNamespace(c_contiguous=f.c_contiguous, f_contiguous=f.f_contiguous, owndata=f.owndata)

    @property
    def data(self):
        """The device memory pointer (cupy.cuda.MemoryPointer's .ptr)."""
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])

    def __array_finalize__(self, obj):
        pass

    def __reduce__(self):
        raise TypeError("fake device arrays do not pickle")

    def __repr__(self):
        return "fake_cupy." + repr(self.view(np.ndarray))


def _unwrap_key(key):
    # CuPy accepts device and host integer/bool arrays as indices
    if isinstance(key, ndarray):
        return key.view(np.ndarray)
    if type(key) is tuple:
        return tuple(k.view(np.ndarray) if isinstance(k, ndarray) else k for k in key)
    return key


def asarray(a, dtype=None, order=None, *, blocking=False):
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return np.array(a, dtype=dtype, order=order or "K").view(ndarray)  # host data is copied to the device


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    if isinstance(obj, ndarray):
        obj = obj.view(np.ndarray)
    return np.array(obj, dtype=dtype, copy=True, order=order, ndmin=ndmin).view(ndarray)


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    return a.get() if isinstance(a, ndarray) else np.asarray(a)


def _creator(fn):
    def f(*args, **kwargs):
        return _wrap(fn(*_unwrap(args), **{k: _unwrap(v) for k, v in kwargs.items()}))
    f.__name__ = getattr(fn, "__name__", "routine")
    return f


def _routine(name):
    """A cupy.<name> routine: NumPy's, refusing host arrays and returning device arrays."""
    fn = getattr(np, name)
    if isinstance(fn, np.ufunc):
        return fn  # dispatches through ndarray.__array_ufunc__
    if callable(fn):
        return _creator(fn)
    return fn


class _RandomState:
    """cupy.random.RandomState over NumPy's legacy generator (same method names)."""

    def __init__(self, seed=None):
        self._g = np.random.RandomState(None if seed is None else int(seed) % 2 ** 32)

    def seed(self, seed=None):
        self._g.seed(None if seed is None else int(seed) % 2 ** 32)

    def random_sample(self, size=None, dtype=float):
        return _wrap(np.asarray(self._g.random_sample(size)).astype(dtype, copy=False))

    rand = random_sample

    def standard_normal(self, size=None, dtype=float):
        return _wrap(np.asarray(self._g.standard_normal(size)).astype(dtype, copy=False))

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return _wrap(np.asarray(self._g.normal(_unwrap(loc), _unwrap(scale), size)).astype(dtype, copy=False))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return _wrap(np.asarray(self._g.uniform(_unwrap(low), _unwrap(high), size)).astype(dtype, copy=False))

    def standard_exponential(self, size=None, dtype=float, method="inv"):
        return _wrap(np.asarray(self._g.standard_exponential(size)).astype(dtype, copy=False))

    def randint(self, low, high=None, size=None, dtype=int):
        return _wrap(np.asarray(self._g.randint(low, high, size, dtype=dtype)))

    def permutation(self, num):
        return _wrap(self._g.permutation(_unwrap(num)))

    def shuffle(self, a):
        self._g.shuffle(_host(a))

    def geometric(self, p, size=None, dtype=int):
        return _wrap(np.asarray(self._g.geometric(_unwrap(p), size)).astype(dtype, copy=False))

    def standard_cauchy(self, size=None, dtype=float):
        return _wrap(np.asarray(self._g.standard_cauchy(size)).astype(dtype, copy=False))

    def poisson(self, lam=1.0, size=None, dtype=int):
        return _wrap(np.asarray(self._g.poisson(_unwrap(lam), size)).astype(dtype, copy=False))

    def binomial(self, n, p, size=None, dtype=int):
        return _wrap(np.asarray(self._g.binomial(_unwrap(n), _unwrap(p), size)).astype(dtype, copy=False))

    def choice(self, a, size=None, replace=True, p=None):
        return _wrap(np.asarray(self._g.choice(_unwrap(a), size, replace, _unwrap(p))))


class _Stream:
    null = None

    def __init__(self, null=False, non_blocking=False, priority=0):
        self.ptr = 0 if null else id(self)
        self.device_id = _CURRENT[0]

    def synchronize(self):
        pass

    def done(self):
        return True

    def record(self, event=None):
        event = event or _Event()
        return event

    def wait_event(self, event):
        pass

    def use(self):
        _STREAM[0] = self
        return self

    def __enter__(self):
        self._prev = _STREAM[0]
        _STREAM[0] = self
        return self

    def __exit__(self, *exc):
        _STREAM[0] = self._prev


class _Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.done = True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass


class _MemoryPool:
    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_bytes(self):
        return 0

    def free_all_blocks(self, stream=None):
        pass

    def set_limit(self, size=None, fraction=None):
        pass

    def get_limit(self):
        return 0


_STREAM = [None]


def _make_module():
    """A fresh cupy module object (and cupyx), installed by the fake_gpu fixture."""
    cp = types.ModuleType("cupy")
    cp.__spec__ = importlib.machinery.ModuleSpec("cupy", None)
    cp.__file__ = __file__
    cp.__version__ = "13.0.0+fake"
    cp.IS_FAKE = True
    for name in dir(np):
        if name.startswith("_") or name in ("ndarray", "random", "linalg", "fft", "lib", "testing", "ma", "char",
                                            "rec", "polynomial", "ctypeslib", "emath", "strings", "typing",
                                            "exceptions", "dtypes", "f2py", "version"):
            continue
        obj = getattr(np, name)
        if isinstance(obj, (type, int, float, str, np.dtype)):
            setattr(cp, name, obj)  # dtypes, constants
        elif callable(obj):
            setattr(cp, name, _routine(name))
    cp.ndarray = ndarray
    cp.asarray = asarray
    cp.array = array
    cp.asnumpy = asnumpy
    cp.get_array_module = lambda *args: cp if any(isinstance(a, ndarray) for a in args) else np
    cp.ascontiguousarray = lambda a, dtype=None: _wrap(np.ascontiguousarray(_host(a), dtype))

    cp.linalg = types.SimpleNamespace(**{n: _creator(getattr(np.linalg, n)) for n in dir(np.linalg)
                                         if not n.startswith("_") and callable(getattr(np.linalg, n))
                                         and not isinstance(getattr(np.linalg, n), type)})
    cp.fft = types.SimpleNamespace(**{n: _creator(getattr(np.fft, n)) for n in dir(np.fft)
                                      if not n.startswith("_") and callable(getattr(np.fft, n))})
    cp.lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(
        as_strided=lambda x, shape=None, strides=None: _wrap(np.lib.stride_tricks.as_strided(
            _host(x), shape, strides)),
        sliding_window_view=_creator(np.lib.stride_tricks.sliding_window_view)))

    rs = {}

    def get_random_state():
        return rs.setdefault(_CURRENT[0], _RandomState())

    def seed(s=None):
        get_random_state().seed(s)

    cp.random = types.SimpleNamespace(
        RandomState=_RandomState, get_random_state=get_random_state, seed=seed,
        rand=lambda *size: get_random_state().random_sample(size or None),
        randn=lambda *size: get_random_state().standard_normal(size or None),
        random=lambda size=None, dtype=float: get_random_state().random_sample(size, dtype),
        standard_normal=lambda size=None, dtype=float: get_random_state().standard_normal(size, dtype),
        randint=lambda low, high=None, size=None, dtype=int: get_random_state().randint(low, high, size, dtype),
    )

    pool = _MemoryPool()
    null = _Stream(null=True)
    _STREAM[0] = null
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: _COUNT[0],
        getDevice=lambda: _CURRENT[0],
        setDevice=lambda i: _Device(i).use(),
        deviceSynchronize=lambda: None,
        getDeviceProperties=lambda i: {"name": b"Fake GPU", "totalGlobalMem": 16 << 30, "major": 8, "minor": 0,
                                       "multiProcessorCount": 1},
        memGetInfo=lambda: (16 << 30, 16 << 30),
        runtimeGetVersion=lambda: 12000,
        CUDARuntimeError=RuntimeError,
    )
    cp.cuda = types.SimpleNamespace(
        runtime=runtime, Device=_Device, Stream=_Stream, Event=_Event,
        get_current_stream=lambda device=None: _STREAM[0],
        get_device_id=lambda: _CURRENT[0],
        MemoryPool=_MemoryPool, PinnedMemoryPool=_MemoryPool,
        get_default_memory_pool=lambda: pool, get_default_pinned_memory_pool=lambda: pool,
        alloc_pinned_memory=lambda n: memoryview(bytearray(n)),
        is_available=lambda: _COUNT[0] > 0,
    )
    cp.cuda.Stream.null = null
    cp.cuda.runtime.CUDARuntimeError = RuntimeError
    cp.cuda.memory = types.SimpleNamespace(OutOfMemoryError=MemoryError)
    cp.cuda.memory.OutOfMemoryError = MemoryError

    cupyx = types.ModuleType("cupyx")
    cupyx.__spec__ = importlib.machinery.ModuleSpec("cupyx", None)
    cupyx.scatter_add = lambda a, slices, value: np.add.at(_host(a), _unwrap_key(slices), _host(value))
    scipy_mod = types.ModuleType("cupyx.scipy")
    scipy_mod.__spec__ = importlib.machinery.ModuleSpec("cupyx.scipy", None)
    special = types.ModuleType("cupyx.scipy.special")
    special.__spec__ = importlib.machinery.ModuleSpec("cupyx.scipy.special", None)
    import scipy.special as sp
    for name in dir(sp):
        fn = getattr(sp, name)
        if not name.startswith("_") and callable(fn) and not isinstance(fn, type):
            setattr(special, name, _scipy_fn(fn))
    scipy_mod.special = special
    cupyx.scipy = scipy_mod
    return {"cupy": cp, "cupyx": cupyx, "cupyx.scipy": scipy_mod, "cupyx.scipy.special": special}


def _scipy_fn(fn):
    def f(*args, **kwargs):
        return _wrap(fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()}))
    f.__name__ = getattr(fn, "__name__", "special")
    return f


def reset():
    _COUNT[0] = 1
    _CURRENT[0] = 0
