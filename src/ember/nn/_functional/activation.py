"""Activation functions: fused elementwise kernels with fused backward kernels.

NOTE [ fused activations ]
Each activation f is three pieces: a forward kernel over arrays, a backward kernel computing g * f'(x) in one
pass (torch's *_backward ops), and f''(x) written with ember ops (None where f is piecewise linear). The
backward kernel is itself an Op whose backward uses the backward kernel again (d/dg) and f'' (d/dx), so double
backward works and higher orders fall through to the ember-op composite. Every op saves its input x.
"""
import math

import numpy as np

import ember

from ..._autocast import AUTOCAST, cast_args
from ..._backend import XP
from ..._backend import where as _where
from ..._dtype import FROM_NP
from ..._ops._dispatch import SAVE_INPUTS, Op, dispatch1, dispatch2
from ..._ops._inplace import make_inplace
from ..._ops.random import _engine
from ..._ops.unary import _sigmoid as _sigmoid_np
from ..._ops.unary import _special
from ..._dtype import SCALAR_NAMES
from ...autograd.grad_mode import GRAD
from ...autograd.graph import FORWARD, bump_version
from ._args import not_tensor

__all__ = [
    "celu",
    "celu_",
    "elu",
    "elu_",
    "gelu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "logsigmoid",
    "mish",
    "prelu",
    "relu",
    "relu6",
    "relu_",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "sigmoid",
    "silu",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
    "threshold_",
]

_UCLIP = getattr(getattr(np, "_core", None) and np._core.umath, "clip", None)
_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_K = math.sqrt(2.0 / math.pi)  # tanh-gelu constants
_C = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH = float(np.float32(1 / 6))  # torch's hardsigmoid backward uses the float32 constant at every precision


def _in_f32(f):
    """Kernels compute bfloat16 (a 'V' kind NumPy dtype) and float16 in float32, as torch's CPU kernels do."""
    def k(a, *rest):
        if a.dtype.kind == "V" or a.dtype.char == "e":
            dt = a.dtype
            rest = tuple(r.astype(np.float32) if isinstance(r, np.ndarray) and r.dtype == dt else r for r in rest)
            y = f(a.astype(np.float32), *rest)
            if y.__class__ is tuple:  # (result, float32 intermediate kept for the backward)
                return y[0].astype(dt), y[1]
            return y.astype(dt)
        return f(a, *rest)
    return k


def _zero(a):
    return a.dtype.type(0)


def _mask(cond, dt):
    """A 0/1 array of dtype dt: multiplying by it is many times faster than np.where (vectorized loops)."""
    return cond.astype(dt)


def _sig(t):
    return ember.sigmoid(t)


def _graph(input):
    """Whether the op with a backward record is wanted (a graph, or tangents to carry) rather than the cheaper one."""
    return GRAD[0] and input._requires_grad or FORWARD[0] is not None


# ---------------- the factory ----------------
def _fused(name, fwd, dfwd, d2, node_name, bwd_node_name=None, keep=False):
    """The forward Op of a fused activation (NOTE [ fused activations ]).

    keep: fwd returns (y, t) with t an intermediate (erf, tanh, sigmoid) that the backward kernel takes as its
    last argument instead of recomputing it; d2 then also receives t last (and ignores it).
    """
    def bwd_bwd(ctx, gg):
        g, x = ctx.inputs
        need = ctx.needs_input_grad
        gg_g = dispatch2(back, gg, x, *ctx.attrs) if need[0] else None
        gg_x = None
        if need[1]:
            # piecewise linear f: f'' is zero (torch returns zeros, not None)
            gg_x = gg * g * d2(x, *ctx.attrs) if d2 is not None else ember.zeros_like(x)
        return gg_g, gg_x

    back = Op(name + "_backward", _in_f32(dfwd), bwd_bwd, SAVE_INPUTS,
              node_name=bwd_node_name or node_name.replace("Backward0", "BackwardBackward0"))

    def bwd(ctx, g):
        return dispatch2(back, g, ctx.inputs[0], *ctx.attrs)

    def bwd_keep(ctx, g):
        return dispatch2(back, g, ctx.inputs[0], *ctx.attrs, ctx.extra)
    return Op(name, _in_f32(fwd), bwd_keep if keep else bwd, SAVE_INPUTS, extra=keep, node_name=node_name)


