"""Elementwise unary math: forward against NumPy/scipy, gradcheck, double backward, dtypes, in-place, out=."""
import math

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp

import ember
from ember.autograd import gradcheck
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _u(lo, hi, shape=(3, 4)):
    return lambda rng: [rng.uniform(lo, hi, shape)]


def _away(lo, hi, shape=(3, 4)):
    """Values in [lo, hi] at least 0.1 from integers and half-integers (kinks of abs/floor/round/clamp...)."""
    def make(rng):
        x = rng.uniform(lo, hi, shape)
        frac = x * 2 - np.floor(x * 2)
        return [np.where(frac < 0.2, x + 0.1, np.where(frac > 0.8, x - 0.1, x))]
    return make


def _c(scale=1.0, shift=0.0, shape=(2, 3)):
    return lambda rng: [shift + scale * (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))]


def _np_sign(x):
    return np.where(np.isnan(x), 0, np.sign(x))


def _np_logit(x, eps=None):
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    return np.log(x / (1 - x))


def _np_mvlgamma(x, p):
    return sum(sp.gammaln(x - j / 2) for j in range(p)) + p * (p - 1) / 4 * math.log(math.pi)


def _np_round(x, decimals):
    f = 10.0 ** decimals
    return np.rint(x * f) / f


SPECS = [
    OpSpec("abs", ember.abs, np.abs, _away(-2, 2)),
    OpSpec("absolute", ember.absolute, np.abs, _away(-2, 2)),
    OpSpec("neg", ember.neg, np.negative, _u(-2, 2)),
    OpSpec("negative", ember.negative, np.negative, _u(-2, 2)),
    OpSpec("positive", ember.positive, lambda x: x, _u(-2, 2)),
    OpSpec("exp", ember.exp, np.exp, _u(-2, 2), gradgrad=True),
    OpSpec("exp2", ember.exp2, np.exp2, _u(-2, 2)),
    OpSpec("expm1", ember.expm1, np.expm1, _u(-2, 2)),
    OpSpec("log", ember.log, np.log, _u(0.3, 3), gradgrad=True),
    OpSpec("log2", ember.log2, np.log2, _u(0.3, 3)),
    OpSpec("log10", ember.log10, np.log10, _u(0.3, 3)),
    OpSpec("log1p", ember.log1p, np.log1p, _u(-0.5, 3)),
    OpSpec("sqrt", ember.sqrt, np.sqrt, _u(0.3, 3), gradgrad=True),
    OpSpec("rsqrt", ember.rsqrt, lambda x: 1 / np.sqrt(x), _u(0.3, 3)),
    OpSpec("square", ember.square, np.square, _u(-2, 2)),
    OpSpec("sin", ember.sin, np.sin, _u(-3, 3), gradgrad=True),
    OpSpec("cos", ember.cos, np.cos, _u(-3, 3)),
    OpSpec("tan", ember.tan, np.tan, _u(-1.2, 1.2)),
    OpSpec("asin", ember.asin, np.arcsin, _u(-0.9, 0.9)),
    OpSpec("arcsin", ember.arcsin, np.arcsin, _u(-0.9, 0.9)),
    OpSpec("acos", ember.acos, np.arccos, _u(-0.9, 0.9)),
    OpSpec("arccos", ember.arccos, np.arccos, _u(-0.9, 0.9)),
    OpSpec("atan", ember.atan, np.arctan, _u(-3, 3)),
    OpSpec("arctan", ember.arctan, np.arctan, _u(-3, 3)),
    OpSpec("sinh", ember.sinh, np.sinh, _u(-2, 2)),
    OpSpec("cosh", ember.cosh, np.cosh, _u(-2, 2)),
    OpSpec("tanh", ember.tanh, np.tanh, _u(-2, 2), gradgrad=True),
    OpSpec("asinh", ember.asinh, np.arcsinh, _u(-3, 3)),
    OpSpec("arcsinh", ember.arcsinh, np.arcsinh, _u(-3, 3)),
    OpSpec("acosh", ember.acosh, np.arccosh, _u(1.2, 3)),
    OpSpec("arccosh", ember.arccosh, np.arccosh, _u(1.2, 3)),
    OpSpec("atanh", ember.atanh, np.arctanh, _u(-0.9, 0.9)),
    OpSpec("arctanh", ember.arctanh, np.arctanh, _u(-0.9, 0.9)),
    OpSpec("sigmoid", ember.sigmoid, sp.expit, _u(-4, 4), gradgrad=True),
    OpSpec("logit", ember.logit, _np_logit, _u(0.05, 0.95)),
    OpSpec("logit_eps", lambda x: ember.logit(x, eps=0.2), lambda x: _np_logit(x, 0.2), _away(0.05, 0.95)),
    OpSpec("erf", ember.erf, sp.erf, _u(-2, 2), gradgrad=True),
    OpSpec("erfc", ember.erfc, sp.erfc, _u(-2, 2)),
    OpSpec("erfinv", ember.erfinv, sp.erfinv, _u(-0.9, 0.9)),
    OpSpec("sign", ember.sign, _np_sign, _away(-2, 2)),
    OpSpec("sgn", ember.sgn, _np_sign, _away(-2, 2)),
    OpSpec("floor", ember.floor, np.floor, _away(-3, 3)),
    OpSpec("ceil", ember.ceil, np.ceil, _away(-3, 3)),
    OpSpec("round", ember.round, np.rint, _away(-3, 3)),
    OpSpec("round_decimals", lambda x: ember.round(x, decimals=2), lambda x: _np_round(x, 2), _u(-3, 3)),
    OpSpec("round_neg_decimals", lambda x: ember.round(x, decimals=-1), lambda x: _np_round(x, -1), _u(-300, 300)),
    OpSpec("trunc", ember.trunc, np.trunc, _away(-3, 3)),
    OpSpec("fix", ember.fix, np.trunc, _away(-3, 3)),
    OpSpec("frac", ember.frac, lambda x: x - np.trunc(x), _away(-3, 3)),
    OpSpec("reciprocal", ember.reciprocal, np.reciprocal, _u(0.3, 3)),
    OpSpec("nan_to_num", ember.nan_to_num, np.nan_to_num, _u(-2, 2)),
    OpSpec("clamp", lambda x: ember.clamp(x, -1.0, 1.0), lambda x: np.clip(x, -1, 1), _away(-2, 2)),
    OpSpec("clamp_min", lambda x: ember.clamp(x, min=0.3), lambda x: np.maximum(x, 0.3), _away(-2, 2)),
    OpSpec("clamp_max", lambda x: ember.clamp(x, max=0.3), lambda x: np.minimum(x, 0.3), _away(-2, 2)),
    OpSpec("clip", lambda x: ember.clip(x, -1.0, 1.0), lambda x: np.clip(x, -1, 1), _away(-2, 2)),
    OpSpec("clamp_min_fn", lambda x: ember.clamp_min(x, 0.3), lambda x: np.maximum(x, 0.3), _away(-2, 2)),
    OpSpec("clamp_max_fn", lambda x: ember.clamp_max(x, 0.3), lambda x: np.minimum(x, 0.3), _away(-2, 2)),
    OpSpec("clamp_tensor", lambda x, lo, hi: ember.clamp(x, lo, hi),
           lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
           lambda rng: [rng.uniform(-2, 2, (3, 4)), rng.uniform(-1.5, -0.5, (4,)), rng.uniform(0.5, 1.5, (3, 1))]),
    OpSpec("clamp_tensor_min", lambda x, lo: ember.clamp(x, min=lo), np.maximum,
           lambda rng: [rng.uniform(-2, 2, (3, 4)), rng.uniform(-1, 1, (3, 4))]),
    OpSpec("clamp_min_tensor", lambda x, lo: ember.clamp_min(x, lo), np.maximum,
           lambda rng: [rng.uniform(-2, 2, (3, 4)), rng.uniform(-1, 1, (4,))]),
    OpSpec("clamp_max_tensor", lambda x, hi: ember.clamp_max(x, hi), np.minimum,
           lambda rng: [rng.uniform(-2, 2, (3, 4)), rng.uniform(-1, 1, (4,))]),
    OpSpec("lgamma", ember.lgamma, sp.gammaln, _u(0.5, 4)),
    OpSpec("digamma", ember.digamma, sp.psi, _u(0.5, 4)),
    OpSpec("polygamma1", lambda x: ember.polygamma(1, x), lambda x: sp.polygamma(1, x), _u(0.5, 4), rtol=1e-4),
    OpSpec("polygamma3", lambda x: ember.polygamma(3, x), lambda x: sp.polygamma(3, x), _u(0.5, 4), rtol=1e-4),
    OpSpec("mvlgamma", lambda x: ember.mvlgamma(x, 3), lambda x: _np_mvlgamma(x, 3), _u(1.5, 4)),
    OpSpec("deg2rad", ember.deg2rad, np.deg2rad, _u(-180, 180)),
    OpSpec("rad2deg", ember.rad2deg, np.rad2deg, _u(-3, 3)),
    OpSpec("sinc", ember.sinc, np.sinc, _u(-2, 2)),
    OpSpec("relu", ember.relu, lambda x: np.maximum(x, 0), _away(-2, 2)),
    OpSpec("conj", ember.conj, np.conj, _u(-2, 2)),
    OpSpec("conj_physical", ember.conj_physical, np.conj, _u(-2, 2)),
    OpSpec("resolve_conj", ember.resolve_conj, lambda x: x, _u(-2, 2)),
    OpSpec("angle", ember.angle, lambda x: np.where(x < 0, np.pi, 0.0), _away(-2, 2)),
    OpSpec("i0", ember.i0, sp.i0, _u(-3, 3)),
    OpSpec("isnan", ember.isnan, np.isnan, lambda rng: [np.array([1.0, np.nan, np.inf, -np.inf])], grad=False),
    OpSpec("isinf", ember.isinf, np.isinf, lambda rng: [np.array([1.0, np.nan, np.inf, -np.inf])], grad=False),
    OpSpec("isfinite", ember.isfinite, np.isfinite, lambda rng: [np.array([1.0, np.nan, np.inf, -np.inf])],
           grad=False),
    OpSpec("isposinf", ember.isposinf, np.isposinf, lambda rng: [np.array([1.0, np.nan, np.inf, -np.inf])],
           grad=False),
    OpSpec("isneginf", ember.isneginf, np.isneginf, lambda rng: [np.array([1.0, np.nan, np.inf, -np.inf])],
           grad=False),
    OpSpec("isreal", ember.isreal, np.isreal, _u(-2, 2), grad=False),
    OpSpec("signbit", ember.signbit, np.signbit, lambda rng: [np.array([1.0, -0.0, 0.0, -2.0, np.inf])], grad=False),
    OpSpec("logical_not", ember.logical_not, np.logical_not, lambda rng: [np.array([1.0, 0.0, -0.0, 2.0])],
           grad=False),
    OpSpec("bitwise_not", ember.bitwise_not, np.invert, lambda rng: [np.array([0, 5, -3])], grad=False,
           dtypes=(np.int64,)),
]

