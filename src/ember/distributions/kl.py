"""Same as `torch.distributions.kl`: `kl_divergence` dispatching on the pair of types, and `register_kl`."""
import math
import warnings

import ember

from .continuous import Beta, Dirichlet, Exponential, Gamma, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .derived import Cauchy, Gumbel, HalfNormal, Pareto
from .discrete import Bernoulli, Binomial, Categorical, Geometric, OneHotCategorical, Poisson
from .distribution import Distribution
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal, _batch_mahalanobis, _half_log_det
from .transformed import Independent, TransformedDistribution
from .transforms import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}  # (type_p, type_q) -> fn
_KL_MEMOIZE = {}  # (type_p, type_q) -> fn, the most specific registered match of a concrete pair
_EULER = 0.57721566490153286060
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def register_kl(type_p, type_q):
    """Same as `torch.distributions.kl.register_kl`: a decorator registering fn(p, q) for a pair of types."""
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new entry can change which match is most specific
        return fun
    return decorator


def _dispatch_kl(type_p, type_q):
    # the most specific match by class-hierarchy distance, p first; warn where q-first ordering disagrees
    matches = [(type_p.__mro__.index(sp), type_q.__mro__.index(sq), sp, sq)
               for sp, sq in _KL_REGISTRY if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left = min(matches, key=lambda m: (m[0], m[1]))
    right = min(matches, key=lambda m: (m[1], m[0]))
    left_fun, right_fun = _KL_REGISTRY[left[2], left[3]], _KL_REGISTRY[right[2], right[3]]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left[2].__name__}, {right[3].__name__})", RuntimeWarning, stacklevel=2)
    return left_fun


def kl_divergence(p, q):
    """Same as `torch.distributions.kl.kl_divergence`: KL(p || q) of shape batch_shape."""
    key = (type(p), type(q))
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


def _inf_where(mask, value):
    return ember.where(mask, ember.full_like(value, math.inf), value)


def _infinite_like(t):
    return ember.full_like(t, math.inf)