def _check(input, kernel, fname):
    """Float inputs only; torch's error for the rest."""
    try:
        k = input._data.dtype.kind
    except AttributeError:
        raise not_tensor(fname, "input", 1, input) from None
    if k not in "fV":
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_NAMES[FROM_NP[input._data.dtype].name]}'")


def _inplace_pair(fn, name):
    """fn_(input, ...) as a function: the Tensor in-place machinery (leaf checks, version counter, views)."""
    method = make_inplace(fn, name)

    def f(input, *args, **kwargs):
        return method(input, *args, **kwargs)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Same as `torch.nn.functional.{name}`."
    return f


# ---------------- relu, leaky_relu, hardtanh, threshold ----------------
def _relu_fwd(x):
    if _UCLIP is not None and x.__class__ is np.ndarray:
        return _UCLIP(x, 0.0, np.inf)
    return np.maximum(x, 0)


def _slopes(x, s):
    # 1 where x > 0, else s
    m = _mask(x > 0, x.dtype)
    m *= 1 - s
    m += s
    return m


def _leaky_fwd(x, s):
    m = _slopes(x, s)
    m *= x
    return m


def _leaky_dfwd(g, x, s):
    m = _slopes(x, s)
    m *= g
    return m


# NOTE: the backward kernels multiply by 0/1 masks, so a NaN or infinite incoming gradient at a position the
# mask zeroes gives NaN where torch gives 0.
_RELU = _fused("relu", _relu_fwd, lambda g, x: g * (x > 0), None, "ReluBackward0", "ThresholdBackwardBackward0")
_LEAKY = _fused("leaky_relu", _leaky_fwd, _leaky_dfwd, None, "LeakyReluBackward0")
_HARDTANH = _fused("hardtanh", lambda x, lo, hi: np.clip(x, lo, hi),
                   lambda g, x, lo, hi: g * ((x > lo) & (x < hi)), None, "HardtanhBackward0")
_THRESHOLD = _fused("threshold", lambda x, th, v: _where(x > th, x, x.dtype.type(v)),
                    lambda g, x, th, v: _where(x > th, g, _zero(g)), None, "ThresholdBackward0")


def relu(input, inplace=False):
    """Same as `torch.nn.functional.relu`."""
    if inplace:
        return relu_(input)
    k = input._data.dtype.kind if isinstance(input, ember.Tensor) else None
    if k == "f" or k == "V":
        return dispatch1(_RELU, input)
    return ember.relu(input)


_relu_slow_ = _inplace_pair(relu, "relu_")


_RELU_INTO = Op("relu_", lambda d: _UCLIP(d, 0.0, np.inf, out=d))


def relu_(input):
    """Same as `torch.nn.functional.relu_`."""
    d = input._data
    # no graph to record: clip straight into the tensor's memory (nn.ReLU(inplace=True) in eval or no_grad)
    if _UCLIP is not None and d.__class__ is np.ndarray and d.dtype.kind == "f" and d.flags.writeable \
            and not (GRAD[0] and input._requires_grad):
        _RELU_INTO.fwd(d)  # an op's forward: tracing sees the write (NOTE [ Tracing ops ])
        bump_version(input, "relu_")
        return input
    return _relu_slow_(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """Same as `torch.nn.functional.leaky_relu`."""
    if inplace:
        return leaky_relu_(input, negative_slope)
    _check(input, "leaky_relu_cpu", "leaky_relu")
    return dispatch1(_LEAKY, input, float(negative_slope))


leaky_relu_ = _inplace_pair(leaky_relu, "leaky_relu_")


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Same as `torch.nn.functional.hardtanh`."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    if input._data.dtype.kind in "biu":
        return ember.clamp(input, int(min_val), int(max_val))
    _check(input, "hardtanh", "hardtanh")
    return dispatch1(_HARDTANH, input, min_val, max_val)


hardtanh_ = _inplace_pair(hardtanh, "hardtanh_")


def relu6(input, inplace=False):
    """Same as `torch.nn.functional.relu6`."""
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input, threshold, value, inplace=False):
    """Same as `torch.nn.functional.threshold`."""
    if inplace:
        return threshold_(input, threshold, value)
    if input._data.dtype.kind in "biu":
        d = input._data
        return ember.Tensor._make(_where(d > threshold, d, d.dtype.type(value)))
    _check(input, "threshold", "threshold")
    return dispatch1(_THRESHOLD, input, threshold, value)