COMPLEX_SPECS = [
    OpSpec("abs_c", ember.abs, np.abs, _c(shift=0.1)),
    OpSpec("neg_c", ember.neg, np.negative, _c()),
    OpSpec("exp_c", ember.exp, np.exp, _c(), gradgrad=True),
    OpSpec("exp2_c", ember.exp2, np.exp2, _c()),
    OpSpec("expm1_c", ember.expm1, np.expm1, _c()),
    OpSpec("log_c", ember.log, np.log, _c(shift=2)),
    OpSpec("log2_c", ember.log2, np.log2, _c(shift=2)),
    OpSpec("log10_c", ember.log10, np.log10, _c(shift=2)),
    OpSpec("log1p_c", ember.log1p, np.log1p, _c(shift=1)),
    OpSpec("sqrt_c", ember.sqrt, np.sqrt, _c(shift=2), gradgrad=True),
    OpSpec("rsqrt_c", ember.rsqrt, lambda x: 1 / np.sqrt(x), _c(shift=2)),
    OpSpec("square_c", ember.square, np.square, _c()),
    OpSpec("reciprocal_c", ember.reciprocal, np.reciprocal, _c(shift=2)),
    OpSpec("sin_c", ember.sin, np.sin, _c(), gradgrad=True),
    OpSpec("cos_c", ember.cos, np.cos, _c()),
    OpSpec("tan_c", ember.tan, np.tan, _c(0.5)),
    OpSpec("asin_c", ember.asin, np.arcsin, _c(0.5)),
    OpSpec("acos_c", ember.acos, np.arccos, _c(0.5)),
    OpSpec("atan_c", ember.atan, np.arctan, _c(0.5)),
    OpSpec("sinh_c", ember.sinh, np.sinh, _c()),
    OpSpec("cosh_c", ember.cosh, np.cosh, _c()),
    OpSpec("tanh_c", ember.tanh, np.tanh, _c(0.5), gradgrad=True),
    OpSpec("asinh_c", ember.asinh, np.arcsinh, _c(0.5)),
    OpSpec("acosh_c", ember.acosh, np.arccosh, _c(0.5, shift=2)),
    OpSpec("atanh_c", ember.atanh, np.arctanh, _c(0.5)),
    OpSpec("sigmoid_c", ember.sigmoid, lambda x: 1 / (1 + np.exp(-x)), _c(), gradgrad=True),
    OpSpec("sgn_c", ember.sgn, lambda x: x / np.abs(x), _c(shift=0.1)),
    OpSpec("angle_c", ember.angle, np.angle, _c(shift=0.1)),
    OpSpec("conj_c", ember.conj, np.conj, _c()),
    OpSpec("conj_physical_c", ember.conj_physical, np.conj, _c()),
    OpSpec("sinc_c", ember.sinc, np.sinc, _c(0.5)),
    OpSpec("nan_to_num_c", ember.nan_to_num, np.nan_to_num, _c()),
]


