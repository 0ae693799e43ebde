"""nn modules: LinearCrossEntropyLoss, a Linear head and cross_entropy in one module."""
import math

from .._functional.linear_cross_entropy import linear_cross_entropy
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Same as `torch.nn.LinearCrossEntropyLoss`."""
    __constants__ = ("num_classes", "out_features", "reduction", "ignore_index", "label_smoothing")

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        super().__init__(weight, None, None, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options
        # flat (C * prod(out_features), in_features) storage, as torch's: its state_dicts load unchanged
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias, device=device,
                             dtype=dtype)

    def forward(self, input, target):
        lin = self.linear
        shape = (self.num_classes, *self.out_features)
        bias = None if lin.bias is None else lin.bias.view(shape)
        return linear_cross_entropy(input, lin.weight.view(*shape, lin.in_features), target, linear_bias=bias,
                                    weight=self.weight, reduction=self.reduction, ignore_index=self.ignore_index,
                                    label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")
