"""Parameter handling shared by the distributions: the probs-or-logits pair, expanding parameters and attributes
delegated to a component."""
from operator import attrgetter

from ember._tensor import Size

from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

PROBS_XOR_LOGITS = "Either `probs` or `logits` must be specified, but not both."


def init_probs_or_logits(d, probs, logits, *others):
    """Stores whichever of `probs`/`logits` is given, broadcast after `others` (returned broadcast), under its own
    name and as `d._param`."""
    if (probs is None) == (logits is None):
        raise ValueError(PROBS_XOR_LOGITS)
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    *others, param = broadcast_all(*others, value)
    setattr(d, name, param)
    d._param = param
    return others


def expand_probs_or_logits(d, new, param_shape):
    """Gives `new` the probs and/or logits that `d` holds (not the lazily derived one), expanded to param_shape."""
    if "probs" in d.__dict__:
        new.probs = new._param = d.probs.expand(param_shape)
    if "logits" in d.__dict__:
        new.logits = new._param = d.logits.expand(param_shape)


def expand_params(d, cls, batch_shape, _instance, names=()):
    """`d.expand(batch_shape)` for a `cls` whose parameters `names` (tensors or distributions) have exactly the
    batch shape."""
    new = d._get_checked_instance(cls, _instance)
    batch_shape = Size(batch_shape)
    for name in names:
        setattr(new, name, getattr(d, name).expand(batch_shape))
    return d._init_expanded(new, batch_shape)


def delegated(path):
    """A read-only property returning the attribute at dotted `path` of the instance (e.g. "base_dist.probs")."""
    return property(attrgetter(path))


def _binary_logits(self):
    return probs_to_logits(self.probs, is_binary=True)


def _binary_probs(self):
    return logits_to_probs(self.logits, is_binary=True)


_binary_logits.__name__, _binary_probs.__name__ = "logits", "probs"  # lazy_property caches under this name

# the lazily derived counterpart of a one-event-probability parameter given as the other
binary_logits = lazy_property(_binary_logits)
binary_probs = lazy_property(_binary_probs)
param_shape_property = delegated("_param.shape")
