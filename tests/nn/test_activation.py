"""Activation functions and modules: forward against NumPy, float64 gradcheck and gradgradcheck, in-place rules."""
import math

import numpy as np
import pytest
from scipy.special import erf

import ember
import ember.nn.functional as F
from ember import nn
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _x(rng):
    # values away from the kinks (0, +-1, +-3, +-0.5) so finite differences are exact enough
    a = rng.standard_normal((3, 5)) * 2.5
    a[np.abs(np.abs(a) - np.round(np.abs(a) * 2) / 2) < 0.05] += 0.1
    return [a]


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _sp(x):
    return np.log1p(np.exp(x))


SELU_A, SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
K = math.sqrt(2 / math.pi)

SPECS = [
    OpSpec("relu", F.relu, lambda x: np.maximum(x, 0), _x),
    OpSpec("relu6", F.relu6, lambda x: np.clip(x, 0, 6), _x),
    OpSpec("leaky_relu", lambda x: F.leaky_relu(x, 0.1), lambda x: np.where(x > 0, x, 0.1 * x), _x),
    OpSpec("elu", lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)), _x, gradgrad=True),
    OpSpec("selu", F.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x)), _x, gradgrad=True),
    OpSpec("celu", lambda x: F.celu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x / 1.5)), _x,
           gradgrad=True),
    OpSpec("gelu", F.gelu, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))), _x, gradgrad=True),
    OpSpec("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
           lambda x: 0.5 * x * (1 + np.tanh(K * (x + 0.044715 * x ** 3))), _x, gradgrad=True),
    OpSpec("silu", F.silu, lambda x: x * _sig(x), _x, gradgrad=True),
    OpSpec("mish", F.mish, lambda x: x * np.tanh(_sp(x)), _x, gradgrad=True),
    OpSpec("hardtanh", lambda x: F.hardtanh(x, -2.0, 1.5), lambda x: np.clip(x, -2, 1.5), _x),
    OpSpec("hardsigmoid", F.hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1), _x),
    OpSpec("hardswish", F.hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, _x, gradgrad=True),
    OpSpec("softplus", lambda x: F.softplus(x, 2.0, 3.0), lambda x: np.where(2 * x > 3, x, _sp(2 * x) / 2), _x,
           gradgrad=True),
    OpSpec("softsign", F.softsign, lambda x: x / (1 + np.abs(x)), _x, gradgrad=True),
    OpSpec("softshrink", lambda x: F.softshrink(x, 0.7),
           lambda x: np.where(x > 0.7, x - 0.7, np.where(x < -0.7, x + 0.7, 0)), _x),
    OpSpec("hardshrink", lambda x: F.hardshrink(x, 0.7), lambda x: np.where(np.abs(x) > 0.7, x, 0), _x),
    OpSpec("tanhshrink", F.tanhshrink, lambda x: x - np.tanh(x), _x, gradgrad=True),
    OpSpec("threshold", lambda x: F.threshold(x, 0.3, -2.0), lambda x: np.where(x > 0.3, x, -2.0), _x),
    OpSpec("logsigmoid", F.logsigmoid, lambda x: np.log(_sig(x)), _x, gradgrad=True),
    OpSpec("glu", F.glu, lambda x: x[:, :2] * _sig(x[:, 2:4]), lambda rng: [rng.standard_normal((3, 4))],
           gradgrad=True),
    OpSpec("glu_dim0", lambda x: F.glu(x, 0), lambda x: x[:2] * _sig(x[2:]), lambda rng: [rng.standard_normal((4, 3))]),
    OpSpec("sigmoid", F.sigmoid, _sig, _x),
    OpSpec("tanh", F.tanh, np.tanh, _x),
    OpSpec("rrelu_eval", lambda x: F.rrelu(x, 0.1, 0.3), lambda x: np.where(x > 0, x, 0.2 * x), _x),
    OpSpec("prelu", F.prelu, lambda x, w: np.where(x > 0, x, w[None, :, None] * x),
           lambda rng: [rng.standard_normal((2, 3, 4)) + 0.05, rng.standard_normal(3)], gradgrad=True),
    OpSpec("prelu_scalar", F.prelu, lambda x, w: np.where(x > 0, x, w * x),
           lambda rng: [rng.standard_normal((2, 3)) + 0.05, rng.standard_normal(1)]),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_extreme_values_are_finite_and_exact():
    x = ember.tensor([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    np.testing.assert_allclose(F.softplus(x).numpy(), [0, 0, 0.6931472, 50, 1000], atol=1e-7)
    np.testing.assert_allclose(F.logsigmoid(x).numpy(), [-1000, -50, -0.6931472, 0, 0], atol=1e-7)
    np.testing.assert_allclose(F.silu(x).numpy(), [0, 0, 0, 50, 1000], atol=1e-7)
    np.testing.assert_allclose(F.mish(x).numpy(), [0, 0, 0, 50, 1000], atol=1e-7)
    np.testing.assert_allclose(F.elu(x).numpy(), [-1, -1, 0, 50, 1000], atol=1e-7)
    assert F.softplus(ember.tensor([-np.inf, np.inf])).tolist() == [0.0, np.inf]


def test_rrelu_training_uses_seeded_noise_within_bounds():
    x = -ember.ones(1000)
    ember.manual_seed(3)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    ember.manual_seed(3)
    y2 = F.rrelu(x, 0.1, 0.3, training=True)
    assert ember.equal(y, y2)
    slopes = -y.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    assert ember.equal(F.rrelu(ember.ones(4), training=True), ember.ones(4))


def test_rrelu_training_gradient_is_the_noise():
    x = ember.tensor([-1.0, -2.0, 3.0], dtype=ember.float64, requires_grad=True)
    y = F.rrelu(x, training=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy() / x.detach().numpy())


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh",
                                  "hardsigmoid", "hardswish", "rrelu"])