# ----- same family -----

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    sp = ember.nn.functional.softplus
    t1 = p.probs * (sp(-q.logits) - sp(-p.logits))
    t1 = ember.where(p.probs == 0, ember.zeros_like(t1), _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (sp(q.logits) - sp(p.logits))
    t2 = ember.where(p.probs == 1, ember.zeros_like(t2), _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    a1, b1, a2, b2 = p.concentration1, p.concentration0, q.concentration1, q.concentration0
    s1, s2 = a1 + b1, a2 + b2
    t1 = a2.lgamma() + b2.lgamma() + s1.lgamma()
    t2 = a1.lgamma() + b1.lgamma() + s2.lgamma()
    return t1 - t2 + (a1 - a2) * a1.digamma() + (b1 - b2) * b1.digamma() + (s2 - s1) * s1.digamma()


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = _inf_where((q.probs == 0).expand_as(t), t)
    t = ember.where((p.probs == 0).expand_as(t), ember.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    cp, cq = p.concentration, q.concentration
    sp, sq = cp.sum(-1), cq.sum(-1)
    t1 = sp.lgamma() - sq.lgamma()
    t2 = (cp.lgamma() - cq.lgamma()).sum(-1)
    return t1 - t2 + ((cp - cq) * (cp.digamma() - sp.digamma().unsqueeze(-1))).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - ratio.log() - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * ember.log(p.rate / q.rate)
    t2 = ember.lgamma(q.concentration) - ember.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * ember.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    ratio = p.scale / q.scale
    d = (p.loc - q.loc).abs()
    return -ratio.log() + d / q.scale + ratio * ember.exp(-d / p.scale) - 1


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)


# ----- Gaussians: KL = 0.5 (tr(Sq^-1 Sp) + mahalanobis_q(mu_q - mu_p) - n + logdet Sq - logdet Sp) -----

def _factor(d):
    """F with F F^T the covariance of d (a MultivariateNormal or LowRankMultivariateNormal)."""
    if isinstance(d, MultivariateNormal):
        return d._unbroadcasted_scale_tril
    return ember.cat([d._unbroadcasted_cov_factor, ember.diag_embed(d._unbroadcasted_cov_diag.sqrt())], -1)


def _log_det(d):
    if isinstance(d, MultivariateNormal):
        return 2 * _half_log_det(d._unbroadcasted_scale_tril)
    return d._log_det()


def _trace_inv_quad(q, F):
    """tr(Sq^-1 F F^T) and the quadratic form of Sq^-1, for either Gaussian family of q."""
    if isinstance(q, MultivariateNormal):
        L = q._unbroadcasted_scale_tril
        batch = ember.broadcast_shapes(L.shape[:-2], F.shape[:-2])
        n = L.shape[-1]
        z = ember.linalg.solve_triangular(L.expand(tuple(batch) + (n, n)), F.expand(tuple(batch) + F.shape[-2:]),
                                          upper=False)
        return z.pow(2).sum((-2, -1))
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    # Woodbury: Sq^-1 = D^-1 - D^-1 W C^-T C^-1 W^T D^-1
    t1 = (F.pow(2) / D.unsqueeze(-1)).sum((-2, -1))
    A = ember.matmul(W.mT / D.unsqueeze(-2), F)
    C = q._capacitance_tril
    batch = ember.broadcast_shapes(C.shape[:-2], A.shape[:-2])
    m = C.shape[-1]
    z = ember.linalg.solve_triangular(C.expand(tuple(batch) + (m, m)), A.expand(tuple(batch) + A.shape[-2:]),
                                      upper=False)
    return t1 - z.pow(2).sum((-2, -1))


def _mahalanobis(q, x):
    if isinstance(q, MultivariateNormal):
        return _batch_mahalanobis(q._unbroadcasted_scale_tril, x)
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    Wt_Dinv_x = ember.matmul(W.mT / D.unsqueeze(-2), x.unsqueeze(-1)).squeeze(-1)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(q._capacitance_tril, Wt_Dinv_x)


def _gaussian_kl(p, q):
    n = p.event_shape[0]
    t = _trace_inv_quad(q, _factor(p)) + _mahalanobis(q, q.loc - p.loc)
    return 0.5 * (t - n + _log_det(q) - _log_det(p))


def _gaussian_pair(kind):
    def kl(p, q):
        # torch's message has a run of spaces inside (a source line continuation); this one is single-spaced
        if p.event_shape != q.event_shape:
            raise ValueError(f"KL-divergence between two {kind} with different event shapes cannot be computed")
        return _gaussian_kl(p, q)
    return kl


for _tp, _tq, _kind in (
        (MultivariateNormal, MultivariateNormal, "Multivariate Normals"),
        (LowRankMultivariateNormal, LowRankMultivariateNormal, "Low Rank Multivariate Normals"),
        (LowRankMultivariateNormal, MultivariateNormal, "(Low Rank) Multivariate Normals"),
        (MultivariateNormal, LowRankMultivariateNormal, "(Low Rank) Multivariate Normals")):
    register_kl(_tp, _tq)(_gaussian_pair(_kind))


# ----- wrappers -----

@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    extra_event_dim = len(p.event_shape) - len(p.base_dist.event_shape)
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), extra_event_dim)


# ----- across families: KL = -H(p) - E_p[log q(x)] -----

def _normal_cross(q, mean, second_moment_about_loc):
    """-E_p[log N(x; q.loc, q.scale)] given E_p[(x - q.loc)^2]."""
    return q.scale.log() + _HALF_LOG_2PI + second_moment_about_loc / (2 * q.scale.pow(2))


def _gamma_cross(q, e_log_x, e_x):
    """-E_p[log Gamma(x; q)] given E_p[log x] and E_p[x]."""
    c, r = q.concentration, q.rate
    return -c * r.log() + c.lgamma() - (c - 1) * e_log_x + r * e_x


