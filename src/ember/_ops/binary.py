"""Elementwise binary ops (torch's type promotion, broadcasting errors in torch's words)."""
import builtins
import numbers

import numpy as np

from .. import _dtype
from .._dtype import FROM_NP, _PROMOTE, result_type_of, scalar_dtype
from .._tensor import Tensor
from ._dispatch import SAVE_INPUTS, SAVE_NONE, Op, dispatch1, dispatch2
from ._inplace import make_inplace, write_out

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "result_type", "can_cast"]

_NUMBER = (builtins.int, builtins.float, builtins.bool, builtins.complex, np.number, np.bool_)


# NOTE [ Binary op promotion ]
# NumPy's own promotion differs from torch's (int32 + 2.5 is float64 in NumPy, float32 in torch; no bfloat16 rules;
# zero-dim tensors). So operands are brought to torch's result dtype first and NumPy only ever computes on
# operands that already agree. The common cases (same-dtype tensors; a tensor and a Python number of the same or
# lower category) need no cast at all: NumPy 2 treats Python numbers as weak, as torch does.

def _broadcast_error(a, b):
    sa, sb = a._data.shape, b._data.shape
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + sa
    pb = (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast")


def _device_error(a, b):
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                        f"{a.device} and {b.device}!")


def promote(a, b):
    """(a, b) as tensors of torch's common dtype; b may be a Python number, returned as is when no cast is
    needed (NumPy treats it as weak)."""
    if b.__class__ is Tensor or isinstance(b, Tensor):
        da, db = a._data, b._data
        if da.dtype is db.dtype or da.dtype == db.dtype:
            if da.__class__ is not db.__class__:
                _check_devices(a, b)
            return a, b
        if da.__class__ is not db.__class__:
            _check_devices(a, b)
        dta, dtb = FROM_NP[da.dtype], FROM_NP[db.dtype]
        if (da.ndim == 0) == (db.ndim == 0):
            rt = _PROMOTE[(dta, dtb)]
        elif da.ndim == 0:
            rt = result_type_of((dtb,), (dta,), ())
        else:
            rt = result_type_of((dta,), (dtb,), ())
        return (a if dta is rt else a.to(rt)), (b if dtb is rt else b.to(rt))
    if isinstance(b, _NUMBER):
        dta = FROM_NP[a._data.dtype]
        sd = scalar_dtype(b)
        if sd._cat > dta._cat:
            rt = result_type_of((dta,), (), (sd,)) if a._data.ndim else result_type_of((), (dta,), (sd,))
            a = a.to(rt)
        elif dta._cat == _dtype._BOOL and sd is _dtype.bool:
            pass
        return a, b
    raise TypeError(f"unsupported operand type: expected a Tensor or a number, got {type(b).__name__}")


def _check_devices(a, b):
    # a zero-dim CPU tensor may take part in a GPU op, as a scalar does
    if a._data.ndim == 0 and a.device.type == "cpu" or b._data.ndim == 0 and b.device.type == "cpu":
        return
    if a.device != b.device:
        raise _device_error(a, b)


def _scalar_of(b, a):
    """A Python number as an operand for a's array (weak typing keeps a's dtype)."""
    return b


def binary(op, op_scalar, a, b):
    """Run a tensor-tensor op, or its tensor-scalar twin when b is a number."""
    if not isinstance(a, Tensor):
        raise TypeError(f"expected a Tensor as the first operand, got {type(a).__name__}")
    a, b = promote(a, b)
    if b.__class__ is Tensor or isinstance(b, Tensor):
        if a._data.shape != b._data.shape:
            try:
                return dispatch2(op, a, b)
            except ValueError:
                raise _broadcast_error(a, b) from None
        return dispatch2(op, a, b)
    return dispatch1(op_scalar, a, b)


def reverse(op_scalar_r, a, b):
    """b (op) a where b is a number: a's dtype promoted against the number, then the reversed scalar op."""
    a, b = promote(a, b)
    if isinstance(b, Tensor):
        raise TypeError("reverse binary op expects a number")
    return dispatch1(op_scalar_r, a, b)