threshold_ = _inplace_pair(threshold, "threshold_")


# ---------------- blockwise kernels ----------------
# NOTE [ Blockwise kernels ]
# A kernel of many NumPy passes (gelu, elu, softplus) runs over blocks of _BLOCK elements of a contiguous input:
# a block's temporaries stay in the L2 cache, where temporaries of a whole large tensor stream through memory on
# every pass (several times slower); larger blocks would pay less per-call overhead but miss the cache. Constants
# are 0-d arrays of the input's dtype: as ufunc operands they cost about half the call overhead of Python floats.
# When a graph will be recorded, the forward kernel also writes f'(x) into a second output, kept as the node's
# extra (one more array held until the backward): the backward is then the single product g * f'(x) instead of
# a second round of transcendental functions. Without a graph the public function picks the *_NOGRAD op, whose
# kernel skips f'(x).
_BLOCK = 32768


def _blockwise(kernel, x, with_d, *args):
    """(y, d) from kernel(x_block, y_block, d_block or None, *args) over blocks of x; d is None without with_d."""
    if x.__class__ is not np.ndarray:  # a device array: one pass, the 0-d constants moved to the device
        xp = XP[x.__class__]
        y = xp.empty_like(x)
        d = xp.empty_like(x) if with_d else None
        kernel(x, y, d, *[xp.asarray(a) if a.__class__ is np.ndarray else a for a in args])
        return y, d
    if not x.flags.c_contiguous:
        y = np.empty_like(x)
        d = np.empty_like(x) if with_d else None
        kernel(x, y, d, *args)
        return y, d
    xf = x.reshape(-1)
    n = xf.shape[0]
    y = np.empty_like(xf)
    d = np.empty_like(xf) if with_d else None
    if n <= _BLOCK:
        kernel(xf, y, d, *args)
    else:
        for i in range(0, n, _BLOCK):
            j = i + _BLOCK
            kernel(xf[i:j], y[i:j], None if d is None else d[i:j], *args)
    return y.reshape(x.shape), None if d is None else d.reshape(x.shape)


# ---------------- elu, selu, celu ----------------
def _elu_block(x, y, d, zero, one, isc, sc, c, ci, smc):
    # scale * max(x, 0) + scale * alpha * expm1(min(x, 0) * iscale): no select needed
    z = np.minimum(x, zero)
    if isc is not None:
        z *= isc
    if x.dtype.char == "d":
        t = np.expm1(z)
        e = t + one
    else:
        e = np.exp(z, out=z)
        t = e - one
    t *= c
    np.maximum(x, zero, out=y)
    if sc is not None:
        y *= sc
    y += t
    if d is not None:
        # f'(x): c * iscale * exp(x * iscale) for x <= 0, scale for x > 0 (where exp(min(x, 0)) is 1)
        np.multiply(e, ci, out=d)
        np.greater(x, zero, out=t)
        t *= smc
        d += t


def _elu_args(dt, alpha, scale, iscale):
    """The kernel's constants as 0-d arrays of the input's dtype (NOTE [ Blockwise kernels ])."""
    c = alpha * scale
    ci = c * iscale
    k = [np.array(v, dt) for v in (0.0, 1.0, iscale, scale, c, ci, scale - ci)]
    if iscale == 1.0:
        k[2] = None
    if scale == 1.0:
        k[3] = None
    return k


