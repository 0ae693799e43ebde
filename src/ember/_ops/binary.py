"""Elementwise binary ops: arithmetic, powers, min/max, bitwise; torch's type promotion and error messages."""
import builtins
import math

import ml_dtypes
import numpy as np

from .. import _dtype
from .._autocast import AUTOCAST, cast_args
from .._backend import XP, deferred, maybe_any
from .._backend import where as _where_values
from .._dtype import _PROMOTE, FROM_NP, result_type_of, scalar_dtype
from .._tensor import Tensor
from .._dtype import SCALAR_NAMES
from ..autograd.grad_mode import GRAD
from ..autograd.graph import FORWARD, bump_version, counter, version_error
from ._dispatch import SAVE_INPUTS, SAVE_NONE, SAVE_OUTPUT, Op, dispatch, dispatch1, dispatch2, wrap
from ._inplace import _UFUNC_INTO, make_inplace, view_needs_grad, write_out
from .unary import py_typename

__all__ = [
    "add",
    "addcdiv",
    "addcmul",
    "arctan2",
    "atan2",
    "bitwise_and",
    "bitwise_left_shift",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "can_cast",
    "copysign",
    "div",
    "divide",
    "float_power",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "gcd",
    "hypot",
    "lcm",
    "ldexp",
    "lerp",
    "logaddexp",
    "logaddexp2",
    "maximum",
    "minimum",
    "mul",
    "multiply",
    "nextafter",
    "pow",
    "remainder",
    "result_type",
    "rsub",
    "sub",
    "subtract",
    "true_divide",
    "xlogy",
]

# NumPy's floating-point warnings are off: NOTE [ Floating-point exceptions ] in ember/_backend/__init__.py.

_BF16 = ml_dtypes.bfloat16


# NOTE [ Binary op promotion ]
# NumPy's own promotion differs from torch's (int32 + 2.5 is float64 in NumPy, float32 in torch; no bfloat16 rules;
# zero-dim tensors). So operands are brought to torch's result dtype first and NumPy only ever computes on
# operands that already agree. The common cases (same-dtype tensors; a tensor and a Python number of the same or
# lower category) need no cast at all: NumPy 2 treats Python numbers as weak, as torch does. What NumPy does not
# do like torch is decided once per (array dtype, scalar type) in _SCALAR_RULES: None means "pass as is", else a
# rule(a, b) -> (a, b) that casts the tensor, wraps an out-of-range int (torch wraps int8 + 1000 like a C cast;
# NumPy raises) or gives a bfloat16 tensor a bfloat16 scalar (ml_dtypes does not treat Python floats as weak).

class _BadOperand(TypeError):
    """An operand that is neither a Tensor nor a number: operators answer NotImplemented; a function call sees
    the TypeError torch raises (named so in tracebacks)."""


_BadOperand.__name__ = _BadOperand.__qualname__ = "TypeError"
_BadOperand.__module__ = "builtins"


def _cast_default_float(a, b):
    return a.to(_dtype._default[0]), b


def _cast_default_complex(a, b):
    return a.to(_dtype.default_complex()), b


def _cast_complex(a, b):
    return a.to(FROM_NP[a._data.dtype].to_complex()), b


def _bf16_scalar(a, b):
    return a, _BF16(b)


def _check_int64(b):
    if not -(1 << 63) <= b < (1 << 64):
        raise OverflowError("int too big to convert")


def _int_rule(np_dtype):
    info = np.iinfo(np_dtype)
    lo, hi, span = builtins.int(info.min), builtins.int(info.max), 1 << info.bits

    def rule(a, b):
        if lo <= b <= hi:
            return a, b
        _check_int64(b)
        return a, (b - lo) % span + lo  # a C cast: wrap around
    return rule


def _bool_with_int(a, b):
    if b >= (1 << 63):  # torch reads such a number as uint64
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote Bool "
                           "and UInt64")
    return _INT64_RULE(a.to(_dtype.int64), b)


# ml_dtypes takes small Python ints as weak scalars, but not ones beyond a C long, nor any on NumPy 2.0
# (bfloat16 + 1 is float32 there)
_BF16_WEAK_INT = (np.zeros(1, _BF16) + 1).dtype == _BF16


def _bf16_int(a, b):
    return (a, b) if _BF16_WEAK_INT and -(1 << 62) < b < (1 << 62) else (a, _BF16(builtins.float(b)))


_INT64_RULE = _int_rule(np.int64)


def _build_scalar_rules():
    rules = {}
    py = (builtins.bool, builtins.int, builtins.float, builtins.complex)
    for d in _dtype.ALL:
        k = d.np
        if d._cat == _dtype._COMPLEX:
            r = (None, None, None, None)
        elif d is _dtype.bfloat16:
            r = (None, _bf16_int, _bf16_scalar, _cast_complex)
        elif d._cat == _dtype._FLOAT:
            r = (None, None, None, _cast_complex)
        elif d._cat == _dtype._INT:
            r = (None, _int_rule(k), _cast_default_float, _cast_default_complex)
        else:
            r = (None, _bool_with_int, _cast_default_float, _cast_default_complex)
        for t, rule in zip(py, r):
            rules[(k, t)] = rule
    return rules


_SCALAR_RULES = _build_scalar_rules()


# what a NumPy scalar (or a subclass of a Python number) stands for, checked in this order
_AS_PYTHON = ((builtins.bool, builtins.bool), (np.bool_, builtins.bool), (builtins.int, builtins.int),
              (np.integer, builtins.int), (builtins.float, builtins.float), (np.floating, builtins.float),
              (_BF16, builtins.float), (builtins.complex, builtins.complex), (np.complexfloating, builtins.complex))


def _other_scalar(a, b):
    """The rule for anything but an exact Python number: NumPy scalars and number subclasses act as the Python
    number they hold; arrays act as tensors."""
    if isinstance(b, np.ndarray):
        if b.dtype not in FROM_NP:
            raise _BadOperand(f"unsupported operand type: numpy array of dtype {b.dtype}")
        return a, Tensor._make(b)
    for kind, py in _AS_PYTHON:
        if isinstance(b, kind):
            return promote(a, py(b.item() if isinstance(b, np.generic) else b))
    raise _BadOperand(f"expected a Tensor or a number, got {py_typename(b)}")


def _broadcast_error(a, b):
    sa, sb = a._data.shape, b._data.shape
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + sa
    pb = (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                f"non-singleton dimension {i}")
    return None


def _device_error(a, b):
    da, db = a.device, b.device
    if da.type == "cpu":  # torch names the accelerator first
        da, db = db, da
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                        f"{da} and {db}!")


def _tensor_result_type(a, b):
    dta, dtb = FROM_NP[a._data.dtype], FROM_NP[b._data.dtype]
    if (a._data.ndim == 0) == (b._data.ndim == 0):
        return _PROMOTE[(dta, dtb)]
    if a._data.ndim == 0:
        return result_type_of((dtb,), (dta,), ())
    return result_type_of((dta,), (dtb,), ())


def promote(a, b):
    """(a, b) as operands of torch's common dtype; a is a Tensor, b a Tensor or a number (a number comes back as
    a number, possibly wrapped or converted, see NOTE [ Binary op promotion ])."""
    if b.__class__ is Tensor or isinstance(b, Tensor):
        da, db = a._data, b._data
        if da.__class__ is not db.__class__:
            a, b = _same_device(a, b)
            da, db = a._data, b._data
        if da.dtype is db.dtype or da.dtype == db.dtype:
            return a, b
        rt = _tensor_result_type(a, b)
        return (a if da.dtype == rt.np else a.to(rt)), (b if db.dtype == rt.np else b.to(rt))
    rule = _SCALAR_RULES.get((a._data.dtype, b.__class__), _other_scalar)
    if rule is None:
        return a, b
    return rule(a, b)


def _check_devices(a, b):
    # a zero-dim CPU tensor may take part in a GPU op, as a scalar does
    if a._data.ndim == 0 and a.device.type == "cpu" or b._data.ndim == 0 and b.device.type == "cpu":
        return
    if a.device != b.device:
        raise _device_error(a, b)


def _same_device(a, b):
    """(a, b) with a zero-dim CPU operand moved to the other's device (torch treats it as a scalar); raises
    torch's error for any other mix of devices."""
    _check_devices(a, b)
    if a._data.ndim == 0 and a.device.type == "cpu" and b.device.type != "cpu":
        return a.to(b.device), b
    if b._data.ndim == 0 and b.device.type == "cpu" and a.device.type != "cpu":
        return a, b.to(a.device)
    return a, b


