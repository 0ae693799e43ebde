"""Shared helpers of the distributions: parameter broadcasting and probs/logits conversion."""
import numbers

import ember
from ember._tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]


def broadcast_all(*values):
    """Same as `torch.distributions.utils.broadcast_all`: numbers become tensors of the tensors' dtype."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    if len(tensors) == len(values):
        shape = values[0].shape
        if all(v.shape == shape for v in values):  # the common case: nothing to broadcast
            return tuple(values)
    for v in values:
        if not isinstance(v, (Tensor, numbers.Number)):
            raise ValueError("Input arguments must all be instances of numbers.Number, "  # noqa: TRY004 (torch's type)
                             "torch.Tensor or objects implementing __torch_function__.")
    if not tensors:
        dt = ember.get_default_dtype()
        return tuple(ember.tensor(float(v), dtype=dt) for v in values)
    like = tensors[0]
    values = [v if isinstance(v, Tensor) else ember.tensor(v, dtype=like.dtype, device=like.device) for v in values]
    return tuple(ember.broadcast_tensors(*values))


def _eps(x):
    return ember.finfo(x.dtype).eps


def clamp_probs(probs):
    """Same as `torch.distributions.utils.clamp_probs`."""
    eps = _eps(probs)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Same as `torch.distributions.utils.logits_to_probs`."""
    return ember.sigmoid(logits) if is_binary else ember.softmax(logits, -1)


def probs_to_logits(probs, is_binary=False):
    """Same as `torch.distributions.utils.probs_to_logits`."""
    p = clamp_probs(probs)
    return ember.log(p) - ember.log1p(-p) if is_binary else ember.log(p)


class lazy_property:
    """Same as `torch.distributions.utils.lazy_property`: computed once on first access, then a plain attribute."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with ember.enable_grad():
            value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value
