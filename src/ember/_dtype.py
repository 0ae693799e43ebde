"""dtype objects and torch's type-promotion rules."""
import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "bfloat16",
    "bool",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "double",
    "dtype",
    "finfo",
    "float",
    "float16",
    "float32",
    "float64",
    "get_default_dtype",
    "half",
    "iinfo",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "long",
    "promote_types",
    "set_default_dtype",
    "short",
    "uint8",
]

# categories, ordered: bool < integer < floating < complex
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """Same as `torch.dtype`."""
    __slots__ = ("__weakref__", "_cat", "is_signed", "itemsize", "name", "np")

    def __init__(self, name, np_dtype, cat, is_signed):
        self.name = name
        self.np = np.dtype(np_dtype)
        self._cat = cat
        self.itemsize = self.np.itemsize
        self.is_signed = is_signed

    @property
    def is_floating_point(self):
        return self._cat == _FLOAT

    @property
    def is_complex(self):
        return self._cat == _COMPLEX

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        if self._cat == _COMPLEX:
            return self
        if self._cat != _FLOAT:
            raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_NAMES[self.name]}")
        return complex128 if self is float64 else complex64

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


bool = dtype("bool", np.bool_, _BOOL, False)
uint8 = dtype("uint8", np.uint8, _INT, False)
int8 = dtype("int8", np.int8, _INT, True)
int16 = dtype("int16", np.int16, _INT, True)
int32 = dtype("int32", np.int32, _INT, True)
int64 = dtype("int64", np.int64, _INT, True)
float16 = dtype("float16", np.float16, _FLOAT, True)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, True)
float32 = dtype("float32", np.float32, _FLOAT, True)
float64 = dtype("float64", np.float64, _FLOAT, True)
complex64 = dtype("complex64", np.complex64, _COMPLEX, True)
complex128 = dtype("complex128", np.complex128, _COMPLEX, True)
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_BY_NAME = {d.name: d for d in ALL}
# array dtype -> ember dtype; the hot lookup behind Tensor.dtype
FROM_NP = {d.np: d for d in ALL}


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_np(np_dtype):
    try:
        return FROM_NP[np_dtype]
    except KeyError:
        raise TypeError(f"ember has no dtype for NumPy dtype {np_dtype}") from None


def _promote_pair(a, b):
    if a is b:
        return a
    if a._cat != b._cat:
        hi, lo = (a, b) if a._cat > b._cat else (b, a)
        if hi._cat == _COMPLEX and lo is float64:
            return complex128
        return hi
    if a._cat == _FLOAT and {a, b} == {float16, bfloat16}:
        return float32
    if a._cat == _FLOAT and bfloat16 in (a, b):
        return a if b is bfloat16 else b  # bfloat16 with float32/float64
    return FROM_NP[np.promote_types(a.np, b.np)]


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL for b in ALL}


def promote_types(type1, type2):
    """Same as `torch.promote_types`."""
    return _PROMOTE[(type1, type2)]


_default = [float32]


def set_default_dtype(d):
    """Same as `torch.set_default_dtype`: only float32/float64 (and float16/bfloat16) are accepted."""
    if not isinstance(d, dtype) or d._cat != _FLOAT:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def get_default_dtype():
    """Same as `torch.get_default_dtype`."""
    return _default[0]


def default_complex():
    return complex128 if _default[0] is float64 else complex64


def scalar_dtype(value):
    """The dtype torch gives a Python scalar when it takes part in promotion as a 'wrapped number'."""
    t = type(value)
    if t is builtins.bool or t is np.bool_:
        return bool
    if t is builtins.int or isinstance(value, np.integer):
        return int64
    if t is builtins.float or isinstance(value, np.floating):
        return _default[0]
    if t is builtins.complex or isinstance(value, np.complexfloating):
        return default_complex()
    raise TypeError(f"expected a number, got {t.__name__}")


def _combine(higher, lower):
    # torch's combine_categories: 'higher' is the result of a higher-priority class of operands
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._cat == _COMPLEX:
        return higher
    if lower._cat == _COMPLEX:
        return higher.to_complex() if higher._cat == _FLOAT else lower
    if higher._cat == _FLOAT:
        return higher
    if higher is bool or lower._cat == _FLOAT:
        return _PROMOTE[(higher, lower)]
    return higher


def result_type_of(dims, zeros, scalars):
    """torch's result type from three priority classes: dimensioned tensors, zero-dim tensors, Python numbers."""
    d = z = s = None
    for x in dims:
        d = x if d is None else _PROMOTE[(d, x)]
    for x in zeros:
        z = x if z is None else _PROMOTE[(z, x)]
    for x in scalars:
        s = x if s is None else _PROMOTE[(s, x)]
    return _combine(d, _combine(z, s))


class finfo:
    """Same as `torch.finfo`."""
    __slots__ = ("bits", "dtype", "eps", "max", "min", "resolution", "smallest_normal", "tiny")

    def __init__(self, type=None):
        type = _default[0] if type is None else type
        if type._cat not in (_FLOAT, _COMPLEX):
            raise TypeError("ember.finfo() requires a floating point input type. Use ember.iinfo to handle "
                            "'ember.finfo'")
        info = ml_dtypes.finfo(type.to_real().np)
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision  # as torch: 10 ** -digits10, so 1e-06 for float32
        self.dtype = type.to_real().name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Same as `torch.iinfo`."""
    __slots__ = ("bits", "dtype", "max", "min")

    def __init__(self, type):
        if type is bool:
            raise TypeError("ember.bool is not supported by ember.iinfo")
        if type._cat != _INT:
            raise TypeError("ember.iinfo() requires an integer input type. Use ember.finfo to handle 'ember.iinfo'")
        info = np.iinfo(type.np)
        self.bits = info.bits
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(self.dtype)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


class layout:
    """Same as `torch.layout`. Also equal to its name, as the plain string ember.strided once was."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        if isinstance(other, str):
            return other == self.name
        return isinstance(other, layout) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (layout, (self.name,))


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")


class memory_format:
    """Same as `torch.memory_format`. ember keeps every tensor in the contiguous (row-major) layout, so these only
    name a format: conversions to channels_last give the same values in the default layout."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return self.name  # pickles as the module-level constant, as torch's do


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


# torch's scalar type names (its error messages and legacy tensor type names use them)
SCALAR_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def legacy_type_name(t):
    """'ember.FloatTensor', 'ember.cuda.FloatTensor'..., as torch's Tensor.type() reports."""
    prefix = "ember." if t.device.type == "cpu" else "ember.cuda."
    return prefix + SCALAR_NAMES[FROM_NP[t._data.dtype].name] + "Tensor"