def promote_many(*xs):
    """torch's result dtype of several operands (tensors and numbers)."""
    dims, zeros, scalars = [], [], []
    for x in xs:
        if isinstance(x, Tensor):
            (dims if x._data.ndim else zeros).append(FROM_NP[x._data.dtype])
        else:
            scalars.append(scalar_dtype(x))
    return result_type_of(dims, zeros, scalars)


def tt(op, a, b, *attrs):
    """dispatch2 with torch's broadcasting error."""
    try:
        return dispatch2(op, a, b, *attrs)
    except ValueError:
        err = _broadcast_error(a, b)
        if err is None:
            raise
        raise err from None


def binary(op, op_scalar, a, b):
    """Run a tensor-tensor op, or its tensor-scalar twin when b is a number, after torch's promotion."""
    if b.__class__ is Tensor:
        da, db = a._data, b._data
        if da.dtype is not db.dtype or da.__class__ is not db.__class__:
            a, b = promote(a, b)
    elif isinstance(b, Tensor):
        a, b = promote(a, b)
    else:
        rule = _SCALAR_RULES.get((a._data.dtype, b.__class__), _other_scalar)
        if rule is not None:
            try:
                a, b = rule(a, b)
            except _BadOperand:
                raise _BadOperand(f"{op.name}(): argument 'other' (position 2) must be Tensor, not "
                                  f"{py_typename(b)}") from None
            if isinstance(b, Tensor):
                return binary(op, op_scalar, a, b)
        return dispatch1(op_scalar, a, b)
    try:
        return dispatch2(op, a, b)
    except ValueError:
        err = _broadcast_error(a, b)
        if err is None:
            raise
        raise err from None


def reverse(op_scalar_r, a, b):
    """b (op) a where b is a number: a's dtype promoted against the number, then the reversed scalar op."""
    a, b = promote(a, b)
    if isinstance(b, Tensor):
        raise _BadOperand(f"expected a number, got {py_typename(b)}")
    return dispatch1(op_scalar_r, a, b)


def define(name, fwd, bwd_a, bwd_b, save=SAVE_INPUTS, fwd_scalar=None, bwd_scalar=None, fwd_rscalar=None,
           bwd_rscalar=None, node_name=None, node_scalar=None, node_rscalar=None, save_scalar=None):
    """Op records for a binary op: tensor-tensor, tensor-scalar and (optionally) scalar-tensor forms.

    bwd_a(ctx, g) / bwd_b(ctx, g): gradient for each operand; ctx.inputs are the saved operands. The scalar
    forms see the number as ctx.attrs[0].
    """
    def bwd(ctx, g):
        (fa, _), (fb, _) = ctx.next_functions  # an input needs a gradient where its edge leads somewhere
        return (bwd_a(ctx, g) if fa is not None else None, bwd_b(ctx, g) if fb is not None else None)
    op = Op(name, fwd, bwd if bwd_a is not None else None, save, node_name=node_name)
    ops = Op(name, fwd_scalar or fwd, bwd_scalar, save if save_scalar is None else save_scalar,
             node_name=node_scalar or node_name)
    opr = Op(name, fwd_rscalar or (lambda x, s: fwd(s, x)), bwd_rscalar, save, node_name=node_rscalar or node_name) \
        if bwd_rscalar is not None or fwd_rscalar is not None else None
    return op, ops, opr


# ---------------- shared checks ----------------
def _finish(r, out, name):
    return r if out is None else write_out(r, out, name)


def _type_name(t):
    return SCALAR_NAMES[FROM_NP[t._data.dtype].name]


def _not_implemented(kernel, t):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(t)}'")


def _need_tensor(name, x, position=2, arg="other"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not {py_typename(x)}")


def _need_tensor_input(name, x):
    _need_tensor(name, x, 1, "input")


# torch's overload lists, for the functions whose argument errors print them; "!" marks where torch reports
# the mismatch of each argument
_OVERLOADS = {
    "rsub": (" * (Tensor input, Tensor other, *, Number alpha = 1)", " * (Tensor input, Number other, Number alpha = 1)"),
    "remainder": (" * (Tensor input, Tensor other, *, Tensor out = None)", " * (Number self, Tensor other)!",
                  " * (Tensor input, Number other, *, Tensor out = None)"),
    "floor_divide": (" * (Tensor input, Tensor other, *, Tensor out = None)", " * (Tensor input, Number other)!"),
    "true_divide": (" * (Tensor input, Tensor other, *, Tensor out = None)", " * (Tensor input, Number other)!"),
}


def _invalid_combination(name, args):
    """torch's TypeError for arguments that match none of name's overloads."""
    got = ", ".join(py_typename(a) for a in args)
    marked = ", ".join(f"!{py_typename(a)}!" for a in args)
    lines = []
    for o in _OVERLOADS[name]:
        lines.append(o.rstrip("!"))
        if o.endswith("!"):
            lines.append(f"      didn't match because some of the arguments have invalid types: ({marked})")
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + "\n".join(lines) + "\n")


def _floating(a, b):
    """promote(a, b), then integer and bool operands computed in the default float dtype (torch's
    promote_integer_inputs_to_float)."""
    if not isinstance(b, Tensor) and a._data.dtype.kind in "biu" and not isinstance(b, builtins.complex):
        a = a.to(_dtype._default[0])  # before promotion, which would wrap an int scalar out of a's range
    a, b = promote(a, b)
    if a._data.dtype.kind in "biu":
        dt = _dtype._default[0]
        a = a.to(dt)
        if isinstance(b, Tensor):
            b = b.to(dt)
    return a, b


def _check_int_divisor(a, b):
    """Integer division by zero is an error in torch, as in Python."""
    if a._data.dtype.kind in "biu":
        if isinstance(b, Tensor) and b._data.__class__ is not np.ndarray:  # reported at the next synchronization
            deferred.fail_if_any(XP[b._data.__class__], b._data == 0, RuntimeError, "ZeroDivisionError")
            return
        zero = (b == 0) if not isinstance(b, Tensor) else bool((b._data == 0).any())
        if zero:
            raise RuntimeError("ZeroDivisionError")


def _zeros_like(t):
    from .creation import zeros_like
    return zeros_like(t)


def _conj(t):
    return t.conj() if t._data.dtype.kind == "c" else t


def _conj_scalar(s):
    return s.conjugate() if isinstance(s, builtins.complex) else s


