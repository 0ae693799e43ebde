"""Same as `torch.distributions.ContinuousBernoulli` (Loaiza-Ganem & Cunningham, 2019)."""
import math

import ember

from . import constraints
from ._params import binary_logits, expand_params, expand_probs_or_logits, init_probs_or_logits, param_shape_property
from .continuous import ExponentialFamily, _validate
from .distribution import _EMPTY
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """Same as `torch.distributions.ContinuousBernoulli`: density C(p) p^x (1-p)^(1-x) on [0, 1]; within `lims`
    of p = 1/2, where the closed forms cancel catastrophically, Taylor expansions are used (as torch)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        init_probs_or_logits(self, probs, logits)
        if probs is not None:
            # checked before clamping, which would otherwise hide invalid values (only when asked, as torch)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = expand_params(self, ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        expand_probs_or_logits(self, new, new.batch_shape)
        return new

    logits = binary_logits
    param_shape = param_shape_property

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _stable(self):
        """Where p is far enough from 1/2 for the closed forms."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        # p moved out of the unstable band, so the discarded branch of a where() stays finite (and so its gradient)
        return ember.where(self._stable(), self.probs, ember.full_like(self.probs, self._lims[0]))

    def _log_normalizer_c(self):
        """log C(p), C(p) = 2 atanh(1 - 2p) / (1 - 2p) = (log(1-p) - log p) / (1 - 2p)."""
        p = self._cut_probs()
        closed = ember.log(ember.abs(ember.log1p(-p) - ember.log(p))) - ember.log(ember.abs(1.0 - 2.0 * p))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return ember.where(self._stable(), closed, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        closed = p / (2.0 * p - 1.0) + 1.0 / (ember.log1p(-p) - ember.log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return ember.where(self._stable(), closed, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._cut_probs()
        closed = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / (ember.log1p(-p) - ember.log(p)).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return ember.where(self._stable(), closed, taylor)

    def rsample(self, sample_shape=_EMPTY):
        shape = self._extended_shape(sample_shape)
        u = ember.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        _validate(self, value)
        logits, value = broadcast_all(self.logits, value)
        bce = ember.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")
        return -bce + self._log_normalizer_c()

    def cdf(self, value):
        _validate(self, value)
        p = self._cut_probs()
        closed = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = ember.where(self._stable(), closed, value)
        return ember.where(value <= 0.0, ember.zeros_like(value),
                           ember.where(value >= 1.0, ember.ones_like(value), inside))

    def icdf(self, value):
        p = self._cut_probs()
        closed = (ember.log1p(-p + value * (2.0 * p - 1.0)) - ember.log1p(-p)) / (ember.log(p) - ember.log1p(-p))
        return ember.where(self._stable(), closed, value)

    def entropy(self):
        log_q = ember.log1p(-self.probs)
        log_p = ember.log(self.probs)
        return self.mean * (log_q - log_p) - self._log_normalizer_c() - log_q