def test_inplace_writes_into_input(name):
    a = np.linspace(-4, 4, 9)
    x = ember.tensor(a)
    expected = getattr(F, name)(ember.tensor(a)).numpy()
    v = x._version
    assert getattr(F, name)(x, inplace=True) is x
    assert x._version > v
    if name != "rrelu":
        np.testing.assert_allclose(x.numpy(), expected)


@pytest.mark.parametrize("fn", [F.relu_, F.elu_, F.leaky_relu_, F.hardtanh_, F.selu_, F.celu_, F.rrelu_,
                                lambda t: F.threshold_(t, 0.1, 2.0)])
def test_underscore_functions_are_inplace_and_refuse_leaves(fn):
    x = ember.randn(5)
    assert fn(x) is x
    leaf = ember.randn(5, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        fn(leaf)


def test_inplace_on_intermediate_keeps_gradient():
    x = ember.tensor([-1.0, 0.5, 2.0], dtype=ember.float64, requires_grad=True)
    y = x * 2
    F.relu(y, inplace=True)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 2.0])


def test_grad_fn_names():
    x = ember.randn(4, requires_grad=True)
    assert F.relu(x).grad_fn.name() == "ReluBackward0"
    assert F.relu6(x).grad_fn.name() == "HardtanhBackward0"
    assert F.gelu(x).grad_fn.name() == "GeluBackward0"
    assert F.selu(x).grad_fn.name() == "EluBackward0"
    assert F.softsign(x).grad_fn.name() == "DivBackward0"


def test_no_graph_without_grad():
    x = ember.randn(4)
    for name in ["relu", "gelu", "silu", "elu", "softplus", "leaky_relu"]:
        assert getattr(F, name)(x).grad_fn is None
    w = ember.randn(4, requires_grad=True)
    with ember.no_grad():
        assert F.gelu(w).grad_fn is None


