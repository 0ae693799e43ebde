"""Elementwise unary math: one definition per op gives ember.fn, Tensor.fn, Tensor.fn_ and out=.

# NOTE [ Quiet floating point ]
torch never warns about overflow, division by zero or invalid values (log(-1) is simply nan); NumPy's error state
is set to "ignore" once, where the array layer is set up (ember/_backend/__init__.py).

# NOTE [ bfloat16 kernels ]
ml_dtypes gives bfloat16 NumPy ufunc loops (exp, log, ...), so single-ufunc kernels run on it directly. But
bfloat16 does not take Python scalars weakly (bf16 * 2.0 is float32) and its comparisons warn on NaN, so composite
kernels compute bfloat16 in float32 and round the result back, as torch's CPU kernels do. scipy.special has no
half-precision loops: float16 and bfloat16 go through float32 there too.
"""
import builtins
import math

import numpy as np

from .. import _dtype
from .._autocast import AUTOCAST, LISTED, cast_one
from .._backend import maybe_any, scipy_module, xp_of
from .._dtype import FROM_NP, result_type_of
from .._tensor import Tensor
from .._dtype import SCALAR_NAMES
from ..autograd.grad_mode import GRAD
from ..autograd.graph import FORWARD, bump_version, carries_tangent
from ._dispatch import SAVE_INPUTS, SAVE_NONE, SAVE_OUTPUT, Op, dispatch, dispatch1, wrap
from ._inplace import make_inplace, view_needs_grad, write_out

__all__ = [
    "abs", "absolute", "neg", "negative", "positive", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
    "sqrt", "rsqrt", "square", "sin", "cos", "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh",
    "cosh", "tanh", "asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "sigmoid", "logit", "erf", "erfc",
    "erfinv", "sign", "sgn", "signbit", "floor", "ceil", "round", "trunc", "fix", "frac", "reciprocal", "nan_to_num",
    "clamp", "clip", "clamp_min", "clamp_max", "lgamma", "digamma", "polygamma", "mvlgamma", "deg2rad", "rad2deg",
    "sinc", "relu", "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "angle", "isnan",
    "isinf", "isfinite", "isposinf", "isneginf", "isreal", "logical_not", "bitwise_not", "i0",
]

_PI = math.pi
# NumPy's clip ufunc (np.clip is a slower Python wrapper; max/min chains are not vectorized for floats)
_UCLIP = getattr(getattr(np, "_core", None) and np._core.umath, "clip", None)

# ---------------- kernels: bfloat16 through float32 ----------------
def _kernel(f, composite=False):
    """f(x, *attrs) as an op forward; composite kernels compute bfloat16 in float32."""
    if not composite:
        return f

    def k(x, *a):
        if x.dtype.kind == "V":
            return f(x.astype(np.float32), *a).astype(x.dtype)
        return f(x, *a)
    return k


def _run_inplace(uf):
    """uf(d, out=d): the no-grad in-place fast path."""
    return _kernel(lambda d: uf(d, out=d))


def _special(x):
    """scipy.special (cupyx.scipy.special for GPU arrays), imported on first use."""
    return scipy_module(x, "special")


def _scipy(name):
    """A scipy.special function as a kernel; half precisions compute in float32 (NOTE [ bfloat16 kernels ])."""
    def f(x, *a):
        fn = getattr(_special(x), name)
        if a and x.__class__ is not np.ndarray:  # cupyx's Python-level functions (polygamma) take arrays only
            a = tuple(xp_of(x).asarray(v) for v in a)
        if x.dtype.char in "fd":
            return fn(*a, x).astype(x.dtype, copy=False)
        return fn(*a, x.astype(np.float32)).astype(x.dtype)
    return _kernel(f)


# ---------------- dtype checks, in torch's words ----------------
def _tname(x):
    return SCALAR_NAMES[FROM_NP[x._data.dtype].name]


def _float_input(x):
    """Integer and bool inputs of float-valued functions compute in the default float dtype, as torch does."""
    return x.to(_dtype.get_default_dtype()) if x._data.dtype.kind in "biu" else x


def _same(x):
    return x


class _Runtime(str):
    """An error message torch raises as RuntimeError (plain messages raise NotImplementedError)."""


def _prep(floating=False, bool_msg=None, int_msg=None, complex_msg=None, float_msg=None, bool_to=None):
    """An input check for the dtype kinds off an op's fast path: raise torch's error (a message with {} for the
    dtype name) or convert (integers to the default float when floating, bool to bool_to)."""
    msgs = {"b": bool_msg or int_msg, "i": int_msg, "u": int_msg, "c": complex_msg, "f": float_msg, "V": float_msg}

    def prep(x):
        k = x._data.dtype.kind
        msg = msgs[k]
        if msg is not None:
            raise (RuntimeError if isinstance(msg, _Runtime) else NotImplementedError)(msg.format(_tname(x)))
        if k == "b" and bool_to is not None:
            return x.to(bool_to)
        if floating and k in "biu":
            return x.to(_dtype.get_default_dtype())
        return x
    return prep


def _not_impl(kernel):
    return f"\"{kernel}\" not implemented for '{{}}'"


def py_typename(x):
    """The type name torch's argument errors print (CPython's tp_name): "list", "numpy.ndarray", "torch.Size"."""
    t = type(x)
    if t.__module__ == "builtins" or t.__flags__ & 512:  # Py_TPFLAGS_HEAPTYPE: a class written in Python
        if t.__module__.startswith("ember.") and t.__name__ in _C_TYPES:
            return "ember." + t.__name__  # classes torch writes in C, whose tp_name carries the module
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


_C_TYPES = frozenset(("dtype", "device", "Size", "Generator", "finfo", "iinfo", "memory_format", "layout"))


def _not_tensor(name, x, pos="input"):
    return TypeError(f"{name}(): argument '{pos}' (position 1) must be Tensor, not {py_typename(x)}")


def _out(r, out, name, strict=False):
    """out=: strict ops (those that keep the input dtype) need out's dtype to be the result's, as in torch."""
    if r._requires_grad:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           f"but one of the arguments requires grad.")
    if strict and out._data.dtype != r._data.dtype:
        raise RuntimeError(f"Found dtype {_tname(out)} but expected {_tname(r)}")
    return write_out(r, out, name)