def _gradgrad(spec):
    """Double backward: gradcheck (with respect to the inputs) of the first derivative built with create_graph,
    for seeded grad_outputs."""
    ins = [ember.tensor(a).requires_grad_(True) for a in spec.arrays()]
    out = spec.fn(*ins)
    rng = np.random.default_rng(1)
    go = rng.standard_normal(out.shape)
    if out.is_complex():
        go = go + 1j * rng.standard_normal(out.shape)
    go = ember.tensor(go.astype(out.numpy(force=True).dtype))

    def first_derivative(*args):
        with ember.enable_grad():  # the numerical Jacobian calls this under no_grad
            return ember.autograd.grad(spec.fn(*args), args, go, create_graph=True)

    assert gradcheck(first_derivative, ins, atol=spec.grad_atol, rtol=spec.grad_rtol)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    if dtype not in spec.dtypes:
        dtype = spec.dtypes[0]
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS + COMPLEX_SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS + COMPLEX_SPECS if s.gradgrad], ids=repr)
def test_second_derivative_with_fixed_grad_outputs(spec):
    _gradgrad(spec)


@pytest.mark.parametrize("spec", COMPLEX_SPECS, ids=repr)
def test_complex_forward(spec):
    check_forward(spec)


@pytest.mark.parametrize("spec", [s for s in COMPLEX_SPECS if s.name not in ("conj_c",)], ids=repr)
def test_complex_gradcheck(spec):
    check_grad(spec)