def _not_implemented_bwd(name):
    def bwd(ctx, g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return bwd


_LOG = Op("log", np.log, lambda ctx, g: g / _conj(ctx.inputs[0]), SAVE_INPUTS)


def _log(t):
    return dispatch1(_LOG, t)


# ---------------- add / sub ----------------
def _add_alpha_fwd(a, b, alpha):
    return a + b * alpha


def _sub_alpha_fwd(a, b, alpha):
    return a - b * alpha


def _alpha_bwd(sign):
    def bwd(ctx, g):
        need = ctx.needs_input_grad
        return (g if need[0] else None, g * (sign * ctx.attrs[0]) if need[1] else None)
    return bwd


ADD, ADD_S, _ = define("add", np.add, lambda ctx, g: g, lambda ctx, g: g, save=SAVE_NONE,
                       bwd_scalar=lambda ctx, g: g)
ADD_ALPHA = Op("add", _add_alpha_fwd, _alpha_bwd(1), SAVE_NONE)


def _negated(g):
    """-g, on the array when no graph of the backward is recorded."""
    return -g if GRAD[0] or g._data.dtype == np.bool_ else wrap(np.negative(g._data))


SUB, SUB_S, RSUB_S = define("sub", np.subtract, lambda ctx, g: g, lambda ctx, g: _negated(g), save=SAVE_NONE,
                            bwd_scalar=lambda ctx, g: g, bwd_rscalar=lambda ctx, g: _negated(g),
                            fwd_rscalar=lambda x, s: s - x, node_rscalar="RsubBackward1")
SUB_ALPHA = Op("sub", _sub_alpha_fwd, _alpha_bwd(-1), SAVE_NONE)
RSUB = Op("rsub", lambda a, b, alpha: b - a * alpha,
          lambda ctx, g: (-g * ctx.attrs[0] if ctx.needs_input_grad[0] else None,
                          g if ctx.needs_input_grad[1] else None), SAVE_NONE)
RSUB_ALPHA_S = Op("rsub", lambda x, s, alpha: s - x * alpha, lambda ctx, g: -g * ctx.attrs[1], SAVE_NONE,
                  node_name="RsubBackward1")


def _alpha_check(input, other, alpha):
    kind = input._data.dtype.kind
    okind = other._data.dtype.kind if isinstance(other, Tensor) else \
        ("c" if isinstance(other, builtins.complex) else "f" if isinstance(other, builtins.float) else "i")
    if isinstance(alpha, (builtins.float, np.floating)) and kind in "biu" and okind in "biu":
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if isinstance(alpha, (builtins.complex, np.complexfloating)) and kind != "c" and okind != "c":
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


def _with_alpha(op, input, other, alpha):
    _alpha_check(input, other, alpha)
    if isinstance(other, Tensor):
        a, b = promote(input, other)
        if a._data.dtype.kind == "b":
            alpha = builtins.bool(alpha)  # keeps bool + bool * alpha a bool, as in torch
        return tt(op, a, b, alpha)
    other = other * alpha if other.__class__ is not builtins.bool else (other and builtins.bool(alpha))
    return binary(ADD if op is ADD_ALPHA else SUB, ADD_S if op is ADD_ALPHA else SUB_S, input, other)


_NUMBERS = (builtins.bool, builtins.int, builtins.float, builtins.complex, np.number, np.bool_)


def _reversed_scalar_first(fn, input, other, **kw):
    """fn(number, tensor) or fn(number, number): torch treats the first number as a wrapped scalar tensor."""
    if not isinstance(input, _NUMBERS):
        raise _BadOperand(f"{fn.__name__}(): argument 'input' (position 1) must be Tensor, not {py_typename(input)}")
    from .creation import tensor
    return fn(tensor(input, device=other.device if isinstance(other, Tensor) else None), other, **kw)


def add(input, other, *, alpha=1, out=None):
    """Same as `torch.add`."""
    if not isinstance(input, Tensor):
        return _reversed_scalar_first(add, input, other, alpha=alpha, out=out)
    if alpha != 1:
        r = _with_alpha(ADD_ALPHA, input, other, alpha)
    else:
        r = binary(ADD, ADD_S, input, other)
    return r if out is None else write_out(r, out, "add")


_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
             "mask, use the `~` or `logical_not()` operator instead.")


def _check_sub(input, other):
    ib = input._data.dtype.kind == "b"
    ob = other._data.dtype.kind == "b" if isinstance(other, Tensor) else isinstance(other, (builtins.bool, np.bool_))
    if ib and ob:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if ib or ob:
        raise RuntimeError(_BOOL_SUB)


def sub(input, other, *, alpha=1, out=None):
    """Same as `torch.sub`."""
    if not isinstance(input, Tensor):
        return _reversed_scalar_first(sub, input, other, alpha=alpha, out=out)
    if input._data.dtype.kind == "b" or other.__class__ is builtins.bool or \
            (isinstance(other, Tensor) and other._data.dtype.kind == "b"):
        _check_sub(input, other)
    if alpha != 1:
        r = _with_alpha(SUB_ALPHA, input, other, alpha)
    else:
        r = binary(SUB, SUB_S, input, other)
    return r if out is None else write_out(r, out, "sub")


subtract = sub


def rsub(input, other, *, alpha=1):
    """Same as `torch.rsub`: other - alpha * input."""
    if not isinstance(input, Tensor):
        raise _invalid_combination("rsub", (input, other))
    if isinstance(other, Tensor):
        _check_sub(other, input)
        _alpha_check(input, other, alpha)
        a, b = promote(input, other)
        return tt(RSUB, a, b, alpha)
    _check_sub(input, other)
    a, b = promote(input, other)
    if alpha != 1:
        _alpha_check(input, other, alpha)
        return dispatch1(RSUB_ALPHA_S, a, b, alpha)
    return dispatch1(RSUB_S, a, b)


# ---------------- mul / div ----------------
def _times(g, other):
    """g * conj(other), the gradient of a product; on arrays when no graph of the backward is recorded."""
    od = other._data
    if GRAD[0] or od.dtype.kind == "c" or od.__class__ is not g._data.__class__:
        return g * _conj(other)
    return wrap(g._data * od)


MUL, MUL_S, _ = define("mul", np.multiply,
                       lambda ctx, g: _times(g, ctx.inputs[1]),
                       lambda ctx, g: _times(g, ctx.inputs[0]),
                       bwd_scalar=lambda ctx, g: g * _conj_scalar(ctx.attrs[0]), save=SAVE_INPUTS,
                       save_scalar=SAVE_NONE)


def mul(input, other, *, out=None):
    """Same as `torch.mul`."""
    if not isinstance(input, Tensor):
        return _reversed_scalar_first(mul, input, other, out=out)
    r = binary(MUL, MUL_S, input, other)
    return r if out is None else write_out(r, out, "mul")


multiply = mul


def _div_bwd_b(ctx, g):
    a, b = ctx.inputs
    return -g * _conj(a / (b * b))


DIV, DIV_S, RDIV_S = define("div", np.true_divide, lambda ctx, g: g / _conj(ctx.inputs[1]), _div_bwd_b,
                            bwd_scalar=lambda ctx, g: g / _conj_scalar(ctx.attrs[0]), save_scalar=SAVE_NONE,
                            fwd_rscalar=lambda x, s: s / x,
                            bwd_rscalar=lambda ctx, g: -g * ctx.attrs[0] / _conj(ctx.inputs[0] * ctx.inputs[0]),
                            node_rscalar="MulBackward0")


def _trunc_div(a, b):
    if a.dtype.kind in "iu":
        q = np.floor_divide(a, b)
        # floor and trunc differ where the division is inexact and the signs differ
        fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        return (q + fix).astype(q.dtype, copy=False)
    return np.trunc(np.true_divide(a, b))


_ROUND_FWD = {"trunc": _trunc_div, "floor": np.floor_divide}
_ROUND_KERNEL = {"trunc": "div_trunc_cpu", "floor": "div_floor_cpu"}
DIV_MODE = Op("div", lambda a, b, mode: _ROUND_FWD[mode](a, b),
              lambda ctx, g: tuple(_zeros_like(g) if n else None for n in ctx.needs_input_grad), SAVE_NONE,
              node_name="DivBackward2")
DIV_MODE_S = Op("div", lambda a, s, mode: _ROUND_FWD[mode](a, s), lambda ctx, g: _zeros_like(g), SAVE_NONE,
                node_name="DivBackward2")


def _div_rounding(a, b, mode, op, op_s):
    """a / b rounded ('trunc' or 'floor') in the promoted dtype; integer division by zero raises."""
    a, b = promote(a, b)
    kind = a._data.dtype.kind
    if kind in "bc":
        raise _not_implemented(_ROUND_KERNEL[mode], a)
    if kind in "iu":
        _check_int_divisor(a, b)
    return tt(op, a, b, mode) if isinstance(b, Tensor) else dispatch1(op_s, a, b, mode)


def div(input, other, *, rounding_mode=None, out=None):
    """Same as `torch.div`."""
    if not isinstance(input, Tensor):
        return _reversed_scalar_first(div, input, other, rounding_mode=rounding_mode, out=out)
    if rounding_mode is None:
        if input._data.dtype.kind in "biu":
            input, other = _floating(input, other)
        r = binary(DIV, DIV_S, input, other)
    elif rounding_mode == "trunc" or rounding_mode == "floor":
        r = _div_rounding(input, other, rounding_mode, DIV_MODE, DIV_MODE_S)
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    return r if out is None else write_out(r, out, "div")


divide = div


def true_divide(dividend, divisor, *, out=None):
    """Same as `torch.true_divide`."""
    if not isinstance(dividend, (Tensor,) + _NUMBERS):
        raise _invalid_combination("true_divide", (dividend, divisor))
    return div(dividend, divisor, out=out)


def _rdiv(self, other):
    if self._data.dtype.kind in "biu" and not isinstance(other, (builtins.float, builtins.complex)):
        self = self.to(_dtype._default[0])
    return reverse(RDIV_S, self, other)