def _check_strict_out(input, out, real=False):
    """torch checks out's dtype against the result's (the input's, or its real type) before anything else."""
    dt = FROM_NP[input._data.dtype]
    if real:
        dt = dt.to_real()
    if out._data.dtype != dt.np:
        raise RuntimeError(f"Found dtype {_tname(out)} but expected {SCALAR_NAMES[dt.name]}")


def _cj(t):
    """conj for the complex gradient convention (grad = g * conj(f'(z))); identity on real tensors."""
    return t.conj() if t._data.dtype.kind == "c" else t


def _zeros(g):
    """The gradient of a piecewise-constant op (sign, floor, round...): zeros, as torch gives."""
    return Tensor._make(np.zeros_like(g._data))


_INT_OF_SIZE = {2: np.int16, 4: np.int32, 8: np.int64}


def _keep_fwd(t, mask):
    it = _INT_OF_SIZE.get(t.itemsize)
    if it is None or t.__class__ is not np.ndarray or t.dtype.kind not in "fV":
        return np.where(mask, t, t.dtype.type(0))
    # t's bits AND all-ones/all-zeros: exactly where(mask, t, 0) (NaN and inf included), 9x faster than np.where,
    # whose data-dependent branches mispredict on a random mask (a ReLU's backward)
    ones = np.negative(mask.view(np.int8))
    out = np.empty(np.broadcast_shapes(t.shape, mask.shape), t.dtype)
    np.bitwise_and(t.view(it), ones, out=out.view(it))
    return out


# where(mask, t, 0) for a constant mask: differentiable in t, so double backward works through it
_KEEP = Op("where", _keep_fwd, lambda ctx, g: _keep(g, ctx.attrs[0]), SAVE_NONE, node_name="WhereBackward0")


def _keep(t, mask):
    """t where the backend bool array mask holds, else 0 (no NaN from inf * 0, unlike t * mask)."""
    return dispatch1(_KEEP, t, mask)


def _mask_fwd(*args):
    *arrays, f = args
    return f(*arrays)


_MASK_OF = Op("backward_mask", _mask_fwd)


def _mask_of(f, *tensors):
    """The array f(*arrays of tensors), computed by an op: a backward's mask that ember.compile's capture sees being
    computed from the tensors (not a constant of the program)."""
    return dispatch(_MASK_OF, tensors, f)._data


# ---------------- the factory ----------------
def define(name, fwd, bwd, save=SAVE_INPUTS, floating=True, method=True, inplace=True, aliases=(), node_name=None,
           prep=None, fast=None, ufunc=None, strict_out=False, inplace_kinds=None, has_out=True):
    """Bind an elementwise unary op as ember.<name>, Tensor.<name> and Tensor.<name>_ (also under aliases).

    floating=True: integer inputs are computed in the default float dtype (exp, sin, ...).
    fast: the dtype kinds that go straight to the kernel (default: floats and complex, or all kinds when not
    floating); inputs of other kinds pass through prep, which converts them or raises torch's error.
    ufunc: a NumPy ufunc for the no-grad in-place fast path: ufunc(x, out=x) for inputs of inplace_kinds (default:
    the fast kinds that keep their dtype).
    strict_out: out= must have the result's dtype (ops that keep the input dtype: abs, floor...).
    has_out=False: no out= argument (relu).
    """
    op = Op(name, fwd, bwd, save, node_name=node_name)
    if prep is None:
        prep = _float_input if floating else _same
    if fast is None:
        fast = "fVc" if floating else "biufVc"

    fn = _entry(name, op, prep, fast, strict_out, has_out, False)
    # ops on an autocast list cast their input first (NOTE [ Autocast ]); in-place forms keep their dtype, as torch
    public = _entry(name, op, prep, fast, strict_out, has_out, True) if name in LISTED else fn
    if method:
        setattr(Tensor, name, public)
    if inplace:
        ip = make_inplace(fn, name + "_")
        if ufunc is not None:
            kinds = inplace_kinds or ("fV" if floating else fast.replace("b", ""))
            ip = _fast_inplace(ip, ufunc, name + "_", kinds)
        setattr(Tensor, name + "_", ip)
    for alias in aliases:
        if method:
            setattr(Tensor, alias, public)
        if inplace:
            setattr(Tensor, alias + "_", getattr(Tensor, name + "_"))
    return op, public


def _entry(name, op, prep, fast, strict_out, has_out, autocast):
    """ember.<name> (and the method): the input's dtype checked, the op dispatched."""
    def fn(input, *, out=None):
        if autocast and AUTOCAST[0]:
            input = cast_one(name, input)
        try:
            k = input._data.dtype.kind
        except AttributeError:
            raise _not_tensor(name, input) from None
        if out is not None and strict_out:
            _check_strict_out(input, out, strict_out == "real")
        r = dispatch1(op, input if k in fast else prep(input))
        return r if out is None else _out(r, out, name)

    def fn_noout(input):
        if autocast and AUTOCAST[0]:
            input = cast_one(name, input)
        try:
            k = input._data.dtype.kind
        except AttributeError:
            raise _not_tensor(name, input) from None
        return dispatch1(op, input if k in fast else prep(input))
    f = fn if has_out else fn_noout
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Same as `torch.{name}`."
    return f


def _fast_inplace(slow, uf, name, kinds):
    """In-place method: ufunc(out=) straight into the tensor's memory when no graph is needed."""
    run = _run_inplace(uf)

    def method(self):
        d = self._data
        if d.dtype.kind in kinds and not (GRAD[0] and self._requires_grad) and FORWARD[0] is None and \
                (self._base is None or not view_needs_grad(self)):
            try:
                run(d)
            except ValueError:  # read-only memory (an expanded tensor): the general path raises torch's error
                return slow(self)
            bump_version(self, name)
            return self
        return slow(self)
    method.__name__ = name
    method.__qualname__ = "Tensor." + name
    method.__doc__ = f"Same as `torch.Tensor.{name}`."
    return method


def _ufunc_op(name, uf, bwd, save=SAVE_INPUTS, **kw):
    return define(name, _kernel(uf), bwd, save, ufunc=uf, **kw)