def define(name, fwd, bwd_a, bwd_b, save=SAVE_INPUTS, fwd_scalar=None, bwd_scalar=None, fwd_rscalar=None,
           bwd_rscalar=None, node_name=None):
    """Op records for a binary op: tensor-tensor, tensor-scalar and (optionally) scalar-tensor forms.

    bwd_a(ctx, g) / bwd_b(ctx, g): gradient for each operand; ctx.inputs are the saved operands. The scalar
    forms see the number as ctx.attrs[0].
    """
    def bwd(ctx, g):
        need = ctx.needs_input_grad
        return (bwd_a(ctx, g) if need[0] else None, bwd_b(ctx, g) if need[1] else None)
    op = Op(name, fwd, bwd if bwd_a is not None else None, save, node_name=node_name)
    ops = Op(name, fwd_scalar or fwd, bwd_scalar, save, node_name=node_name)
    opr = Op(name, fwd_rscalar or (lambda x, s: fwd(s, x)), bwd_rscalar, save, node_name=node_name) \
        if bwd_rscalar is not None or fwd_rscalar is not None else None
    return op, ops, opr


# ---------------- add / sub ----------------
def _add_fwd(a, b, alpha=1):
    return a + b if alpha == 1 else a + b * alpha


ADD, ADD_S, _ = define("add", np.add, lambda ctx, g: g, lambda ctx, g: g, save=SAVE_NONE,
                       bwd_scalar=lambda ctx, g: g)
ADD_ALPHA = Op("add", _add_fwd, lambda ctx, g: (g if ctx.needs_input_grad[0] else None,
                                                g * ctx.attrs[0] if ctx.needs_input_grad[1] else None))
SUB, SUB_S, RSUB_S = define("sub", np.subtract, lambda ctx, g: g, lambda ctx, g: -g, save=SAVE_NONE,
                            bwd_scalar=lambda ctx, g: g, bwd_rscalar=lambda ctx, g: -g,
                            fwd_rscalar=lambda x, s: s - x)


def _alpha_check(input, other, alpha):
    if alpha != 1 and isinstance(alpha, builtins.float) and input._data.dtype.kind in "biu" and (
            not isinstance(other, Tensor) or other._data.dtype.kind in "biu"):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def add(input, other, *, alpha=1, out=None):
    """Same as `torch.add`."""
    if alpha != 1:
        _alpha_check(input, other, alpha)
        if isinstance(other, Tensor):
            a, b = promote(input, other)
            try:
                r = dispatch2(ADD_ALPHA, a, b, alpha)
            except ValueError:
                raise _broadcast_error(a, b) from None
        else:
            r = binary(ADD, ADD_S, input, other * alpha)
    else:
        r = binary(ADD, ADD_S, input, other)
    return r if out is None else write_out(r, out, "add")


def sub(input, other, *, alpha=1, out=None):
    """Same as `torch.sub`."""
    if input._data.dtype.kind == "b" or (isinstance(other, Tensor) and other._data.dtype.kind == "b") or \
            isinstance(other, builtins.bool):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")
    if alpha != 1:
        return add(input, -other if not isinstance(other, Tensor) else other.neg(), alpha=alpha, out=out)
    r = binary(SUB, SUB_S, input, other)
    return r if out is None else write_out(r, out, "sub")


subtract = sub