# ---------------- floor_divide / remainder / fmod ----------------
FLOORDIV = Op("floor_divide", lambda a, b, mode: np.floor_divide(a, b), _not_implemented_bwd("floor_divide"),
              SAVE_NONE, node_name="torch::autograd::NotImplemented")
RFLOORDIV_S = Op("floor_divide", lambda x, s: np.floor_divide(s, x), _not_implemented_bwd("floor_divide"),
                 SAVE_NONE, node_name="torch::autograd::NotImplemented")


def floor_divide(input, other, *, out=None):
    """Same as `torch.floor_divide`: rounds toward negative infinity."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            if isinstance(input, _NUMBERS):  # two numbers: torch wraps the first as a tensor
                return _reversed_scalar_first(floor_divide, input, other, out=out)
            raise _invalid_combination("floor_divide", (input, other))
        return _finish(_rfloordiv(other, input), out, "floor_divide")
    return _finish(_div_rounding(input, other, "floor", FLOORDIV, FLOORDIV), out, "floor_divide")


def _rfloordiv(self, other):
    a, b = promote(self, other)
    if a._data.dtype.kind in "bc":
        raise _not_implemented("div_floor_cpu", a)
    _check_int_divisor(a, a)
    return dispatch1(RFLOORDIV_S, a, b)


def _remainder_bwd_b(ctx, g):
    a, b = ctx.inputs
    return -g * div(a, b, rounding_mode="floor")


def _fmod_bwd_b(ctx, g):
    a, b = ctx.inputs
    return -g * div(a, b, rounding_mode="trunc")


REMAINDER, REMAINDER_S, RREMAINDER_S = define(
    "remainder", np.remainder, lambda ctx, g: g, _remainder_bwd_b, bwd_scalar=lambda ctx, g: g,
    save_scalar=SAVE_NONE, node_name="RemainderBackward1", node_scalar="RemainderBackward0",
    fwd_rscalar=lambda x, s: np.remainder(s, x), bwd_rscalar=_not_implemented_bwd("remainder"),
    node_rscalar="torch::autograd::NotImplemented")
FMOD, FMOD_S, _ = define("fmod", np.fmod, lambda ctx, g: g, _fmod_bwd_b, bwd_scalar=lambda ctx, g: g,
                         save_scalar=SAVE_NONE, node_name="FmodBackward1", node_scalar="FmodBackward0")


def _modulo(kernel, op, op_s, a, b):
    a, b = promote(a, b)
    kind = a._data.dtype.kind
    if kind in "bc":
        raise _not_implemented(kernel, a)
    if kind in "iu":
        _check_int_divisor(a, b)
    return tt(op, a, b) if isinstance(b, Tensor) else dispatch1(op_s, a, b)


def remainder(input, other, *, out=None):
    """Same as `torch.remainder`: Python's modulus (the result has the divisor's sign)."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise _invalid_combination("remainder", (input, other))
        return _finish(_rmod(other, input), out, "remainder")
    return _finish(_modulo("remainder_cpu", REMAINDER, REMAINDER_S, input, other), out, "remainder")


def _rmod(self, other):
    a, b = promote(self, other)
    if a._data.dtype.kind in "bc":
        raise _not_implemented("remainder_cpu", a)
    if a._data.dtype.kind in "iu":
        _check_int_divisor(a, a)
    return dispatch1(RREMAINDER_S, a, b)


def fmod(input, other, *, out=None):
    """Same as `torch.fmod`: C's fmod (the result has the dividend's sign)."""
    _need_tensor_input("fmod", input)
    return _finish(_modulo("fmod_cpu", FMOD, FMOD_S, input, other), out, "fmod")


# ---------------- pow ----------------
def _int_pow(x, e):
    """Integer powers with torch's rules for negative exponents: 1 ** -n = 1, (-1) ** -n = +-1, else 0."""
    neg = e < 0
    if not maybe_any(neg):
        return np.power(x, e)
    r = np.power(x, np.where(neg, e.dtype.type(0), e))
    one = r.dtype.type(1)
    return np.where(neg, np.where(x == 1, one, np.where(x == -1, np.where(e & 1, -one, one), 0 * one)), r)


def _pow_fwd(x, e):
    if x.dtype.kind in "iu":
        return _int_pow(x, e)
    r = np.power(x, e)
    if x.dtype.kind == "c":  # torch computes complex powers as exp(e * log(x)): 0 ** 0 is nan there
        r = np.where((x == 0) & (e == 0), r.dtype.type(complex(math.nan, math.nan)), r)
    return r


def _pow_scalar_fwd(x, e):
    if x.dtype.kind == "b":  # bool ** bool stays bool
        return np.power(x, e).astype(np.bool_)
    return np.power(x, e)


def _pow_bwd_base(ctx, g):
    x, e = ctx.inputs
    # d(x**e)/dx = e * x**(e-1), taken as 0 where e == 0 (so 0 ** 0 has gradient 0, not nan)
    return where(e == 0, 0.0, g * _conj(e * x.pow(e - 1)))


def _pow_bwd_exp(ctx, g):
    x, e = ctx.inputs
    # d(x**e)/de = x**e * log(x), taken as 0 where x == 0 and e >= 0
    return where((x == 0) & (e >= 0), 0.0, g * _conj(x.pow(e) * _log(x)))


def _pow_s_bwd(ctx, g):
    e = ctx.attrs[0]
    x = ctx.inputs[0]
    if e == 0:
        return _zeros_like(x)
    return g * _conj(x.pow(e - 1) * e)


def _scalar_log(s):
    if isinstance(s, (builtins.complex, np.complexfloating)):
        return builtins.complex(np.log(np.complex128(s)))
    return builtins.float(np.log(np.float64(s)))  # -inf for 0, nan for negative numbers


def _rpow_bwd(ctx, g):
    s = ctx.attrs[0]
    e = ctx.inputs[0]
    r = g * _conj(_rpow(e, s) * _scalar_log(s))
    # d(s**e)/de = s**e * log(s), taken as 0 for s == 0 where e >= 0
    return where(e >= 0, 0.0, r) if s == 0 else r


POW, POW_S, RPOW_S = define("pow", _pow_fwd, _pow_bwd_base, _pow_bwd_exp, node_name="PowBackward1",
                            fwd_scalar=_pow_scalar_fwd, bwd_scalar=_pow_s_bwd, node_scalar="PowBackward0",
                            fwd_rscalar=lambda x, s: _pow_fwd(x.dtype.type(s), x),
                            bwd_rscalar=_rpow_bwd, node_rscalar="PowBackward2")


def _pow_scalar_exp(input, exponent):
    if input._data.dtype.kind in "biu" and isinstance(exponent, builtins.int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    a, e = promote(input, exponent)
    return dispatch1(POW_S, a, e)


def pow(input, exponent, *, out=None):
    """Same as `torch.pow`."""
    if AUTOCAST[0]:
        input, exponent = cast_args("pow", (input, exponent))
    if not isinstance(input, Tensor):
        if not isinstance(exponent, Tensor):
            raise TypeError(f"pow(): argument 'exponent' must be Tensor, not {py_typename(exponent)}")
        return _finish(_rpow(exponent, input), out, "pow")
    if isinstance(exponent, Tensor):
        a, e = promote(input, exponent)
        if a._data.dtype.kind == "b":
            raise _not_implemented("pow", a)
        r = tt(POW, a, e)
    else:
        r = _pow_scalar_exp(input, exponent)
    return r if out is None else write_out(r, out, "pow")


def _rpow(self, base):
    """base ** self for a number base."""
    a, b = promote(self, base)
    if isinstance(b, Tensor):
        return pow(b, a)
    if a._data.dtype.kind == "b":
        raise _not_implemented("pow", a)
    return dispatch1(RPOW_S, a, b)


def _float_power_dtype(*xs):
    for x in xs:
        if (x._data.dtype.kind == "c") if isinstance(x, Tensor) else isinstance(x, builtins.complex):
            return _dtype.complex128
    return _dtype.float64


def float_power(input, exponent, *, out=None):
    """Same as `torch.float_power`: computed in float64 (complex128 for complex operands)."""
    dt = _float_power_dtype(input, exponent)
    if out is not None and out.dtype is not dt:
        raise RuntimeError(f"the output given to float_power has dtype {_type_name(out)} but the operation's "
                           f"result requires dtype {SCALAR_NAMES[dt.name]}")
    if isinstance(input, Tensor):
        input = input.to(dt)
    elif dt is _dtype.complex128:
        input = builtins.complex(input)
    else:
        input = builtins.float(input)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dt)
    elif dt is _dtype.complex128:
        exponent = builtins.complex(exponent)
    else:
        exponent = builtins.float(exponent)
    return pow(input, exponent, out=out)