# ---------------- abs, neg, positive, square, reciprocal ----------------
def _abs_bwd(ctx, g):
    x = ctx.inputs[0]
    return g * (x.sgn() if x._data.dtype.kind == "c" else x.sign())


ABS, abs = define("abs", np.abs, _abs_bwd, floating=False, inplace=False, prep=_prep(bool_msg=_not_impl("abs_cpu")),
                  fast="iufVc", aliases=("absolute",), strict_out="real")
absolute = abs
NEG, neg = define("neg", np.negative, lambda ctx, g: -g, SAVE_NONE, floating=False, ufunc=np.negative,
                  prep=_prep(bool_msg=_Runtime("Negation, the `-` operator, on a bool tensor is not supported. If "
                                               "you are trying to invert a mask, use the `~` or `logical_not()` "
                                               "operator instead.")),
                  fast="iufVc", aliases=("negative",), strict_out=True)
negative = neg
SQUARE, square = define("square", _kernel(np.square), lambda ctx, g: g * 2 * _cj(ctx.inputs[0]), floating=False,
                        ufunc=np.square, prep=_prep(bool_to=_dtype.int64), fast="iufVc", node_name="PowBackward0")
RECIPROCAL, reciprocal = _ufunc_op("reciprocal", np.reciprocal, lambda ctx, g: -g * _cj(ctx.output * ctx.output),
                                   SAVE_OUTPUT)


def _abs_inplace(self):
    if self._data.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return _abs_fast(self)


_abs_fast = _fast_inplace(make_inplace(abs, "abs_"), np.abs, "abs_", "iufV")
_POS_PREP = _prep(bool_msg=_Runtime("The `+` operator, on a bool tensor is not supported."))


def positive(input):
    """Same as `torch.positive`: the input itself."""
    if input._data.dtype.kind == "b":
        _POS_PREP(input)
    return input


# ---------------- exponentials and logarithms ----------------
_LN2, _LN10 = math.log(2.0), math.log(10.0)

EXP, exp = _ufunc_op("exp", np.exp, lambda ctx, g: g * _cj(ctx.output), SAVE_OUTPUT)
EXP2, exp2 = _ufunc_op("exp2", np.exp2, lambda ctx, g: g * _cj(ctx.output * _LN2), SAVE_OUTPUT)
EXPM1, expm1 = _ufunc_op("expm1", np.expm1, lambda ctx, g: g * _cj(ctx.output + 1), SAVE_OUTPUT)
LOG, log = _ufunc_op("log", np.log, lambda ctx, g: g / _cj(ctx.inputs[0]))
LOG2, log2 = _ufunc_op("log2", np.log2, lambda ctx, g: g / _cj(ctx.inputs[0] * _LN2))
LOG10, log10 = _ufunc_op("log10", np.log10, lambda ctx, g: g / _cj(ctx.inputs[0] * _LN10))
LOG1P, log1p = _ufunc_op("log1p", np.log1p, lambda ctx, g: g / _cj(ctx.inputs[0] + 1), node_name="Log1PBackward0")
SQRT, sqrt = _ufunc_op("sqrt", np.sqrt, lambda ctx, g: g / _cj(ctx.output * 2), SAVE_OUTPUT)


def _rsqrt(x):
    t = np.sqrt(x)
    return np.reciprocal(t, out=t)


def _rsqrt_bwd(ctx, g):
    y = ctx.output
    return g * _cj(y * y * y) * -0.5  # d x^(-1/2) = -1/2 x^(-3/2)


RSQRT, rsqrt = define("rsqrt", _kernel(_rsqrt), _rsqrt_bwd, SAVE_OUTPUT)


# ---------------- trigonometric and hyperbolic ----------------
def _asin_bwd(ctx, g):
    x = ctx.inputs[0]
    return g * _cj((1 - x * x).rsqrt())


def _acosh_bwd(ctx, g):
    x = ctx.inputs[0]
    if x._data.dtype.kind == "c":  # the principal branch: 1 / (sqrt(z - 1) sqrt(z + 1))
        return g * ((x + 1).rsqrt() * (x - 1).rsqrt()).conj()
    return g * (x * x - 1).rsqrt()


SIN, sin = _ufunc_op("sin", np.sin, lambda ctx, g: g * _cj(ctx.inputs[0].cos()))
COS, cos = _ufunc_op("cos", np.cos, lambda ctx, g: -g * _cj(ctx.inputs[0].sin()))
TAN, tan = _ufunc_op("tan", np.tan, lambda ctx, g: g * _cj(ctx.output * ctx.output + 1), SAVE_OUTPUT)
ASIN, asin = _ufunc_op("asin", np.arcsin, _asin_bwd, aliases=("arcsin",))
ACOS, acos = _ufunc_op("acos", np.arccos, lambda ctx, g: -_asin_bwd(ctx, g), aliases=("arccos",))
ATAN, atan = _ufunc_op("atan", np.arctan, lambda ctx, g: g / _cj(ctx.inputs[0] * ctx.inputs[0] + 1),
                       aliases=("arctan",))
SINH, sinh = _ufunc_op("sinh", np.sinh, lambda ctx, g: g * _cj(ctx.inputs[0].cosh()))
COSH, cosh = _ufunc_op("cosh", np.cosh, lambda ctx, g: g * _cj(ctx.inputs[0].sinh()))
# Fused backward kernels (one op instead of three, as torch's tanh_backward / sigmoid_backward), with their own
# backward so that double backward still works. Complex tensors take the composite formulas.
def _tanh_bwd_kernel(g, y):
    t = np.multiply(y, y)
    np.subtract(1, t, out=t)
    return np.multiply(g, t, out=t)


def _sigmoid_bwd_kernel(g, y):
    t = np.subtract(1, y)
    np.multiply(t, y, out=t)
    return np.multiply(g, t, out=t)


TANH_BACKWARD = Op("tanh_backward", _kernel(_tanh_bwd_kernel, composite=True),
                   lambda ctx, gg: (gg * (1 - ctx.inputs[1] * ctx.inputs[1]),
                                    gg * ctx.inputs[0] * ctx.inputs[1] * -2),
                   SAVE_INPUTS, node_name="TanhBackwardBackward0")