# ---------------- dtypes ----------------
FLOAT_OPS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin",
             "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "logit", "erf", "erfc",
             "erfinv", "reciprocal", "lgamma", "digamma", "deg2rad", "rad2deg", "sinc", "angle", "i0"]
KEEP_OPS = ["abs", "neg", "sign", "sgn", "floor", "ceil", "round", "trunc", "relu", "square", "nan_to_num"]


@pytest.mark.parametrize("name", FLOAT_OPS)
@pytest.mark.parametrize("dt", [ember.bool, ember.uint8, ember.int32, ember.int64])
def test_integer_inputs_compute_in_default_float(name, dt):
    x = ember.tensor([1, 0, 1]).to(dt)
    r = getattr(ember, name)(x)
    assert r.dtype is ember.float32
    ref = getattr(ember, name)(ember.tensor([1.0, 0.0, 1.0]))
    assert_close(r, ref.numpy())


def test_integer_inputs_follow_default_dtype():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.exp(ember.tensor([1, 2])).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("name", KEEP_OPS)
@pytest.mark.parametrize("dt", [ember.uint8, ember.int8, ember.int32, ember.int64])
def test_integer_dtypes_are_kept(name, dt):
    x = ember.tensor([3, 0, 5]).to(dt)
    r = getattr(ember, name)(x)
    assert r.dtype is dt
    ref = {"abs": np.abs, "neg": np.negative, "square": np.square, "relu": lambda a: np.maximum(a, 0),
           "sign": np.sign, "sgn": np.sign}.get(name, lambda a: a)
    np.testing.assert_array_equal(r.numpy(), ref(x.numpy()))


@pytest.mark.parametrize("name", FLOAT_OPS + KEEP_OPS + ["frac"])
@pytest.mark.parametrize("dt", [ember.float16, ember.bfloat16])
def test_half_precisions_compute_in_their_dtype(name, dt):
    x = ember.tensor([0.25, 0.5, 0.75])
    r = getattr(ember, name)(x.to(dt))
    assert r.dtype is dt
    ref = getattr(ember, name)(x)
    np.testing.assert_allclose(r.float().numpy(), ref.numpy(), rtol=2e-2, atol=1e-2)


def test_complex_results():
    z = ember.tensor([3 + 4j, -1 + 0j])
    assert ember.abs(z).dtype is ember.float32
    assert_close(ember.abs(z), [5.0, 1.0])
    assert ember.angle(z).dtype is ember.float32
    assert_close(ember.angle(z), [math.atan2(4, 3), math.pi])
    assert_close(ember.sgn(z), [0.6 + 0.8j, -1])
    assert_close(ember.isreal(z), [False, True])
    zd = ember.tensor([3 + 4j], dtype=ember.complex128)
    assert ember.abs(zd).dtype is ember.float64
    assert ember.exp(zd).dtype is ember.complex128


def test_square_of_bool_is_int64():
    r = ember.square(ember.tensor([True, False]))
    assert r.dtype is ember.int64
    assert r.tolist() == [1, 0]


def test_sign_of_bool_and_predicates_dtypes():
    assert ember.sign(ember.tensor([True, False])).dtype is ember.bool
    for f in (ember.isnan, ember.isinf, ember.isfinite, ember.isposinf, ember.isneginf, ember.isreal, ember.signbit,
              ember.logical_not):
        for x in (ember.tensor([1, 2]), ember.tensor([1.0]), ember.tensor([True])):
            assert f(x).dtype is ember.bool


