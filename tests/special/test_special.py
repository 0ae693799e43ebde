"""ember.special: forward values against scipy / NumPy / hand values, gradients, dtypes, out= and errors."""
import math
from types import SimpleNamespace

import numpy as np
import numpy.polynomial as P
import pytest
import scipy.special as sp

import ember
from ember import special
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _u(lo, hi, shape=(3, 4)):
    return lambda rng: [rng.uniform(lo, hi, shape)]


def _signed(lo, hi, shape=(3, 4)):
    return lambda rng: [rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)]


def _pair(a, b, shape=(3, 4)):
    return lambda rng: [rng.uniform(*a, shape), rng.uniform(*b, shape)]


DIFFERENTIABLE = [
    OpSpec("entr", special.entr, sp.entr, _u(0.1, 3.0), gradgrad=True),
    OpSpec("erfcx", special.erfcx, sp.erfcx, _signed(0.1, 3.0), gradgrad=True),
    OpSpec("i0e", special.i0e, sp.i0e, _signed(0.1, 4.0), gradgrad=True),
    OpSpec("i1", special.i1, sp.i1, _signed(0.1, 4.0), gradgrad=True),
    OpSpec("i1e", special.i1e, sp.i1e, _signed(0.1, 4.0), gradgrad=True),
    OpSpec("log_ndtr", special.log_ndtr, sp.log_ndtr, _signed(0.1, 5.0), gradgrad=True),
    OpSpec("ndtr", special.ndtr, sp.ndtr, _signed(0.1, 3.0), gradgrad=True),
    OpSpec("ndtri", special.ndtri, sp.ndtri, _u(0.05, 0.95), gradgrad=True),
    OpSpec("xlog1py", special.xlog1py, sp.xlog1py, _pair((-2, 2), (-0.5, 3)), gradgrad=True),
    OpSpec("xlog1py_scalar_other", lambda x: special.xlog1py(x, 2.5), lambda x: sp.xlog1py(x, 2.5), _signed(0.1, 2)),
    OpSpec("xlog1py_scalar_input", lambda y: special.xlog1py(1.5, y), lambda y: sp.xlog1py(1.5, y), _u(0, 3),
           gradgrad=True),
    OpSpec("zeta", special.zeta, sp.zeta, _pair((1.5, 4), (0.5, 3)), nondiff=(0,), gradgrad=True),
    OpSpec("zeta_scalar_input", lambda q: special.zeta(3.0, q), lambda q: sp.zeta(3.0, q), _u(0.5, 3)),
    OpSpec("gammainc", special.gammainc, sp.gammainc, _pair((0.5, 4), (0.1, 5)), nondiff=(0,), gradgrad=True),
    OpSpec("gammaincc", special.gammaincc, sp.gammaincc, _pair((0.5, 4), (0.1, 5)), nondiff=(0,), gradgrad=True),
    # the top-level ops under their torch.special names
    OpSpec("expit", special.expit, sp.expit, _signed(0, 4)),
    OpSpec("gammaln", special.gammaln, sp.gammaln, _u(0.1, 5)),
    OpSpec("psi", special.psi, sp.psi, _u(0.1, 5)),
    OpSpec("multigammaln", lambda x: special.multigammaln(x, 3), lambda x: sp.multigammaln(x, 3), _u(1.5, 5)),
    OpSpec("polygamma", lambda x: special.polygamma(2, x), lambda x: sp.polygamma(2, x), _u(0.5, 5)),
    OpSpec("logit", lambda x: special.logit(x), sp.logit, _u(0.05, 0.95)),
    OpSpec("xlogy", special.xlogy, sp.xlogy, _pair((-2, 2), (0.1, 3))),
    OpSpec("logsumexp", lambda x: special.logsumexp(x, 1), lambda x: sp.logsumexp(x, 1), _signed(0, 3)),
    OpSpec("softmax", lambda x: special.softmax(x, 0), lambda x: sp.softmax(x, 0), _signed(0, 3)),
    OpSpec("log_softmax", lambda x: special.log_softmax(x, -1), lambda x: sp.log_softmax(x, -1), _signed(0, 3)),
]