SIGMOID_BACKWARD = Op("sigmoid_backward", _kernel(_sigmoid_bwd_kernel, composite=True),
                      lambda ctx, gg: (gg * ctx.inputs[1] * (1 - ctx.inputs[1]),
                                       gg * ctx.inputs[0] * (1 - ctx.inputs[1] * 2)),
                      SAVE_INPUTS, node_name="SigmoidBackwardBackward0")


def _tanh_bwd(ctx, g):
    y = ctx.output
    if y._data.dtype.kind == "c":
        return g * _cj(1 - y * y)
    return dispatch(TANH_BACKWARD, (g, y))


def _sigmoid_bwd(ctx, g):
    y = ctx.output
    if y._data.dtype.kind == "c":
        return g * _cj(y * (1 - y))
    return dispatch(SIGMOID_BACKWARD, (g, y))


TANH, tanh = _ufunc_op("tanh", np.tanh, _tanh_bwd, SAVE_OUTPUT)
ASINH, asinh = _ufunc_op("asinh", np.arcsinh, lambda ctx, g: g * _cj((ctx.inputs[0] * ctx.inputs[0] + 1).rsqrt()),
                         aliases=("arcsinh",))
ACOSH, acosh = _ufunc_op("acosh", np.arccosh, _acosh_bwd, aliases=("arccosh",))
ATANH, atanh = _ufunc_op("atanh", np.arctanh, lambda ctx, g: g / _cj(1 - ctx.inputs[0] * ctx.inputs[0]),
                         aliases=("arctanh",))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
DEG2RAD, deg2rad = _ufunc_op("deg2rad", np.deg2rad, lambda ctx, g: g * (_PI / 180), SAVE_NONE,
                             prep=_prep(floating=True,
                                        complex_msg=_Runtime("deg2rad is not supported for complex tensors.")),
                             fast="fV", node_name="Deg2RadBackward0")
RAD2DEG, rad2deg = _ufunc_op("rad2deg", np.rad2deg, lambda ctx, g: g * (180 / _PI), SAVE_NONE,
                             prep=_prep(floating=True,
                                        complex_msg=_Runtime("rad2deg is not supported for complex tensors.")),
                             fast="fV", node_name="Rad2DegBackward0")


def _sinc(x):
    y = x * _PI
    return np.where(x == 0, 1, np.sin(y) / y)


def _sinc_bwd(ctx, g):
    x = ctx.inputs[0]
    y = x * _PI
    d = (y * y.cos() - y.sin()) / (y * x)  # d/dx sin(pi x)/(pi x), 0 at x = 0
    return _keep(g * _cj(d), x._data != 0)


SINC, sinc = define("sinc", _kernel(_sinc, composite=True), _sinc_bwd)


# ---------------- sigmoid, logit ----------------
def _sigmoid(x):
    if x.size <= 1024 and x.dtype.char in "fd" and x.__class__ is np.ndarray:
        return _special(x).expit(x)  # one ufunc call: fastest on small arrays
    # 1 / (1 + exp(-x)) in one buffer: NumPy's exp is vectorized, so this wins on large arrays
    t = np.negative(x)
    np.exp(t, out=t)
    t += 1
    return np.reciprocal(t, out=t)


SIGMOID, sigmoid = define("sigmoid", _kernel(_sigmoid, composite=True), _sigmoid_bwd, SAVE_OUTPUT)


def _logit(x, eps):
    if eps is not None:
        x = np.minimum(np.maximum(x, eps), 1 - eps)
    return np.log(x / (1 - x))


def _logit_bwd(ctx, g):
    x = ctx.inputs[0]
    eps = ctx.attrs[0]
    d = g / (x * (1 - x))
    xa = x._data
    if eps is None:  # outside [0, 1] the derivative is nan, as torch gives
        return d + Tensor._make(np.where((xa < 0) | (xa > 1), np.nan, 0).astype(xa.dtype))
    return _keep(d, (xa >= eps) & (xa <= 1 - eps))


LOGIT = Op("logit", _kernel(_logit, composite=True), _logit_bwd, SAVE_INPUTS)
_LOGIT_PREP = _prep(floating=True, complex_msg=_not_impl("logit_cpu"))


def logit(input, eps=None, *, out=None):
    """Same as `torch.logit`."""
    if input._data.dtype.kind not in "fV":
        input = _LOGIT_PREP(input)
    r = dispatch1(LOGIT, input, None if eps is None else builtins.float(eps))
    return r if out is None else _out(r, out, "logit")


# ---------------- special functions (scipy.special) ----------------
_TWO_OVER_SQRT_PI = 2 / math.sqrt(_PI)
_SQRT_PI_OVER_TWO = math.sqrt(_PI) / 2
_REAL = {"floating": True, "fast": "fV"}
_psi = _scipy("psi")
_gammaln = _scipy("gammaln")
_polygamma = _scipy("polygamma")

ERF, erf = define("erf", _scipy("erf"), lambda ctx, g: g * (-ctx.inputs[0] * ctx.inputs[0]).exp() * _TWO_OVER_SQRT_PI,
                  prep=_prep(floating=True, complex_msg=_not_impl("erf_vml_cpu")), **_REAL)
ERFC, erfc = define("erfc", _scipy("erfc"),
                    lambda ctx, g: g * (-ctx.inputs[0] * ctx.inputs[0]).exp() * -_TWO_OVER_SQRT_PI,
                    prep=_prep(floating=True, complex_msg=_not_impl("erfc_vml_cpu")), **_REAL)
ERFINV, erfinv = define("erfinv", _scipy("erfinv"),
                        lambda ctx, g: g * (ctx.output * ctx.output).exp() * _SQRT_PI_OVER_TWO, SAVE_OUTPUT,
                        prep=_prep(floating=True, complex_msg=_not_impl("erfinv_vml_cpu")), **_REAL)


def _lgamma(x):
    r = _gammaln(x)
    at_neg_inf = x == -np.inf  # torch: lgamma(-inf) = inf (scipy: -inf)
    if maybe_any(at_neg_inf):
        r = np.where(at_neg_inf, r.dtype.type(np.inf), r)
    return r


LGAMMA, lgamma = define("lgamma", _kernel(_lgamma, composite=True), lambda ctx, g: g * ctx.inputs[0].digamma(),
                        prep=_prep(floating=True, complex_msg=_not_impl("lgamma_vml_cpu")), **_REAL)


