"""ember.distributions: densities against scipy.stats, sample shapes and moments, reparameterized gradients,
validation errors, KL divergences against closed forms and Monte Carlo."""
import math

import numpy as np
import pytest
from scipy import stats

import ember
import ember.distributions as D
from ember.autograd import gradcheck, gradgradcheck
from ember.distributions import constraints
from ember.distributions import transforms as T

F64 = ember.float64


def t(a, grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def close(x, y, atol=1e-8, rtol=1e-6):
    x = x.detach().numpy() if isinstance(x, ember.Tensor) else np.asarray(x)
    np.testing.assert_allclose(x, y, atol=atol, rtol=rtol)


LOC, SCALE, POS, PROB = np.array([-1.0, 0.3, 2.0]), np.array([0.5, 1.0, 2.5]), np.array([0.7, 1.5, 4.0]), \
    np.array([0.2, 0.5, 0.9])
XS = np.array([0.4, 1.1, 3.0])

# name, ember distribution, scipy frozen distribution, values inside the support
SCIPY = [
    ("Normal", lambda: D.Normal(t(LOC), t(SCALE)), stats.norm(LOC, SCALE), XS - 1),
    ("Uniform", lambda: D.Uniform(t(LOC), t(LOC + SCALE)), stats.uniform(LOC, SCALE), LOC + 0.3 * SCALE),
    ("Laplace", lambda: D.Laplace(t(LOC), t(SCALE)), stats.laplace(LOC, SCALE), XS - 1),
    ("Exponential", lambda: D.Exponential(t(POS)), stats.expon(scale=1 / POS), XS),
    ("Gamma", lambda: D.Gamma(t(POS), t(SCALE)), stats.gamma(POS, scale=1 / SCALE), XS),
    ("Beta", lambda: D.Beta(t(POS), t(SCALE)), stats.beta(POS, SCALE), PROB),
    ("LogNormal", lambda: D.LogNormal(t(LOC), t(SCALE)), stats.lognorm(SCALE, scale=np.exp(LOC)), XS),
    ("Cauchy", lambda: D.Cauchy(t(LOC), t(SCALE)), stats.cauchy(LOC, SCALE), XS - 1),
    ("HalfNormal", lambda: D.HalfNormal(t(SCALE)), stats.halfnorm(scale=SCALE), XS),
    ("Gumbel", lambda: D.Gumbel(t(LOC), t(SCALE)), stats.gumbel_r(LOC, SCALE), XS - 1),
    ("Chi2", lambda: D.Chi2(t(POS)), stats.chi2(POS), XS),
    ("StudentT", lambda: D.StudentT(t([2.5, 3.0, 6.0]), t(LOC), t(SCALE)), stats.t([2.5, 3.0, 6.0], LOC, SCALE), XS),
    ("HalfCauchy", lambda: D.HalfCauchy(t(SCALE)), stats.halfcauchy(scale=SCALE), XS),
    ("Pareto", lambda: D.Pareto(t([0.3, 0.5, 1.0]), t([2.5, 3.0, 4.5])),
     stats.pareto([2.5, 3.0, 4.5], scale=[0.3, 0.5, 1.0]), XS + 0.5),
    ("Weibull", lambda: D.Weibull(t(POS), t(SCALE + 0.5)), stats.weibull_min(SCALE + 0.5, scale=POS), XS),
]


@pytest.mark.parametrize("name,make,ref,x", SCIPY, ids=[c[0] for c in SCIPY])
def test_against_scipy(name, make, ref, x):
    d = make()
    close(d.log_prob(t(x)), ref.logpdf(x))
    if name not in ("Cauchy", "HalfCauchy"):
        close(d.mean, ref.mean())
        close(d.variance, ref.var())
        close(d.stddev, ref.std())
    if name not in ("Beta", "Chi2", "StudentT"):  # torch's Beta has no cdf either
        close(d.cdf(t(x)), ref.cdf(x))
    close(d.entropy(), ref.entropy())
    if name not in ("Gamma", "Beta", "Chi2", "StudentT", "Gumbel", "Pareto", "Weibull"):
        close(d.icdf(t([0.2, 0.5, 0.7])), ref.ppf([0.2, 0.5, 0.7]))


DISCRETE = [
    ("Bernoulli", lambda: D.Bernoulli(t(PROB)), stats.bernoulli(PROB), np.array([1.0, 0.0, 1.0])),
    ("Binomial", lambda: D.Binomial(7, t(PROB)), stats.binom(7, PROB), np.array([0.0, 3.0, 7.0])),
    ("Poisson", lambda: D.Poisson(t(POS)), stats.poisson(POS), np.array([0.0, 2.0, 5.0])),
    ("Geometric", lambda: D.Geometric(t(PROB)), stats.geom(PROB, loc=-1), np.array([0.0, 2.0, 5.0])),
    # torch's probs is the success probability of scipy's "failure" count: scipy's p is 1 - probs
    ("NegativeBinomial", lambda: D.NegativeBinomial(t(POS), t(PROB)), stats.nbinom(POS, 1 - PROB),
     np.array([0.0, 2.0, 5.0])),
]


@pytest.mark.parametrize("name,make,ref,x", DISCRETE, ids=[c[0] for c in DISCRETE])
def test_discrete_against_scipy(name, make, ref, x):
    d = make()
    close(d.log_prob(t(x)), ref.logpmf(x))
    close(d.mean, ref.mean())
    close(d.variance, ref.var())
    if name not in ("Poisson", "NegativeBinomial"):
        close(d.entropy(), ref.entropy())


def test_categorical_values():
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])
    d = D.Categorical(probs=t(p * 2))  # normalized internally
    close(d.probs, p)
    close(d.log_prob(ember.tensor([2, 0])), np.log([0.5, 0.6]))
    close(d.entropy(), -(p * np.log(p)).sum(-1))
    assert d.mode.tolist() == [2, 0]
    assert d.enumerate_support().shape == (3, 2) and d.enumerate_support(False).shape == (3, 1)
    dl = D.Categorical(logits=t(np.log(p) + 3))
    close(dl.probs, p)
    close(dl.logits, np.log(p))
    assert D.Categorical(probs=t(p)).support.upper_bound == 2