def _elu_fwd(x, alpha, scale, iscale):
    return _blockwise(_elu_block, x, True, *_elu_args(x.dtype, alpha, scale, iscale))


def _elu_fwd_nograd(x, alpha, scale, iscale):
    return _blockwise(_elu_block, x, False, *_elu_args(x.dtype, alpha, scale, iscale))[0]


def _elu_dfwd(g, x, alpha, scale, iscale, d):
    return g * d


def _elu_d2(x, alpha, scale, iscale, _=None):
    return ember.where(x >= 0, 0.0, (x.clamp(max=0) * iscale).exp() * (alpha * scale * iscale * iscale))


_ELU = _fused("elu", _elu_fwd, _elu_dfwd, _elu_d2, "EluBackward0", keep=True)
_CELU = _fused("celu", _elu_fwd, _elu_dfwd, _elu_d2, "CeluBackward0", "EluBackwardBackward0", keep=True)
_ELU_NOGRAD = Op("elu", _in_f32(_elu_fwd_nograd), _ELU.bwd, SAVE_INPUTS, node_name="EluBackward0")


def elu(input, alpha=1.0, inplace=False):
    """Same as `torch.nn.functional.elu`."""
    if inplace:
        return elu_(input, alpha)
    _check(input, "elu_cpu", "elu")
    return dispatch1(_ELU if _graph(input) else _ELU_NOGRAD, input, float(alpha), 1.0, 1.0)


elu_ = _inplace_pair(elu, "elu_")


def selu(input, inplace=False):
    """Same as `torch.nn.functional.selu`."""
    if inplace:
        return selu_(input)
    _check(input, "elu_cpu", "selu")
    return dispatch1(_ELU if _graph(input) else _ELU_NOGRAD, input, _SELU_ALPHA, _SELU_SCALE,
                     1.0)


selu_ = _inplace_pair(selu, "selu_")