# ---------------- values at torch's conventions ----------------
def test_edge_values():
    nan, inf = float("nan"), float("inf")
    assert ember.sign(ember.tensor([nan, -0.0, 0.0, -2.0])).tolist() == [0.0, 0.0, 0.0, -1.0]
    assert not np.signbit(ember.sign(ember.tensor([-0.0])).numpy()).any()
    assert_close(ember.angle(ember.tensor([-1.0, 0.0, -0.0, nan, inf])), [math.pi, 0, 0, nan, 0])
    assert_close(ember.logit(ember.tensor([0.0, 0.5, 1.0, 2.0])), [-inf, 0, inf, nan])
    assert_close(ember.rsqrt(ember.tensor([0.0, -1.0, 4.0])), [inf, nan, 0.5])
    assert_close(ember.frac(ember.tensor([-1.5, 2.25, inf])), [-0.5, 0.25, nan])
    assert_close(ember.sinc(ember.tensor([0.0, 0.5])), [1.0, 2 / math.pi])
    assert_close(ember.digamma(ember.tensor([0.0, -0.0])), [-inf, inf])
    assert_close(ember.round(ember.tensor([0.5, 1.5, 2.5, -0.5])), [0.0, 2.0, 2.0, -0.0])
    assert_close(ember.round(ember.tensor([1.2345, -0.125]), decimals=2), [1.23, -0.12])
    assert_close(ember.relu(ember.tensor([nan, -1.0])), [nan, 0.0])
    assert_close(ember.clamp(ember.tensor([1.0, 5.0]), min=4, max=2), [2.0, 2.0])
    assert_close(ember.clamp(ember.tensor([1.0, nan]), 0, 2), [1.0, nan])
    assert_close(ember.exp(ember.tensor([1000.0])), [inf])  # no overflow warning (warnings are errors here)
    assert_close(ember.log(ember.tensor([-1.0, 0.0])), [nan, -inf])


def test_nan_to_num_defaults_and_values():
    x = ember.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    f32 = np.finfo(np.float32)
    assert_close(ember.nan_to_num(x), [0.0, f32.max, f32.min, 1.0], rtol=0)
    assert_close(ember.nan_to_num(x, nan=1.0, posinf=2.0, neginf=3.0), [1.0, 2.0, 3.0, 1.0])
    assert_close(ember.nan_to_num(x.half()), [0.0, 65504.0, -65504.0, 1.0], rtol=0)
    bf = float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)
    assert_close(ember.nan_to_num(x.bfloat16()), [0.0, bf, -bf, 1.0], rtol=0)
    assert ember.nan_to_num(ember.tensor([1, 2])).tolist() == [1, 2]


def test_mvlgamma_p_and_dtypes():
    # torch 2.x no longer checks x > (p-1)/2: log|Gamma_p| is computed anyway
    assert_close(ember.mvlgamma(ember.tensor([0.1]), 2), [4.1396], rtol=1e-4)
    with pytest.raises(RuntimeError, match="The input tensor may not be a boolean tensor."):
        ember.mvlgamma(ember.tensor([True]), 1)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        ember.mvlgamma(ember.tensor([1.0]), 0)
    assert ember.mvlgamma(ember.tensor([1, 2]), 1).dtype is ember.float32


def test_polygamma_method_and_errors():
    x = ember.tensor([1.0, 2.0])
    assert_close(x.polygamma(2), sp.polygamma(2, np.array([1.0, 2.0])), rtol=1e-5)
    assert_close(ember.polygamma(0, x), sp.psi(np.array([1.0, 2.0])))
    with pytest.raises(RuntimeError, match="does not support negative n"):
        ember.polygamma(-1, x)


# ---------------- gradients at torch's conventions ----------------
def _grad(fn, values, dtype=ember.float64):
    x = ember.tensor(values, dtype=dtype, requires_grad=True)
    fn(x).sum().backward()
    return x.grad


def test_piecewise_gradients():
    assert _grad(ember.abs, [-2.0, 0.0, 3.0]).tolist() == [-1.0, 0.0, 1.0]
    for f in (ember.sign, ember.floor, ember.ceil, ember.round, ember.trunc, lambda t: ember.round(t, decimals=1)):
        assert _grad(f, [-1.3, 0.0, 2.7]).tolist() == [0.0, 0.0, 0.0]
    assert _grad(ember.relu, [-1.0, 0.0, 2.0]).tolist() == [0.0, 0.0, 1.0]
    # clamp passes the gradient where min <= x <= max, bounds included
    assert _grad(lambda t: t.clamp(0.0, 1.0), [-1.0, 0.0, 0.5, 1.0, 2.0]).tolist() == [0, 1, 1, 1, 0]
    assert _grad(lambda t: t.clamp(min=0.0), [-1.0, 0.0, 2.0]).tolist() == [0, 1, 1]
    assert _grad(lambda t: t.clamp(max=0.0), [-1.0, 0.0, 2.0]).tolist() == [1, 1, 0]
    assert _grad(ember.frac, [-1.3, 2.7]).tolist() == [1.0, 1.0]
    assert _grad(ember.nan_to_num, [float("nan"), 1.0, float("inf")]).tolist() == [0.0, 1.0, 0.0]
    assert _grad(ember.sinc, [0.0]).tolist() == [0.0]
    assert _grad(ember.angle, [-1.0, 2.0]).tolist() == [0.0, 0.0]