def rsub(input, other, *, alpha=1):
    """Same as `torch.rsub`: other - alpha * input."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)
    if alpha != 1:
        input = mul(input, alpha)
    return reverse(RSUB_S, input, other)


# ---------------- mul / div ----------------
def _conj_if_complex(t):
    return t.conj() if t._data.dtype.kind == "c" else t


MUL, MUL_S, _ = define("mul", np.multiply,
                       lambda ctx, g: g * _conj_if_complex(ctx.inputs[1]),
                       lambda ctx, g: g * _conj_if_complex(ctx.inputs[0]),
                       bwd_scalar=lambda ctx, g: g * ctx.attrs[0], save=SAVE_INPUTS)
MUL_S.save = SAVE_NONE


def mul(input, other, *, out=None):
    """Same as `torch.mul`."""
    r = binary(MUL, MUL_S, input, other)
    return r if out is None else write_out(r, out, "mul")


multiply = mul


def _div_bwd_b(ctx, g):
    a, b = ctx.inputs
    return -g * a / (b * b)


DIV, DIV_S, RDIV_S = define("div", np.true_divide, lambda ctx, g: g / ctx.inputs[1], _div_bwd_b,
                            bwd_scalar=lambda ctx, g: g / ctx.attrs[0],
                            fwd_rscalar=lambda x, s: s / x,
                            bwd_rscalar=lambda ctx, g: -g * ctx.attrs[0] / (ctx.inputs[0] * ctx.inputs[0]))
DIV_S.save = SAVE_NONE


def _to_float(t):
    return t.to(_dtype.get_default_dtype()) if t._data.dtype.kind in "biu" else t


def div(input, other, *, rounding_mode=None, out=None):
    """Same as `torch.div`."""
    if rounding_mode is None:
        if input._data.dtype.kind in "biu" and (not isinstance(other, Tensor) or other._data.dtype.kind in "biu") \
                and not isinstance(other, (builtins.float, builtins.complex)):
            input = _to_float(input)
        r = binary(DIV, DIV_S, input, other)
    else:
        from . import binary_more
        r = binary_more.div_rounding(input, other, rounding_mode)
    return r if out is None else write_out(r, out, "div")


divide = true_divide = div


def result_type(tensor, other):
    """Same as `torch.result_type`."""
    def classes(x):
        if isinstance(x, Tensor):
            return ((x.dtype,), (), ()) if x._data.ndim else ((), (x.dtype,), ())
        return ((), (), (scalar_dtype(x),))
    ca, cb = classes(tensor), classes(other)
    return result_type_of(ca[0] + cb[0], ca[1] + cb[1], ca[2] + cb[2])


def can_cast(from_, to):
    """Same as `torch.can_cast`."""
    from ._inplace import can_cast as cc
    return cc(from_, to)


# ---------------- binding ----------------
def _rdiv(self, other):
    if self._data.dtype.kind in "biu" and not isinstance(other, (builtins.float, builtins.complex)):
        self = _to_float(self)
    return reverse(RDIV_S, self, other)


def _iop(fn, name):
    ip = make_inplace(fn, name)

    def method(self, other):
        return ip(self, other)
    return method


Tensor.add = add
Tensor.add_ = make_inplace(add, "add_")
Tensor.sub = sub
Tensor.sub_ = make_inplace(sub, "sub_")
Tensor.subtract = sub
Tensor.subtract_ = Tensor.sub_
Tensor.mul = mul
Tensor.mul_ = make_inplace(mul, "mul_")
Tensor.multiply = mul
Tensor.multiply_ = Tensor.mul_
Tensor.div = div
Tensor.div_ = make_inplace(div, "div_")
Tensor.divide = Tensor.true_divide = div
Tensor.divide_ = Tensor.true_divide_ = Tensor.div_
Tensor.rsub = rsub

Tensor.__add__ = lambda self, other: binary(ADD, ADD_S, self, other)
Tensor.__radd__ = lambda self, other: binary(ADD, ADD_S, self, other)
Tensor.__sub__ = lambda self, other: sub(self, other)
Tensor.__rsub__ = lambda self, other: rsub(self, other)
Tensor.__mul__ = lambda self, other: binary(MUL, MUL_S, self, other)
Tensor.__rmul__ = lambda self, other: binary(MUL, MUL_S, self, other)
Tensor.__truediv__ = lambda self, other: div(self, other)
Tensor.__rtruediv__ = _rdiv
Tensor.__iadd__ = _iop(add, "add_")
Tensor.__isub__ = _iop(sub, "sub_")
Tensor.__imul__ = _iop(mul, "mul_")
Tensor.__itruediv__ = _iop(div, "div_")