def celu(input, alpha=1.0, inplace=False):
    """Same as `torch.nn.functional.celu`."""
    if inplace:
        return celu_(input, alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _check(input, "elu_cpu", "celu")
    return dispatch1(_CELU if _graph(input) else _ELU_NOGRAD, input, float(alpha), 1.0,
                     1.0 / alpha)


celu_ = _inplace_pair(celu, "celu_")


# ---------------- gelu ----------------
# NOTE [ float32 erf ]
# Exact gelu in float32 uses Phi(-|x|) = 0.5 erfc(|x|/sqrt2) = t P(t) exp(-x^2/2), t = 1/(1 + p|x|), with a
# degree-6 P fitted (weighted minimax) to erfc: 9e-9 absolute in exact arithmetic, so float32 rounding dominates
# (max |error| of Phi about 2.5e-7, as torch's own vectorized erf). exp(-x^2/2) is the normal density's factor, so
# the derivative Phi(x) + x phi(x) costs three more passes. float64 keeps scipy's erf.
_GP = 0.391 / _SQRT_2
_GC = (0.11746243220358588, 0.049385559587847266, 0.3153756099643535, -0.30423825306288593,
       0.4345563842579195, -0.11254173739432564)


def _k32(*vs):
    """float32 0-d arrays (NOTE [ Blockwise kernels ])."""
    return tuple(np.array(v, np.float32) for v in vs)


_G_P, _G_ONE, _G_ZERO, _G_MHALF, _G_MTWO, _G_PDF = _k32(_GP, 1.0, 0.0, -0.5, -2.0, _INV_SQRT_2PI)
_G_C = _k32(*_GC)


def _gelu_block(x, y, d):
    t = np.abs(x)
    t *= _G_P
    t += _G_ONE
    np.divide(_G_ONE, t, out=t)
    q = t * _G_C[5]
    for c in _G_C[4::-1]:
        q += c
        q *= t
    e = x * _G_MHALF
    e *= x
    np.exp(e, out=e)
    q *= e  # Phi(-|x|)
    np.multiply(q, _G_MTWO, out=t)
    t += _G_ONE
    t *= np.greater(x, _G_ZERO)
    t += q  # Phi(x)
    np.multiply(x, t, out=y)
    if d is not None:
        e *= x
        e *= _G_PDF
        np.add(e, t, out=d)


def _erf(x):
    return _special(x).erf(x)


def _gelu_f64(x, with_d):
    v = x * (1 / _SQRT_2)
    cdf = _erf(np.asarray(v) if x.__class__ is np.ndarray else v)  # a 0-d NumPy product is a scalar
    cdf += 1
    cdf *= 0.5
    y = x * cdf
    if not with_d:
        return y, None
    pdf = np.exp(x * x * -0.5)
    pdf *= _INV_SQRT_2PI
    pdf *= x
    pdf += cdf
    return y, pdf


def _gelu_fwd(x):
    # (y, gelu'(x)): the derivative rides along as the node's extra (NOTE [ Blockwise kernels ]); device arrays
    # use erf (the kernel's constants are host arrays)
    if x.dtype.char == "f" and x.__class__ is np.ndarray:
        return _blockwise(_gelu_block, x, True)
    return _gelu_f64(x, True)


def _gelu_fwd_nograd(x):
    if x.dtype.char == "f" and x.__class__ is np.ndarray:
        return _blockwise(_gelu_block, x, False)[0]
    return _gelu_f64(x, False)[0]


def _gelu_dfwd(g, x, d):
    return g * d


def _gelu_d2(x, _):
    # d2/dx2 x*Phi(x) = phi(x) * (2 - x^2)
    return (x * x * -0.5).exp() * _INV_SQRT_2PI * (2 - x * x)


def _gelu_tanh_fwd(x):
    t = np.tanh((x + _C * x * x * x) * _K)
    y = t + 1
    y *= x
    y *= 0.5
    return y, t


def _gelu_tanh_dfwd(g, x, t):
    # u = k (x + c x^3), y = x (1 + tanh u) / 2: y' = (1 + t)/2 + x (1 - t^2) u' / 2
    x2 = x * x
    du = (1 + 3 * _C * x2) * _K
    r = (1 - t * t) * du
    r *= x
    r += 1 + t
    r *= 0.5
    r *= g
    return r


def _gelu_tanh_d2(x, _):
    x2 = x * x
    t = ((x + x2 * x * _C) * _K).tanh()
    s = 1 - t * t
    du = (1 + x2 * (3 * _C)) * _K
    return s * du + x * 0.5 * (s * x * (6 * _C * _K) - t * s * du * du * 2)


_GELU = _fused("gelu", _gelu_fwd, _gelu_dfwd, _gelu_d2, "GeluBackward0", keep=True)
_GELU_NOGRAD = Op("gelu", _in_f32(_gelu_fwd_nograd), _GELU.bwd, SAVE_INPUTS, node_name="GeluBackward0")
_GELU_TANH = _fused("gelu", _gelu_tanh_fwd, _gelu_tanh_dfwd, _gelu_tanh_d2, "GeluBackward0", keep=True)


def gelu(input, approximate="none"):
    """Same as `torch.nn.functional.gelu`."""
    if approximate != "none" and approximate != "tanh":
        raise RuntimeError("approximate argument must be either none or tanh.")
    _check(input, "GeluKernelImpl", "gelu")
    if approximate == "tanh":
        return dispatch1(_GELU_TANH, input)
    return dispatch1(_GELU if _graph(input) else _GELU_NOGRAD, input)


# ---------------- silu, mish, softplus, logsigmoid ----------------
def _silu_fwd(x):
    s = _sigmoid_np(x)
    return x * s, s


def _silu_dfwd(g, x, s):
    r = 1 - s
    r *= x
    r += 1
    r *= s
    r *= g
    return r


def _silu_d2(x, _):
    s = _sig(x)
    return s * (1 - s) * (2 + x * (1 - 2 * s))


def _log1p(x):
    # NumPy's log1p is a scalar loop, many times slower than log; below float64 the cancellation in log(1 + x)
    # costs less than one float32 ulp of the result's scale
    if x.dtype.char == "d":
        return np.log1p(x)
    y = x + 1
    return np.log(y, out=y)


def _tanh_softplus(x):
    # tanh(log(1 + e)) = n / (n + 2) with n = e (e + 2); it is 1 to working precision beyond x = 20
    e = np.exp(np.minimum(x, 20))
    n = e + 2
    n *= e
    d = n + 2
    n /= d
    return n


def _mish_fwd(x):
    y = _tanh_softplus(x)
    y *= x
    return y


def _mish_dfwd(g, x):
    t = _tanh_softplus(x)
    r = 1 - t * t
    r *= _sigmoid_np(x)
    r *= x
    r += t
    r *= g
    return r


def _mish_d2(x):
    t = ember.nn.functional.softplus(x).tanh()
    s = _sig(x)
    return (1 - t * t) * s * (2 + x * ((1 - s) - 2 * t * s))


def _softplus_block(x, y, d, zero, one, b, th):
    bx = x * b if b is not None else x
    e = np.abs(bx)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-|bx|), in (0, 1]: no overflow
    s = e + one
    if x.dtype.char == "d":
        np.log1p(e, out=y)
    else:
        np.log(s, out=y)
    y += np.maximum(bx, zero)
    if b is not None:
        y /= b
    if d is not None:
        # sigmoid(bx): 1 / (1 + e) for bx >= 0, e / (1 + e) for bx < 0
        np.divide(one, s, out=s)
        e -= one
        e *= np.less(bx, zero)
        e += one
        np.multiply(e, s, out=d)
    if th is not None:
        over = np.greater(bx, th)
        np.copyto(y, x, where=over)
        if d is not None:
            np.copyto(d, one, where=over)