def _beta_e_log(p):
    s = (p.concentration1 + p.concentration0).digamma()
    return p.concentration1.digamma() - s, p.concentration0.digamma() - s


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() + q.rate - p.probs * q.rate.log()


# pairs whose cross-entropy needs only p's mean (and variance): one function serves every such p
@register_kl(Beta, Exponential)
@register_kl(Gamma, Exponential)
@register_kl(ContinuousBernoulli, Exponential)
def _kl_to_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    return -p.entropy() + _gamma_cross(q, _beta_e_log(p)[0], p.mean)


@register_kl(Beta, Normal)
@register_kl(Gamma, Normal)
@register_kl(Gumbel, Normal)
@register_kl(ContinuousBernoulli, Normal)
def _kl_to_normal_by_moments(p, q):
    return -p.entropy() + _normal_cross(q, p.mean, p.variance + (p.mean - q.loc).pow(2))


@register_kl(Beta, Uniform)
@register_kl(ContinuousBernoulli, Uniform)
def _kl_unit_interval_uniform(p, q):
    # torch marks a Uniform whose interval merely touches [0, 1] (low >= 0 or high <= 1) infinite too; here only
    # an interval that misses part of [0, 1] is
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where((q.low > 0) | (q.high < 1), result)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    return -p.entropy() + _gamma_cross(q, -_EULER - p.rate.log(), p.rate.reciprocal())


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    m2 = 2 / p.rate.pow(2) - 2 * q.loc / p.rate + q.loc.pow(2)
    return -p.entropy() + _normal_cross(q, p.mean, m2)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    return -p.entropy() + _normal_cross(q, p.loc, 2 * p.scale.pow(2) + (p.loc - q.loc).pow(2))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    # E|x - m| for x ~ N(mu, s^2): s sqrt(2/pi) exp(-d^2 / 2s^2) + d erf(d / (s sqrt 2)), d = mu - m
    d = p.loc - q.loc
    s = p.scale
    e_abs = s * math.sqrt(2 / math.pi) * ember.exp(-d.pow(2) / (2 * s.pow(2))) + d * ember.erf(d / (s * math.sqrt(2)))
    return -p.entropy() + ember.log(2 * q.scale) + e_abs / q.scale