def test_multinomial_onehot_dirichlet_values():
    p = np.array([0.2, 0.3, 0.5])
    x = np.array([2.0, 3.0, 5.0])
    close(D.Multinomial(10, t(p)).log_prob(t(x)), stats.multinomial(10, p).logpmf(x))
    close(D.Multinomial(10, t(p)).entropy(), stats.multinomial(10, p).entropy())
    close(D.OneHotCategorical(t(p)).log_prob(t([0.0, 0.0, 1.0])), math.log(0.5))
    a = np.array([0.7, 2.0, 3.5])
    d = D.Dirichlet(t(a))
    close(d.log_prob(t(p)), stats.dirichlet(a).logpdf(p))
    close(d.entropy(), stats.dirichlet(a).entropy())
    close(d.mean, stats.dirichlet(a).mean())
    close(d.variance, stats.dirichlet(a).var())


def test_mvn_against_scipy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3))
    cov = a @ a.T + np.eye(3)
    mu = rng.standard_normal(3)
    x = rng.standard_normal((4, 3))
    ref = stats.multivariate_normal(mu, cov)
    for kw in ({"covariance_matrix": t(cov)}, {"precision_matrix": t(np.linalg.inv(cov))},
               {"scale_tril": t(np.linalg.cholesky(cov))}):
        d = D.MultivariateNormal(t(mu), **kw)
        close(d.log_prob(t(x)), ref.logpdf(x))
        close(d.entropy(), ref.entropy())
        close(d.covariance_matrix, cov)
        close(d.precision_matrix, np.linalg.inv(cov))
        close(d.variance, np.diag(cov))
    w, diag = rng.standard_normal((3, 2)), np.array([0.5, 1.0, 2.0])
    lr = D.LowRankMultivariateNormal(t(mu), t(w), t(diag))
    ref = stats.multivariate_normal(mu, w @ w.T + np.diag(diag))
    close(lr.log_prob(t(x)), ref.logpdf(x))
    close(lr.entropy(), ref.entropy())
    close(lr.covariance_matrix, w @ w.T + np.diag(diag))


# ----- samples -----

MOMENTS = [
    ("Normal", lambda: D.Normal(t(LOC), t(SCALE))),
    ("Uniform", lambda: D.Uniform(t(LOC), t(LOC + SCALE))),
    ("Laplace", lambda: D.Laplace(t(LOC), t(SCALE))),
    ("Exponential", lambda: D.Exponential(t(POS))),
    ("Gamma", lambda: D.Gamma(t(POS), t(SCALE))),
    ("Beta", lambda: D.Beta(t(POS), t(SCALE))),
    ("Dirichlet", lambda: D.Dirichlet(t(POS))),
    ("LogNormal", lambda: D.LogNormal(t([0.1, -0.5]), t([0.3, 0.5]))),
    ("Bernoulli", lambda: D.Bernoulli(t(PROB))),
    ("Binomial", lambda: D.Binomial(t([3.0, 8.0, 1.0]), t(PROB))),
    ("Poisson", lambda: D.Poisson(t(POS))),
    ("Categorical", lambda: D.Categorical(t([0.1, 0.2, 0.7]))),
    ("OneHotCategorical", lambda: D.OneHotCategorical(t([0.1, 0.2, 0.7]))),
    ("Multinomial", lambda: D.Multinomial(5, t([0.1, 0.2, 0.7]))),
    ("MultivariateNormal", lambda: D.MultivariateNormal(t([1.0, -1.0]), t([[2.0, 0.5], [0.5, 1.0]]))),
    ("LowRankMVN", lambda: D.LowRankMultivariateNormal(t([1.0, -1.0]), t([[1.0], [0.5]]), t([1.0, 0.75]))),
    ("HalfNormal", lambda: D.HalfNormal(t(SCALE))),
    ("Gumbel", lambda: D.Gumbel(t(LOC), t(SCALE))),
    ("Chi2", lambda: D.Chi2(t(POS))),
    ("StudentT", lambda: D.StudentT(t([6.0, 9.0]), t([0.5, -1.0]), t([1.0, 2.0]))),
    ("Geometric", lambda: D.Geometric(t(PROB))),
    ("Mixture", lambda: D.MixtureSameFamily(D.Categorical(t([0.3, 0.7])), D.Normal(t([-2.0, 1.0]), t([0.5, 1.0])))),
    ("Pareto", lambda: D.Pareto(t([0.3, 0.5]), t([6.0, 8.0]))),
    ("Weibull", lambda: D.Weibull(t([1.0, 2.0]), t([1.5, 3.0]))),
    ("NegativeBinomial", lambda: D.NegativeBinomial(t([2.0, 5.0]), t([0.3, 0.6]))),
]