def _softplus_args(dt, beta, th):
    # float32 with beta 1 and a threshold of at least 17: exp(-bx) is below half an ulp of 1 beyond the threshold,
    # so the formula itself gives x and 1 there and the threshold needs no select (th None)
    fix = not (dt.char == "f" and beta == 1.0 and th >= 17.0)
    return (np.array(0.0, dt), np.array(1.0, dt), None if beta == 1.0 else np.array(beta, dt),
            np.array(th, dt) if fix else None)


def _softplus_fwd(x, beta, th):
    return _blockwise(_softplus_block, x, True, *_softplus_args(x.dtype, beta, th))


def _softplus_fwd_nograd(x, beta, th):
    return _blockwise(_softplus_block, x, False, *_softplus_args(x.dtype, beta, th))[0]


def _softplus_dfwd(g, x, beta, th, d):
    return g * d


def _softplus_d2(x, beta, th, _=None):
    s = _sig(x * beta)
    return ember.where(x * beta > th, 0.0, s * (1 - s) * beta)


def _logsigmoid_fwd(x):
    y = _log1p(np.exp(-np.abs(x)))
    np.subtract(np.minimum(x, 0), y, out=y)
    return y


def _logsigmoid_d2(x):
    s = _sig(x)
    return -s * (1 - s)


_SILU = _fused("silu", _silu_fwd, _silu_dfwd, _silu_d2, "SiluBackward0", keep=True)
_MISH = _fused("mish", _mish_fwd, _mish_dfwd, _mish_d2, "MishBackward0")
_SOFTPLUS = _fused("softplus", _softplus_fwd, _softplus_dfwd, _softplus_d2, "SoftplusBackward0", keep=True)
_SOFTPLUS_NOGRAD = Op("softplus", _in_f32(_softplus_fwd_nograd), _SOFTPLUS.bwd, SAVE_INPUTS,
                      node_name="SoftplusBackward0")
_LOGSIGMOID = _fused("log_sigmoid", _logsigmoid_fwd, lambda g, x: g * _sigmoid_np(-x), _logsigmoid_d2,
                     "LogSigmoidBackward0")