def test_logit_gradient_outside_domain():
    g = _grad(ember.logit, [0.5, 2.0])
    assert g[0].item() == pytest.approx(4.0) and math.isnan(g[1].item())
    g = _grad(lambda t: ember.logit(t, eps=0.1), [0.05, 0.5, 0.95])
    assert g.tolist() == pytest.approx([0.0, 4.0, 0.0])


def test_clamp_tensor_bound_gradients():
    x = ember.tensor([-2.0, 0.0, 2.0], dtype=ember.float64, requires_grad=True)
    lo = ember.tensor([-1.0, -1.0, -1.0], dtype=ember.float64, requires_grad=True)
    hi = ember.tensor(1.0, dtype=ember.float64, requires_grad=True)
    ember.clamp(x, lo, hi).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0]
    assert hi.grad.item() == 1.0


def test_abs_and_sgn_at_complex_zero():
    z = ember.tensor([0j, 3 + 4j], dtype=ember.complex128, requires_grad=True)
    ember.sgn(z).abs().sum().backward()
    assert np.isfinite(z.grad.numpy()).all()


def test_grad_fn_names():
    x = ember.tensor([0.3, 0.6], requires_grad=True)
    names = {"abs": "AbsBackward0", "exp": "ExpBackward0", "log1p": "Log1PBackward0", "square": "PowBackward0",
             "arcsin": "AsinBackward0", "fix": "TruncBackward0", "deg2rad": "Deg2RadBackward0",
             "sigmoid": "SigmoidBackward0", "relu": "ReluBackward0", "nan_to_num": "NanToNumBackward0",
             "erfinv": "ErfinvBackward0", "sgn": "SgnBackward0", "i0": "I0Backward0", "angle": "AngleBackward0"}
    for fn, node in names.items():
        assert getattr(ember, fn)(x).grad_fn.name() == node, fn
    assert ember.round(x, decimals=1).grad_fn.name() == "RoundBackward1"
    assert ember.clamp(x, 0.1, 0.5).grad_fn.name() == "ClampBackward1"
    assert ember.clamp(x, ember.tensor(0.1), ember.tensor(0.5)).grad_fn.name() == "ClampBackward0"
    assert ember.clamp_min(x, 0.1).grad_fn.name() == "ClampMinBackward0"
    assert ember.polygamma(1, x).grad_fn.name() == "PolygammaBackward0"
    assert ember.conj(ember.tensor([1j], requires_grad=True)).grad_fn.name() == "ConjBackward0"


