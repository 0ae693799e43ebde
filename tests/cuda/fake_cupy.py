"""A stand-in for CuPy backed by NumPy, so ember's device code runs in tests on machines without a GPU.

A device array is a `fake_cupy.ndarray`: a NumPy array behind CuPy's interface, not an `np.ndarray` subclass, so
it fails where CuPy fails. The rules come from CuPy 14.2 itself, recorded by tests/cuda/make_cupy_api.py in
tests/cuda/cupy_api.py:

- the `cupy`, `cupy.linalg`, `cupy.fft`, `cupyx`, `cupyx.scipy.special` namespaces hold only the names CuPy has,
  and their functions and the array's methods refuse keyword arguments CuPy's do not take;
- the array has only CuPy's attributes (no `__index__`, `ctypes`, `setflags`, `resize`...);
- ufunc methods exist where CuPy implements them: `at` on a few ufuncs and dtypes, `reduce`/`accumulate` on add
  and multiply, `reduceat` on add (NotImplementedError or TypeError elsewhere, as CuPy);
- arrays of a dtype CuPy lacks (float8, int4, object...) are refused: "Unsupported dtype ...";
- the host never meets the device implicitly: a NumPy array mixed into a device op raises TypeError, NumPy
  functions dispatch to the CuPy names or raise, `np.asarray(device array)` raises ("Implicit conversion to a
  NumPy array is not allowed"), writing a non-scalar host array into a slice raises ValueError (CuPy's `fill`);
  host data reaches the device through cupy.asarray/array, ndarray.set or an advanced-index assignment;
- `cupy.where` wants an array (or NumPy scalar) condition, not a Python bool;
- `ndarray.scatter_add`/`scatter_max`/`scatter_min` and their cupyx forms warn (DeprecationWarning) as in 14.2.

What it cannot do: compile kernels (no ElementwiseKernel, RawKernel or fuse) or time anything.
"""
import functools
import importlib.machinery
import sys
import types
import warnings

import ml_dtypes
import numpy as np

from . import cupy_api as API

# ------------------------------------------------------------------------------------------------ the recorded API
_FUNCS = API.FUNCTIONS
_NDARRAY_METHODS = API.NDARRAY_METHODS
_AT_DTYPES = API.UFUNC_METHODS["at"]
_UFUNC_METHODS = {k: frozenset(v) for k, v in API.UFUNC_METHODS.items() if k != "at"}
_UFUNC_KEYWORDS = frozenset(API.UFUNC_KEYWORDS)
_DTYPES = frozenset(np.dtype(getattr(ml_dtypes, n, None) or getattr(np, n)) for n in API.DTYPES)
_IMPLICIT = API.BEHAVIOURS["np.asarray(device array)"][1]
_FILL = API.BEHAVIOURS["a.fill(non-scalar numpy array)"][1]
_DEPRECATED = {k: v[2][0].split(": ", 1)[1] for k, v in API.BEHAVIOURS.items() if v[2]}
_BF16 = np.dtype(ml_dtypes.bfloat16)
_NO_BF16_LOOP = {name: np.dtype(dt) for name, dt in API.NO_BFLOAT16_LOOP.items()}


def _unsupported(x):
    return TypeError(f"Unsupported type {type(x)}")


def _check_kwargs(name, params, kwargs):
    if params is not None:
        for k in kwargs:
            if k not in params:
                raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")


def _check_dtype(dt):
    if dt not in _DTYPES:
        raise ValueError(f"Unsupported dtype {dt}")


# ------------------------------------------------------------------------------------------------ devices
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


# ------------------------------------------------------------------------------------------------ arrays
def _new(a, base=None):
    x = object.__new__(ndarray)
    x._a = a
    x._base = base
    return x


def _root(x):
    return x if x._base is None else x._base


def _wrap(r, parent=None):
    """A NumPy result as CuPy returns it: device arrays (0-d ones for scalars), views keeping their base."""
    if isinstance(r, np.ndarray):
        _check_dtype(r.dtype)
        base = None
        if parent is not None and r.base is not None and np.may_share_memory(r, parent._a):
            base = _root(parent)
        return _new(r, base)
    if isinstance(r, np.generic):
        _check_dtype(r.dtype)
        return _new(np.asarray(r))
    if type(r) in (list, tuple):
        return type(r)(_wrap(i, parent) for i in r)
    if isinstance(r, tuple) and hasattr(r, "_fields"):  # np.linalg's named results
        return type(r)(*[_wrap(i, parent) for i in r])
    return r