def silu(input, inplace=False):
    """Same as `torch.nn.functional.silu`."""
    if inplace:
        return _silu_(input)
    if getattr(input, "is_complex", bool)():  # torch's complex silu (forward only); the fused kernel is real-only
        if input.requires_grad and GRAD[0]:
            raise RuntimeError("silu does not support automatic differentiation for outputs with complex dtype.")
        return input * input.sigmoid()
    _check(input, "silu_cpu", "silu")
    return dispatch1(_SILU, input)


_silu_ = _inplace_pair(silu, "silu_")


def mish(input, inplace=False):
    """Same as `torch.nn.functional.mish`."""
    if inplace:
        return _mish_(input)
    _check(input, "mish_cpu", "mish")
    return dispatch1(_MISH, input)


_mish_ = _inplace_pair(mish, "mish_")


def softplus(input, beta=1.0, threshold=20.0):
    """Same as `torch.nn.functional.softplus`."""
    if AUTOCAST[0]:
        input, = cast_args("softplus", (input,))
    _check(input, "softplus_cpu", "softplus")
    op = _SOFTPLUS if _graph(input) else _SOFTPLUS_NOGRAD
    return dispatch1(op, input, float(beta), float(threshold))


def logsigmoid(input):
    """Same as `torch.nn.functional.logsigmoid`."""
    _check(input, "log_sigmoid_cpu", "logsigmoid")
    return dispatch1(_LOGSIGMOID, input)


# ---------------- hardsigmoid, hardswish, shrinks ----------------
def _hardsigmoid_fwd(x):
    y = x / 6
    y += 0.5
    return np.clip(y, 0, 1, out=y)


def _hardswish_fwd(x):
    return _where(x <= -3, _zero(x), _where(x >= 3, x, x * (x + 3) / 6))


def _hardswish_dfwd(g, x):
    # torch's vectorized kernel: 0 for x <= -3, g for x >= 3
    return _where(x <= -3, _zero(g), _where(x < 3, g * (x / 3 + 0.5), g))


def _hardswish_d2(x):
    return ((x > -3) & (x < 3)).to(x.dtype) * (1 / 3)


def _softshrink_fwd(x, lam):
    return _where(x > lam, x - lam, _where(x < -lam, x + lam, _zero(x)))


def _shrink_dfwd(g, x, lam):
    return _where((x >= -lam) & (x <= lam), _zero(g), g)


_HARDSIGMOID = _fused("hardsigmoid", _hardsigmoid_fwd,
                      lambda g, x: g * ((x > -3) & (x < 3)) * _ONE_SIXTH, None, "HardsigmoidBackward0")
_HARDSWISH = _fused("hardswish", _hardswish_fwd, _hardswish_dfwd, _hardswish_d2, "HardswishBackward0")
_SOFTSHRINK = _fused("softshrink", _softshrink_fwd, _shrink_dfwd, None, "SoftshrinkBackward0")
_HARDSHRINK = _fused("hardshrink", lambda x, lam: _where((x >= -lam) & (x <= lam), _zero(x), x), _shrink_dfwd,
                     None, "HardshrinkBackward0")


def hardsigmoid(input, inplace=False):
    """Same as `torch.nn.functional.hardsigmoid`."""
    if inplace:
        return _hardsigmoid_(input)
    _check(input, "hardsigmoid_cpu", "hardsigmoid")
    return dispatch1(_HARDSIGMOID, input)


_hardsigmoid_ = _inplace_pair(hardsigmoid, "hardsigmoid_")


def hardswish(input, inplace=False):
    """Same as `torch.nn.functional.hardswish`."""
    if inplace:
        return _hardswish_(input)
    _check(input, "hardswish_cpu", "hardswish")
    return dispatch1(_HARDSWISH, input)


_hardswish_ = _inplace_pair(hardswish, "hardswish_")


def _check_lambd(input, lambd):
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{'Double' if input._data.dtype == np.float64 else 'Float'}, but found {lambd:g}")


