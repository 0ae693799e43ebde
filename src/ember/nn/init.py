"""nn.init: in-place parameter initialisation, run without recording a graph; each returns its tensor.

The random numbers come from ember's generators (same seed, same numbers), not torch's, so the values differ
from torch's; the distributions are the same.
"""
import math
import warnings

from .._backend import XP
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..autograd.graph import bump_version

__all__ = [
    "calculate_gain",
    "constant",
    "constant_",
    "dirac",
    "dirac_",
    "eye",
    "eye_",
    "kaiming_normal",
    "kaiming_normal_",
    "kaiming_uniform",
    "kaiming_uniform_",
    "normal",
    "normal_",
    "ones_",
    "orthogonal",
    "orthogonal_",
    "sparse",
    "sparse_",
    "trunc_normal_",
    "uniform",
    "uniform_",
    "xavier_normal",
    "xavier_normal_",
    "xavier_uniform",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """Same as `torch.nn.init.calculate_gain`."""
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (isinstance(param, int) and not isinstance(param, bool)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # the value that keeps SELU's self-normalising regime (torch's choice)
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _write(tensor, arr):
    """Copy an array into tensor's memory (casting to its dtype) and count it as an in-place change."""
    d = tensor._data
    if type(arr) is not type(d):
        arr = Tensor._make(arr).to(tensor.device)._data
    d[...] = arr.astype(d.dtype, copy=False)
    bump_version(tensor, "copy_")
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Same as `torch.nn.init.uniform_`."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Same as `torch.nn.init.normal_`."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _phi(x):
    """The standard normal CDF."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Same as `torch.nn.init.trunc_normal_`: N(mean, std) restricted to [a, b], by inverting the CDF in float64."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    if tensor.numel() == 0:
        return tensor
    from .._ops.creation import empty
    alpha, beta = (a - mean) / std, (b - mean) / std
    # an interval in the upper tail is sampled mirrored, where the CDF keeps its precision
    flip = alpha > 0
    lo, hi = (-beta, -alpha) if flip else (alpha, beta)
    with no_grad():
        u = empty(tensor.shape, dtype=_float64(), device=tensor.device)
        u.uniform_(_phi(lo), _phi(hi), generator=generator)
        z = (u * 2 - 1).erfinv_().mul_(math.sqrt(2.0)).clamp_(lo, hi)
        if flip:
            z = z.neg_()
        x = z.mul_(std).add_(mean).clamp_(a, b)
        return _write(tensor, x._data)


def _float64():
    from .. import _dtype
    return _dtype.float64


def constant_(tensor, val):
    """Same as `torch.nn.init.constant_`."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Same as `torch.nn.init.ones_`."""
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    """Same as `torch.nn.init.zeros_`."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Same as `torch.nn.init.eye_`."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    d = tensor._data
    xp = XP[type(d)]
    d[...] = 0
    n = xp.arange(min(d.shape))
    d[n, n] = 1
    bump_version(tensor, "eye_")
    return tensor


def dirac_(tensor, groups=1):
    """Same as `torch.nn.init.dirac_`: each group's output channel d passes input channel d through the kernel's
    centre."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    d = tensor._data
    d[...] = 0
    for g in range(groups):
        for k in range(min(per_group, sizes[1])):
            d[(g * per_group + k, k) + centre] = 1
    bump_version(tensor, "dirac_")
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Same as `torch.nn.init.xavier_uniform_`: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Same as `torch.nn.init.xavier_normal_`: N(0, std) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Same as `torch.nn.init.kaiming_uniform_`: U(-bound, bound), bound = gain * sqrt(3 / fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Same as `torch.nn.init.kaiming_normal_`: N(0, std), std = gain / sqrt(fan)."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Same as `torch.nn.init.orthogonal_`: the tensor, viewed as (rows, cols), gets orthonormal rows or columns
    (whichever are fewer), times gain."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    from .._ops.creation import empty
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flat = empty((rows, cols), dtype=_float64(), device=tensor.device).normal_(0, 1, generator=generator)._data
    xp = XP[type(flat)]
    if rows < cols:
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q *= xp.sign(xp.diagonal(r))  # makes the decomposition unique, so q is uniformly distributed
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor.shape))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Same as `torch.nn.init.sparse_`: N(0, std) with ceil(sparsity * rows) zeros in each column (the rows are
    drawn from `generator` too, where torch uses the global generator)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._ops.random import randperm
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    normal_(tensor, 0, std, generator)
    d = tensor._data
    for c in range(cols):
        idx = randperm(rows, generator=generator, device=tensor.device)._data[:num_zeros]
        d[idx, c] = 0
    bump_version(tensor, "sparse_")
    return tensor


def _deprecated(fn):
    new = fn.__name__
    old = new[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    deprecated_init.__name__ = old
    deprecated_init.__doc__ = f"Same as `torch.nn.init.{old}` (deprecated: use {new})."
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