@pytest.mark.parametrize("name,make", MOMENTS, ids=[c[0] for c in MOMENTS])
def test_sample_shapes_and_moments(name, make):
    ember.manual_seed(0)
    d = make()
    n = 40000
    s = d.sample((n,))
    assert s.shape == (n,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert d.sample().shape == tuple(d.batch_shape) + tuple(d.event_shape)
    assert d.sample((2, 3)).shape == (2, 3) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert not s.requires_grad
    assert bool(d.support.check(s).all())
    x = s.numpy().astype(np.float64)
    if name == "Categorical":
        mean, var = (np.arange(3) * [0.1, 0.2, 0.7]).sum(), None
        np.testing.assert_allclose(x.mean(0), mean, atol=0.03)
        return
    mean, var = d.mean.numpy(), d.variance.numpy()
    np.testing.assert_allclose(x.mean(0), mean, atol=5 * np.sqrt(var.max() / n) + 1e-3)
    np.testing.assert_allclose(x.var(0), var, rtol=0.06, atol=1e-3)


def test_manual_seed_reproducible():
    d = D.Normal(t(LOC), t(SCALE))
    g = D.Gamma(t(POS), 1.0)
    ember.manual_seed(3)
    a, b, c = d.sample((4,)), g.sample((4,)), D.Categorical(t([0.2, 0.8])).sample((5,))
    ember.manual_seed(3)
    close(d.sample((4,)), a.numpy())
    close(g.sample((4,)), b.numpy())
    assert D.Categorical(t([0.2, 0.8])).sample((5,)).tolist() == c.tolist()


def test_sample_dtype_follows_params():
    d = D.Normal(ember.zeros(2), 1.0)
    assert d.sample().dtype == ember.float32 and d.rsample((3,)).dtype == ember.float32
    assert D.Normal(0.0, 1.0).sample().dtype == ember.float32
    assert D.Categorical(ember.ones(3)).sample().dtype == ember.int64
    assert D.Bernoulli(t([0.5])).sample().dtype == F64


# ----- gradients -----

def _seeded(fn):
    def run(*args):
        ember.manual_seed(7)
        return fn(*args)
    return run


RSAMPLE = [
    ("Normal", lambda a, b: D.Normal(a, b).rsample((3,)), [LOC, SCALE]),
    ("Uniform", lambda a, b: D.Uniform(a, a + b).rsample((3,)), [LOC, SCALE]),
    ("Laplace", lambda a, b: D.Laplace(a, b).rsample((3,)), [LOC, SCALE]),
    ("Exponential", lambda a: D.Exponential(a).rsample((3,)), [POS]),
    ("Gamma_rate", lambda b: D.Gamma(t(POS), b).rsample((3,)), [SCALE]),
    ("LogNormal", lambda a, b: D.LogNormal(a, b).rsample((3,)), [LOC, SCALE]),
    ("MVN", lambda m, l: D.MultivariateNormal(m, scale_tril=l.tril()).rsample((2,)),
     [np.array([0.1, 0.2]), np.array([[1.0, 0.0], [0.3, 0.8]])]),
    ("LowRankMVN", lambda m, w, d: D.LowRankMultivariateNormal(m, w, d).rsample((2,)),
     [np.array([0.1, 0.2]), np.array([[1.0], [0.3]]), np.array([0.5, 0.9])]),
    ("RelaxedBernoulli", lambda l: D.RelaxedBernoulli(t(0.5), logits=l).rsample((2,)), [LOC]),
    ("RelaxedOneHot", lambda l: D.RelaxedOneHotCategorical(t(0.5), logits=l).rsample((2,)), [LOC]),
    ("Cauchy", lambda a, b: D.Cauchy(a, b).rsample((3,)), [LOC, SCALE]),
    ("HalfNormal", lambda b: D.HalfNormal(b).rsample((3,)), [SCALE]),
    ("StudentT_loc_scale", lambda a, b: D.StudentT(t(POS), a, b).rsample((3,)), [LOC, SCALE]),
    ("Transformed", lambda a, b: D.TransformedDistribution(
        D.Normal(a, b), [T.AffineTransform(0.5, 2.0), T.TanhTransform()]).rsample((2,)), [LOC, SCALE * 0.1]),
]


@pytest.mark.parametrize("name,fn,params", RSAMPLE, ids=[c[0] for c in RSAMPLE])
def test_rsample_gradcheck(name, fn, params):
    assert gradcheck(_seeded(fn), [t(p, grad=True) for p in params])


LOGPROB = [
    ("Normal", lambda a, b: D.Normal(a, b).log_prob(t(XS)) + D.Normal(a, b).entropy(), [LOC, SCALE]),
    ("Laplace", lambda a, b: D.Laplace(a, b).log_prob(t(XS)) + D.Laplace(a, b).entropy(), [LOC, SCALE]),
    ("Gamma", lambda a, b: D.Gamma(a, b).log_prob(t(XS)) + D.Gamma(a, b).entropy(), [POS, SCALE]),
    # a concentration of exactly 1 is avoided: xlogy's gradient in x is 0 at x = 0, as torch's
    ("Beta", lambda a, b: D.Beta(a, b).log_prob(t(PROB)) + D.Beta(a, b).entropy(), [POS, SCALE + 0.05]),
    ("Dirichlet", lambda a: D.Dirichlet(a).log_prob(t([0.2, 0.3, 0.5])) + D.Dirichlet(a).entropy(), [POS]),
    ("Bernoulli", lambda l: D.Bernoulli(logits=l).log_prob(t([1.0, 0.0, 1.0])) + D.Bernoulli(logits=l).entropy(),
     [LOC]),
    ("Categorical", lambda l: D.Categorical(logits=l).log_prob(ember.tensor([2, 0]))
     + D.Categorical(logits=l).entropy(), [np.array([[0.1, 0.5, -1.0], [2.0, 0.0, 0.3]])]),
    ("Binomial", lambda p: D.Binomial(5, p).log_prob(t([0.0, 2.0, 5.0])), [PROB]),
    # probs 0.5 (logits exactly 0) is where a max(x, 0)-based formula would get a one-sided gradient
    ("Bernoulli_probs", lambda p: D.Bernoulli(p).log_prob(t([1.0, 0.0, 1.0])) + D.Bernoulli(p).entropy(), [PROB]),
    ("Poisson", lambda r: D.Poisson(r).log_prob(t([0.0, 2.0, 5.0])), [POS]),
    ("StudentT", lambda d, a, b: D.StudentT(d, a, b).log_prob(t(XS)) + D.StudentT(d, a, b).entropy(),
     [POS, LOC, SCALE]),
    ("Gumbel", lambda a, b: D.Gumbel(a, b).log_prob(t(XS)) + D.Gumbel(a, b).entropy(), [LOC, SCALE]),
    ("Geometric", lambda p: D.Geometric(p).log_prob(t([0.0, 2.0, 5.0])) + D.Geometric(p).entropy(), [PROB]),
    ("Mixture", lambda l, m: D.MixtureSameFamily(D.Categorical(logits=l), D.Normal(m, t([0.5, 1.0, 2.0])))
     .log_prob(t([0.3, -1.0])), [LOC, LOC[::-1].copy()]),
    ("MVN", lambda m, c: D.MultivariateNormal(m, c @ c.mT + ember.eye(2, dtype=F64)).log_prob(t([[0.3, -0.2]])),
     [np.array([0.1, 0.2]), np.array([[1.0, 0.2], [0.3, 0.8]])]),
    ("LowRankMVN", lambda m, w, d: D.LowRankMultivariateNormal(m, w, d).log_prob(t([[0.3, -0.2]])),
     [np.array([0.1, 0.2]), np.array([[1.0], [0.3]]), np.array([0.5, 0.9])]),
]


@pytest.mark.parametrize("name,fn,params", LOGPROB, ids=[c[0] for c in LOGPROB])
def test_log_prob_entropy_gradcheck(name, fn, params):
    inputs = [t(p, grad=True) for p in params]
    assert gradcheck(fn, inputs)
    if name in ("Normal", "Categorical", "Gamma"):
        assert gradgradcheck(fn, inputs)


def test_gamma_implicit_reparameterization():
    # d/da E[x] = 1/rate and d/da E[log x] = trigamma(a): checks the concentration gradient of rsample
    ember.manual_seed(0)
    a = t([0.3, 1.0, 5.0], grad=True)
    x = D.Gamma(a, t([2.0, 1.0, 0.5])).rsample((40000,))
    x.mean(0).sum().backward()
    close(a.grad, [0.5, 1.0, 2.0], rtol=0.04)
    a.grad = None
    ember.manual_seed(1)
    D.Gamma(a, 1.0).rsample((40000,)).log().mean(0).sum().backward()
    from scipy.special import polygamma
    close(a.grad, polygamma(1, [0.3, 1.0, 5.0]), rtol=0.06)


def test_beta_dirichlet_rsample_gradients():
    ember.manual_seed(0)
    a, b = t([0.5, 2.0], grad=True), t([1.5, 3.0], grad=True)
    D.Beta(a, b).rsample((40000,)).mean(0).sum().backward()
    # d/da a/(a+b) = b/(a+b)^2, d/db = -a/(a+b)^2
    close(a.grad, [1.5 / 4, 3.0 / 25], rtol=0.06)
    close(b.grad, [-0.5 / 4, -2.0 / 25], rtol=0.08)
    c = t([1.0, 2.0, 3.0], grad=True)
    D.Dirichlet(c).rsample((40000,)).mean(0)[0].backward()
    close(c.grad, [5 / 36, -1 / 36, -1 / 36], atol=0.01)


def test_straight_through_and_sample_no_grad():
    p = t([0.2, 0.8], grad=True)
    d = D.OneHotCategoricalStraightThrough(probs=p)
    y = d.rsample()
    assert y.requires_grad and set(y.detach().tolist()) == {0.0, 1.0}
    (y * t([1.0, 2.0])).sum().backward()
    close(p.grad, [-0.8, 0.2])  # d/dp of w . p / sum(p), w = [1, 2]
    assert not D.Normal(t(LOC, grad=True), 1.0).sample().requires_grad


# ----- validation -----

def test_parameter_validation_messages():
    with pytest.raises(ValueError, match=r"Expected parameter scale \(Tensor of shape \(2,\)\) of distribution "
                                         r"Normal\(loc: ember.Size\(\[2\]\), scale: ember.Size\(\[2\]\)\) to satisfy "
                                         r"the constraint GreaterThan\(lower_bound=0.0\), but found invalid values"):
        D.Normal(t([0.0, 1.0]), t([-1.0, 1.0]))
    with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified, but not both."):
        D.Bernoulli()
    with pytest.raises(ValueError, match="constraint Simplex"):
        D.Categorical(t([-0.5, 1.5]))
    with pytest.raises(ValueError, match="constraint LessThan"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="constraint PositiveDefinite"):
        D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]]))
    D.Normal(t([0.0]), t([-1.0]), validate_args=False)  # no error