@pytest.mark.parametrize("dtype", [ember.float16, ember.bfloat16])
def test_low_precision_keeps_dtype(dtype):
    a = np.linspace(-3, 3, 7, dtype=np.float32)
    for name in ["relu", "gelu", "silu", "elu", "softplus", "mish", "hardswish", "logsigmoid"]:
        y = getattr(F, name)(ember.tensor(a).to(dtype))
        assert y.dtype == dtype
        ref = getattr(F, name)(ember.tensor(a)).numpy()
        np.testing.assert_allclose(y.float().numpy(), ref, rtol=2e-2, atol=2e-2)


def test_integer_inputs():
    x = ember.tensor([-2, 0, 3, 8])
    assert F.relu(x).tolist() == [0, 0, 3, 8] and F.relu(x).dtype == ember.int64
    assert F.relu6(x).tolist() == [0, 0, 3, 6] and F.relu6(x).dtype == ember.int64
    with pytest.raises(NotImplementedError, match="\"GeluKernelImpl\" not implemented for 'Long'"):
        F.gelu(x)
    with pytest.raises(NotImplementedError, match="\"elu_cpu\" not implemented for 'Long'"):
        F.selu(x)


def test_errors():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        F.gelu(ember.randn(3), approximate="fast")
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 0 is size 3"):
        F.glu(ember.randn(3))
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper bound"):
        F.rrelu(ember.randn(3), 0.5, 0.1, training=True)
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        F.prelu(ember.randn(2, 3), ember.randn(2))
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(ember.randn(3), 2.0, 1.0)


# ---------------- modules ----------------
MODULES = [
    (nn.ReLU(), F.relu), (nn.ReLU6(), F.relu6), (nn.LeakyReLU(0.2), lambda x: F.leaky_relu(x, 0.2)),
    (nn.ELU(0.5), lambda x: F.elu(x, 0.5)), (nn.SELU(), F.selu), (nn.CELU(2.0), lambda x: F.celu(x, 2.0)),
    (nn.GELU("tanh"), lambda x: F.gelu(x, approximate="tanh")), (nn.SiLU(), F.silu), (nn.Mish(), F.mish),
    (nn.Sigmoid(), ember.sigmoid), (nn.Tanh(), ember.tanh), (nn.Hardtanh(-2, 3), lambda x: F.hardtanh(x, -2, 3)),
    (nn.Hardsigmoid(), F.hardsigmoid), (nn.Hardswish(), F.hardswish),
    (nn.Softplus(2, 5), lambda x: F.softplus(x, 2, 5)),
    (nn.Softsign(), F.softsign), (nn.Softshrink(0.3), lambda x: F.softshrink(x, 0.3)),
    (nn.Hardshrink(0.3), lambda x: F.hardshrink(x, 0.3)), (nn.Tanhshrink(), F.tanhshrink),
    (nn.Threshold(0.1, 5.0), lambda x: F.threshold(x, 0.1, 5.0)), (nn.LogSigmoid(), F.logsigmoid),
    (nn.GLU(0), lambda x: F.glu(x, 0)),
]


@pytest.mark.parametrize("module,fn", MODULES, ids=lambda m: type(m).__name__)
def test_module_forward_matches_functional(module, fn):
    x = ember.randn(4, 6)
    assert_close(module(x), fn(x).numpy())


def test_inplace_modules_write_into_input():
    for m in [nn.ReLU(True), nn.LeakyReLU(0.1, True), nn.ELU(inplace=True), nn.Hardtanh(inplace=True),
              nn.ReLU6(True), nn.SiLU(True), nn.Hardswish(True), nn.Threshold(0.0, 1.0, True)]:
        x = ember.randn(5)
        assert m(x) is x


def test_prelu_module():
    m = nn.PReLU(3, init=0.1)
    assert m.weight.shape == (3,) and m.weight.tolist() == pytest.approx([0.1] * 3)
    x = ember.tensor([[[-1.0], [2.0], [-3.0]]])
    assert m(x).flatten().tolist() == pytest.approx([-0.1, 2.0, -0.3])
    m(x).sum().backward()
    assert m.weight.grad.tolist() == pytest.approx([-1.0, 0.0, -3.0])
    assert repr(m) == "PReLU(num_parameters=3)"
    assert nn.PReLU(dtype=ember.float64).weight.dtype == ember.float64


