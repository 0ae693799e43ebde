"""Same as `torch.distributions`: probability distributions with sampling, log-densities and KL divergences."""
from . import constraints, transforms
from .constraint_registry import biject_to, transform_to
from .continuous import Beta, Dirichlet, Exponential, ExponentialFamily, Gamma, Laplace, Normal, Uniform
from .continuous_bernoulli import ContinuousBernoulli
from .derived import Cauchy, Chi2, Gumbel, HalfCauchy, HalfNormal, LogisticNormal, Pareto, StudentT, Weibull
from .discrete import (
    Bernoulli,
    Binomial,
    Categorical,
    Geometric,
    Multinomial,
    NegativeBinomial,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
    Poisson,
)
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .mixture import MixtureSameFamily
from .multivariate_normal import LowRankMultivariateNormal, MultivariateNormal
from .transformed import Independent, LogNormal, RelaxedBernoulli, RelaxedOneHotCategorical, TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ComposeTransform", "ContinuousBernoulli", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
           "ExpTransform", "Exponential", "ExponentialFamily", "Gamma", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "Independent", "IndependentTransform", "Laplace", "LogNormal", "LogisticNormal",
           "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Pareto", "Poisson", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform",
           "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "Weibull", "biject_to", "constraints",
           "identity_transform", "kl_divergence", "register_kl", "transform_to", "transforms"]


def _alias_modules():
    # torch's one-module-per-family paths (`from torch.distributions.normal import Normal`) as light aliases
    import sys
    import types
    g = globals()
    table = {
        "bernoulli": "Bernoulli", "beta": "Beta", "binomial": "Binomial", "categorical": "Categorical",
        "cauchy": "Cauchy", "chi2": "Chi2", "continuous_bernoulli": "ContinuousBernoulli", "dirichlet": "Dirichlet",
        "exponential": "Exponential", "exp_family": "ExponentialFamily", "gamma": "Gamma",
        "geometric": "Geometric", "gumbel": "Gumbel",
        "half_cauchy": "HalfCauchy", "half_normal": "HalfNormal", "independent": "Independent", "laplace": "Laplace",
        "log_normal": "LogNormal", "logistic_normal": "LogisticNormal",
        "lowrank_multivariate_normal": "LowRankMultivariateNormal", "mixture_same_family": "MixtureSameFamily",
        "multinomial": "Multinomial", "negative_binomial": "NegativeBinomial", "normal": "Normal",
        "one_hot_categorical": "OneHotCategorical OneHotCategoricalStraightThrough", "pareto": "Pareto",
        "poisson": "Poisson", "relaxed_bernoulli": "RelaxedBernoulli LogitRelaxedBernoulli",
        "relaxed_categorical": "RelaxedOneHotCategorical ExpRelaxedCategorical", "studentT": "StudentT",
        "transformed_distribution": "TransformedDistribution", "uniform": "Uniform", "weibull": "Weibull"}
    from . import transformed
    for mod_name, names in table.items():
        mod = types.ModuleType(f"{__name__}.{mod_name}", "Same as `torch.distributions." + mod_name + "`.")
        for name in names.split():
            setattr(mod, name, g.get(name) or getattr(transformed, name))
        mod.__all__ = names.split()
        sys.modules[mod.__name__] = mod
        g[mod_name] = mod


_alias_modules()