def test_sample_validation_messages():
    d = D.Normal(0.0, 1.0)
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        d.log_prob(1.0)
    with pytest.raises(ValueError, match=r"to be within the support \(Real\(\)\) of the distribution "
                                         r"Normal\(loc: 0.0, scale: 1.0\)"):
        d.log_prob(t([float("nan")]))
    with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
        D.Normal(ember.zeros(2), 1.0).log_prob(ember.zeros(3))
    with pytest.raises(ValueError, match="The right-most size of value must match event_shape"):
        D.Dirichlet(ember.ones(3)).log_prob(ember.ones(2))
    with pytest.raises(ValueError, match="within the support"):
        D.Categorical(ember.ones(3)).log_prob(ember.tensor([3]))
    assert D.Normal(0.0, 1.0, validate_args=False).log_prob(t([float("nan")])).isnan().all()


def test_set_default_validate_args():
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(t([0.0]), t([-1.0]))
        with pytest.raises(ValueError):
            D.Normal(t([0.0]), t([-1.0]), validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(t([0.0]), t([-1.0]))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")


def test_constraints():
    x = t([-1.0, 0.0, 0.5, 1.0, 2.0])
    assert constraints.positive.check(x).tolist() == [False, False, True, True, True]
    assert constraints.nonnegative.check(x).tolist() == [False, True, True, True, True]
    assert constraints.unit_interval.check(x).tolist() == [False, True, True, True, False]
    assert constraints.half_open_interval(0.0, 1.0).check(x).tolist() == [False, True, True, False, False]
    assert constraints.integer_interval(0, 1).check(x).tolist() == [False, True, False, True, False]
    assert constraints.nonnegative_integer.check(x).tolist() == [False, True, False, True, True]
    assert constraints.boolean.check(x).tolist() == [False, True, False, True, False]
    assert constraints.simplex.check(t([[0.2, 0.8], [0.5, 0.6]])).tolist() == [True, False]
    assert constraints.real_vector.check(t([[0.0, float("nan")], [1.0, 2.0]])).tolist() == [False, True]
    assert constraints.lower_cholesky.check(t([[1.0, 0.0], [2.0, 1.0]])).item()
    assert not constraints.lower_cholesky.check(t([[1.0, 1.0], [2.0, 1.0]])).item()
    assert constraints.positive_definite.check(t([[2.0, 1.0], [1.0, 2.0]])).item()
    assert not constraints.positive_definite.check(t([[1.0, 2.0], [2.0, 1.0]])).item()
    assert constraints.is_dependent(D.Uniform(0.0, 1.0).arg_constraints["low"]) is False
    assert constraints.is_dependent(constraints.dependent)
    assert D.Categorical(ember.ones(3)).support.event_dim == 0
    assert constraints.independent(constraints.real, 2).event_dim == 2


# ----- distribution API -----

def test_shapes_expand_and_independent():
    d = D.Normal(ember.zeros(3), 1.0)
    assert d.batch_shape == (3,) and d.event_shape == ()
    e = d.expand((2, 3))
    assert e.batch_shape == (2, 3) and e.sample((4,)).shape == (4, 2, 3)
    i = D.Independent(D.Normal(ember.zeros(2, 3), 1.0), 1)
    assert i.batch_shape == (2,) and i.event_shape == (3,)
    close(i.log_prob(ember.zeros(2, 3)), [3 * -0.5 * math.log(2 * math.pi)] * 2, rtol=1e-5)
    assert i.expand((4, 2)).batch_shape == (4, 2)
    m = D.MultivariateNormal(ember.zeros(2), ember.eye(2))
    assert m.expand((5,)).sample().shape == (5, 2)
    with pytest.raises(NotImplementedError):
        D.Normal(0.0, 1.0).enumerate_support()


def test_enumerate_support():
    b = D.Bernoulli(t([0.3, 0.6]))
    assert b.enumerate_support().tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert b.enumerate_support(expand=False).shape == (2, 1)
    o = D.OneHotCategorical(t([0.2, 0.8]))
    assert o.enumerate_support().tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert D.Binomial(3, t([0.5])).enumerate_support().tolist() == [[0.0], [1.0], [2.0], [3.0]]


def test_transforms_roundtrip_and_jacobian():
    x = t([-0.7, 0.1, 1.3], grad=True)
    for tr in (T.ExpTransform(), T.SigmoidTransform(), T.TanhTransform(), T.AffineTransform(1.0, -2.0),
               T.SoftplusTransform(), T.ComposeTransform([T.AffineTransform(0.2, 0.5), T.ExpTransform()]),
               T.PowerTransform(t(2.0))):
        xin = x.exp() if isinstance(tr, T.PowerTransform) else x
        y = tr(xin)
        close(tr.inv(y), xin.detach().numpy(), atol=1e-10)
        # log|dy/dx| from autograd, elementwise
        dydx = ember.autograd.grad(y.sum(), xin, create_graph=False)[0]
        close(tr.log_abs_det_jacobian(xin, y), np.log(np.abs(dydx.numpy())), atol=1e-10)
    assert T.ExpTransform().inv.inv is not None and T.ExpTransform() == T.ExpTransform()
    assert T.AffineTransform(0.0, -1.0).sign == -1


def test_transformed_distribution_cdf_sign():
    base = D.Normal(t([0.0]), t([1.0]))
    neg = D.TransformedDistribution(base, T.AffineTransform(0.0, -1.0))
    close(neg.cdf(t([0.5])), stats.norm.cdf(0.5))
    close(neg.log_prob(t([0.5])), stats.norm.logpdf(0.5))
    close(neg.icdf(t([0.3])), stats.norm.ppf(0.3))


def test_relaxed_distributions():
    ember.manual_seed(0)
    rb = D.RelaxedBernoulli(t(0.1), probs=t([0.2, 0.9]))
    s = rb.sample((20000,))
    assert bool(((s > 0) & (s < 1)).all())
    np.testing.assert_allclose((s.numpy() > 0.5).mean(0), [0.2, 0.9], atol=0.02)
    ro = D.RelaxedOneHotCategorical(t(0.1), probs=t([0.2, 0.3, 0.5]))
    s = ro.rsample((20000,))
    close(s.sum(-1), np.ones(20000), atol=1e-10)
    np.testing.assert_allclose(np.bincount(s.numpy().argmax(-1), minlength=3) / 20000, [0.2, 0.3, 0.5], atol=0.02)
    # the density integrates to one on the unit interval
    grid = np.linspace(1e-6, 1 - 1e-6, 200001)
    dens = np.exp(D.RelaxedBernoulli(t(0.7), probs=t(0.3)).log_prob(t(grid)).numpy())
    assert abs(np.trapezoid(dens, grid) - 1) < 2e-3


# ----- KL -----

def _mc_kl(p, q, n=200000):
    ember.manual_seed(0)
    x = p.sample((n,))
    return (p.log_prob(x) - q.log_prob(x)).mean(0).numpy()


KL_CLOSED = [
    (lambda: D.Normal(t(0.3), t(0.7)), lambda: D.Normal(t(-0.2), t(1.3)),
     math.log(1.3 / 0.7) + (0.49 + 0.25) / (2 * 1.69) - 0.5),
    (lambda: D.Exponential(t(2.0)), lambda: D.Exponential(t(0.5)), math.log(4) + 0.25 - 1),
    (lambda: D.Bernoulli(t(0.3)), lambda: D.Bernoulli(t(0.6)), 0.3 * math.log(0.5) + 0.7 * math.log(0.7 / 0.4)),
    (lambda: D.Categorical(t([0.5, 0.5])), lambda: D.Categorical(t([0.25, 0.75])),
     0.5 * math.log(2) + 0.5 * math.log(2 / 3)),
    (lambda: D.Uniform(t(0.0), t(1.0)), lambda: D.Uniform(t(-1.0), t(3.0)), math.log(4)),
    (lambda: D.Poisson(t(2.0)), lambda: D.Poisson(t(3.0)), 2 * math.log(2 / 3) + 1),
]


@pytest.mark.parametrize("i", range(len(KL_CLOSED)))
def test_kl_closed_form(i):
    p, q, expected = KL_CLOSED[i]
    close(D.kl_divergence(p(), q()), expected)


KL_MC = [
    ("Gamma-Gamma", lambda: D.Gamma(t([1.5, 3.0]), t([2.0, 1.0])), lambda: D.Gamma(t([2.0, 1.0]), t([1.0, 0.5]))),
    ("Beta-Beta", lambda: D.Beta(t([1.5, 3.0]), t([2.0, 1.0])), lambda: D.Beta(t([2.0, 1.0]), t([1.0, 0.5]))),
    ("Laplace-Laplace", lambda: D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])),
     lambda: D.Laplace(t([0.5, 0.0]), t([2.0, 1.0]))),
    ("Dirichlet", lambda: D.Dirichlet(t([1.5, 3.0, 2.0])), lambda: D.Dirichlet(t([2.0, 1.0, 1.0]))),
    ("Binomial", lambda: D.Binomial(5, t([0.3, 0.6])), lambda: D.Binomial(5, t([0.5, 0.2]))),
    ("Gamma-Normal", lambda: D.Gamma(t([1.5, 3.0]), t([2.0, 1.0])), lambda: D.Normal(t([0.5, 2.0]), t([1.0, 2.0]))),
    ("Laplace-Normal", lambda: D.Laplace(t([0.0, 1.0]), t([1.0, 2.0])), lambda: D.Normal(t([0.5, 0.0]), t([2.0, 1.0]))),
    ("Normal-Laplace", lambda: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), lambda: D.Laplace(t([0.5, 0.0]), t([2.0, 1.0]))),
    ("Uniform-Gamma", lambda: D.Uniform(t([0.1, 0.0]), t([0.7, 2.0])), lambda: D.Gamma(t([2.0, 1.0]), t([1.0, 0.5]))),
    ("Uniform-Beta", lambda: D.Uniform(t([0.1, 0.0]), t([0.7, 1.0])), lambda: D.Beta(t([2.0, 1.5]), t([1.0, 0.5]))),
    ("Exponential-Gamma", lambda: D.Exponential(t([1.5, 0.5])), lambda: D.Gamma(t([2.0, 1.0]), t([1.0, 0.5]))),
    ("Beta-Gamma", lambda: D.Beta(t([1.5, 3.0]), t([2.0, 1.0])), lambda: D.Gamma(t([2.0, 1.0]), t([1.0, 0.5]))),
    ("MVN-MVN", lambda: D.MultivariateNormal(t([0.0, 1.0]), t([[2.0, 0.3], [0.3, 1.0]])),
     lambda: D.MultivariateNormal(t([1.0, 0.0]), t([[1.0, -0.2], [-0.2, 0.5]]))),
    ("LowRank-MVN", lambda: D.LowRankMultivariateNormal(t([0.0, 1.0]), t([[1.0], [0.3]]), t([0.5, 1.0])),
     lambda: D.MultivariateNormal(t([1.0, 0.0]), t([[1.0, -0.2], [-0.2, 0.5]]))),
    ("LogNormal", lambda: D.LogNormal(t([0.0, 1.0]), t([0.5, 1.0])), lambda: D.LogNormal(t([0.5, 0.0]), t([1.0, 2.0]))),
    ("Gumbel-Gumbel", lambda: D.Gumbel(t([0.0, 1.0]), t([1.0, 2.0])), lambda: D.Gumbel(t([0.5, 0.0]), t([2.0, 1.0]))),
    ("Normal-Gumbel", lambda: D.Normal(t([0.0, 1.0]), t([1.0, 2.0])), lambda: D.Gumbel(t([0.5, 0.0]), t([2.0, 1.5]))),
    ("Cauchy-Cauchy", lambda: D.Cauchy(t([0.0, 1.0]), t([1.0, 2.0])), lambda: D.Cauchy(t([0.5, 0.0]), t([2.0, 1.0]))),
    ("Geometric", lambda: D.Geometric(t([0.3, 0.6])), lambda: D.Geometric(t([0.5, 0.2]))),
    ("HalfNormal", lambda: D.HalfNormal(t([0.5, 2.0])), lambda: D.HalfNormal(t([1.0, 1.0]))),
    ("Independent", lambda: D.Independent(D.Normal(t([0.0, 1.0]), t([0.5, 1.0])), 1),
     lambda: D.Independent(D.Normal(t([0.5, 0.0]), t([1.0, 2.0])), 1)),
]