def _float_power_(self, exponent):
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {_type_name(self)} but the operation's "
                           f"result requires dtype {SCALAR_NAMES[dt.name]}")
    return self.pow_(exponent)


# ---------------- float-valued binary functions ----------------
def _float_op(name, kernel, op, input, other, complex_ok=False, int_ok=True):
    """The common shape of atan2, hypot, logaddexp...: tensors only, promoted, integers in the default float."""
    _need_tensor_input(name, input)
    _need_tensor(name, other)
    if int_ok:
        a, b = _floating(input, other)
    else:
        a, b = promote(input, other)
        if a._data.dtype.kind in "biu":
            raise _not_implemented(kernel, a)
    if not complex_ok and a._data.dtype.kind == "c":
        raise _not_implemented(kernel, a)
    return tt(op, a, b)


def _atan2_bwd(ctx, g):
    a, b = ctx.inputs
    d = a * a + b * b
    need = ctx.needs_input_grad
    return (g * b / d if need[0] else None, g * -a / d if need[1] else None)


ATAN2 = Op("atan2", np.arctan2, _atan2_bwd, SAVE_INPUTS)


def atan2(input, other, *, out=None):
    """Same as `torch.atan2`."""
    return _finish(_float_op("atan2", "atan2_cpu", ATAN2, input, other), out, "atan2")


arctan2 = atan2


def _hypot_bwd(ctx, g):
    a, b = ctx.inputs
    r = ctx.output
    need = ctx.needs_input_grad
    return (g * a / r if need[0] else None, g * b / r if need[1] else None)


HYPOT = Op("hypot", np.hypot, _hypot_bwd, SAVE_INPUTS | SAVE_OUTPUT)


def hypot(input, other, *, out=None):
    """Same as `torch.hypot`."""
    return _finish(_float_op("hypot", "hypot_cpu", HYPOT, input, other, int_ok=False), out, "hypot")


def _logaddexp_fwd(a, b):
    if a.dtype.kind != "c":
        return np.logaddexp(a, b)
    hi = np.where(a.real >= b.real, a, b)
    lo = np.where(a.real >= b.real, b, a)
    return hi + np.log1p(np.exp(lo - hi))


def _logaddexp_bwd(ctx, g):
    a, b = ctx.inputs
    need = ctx.needs_input_grad
    return (g / (1 + (b - a).exp()) if need[0] else None, g / (1 + (a - b).exp()) if need[1] else None)


def _logaddexp2_bwd(ctx, g):
    a, b = ctx.inputs
    need = ctx.needs_input_grad
    return (g / (1 + 2.0 ** (b - a)) if need[0] else None, g / (1 + 2.0 ** (a - b)) if need[1] else None)


LOGADDEXP = Op("logaddexp", _logaddexp_fwd, _logaddexp_bwd, SAVE_INPUTS)
LOGADDEXP2 = Op("logaddexp2", np.logaddexp2, _logaddexp2_bwd, SAVE_INPUTS)


def logaddexp(input, other, *, out=None):
    """Same as `torch.logaddexp`."""
    r = _float_op("logaddexp", "logaddexp_cpu", LOGADDEXP, input, other, complex_ok=True, int_ok=False)
    return _finish(r, out, "logaddexp")


def logaddexp2(input, other, *, out=None):
    """Same as `torch.logaddexp2`."""
    return _finish(_float_op("logaddexp2", "logaddexp2_cpu", LOGADDEXP2, input, other, int_ok=False), out,
                   "logaddexp2")


def _copysign_bwd_a(ctx, g):
    a = ctx.inputs[0]
    return where(a == 0, 0.0, g * ctx.output / a)


COPYSIGN, COPYSIGN_S, _ = define("copysign", np.copysign, _copysign_bwd_a, lambda ctx, g: _zeros_like(ctx.inputs[1]),
                                 save=SAVE_INPUTS | SAVE_OUTPUT, bwd_scalar=_copysign_bwd_a,
                                 node_name="CopysignBackward0", node_scalar="CopysignBackward1")


def copysign(input, other, *, out=None):
    """Same as `torch.copysign`."""
    _need_tensor_input("copysign", input)
    a, b = _floating(input, other)
    if a._data.dtype.kind == "c":
        raise _not_implemented("copysign_cpu", a)
    r = tt(COPYSIGN, a, b) if isinstance(b, Tensor) else dispatch1(COPYSIGN_S, a, b)
    return _finish(r, out, "copysign")


NEXTAFTER = Op("nextafter", np.nextafter,
               lambda ctx, g: (g if ctx.needs_input_grad[0] else None,
                               _zeros_like(g) if ctx.needs_input_grad[1] else None), SAVE_NONE)


def nextafter(input, other, *, out=None):
    """Same as `torch.nextafter`."""
    return _finish(_float_op("nextafter", "nextafter_cpu", NEXTAFTER, input, other, int_ok=False), out,
                   "nextafter")


def _ldexp_fwd(a, e):
    return a * np.exp2(e)


def _ldexp_bwd(ctx, g):
    a, e = ctx.inputs
    need = ctx.needs_input_grad
    p = 2.0 ** e
    return (g * p if need[0] else None, g * a * p * math.log(2.0) if need[1] else None)


LDEXP = Op("ldexp", _ldexp_fwd, _ldexp_bwd, SAVE_INPUTS)


def ldexp(input, other, *, out=None):
    """Same as `torch.ldexp`: input * 2 ** other."""
    _need_tensor_input("ldexp", input)
    _need_tensor("ldexp", other)
    if other._data.dtype.kind == "b":
        raise _not_implemented("ldexp_cpu_exp", other)
    a, b = _floating(input, other)
    return _finish(tt(LDEXP, a, b), out, "ldexp")


# ---------------- xlogy ----------------
def _xlogy_fwd(x, y):
    r = x * np.log(y)
    # 0 * log(y) is 0 even for y == 0 or inf; a nan y stays nan
    return np.where((x == 0) & ~np.isnan(y), r.dtype.type(0), r)


def _xlogy_bwd_x(ctx, g):
    x, y = ctx.inputs
    return g * xlogy(x != 0, y)


def _xlogy_bwd_y(ctx, g):
    x, y = ctx.inputs
    return g * x / y


XLOGY, XLOGY_S, RXLOGY_S = define(
    "xlogy", _xlogy_fwd, _xlogy_bwd_x, _xlogy_bwd_y, node_name="XlogyBackward0",
    fwd_scalar=lambda x, s: _xlogy_fwd(x, x.dtype.type(s)),
    bwd_scalar=lambda ctx, g: g * xlogy(ctx.inputs[0] != 0, ctx.attrs[0]), node_scalar="XlogyBackward2",
    fwd_rscalar=lambda y, s: _xlogy_fwd(y.dtype.type(s), y),
    bwd_rscalar=lambda ctx, g: g * ctx.attrs[0] / ctx.inputs[0], node_rscalar="XlogyBackward1")


def xlogy(input, other, *, out=None):
    """Same as `torch.xlogy`: input * log(other), 0 where input == 0 (unless other is nan)."""
    if not isinstance(input, Tensor):
        _need_tensor("xlogy", other)
        b, a = _floating(other, input)
        if b._data.dtype.kind == "c":
            raise _not_implemented("xlogy_cpu", b)
        return _finish(dispatch1(RXLOGY_S, b, a), out, "xlogy")
    a, b = _floating(input, other)
    if a._data.dtype.kind == "c":
        raise _not_implemented("xlogy_cpu", a)
    r = tt(XLOGY, a, b) if isinstance(b, Tensor) else dispatch1(XLOGY_S, a, b)
    return _finish(r, out, "xlogy")


# ---------------- maximum / minimum / fmax / fmin ----------------
def _max_bwd(sign):
    def bwd(ctx, g):
        a, b = ctx.inputs
        need = ctx.needs_input_grad
        # ties split the gradient in half, as torch does
        shared = where(a == b, g / 2, g)
        a_wins = a > b if sign > 0 else a < b
        b_wins = a < b if sign > 0 else a > b
        return (where(b_wins, 0.0, shared) if need[0] else None, where(a_wins, 0.0, shared) if need[1] else None)
    return bwd


