"""ember.distributions against torch.distributions: values and gradients of log_prob, entropy, moments, cdf and
kl_divergence on the same parameters; sample shapes; error types and messages."""
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.distributions as TD

import ember
import ember.distributions as ED

R = np.random.default_rng(0)


def _pos(*shape):
    return R.uniform(0.5, 2.5, shape)


def _prob(*shape):
    return R.uniform(0.1, 0.9, shape)


def _simplex(*shape):
    p = R.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _spd(n, batch=()):
    a = R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _tril(n):
    return np.tril(R.standard_normal((n, n)), -1) + np.diag(R.uniform(0.5, 1.5, n))


# name, constructor of (D, *params), float params, value, attributes to compare
CASES = [
    ("Normal", lambda D, a, b: D.Normal(a, b), [R.standard_normal(3), _pos(3)], R.standard_normal((2, 3))),
    ("Uniform", lambda D, a, b: D.Uniform(a, a + b), [R.standard_normal(3), _pos(3)], None),
    ("Laplace", lambda D, a, b: D.Laplace(a, b), [R.standard_normal(3), _pos(3)], R.standard_normal((2, 3))),
    ("Exponential", lambda D, a: D.Exponential(a), [_pos(4)], _pos(4)),
    ("Gamma", lambda D, a, b: D.Gamma(a, b), [_pos(4), _pos(4)], _pos(4)),
    ("Beta", lambda D, a, b: D.Beta(a, b), [_pos(4), _pos(4)], _prob(4)),
    ("Dirichlet", lambda D, a: D.Dirichlet(a), [_pos(2, 4)], _simplex(2, 4)),
    ("Poisson", lambda D, a: D.Poisson(a), [_pos(4) * 3], np.array([0., 1., 3., 7.])),
    ("Bernoulli_p", lambda D, p: D.Bernoulli(probs=p), [_prob(4)], np.array([0., 1., 1., 0.])),
    ("Bernoulli_l", lambda D, l: D.Bernoulli(logits=l), [R.standard_normal(4)], np.array([0., 1., 1., 0.])),
    ("Categorical_p", lambda D, p: D.Categorical(probs=p), [_simplex(3, 5)], np.array([0, 4, 2])),
    ("Categorical_l", lambda D, l: D.Categorical(logits=l), [R.standard_normal((3, 5))], np.array([1, 0, 3])),
    ("OneHot", lambda D, p: D.OneHotCategorical(probs=p), [_simplex(2, 3)], np.eye(3)[[0, 2]]),
    ("Binomial", lambda D, p: D.Binomial(6, probs=p), [_prob(4)], np.array([0., 2., 5., 6.])),
    ("Binomial_l", lambda D, l: D.Binomial(ember_or_torch_tensor(D, [3., 5.]), logits=l), [R.standard_normal(2)],
     np.array([1., 4.])),
    ("Multinomial", lambda D, p: D.Multinomial(7, probs=p), [_simplex(2, 3)], np.array([[1., 2., 4.], [7., 0., 0.]])),
    ("MVN_cov", lambda D, m, c: D.MultivariateNormal(m, covariance_matrix=c), [R.standard_normal((2, 3)), _spd(3)],
     R.standard_normal((4, 2, 3))),
    ("MVN_prec", lambda D, m, c: D.MultivariateNormal(m, precision_matrix=c), [R.standard_normal(3), _spd(3)],
     R.standard_normal((4, 3))),
    ("MVN_tril", lambda D, m, c: D.MultivariateNormal(m, scale_tril=c), [R.standard_normal(3), _tril(3)],
     R.standard_normal((4, 3))),
    ("LowRankMVN", lambda D, m, w, d: D.LowRankMultivariateNormal(m, w, d),
     [R.standard_normal((2, 3)), R.standard_normal((3, 2)), _pos(3)], R.standard_normal((4, 2, 3))),
    ("LogNormal", lambda D, a, b: D.LogNormal(a, b), [R.standard_normal(3), _pos(3)], _pos(2, 3)),
    ("Independent", lambda D, a, b: D.Independent(D.Normal(a, b), 1), [R.standard_normal((2, 3)), _pos(2, 3)],
     R.standard_normal((2, 3))),
    ("Transformed", lambda D, a, b: D.TransformedDistribution(
        D.Normal(a, b), [D.transforms.AffineTransform(0.5, 2.0), D.transforms.TanhTransform()]),
     [R.standard_normal(3), _pos(3)], R.uniform(-0.9, 0.9, 3)),
    ("Sigmoid", lambda D, a, b: D.TransformedDistribution(D.Normal(a, b), D.transforms.SigmoidTransform()),
     [R.standard_normal(3), _pos(3)], _prob(3)),
    ("RelaxedBernoulli", lambda D, l: D.RelaxedBernoulli(ember_or_torch_tensor(D, 0.7), logits=l),
     [R.standard_normal(3)], _prob(3)),
    ("RelaxedOneHot", lambda D, l: D.RelaxedOneHotCategorical(ember_or_torch_tensor(D, 0.7), logits=l),
     [R.standard_normal((2, 3))], _simplex(2, 3)),
]
CASES += [
    ("Cauchy", lambda D, a, b: D.Cauchy(a, b), [R.standard_normal(3), _pos(3)], R.standard_normal((2, 3))),
    ("Chi2", lambda D, a: D.Chi2(a), [_pos(3) * 2], _pos(3)),
    ("HalfNormal", lambda D, a: D.HalfNormal(a), [_pos(3)], _pos(2, 3)),
    ("Gumbel", lambda D, a, b: D.Gumbel(a, b), [R.standard_normal(3), _pos(3)], R.standard_normal((2, 3))),
    ("StudentT", lambda D, a, b, c: D.StudentT(a, b, c), [np.array([0.8, 1.5, 4.0]), R.standard_normal(3), _pos(3)],
     R.standard_normal((2, 3))),
    ("Geometric", lambda D, p: D.Geometric(p), [_prob(3)], np.array([0.0, 2.0, 5.0])),
    ("Geometric_l", lambda D, l: D.Geometric(logits=l), [R.standard_normal(3)], np.array([0.0, 2.0, 5.0])),
    ("HalfCauchy", lambda D, a: D.HalfCauchy(a), [_pos(3)], _pos(2, 3)),
    ("ContinuousBernoulli", lambda D, p: D.ContinuousBernoulli(p), [np.array([0.2, 0.4995, 0.5, 0.8])],
     np.array([0.3, 0.6, 0.01, 0.99])),
    ("ContinuousBernoulli_l", lambda D, l: D.ContinuousBernoulli(logits=l), [R.standard_normal(3)], _prob(3)),
    ("LogisticNormal", lambda D, a, b: D.LogisticNormal(a, b), [R.standard_normal(3), _pos(3)], _simplex(2, 4)),
    ("Pareto", lambda D, a, b: D.Pareto(a, b), [_pos(3), np.array([0.8, 1.5, 3.0])], _pos(2, 3) + 2.5),
    ("Weibull", lambda D, a, b: D.Weibull(a, b), [_pos(3), _pos(3)], _pos(2, 3)),
    ("NegativeBinomial", lambda D, n, p: D.NegativeBinomial(n, p), [_pos(3) * 3, _prob(3)], np.array([0., 2., 7.])),
    ("NegativeBinomial_l", lambda D, n, l: D.NegativeBinomial(n, logits=l), [_pos(3), R.standard_normal(3)],
     np.array([0., 2., 7.])),
    ("Mixture", lambda D, l, m, s: D.MixtureSameFamily(D.Categorical(logits=l), D.Normal(m, s)),
     [R.standard_normal((2, 3)), R.standard_normal((2, 3)), _pos(2, 3)], R.standard_normal((4, 2))),
    ("MixtureMVN", lambda D, l, m, s: D.MixtureSameFamily(D.Categorical(logits=l), D.Independent(D.Normal(m, s), 1)),
     [R.standard_normal(3), R.standard_normal((3, 2)), _pos(3, 2)], R.standard_normal((4, 2))),
]
# Uniform's value must lie in its support: set below from its parameters
CASES[1] = CASES[1][:3] + (CASES[1][2][0][None, :] + 0.3 * CASES[1][2][1][None, :] * np.array([[0.1], [0.9]]),)