def _digamma(x):
    r = _psi(x)
    # torch: digamma(+-0) is -+inf (scipy gives -inf for both)
    return np.where(x == 0, np.copysign(np.inf, -x).astype(r.dtype), r) if maybe_any(x == 0) else r


DIGAMMA, digamma = define("digamma", _kernel(_digamma, composite=True),
                          lambda ctx, g: g * polygamma(1, ctx.inputs[0]),
                          prep=_prep(floating=True, complex_msg=_not_impl("digamma")), **_REAL)
POLYGAMMA = Op("polygamma", _kernel(lambda x, n: _digamma(x) if n == 0 else _polygamma(x, n), composite=True),
               lambda ctx, g: g * polygamma(ctx.attrs[0] + 1, ctx.inputs[0]), SAVE_INPUTS)


def polygamma(n, input, *, out=None):
    """Same as `torch.polygamma`."""
    if not isinstance(input, Tensor):
        raise _not_tensor("polygamma", input)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    k = input._data.dtype.kind
    if k not in "fV":
        if k == "c":
            kernel = "digamma" if n == 0 else "trigamma" if n == 1 else "polygamma"
            raise NotImplementedError(_not_impl(kernel).format(_tname(input)))
        input = _float_input(input)
    r = dispatch1(POLYGAMMA, input, builtins.int(n))
    return r if out is None else _out(r, out, "polygamma")


def _mvlgamma(x, p):
    # log Gamma_p(x) = p(p-1)/4 log(pi) + sum_{j<p} lgamma(x - j/2)
    r = _gammaln(x)
    for j in range(1, p):
        r += _gammaln(x - j / 2)
    return r + p * (p - 1) / 4 * math.log(_PI)


def _mvlgamma_bwd(ctx, g):
    x, p = ctx.inputs[0], ctx.attrs[0]
    d = x.digamma()
    for j in range(1, p):
        d = d + (x - j / 2).digamma()
    return g * d


MVLGAMMA = Op("mvlgamma", _kernel(_mvlgamma, composite=True), _mvlgamma_bwd, SAVE_INPUTS)


def mvlgamma(input, p, *, out=None):
    """Same as `torch.mvlgamma`."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    k = input._data.dtype.kind
    if k == "c":
        raise NotImplementedError(_not_impl("arange_cpu").format(_tname(input)))
    if k == "b":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if k in "iu":
        input = _float_input(input)
    r = dispatch1(MVLGAMMA, input, builtins.int(p))
    return r if out is None else _out(r, out, "mvlgamma")


def _i1_bwd(ctx, g):
    x = ctx.inputs[0]
    xa = x._data
    nz = xa != 0
    safe = Tensor._make(np.where(nz, xa, 1).astype(xa.dtype, copy=False))
    # i1'(x) = i0(x) - i1(x) / x, which is 1/2 at x = 0 (where i0 = 1)
    half = Tensor._make(np.where(nz, 0, 0.5).astype(xa.dtype))
    return g * (x.i0() - _keep(ctx.output / safe, nz) - half)


_I1 = Op("special_i1", _scipy("i1"), _i1_bwd, SAVE_INPUTS | SAVE_OUTPUT, node_name="SpecialI1Backward0")
I0, i0 = define("i0", _scipy("i0"), lambda ctx, g: g * dispatch1(_I1, ctx.inputs[0]),
                prep=_prep(floating=True, complex_msg=_not_impl("i0_vml_cpu")), **_REAL)


# ---------------- sign, sgn, rounding ----------------
def _sign(x):
    if x.dtype.kind == "b":
        return x.copy()
    # (x > 0) - (x < 0): torch's sign(nan) = 0 and sign(-0.0) = 0 (np.sign gives nan and -0.0)
    r = (x > 0).astype(x.dtype)
    r -= x < 0
    return r


def _sgn(x):
    if x.dtype.kind != "c":
        return _sign(x)
    a = np.abs(x)
    r = np.empty_like(x)
    # divide the parts by |z| (a complex division would turn infinite parts into nan both ways)
    np.divide(x.real, a, out=r.real)
    np.divide(x.imag, a, out=r.imag)
    return np.where(a == 0, 0, r)


def _sgn_bwd(ctx, g):
    x = ctx.inputs[0]
    if x._data.dtype.kind != "c":
        return _zeros(g)
    a = x.abs()
    s = ctx.output
    # sgn(z) = z / |z|: grad = (g - sgn^2 conj(g)) / (2 |z|), 0 at z = 0
    return _keep((g - s * s * g.conj()) / (a * 2), x._data != 0)


def _zero_grad(ctx, g):
    """Backward of the piecewise-constant ops."""
    return _zeros(g)


SIGN, sign = define("sign", _kernel(_sign, composite=True), _zero_grad, SAVE_NONE, floating=False, fast="biufV",
                    strict_out=True,
                    prep=_prep(complex_msg="Unlike NumPy, torch.sign is not intended to support complex numbers. "
                                           "Please use torch.sgn instead."))
SGN, sgn = define("sgn", _kernel(_sgn, composite=True), _sgn_bwd, SAVE_INPUTS | SAVE_OUTPUT, floating=False,
                  strict_out=True)


def _integral_copy(f):
    """Rounding kernels: integer inputs come back as a copy in their own dtype."""
    def k(x):
        return x.copy() if x.dtype.kind in "iu" else f(x)
    return _kernel(k)


def _rounding(name, uf, kernel, complex_msg=None, aliases=()):
    return define(name, _integral_copy(uf), _zero_grad, SAVE_NONE, floating=False, ufunc=uf, fast="iufV",
                  inplace_kinds="fV", strict_out=True,
                  prep=_prep(bool_msg=_not_impl(kernel), complex_msg=complex_msg or _not_impl(kernel)),
                  aliases=aliases)


FLOOR, floor = _rounding("floor", np.floor, "floor_vml_cpu", "floor is not supported for complex inputs")
CEIL, ceil = _rounding("ceil", np.ceil, "ceil_vml_cpu", "ceil is not supported for complex inputs")
TRUNC, trunc = _rounding("trunc", np.trunc, "trunc_vml_cpu", "trunc is not supported for complex inputs",
                         aliases=("fix",))
fix = trunc
ROUND, _round0 = _rounding("round", np.rint, "round_vml_cpu")


def _round_decimals(x, decimals):
    # torch: nearbyint(x * 10^d) / 10^d, or nearbyint(x / 10^-d) * 10^-d for negative d, in x's dtype
    f = x.dtype.type(10.0 ** builtins.abs(decimals))
    if decimals > 0:
        t = np.multiply(x, f)
        np.rint(t, out=t)
        return np.divide(t, f, out=t)
    t = np.divide(x, f)
    np.rint(t, out=t)
    return np.multiply(t, f, out=t)


ROUND_DECIMALS = Op("round", _kernel(_round_decimals, composite=True), _zero_grad, SAVE_NONE,
                    node_name="RoundBackward1")
_ROUND_DEC_PREP = _prep(int_msg=_not_impl("round_cpu"), complex_msg=_not_impl("round_cpu"))


def round(input, *, decimals=0, out=None):
    """Same as `torch.round`."""
    if decimals == 0:
        return _round0(input, out=out)
    if input._data.dtype.kind not in "fV":
        _ROUND_DEC_PREP(input)
    r = dispatch1(ROUND_DECIMALS, input, builtins.int(decimals))
    return r if out is None else _out(r, out, "round", True)


_round_fast = Tensor.round_


def _round_inplace(self, *, decimals=0):
    return _round_fast(self) if decimals == 0 else _round_slow(self, decimals=decimals)


_round_slow = make_inplace(round, "round_")
FRAC, frac = define("frac", _kernel(lambda x: x - np.trunc(x), composite=True), lambda ctx, g: g, SAVE_NONE,
                    floating=False, fast="fV", strict_out=True,
                    prep=_prep(int_msg=_not_impl("frac_cpu"), complex_msg=_not_impl("frac_cpu")))


# ---------------- relu ----------------
def _positive_or_nan(y):
    return ~(y <= 0)


def _relu(x):
    if _UCLIP is not None and x.dtype.kind == "f" and x.__class__ is np.ndarray:
        return _UCLIP(x, 0.0, np.inf)
    return np.maximum(x, 0)


RELU, relu = define("relu", _kernel(_relu, composite=True),
                    lambda ctx, g: _keep(g, _mask_of(_positive_or_nan, ctx.output)), SAVE_OUTPUT, floating=False,
                    fast="iufV",
                    prep=_prep(bool_msg=_Runtime("Boolean inputs not supported for relu"),
                               complex_msg="clamp is not supported for complex types"), has_out=False)


# ---------------- nan_to_num ----------------
def _nan_to_num(x, nan, posinf, neginf):
    if x.dtype.kind in "biu":
        return x.copy()
    info = _dtype.finfo(FROM_NP[x.dtype].to_real())
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    if x.dtype.kind == "V":  # bfloat16: fill in float32 with bfloat16's limits, which round back exactly
        return np.nan_to_num(x.astype(np.float32), nan=nan, posinf=posinf, neginf=neginf).astype(x.dtype)
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


NAN_TO_NUM = Op("nan_to_num", _kernel(_nan_to_num), lambda ctx, g: _keep(g, _mask_of(np.isfinite, ctx.inputs[0])),
                SAVE_INPUTS)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Same as `torch.nan_to_num`."""
    if not isinstance(input, Tensor):
        raise _not_tensor("nan_to_num", input)
    r = dispatch1(NAN_TO_NUM, input, nan, posinf, neginf)
    if out is not None and out._data.dtype != r._data.dtype:
        raise RuntimeError(f"nan_to_num: dtype of out: {_tname(out)} should be same as input: {_tname(input)}")
    return r if out is None else _out(r, out, "nan_to_num")