def softshrink(input, lambd=0.5):
    """Same as `torch.nn.functional.softshrink`."""
    _check(input, "softshrink_check", "softshrink")
    _check_lambd(input, lambd)
    return dispatch1(_SOFTSHRINK, input, lambd)


def hardshrink(input, lambd=0.5):
    """Same as `torch.nn.functional.hardshrink`."""
    _check(input, "hardshrink_cpu", "hardshrink")
    return dispatch1(_HARDSHRINK, input, lambd)


def softsign(input):
    """Same as `torch.nn.functional.softsign`."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """Same as `torch.nn.functional.tanhshrink`."""
    return input - input.tanh()


def sigmoid(input):
    """Same as `torch.nn.functional.sigmoid`."""
    return ember.sigmoid(input)


def tanh(input):
    """Same as `torch.nn.functional.tanh`."""
    return ember.tanh(input)


# ---------------- glu ----------------
def _glu_fwd(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return a * _sigmoid_np(b)


def _glu_bwd(ctx, g):
    x = ctx.inputs[0]
    a, b = x.chunk(2, ctx.attrs[0])
    s = _sig(b)
    ga = g * s
    return ember.cat([ga, ga * a * (1 - s)], ctx.attrs[0])


_GLU = Op("glu", _in_f32(_glu_fwd), _glu_bwd, SAVE_INPUTS, node_name="GluBackward0")


def glu(input, dim=-1):
    """Same as `torch.nn.functional.glu`."""
    _check(input, "glu_cpu", "glu")
    nd = input._data.ndim
    if nd == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
    dim %= nd
    n = input._data.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {n}")
    return dispatch1(_GLU, input, dim)


# ---------------- prelu, rrelu ----------------
def _prelu_bwd(ctx, g):
    x, w = ctx.inputs
    pos = x > 0
    need = ctx.needs_input_grad
    gx = ember.where(pos, g, g * w) if need[0] else None
    gw = ember.where(pos, 0.0, g * x).to(g.dtype) if need[1] else None
    return gx, gw


_PRELU = Op("prelu", _in_f32(lambda x, w: np.where(x > 0, x, x * w)), _prelu_bwd, SAVE_INPUTS,
            node_name="PreluKernelBackward0")


def prelu(input, weight):
    """Same as `torch.nn.functional.prelu`."""
    if AUTOCAST[0]:
        input, weight = cast_args("prelu", (input, weight))
    n = weight.numel()
    nd = input._data.ndim
    if n != 1:
        if weight.dim() != 1:
            raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.dim()}")
        ch = input._data.shape[1] if nd >= 2 else 1
        if n != ch:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {ch}.")
        if nd >= 2:
            weight = weight.reshape((n,) + (1,) * (nd - 2))
    elif weight.dim() > nd:
        weight = weight.reshape(())
    if input.dtype != weight.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype} but found {weight.dtype}")
    return dispatch2(_PRELU, input, weight)


def _noise_fwd(x, noise):
    return x * noise


_RRELU_EVAL = Op("rrelu_with_noise", _LEAKY.fwd, _LEAKY.bwd, SAVE_INPUTS, node_name="RreluWithNoiseBackward0")
_RRELU = Op("rrelu_with_noise", _noise_fwd, lambda ctx, g: dispatch1(_RRELU, g, ctx.attrs[0]),
            node_name="RreluWithNoiseBackward0")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Same as `torch.nn.functional.rrelu`: the noise comes from ember's default generator."""
    if inplace:
        return rrelu_(input, lower, upper, training)
    _check(input, "leaky_relu_cpu", "rrelu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return dispatch1(_RRELU_EVAL, input, (lower + upper) / 2)
    d = input._data
    u = _engine(None, input.device).uniform(d.shape, np.float64)
    slope = (lower + (upper - lower) * u).astype(d.dtype if d.dtype.kind == "f" else np.float32)
    noise = np.where(d >= 0, slope.dtype.type(1), slope)
    return dispatch1(_RRELU, input, noise if d.dtype.kind == "f" else noise.astype(d.dtype))


rrelu_ = _inplace_pair(rrelu, "rrelu_")
