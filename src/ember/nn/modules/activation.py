"""Activation modules: thin wrappers over ember.nn.functional with torch's constructor arguments and reprs."""
import warnings

import ember

from .. import init
from .._functional import activation as F
from ..parameter import Parameter
from .module import Module

__all__ = [
    "CELU",
    "ELU",
    "GELU",
    "GLU",
    "SELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "Mish",
    "PReLU",
    "RReLU",
    "ReLU",
    "ReLU6",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softmax2d",
    "Softmin",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "Threshold",
]


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class _Inplace(Module):
    """An activation whose only argument is `inplace`."""
    __constants__ = ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class ReLU(_Inplace):
    """Same as `torch.nn.ReLU`."""

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class SELU(_Inplace):
    """Same as `torch.nn.SELU`."""

    def forward(self, input):
        return F.selu(input, self.inplace)


class SiLU(_Inplace):
    """Same as `torch.nn.SiLU`."""

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    """Same as `torch.nn.Mish`."""

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(Module):
    """Same as `torch.nn.Hardsigmoid`."""
    __constants__ = ("inplace",)

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Hardsigmoid):
    """Same as `torch.nn.Hardswish`."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Threshold(Module):
    """Same as `torch.nn.Threshold`."""
    __constants__ = ("threshold", "value", "inplace")

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{', inplace=True' if self.inplace else ''}"


class Hardtanh(Module):
    """Same as `torch.nn.Hardtanh` (min_value/max_value are the deprecated spellings)."""
    __constants__ = ("min_val", "max_val", "inplace")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{', inplace=True' if self.inplace else ''}"


class ReLU6(Hardtanh):
    """Same as `torch.nn.ReLU6`."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    """Same as `torch.nn.LeakyReLU`."""
    __constants__ = ("inplace", "negative_slope")

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{', inplace=True' if self.inplace else ''}"


class RReLU(Module):
    """Same as `torch.nn.RReLU`: random slopes in training mode, their mean in eval mode."""
    __constants__ = ("lower", "upper", "inplace")

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{', inplace=True' if self.inplace else ''}"


class ELU(Module):
    """Same as `torch.nn.ELU`."""
    __constants__ = ("alpha", "inplace")

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{', inplace=True' if self.inplace else ''}"


class CELU(ELU):
    """Same as `torch.nn.CELU`."""

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    """Same as `torch.nn.GELU`."""
    __constants__ = ("approximate",)

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """Same as `torch.nn.Softplus`."""
    __constants__ = ("beta", "threshold")

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """Same as `torch.nn.Softshrink`."""
    __constants__ = ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Same as `torch.nn.Hardshrink`."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class _NoArgs(Module):
    """An activation without arguments."""

    def __init__(self):
        super().__init__()


class Sigmoid(_NoArgs):
    """Same as `torch.nn.Sigmoid`."""

    def forward(self, input):
        return ember.sigmoid(input)


class Tanh(_NoArgs):
    """Same as `torch.nn.Tanh`."""

    def forward(self, input):
        return ember.tanh(input)


class Softsign(_NoArgs):
    """Same as `torch.nn.Softsign`."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(_NoArgs):
    """Same as `torch.nn.Tanhshrink`."""

    def forward(self, input):
        return F.tanhshrink(input)


class LogSigmoid(_NoArgs):
    """Same as `torch.nn.LogSigmoid`."""

    def forward(self, input):
        return F.logsigmoid(input)


class GLU(Module):
    """Same as `torch.nn.GLU`."""
    __constants__ = ("dim",)

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class PReLU(Module):
    """Same as `torch.nn.PReLU`."""
    __constants__ = ("num_parameters",)

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(ember.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


# ---------------- softmax family: the functional ops live in _functional/softmax.py ----------------
def _functional():
    from .. import functional
    return functional


class _SoftmaxBase(Module):
    __constants__ = ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """Same as `torch.nn.Softmax`."""

    def forward(self, input):
        return _functional().softmax(input, self.dim)


class LogSoftmax(_SoftmaxBase):
    """Same as `torch.nn.LogSoftmax`."""

    def forward(self, input):
        return _functional().log_softmax(input, self.dim)


class Softmin(_SoftmaxBase):
    """Same as `torch.nn.Softmin`."""

    def forward(self, input):
        return _functional().softmin(input, self.dim)


class Softmax2d(Module):
    """Same as `torch.nn.Softmax2d`: softmax over the channel dimension of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return _functional().softmax(input, -3)


# torch defines MultiheadAttention in this module; programs name it by this path (e.g. in torch.serialization's
# safe_globals), so it is found here too
from .attention import MultiheadAttention  # noqa: E402