@pytest.mark.parametrize("name,p,q", KL_MC, ids=[c[0] for c in KL_MC])
def test_kl_monte_carlo(name, p, q):
    p, q = p(), q()
    kl = D.kl_divergence(p, q).numpy()
    np.testing.assert_allclose(kl, _mc_kl(p, q), rtol=0.03, atol=0.01)


def test_kl_infinite_and_registry():
    assert math.isinf(D.kl_divergence(D.Normal(0.0, 1.0), D.Exponential(1.0)).item())
    assert math.isinf(D.kl_divergence(D.Uniform(-1.0, 1.0), D.Uniform(0.0, 1.0)).item())
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q "
                                                  "type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(ember.ones(2)))

    class MyNormal(D.Normal):
        pass

    close(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)), 0.5)  # found through the base class

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return ember.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)).item() == 42.0
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_kl_gradcheck():
    def fn(m1, s1, m2, s2):
        return D.kl_divergence(D.Normal(m1, s1), D.Normal(m2, s2))
    assert gradcheck(fn, [t(LOC, True), t(SCALE, True), t(LOC[::-1].copy(), True), t(POS, True)])

    def fn2(a, b):
        return D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a)) + D.kl_divergence(D.Beta(a, b), D.Beta(b, a))
    assert gradcheck(fn2, [t(POS, True), t(SCALE + 0.2, True)])

    def fn3(l1, l2):
        return D.kl_divergence(D.Categorical(logits=l1), D.Categorical(logits=l2))
    assert gradcheck(fn3, [t([[0.1, 0.5, -1.0]], True), t([[2.0, 0.0, 0.3]], True)])