# ---------------- clamp ----------------
def _clamp_scalar(x, lo, hi):
    if _UCLIP is not None and x.dtype.kind == "f" and x.__class__ is np.ndarray:
        return _UCLIP(x, -np.inf if lo is None else lo, np.inf if hi is None else hi)
    if lo is not None:
        x = np.maximum(x, lo)
    return x if hi is None else np.minimum(x, hi)


def _clamp_scalar_bwd(ctx, g):
    lo, hi = ctx.attrs
    if lo is None:
        return _keep(g, _mask_of(lambda x: x <= hi, ctx.inputs[0]))
    return _keep(g, _mask_of(lambda x: x >= lo if hi is None else (x >= lo) & (x <= hi), ctx.inputs[0]))


CLAMP_S = Op("clamp", _kernel(_clamp_scalar, composite=True), _clamp_scalar_bwd, SAVE_INPUTS,
             node_name="ClampBackward1")
CLAMP_MIN_S = Op("clamp_min", CLAMP_S.fwd, _clamp_scalar_bwd, SAVE_INPUTS)
CLAMP_MAX_S = Op("clamp_max", CLAMP_S.fwd, _clamp_scalar_bwd, SAVE_INPUTS)


def _clamp_tensor(x, *bounds_and_flags):
    *bounds, has_lo, has_hi = bounds_and_flags
    if has_lo:
        x = np.maximum(x, bounds[0])
    return np.minimum(x, bounds[-1]) if has_hi else x


def _clamp_tensor_bwd(ctx, g):
    ins = ctx.inputs
    has_lo, has_hi = ctx.attrs
    need = ctx.needs_input_grad

    def keep(cond):
        return _keep(g, _mask_of(cond, *ins))
    if has_lo and has_hi:  # clamp is min(max(x, lo), hi): hi wins where lo > hi
        gx = keep(lambda x, lo, hi: (x >= lo) & (x <= hi)) if need[0] else None
        glo = keep(lambda x, lo, hi: (x < lo) & (lo < hi)) if need[1] else None
        ghi = keep(lambda x, lo, hi: (x > hi) | (hi < lo)) if need[2] else None
        return gx, glo, ghi
    if has_lo:
        return (keep(lambda x, lo: x >= lo) if need[0] else None), (keep(lambda x, lo: x < lo) if need[1] else None)
    return (keep(lambda x, hi: x <= hi) if need[0] else None), (keep(lambda x, hi: x > hi) if need[1] else None)


CLAMP_T = Op("clamp", _kernel(_clamp_tensor, composite=True), _clamp_tensor_bwd, SAVE_INPUTS,
             node_name="ClampBackward0")