def _fmax_bwd(sign):
    def bwd(ctx, g):
        a, b = ctx.inputs
        need = ctx.needs_input_grad
        a_taken = ((a >= b) if sign > 0 else (a <= b)) | (b != b)  # noqa: PLR0124 (b != b: b is nan)
        return (where(a_taken, g, 0.0) if need[0] else None, where(a_taken, 0.0, g) if need[1] else None)
    return bwd


MAXIMUM = Op("maximum", np.maximum, _max_bwd(1), SAVE_INPUTS)
MINIMUM = Op("minimum", np.minimum, _max_bwd(-1), SAVE_INPUTS)
FMAX = Op("fmax", np.fmax, _fmax_bwd(1), SAVE_INPUTS)
FMIN = Op("fmin", np.fmin, _fmax_bwd(-1), SAVE_INPUTS)


def _extremum(name, op, input, other, out):
    _need_tensor_input(name, input)
    _need_tensor(name, other)
    a, b = promote(input, other)
    if a._data.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return _finish(tt(op, a, b), out, name)


def maximum(input, other, *, out=None):
    """Same as `torch.maximum`: nan propagates."""
    return _extremum("maximum", MAXIMUM, input, other, out)


def minimum(input, other, *, out=None):
    """Same as `torch.minimum`: nan propagates."""
    return _extremum("minimum", MINIMUM, input, other, out)


def fmax(input, other, *, out=None):
    """Same as `torch.fmax`: nan is ignored where the other value is a number."""
    return _extremum("fmax", FMAX, input, other, out)


def fmin(input, other, *, out=None):
    """Same as `torch.fmin`: nan is ignored where the other value is a number."""
    return _extremum("fmin", FMIN, input, other, out)


# ---------------- lerp / addcmul / addcdiv ----------------
def _lerp_fwd(a, b, w):
    # torch's formula: exact at both ends (weight 0 gives start, weight 1 gives end)
    d = b - a
    if w.__class__ in (builtins.float, builtins.int, builtins.complex, builtins.bool):
        r = a + w * d if abs(w) < 0.5 else b - d * (1 - w)
    else:
        r = np.where(np.abs(w) < 0.5, a + w * d, b - d * (1 - w))
    return r.astype(a.dtype, copy=False)


def _lerp_bwd(ctx, g):
    a, b, w = ctx.inputs
    need = ctx.needs_input_grad
    return (g * (1 - w) if need[0] else None, g * w if need[1] else None,
            g * (b - a) if need[2] else None)


def _lerp_s_bwd(ctx, g):
    w = ctx.attrs[0]
    need = ctx.needs_input_grad
    return (g * (1 - w) if need[0] else None, g * w if need[1] else None)


LERP = Op("lerp", _lerp_fwd, _lerp_bwd, SAVE_INPUTS, node_name="LerpBackward1")
LERP_S = Op("lerp", _lerp_fwd, _lerp_s_bwd, SAVE_NONE, node_name="LerpBackward0")


def _dtype_name(t):
    return FROM_NP[t._data.dtype].name.replace("float32", "float").replace("float64", "double")


def _same_dtype(input, x, what):
    if x._data.dtype != input._data.dtype:
        raise RuntimeError(f"expected dtype {_dtype_name(input)} for `{what}` but got dtype {_dtype_name(x)}")


def _ternary(op, xs, *attrs):
    """dispatch() of a three-operand op with torch's broadcasting error."""
    try:
        return dispatch(op, xs, *attrs)
    except ValueError:
        err = _broadcast3(xs)
        if err is None:
            raise
        raise err from None


def _broadcast3(ts):
    a = ts[0]
    for b in ts[1:]:
        err = _broadcast_error(a, b)
        if err is not None:
            return err
        a = Tensor._make(np.broadcast_to(np.empty((), np.int8), np.broadcast_shapes(a._data.shape, b._data.shape)))
    return None


def lerp(input, end, weight, *, out=None):
    """Same as `torch.lerp`."""
    _need_tensor("lerp", end, 2, "end")
    _same_dtype(input, end, "end")
    if input._data.dtype.kind not in "fcV":
        raise _not_implemented("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar", input)
    if isinstance(weight, Tensor):
        _same_dtype(input, weight, "weight")
        r = _ternary(LERP, (input, end, weight))
    else:
        r = _ternary(LERP_S, (input, end), weight)
    return _finish(r, out, "lerp")


def _addc_value(value, dt):
    if isinstance(value, (builtins.complex, np.complexfloating)) and dt._cat != _dtype._COMPLEX:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE.get(dt.name, dt.name)} without overflow")
    if dt._cat <= _dtype._INT and not isinstance(value, (builtins.bool, np.bool_)):
        return builtins.int(value)
    return value


_C_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
           "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def _addcmul_fwd(x, t1, t2, value):
    r = x + value * t1 * t2 if value != 1 else x + t1 * t2
    return r.astype(x.dtype, copy=False)  # bfloat16 arrays do not treat a Python float as weak


def _addcdiv_fwd(x, t1, t2, value):
    r = x + value * t1 / t2 if value != 1 else x + t1 / t2
    return r.astype(x.dtype, copy=False)


def _addcmul_bwd(ctx, g):
    _, t1, t2 = ctx.inputs
    v = ctx.attrs[0]
    need = ctx.needs_input_grad
    return (g if need[0] else None, g * _conj(t2 * v) if need[1] else None, g * _conj(t1 * v) if need[2] else None)


def _addcdiv_bwd(ctx, g):
    _, t1, t2 = ctx.inputs
    v = ctx.attrs[0]
    need = ctx.needs_input_grad
    return (g if need[0] else None, g * _conj(v / t2) if need[1] else None,
            -g * _conj(v * t1 / (t2 * t2)) if need[2] else None)


ADDCMUL = Op("addcmul", _addcmul_fwd, _addcmul_bwd, SAVE_INPUTS)
ADDCDIV = Op("addcdiv", _addcdiv_fwd, _addcdiv_bwd, SAVE_INPUTS)


def _addc(name, op, input, tensor1, tensor2, value):
    _need_tensor(name, tensor1, 2, "tensor1")
    _need_tensor(name, tensor2, 3, "tensor2")
    rt = promote_many(input, tensor1, tensor2)
    value = _addc_value(value, rt)
    xs = tuple(t if t._data.dtype == rt.np else t.to(rt) for t in (input, tensor1, tensor2))
    return _ternary(op, xs, value)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """Same as `torch.addcmul`: input + value * tensor1 * tensor2."""
    return _finish(_addc("addcmul", ADDCMUL, input, tensor1, tensor2, value), out, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """Same as `torch.addcdiv`: input + value * tensor1 / tensor2."""
    if isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor) and tensor1._data.dtype.kind in "biu" and \
            tensor2._data.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
            "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
            "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
            "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
            "(input + value * tensor1 / tensor2), for all dtypes.")
    return _finish(_addc("addcdiv", ADDCDIV, input, tensor1, tensor2, value), out, "addcdiv")


# ---------------- bitwise ----------------
def _bits(x):
    return 8 * x.dtype.itemsize


def _lshift_fwd(a, b):
    bad = (b < 0) | (b >= _bits(a)) if b.dtype.kind == "i" else (b >= _bits(a))
    return np.where(bad, a.dtype.type(0), np.left_shift(a, np.where(bad, 0, b).astype(b.dtype, copy=False)))


def _rshift_fwd(a, b):
    n = _bits(a)
    if b.dtype.kind == "u":  # out-of-range shifts of unsigned values give 0
        return np.where(b >= n, a.dtype.type(0), np.right_shift(a, np.where(b >= n, 0, b).astype(b.dtype)))
    # an out-of-range shift fills with the sign bit, as a shift by (bits - 1)
    return np.right_shift(a, np.where((b < 0) | (b >= n), n - 1, b).astype(b.dtype, copy=False))


def _shift_scalar(fwd):
    return lambda a, s: fwd(a, a.dtype.type(s))


def _shift_rscalar(fwd):
    return lambda b, s: fwd(b.dtype.type(s), b)


_BITWISE = {}