def test_higher_order_derivatives_of_special_functions():
    x = ember.tensor([0.7, 1.9], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(ember.lgamma(x).sum(), x, create_graph=True)
    (h,) = ember.autograd.grad(g.sum(), x)
    assert_close(h, sp.polygamma(1, np.array([0.7, 1.9])))
    (g,) = ember.autograd.grad(ember.i0(x).sum(), x, create_graph=True)
    assert_close(g, sp.i1(np.array([0.7, 1.9])))
    (h,) = ember.autograd.grad(g.sum(), x)
    xs = np.array([0.7, 1.9])
    assert_close(h, sp.i0(xs) - sp.i1(xs) / xs)


# ---------------- in-place and out= ----------------
INPLACE = ["abs", "absolute", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
           "rsqrt", "square", "sin", "cos", "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh",
           "cosh", "tanh", "asinh", "arcsinh", "atanh", "arctanh", "sigmoid", "logit", "erf", "erfc", "erfinv",
           "sign", "sgn", "floor", "ceil", "round", "trunc", "fix", "frac", "reciprocal", "nan_to_num", "lgamma",
           "digamma", "deg2rad", "rad2deg", "sinc", "relu", "i0", "logical_not"]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_matches_out_of_place(name):
    base = np.array([0.2, 0.45, 0.7], dtype=np.float32)
    x = ember.tensor(base)
    expected = getattr(x, name)()
    y = ember.tensor(base)
    v = y._version
    r = getattr(y, name + "_")()
    assert r is y and y._version == v + 1
    assert_close(y, expected.to(y.dtype).numpy())


@pytest.mark.parametrize("name", ["exp", "sin", "sigmoid", "sqrt", "abs", "neg", "tanh", "clamp"])
def test_inplace_records_graph(name):
    a = ember.tensor([0.2, 0.5, 0.9], dtype=ember.float64, requires_grad=True)
    kwargs = {"min": 0.3, "max": 0.8} if name == "clamp" else {}
    ref = getattr(a * 2, name)(**kwargs)
    ref.sum().backward()
    g_ref = a.grad.clone()
    a.grad = None
    y = a * 2
    getattr(y, name + "_")(**kwargs)
    y.sum().backward()
    assert_close(a.grad, g_ref.numpy())


def test_inplace_view_writes_through():
    base = ember.tensor([[0.1, 0.2], [0.3, 0.4]])
    base[0].exp_()
    assert_close(base, np.array([[np.exp(0.1), np.exp(0.2)], [0.3, 0.4]], dtype=np.float32))


def test_inplace_errors():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ember.tensor([1, 2]).exp_()
    with pytest.raises(RuntimeError, match="In-place abs is not supported for complex tensors."):
        ember.tensor([1j]).abs_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember.tensor([1.0], requires_grad=True).exp_()


def test_inplace_on_integers_and_bool():
    x = ember.tensor([-3, 2])
    x.abs_()
    assert x.tolist() == [3, 2]
    x.neg_()
    assert x.tolist() == [-3, -2]
    x.clamp_(min=-2)
    assert x.tolist() == [-2, -2]
    f = ember.tensor([1.5, 0.0])
    f.logical_not_()
    assert f.tolist() == [0.0, 1.0]
    b = ember.tensor([True, False])
    b.bitwise_not_()
    assert b.tolist() == [False, True]


def test_inplace_round_decimals_and_clamp_variants():
    x = ember.tensor([1.234, -5.678])
    x.round_(decimals=1)
    assert_close(x, [1.2, -5.7])
    x.clip_(-1, 1)
    assert_close(x, [1.0, -1.0])
    x.clamp_max_(0.5).clamp_min_(-0.5)
    assert_close(x, [0.5, -0.5])


def test_top_level_inplace_functions():
    x = ember.tensor([0.0, 1.0])
    assert ember.exp_(x) is x
    assert_close(x, [1.0, math.e])
    ember.relu_(x.neg_())
    assert x.tolist() == [0.0, 0.0]


def test_out():
    x = ember.tensor([0.5, 1.5])
    out = ember.empty(2)
    r = ember.exp(x, out=out)
    assert r is out
    assert_close(out, np.exp([0.5, 1.5]))
    out64 = ember.empty(2, dtype=ember.float64)
    ember.sin(ember.tensor([1, 2]), out=out64)
    assert_close(out64, np.sin([1.0, 2.0]), rtol=1e-6)
    resized = ember.empty(0)
    ember.clamp(x, 0.0, 1.0, out=resized)
    assert resized.tolist() == [0.5, 1.0]
    b = ember.empty(2, dtype=ember.bool)
    ember.isposinf(ember.tensor([float("inf"), 1.0]), out=b)
    assert b.tolist() == [True, False]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ember.exp(ember.tensor([1, 2]), out=ember.empty(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.exp(x, out=ember.empty(2, requires_grad=True))
    ember.round(x, decimals=1, out=out)
    ember.logit(ember.tensor([0.5]), out=ember.empty(1))
    ember.polygamma(1, x, out=out)
    assert_close(out, sp.polygamma(1, np.array([0.5, 1.5])), rtol=1e-5)


# ---------------- misc API ----------------
def test_operators_and_identity_functions():
    x = ember.tensor([-1.0, 2.0])
    assert (-x).tolist() == [1.0, -2.0]
    assert (+x) is x and ember.positive(x) is x
    assert abs(x).tolist() == [1.0, 2.0]
    assert (~ember.tensor([True, False])).tolist() == [False, True]
    assert (~ember.tensor([0, 5], dtype=ember.uint8)).tolist() == [255, 250]
    with pytest.raises(TypeError, match="only implemented on integer and Boolean-type tensors"):
        _ = ~x
    assert ember.conj(x) is x and x.conj() is x and ember.conj_physical(x) is x
    assert ember.resolve_conj(x) is x and ember.resolve_neg(x) is x
    assert not x.is_conj() and not ember.is_neg(x)
    z = ember.tensor([1 + 2j])
    assert ember.conj(z).tolist() == [1 - 2j]
    z.conj_physical_()
    assert z.tolist() == [1 - 2j]


@pytest.mark.parametrize("fn, x, err, msg", [
    (ember.abs, [True], NotImplementedError, "\"abs_cpu\" not implemented for 'Bool'"),
    (ember.neg, [True], RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported"),
    (ember.positive, [True], RuntimeError, "The `+` operator, on a bool tensor is not supported."),
    (ember.erf, [1j], NotImplementedError, "\"erf_vml_cpu\" not implemented for 'ComplexFloat'"),
    (ember.sign, [1j], NotImplementedError, "Unlike NumPy, torch.sign is not intended to support complex"),
    (ember.floor, [1j], NotImplementedError, "floor is not supported for complex inputs"),
    (ember.floor, [True], NotImplementedError, "\"floor_vml_cpu\" not implemented for 'Bool'"),
    (ember.frac, [1], NotImplementedError, "\"frac_cpu\" not implemented for 'Long'"),
    (ember.relu, [True], RuntimeError, "Boolean inputs not supported for relu"),
    (ember.relu, [1j], NotImplementedError, "clamp is not supported for complex types"),
    (lambda t: ember.clamp(t, 0, 1), [1j], NotImplementedError, "clamp is not supported for complex types"),
    (ember.clamp, [1.0], RuntimeError, "At least one of 'min' or 'max' must not be None"),
    (ember.deg2rad, [1j], RuntimeError, "deg2rad is not supported for complex tensors."),
    (ember.isposinf, [1j], RuntimeError, "isposinf does not support complex inputs."),
    (ember.signbit, [1j], NotImplementedError, "signbit is not implemented for complex tensors."),
    (ember.bitwise_not, [1.0], NotImplementedError, "\"bitwise_not_cpu\" not implemented for 'Float'"),
    (lambda t: ember.round(t, decimals=1), [1], NotImplementedError, "\"round_cpu\" not implemented for 'Long'"),
    (lambda t: ember.clamp(t, min=ember.tensor(0.0), max=1.0), [1.0], TypeError, "invalid combination"),
])
def test_errors(fn, x, err, msg):
    with pytest.raises(err, match=msg.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")
                       .replace("`", "`").replace(".", r"\.")):
        fn(ember.tensor(x))


def test_not_a_tensor():
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' \(position 1\) must be Tensor, not float"):
        ember.exp(3.0)


def test_no_graph_without_requires_grad():
    x = ember.tensor([0.5])
    assert ember.exp(x).grad_fn is None
    with ember.no_grad():
        assert ember.sin(ember.tensor([0.5], requires_grad=True)).grad_fn is None


def test_import_does_not_load_scipy():
    import subprocess
    import sys
    code = "import sys, ember; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_sigmoid_small_and_large_paths_agree():
    for n in (10, 5000):
        x = np.linspace(-30, 30, n)
        for dt in (np.float32, np.float64):
            assert_close(ember.sigmoid(ember.tensor(x.astype(dt))), sp.expit(x), rtol=1e-5, atol=1e-7)


def test_clamp_nan_bounds_and_relu_of_integers():
    nan = float("nan")
    assert_close(ember.clamp(ember.tensor([1.0, nan]), min=nan), [nan, nan])
    assert_close(ember.clamp(ember.tensor([1.0, 3.0]), max=nan), [nan, nan])
    assert ember.relu(ember.tensor([-3, 4])).tolist() == [0, 4]
    assert ember.clamp(ember.tensor([1, 2], dtype=ember.uint8), min=-1).tolist() == [255, 255]
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        ember.clamp(ember.tensor([1], dtype=ember.int8), min=1000)


def test_no_floating_point_warnings_like_torch():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.exp(ember.tensor([1000.0])).tolist() == [float("inf")]
        assert ember.log(ember.tensor([0.0])).tolist() == [float("-inf")]
        assert ember.sqrt(ember.tensor([-1.0])).isnan().tolist() == [True]


@pytest.mark.parametrize("dt", [ember.float16, ember.bfloat16])
def test_half_precision_inplace(dt):
    x = ember.tensor([0.5, 1.0]).to(dt)
    x.exp_()
    assert x.dtype is dt
    np.testing.assert_allclose(x.float().numpy(), np.exp([0.5, 1.0]), rtol=1e-2)
    x.clamp_(max=2.0).sigmoid_()
    np.testing.assert_allclose(x.float().numpy(), sp.expit(np.minimum(np.exp([0.5, 1.0]), 2.0)), rtol=1e-2)


def test_frexp():
    m, e = ember.frexp(ember.tensor([8.0, 0.3, -3.0, 0.0]))
    assert_close(m, [0.5, 0.6, -0.75, 0.0])
    assert e.dtype is ember.int32 and e.tolist() == [4, -1, 2, 0]
    r = ember.tensor([8.0], dtype=ember.float16).frexp()
    assert r.mantissa.dtype is ember.float16 and r.exponent.tolist() == [4]
    with pytest.raises(RuntimeError, match="only supports floating-point dtypes"):
        ember.frexp(ember.tensor([1, 2]))