CLAMP_MIN_T = Op("clamp_min", CLAMP_T.fwd, _clamp_tensor_bwd, SAVE_INPUTS, node_name="ClampMinBackward1")
CLAMP_MAX_T = Op("clamp_max", CLAMP_T.fwd, _clamp_tensor_bwd, SAVE_INPUTS, node_name="ClampMaxBackward1")
_CTYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t"}


def _promoted(tensors, scalars):
    """tensors cast to torch's result dtype of (tensors, Python scalars)."""
    dims = tuple(FROM_NP[t._data.dtype] for t in tensors if t._data.ndim)
    zeros = tuple(FROM_NP[t._data.dtype] for t in tensors if not t._data.ndim)
    rt = result_type_of(dims, zeros, tuple(_dtype.scalar_dtype(s) for s in scalars))
    return [t if t._data.dtype == rt.np else t.to(rt) for t in tensors]


def _clamp(input, min, max, name, ops):
    if not isinstance(input, Tensor):
        raise _not_tensor(name, input)
    if input._data.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    t_lo, t_hi = isinstance(min, Tensor), isinstance(max, Tensor)
    if t_lo or t_hi:
        if (min is not None and not t_lo) or (max is not None and not t_hi):
            raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                            f"min={type(min).__name__}, max={type(max).__name__}): min and max must both be "
                            f"Tensors or both be numbers")
        ts = _promoted([input] + [b for b in (min, max) if b is not None], ())
        from .binary import _broadcast_error
        try:
            return dispatch(ops[1], tuple(ts), min is not None, max is not None)
        except ValueError:
            raise _broadcast_error(ts[0], ts[1]) from None
    x = _promoted([input], [b for b in (min, max) if b is not None])[0]
    k = x._data.dtype.kind
    if k == "b":
        kernel = "clamp_scalar_cpu" if min is not None and max is not None else \
            "clamp_min_scalar_cpu" if min is not None else "clamp_max_scalar_cpu"
        raise NotImplementedError(_not_impl(kernel).format("Bool"))
    if k == "u":  # torch wraps small negative bounds into uint8 (-1 is 255)
        min, max = _wrap_uint8(min), _wrap_uint8(max)
    try:
        return dispatch1(ops[0], x, min, max)
    except OverflowError:
        raise RuntimeError(f"value cannot be converted to type {_CTYPES[x._data.dtype.name]} without "
                           f"overflow") from None


def _wrap_uint8(v):
    return v + 256 if isinstance(v, builtins.int) and -256 < v < 0 else v


_CLAMP_OPS = (CLAMP_S, CLAMP_T)
_PLAIN_BOUND = (builtins.float, builtins.int, type(None))