def test_rrelu_module_train_and_eval():
    m = nn.RReLU(0.1, 0.3)
    x = -ember.ones(100)
    assert m(x).std().item() > 0
    m.eval()
    assert_close(m(x), np.full(100, -0.2), atol=1e-6)


def test_hardtanh_rejects_bad_range_and_warns_on_old_names():
    with pytest.raises(AssertionError, match=r"max_val \(1.0\) must be greater than min_val \(2.0\)"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.warns(FutureWarning, match="min_value"):
        m = nn.Hardtanh(min_value=-3.0)
    assert m.min_val == -3.0


def test_reprs():
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.ReLU6()) == "ReLU6()"
    assert repr(nn.Hardtanh(-2, 3, True)) == "Hardtanh(min_val=-2, max_val=3, inplace=True)"
    assert repr(nn.GELU("tanh")) == "GELU(approximate='tanh')"
    assert repr(nn.Softshrink(0.3)) == "Softshrink(0.3)"
    assert repr(nn.Softmax(1)) == "Softmax(dim=1)"
    assert repr(nn.Softmax2d()) == "Softmax2d()"


def test_softmax2d_checks_rank():
    with pytest.raises(ValueError, match="Softmax2d: expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(ember.randn(2, 3))


def test_softmax_modules_call_the_functional_ops():
    if not all(hasattr(F, n) for n in ("softmax", "log_softmax", "softmin")):
        pytest.skip("softmax functionals not available")
    x = ember.randn(2, 3, 4, 5)
    e = np.exp(x.numpy())
    assert_close(nn.Softmax(1)(x), e / e.sum(1, keepdims=True), atol=1e-6)
    assert_close(nn.LogSoftmax(-1)(x), np.log(e / e.sum(-1, keepdims=True)), atol=1e-5)
    assert_close(nn.Softmin(0)(x), np.exp(-x.numpy()) / np.exp(-x.numpy()).sum(0, keepdims=True), atol=1e-6)
    assert_close(nn.Softmax2d()(x), e / e.sum(-3, keepdims=True), atol=1e-6)


def test_relu_inplace_without_graph_writes_through_views():
    base = ember.tensor([[-1.0, 2.0], [3.0, -4.0]])
    col = base[:, 1]
    v = base._version
    assert F.relu_(col) is col
    assert base.tolist() == [[-1.0, 2.0], [3.0, 0.0]] and base._version > v
    leaf = ember.tensor([-1.0, 1.0], requires_grad=True)
    with ember.no_grad():
        F.relu_(leaf)
    assert leaf.tolist() == [0.0, 1.0]


# ---------------- float32 blockwise kernels (NOTE [ Blockwise kernels ]) ----------------
def test_float32_gelu_erf_accuracy_on_dense_grid():
    # the float32 erf approximation against scipy: Phi to about 2.5e-7 absolute (float32 rounding; torch's own
    # vectorized erf is no better), gelu and its derivative to a few float32 ulps of their scale
    xs = np.linspace(-12, 12, 2_000_001).astype(np.float32)
    x64 = xs.astype(np.float64)
    phi = 0.5 * (1 + erf(x64 / math.sqrt(2)))
    x = ember.tensor(xs, requires_grad=True)
    y = F.gelu(x)
    y.backward(ember.ones_like(x))
    yv = y.detach().numpy()
    assert yv.dtype == np.float32
    nz = np.abs(x64) > 1e-3
    assert np.abs(yv[nz] / x64[nz] - phi[nz]).max() < 3e-7
    assert np.abs(yv - x64 * phi).max() < 6e-7
    dref = phi + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)
    assert np.abs(x.grad.numpy() - dref).max() < 4e-7
    # without a graph the forward skips the derivative but gives the same values
    np.testing.assert_array_equal(F.gelu(ember.tensor(xs)).numpy(), yv)