def _uniform_e_log(lo, hi):
    """E[log x] for x ~ U(lo, hi), 0 <= lo < hi (x log x - x integrated, 0 log 0 = 0)."""
    return (ember.xlogy(hi, hi) - ember.xlogy(lo, lo)) / (hi - lo) - 1


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    a, b = q.concentration1, q.concentration0
    e_log_x = _uniform_e_log(p.low, p.high)
    e_log_1mx = _uniform_e_log(1 - p.high, 1 - p.low)
    lbeta = a.lgamma() + b.lgamma() - (a + b).lgamma()
    result = -p.entropy() - (a - 1) * e_log_x - (b - 1) * e_log_1mx + lbeta
    return _inf_where((p.low < 0) | (p.high > 1), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    result = -p.entropy() + _gamma_cross(q, _uniform_e_log(p.low, p.high), p.mean)
    return _inf_where(p.low < 0, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    m2 = (p.high - p.low).pow(2) / 12 + (p.mean - q.loc).pow(2)
    return -p.entropy() + _normal_cross(q, p.mean, m2)


def _register_infinite(p_type, param, q_types):
    fn = lambda p, q: _infinite_like(getattr(p, param))  # the support of p is not inside that of q
    for q_type in q_types:
        register_kl(p_type, q_type)(fn)


_register_infinite(Exponential, "rate", (Uniform, Beta))
_register_infinite(Gamma, "concentration", (Uniform, Beta))
_register_infinite(Laplace, "loc", (Uniform, Gamma, Exponential, Beta))
_register_infinite(Normal, "loc", (Uniform, Gamma, Exponential, Beta))
_register_infinite(Poisson, "rate", (Binomial, Bernoulli))


# ----- Cauchy, Geometric, Gumbel, HalfNormal -----


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return (((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)) / (4 * p.scale * q.scale)).log()


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - ember.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = ember.exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + ct1 * _EULER + t3 - (1 + _EULER)


def _gumbel_cross(q, e_x, e_exp_neg_x_over_scale):
    """-E_p[log Gumbel(x; q)] given E_p[x] and E_p[exp(-x / q.scale)]."""
    return q.scale.log() + (e_x - q.loc) / q.scale + ember.exp(q.loc / q.scale) * e_exp_neg_x_over_scale


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    return -p.entropy() + _gumbel_cross(q, p.mean, p.rate / (p.rate + 1 / q.scale))


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    mgf = (p.rate / (p.rate + 1 / q.scale)).pow(p.concentration)
    return -p.entropy() + _gumbel_cross(q, p.mean, mgf)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mgf = ember.exp(-p.loc / q.scale + p.scale.pow(2) / (2 * q.scale.pow(2)))
    return -p.entropy() + _gumbel_cross(q, p.loc, mgf)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    mgf = q.scale * (ember.exp(-p.low / q.scale) - ember.exp(-p.high / q.scale)) / (p.high - p.low)
    return -p.entropy() + _gumbel_cross(q, p.mean, mgf)


_register_infinite(Gumbel, "loc", (Uniform, Gamma, Exponential, Beta))


# ----- Pareto -----

@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    # log(ap/aq) + aq log(sp/sq) + aq/ap - 1, infinite where p reaches below q's scale
    result = (p.alpha / q.alpha).log() + q.alpha * (p.scale / q.scale).log() + q.alpha / p.alpha - 1
    return _inf_where(p.scale < q.scale, result)


def _pareto_e_log(p):
    return p.scale.log() + p.alpha.reciprocal()


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    result = -p.entropy() - q.rate.log() + q.rate * p.mean
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    result = -p.entropy() + _gamma_cross(q, _pareto_e_log(p), p.mean)
    return _inf_where(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    result = -p.entropy() + _normal_cross(q, p.mean, p.variance + (p.mean - q.loc).pow(2))
    return _inf_where(p.alpha <= 2, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    e_log_x = _uniform_e_log(p.low, p.high)
    result = -p.entropy() - (q.alpha.log() + q.alpha * q.scale.log() - (q.alpha + 1) * e_log_x)
    return _inf_where(p.low < q.scale, result)


_register_infinite(Beta, "concentration1", (Pareto,))
_register_infinite(Exponential, "rate", (Pareto,))
_register_infinite(Gamma, "concentration", (Pareto,))
_register_infinite(Gumbel, "loc", (Pareto,))
_register_infinite(Laplace, "loc", (Pareto,))
_register_infinite(Normal, "loc", (Pareto,))
_register_infinite(Pareto, "scale", (Uniform, Beta))


# ----- ContinuousBernoulli: log q(x) = x log p + (1 - x) log(1 - p) + log C(p) -----

def _cb_cross(q, e_x):
    """-E[log ContinuousBernoulli(x; q)] given E[x]."""
    return -(e_x * q.probs.log() + (1 - e_x) * ember.log1p(-q.probs) + q._log_normalizer_c())


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
@register_kl(Beta, ContinuousBernoulli)
def _kl_to_continuous_bernoulli(p, q):
    return -p.entropy() + _cb_cross(q, p.mean)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    # finite for an interval inside [0, 1], its ends included (torch calls low == 0 or high == 1 infinite)
    result = -p.entropy() + _cb_cross(q, p.mean)
    return _inf_where((p.low < 0) | (p.high > 1), result)


_register_infinite(ContinuousBernoulli, "probs", (Pareto,))
for _tp, _param in ((Exponential, "rate"), (Gamma, "concentration"), (Gumbel, "loc"), (Laplace, "loc"),
                    (Normal, "loc"), (Pareto, "scale")):
    _register_infinite(_tp, _param, (ContinuousBernoulli,))