def _bitwise_ops(name, ufunc, kernel):
    op = Op(name, ufunc)
    ops = Op(name, ufunc)
    _BITWISE[name] = (op, ops, kernel)
    return op, ops


BITAND, BITAND_S = _bitwise_ops("bitwise_and", np.bitwise_and, "bitwise_and_cpu")
BITOR, BITOR_S = _bitwise_ops("bitwise_or", np.bitwise_or, "bitwise_or_cpu")
BITXOR, BITXOR_S = _bitwise_ops("bitwise_xor", np.bitwise_xor, "bitwise_xor_cpu")
LSHIFT = Op("bitwise_left_shift", _lshift_fwd)
LSHIFT_S = Op("bitwise_left_shift", _shift_scalar(_lshift_fwd))
RSHIFT = Op("bitwise_right_shift", _rshift_fwd)
RSHIFT_S = Op("bitwise_right_shift", _shift_scalar(_rshift_fwd))
_BITWISE["bitwise_left_shift"] = (LSHIFT, LSHIFT_S, "lshift_cpu")
_BITWISE["bitwise_right_shift"] = (RSHIFT, RSHIFT_S, "rshift_cpu")
_SHIFT_R = {"bitwise_left_shift": Op("bitwise_left_shift", _shift_rscalar(_lshift_fwd)),
            "bitwise_right_shift": Op("bitwise_right_shift", _shift_rscalar(_rshift_fwd))}


def _bitwise(name, input, other):
    op, ops, kernel = _BITWISE[name]
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' must be Tensor, not {py_typename(other)}")
        b, a = promote(other, input)
        if isinstance(a, Tensor):
            raise _BadOperand(f"expected a number, got {py_typename(input)}")
        _check_bitwise(b, kernel, name)
        return dispatch1(_SHIFT_R[name], b, a) if name in _SHIFT_R else dispatch1(ops, b, a)
    a, b = promote(input, other)
    _check_bitwise(a, kernel, name)
    return tt(op, a, b) if isinstance(b, Tensor) else dispatch1(ops, a, b)


def _check_bitwise(a, kernel, name):
    kind = a._data.dtype.kind
    if kind not in "biu" or (kind == "b" and name in _SHIFT_R):
        raise _not_implemented(kernel, a)


GCD = Op("gcd", np.gcd)
LCM = Op("lcm", np.lcm)


def _gcd_lcm(name, op, input, other):
    for i, t in enumerate((input, other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{('input', 'other')[i]}' (position {i + 1}) must be Tensor, not "
                            f"{py_typename(t)}")
    a, b = promote(input, other)
    if a._data.dtype.kind not in "iu":
        raise _not_implemented(f"{name}_cpu", a)
    return tt(op, a, b)


def gcd(input, other, *, out=None):
    """Same as `torch.gcd`."""
    return _finish(_gcd_lcm("gcd", GCD, input, other), out, "gcd")


def lcm(input, other, *, out=None):
    """Same as `torch.lcm`."""
    return _finish(_gcd_lcm("lcm", LCM, input, other), out, "lcm")


def bitwise_and(input, other, *, out=None):
    """Same as `torch.bitwise_and`."""
    return _finish(_bitwise("bitwise_and", input, other), out, "bitwise_and")


def bitwise_or(input, other, *, out=None):
    """Same as `torch.bitwise_or`."""
    return _finish(_bitwise("bitwise_or", input, other), out, "bitwise_or")


def bitwise_xor(input, other, *, out=None):
    """Same as `torch.bitwise_xor`."""
    return _finish(_bitwise("bitwise_xor", input, other), out, "bitwise_xor")


def bitwise_left_shift(input, other, *, out=None):
    """Same as `torch.bitwise_left_shift`: shifts by the width or more (or by a negative count) give 0."""
    return _finish(_bitwise("bitwise_left_shift", input, other), out, "bitwise_left_shift")


def bitwise_right_shift(input, other, *, out=None):
    """Same as `torch.bitwise_right_shift`: out-of-range shifts fill with the sign bit."""
    return _finish(_bitwise("bitwise_right_shift", input, other), out, "bitwise_right_shift")


# ---------------- where ----------------
def _where_bwd(ctx, g):
    c, version = ctx.attrs
    if version is not None and c._vc.v != version:  # None: recorded without a graph (forward-mode AD's route)
        raise version_error(c, version, ctx.name())
    need = ctx.needs_input_grad
    return (where(c, g, 0.0) if need[0] else None, where(c, 0.0, g) if need[1] else None)


# the condition travels as an attribute with its version (it needs no gradient; x and y are not saved)
WHERE = Op("where", lambda x, y, c, version: _where_values(c._data, x, y), _where_bwd, SAVE_NONE)


def _where_operand(x, rt, like):
    if isinstance(x, Tensor):
        return x if x._data.dtype == rt.np else x.to(rt)
    if rt._cat == _dtype._INT and not isinstance(x, (builtins.bool, np.bool_)):
        info = np.iinfo(rt.np)
        if not info.min <= x <= info.max:
            raise RuntimeError(f"value cannot be converted to type {_C_TYPE[rt.name]} without overflow")
    return Tensor._make(XP[like._data.__class__].asarray(x, dtype=rt.np))


def where(condition, input=None, other=None, *, out=None):
    """Same as `torch.where`; where(condition) is nonzero(condition, as_tuple=True)."""
    if input is None and other is None:
        return _nonzero_tuple(condition)
    if condition._data.dtype.kind != "b":
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_type_name(condition)}")
    rt = promote_many(input, other)
    x = _where_operand(input, rt, condition)
    y = _where_operand(other, rt, condition)
    version = None
    if GRAD[0] and (x._requires_grad or y._requires_grad):
        vc = counter(condition)
        vc.saved = True
        version = vc.v
    try:
        r = dispatch(WHERE, (x, y), condition, version)
    except ValueError:
        err = _broadcast3((condition, x, y))
        if err is None:
            raise
        raise err from None
    return _finish(r, out, "where")


def _nonzero_tuple(condition):
    from .sort import nonzero
    return nonzero(condition, as_tuple=True)


def _where_method(self, condition, y):
    return where(condition, self, y)


# ---------------- dtype queries ----------------
def result_type(tensor, other):
    """Same as `torch.result_type`."""
    return promote_many(tensor, other)


def can_cast(from_, to):
    """Same as `torch.can_cast`."""
    from ._inplace import can_cast as cc
    return cc(from_, to)


# ---------------- binding ----------------
def _operator(fn):
    """An operator method: unsupported operand types give NotImplemented, so Python raises its usual TypeError."""
    def method(self, other):
        try:
            return fn(self, other)
        except _BadOperand:
            return NotImplemented
    return method


def _reflected(fn):
    """other (op) self for a number other, through fn(other_tensor_or_number, self)."""
    def method(self, other):
        try:
            return fn(other, self)
        except _BadOperand:
            return NotImplemented
    return method


def _cast_precheck(self, other, floating):
    """torch checks that the result dtype can be written into self before it checks anything else."""
    if not isinstance(other, (Tensor, builtins.bool, builtins.int, builtins.float, builtins.complex, np.generic)):
        return
    rt = promote_many(self, other)
    if floating and rt._cat <= _dtype._INT:
        rt = _dtype._default[0]
    dt = FROM_NP[self._data.dtype]
    if rt is not dt and not can_cast(rt, dt):
        raise RuntimeError(f"result type {SCALAR_NAMES[rt.name]} can't be cast to the desired output type "
                           f"{SCALAR_NAMES[dt.name]}")


def _checked_inplace(fn, name, floating=False, precheck=None):
    """The in-place variant of fn, with torch's order of checks: op-specific ones, then the result cast."""
    ip = make_inplace(fn, name)

    def method(self, other, *args, **kwargs):
        if precheck is not None:
            precheck(self, other)
        _cast_precheck(self, other, floating and kwargs.get("rounding_mode") is None)
        return ip(self, other, *args, **kwargs)
    method.__name__ = name
    method.__qualname__ = "Tensor." + name
    method.__doc__ = f"Same as `torch.Tensor.{name}`."
    return method


def _sub_precheck(self, other):
    if self._data.dtype.kind == "b" or other.__class__ is builtins.bool or \
            (isinstance(other, Tensor) and other._data.dtype.kind == "b"):
        _check_sub(self, other)