def test_stick_breaking_and_registry():
    ember.manual_seed(0)
    x = ember.randn(3, dtype=F64, requires_grad=True)
    tr = T.StickBreakingTransform()
    y = tr(x)
    close(y.sum(), 1.0)
    close(tr.inv(y), x.detach().numpy(), atol=1e-10)
    # the Jacobian of the first K-1 outputs is square: its log|det| is the transform's
    jac = ember.autograd.functional.jacobian(lambda v: tr(v)[:-1], x)
    close(tr.log_abs_det_jacobian(x, y), np.linalg.slogdet(jac.numpy())[1], atol=1e-10)
    assert tr.forward_shape((2, 3)) == (2, 4) and tr.inverse_shape((2, 4)) == (2, 3)
    lc = T.LowerCholeskyTransform()
    m = lc(t([[0.0, 5.0], [2.0, 1.0]]))
    close(m, [[1.0, 0.0], [2.0, math.e]])
    assert constraints.lower_cholesky.check(m).item()
    close(lc.inv(m), [[0.0, 0.0], [2.0, 1.0]])
    r = T.ReshapeTransform((6,), (2, 3))
    assert r(ember.zeros(4, 6)).shape == (4, 2, 3) and r.log_abs_det_jacobian(ember.zeros(4, 6), None).shape == (4,)
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers of elements"):
        T.ReshapeTransform((5,), (2, 3))
    cdf = T.CumulativeDistributionTransform(D.Normal(t(0.0), t(1.0)))
    close(cdf(t([0.5])), stats.norm.cdf(0.5))
    for c in (constraints.positive, constraints.interval(-1.0, 3.0), constraints.simplex, constraints.real_vector,
              constraints.greater_than(2.0), constraints.less_than(-1.0), constraints.unit_interval):
        for reg in (D.biject_to, D.transform_to):
            v = reg(c)(ember.randn(5, 3, dtype=F64))
            assert bool(c.check(v).all())
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        D.biject_to(constraints.lower_cholesky)