def _f32_cases():
    rng = np.random.default_rng(7)
    big = (rng.standard_normal((3, 40000)) * 4).astype(np.float32)  # several blocks, a ragged last one
    return [big, big[:, ::3], np.float32(0.7) * np.ones(()), rng.standard_normal((0, 4)).astype(np.float32)]


_F32_FNS = [
    ("gelu", F.gelu, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))),
    ("elu", lambda x: F.elu(x, 0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    ("selu", F.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x))),
    ("celu", lambda x: F.celu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x / 1.5))),
    ("softplus", F.softplus, lambda x: np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))),
    ("softplus_beta", lambda x: F.softplus(x, 2.0, 3.0),
     lambda x: np.where(2 * x > 3, x, _sp(np.minimum(2 * x, 3)) / 2)),
]


@pytest.mark.parametrize("name,fn,ref", _F32_FNS, ids=[c[0] for c in _F32_FNS])
def test_float32_kernels_forward_and_grad_against_float64(name, fn, ref):
    for a in _f32_cases():
        a = np.asarray(a, np.float32)
        x = ember.tensor(a, requires_grad=True)
        y = fn(x)
        assert y.dtype == ember.float32 and tuple(y.shape) == a.shape
        np.testing.assert_allclose(y.detach().numpy(), ref(a.astype(np.float64)), rtol=2e-6, atol=1e-6)
        with ember.no_grad():
            np.testing.assert_array_equal(fn(ember.tensor(a)).numpy(), y.detach().numpy())
        g = np.linspace(-1, 1, a.size).reshape(a.shape).astype(np.float32)
        y.backward(ember.tensor(g))
        x64 = ember.tensor(a.astype(np.float64), requires_grad=True)
        fn(x64).backward(ember.tensor(g.astype(np.float64)))
        np.testing.assert_allclose(x.grad.numpy(), x64.grad.numpy(), rtol=2e-6, atol=1e-6)


def test_float32_kernels_double_backward_uses_the_saved_derivative():
    a = np.array([-2.5, -0.7, 0.3, 1.9], np.float32)
    for fn in (F.gelu, F.elu, F.softplus, lambda t: F.celu(t, 1.5), F.selu):
        x = ember.tensor(a, requires_grad=True)
        x64 = ember.tensor(a.astype(np.float64), requires_grad=True)
        res = []
        for t in (x, x64):
            (g,) = ember.autograd.grad(fn(t).sum(), t, create_graph=True)
            (gg,) = ember.autograd.grad((g * g).sum(), t)
            res.append((g.detach().numpy(), gg.numpy()))
        np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-5, atol=1e-6)


def test_float32_softplus_threshold_and_infinities():
    x = ember.tensor([-np.inf, -30.0, 16.0, 17.5, 20.5, 30.0, np.inf, np.nan], requires_grad=True)
    y = F.softplus(x)
    y.backward(ember.ones_like(x))
    yv = y.detach().numpy()
    assert yv[0] == 0 and yv[-2] == np.inf and np.isnan(yv[-1])
    assert yv[4] == np.float32(20.5) and yv[5] == 30.0  # beyond the threshold: x itself
    assert x.grad.numpy()[[0, 4, 5, 6]].tolist() == [0.0, 1.0, 1.0, 1.0]
    e = F.elu(ember.tensor([-np.inf, np.inf, np.nan]))
    assert e.numpy()[0] == -1 and e.numpy()[1] == np.inf and np.isnan(e.numpy()[2])


def test_silu_of_complex_inputs_forward_only_as_torch():
    z = np.array([1 + 1j, 0.5 - 2j])
    y = F.silu(ember.tensor(z))
    assert y.dtype == ember.complex128
    assert_close(y, z / (1 + np.exp(-z)))
    with pytest.raises(RuntimeError, match="silu does not support automatic differentiation for outputs with complex"):
        F.silu(ember.tensor(z, requires_grad=True))