def _widened(name, r):
    """NumPy's result r of routine `name` as CuPy answers it: where CuPy's kernel has no bfloat16 loop, bfloat16
    operands are computed in a wider loop, whose dtype the result keeps."""
    wide = _NO_BF16_LOOP.get(name)
    if wide is None:
        return r
    if type(r) is tuple:
        return tuple(_widened(name, x) for x in r)
    return r.astype(wide) if isinstance(r, (np.ndarray, np.generic)) and r.dtype == _BF16 else r


def _arg(x):
    """An argument of a CuPy routine as NumPy takes it; host arrays are refused."""
    if x.__class__ is ndarray:
        return x._a
    if isinstance(x, np.ndarray):
        raise _unsupported(x)
    if type(x) in (list, tuple):
        return type(x)(_arg(i) for i in x)
    return x


def _args(args, kwargs):
    return [_arg(a) for a in args], {k: _arg(v) for k, v in kwargs.items()}


def _first_array(args):
    for a in args:
        if a.__class__ is ndarray:
            return a
    return None


def _key(key):
    """An index: CuPy takes device arrays, host integer/boolean arrays and lists."""
    if key.__class__ is ndarray:
        return key._a
    if type(key) is tuple:
        return tuple(k._a if k.__class__ is ndarray else k for k in key)
    return key


def _is_advanced(key):
    ks = key if type(key) is tuple else (key,)
    return any(k.__class__ is ndarray or isinstance(k, (np.ndarray, list)) for k in ks)


def _int_index(key):
    """Whether an index holds an integer array (ufunc.at checks dtypes there; a boolean mask takes any)."""
    ks = key if type(key) is tuple else (key,)
    for k in ks:
        k = k._a if k.__class__ is ndarray else k
        if isinstance(k, list) or isinstance(k, np.ndarray) and k.dtype != np.bool_:
            return True
    return False


def _operand(x, compare=False):
    """An operand of a ufunc: device arrays and scalars only."""
    if x.__class__ is ndarray:
        return x._a
    if isinstance(x, np.ndarray):
        if compare and x.ndim == 0:  # CuPy's workaround for numpy/numpy#12142
            return x.item()
        raise _unsupported(x)
    if isinstance(x, (int, float, complex, np.generic)):
        return x
    raise _unsupported(x)


_COMPARISONS = frozenset(("greater", "greater_equal", "less", "less_equal", "equal", "not_equal"))


def _ufunc_call(uf, inputs, kwargs):
    for k in kwargs:
        if k not in _UFUNC_KEYWORDS:
            raise TypeError(f"Wrong arguments {{{k!r}: {kwargs[k]!r}}}")
    compare = uf.__name__ in _COMPARISONS
    args = [_operand(x, compare) for x in inputs]
    out = kwargs.get("out")
    if out is not None:
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            if o.__class__ is not ndarray:
                raise TypeError("Output arguments must be cupy.ndarray")
        kwargs = dict(kwargs, out=tuple(o._a for o in outs))
    if kwargs.get("where") is not None:
        kwargs = dict(kwargs, where=_operand(kwargs["where"]))
    r = uf(*args, **kwargs)
    if out is not None:
        return out
    return _wrap(_widened(uf.__name__, r))


def _defer(other):
    """CuPy's `_should_use_rop`: a binary operator leaves the other operand to answer when it opts out of ufuncs
    or has the higher __array_priority__ (an ember Tensor)."""
    try:
        return other.__array_ufunc__ is None
    except AttributeError:
        return getattr(other, "__array_priority__", 0) > ndarray.__array_priority__


def _binary(ufunc_name):
    uf = getattr(np, ufunc_name)

    def op(self, other):
        if _defer(other):
            return NotImplemented
        return _ufunc_call(uf, (self, other), {})

    def rop(self, other):
        return _ufunc_call(uf, (other, self), {})

    def iop(self, other):
        _ufunc_call(uf, (self, other), {"out": self})
        return self

    return op, rop, iop


class _Flags:
    """cupy's flags: c_contiguous, f_contiguous, owndata (no writeable: device arrays are never read-only)."""
    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, c, f, own):
        self.c_contiguous, self.f_contiguous, self.owndata = c, f, own

    def __getitem__(self, name):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous, "OWNDATA": self.owndata}[name]