def _fast_inplace(ufunc, fn, name, kinds, floating=False, precheck=None):
    """self (op)= other: a NumPy ufunc writing into self when no graph is needed and no cast is involved; the
    general in-place path otherwise. alpha= (add_, sub_) takes the fast path for float tensors."""
    slow = _checked_inplace(fn, name, floating, precheck)

    def method(self, other, **kwargs):
        if precheck is not None:
            precheck(self, other)
        d = self._data
        if self._base is not None and view_needs_grad(self) or FORWARD[0] is not None:  # a view of a base in the
            # graph: record the write; with forward AD open, the general path carries the tangent
            return slow(self, other, **kwargs)
        if other.__class__ is Tensor:
            if (GRAD[0] and (self._requires_grad or other._requires_grad)) or other._data.dtype != d.dtype:
                return slow(self, other, **kwargs)
            od = other._data
        else:
            if GRAD[0] and self._requires_grad:
                return slow(self, other, **kwargs)
            rule = _SCALAR_RULES.get((d.dtype, other.__class__), _other_scalar)
            od = other
            if rule is not None:
                a, od = rule(self, other)
                if a is not self or isinstance(od, Tensor):
                    return slow(self, other, **kwargs)
        if d.dtype.kind not in kinds:
            return slow(self, other, **kwargs)
        if kwargs:
            alpha = kwargs.get("alpha", 1)
            if len(kwargs) > 1 or "alpha" not in kwargs or d.dtype.kind not in "fV" or \
                    alpha.__class__ not in (builtins.float, builtins.int):
                return slow(self, other, **kwargs)
            od = od * alpha
        try:
            _UFUNC_INTO.fwd(d, od, ufunc)  # an op's forward: tracing sees the write (NOTE [ Tracing ops ])
        except (ValueError, TypeError):
            return slow(self, other, **kwargs)
        bump_version(self, name)
        return self
    method.__name__ = name
    method.__qualname__ = "Tensor." + name
    method.__doc__ = f"Same as `torch.Tensor.{name}`."
    return method


def _ioperator(method):
    def iop(self, other):
        try:
            return method(self, other)
        except _BadOperand:
            return NotImplemented
    return iop


def _bind(name, fn, inplace=True, aliases=(), floating=False):
    setattr(Tensor, name, fn)
    if inplace:
        setattr(Tensor, name + "_", _checked_inplace(fn, name + "_", floating))
    for alias in aliases:
        setattr(Tensor, alias, fn)
        if inplace:
            setattr(Tensor, alias + "_", getattr(Tensor, name + "_"))


_bind("sub", sub, inplace=False, aliases=("subtract",))
_bind("mul", mul, inplace=False, aliases=("multiply",))
_bind("div", div, inplace=False, aliases=("divide",))
Tensor.add = add
Tensor.add_ = _fast_inplace(np.add, add, "add_", "biufcV")
Tensor.sub_ = Tensor.subtract_ = _fast_inplace(np.subtract, sub, "sub_", "iufcV", precheck=_sub_precheck)
Tensor.mul_ = Tensor.multiply_ = _fast_inplace(np.multiply, mul, "mul_", "biufcV")
Tensor.div_ = Tensor.divide_ = _fast_inplace(np.true_divide, div, "div_", "fcV", floating=True)
Tensor.where = _where_method
_bind("true_divide", true_divide, floating=True)
_bind("floor_divide", floor_divide)
_bind("remainder", remainder)
_bind("fmod", fmod)
_bind("pow", pow)
Tensor.float_power = float_power
Tensor.float_power_ = _float_power_
_bind("atan2", atan2, aliases=("arctan2",), floating=True)
for _name, _fn in (("maximum", maximum), ("minimum", minimum), ("fmax", fmax), ("fmin", fmin),
                   ("logaddexp", logaddexp), ("logaddexp2", logaddexp2)):
    _bind(_name, _fn, inplace=False)
for _name, _fn in (("copysign", copysign), ("ldexp", ldexp), ("xlogy", xlogy)):
    _bind(_name, _fn, floating=True)
for _name, _fn in (("hypot", hypot), ("nextafter", nextafter), ("lerp", lerp), ("addcmul", addcmul),
                   ("addcdiv", addcdiv), ("bitwise_and", bitwise_and), ("bitwise_or", bitwise_or),
                   ("bitwise_xor", bitwise_xor), ("bitwise_left_shift", bitwise_left_shift),
                   ("bitwise_right_shift", bitwise_right_shift), ("gcd", gcd), ("lcm", lcm)):
    _bind(_name, _fn)


# the hottest operators are written out: one call less than _operator(fn)
def _add_op(self, other):
    try:
        return binary(ADD, ADD_S, self, other)
    except _BadOperand:
        return NotImplemented


def _mul_op(self, other):
    try:
        return binary(MUL, MUL_S, self, other)
    except _BadOperand:
        return NotImplemented


def _sub_op(self, other):
    if self._data.dtype.kind == "b" or other.__class__ is builtins.bool or \
            (isinstance(other, Tensor) and other._data.dtype.kind == "b"):
        _check_sub(self, other)
    try:
        return binary(SUB, SUB_S, self, other)
    except _BadOperand:
        return NotImplemented


def _rsub_op(self, other):
    if self._data.dtype.kind == "b" or other.__class__ is builtins.bool:
        _check_sub(self, other)
    try:
        return reverse(RSUB_S, self, other)
    except _BadOperand:
        return NotImplemented


def _truediv_op(self, other):
    try:
        if self._data.dtype.kind in "biu":
            self, other = _floating(self, other)
        return binary(DIV, DIV_S, self, other)
    except _BadOperand:
        return NotImplemented


def _reflected_or_forward(reflected, forward):
    """A reflected operator method that also takes a Tensor on the other side, as the forward operation other OP
    self (Python never calls it so, but torch's x.__rsub__(y) works for a tensor y)."""
    def method(self, other):
        if isinstance(other, Tensor):
            return forward(other, self)
        return reflected(self, other)
    return method


Tensor.__add__ = Tensor.__radd__ = _add_op
Tensor.__sub__ = _sub_op
Tensor.__rsub__ = _reflected_or_forward(_rsub_op, _sub_op)
Tensor.__mul__ = Tensor.__rmul__ = _mul_op
Tensor.__truediv__ = _truediv_op
Tensor.__rtruediv__ = Tensor.__rdiv__ = _reflected_or_forward(_operator(_rdiv), _truediv_op)
Tensor.__div__ = _truediv_op  # torch keeps Python 2's names of the division operators too
Tensor.__floordiv__ = _operator(floor_divide)
Tensor.__rfloordiv__ = _reflected_or_forward(_operator(_rfloordiv), _operator(floor_divide))
Tensor.__mod__ = _operator(remainder)
Tensor.__rmod__ = _reflected_or_forward(_operator(_rmod), _operator(remainder))
Tensor.__pow__ = _operator(pow)
Tensor.__rpow__ = _reflected_or_forward(_operator(_rpow), _operator(pow))
Tensor.__and__ = Tensor.__rand__ = _operator(bitwise_and)
Tensor.__or__ = Tensor.__ror__ = _operator(bitwise_or)
Tensor.__xor__ = Tensor.__rxor__ = _operator(bitwise_xor)
Tensor.__lshift__ = _operator(bitwise_left_shift)
Tensor.__rshift__ = _operator(bitwise_right_shift)
Tensor.__rlshift__ = _reflected(bitwise_left_shift)
Tensor.__rrshift__ = _reflected(bitwise_right_shift)
Tensor.__iadd__ = _ioperator(Tensor.add_)
Tensor.__isub__ = _ioperator(Tensor.sub_)
Tensor.__imul__ = _ioperator(Tensor.mul_)
Tensor.__itruediv__ = Tensor.__idiv__ = _ioperator(Tensor.div_)
Tensor.__ifloordiv__ = _ioperator(Tensor.floor_divide_)
Tensor.__imod__ = _ioperator(Tensor.remainder_)
Tensor.__ipow__ = _ioperator(Tensor.pow_)
Tensor.__iand__ = _ioperator(Tensor.bitwise_and_)
Tensor.__ior__ = _ioperator(Tensor.bitwise_or_)
Tensor.__ixor__ = _ioperator(Tensor.bitwise_xor_)
Tensor.__ilshift__ = _ioperator(Tensor.bitwise_left_shift_)
Tensor.__irshift__ = _ioperator(Tensor.bitwise_right_shift_)
