"""Comparisons, logical ops, isclose/allclose/equal and where: bool results under torch's promotion."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._dispatch import Op
from ._inplace import make_inplace, write_out
from .binary import _BadOperand, _finish, _need_tensor, _not_implemented, _type_name, binary, promote, tt, where

__all__ = [
    "allclose",
    "eq",
    "equal",
    "ge",
    "greater",
    "greater_equal",
    "gt",
    "is_same_size",
    "is_signed",
    "isclose",
    "isin",
    "le",
    "less",
    "less_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "lt",
    "ne",
    "not_equal",
    "where",
]


# ---------------- comparisons ----------------
def _ordered(ufunc, kernel):
    """An order comparison: complex operands have no order in torch (NumPy would compare lexicographically)."""
    def fwd(a, b):
        if a.dtype.kind == "c":
            raise _not_implemented(kernel, Tensor._make(a))
        return ufunc(a, b)
    return fwd


def _comparison(name, fwd):
    return Op(name, fwd), Op(name, fwd)  # no backward: the result is bool


EQ, EQ_S = _comparison("eq", np.equal)
NE, NE_S = _comparison("ne", np.not_equal)
LT, LT_S = _comparison("lt", _ordered(np.less, "lt_cpu"))
LE, LE_S = _comparison("le", _ordered(np.less_equal, "le_cpu"))
GT, GT_S = _comparison("gt", _ordered(np.greater, "gt_cpu"))
GE, GE_S = _comparison("ge", _ordered(np.greater_equal, "ge_cpu"))


def _make_comparison(name, op, op_s):
    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor):
            _need_tensor(name, input, 1, "input")
        r = binary(op, op_s, input, other)
        return r if out is None else write_out(r, out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Same as `torch.{name}`."
    return fn


eq = _make_comparison("eq", EQ, EQ_S)
ne = not_equal = _make_comparison("ne", NE, NE_S)
lt = less = _make_comparison("lt", LT, LT_S)
le = less_equal = _make_comparison("le", LE, LE_S)
gt = greater = _make_comparison("gt", GT, GT_S)
ge = greater_equal = _make_comparison("ge", GE, GE_S)


# ---------------- logical ----------------
def _logical(ufunc):
    def fwd(a, b):
        if a.dtype != b.dtype:  # NumPy would promote; truth values need no common dtype
            a, b = a.astype(np.bool_, copy=False), b.astype(np.bool_, copy=False)
        return ufunc(a, b)
    return Op(ufunc.__name__, fwd)


LOGICAL_AND = _logical(np.logical_and)
LOGICAL_OR = _logical(np.logical_or)
LOGICAL_XOR = _logical(np.logical_xor)


def logical_and(input, other, *, out=None):
    """Same as `torch.logical_and`."""
    _need_tensor("logical_and", input, 1, "input")
    _need_tensor("logical_and", other)
    return _finish(tt(LOGICAL_AND, input, other), out, "logical_and")


def logical_or(input, other, *, out=None):
    """Same as `torch.logical_or`."""
    _need_tensor("logical_or", input, 1, "input")
    _need_tensor("logical_or", other)
    return _finish(tt(LOGICAL_OR, input, other), out, "logical_or")


def logical_xor(input, other, *, out=None):
    """Same as `torch.logical_xor`."""
    _need_tensor("logical_xor", input, 1, "input")
    _need_tensor("logical_xor", other)
    return _finish(tt(LOGICAL_XOR, input, other), out, "logical_xor")


# ---------------- closeness ----------------
def _isclose_fwd(a, b, rtol, atol, equal_nan):
    close = a == b
    if equal_nan and a.dtype.kind in "fcV":
        close |= np.isnan(a) & np.isnan(b)
    if rtol == 0 and atol == 0:
        return close
    if a.dtype.kind not in "fcV":
        dt = _dtype.get_default_dtype().np
        a, b = a.astype(dt), b.astype(dt)
    # torch's "closeness error": |a - b| <= atol + rtol * |b|, for finite differences only
    allowed = atol + np.abs(rtol * b)
    actual = np.abs(a - b)
    close |= np.isfinite(actual) & (actual <= allowed)
    return close


ISCLOSE = Op("isclose", _isclose_fwd)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Same as `torch.isclose`."""
    _need_tensor("isclose", other)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_type_name(input)} did not match {_type_name(other)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return tt(ISCLOSE, input, other, rtol, atol, equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Same as `torch.allclose`: a Python bool."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """Same as `torch.equal`: a Python bool, True for the same size and the same values (dtypes may differ)."""
    _need_tensor("equal", other)
    if input._data.shape != other._data.shape:
        return False
    a, b = promote(input, other)
    return bool((a._data == b._data).all())


# ---------------- binding ----------------
for _names, _fn in ((("eq",), eq), (("ne", "not_equal"), ne), (("lt", "less"), lt), (("le", "less_equal"), le),
                    (("gt", "greater"), gt), (("ge", "greater_equal"), ge), (("logical_and",), logical_and),
                    (("logical_or",), logical_or), (("logical_xor",), logical_xor)):
    _inplace = make_inplace(_fn, _names[0] + "_")
    for _n in _names:
        setattr(Tensor, _n, _fn)
        setattr(Tensor, _n + "_", _inplace)
Tensor.isclose = isclose
Tensor.allclose = allclose
Tensor.equal = equal

# operators are written out: one call less than a shared wrapper
def _eq_op(self, other):
    try:
        return binary(EQ, EQ_S, self, other)
    except _BadOperand:
        return NotImplemented


def _ne_op(self, other):
    try:
        return binary(NE, NE_S, self, other)
    except _BadOperand:
        return NotImplemented


def _lt_op(self, other):
    try:
        return binary(LT, LT_S, self, other)
    except _BadOperand:
        return NotImplemented


def _le_op(self, other):
    try:
        return binary(LE, LE_S, self, other)
    except _BadOperand:
        return NotImplemented


def _gt_op(self, other):
    try:
        return binary(GT, GT_S, self, other)
    except _BadOperand:
        return NotImplemented


def _ge_op(self, other):
    try:
        return binary(GE, GE_S, self, other)
    except _BadOperand:
        return NotImplemented


Tensor.__eq__ = _eq_op
Tensor.__ne__ = _ne_op
Tensor.__lt__ = _lt_op
Tensor.__le__ = _le_op
Tensor.__gt__ = _gt_op
Tensor.__ge__ = _ge_op


# ---------------- isin ----------------
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Same as `torch.isin`."""
    from .._backend import XP
    from .._dtype import SCALAR_NAMES
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - expected at least one Tensor")
    like = (elements if isinstance(elements, Tensor) else test_elements)._data
    xp = XP[like.__class__]
    a = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    b = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    for d in (a, b):
        if d.dtype.kind == "c":
            name = SCALAR_NAMES[_dtype.FROM_NP[d.dtype].name]
            raise RuntimeError(f"Unsupported input type encountered for isin(): {name}")
    return Tensor._make(xp.asarray(xp.isin(a, b, assume_unique=assume_unique, invert=invert)))


def is_same_size(input, other):
    """Same as `torch.is_same_size`."""
    return input.is_same_size(other)


def is_signed(input):
    """Same as `torch.is_signed`."""
    return input.is_signed()