class _MemoryPointer:
    """cupy.cuda.MemoryPointer: the address of an array's first element."""
    __slots__ = ("ptr", "device_id")

    def __init__(self, ptr):
        self.ptr, self.device_id = ptr, 0

    @property
    def device(self):
        return _Device(0)


class ndarray:
    """cupy.ndarray: a NumPy array (`_a`) behind CuPy's interface, on the one fake device."""

    __slots__ = ("_a", "_base")
    __array_priority__ = 100
    __hash__ = None

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        dtype = np.dtype(dtype)
        _check_dtype(dtype)
        self._a = np.empty(shape, dtype, order=order)
        self._base = None

    # ---- attributes
    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, shape):  # a view of the new shape, never a copy (CuPy's setter, as NumPy's was)
        try:
            self._a = self._a.reshape(shape, copy=False)
        except ValueError:
            raise AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a copy "
                                 "with the desired shape.") from None

    strides = property(lambda self: self._a.strides)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    dtype = property(lambda self: self._a.dtype)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    base = property(lambda self: self._base)
    T = property(lambda self: self if self._a.ndim < 2 else _wrap(self._a.T, self))
    mT = property(lambda self: _wrap(self._a.mT, self))

    @property
    def real(self):
        return _wrap(self._a.real, self)

    @real.setter
    def real(self, value):
        self._a.real = _operand(value)

    @property
    def imag(self):
        if self._a.dtype.kind != "c":  # NumPy answers a read-only array; CuPy a new one
            return _new(np.zeros_like(self._a))
        return _wrap(self._a.imag, self)

    @imag.setter
    def imag(self, value):
        self._a.imag = _operand(value)

    @property
    def flags(self):
        f = self._a.flags
        return _Flags(f.c_contiguous, f.f_contiguous, self._base is None)

    @property
    def data(self):
        return _MemoryPointer(self._a.__array_interface__["data"][0])

    @property
    def device(self):
        return _Device(0)

    @property
    def __cuda_array_interface__(self):
        i = self._a.__array_interface__
        return {"shape": i["shape"], "typestr": i["typestr"], "descr": i["descr"], "data": (i["data"][0], False),
                "strides": None if self._a.flags.c_contiguous else i["strides"], "version": 3}

    # ---- conversions (CuPy converts through a host copy, with NumPy's rules)
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def __bool__(self):
        return bool(self._a)

    def __int__(self):
        return int(self._a)

    def __float__(self):
        return float(self._a)

    def __complex__(self):
        return complex(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec)

    def __copy__(self):
        return _new(self._a.copy())

    def __deepcopy__(self, memo):
        return _new(self._a.copy())

    def __reduce__(self):
        raise TypeError("fake device arrays do not pickle")

    # ---- NumPy interoperability
    def __array_ufunc__(self, uf, method, *inputs, **kwargs):
        cp_uf = getattr(sys.modules["cupy"], uf.__name__, None)
        if cp_uf is None:
            return NotImplemented
        if method == "__call__":
            for x in inputs:
                if not (x.__class__ is ndarray or isinstance(x, (np.ndarray, np.generic, int, float, complex))):
                    return NotImplemented
            if isinstance(kwargs.get("out"), tuple) and len(kwargs["out"]) == 1:
                kwargs["out"] = kwargs["out"][0]
            return cp_uf(*inputs, **kwargs)
        if not isinstance(cp_uf, ufunc):
            return NotImplemented
        return getattr(cp_uf, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        try:
            module = functools.reduce(getattr, func.__module__.split(".")[1:], sys.modules["cupy"])
            cupy_func = getattr(module, func.__name__)
        except AttributeError:
            return NotImplemented
        for t in types:
            if t is not ndarray and t is not np.ndarray:
                return NotImplemented
        return cupy_func(*args, **kwargs)

    # ---- indexing
    def __getitem__(self, key):
        k = _key(key)
        r = self._a[k]
        if isinstance(r, np.generic):  # CuPy answers a 0-d view where NumPy answers a scalar
            ks = k if type(k) is tuple else (k,)
            if not any(i is Ellipsis for i in ks):
                r = self._a[ks + (Ellipsis,)]
        return _wrap(r, self)

    def __setitem__(self, key, value):
        if value.__class__ is ndarray:
            value = value._a
        elif not _is_advanced(key):  # CuPy fills the selected view with a host value: scalars only
            if isinstance(value, (list, tuple)):
                value = np.asarray(value)
            if isinstance(value, np.ndarray):
                if value.ndim:
                    raise ValueError(_FILL)
                value = value.item()
        self._a[_key(key)] = value

    # ---- methods with CuPy's own behaviour
    def get(self, stream=None, order="C", out=None, blocking=True):
        """Copy to the host."""
        if out is None:
            return np.array(self._a, order=order)
        if not isinstance(out, np.ndarray):
            raise TypeError("Only numpy.ndarray can be obtained from cupy.ndarray")
        if out.dtype != self._a.dtype:
            raise TypeError(f"{out.dtype} array cannot be obtained from {self._a.dtype} array")
        if out.shape != self._a.shape:
            raise ValueError(f"Shape mismatch. Expected shape: {self._a.shape}, actual shape: {out.shape}")
        out[...] = self._a
        return out

    def set(self, arr, stream=None):
        """Copy from the host."""
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if arr.dtype != self._a.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self._a.dtype} array")
        if arr.shape != self._a.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self._a.shape}, new shape: {arr.shape}")
        self._a[...] = arr

    def fill(self, value):
        if value.__class__ is ndarray:
            value = value._a
        else:
            if isinstance(value, (list, tuple)):
                value = np.asarray(value)
            if isinstance(value, np.ndarray):
                if value.ndim:
                    raise ValueError(_FILL)
                value = value.item()
        self._a.fill(value) if not isinstance(value, np.ndarray) else self._a.__setitem__(Ellipsis, value)

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if casting is not None:
            raise TypeError("casting is not supported yet")
        if subok is not None:
            raise TypeError("subok is not supported yet")
        dtype = np.dtype(dtype)
        _check_dtype(dtype)
        if dtype == self._a.dtype and not copy:
            return self
        return _new(self._a.astype(dtype, order=order))

    def view(self, dtype=None, type=None):  # CuPy reinterprets memory without checking the dtype
        return _new(self._a.view() if dtype is None else self._a.view(dtype), _root(self))

    def item(self):
        return self._a.item()

    def tolist(self):
        return self._a.tolist()

    def tobytes(self, order="C"):
        return self._a.tobytes(order)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if copy is None:  # NumPy 2.0's reshape has no copy argument
            return _wrap(self._a.reshape(shape, order=order), self)
        return _wrap(self._a.reshape(shape, order=order, copy=copy), self)

    def transpose(self, *axes):
        return _wrap(self._a.transpose(*axes), self)

    def dot(self, b, out=None):
        return dot(self, b, out=out)

    def take(self, indices, axis=None, out=None):  # host indices are copied to the device
        if out is None:
            return _wrap(self._a.take(_key(indices), axis))
        self._a.take(_key(indices), axis, out._a)
        return out

    def put(self, indices, values, mode="wrap"):
        self._a.put(_key(indices), values._a if values.__class__ is ndarray else values, mode)

    def _scatter(self, name, ufunc_name, slices, value):
        warnings.warn(_DEPRECATED[f"a.{name}"], DeprecationWarning, stacklevel=3)
        getattr(sys.modules["cupy"], ufunc_name).at(self, slices, value)

    def scatter_add(self, slices, value):
        self._scatter("scatter_add", "add", slices, value)

    def scatter_max(self, slices, value):
        self._scatter("scatter_max", "maximum", slices, value)

    def scatter_min(self, slices, value):
        self._scatter("scatter_min", "minimum", slices, value)