def clamp(input, min=None, max=None, *, out=None):
    """Same as `torch.clamp`."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input.__class__ is Tensor and input._data.dtype.kind == "f" and min.__class__ in _PLAIN_BOUND and \
            max.__class__ in _PLAIN_BOUND:  # the common case: nothing to promote or check
        r = dispatch1(CLAMP_S, input, min, max)
    else:
        r = _clamp(input, min, max, "clamp", _CLAMP_OPS)
    return r if out is None else _out(r, out, "clamp", True)


clip = clamp


def clamp_min(input, min, *, out=None):
    """Same as `torch.clamp_min`."""
    r = _clamp(input, min, None, "clamp_min", (CLAMP_MIN_S, CLAMP_MIN_T))
    return r if out is None else _out(r, out, "clamp_min", True)


def clamp_max(input, max, *, out=None):
    """Same as `torch.clamp_max`."""
    r = _clamp(input, None, max, "clamp_max", (CLAMP_MAX_S, CLAMP_MAX_T))
    return r if out is None else _out(r, out, "clamp_max", True)


# ---------------- complex parts: conj, angle ----------------
CONJ = Op("conj", np.conj, lambda ctx, g: g.conj(), SAVE_NONE)
CONJ_PHYSICAL = Op("conj_physical", np.conj, lambda ctx, g: g.conj(), SAVE_NONE)


def conj(input):
    """Same as `torch.conj`; a complex result is a copy, not a lazily conjugated view."""
    return dispatch1(CONJ, input) if input._data.dtype.kind == "c" else input


def conj_physical(input, *, out=None):
    """Same as `torch.conj_physical`."""
    r = dispatch1(CONJ_PHYSICAL, input) if input._data.dtype.kind == "c" else input
    return r if out is None else _out(r, out, "conj_physical", True)


def resolve_conj(input):
    """Same as `torch.resolve_conj`: conjugation is never lazy here, so the input itself."""
    return input


def resolve_neg(input):
    """Same as `torch.resolve_neg`: negation is never lazy here, so the input itself."""
    return input


def is_conj(input):
    """Same as `torch.is_conj`: always False (conj materializes)."""
    return False


def is_neg(input):
    """Same as `torch.is_neg`: always False."""
    return False


def _angle(x):
    if x.dtype.kind == "c":
        return np.angle(x)
    # real: pi for negative numbers, 0 otherwise (also for -0.0), nan stays nan
    return np.where(x < 0, _PI, np.where(np.isnan(x), x, 0))


def _angle_bwd(ctx, g):
    x = ctx.inputs[0]
    if x._data.dtype.kind != "c":
        return _zeros(g)
    a = x.abs()
    # d angle(z): grad = g * z / |z|^2 * i, 0 at z = 0
    return _keep(g * x / (a * a) * 1j, x._data != 0)


ANGLE, angle = define("angle", _kernel(_angle, composite=True), _angle_bwd, method=True, inplace=False)


# ---------------- predicates (bool results, no gradient) ----------------
def _predicate(name, f, prep=None, fast="biufVc", has_out=True, bool_out=False, strict_out=False):
    """A function (and method) with a result that has no gradient: bool predicates, logical_not, bitwise_not."""
    op = Op(name, _kernel(f), None)

    def fn_noout(input):
        try:
            k = input._data.dtype.kind
        except AttributeError:
            raise _not_tensor(name, input) from None
        return dispatch1(op, input if k in fast else prep(input))

    def fn(input, *, out=None):
        try:
            k = input._data.dtype.kind
        except AttributeError:
            raise _not_tensor(name, input) from None
        if out is not None and strict_out:
            _check_strict_out(input, out)
        r = dispatch1(op, input if k in fast else prep(input))
        if out is None:
            return r
        if bool_out and out._data.dtype.kind != "b":
            raise RuntimeError(f"{name} does not support non-boolean outputs.")
        return _out(r, out, name)

    f_pub = fn if has_out else fn_noout
    f_pub.__name__ = f_pub.__qualname__ = name
    f_pub.__doc__ = f"Same as `torch.{name}`."
    setattr(Tensor, name, f_pub)
    return f_pub


def _isreal(x):
    return x.imag == 0 if x.dtype.kind == "c" else np.ones_like(x, dtype=bool)


isnan = _predicate("isnan", np.isnan, has_out=False)
isinf = _predicate("isinf", np.isinf, has_out=False)
isfinite = _predicate("isfinite", np.isfinite, has_out=False)
isreal = _predicate("isreal", _isreal, has_out=False)
isposinf = _predicate("isposinf", lambda x: x == np.inf, fast="biufV",
                      prep=_prep(complex_msg=_Runtime("isposinf does not support complex inputs.")), bool_out=True)
isneginf = _predicate("isneginf", lambda x: x == -np.inf, fast="biufV",
                      prep=_prep(complex_msg=_Runtime("isneginf does not support complex inputs.")), bool_out=True)
signbit = _predicate("signbit", lambda x: np.signbit(x) if x.dtype.kind != "b" else np.zeros(x.shape, dtype=bool),
                     fast="biufV", prep=_prep(complex_msg="signbit is not implemented for complex tensors."),
                     bool_out=True)
logical_not = _predicate("logical_not", np.logical_not)
bitwise_not = _predicate("bitwise_not", np.invert, fast="biu",
                         prep=_prep(complex_msg=_not_impl("bitwise_not_cpu"),
                                    float_msg=_not_impl("bitwise_not_cpu")), strict_out=True)


def _invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


# ---------------- binding ----------------
_INPLACE_FUNCTIONS = [
    "abs", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "square",
    "sin", "cos", "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "tanh", "asinh",
    "arcsinh", "acosh", "arccosh", "atanh", "arctanh", "sigmoid", "logit", "erf", "erfc", "floor", "ceil", "round",
    "trunc", "fix", "frac", "reciprocal", "nan_to_num", "clamp", "clip", "clamp_min", "clamp_max", "deg2rad",
    "rad2deg", "sinc", "relu", "conj_physical", "i0",
]

Tensor.abs_ = Tensor.absolute_ = _abs_inplace
Tensor.positive = positive
Tensor.logit = logit
Tensor.logit_ = make_inplace(logit, "logit_")
Tensor.round = round
Tensor.round_ = _round_inplace
Tensor.polygamma = lambda self, n: polygamma(n, self)
Tensor.polygamma_ = make_inplace(Tensor.polygamma, "polygamma_")
Tensor.mvlgamma = lambda self, p: mvlgamma(self, p)
Tensor.mvlgamma_ = make_inplace(Tensor.mvlgamma, "mvlgamma_")
Tensor.nan_to_num = nan_to_num
Tensor.nan_to_num_ = make_inplace(nan_to_num, "nan_to_num_")
for _name, _fn in (("clamp", clamp), ("clip", clamp), ("clamp_min", clamp_min), ("clamp_max", clamp_max)):
    setattr(Tensor, _name, _fn)
    setattr(Tensor, _name + "_", make_inplace(_fn, _name + "_"))
Tensor.conj = conj
Tensor.conj_physical = conj_physical
Tensor.conj_physical_ = lambda self: self if self._data.dtype.kind != "c" else _conj_physical_(self)
_conj_physical_ = make_inplace(conj_physical, "conj_physical_")
Tensor.resolve_conj = resolve_conj
Tensor.resolve_neg = resolve_neg
Tensor.is_conj = is_conj
Tensor.is_neg = is_neg
Tensor.logical_not_ = make_inplace(logical_not, "logical_not_")
Tensor.bitwise_not_ = make_inplace(bitwise_not, "bitwise_not_")

def _frexp_parts(d):
    m, e = np.frexp(d if d.dtype.kind == "f" else d.astype(np.float32))
    if d.__class__ is np.ndarray and d.ndim == 0:  # NumPy answers scalars for a 0-d array
        m, e = np.asarray(m), np.asarray(e)
    return m.astype(d.dtype, copy=False), e


def _frexp_bwd(ctx, g):
    # mantissa = x * 2**-exponent, the exponent piecewise constant: d mantissa / dx = 2**-exponent (torch's formula)
    x = ctx.inputs[0]._data
    e = _frexp_parts(x)[1]
    scale = np.ldexp(np.ones_like(e, dtype=np.float32 if x.dtype.kind != "f" else x.dtype), -e)
    if x.__class__ is np.ndarray:
        scale = np.asarray(scale)  # NumPy answers a scalar for 0-d
    return g * Tensor._make(scale.astype(x.dtype, copy=False))


FREXP_MANTISSA = Op("frexp", lambda x: _frexp_parts(x)[0], _frexp_bwd, SAVE_INPUTS)


def frexp(input, *, out=None):
    """Same as `torch.frexp`: (mantissa, exponent) with an int32 exponent; the mantissa is differentiable."""
    from .. import return_types as _rt
    d = input._data
    if d.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = _frexp_parts(d)
    mantissa = dispatch1(FREXP_MANTISSA, input) if GRAD[0] and input.requires_grad or carries_tangent(input) \
        else wrap(m)
    r = _rt.frexp(mantissa, wrap(e.astype(np.int32, copy=False)))
    if out is None:
        return r
    return _rt.frexp(write_out(r[0], out[0], "frexp"), write_out(r[1], out[1], "frexp"))


__all__.append("frexp")
Tensor.frexp = frexp
Tensor.__abs__ = abs
Tensor.__neg__ = neg
Tensor.__pos__ = positive
Tensor.__invert__ = _invert

for _name in _INPLACE_FUNCTIONS:
    globals()[_name + "_"] = getattr(Tensor, _name + "_")
__all__ += [n + "_" for n in _INPLACE_FUNCTIONS]
