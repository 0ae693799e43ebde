"""Zero-dim tensors through every op that takes one: the same values and gradients as a 1-element tensor
(NumPy answers 0-d ufuncs with scalars, which kernels must not trip over: NOTE [ Zero-dim kernels ])."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F

# 0-d in, 1-d out by definition, a dimension needed (as in torch), or random
_NOT_ELEMENTWISE = {"atleast_1d", "flatten", "ravel", "flipud", "fliplr", "cartesian_prod", "slice_copy", "normal",
                    "rrelu", "dropout", "alpha_dropout", "feature_alpha_dropout", "gumbel_softmax", "bernoulli", "poisson",
                    "rand_like", "randn_like", "randint_like", "multinomial"}


_OP_MODULES = ("ember._ops", "ember.nn._functional", "ember.special", "ember.linalg")


def _unary_ops():
    """Every public function of ember, ember.nn.functional and ember.special that maps a 1-element float64
    tensor to a 1-element differentiable one."""
    found = []
    for prefix, mod in (("", ember), ("F.", F), ("special.", ember.special)):
        for name in sorted(dir(mod)):
            fn = getattr(mod, name)
            if name.startswith("_") or name in _NOT_ELEMENTWISE or not callable(fn) or isinstance(fn, type):
                continue
            if not getattr(fn, "__module__", "").startswith(_OP_MODULES):  # no switches (anomaly mode, seeds...)
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    y = fn(ember.tensor([0.3], dtype=ember.float64, requires_grad=True))
            except Exception:
                continue
            if isinstance(y, ember.Tensor) and y.shape == (1,) and y.requires_grad:
                found.append(pytest.param(fn, id=prefix + name))
    return found


UNARY = _unary_ops()


def test_the_sweep_covers_the_unary_families():
    names = {p.id for p in UNARY}
    assert len(names) > 100
    assert {"rsqrt", "sigmoid", "acos", "acosh", "F.tanhshrink", "F.logsigmoid", "special.i1", "F.softplus"} <= names


@pytest.mark.parametrize("fn", UNARY)
def test_zero_dim_matches_one_element(fn):
    x0 = ember.tensor(0.3, dtype=ember.float64, requires_grad=True)
    x1 = ember.tensor([0.3], dtype=ember.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y0, y1 = fn(x0), fn(x1)
    assert y0.shape == () and y0.dtype == y1.dtype
    np.testing.assert_allclose(y0.detach().numpy(), y1.detach().numpy()[0], rtol=1e-12, equal_nan=True)
    y0.backward()
    y1.sum().backward()
    np.testing.assert_allclose(x0.grad.numpy(), x1.grad.numpy()[0], rtol=1e-12, equal_nan=True)


def _t(v):
    return ember.tensor(v, dtype=ember.float64, requires_grad=True)


# values and gradients from torch 2.13
@pytest.mark.parametrize("make, value, grads", [
    (lambda a, b: F.cosine_similarity(a, b, dim=0), 1.0, [0.0, 0.0]),
    (lambda a, b: ember.linalg.vector_norm(a), 0.3, [1.0, None]),
    (lambda a, b: ember.dist(a, b), 0.4, [-1.0, 1.0]),
    (lambda a, b: ember.polar(a, b).abs(), 0.3, [1.0, 0.0]),
    (lambda a, b: ember.mvlgamma(a + 2.0, 2), 0.655471, [0.8850, None]),
    (lambda a, b: ember.sort(a).values, 0.3, [1.0, None]),
    (lambda a, b: ember.kthvalue(a, 1).values, 0.3, [1.0, None]),
    (lambda a, b: ember.zeros((), dtype=ember.float64).scatter_add(0, ember.tensor(0), a), 0.3, [1.0, None]),
    (lambda a, b: ember.msort(a), 0.3, [1.0, None]),
    (lambda a, b: ember.special.i1(a), 0.151694, [0.5170, None]),
])
def test_zero_dim_values_and_gradients_as_torch(make, value, grads):
    a, b = _t(0.3), _t(0.7)
    y = make(a, b)
    assert y.shape == ()
    assert float(y.detach()) == pytest.approx(value, abs=1e-6)
    y.backward()
    for t, g in zip((a, b), grads):
        assert (t.grad is None) if g is None else float(t.grad) == pytest.approx(g, abs=1e-4)


def test_zero_dim_frexp_and_poisson():
    m, e = ember.frexp(ember.tensor(0.3, dtype=ember.float64))
    assert m.shape == e.shape == () and float(m) == 0.6 and int(e) == -1 and e.dtype == ember.int32
    p = ember.poisson(ember.tensor(3.0))
    assert p.shape == () and p.dtype == ember.float32 and float(p) >= 0