@pytest.mark.parametrize("spec", DIFFERENTIABLE, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", DIFFERENTIABLE, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in DIFFERENTIABLE if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_gradient_at_zero():
    # i1'(0) = i1e'(0) = 1/2; entr'(x) = -(log x + 1)
    x = ember.tensor([0.0, 1.0], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(special.i1(x).sum(), x)
    assert_close(g, [0.5, sp.i0(1.0) - sp.i1(1.0)], atol=1e-12)
    (g,) = ember.autograd.grad(special.i1e(x).sum(), x)
    assert_close(g, [0.5, sp.i0e(1.0) - 2 * sp.i1e(1.0)], atol=1e-12)
    (g,) = ember.autograd.grad(special.entr(x).sum(), x)
    assert_close(g, [np.inf, -1.0])


@pytest.mark.parametrize("name,node", [("entr", "SpecialEntrBackward0"), ("erfcx", "SpecialErfcxBackward0"),
                                       ("i0e", "SpecialI0EBackward0"), ("i1", "SpecialI1Backward0"),
                                       ("i1e", "SpecialI1EBackward0"), ("log_ndtr", "SpecialLogNdtrBackward0"),
                                       ("ndtri", "SpecialNdtriBackward0"), ("expit", "SigmoidBackward0"),
                                       ("gammaln", "LgammaBackward0"), ("psi", "DigammaBackward0")])
def test_grad_fn_names(name, node):
    x = ember.tensor([0.3, 0.6], requires_grad=True)
    assert type(getattr(special, name)(x).grad_fn).__name__ == node


def test_binary_grad_fn_names():
    x = ember.tensor([1.5, 2.5], requires_grad=True)
    assert type(special.xlog1py(x, x).grad_fn).__name__ == "SpecialXlog1PyBackward0"
    assert type(special.xlog1py(2.0, x).grad_fn).__name__ == "SpecialXlog1PyBackward1"
    assert type(special.xlog1py(x, 2.0).grad_fn).__name__ == "SpecialXlog1PyBackward2"
    assert type(special.zeta(x, x).grad_fn).__name__ == "SpecialZetaBackward0"
    assert type(special.zeta(2.0, x).grad_fn).__name__ == "SpecialZetaBackward1"
    assert type(special.zeta(x, 2.0).grad_fn).__name__ == "SpecialZetaBackward2"
    assert type(special.gammainc(x, x).grad_fn).__name__ == "IgammaBackward0"
    assert type(special.gammaincc(x, x).grad_fn).__name__ == "IgammacBackward0"


@pytest.mark.parametrize("fn,what", [(special.gammainc, "igamma: input"), (special.gammaincc, "igammac: input"),
                                     (special.zeta, "zeta"), (lambda a, b: special.zeta(a, 2.0), "zeta")])
def test_input_gradient_not_implemented(fn, what):
    a = ember.tensor([2.0, 3.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([1.5, 2.5], dtype=ember.float64)
    y = fn(a, b)
    with pytest.raises(NotImplementedError, match=f"the derivative for '{what}' is not implemented."):
        y.sum().backward()


def test_gammainc_other_gradient_only():
    a = ember.tensor([2.0, 3.0], dtype=ember.float64)
    x = ember.tensor([1.5, 2.5], dtype=ember.float64, requires_grad=True)
    special.gammainc(a, x).sum().backward()
    expected = np.exp(-x._data) * x._data ** (a._data - 1) / sp.gamma(a._data)
    assert_close(x.grad, expected, atol=1e-12)


# ---------------- functions torch does not differentiate ----------------
NONDIFF = {
    "airy_ai": lambda x: sp.airy(x)[0], "bessel_j0": sp.j0, "bessel_j1": sp.j1, "bessel_y0": sp.y0,
    "bessel_y1": sp.y1, "modified_bessel_i0": sp.i0, "modified_bessel_i1": sp.i1, "modified_bessel_k0": sp.k0,
    "modified_bessel_k1": sp.k1, "scaled_modified_bessel_k0": sp.k0e, "scaled_modified_bessel_k1": sp.k1e,
    "spherical_bessel_j0": lambda x: sp.spherical_jn(0, x),
}


@pytest.mark.parametrize("name", sorted(NONDIFF))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bessel_forward(name, dtype):
    x = np.array([0.1, 0.4, 0.5, 1.0, 2.5, 7.0, 30.0], dtype=dtype)
    if name.startswith(("airy", "bessel_j", "spherical")):
        x = np.concatenate([x, -x])
    got = getattr(special, name)(ember.tensor(x))
    assert got.dtype == ember.tensor(x).dtype
    assert_close(got, NONDIFF[name](x.astype(np.float64)), rtol=1e-12 if dtype == np.float64 else 1e-5,
                 atol=1e-300 if dtype == np.float64 else 1e-30)


@pytest.mark.parametrize("name", sorted(NONDIFF))
def test_bessel_has_no_grad(name):
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    y = getattr(special, name)(x)
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_bessel_edge_values():
    inf, nan = math.inf, math.nan
    assert_close(special.airy_ai(ember.tensor([inf, -inf, nan, 200.0], dtype=ember.float64)), [nan, nan, nan, 0.0])
    assert_close(special.bessel_y0(ember.tensor([0.0, -1.0])), [-inf, nan])
    assert_close(special.modified_bessel_k1(ember.tensor([0.0, inf])), [inf, 0.0])
    assert_close(special.spherical_bessel_j0(ember.tensor([0.0, inf, -inf, nan])), [1.0, 0.0, 0.0, nan])


# ---------------- orthogonal polynomials ----------------
def _unit(n):
    c = np.zeros(n + 1)
    c[n] = 1
    return c


def _cheb_v(x, n):  # V_n(cos t) = cos((n + 1/2) t) / cos(t / 2)
    t = np.arccos(x)
    return np.cos((n + 0.5) * t) / np.cos(t / 2)


def _cheb_w(x, n):  # W_n(cos t) = sin((n + 1/2) t) / sin(t / 2)
    t = np.arccos(x)
    return np.sin((n + 0.5) * t) / np.sin(t / 2)


POLY_REFS = {
    "chebyshev_polynomial_t": lambda x, n: P.chebyshev.chebval(x, _unit(n)),
    "chebyshev_polynomial_u": lambda x, n: sp.eval_chebyu(n, x),
    "chebyshev_polynomial_v": _cheb_v,
    "chebyshev_polynomial_w": _cheb_w,
    "shifted_chebyshev_polynomial_t": lambda x, n: P.chebyshev.chebval(2 * x - 1, _unit(n)),
    "shifted_chebyshev_polynomial_u": lambda x, n: sp.eval_chebyu(n, 2 * x - 1),
    "shifted_chebyshev_polynomial_v": lambda x, n: _cheb_v(2 * x - 1, n),
    "shifted_chebyshev_polynomial_w": lambda x, n: _cheb_w(2 * x - 1, n),
    "hermite_polynomial_h": lambda x, n: P.hermite.hermval(x, _unit(n)),
    "hermite_polynomial_he": lambda x, n: P.hermite_e.hermeval(x, _unit(n)),
    "laguerre_polynomial_l": lambda x, n: P.laguerre.lagval(x, _unit(n)),
    "legendre_polynomial_p": lambda x, n: P.legendre.legval(x, _unit(n)),
}


@pytest.mark.parametrize("name", sorted(POLY_REFS))
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 7, 9, 12])
def test_polynomial_values(name, n):
    x = np.array([-0.9, -0.55, -0.2, 0.15, 0.35, 0.6, 0.85])
    if name.startswith("shifted"):
        x = (x + 1) / 2
    got = getattr(special, name)(ember.tensor(x), n)
    assert got.dtype == ember.float64
    assert_close(got, POLY_REFS[name](x, n), atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("name", sorted(POLY_REFS))
def test_polynomial_degree_rules(name):
    fn = getattr(special, name)
    x = ember.tensor([0.3, 0.8], dtype=ember.float64)
    # a fractional degree is truncated; a negative, nan or infinite degree gives 0
    assert_close(fn(x, 2.7), fn(x, 2)._data)
    assert_close(fn(x, -0.5), fn(x, 0)._data)
    for bad in (-1, -3.0, math.nan, math.inf):
        assert_close(fn(x, bad), [0.0, 0.0])
    # per-element degrees broadcast against x
    n = ember.tensor([[0], [1], [4]])
    got = fn(x, n)
    assert got.shape == (3, 2)
    for i, k in enumerate((0, 1, 4)):
        assert_close(got[i], fn(x, k)._data, atol=1e-12)


def test_polynomial_special_values():
    x = ember.tensor([1.0, -1.0], dtype=ember.float64)
    assert_close(special.chebyshev_polynomial_u(x, 3), [4.0, -4.0])
    assert_close(special.chebyshev_polynomial_v(x, 3), [1.0, -7.0])
    assert_close(special.chebyshev_polynomial_w(x, 3), [7.0, -1.0])
    assert_close(special.legendre_polynomial_p(x, 3), [1.0, -1.0])
    # beyond the degree torch loops to, the Hermite polynomials are nan
    assert_close(special.hermite_polynomial_h(ember.tensor([0.5], dtype=ember.float64), 513), [math.nan])
    assert_close(special.hermite_polynomial_he(ember.tensor([0.5]), 129), [math.nan])
    # large |x| overflows to inf and then nan, as torch's loop does
    assert math.isnan(special.chebyshev_polynomial_t(ember.tensor([3.0]), 2000).item())


def test_polynomial_no_grad():
    x = ember.tensor([0.2, 0.4], requires_grad=True)
    y = special.hermite_polynomial_h(x, 3)
    assert not y.requires_grad and y.grad_fn is None


def test_polynomial_dtypes():
    assert special.laguerre_polynomial_l(ember.tensor([1, 2]), 2).dtype == ember.float32
    assert special.laguerre_polynomial_l(2.5, ember.tensor([1, 2])).dtype == ember.float32
    assert special.laguerre_polynomial_l(ember.tensor([1, 2]), ember.tensor(2.0, dtype=ember.float64)).dtype \
        == ember.float64
    assert special.laguerre_polynomial_l(ember.tensor([1.0, 2.0]), ember.tensor(2.0, dtype=ember.float64)).dtype \
        == ember.float32
    with pytest.raises(NotImplementedError, match="\"legendre_polynomial_p_cpu\" not implemented for 'Half'"):
        special.legendre_polynomial_p(ember.tensor([0.5], dtype=ember.float16), 2)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        special.legendre_polynomial_p(0.5, 2)
    with pytest.raises(RuntimeError, match="must match the size"):
        special.legendre_polynomial_p(ember.zeros(2), ember.zeros(3))


# ---------------- dtypes ----------------
UNARY = ["airy_ai", "bessel_j0", "entr", "erfcx", "i0e", "i1", "i1e", "log_ndtr", "ndtr", "ndtri",
         "modified_bessel_k0", "spherical_bessel_j0", "expit", "gammaln"]
HALF_OK = {"entr", "i0e", "i1", "i1e", "ndtr", "expit", "gammaln"}


@pytest.mark.parametrize("name", UNARY)
def test_integer_inputs_promote_to_default_float(name):
    fn = getattr(special, name)
    assert fn(ember.tensor([0, 1, 2])).dtype == ember.float32
    assert fn(ember.tensor([True, False])).dtype == ember.float32
    prev = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert fn(ember.tensor([0, 1, 2])).dtype == ember.float64
    finally:
        ember.set_default_dtype(prev)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision(name, dtype):
    fn = getattr(special, name)
    x = ember.tensor([0.25, 0.5]).to(getattr(ember, dtype))
    if name in HALF_OK:
        y = fn(x)
        assert y.dtype == x.dtype
        assert_close(y.float(), fn(x.float())._data, atol=1e-2, rtol=1e-2)
    else:
        kernel = {"expit": "sigmoid"}.get(name, name) + "_cpu"
        with pytest.raises(NotImplementedError, match=f"\"{kernel}\" not implemented for"):
            fn(x)


@pytest.mark.parametrize("name", ["entr", "erfcx", "i1", "bessel_j0", "ndtri"])
def test_complex_refused(name):
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        getattr(special, name)(ember.tensor([1 + 1j]))


def test_binary_dtypes():
    i = ember.tensor([1, 2])
    assert special.xlog1py(i, i).dtype == ember.float32
    assert special.xlog1py(i, 2.5).dtype == ember.float32
    assert special.xlog1py(2, ember.tensor([1.0], dtype=ember.float64)).dtype == ember.float64
    assert special.zeta(i, ember.tensor(2.0, dtype=ember.float64)).dtype == ember.float64
    assert special.gammainc(ember.tensor([1.0], dtype=ember.float16), i).dtype == ember.float16
    with pytest.raises(NotImplementedError, match="\"igamma_cpu\" not implemented for 'Long'"):
        special.gammainc(i, i)
    with pytest.raises(NotImplementedError, match="\"zeta_cpu\" not implemented for 'Half'"):
        special.zeta(ember.tensor([2.0], dtype=ember.float16), 1.0)
    with pytest.raises(TypeError, match="argument 'other' \\(position 2\\) must be Tensor, not float"):
        special.gammainc(ember.tensor([1.0]), 2.0)
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        special.xlog1py(1.0, 2.0)


# ---------------- edge values ----------------
def test_binary_edge_values():
    inf, nan = math.inf, math.nan
    x = ember.tensor([0.0, 0.0, 2.0, 2.0], dtype=ember.float64)
    y = ember.tensor([-1.0, nan, -1.0, 0.0], dtype=ember.float64)
    assert_close(special.xlog1py(x, y), [0.0, nan, -inf, 0.0])
    a = ember.tensor([nan, nan, inf, 0.0, 0.0, -1.0, 2.0], dtype=ember.float64)
    z = ember.tensor([0.0, inf, nan, 1.0, 0.0, 1.0, inf], dtype=ember.float64)
    assert_close(special.gammainc(a, z), [0.0, 1.0, 0.0, 1.0, nan, nan, 1.0])
    assert_close(special.gammaincc(a, z), [1.0, 0.0, 1.0, 0.0, nan, nan, 0.0])
    s = ember.tensor([1.0, 0.5, 2.0, 2.0, 2.5], dtype=ember.float64)
    q = ember.tensor([1.0, 1.0, inf, -2.0, -1.5], dtype=ember.float64)
    assert_close(special.zeta(s, q), [inf, nan, nan, inf, nan])
    assert_close(special.zeta(ember.tensor([2.0], dtype=ember.float64), 1.0), [math.pi ** 2 / 6], atol=1e-12)


def test_unary_edge_values():
    inf, nan = math.inf, math.nan
    assert_close(special.entr(ember.tensor([0.0, -1.0, inf, nan, 1.0])), [0.0, -inf, -inf, nan, 0.0])
    assert_close(special.ndtri(ember.tensor([0.0, 1.0, 0.5, 2.0])), [-inf, inf, 0.0, nan])
    assert_close(special.log_ndtr(ember.tensor([-inf, inf, 0.0])), [-inf, 0.0, math.log(0.5)])
    # ndtr computes (1 + erf(x / sqrt 2)) / 2, as torch does: no tail accuracy for x << 0
    assert_close(special.ndtr(ember.tensor([-10.0, 0.0, inf], dtype=ember.float64)), [0.0, 0.5, 1.0])


# ---------------- out=, other signatures, errors ----------------
def test_out():
    x = ember.tensor([0.5, 1.5])
    out = ember.empty(2, dtype=ember.float64)
    r = special.i1e(x, out=out)
    assert r is out and out.dtype == ember.float64
    assert_close(out, sp.i1e(np.array([0.5, 1.5], dtype=np.float32)), rtol=1e-6)
    out = ember.empty(0)
    special.chebyshev_polynomial_t(x, 2, out=out)
    assert_close(out, 2 * x._data ** 2 - 1, rtol=1e-6)
    special.zeta(x + 1, 1.0, out=out)
    assert out.shape == (2,)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        special.bessel_j0(x, out=ember.empty(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="special_entr\\(\\): functions with out=... arguments don't support"):
        special.entr(x.requires_grad_(), out=ember.empty(2))
    # no graph, so out= is fine for the functions torch does not differentiate
    special.bessel_y1(x, out=out)


def test_signatures_and_errors():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError):
        special.softmax(x)  # dim is required in torch.special
    with pytest.raises(TypeError):
        special.logsumexp(x)
    assert special.softmax(x, 1, ember.float64).dtype == ember.float64
    assert special.logsumexp(x, (0, 1), keepdim=True).shape == (1, 1)
    assert_close(special.round(x * 0.37, decimals=1), np.round(x._data * 0.37, 1))
    with pytest.raises(NotImplementedError, match="\"round_vml_cpu\" not implemented for 'Long'"):
        special.round(ember.tensor([1, 2]))
    with pytest.raises(TypeError, match="special_entr\\(\\): argument 'input' \\(position 1\\) must be Tensor"):
        special.entr(1.0)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        special.multigammaln(x, 0)


def test_module_is_reachable_from_ember():
    assert ember.special is special
    assert sorted(special.__all__) == sorted(n for n in dir(special) if n in special.__all__)
    for name in special.__all__:
        assert callable(getattr(special, name))


def test_missing_device_kernel_is_a_clear_error():
    from ember.special import _module

    class FakeDeviceArray:  # an array of a device whose special-function module lacks the function
        device = SimpleNamespace(id=0)

    with pytest.raises(RuntimeError, match=r"torch.special.airy_ai\(\) is not available for tensors on device "
                                           r"'cuda:0'"):
        _module(FakeDeviceArray(), "no_such_function", "airy_ai")