def ember_or_torch_tensor(D, v):
    return (torch if D is TD else ember).tensor(v, dtype=(torch if D is TD else ember).float64)


def _both(build, params, grad=True):
    ep = [ember.tensor(p, requires_grad=grad) for p in params]
    tp = [torch.tensor(p, requires_grad=grad) for p in params]
    return build(ED, *ep), build(TD, *tp), ep, tp


def _close(e, t, atol=1e-7, rtol=1e-6):
    e = e.detach().numpy() if isinstance(e, ember.Tensor) else np.asarray(e)
    t = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
    assert e.shape == t.shape
    np.testing.assert_allclose(e, t, atol=atol, rtol=rtol)


def _value(case, module):
    v = case[3]
    return module.tensor(v, dtype=module.int64 if v.dtype.kind == "i" else module.float64)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_log_prob_and_grad(case):
    _, build, params, _ = case
    e, t, ep, tp = _both(build, params)
    assert tuple(e.batch_shape) == tuple(t.batch_shape) and tuple(e.event_shape) == tuple(t.event_shape)
    le, lt = e.log_prob(_value(case, ember)), t.log_prob(_value(case, torch))
    _close(le, lt)
    le.sum().backward()
    lt.sum().backward()
    for a, b in zip(ep, tp):
        _close(a.grad if a.grad is not None else np.zeros_like(b.detach().numpy()),
               b.grad if b.grad is not None else torch.zeros_like(b), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("attr", ["mean", "variance", "stddev", "mode"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_moments(case, attr):
    e, t, _, _ = _both(case[1], case[2], grad=False)
    try:
        expected = getattr(t, attr)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            getattr(e, attr)
        return
    got = getattr(e, attr)
    if name_is_nan(expected):
        assert np.isnan(got.numpy()).all()
    else:
        _close(got, expected)


def name_is_nan(t):
    return isinstance(t, torch.Tensor) and t.is_floating_point() and bool(torch.isnan(t).all())


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_entropy_and_grad(case):
    e, t, ep, tp = _both(case[1], case[2])
    try:
        ht = t.entropy()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            e.entropy()
        return
    he = e.entropy()
    _close(he, ht)
    if ht.requires_grad:
        he.sum().backward()
        ht.sum().backward()
        for a, b in zip(ep, tp):
            if b.grad is not None:
                _close(a.grad, b.grad, atol=1e-6, rtol=1e-5)


CDF_CASES = [c for c in CASES if c[0] in ("ContinuousBernoulli", "Normal", "Uniform", "Laplace", "Exponential", "Gamma", "LogNormal",
                                          "Transformed", "Sigmoid", "Cauchy", "HalfNormal", "Gumbel", "HalfCauchy",
                                          "Pareto", "Weibull")]


@pytest.mark.parametrize("case", CDF_CASES, ids=[c[0] for c in CDF_CASES])
def test_cdf_icdf(case):
    e, t, ep, tp = _both(case[1], case[2])
    ce, ct = e.cdf(_value(case, ember)), t.cdf(_value(case, torch))
    _close(ce, ct)
    if case[0] != "Gamma":
        ce.sum().backward()
        ct.sum().backward()
        for a, b in zip(ep, tp):
            _close(a.grad, b.grad, atol=1e-6, rtol=1e-5)
        q = np.array([0.1, 0.5, 0.8])[:, None] * np.ones(e.batch_shape)
        _close(e.icdf(ember.tensor(q)), t.icdf(torch.tensor(q)))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("sample_shape", [(), (5,), (2, 3)])
def test_sample_shapes(case, sample_shape):
    e, t, _, _ = _both(case[1], case[2], grad=False)
    se, st = e.sample(sample_shape), t.sample(sample_shape)
    assert tuple(se.shape) == tuple(st.shape)
    assert str(se.dtype).split(".")[1] == str(st.dtype).split(".")[1]
    assert e.has_rsample == t.has_rsample
    if t.has_rsample:
        assert tuple(e.rsample(sample_shape).shape) == tuple(t.rsample(sample_shape).shape)
    assert bool(e.support.check(se).all()) if not ED.constraints.is_dependent(e.support) else True


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_expand(case):
    e, t, _, _ = _both(case[1], case[2], grad=False)
    new_batch = (2,) + tuple(t.batch_shape)
    ee, te = e.expand(new_batch), t.expand(new_batch)
    assert tuple(ee.batch_shape) == tuple(te.batch_shape) and tuple(ee.event_shape) == tuple(te.event_shape)
    assert tuple(ee.sample().shape) == tuple(te.sample().shape)
    ve, vt = _value(case, ember), _value(case, torch)
    if vt.dim() > len(t.batch_shape) + len(t.event_shape):  # extra sample dims need not broadcast with (2,)
        ve, vt = ve[0], vt[0]
    _close(ee.log_prob(ve), te.log_prob(vt))


ENUM = [c for c in CASES if c[0] in ("Bernoulli_p", "Categorical_p", "OneHot", "Binomial")]


@pytest.mark.parametrize("case", ENUM, ids=[c[0] for c in ENUM])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support(case, expand):
    e, t, _, _ = _both(case[1], case[2], grad=False)
    _close(e.enumerate_support(expand), t.enumerate_support(expand))


# ----- KL -----

def _p(D, name, *params):
    return getattr(D, name)(*params)


KL_PAIRS = [
    ("Normal", "Normal", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Laplace", "Laplace", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Exponential", "Exponential", [_pos(3)], [_pos(3)]),
    ("Gamma", "Gamma", [_pos(3), _pos(3)], [_pos(3), _pos(3)]),
    ("Beta", "Beta", [_pos(3), _pos(3)], [_pos(3), _pos(3)]),
    ("Dirichlet", "Dirichlet", [_pos(2, 3)], [_pos(2, 3)]),
    ("Poisson", "Poisson", [_pos(3)], [_pos(3)]),
    ("Bernoulli", "Bernoulli", [_prob(3)], [_prob(3)]),
    ("Categorical", "Categorical", [_simplex(2, 4)], [_simplex(2, 4)]),
    ("OneHotCategorical", "OneHotCategorical", [_simplex(2, 4)], [_simplex(2, 4)]),
    ("Uniform", "Uniform", [np.array([0.2, 0.0]), np.array([0.5, 1.0])], [np.array([0.0, 0.1]), np.array([1.0, 2.0])]),
    ("Bernoulli", "Poisson", [_prob(3)], [_pos(3)]),
    ("Beta", "Exponential", [_pos(3), _pos(3)], [_pos(3)]),
    ("Beta", "Gamma", [_pos(3), _pos(3)], [_pos(3), _pos(3)]),
    ("Beta", "Normal", [_pos(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Beta", "Uniform", [_pos(2), _pos(2)], [np.array([-0.5, 0.2]), np.array([1.5, 1.0])]),
    ("Exponential", "Gamma", [_pos(3)], [_pos(3), _pos(3)]),
    ("Exponential", "Normal", [_pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Gamma", "Exponential", [_pos(3), _pos(3)], [_pos(3)]),
    ("Gamma", "Normal", [_pos(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Laplace", "Normal", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Normal", "Laplace", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Uniform", "Beta", [np.array([0.1, 0.0, -0.1]), np.array([0.7, 1.0, 0.5])], [_pos(3), _pos(3)]),
    ("Uniform", "Exponential", [np.array([0.1, 0.0, -0.1]), np.array([0.7, 1.0, 0.5])], [_pos(3)]),
    ("Uniform", "Gamma", [np.array([0.1, 0.0, -0.1]), np.array([0.7, 1.0, 0.5])], [_pos(3), _pos(3)]),
    ("Uniform", "Normal", [np.array([-0.5, 0.2, 1.0]), np.array([0.5, 2.0, 1.5])], [R.standard_normal(3), _pos(3)]),
    ("Normal", "Uniform", [R.standard_normal(3), _pos(3)], [np.zeros(3), np.ones(3)]),
    ("Gamma", "Beta", [_pos(3), _pos(3)], [_pos(3), _pos(3)]),
    ("Poisson", "Bernoulli", [_pos(3)], [_prob(3)]),
    ("LogNormal", "LogNormal", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("MultivariateNormal", "MultivariateNormal", [R.standard_normal((2, 3)), _spd(3)], [R.standard_normal(3), _spd(3)]),
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal",
     [R.standard_normal(3), R.standard_normal((3, 2)), _pos(3)], [R.standard_normal(3), R.standard_normal((3, 1)),
                                                                  _pos(3)]),
    ("LowRankMultivariateNormal", "MultivariateNormal", [R.standard_normal(3), R.standard_normal((3, 2)), _pos(3)],
     [R.standard_normal(3), _spd(3)]),
    ("MultivariateNormal", "LowRankMultivariateNormal", [R.standard_normal(3), _spd(3)],
     [R.standard_normal((2, 3)), R.standard_normal((3, 2)), _pos(3)]),
    ("Cauchy", "Cauchy", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Geometric", "Geometric", [_prob(3)], [_prob(3)]),
    ("HalfNormal", "HalfNormal", [_pos(3)], [_pos(3)]),
    ("Gumbel", "Gumbel", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Exponential", "Gumbel", [_pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Gamma", "Gumbel", [_pos(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Normal", "Gumbel", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Uniform", "Gumbel", [np.array([-0.5, 0.2, 1.0]), np.array([0.5, 2.0, 1.5])], [R.standard_normal(3), _pos(3)]),
    ("Gumbel", "Normal", [R.standard_normal(3), _pos(3)], [R.standard_normal(3), _pos(3)]),
    ("Gumbel", "Exponential", [R.standard_normal(3), _pos(3)], [_pos(3)]),
    ("Chi2", "Chi2", [_pos(3)], [_pos(3)]),
    ("Pareto", "Pareto", [np.array([1.0, 2.0, 0.5]), _pos(3)], [np.array([0.5, 1.0, 1.0]), _pos(3)]),
    ("ContinuousBernoulli", "ContinuousBernoulli", [np.array([0.2, 0.4995, 0.9])], [np.array([0.7, 0.3, 0.5001])]),
    ("Beta", "ContinuousBernoulli", [_pos(3), _pos(3)], [_prob(3)]),
    # an interval touching 0 or 1 is left out: torch calls those infinite, ember gives the finite value
    ("Uniform", "ContinuousBernoulli", [np.array([0.1, -0.1, 0.05]), np.array([0.7, 0.5, 0.9])], [_prob(3)]),
    ("ContinuousBernoulli", "Exponential", [_prob(3)], [_pos(3)]),
    ("ContinuousBernoulli", "Normal", [_prob(3)], [R.standard_normal(3), _pos(3)]),
    ("ContinuousBernoulli", "Uniform", [_prob(3)], [np.array([-0.5, 0.2, -1.0]), np.array([1.5, 1.0, 0.5])]),
    ("Normal", "ContinuousBernoulli", [R.standard_normal(3), _pos(3)], [_prob(3)]),
    ("Pareto", "Exponential", [_pos(3), np.array([0.8, 1.5, 3.0])], [_pos(3)]),
    ("Pareto", "Gamma", [_pos(3), np.array([0.8, 1.5, 3.0])], [_pos(3), _pos(3)]),
    ("Pareto", "Normal", [_pos(3), np.array([1.5, 2.5, 3.0])], [R.standard_normal(3), _pos(3)]),
    ("Uniform", "Pareto", [np.array([0.5, 1.0, 2.0]), np.array([1.5, 2.0, 3.0])], [np.array([0.7, 1.0, 1.0]), _pos(3)]),
    ("Normal", "Pareto", [R.standard_normal(3), _pos(3)], [_pos(3), _pos(3)]),
    ("Pareto", "Beta", [_pos(3), _pos(3)], [_pos(3), _pos(3)]),
    ("Chi2", "Gamma", [_pos(3)], [_pos(3), _pos(3)]),
]


@pytest.mark.parametrize("pair", KL_PAIRS, ids=[f"{p[0]}-{p[1]}" for p in KL_PAIRS])
def test_kl(pair):
    np_, nq, pp, qp = pair
    ep = [ember.tensor(a, requires_grad=True) for a in pp + qp]
    tp = [torch.tensor(a, requires_grad=True) for a in pp + qp]
    k = len(pp)
    ke = ED.kl_divergence(_p(ED, np_, *ep[:k]), _p(ED, nq, *ep[k:]))
    kt = TD.kl_divergence(_p(TD, np_, *tp[:k]), _p(TD, nq, *tp[k:]))
    _close(ke, kt, atol=1e-6, rtol=1e-6)
    if kt.requires_grad and bool(torch.isfinite(kt).all()):
        ke.sum().backward()
        kt.sum().backward()
        for a, b in zip(ep, tp):
            if b.grad is not None:
                _close(a.grad, b.grad, atol=1e-6, rtol=1e-5)


def test_kl_binomial():
    pe, pt = ember.tensor([0.3, 0.6], dtype=ember.float64), torch.tensor([0.3, 0.6], dtype=torch.float64)
    qe, qt = ember.tensor([0.5, 0.2], dtype=ember.float64), torch.tensor([0.5, 0.2], dtype=torch.float64)
    _close(ED.kl_divergence(ED.Binomial(5, pe), ED.Binomial(5, qe)),
           TD.kl_divergence(TD.Binomial(5, pt), TD.Binomial(5, qt)))
    _close(ED.kl_divergence(ED.Binomial(ember.tensor([5., 6.]), pe), ED.Binomial(5, qe)),
           TD.kl_divergence(TD.Binomial(torch.tensor([5., 6.]), pt), TD.Binomial(5, qt)))


def test_kl_independent():
    a, b = R.standard_normal((2, 3)), _pos(2, 3)
    ke = ED.kl_divergence(ED.Independent(ED.Normal(ember.tensor(a), ember.tensor(b)), 1),
                          ED.Independent(ED.Normal(ember.tensor(b), ember.tensor(b)), 1))
    kt = TD.kl_divergence(TD.Independent(TD.Normal(torch.tensor(a), torch.tensor(b)), 1),
                          TD.Independent(TD.Normal(torch.tensor(b), torch.tensor(b)), 1))
    _close(ke, kt)


# ----- errors -----

def _norm(msg):
    return re.sub(r"\s+", " ", msg.replace("torch.", "ember."))


ERRORS = [
    lambda D, M: D.Normal(M.tensor([0., 1.]), M.tensor([-1., 1.])),
    lambda D, M: D.Normal(0., 1.).log_prob(M.tensor([float("nan")])),
    lambda D, M: D.Normal(0., 1.).log_prob(1.0),
    lambda D, M: D.Normal(M.zeros(2), 1.).log_prob(M.zeros(3)),
    lambda D, M: D.MultivariateNormal(M.zeros(2), M.eye(2)).log_prob(M.zeros(3)),
    lambda D, M: D.Categorical(),
    lambda D, M: D.Categorical(M.tensor([0.5, 0.5]), logits=M.zeros(2)),
    lambda D, M: D.Categorical(M.tensor(0.5)),
    lambda D, M: D.Categorical(M.tensor([0.5, 0.5])).log_prob(M.tensor([2])),
    lambda D, M: D.Bernoulli(M.tensor([1.5])),
    lambda D, M: D.Bernoulli(M.tensor([0.5])).log_prob(M.tensor([0.5])),
    lambda D, M: D.Uniform(M.tensor([1.]), M.tensor([0.])),
    lambda D, M: D.Gamma(M.tensor([1.]), M.tensor([0.])),
    lambda D, M: D.Beta(M.tensor([1.]), M.tensor([-1.])),
    lambda D, M: D.Dirichlet(M.tensor(1.)),
    lambda D, M: D.Exponential(M.tensor([1.])).log_prob(M.tensor([-1.])),
    lambda D, M: D.Poisson(M.tensor([1.])).log_prob(M.tensor([0.5])),
    lambda D, M: D.MultivariateNormal(M.zeros(2)),
    lambda D, M: D.MultivariateNormal(M.tensor(0.), M.eye(2)),
    lambda D, M: D.MultivariateNormal(M.zeros(2), M.tensor([[1., 2.], [2., 1.]])),
    lambda D, M: D.LowRankMultivariateNormal(M.zeros(2), M.zeros(3, 1), M.ones(2)),
    lambda D, M: D.Multinomial(M.tensor(3), M.tensor([0.5, 0.5])),
    lambda D, M: D.Independent(D.Normal(M.zeros(2), 1.), 2),
    lambda D, M: D.Normal(0., 1.).enumerate_support(),
    lambda D, M: D.kl_divergence(D.Normal(0., 1.), D.Categorical(M.ones(2))),
    lambda D, M: D.kl_divergence(D.Binomial(3, M.tensor([0.5])), D.Binomial(5, M.tensor([0.5]))),
    lambda D, M: D.kl_divergence(D.MultivariateNormal(M.zeros(2), M.eye(2)),
                                 D.MultivariateNormal(M.zeros(3), M.eye(3))),
    lambda D, M: D.Binomial(M.tensor([2., 3.]), M.tensor([0.5, 0.5])).entropy(),
    lambda D, M: D.Normal(M.zeros(2), 1.).expand([3]),
    lambda D, M: D.Distribution.set_default_validate_args(3),
    lambda D, M: D.Geometric(M.tensor([0.0, 0.5])),
    lambda D, M: D.Geometric(M.tensor([1.5])),
    lambda D, M: D.MixtureSameFamily(D.Normal(0., 1.), D.Normal(M.zeros(2), 1.)),
    lambda D, M: D.MixtureSameFamily(D.Categorical(M.ones(3)), D.Normal(M.zeros(2), 1.)),
    lambda D, M: D.StudentT(M.tensor([-1.0])),
    lambda D, M: D.Chi2(M.tensor([0.0])),
    lambda D, M: D.HalfNormal(M.tensor([1.0])).log_prob(M.tensor([-1.0])),
    lambda D, M: D.TransformedDistribution(D.Normal(0., 1.), 3),
    lambda D, M: D.ContinuousBernoulli(M.tensor([1.5]), validate_args=True),
    lambda D, M: D.ContinuousBernoulli(M.tensor([0.5])).log_prob(M.tensor([1.5])),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    with pytest.raises(Exception) as te:
        ERRORS[i](TD, torch)
    with pytest.raises(Exception) as ee:
        ERRORS[i](ED, ember)
    assert type(ee.value) is type(te.value)
    assert _norm(str(ee.value)) == _norm(str(te.value))


def test_validate_args_off():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = TD.Normal(torch.tensor([0.]), torch.tensor([-1.]), validate_args=False).log_prob(torch.tensor([1.]))
    e = ED.Normal(ember.tensor([0.]), ember.tensor([-1.]), validate_args=False).log_prob(ember.tensor([1.]))
    assert np.isnan(e.numpy()).all() == np.isnan(t.numpy()).all()


def test_repr():
    assert repr(ED.Normal(0., 1.)) == repr(TD.Normal(0., 1.))
    assert repr(ED.Normal(ember.zeros(2), 1.)).replace("ember", "torch") == repr(TD.Normal(torch.zeros(2), 1.))
    assert repr(ED.Categorical(ember.ones(3))).replace("ember", "torch") == repr(TD.Categorical(torch.ones(3)))
    for make in (lambda D, M: D.Beta(M.tensor([1., 2.]), 1.), lambda D, M: D.LogNormal(0., 1.),
                 lambda D, M: D.Independent(D.Normal(M.zeros(2, 3), 1.), 1), lambda D, M: D.Binomial(3, M.ones(2) / 2),
                 lambda D, M: D.MultivariateNormal(M.zeros(2), M.eye(2)), lambda D, M: D.Uniform(0., 1.)):
        assert repr(make(ED, ember)).replace("ember", "torch") == repr(make(TD, torch))
    for c in ("positive", "real", "simplex", "unit_interval", "nonnegative_integer", "real_vector"):
        assert repr(getattr(ED.constraints, c)) == repr(getattr(TD.constraints, c))
    assert repr(ED.constraints.interval(0, 1)) == repr(TD.constraints.interval(0, 1))
    assert repr(ED.constraints.integer_interval(0, 3)) == repr(TD.constraints.integer_interval(0, 3))


def test_submodule_paths():
    import importlib
    for mod, name in (("normal", "Normal"), ("categorical", "Categorical"), ("relaxed_categorical",
                      "RelaxedOneHotCategorical"), ("transforms", "TanhTransform"), ("kl", "kl_divergence"),
                      ("utils", "broadcast_all"), ("studentT", "StudentT"),
                      ("one_hot_categorical", "OneHotCategorical")):
        getattr(importlib.import_module(f"torch.distributions.{mod}"), name)
        getattr(importlib.import_module(f"ember.distributions.{mod}"), name)


# ----- transforms -----

TRANSFORMS = [
    ("Exp", lambda T, M: T.ExpTransform(), (2, 3)),
    ("Sigmoid", lambda T, M: T.SigmoidTransform(), (2, 3)),
    ("Tanh", lambda T, M: T.TanhTransform(), (2, 3)),
    ("Softplus", lambda T, M: T.SoftplusTransform(), (2, 3)),
    ("Affine", lambda T, M: T.AffineTransform(0.5, -2.0), (2, 3)),
    ("AffineTensor", lambda T, M: T.AffineTransform(M.tensor([0.5, 1.0, 2.0], dtype=M.float64),
                                                    M.tensor([1.0, -2.0, 0.5], dtype=M.float64), event_dim=1), (2, 3)),
    ("Power", lambda T, M: T.PowerTransform(M.tensor(3.0, dtype=M.float64)), (2, 3)),
    ("Compose", lambda T, M: T.ComposeTransform([T.AffineTransform(0.1, 2.0), T.TanhTransform()]), (2, 3)),
    ("StickBreaking", lambda T, M: T.StickBreakingTransform(), (2, 3)),
    ("Independent", lambda T, M: T.IndependentTransform(T.ExpTransform(), 1), (2, 3)),
    ("Reshape", lambda T, M: T.ReshapeTransform((6,), (2, 3)), (4, 6)),
    ("Inverse", lambda T, M: T.SigmoidTransform().inv, (2, 3)),
]


@pytest.mark.parametrize("case", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transforms(case):
    _, make, shape = case
    te, tt = make(ED.transforms, ember), make(TD.transforms, torch)
    x = R.uniform(0.1, 0.9, shape) if case[0] in ("Power", "Inverse") else R.standard_normal(shape)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = te(xe), tt(xt)
    _close(ye, yt)
    _close(te.inv(ye), tt.inv(yt), atol=1e-6)
    if case[0] != "Reshape":
        le, lt = te.log_abs_det_jacobian(xe, ye), tt.log_abs_det_jacobian(xt, yt)
        _close(le, lt)
        (ye.sum() + le.sum()).backward()
        (yt.sum() + lt.sum()).backward()
        _close(xe.grad, xt.grad, atol=1e-6)
    assert tuple(te.forward_shape(shape)) == tuple(tt.forward_shape(shape))
    assert te.domain.event_dim == tt.domain.event_dim and te.codomain.event_dim == tt.codomain.event_dim
    assert te.bijective == tt.bijective
    assert repr(te) == repr(tt)


def test_constraint_registry():
    C, CT = ED.constraints, TD.constraints
    for name in ("positive", "real", "unit_interval", "simplex", "real_vector", "nonnegative", "lower_cholesky"):
        for reg_e, reg_t in ((ED.biject_to, TD.biject_to), (ED.transform_to, TD.transform_to)):
            try:
                expected = repr(reg_t(getattr(CT, name)))
            except NotImplementedError as e:
                with pytest.raises(NotImplementedError, match=str(e)):
                    reg_e(getattr(C, name))
                continue
            assert repr(reg_e(getattr(C, name))) == expected
    x = R.standard_normal((3, 4))
    _close(ED.biject_to(C.interval(-1.0, 2.0))(ember.tensor(x)), TD.biject_to(CT.interval(-1.0, 2.0))(torch.tensor(x)))


def test_logistic_normal_via_stick_breaking():
    m, s, v = R.standard_normal(3), _pos(3), _simplex(2, 4)
    de = ED.TransformedDistribution(ED.Normal(ember.tensor(m), ember.tensor(s)), ED.transforms.StickBreakingTransform())
    dt = TD.TransformedDistribution(TD.Normal(torch.tensor(m), torch.tensor(s)), TD.transforms.StickBreakingTransform())
    assert tuple(de.event_shape) == tuple(dt.event_shape) == (4,)
    _close(de.log_prob(ember.tensor(v)), dt.log_prob(torch.tensor(v)))
    assert tuple(de.sample((5,)).shape) == tuple(dt.sample((5,)).shape)


def _workflow(M, D, logits, mu, log_std, z_mu, z_log_std, actions, pre_tanh):
    # policy gradient (discrete), squashed Gaussian policy (SAC) and a VAE's KL term, as one loss
    cat = D.Categorical(logits=logits)
    pg = -(cat.log_prob(actions) * M.tensor([1.0, -0.5, 2.0], dtype=M.float64)).mean() - 0.01 * cat.entropy().mean()
    squashed = D.TransformedDistribution(D.Independent(D.Normal(mu, log_std.exp()), 1),
                                         [D.transforms.TanhTransform(cache_size=1)])
    sac = squashed.log_prob(M.tanh(pre_tanh)).sum()
    prior = D.Normal(M.zeros_like(z_mu), M.ones_like(z_log_std))
    kl = D.kl_divergence(D.Normal(z_mu, z_log_std.exp()), prior).sum(-1).mean()
    return pg + sac + kl


def test_rl_and_vae_workflows_grads():
    arrays = [R.standard_normal((3, 4)), R.standard_normal((3, 2)), 0.3 * R.standard_normal((3, 2)),
              R.standard_normal((5, 8)), 0.3 * R.standard_normal((5, 8))]
    ep = [ember.tensor(a, requires_grad=True) for a in arrays]
    tp = [torch.tensor(a, requires_grad=True) for a in arrays]
    pre = R.standard_normal((3, 2))
    le = _workflow(ember, ED, *ep, ember.tensor([0, 3, 1]), ember.tensor(pre))
    lt = _workflow(torch, TD, *tp, torch.tensor([0, 3, 1]), torch.tensor(pre))
    _close(le, lt)
    le.backward()
    lt.backward()
    for a, b in zip(ep, tp):
        _close(a.grad, b.grad, atol=1e-6)