def test_submodule_aliases():
    from ember.distributions.categorical import Categorical
    from ember.distributions.normal import Normal
    from ember.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
    assert Normal is D.Normal and Categorical is D.Categorical
    assert LogitRelaxedBernoulli(t(0.5), probs=t([0.3])).rsample().shape == (1,)
    import ember as torch_like
    assert torch_like.distributions.kl_divergence is D.kl_divergence


def test_continuous_bernoulli():
    # the density integrates to one, also inside the Taylor band around 1/2; mean and variance match quadrature
    grid = np.linspace(0, 1, 200001)
    for p in (0.1, 0.4999, 0.5, 0.93):
        d = D.ContinuousBernoulli(t([p]))
        dens = np.exp(d.log_prob(t(grid[:, None])).numpy()[:, 0])
        close(np.trapezoid(dens, grid), 1.0, rtol=1e-6)
        close(d.mean, [np.trapezoid(grid * dens, grid)], rtol=1e-6)
        close(d.variance, [np.trapezoid((grid - d.mean.item()) ** 2 * dens, grid)], rtol=1e-5)
        close(d.entropy(), [-np.trapezoid(dens * np.log(dens), grid)], rtol=1e-5, atol=1e-7)
        close(d.icdf(d.cdf(t([0.2, 0.7]))), [0.2, 0.7], atol=1e-6)
    ember.manual_seed(0)
    d = D.ContinuousBernoulli(t([0.2, 0.9]))
    s = d.sample((40000,))
    np.testing.assert_allclose(s.numpy().mean(0), d.mean.numpy(), atol=0.01)
    assert gradcheck(_seeded(lambda l: D.ContinuousBernoulli(logits=l).rsample((3,))), [t(LOC, True)])
    assert gradcheck(lambda l: D.ContinuousBernoulli(logits=l).log_prob(t(PROB)), [t(LOC, True)])
    close(D.kl_divergence(D.ContinuousBernoulli(t(0.3)), D.ContinuousBernoulli(t(0.3))), 0.0, atol=1e-12)