def _method(name):
    """ndarray.<name>: NumPy's method, refusing what CuPy's refuses, returning device arrays."""
    params = _NDARRAY_METHODS[name]
    np_method = getattr(np.ndarray, name)

    def m(self, *args, **kwargs):
        _check_kwargs(name, params, kwargs)
        a, kw = _args(args, kwargs)
        r = _widened(name, np_method(self._a, *a, **kw))
        out = kwargs.get("out")
        return out if out is not None else _wrap(r, self)
    m.__name__ = name
    return m


for _name in _NDARRAY_METHODS:
    if _name not in ndarray.__dict__ and hasattr(np.ndarray, _name) and _name not in ("dump", "dumps"):
        setattr(ndarray, _name, _method(_name))

for _name, _uf in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "true_divide"),
                   ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                   ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "left_shift"),
                   ("rshift", "right_shift"), ("matmul", "matmul")]:
    _op, _rop, _iop = _binary(_uf)
    setattr(ndarray, f"__{_name}__", _op)
    setattr(ndarray, f"__r{_name}__", _rop)
    if _name != "matmul":  # CuPy has no __imatmul__
        setattr(ndarray, f"__i{_name}__", _iop)
for _name, _uf in [("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                   ("gt", "greater"), ("ge", "greater_equal"), ("divmod", "divmod")]:
    setattr(ndarray, f"__{_name}__", _binary(_uf)[0])
ndarray.__rdivmod__ = _binary("divmod")[1]
for _name, _uf in [("neg", "negative"), ("pos", "positive"), ("abs", "absolute"), ("invert", "invert")]:
    setattr(ndarray, f"__{_name}__", functools.partialmethod(lambda self, u: _ufunc_call(u, (self,), {}),
                                                             getattr(np, _uf)))


# ------------------------------------------------------------------------------------------------ ufuncs
class ufunc:
    """cupy.ufunc over NumPy's, with only the methods CuPy implements."""

    def __init__(self, np_ufunc):
        self._uf = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.name = "cupy_" + np_ufunc.__name__
        self.nin, self.nout, self.nargs = np_ufunc.nin, np_ufunc.nout, np_ufunc.nargs

    def __repr__(self):
        return f"<ufunc '{self.name}'>"

    def __call__(self, *args, **kwargs):
        return _ufunc_call(self._uf, args, kwargs)

    def _supported(self, method):
        if self.__name__ not in _UFUNC_METHODS[method]:
            raise NotImplementedError(f"`{self.name}.{method}` is not supported yet")

    def at(self, a, indices, b=None):
        dtypes = _AT_DTYPES.get(self.__name__)
        if dtypes is None:
            raise NotImplementedError(f"`{self.name}.at` is not supported yet")
        if _int_index(indices) and a.dtype.name not in dtypes:
            raise TypeError(f"cupy.{self.__name__}.at only supports {', '.join(dtypes)} as data type")
        if b.__class__ is ndarray:
            b = b._a
        key = _key(indices)
        lossy = _LOSSY_MINMAX_AT.get((self.__name__, a.dtype.name))
        if lossy is not None and _int_index(indices):
            return _lossy_minmax_at(lossy, a._a, key, b)
        self._uf.at(a._a, key, b)  # a host value is copied to the device, as CuPy does

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        self._supported("reduce")
        r = self._uf.reduce(array._a, axis, dtype, None if out is None else out._a, keepdims)
        return out if out is not None else _wrap(r)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        self._supported("accumulate")
        r = self._uf.accumulate(array._a, axis, dtype, None if out is None else out._a)
        return out if out is not None else _wrap(r)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        self._supported("reduceat")
        r = self._uf.reduceat(array._a, _key(indices), axis, dtype, None if out is None else out._a)
        return out if out is not None else _wrap(r)

    def outer(self, A, B, **kwargs):
        self._supported("outer")
        A, B = asarray(A), asarray(B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B.reshape((1,) * A.ndim + B.shape), **kwargs)


# CuPy's float32/float64 atomicMax and atomicMin compare with fmaxf/fminf (cupy/_core/include/cupy/atomics.cuh):
# a float64 result is rounded to float32, and NaN never wins
_C_FUNCS = {"fmaxf": (np.fmax, np.float32), "fminf": (np.fmin, np.float32), "fmax": (np.fmax, None),
            "fmin": (np.fmin, None), "max": (np.maximum, None), "min": (np.minimum, None)}
_LOSSY_MINMAX_AT = {(uf, dt): _C_FUNCS[c] for key, c in API.FLOAT_ATOMIC_MINMAX.items() if c is not None
                    for uf, dt in [({"max": "maximum", "min": "minimum"}[key.split()[0]],
                                    {"float": "float32", "double": "float64"}[key.split()[1]])]}


def _lossy_minmax_at(how, a, key, b):
    fn, through = how
    t = a.astype(through or a.dtype)
    fn.at(t, key, np.asarray(b).astype(t.dtype))
    touched = np.zeros(a.shape, bool)
    touched[key] = True
    a[touched] = t[touched]


# ------------------------------------------------------------------------------------------------ routines
def asarray(a, dtype=None, order=None, *, blocking=False):
    if a.__class__ is ndarray:
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return array(a, dtype, order=order or "K")


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    return _wrap(np.array(_data(obj), dtype=dtype, copy=True, order=order, ndmin=ndmin))  # host data is copied


def _data(obj):
    """Host or device data as NumPy holds it (CuPy concatenates a sequence of device arrays on the device)."""
    if obj.__class__ is ndarray:
        return obj._a
    if type(obj) in (list, tuple):
        return type(obj)(_data(o) for o in obj)
    return obj


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    return a.get(stream, order, out) if a.__class__ is ndarray else np.asarray(a, order=order)


def where(condition, x=None, y=None):
    if (x is None) != (y is None):
        raise ValueError("Must provide both 'x' and 'y' or neither.")
    if x is None:
        return nonzero(condition)
    if not hasattr(condition, "astype"):  # CuPy calls condition.astype('?')
        raise AttributeError(f"'{type(condition).__name__}' object has no attribute 'astype'")
    return _wrap(_widened("where", np.where(_arg(condition), _operand(x), _operand(y))))


def nonzero(a):
    return _wrap(np.nonzero(_arg(a)))


def dot(a, b, out=None):
    if out is None:
        return _wrap(np.dot(_arg(a), _arg(b)))
    np.dot(_arg(a), _arg(b), out=out._a)
    return out


def count_nonzero(a, axis=None):
    return _wrap(np.asarray(np.count_nonzero(_arg(a), axis)))  # CuPy answers a 0-d array where NumPy an int


_SPECIAL = {f.__name__: f for f in (asarray, array, asnumpy, where, nonzero, dot, count_nonzero)}


def _routine(qualname, fn, params):
    """A CuPy routine: NumPy's (or SciPy's) function, refusing host arrays and CuPy's unknown keywords,
    returning device arrays."""
    def f(*args, **kwargs):
        _check_kwargs(qualname, params, kwargs)
        a, kw = _args(args, kwargs)
        out = kwargs.get("out")
        r = _widened(qualname, fn(*a, **kw))
        return out if out is not None else _wrap(r, _first_array(args))
    f.__name__ = fn.__name__ if hasattr(fn, "__name__") else qualname
    return f


def _fill_namespace(ns, module_name, source):
    """Put into ns every function CuPy's module_name has and source (NumPy or SciPy) implements."""
    for name, params in _FUNCS[module_name].items():
        fn = getattr(source, name, None)
        if fn is None or params == "type" and not isinstance(fn, type):
            continue
        if params == "type":
            setattr(ns, name, fn)
        elif isinstance(fn, np.ufunc) and params == "ufunc":
            setattr(ns, name, ufunc(fn))
        elif callable(fn):
            setattr(ns, name, _routine(name, fn, None if params == "ufunc" else params))


class _RandomState:
    """cupy.random.RandomState over NumPy's legacy generator (same method names)."""

    def __init__(self, seed=None):
        self._g = np.random.RandomState(None if seed is None else int(seed) % 2 ** 32)

    def seed(self, seed=None):
        self._g.seed(None if seed is None else int(seed) % 2 ** 32)

    def _out(self, r, dtype):
        return _wrap(np.asarray(r).astype(dtype, copy=False))

    def random_sample(self, size=None, dtype=float):
        return self._out(self._g.random_sample(size), dtype)

    rand = random_sample

    def standard_normal(self, size=None, dtype=float):
        return self._out(self._g.standard_normal(size), dtype)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=float):
        return self._out(self._g.normal(_arg(loc), _arg(scale), size), dtype)

    def uniform(self, low=0.0, high=1.0, size=None, dtype=float):
        return self._out(self._g.uniform(_arg(low), _arg(high), size), dtype)

    def standard_exponential(self, size=None, dtype=float, method="inv"):
        return self._out(self._g.standard_exponential(size), dtype)

    def randint(self, low, high=None, size=None, dtype=int):
        return _wrap(np.asarray(self._g.randint(low, high, size, dtype=dtype)))

    def permutation(self, num):
        return _wrap(self._g.permutation(_arg(num)))

    def shuffle(self, a):
        self._g.shuffle(_arg(a))

    def geometric(self, p, size=None, dtype=int):
        return self._out(self._g.geometric(_arg(p), size), dtype)

    def standard_cauchy(self, size=None, dtype=float):
        return self._out(self._g.standard_cauchy(size), dtype)

    def poisson(self, lam=1.0, size=None, dtype=int):
        return self._out(self._g.poisson(_arg(lam), size), dtype)

    def binomial(self, n, p, size=None, dtype=int):
        return self._out(self._g.binomial(_arg(n), _arg(p), size), dtype)

    def choice(self, a, size=None, replace=True, p=None):
        return _wrap(np.asarray(self._g.choice(_arg(a), size, replace, _arg(p))))


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


def _module(name):
    m = types.ModuleType(name)
    m.__spec__ = importlib.machinery.ModuleSpec(name, None)
    return m


def _solve(a, b):
    """cupy.linalg.solve: the batch dimensions of a and b must be equal (NumPy broadcasts them)."""
    if b.ndim == 0:
        raise ValueError("b must have at least one dimension")
    if b.ndim == 1 and a.shape[-1] != b.size:
        raise ValueError("a must have (..., M, M) shape and b must have (M,) for one-dimensional b")
    if b.ndim > 1 and a.shape[:-1] != b.shape[:-1]:
        raise ValueError("a must have (..., M, M) shape and b must have (..., M, K) for multidimensional b")
    return _wrap(np.linalg.solve(_arg(a), _arg(b)))


def _polygamma(n, x):
    """CuPy's polygamma is Python: `n, x = broadcast_arrays(n, x)` then `where(n == 0, digamma(x), ...)`, which
    a Python number n reaches as a bool."""
    if not (n.__class__ is ndarray or isinstance(n, np.generic)):
        where(n == 0, x, x)
    import scipy.special as sp
    return _wrap(sp.polygamma(_arg(n), _arg(x)))


def _scatter_fn(name, ufunc_name):
    def f(a, slices, value):
        warnings.warn(_DEPRECATED[f"a.{name}"], DeprecationWarning, stacklevel=2)
        getattr(sys.modules["cupy"], ufunc_name).at(a, slices, value)
    f.__name__ = name
    return f


def _make_module():
    """A fresh cupy module object (and cupyx), installed by the fake_gpu fixture."""
    cp = _module("cupy")
    cp.__file__ = __file__
    cp.__version__ = API.VERSION + "+fake"
    cp.IS_FAKE = True
    _fill_namespace(cp, "cupy", np)
    for name in API.CONSTANTS:  # pi, inf, newaxis...
        if hasattr(np, name):
            setattr(cp, name, getattr(np, name))
    for fn in _SPECIAL.values():
        setattr(cp, fn.__name__, fn)
    cp.ndarray = ndarray
    cp.ufunc = ufunc
    cp.get_array_module = lambda *args: cp if any(a.__class__ is ndarray for a in args) else np

    cp.linalg = _module("cupy.linalg")
    _fill_namespace(cp.linalg, "cupy.linalg", np.linalg)
    cp.linalg.solve = _solve
    cp.fft = _module("cupy.fft")
    _fill_namespace(cp.fft, "cupy.fft", np.fft)
    cp.lib = _module("cupy.lib")
    cp.lib.stride_tricks = _module("cupy.lib.stride_tricks")
    cp.lib.stride_tricks.as_strided = lambda x, shape=None, strides=None: _wrap(
        np.lib.stride_tricks.as_strided(_arg(x), shape, strides), x)
    cp.lib.stride_tricks.sliding_window_view = _routine(
        "sliding_window_view", np.lib.stride_tricks.sliding_window_view,
        _FUNCS["cupy.lib.stride_tricks"]["sliding_window_view"])

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
    cp.cuda.memory = types.SimpleNamespace(OutOfMemoryError=MemoryError)

    cupyx = _module("cupyx")
    for name, ufunc_name in (("scatter_add", "add"), ("scatter_max", "maximum"), ("scatter_min", "minimum")):
        setattr(cupyx, name, _scatter_fn(name, ufunc_name))
    scipy_mod = _module("cupyx.scipy")
    special = _module("cupyx.scipy.special")
    import scipy.special as sp
    for name, params in _FUNCS["cupyx.scipy.special"].items():
        fn = getattr(sp, name, None)
        if callable(fn) and not isinstance(fn, type):
            setattr(special, name, _routine(name, fn, None if params == "ufunc" else params))
    special.polygamma = _polygamma
    scipy_mod.special = special
    cupyx.scipy = scipy_mod
    return {"cupy": cp, "cupyx": cupyx, "cupyx.scipy": scipy_mod, "cupyx.scipy.special": special}


def reset():
    _COUNT[0] = 1
    _CURRENT[0] = 0
