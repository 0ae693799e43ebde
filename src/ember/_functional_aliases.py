"""torch's top-level spellings of nn.functional ops and of a few Tensor methods (torch.conv2d, torch.dropout, ...).

nn.functional loads lazily on first call so `import ember` stays fast; the wrappers keep torch's top-level
signatures, which differ from nn.functional's for several ops (positional flags, integer reductions)."""
import importlib

from ._tensor import Tensor
from ._ops._inplace import make_inplace

__all__ = [
    "_native_batch_norm_legit",
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "alpha_dropout",
    "alpha_dropout_",
    "avg_pool1d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "constant_pad_nd",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "cosine_embedding_loss",
    "cosine_similarity",
    "ctc_loss",
    "detach",
    "detach_",
    "dropout",
    "dropout_",
    "embedding",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "fill",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "fill_",
    "gcd_",
    "get_device",
    "group_norm",
    "igamma",
    "igammac",
    "native_batch_norm",
    "native_group_norm",
    "native_layer_norm",
    "hardshrink",
    "hinge_embedding_loss",
    "instance_norm",
    "is_inference",
    "kl_div",
    "layer_norm",
    "lcm_",
    "ldexp_",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "native_channel_shuffle",
    "pairwise_distance",
    "pdist",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "rms_norm",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "xlogy_",
    "zero_",
]

_F = []  # ember.nn.functional, once loaded


def _f():
    if not _F:
        _F.append(importlib.import_module("ember.nn.functional"))
    return _F[0]


# torch's top-level losses take the reduction as an int; its Python bindings default it to 0 ("none")
_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(r):
    try:
        return _REDUCTIONS[r]
    except (KeyError, TypeError):
        raise ValueError(f"{r} is not a valid value for reduction") from None


# ----- convolutions

def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Same as `torch.conv1d`."""
    return _f().conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Same as `torch.conv2d`."""
    return _f().conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Same as `torch.conv3d`."""
    return _f().conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Same as `torch.conv_transpose1d`."""
    return _f().conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Same as `torch.conv_transpose2d`."""
    return _f().conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Same as `torch.conv_transpose3d`."""
    return _f().conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


# ----- dropout: p and train are required at the top level

def dropout(input, p, train):
    """Same as `torch.dropout`."""
    return _f().dropout(input, p, train)


def dropout_(input, p, train):
    """Same as `torch.dropout_`."""
    return _f().dropout(input, p, train, True)


def alpha_dropout(input, p, train):
    """Same as `torch.alpha_dropout`."""
    return _f().alpha_dropout(input, p, train)


def alpha_dropout_(input, p, train):
    """Same as `torch.alpha_dropout_`."""
    return _f().alpha_dropout(input, p, train, True)


def feature_alpha_dropout(input, p, train):
    """Same as `torch.feature_alpha_dropout`."""
    return _f().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input, p, train):
    """Same as `torch.feature_alpha_dropout_`."""
    return _f().feature_alpha_dropout(input, p, train, True)


# ----- normalization (the cudnn flags are accepted and ignored, as on CPU)

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """Same as `torch.layer_norm`."""
    return _f().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """Same as `torch.group_norm`."""
    return _f().group_norm(input, num_groups, weight, bias, eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """Same as `torch.native_layer_norm`: (output, mean, rstd), the statistics over the normalized dims kept as
    size-1 dims (differentiable like the output)."""
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    out = _f().layer_norm(input, normalized_shape, weight, bias, eps)
    return out, input.mean(dims, keepdim=True), _rstd(input, dims, eps, True)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """Same as `torch.native_group_norm`: (output, mean, rstd) with the statistics of shape (N, group)."""
    out = _f().group_norm(input, group, weight, bias, eps)
    x = input.reshape(N, group, C // group * HxW)
    return out, x.mean(-1), _rstd(x, (-1,), eps, False)


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """Same as `torch.native_batch_norm`: (output, save_mean, save_invstd); in training the batch's per-channel
    statistics (running ones updated as batch_norm does), in evaluation two empty tensors."""
    if training:
        dims = (0,) + tuple(range(2, input.dim()))
        mean, invstd = input.mean(dims), _rstd(input, dims, eps, False)
    else:
        mean = invstd = input.new_empty(0)
    out = _f().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, invstd


def _native_batch_norm_legit(input, weight, bias, *args):
    """Same as `torch._native_batch_norm_legit`: native_batch_norm with running statistics (running_mean,
    running_var, training, momentum, eps) or without them (training, momentum, eps)."""
    if len(args) == 3:
        return native_batch_norm(input, weight, bias, None, None, *args)
    return native_batch_norm(input, weight, bias, *args)


def _rstd(x, dims, eps, keepdim):
    """1 / sqrt(biased variance + eps) over dims."""
    return (x.var(dims, correction=0, keepdim=keepdim) + eps).rsqrt()


def igamma(input, other, *, out=None):
    """Same as `torch.igamma`: torch.special.gammainc."""
    return importlib.import_module("ember.special").gammainc(input, other, out=out)


def igammac(input, other, *, out=None):
    """Same as `torch.igammac`: torch.special.gammaincc."""
    return importlib.import_module("ember.special").gammaincc(input, other, out=out)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """Same as `torch.batch_norm`."""
    return _f().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    """Same as `torch.instance_norm`."""
    return _f().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Same as `torch.rms_norm`."""
    return _f().rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Same as `torch.embedding` (weight first; a negative padding_idx means none)."""
    pad = None if padding_idx < 0 else padding_idx
    return _f().embedding(indices, weight, pad, None, 2.0, scale_grad_by_freq, sparse)


# ----- pooling

def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Same as `torch.max_pool1d`."""
    return _f().max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Same as `torch.max_pool2d`."""
    return _f().max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """Same as `torch.max_pool3d`."""
    return _f().max_pool3d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True):
    """Same as `torch.avg_pool1d`."""
    return _f().avg_pool1d(input, kernel_size, stride or None, padding, ceil_mode, count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """Same as `torch.adaptive_avg_pool1d`."""
    return _f().adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input, output_size):
    """Same as `torch.adaptive_max_pool1d`: returns (values, indices)."""
    return tuple(_f().adaptive_max_pool1d(input, output_size, True))


# ----- vision, distances, linear

def pixel_shuffle(input, upscale_factor):
    """Same as `torch.pixel_shuffle`."""
    return _f().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input, downscale_factor):
    """Same as `torch.pixel_unshuffle`."""
    return _f().pixel_unshuffle(input, downscale_factor)


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """Same as `torch.grid_sampler`."""
    return importlib.import_module("ember.nn._functional.vision").grid_sampler(
        input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """Same as `torch.grid_sampler_2d`."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """Same as `torch.grid_sampler_3d`."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def channel_shuffle(input, groups):
    """Same as `torch.channel_shuffle`."""
    return _f().channel_shuffle(input, groups)


def native_channel_shuffle(input, groups):
    """Same as `torch.native_channel_shuffle`."""
    return _f().native_channel_shuffle(input, groups)


def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    """Same as `torch.cosine_similarity`."""
    return _f().cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    """Same as `torch.pairwise_distance`."""
    return _f().pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input, p=2):
    """Same as `torch.pdist`."""
    return _f().pdist(input, p)


def bilinear(input1, input2, weight, bias=None):
    """Same as `torch.bilinear`."""
    return _f().bilinear(input1, input2, weight, bias)


# ----- activations

def prelu(input, weight):
    """Same as `torch.prelu`."""
    return _f().prelu(input, weight)


def rrelu(input, lower=0.125, upper=0.3333333333333333, training=False, generator=None):
    """Same as `torch.rrelu` (generator: only the default generator is supported)."""
    return _f().rrelu(input, lower, upper, training)


def rrelu_(input, lower=0.125, upper=0.3333333333333333, training=False, generator=None):
    """Same as `torch.rrelu_` (generator: only the default generator is supported)."""
    return _f().rrelu(input, lower, upper, training, True)


def selu(input):
    """Same as `torch.selu`."""
    return _f().selu(input)


def selu_(input):
    """Same as `torch.selu_`."""
    return _f().selu(input, True)


def celu(input, alpha=1.0):
    """Same as `torch.celu`."""
    return _f().celu(input, alpha)


def celu_(input, alpha=1.0):
    """Same as `torch.celu_`."""
    return _f().celu(input, alpha, True)


def threshold(input, threshold, value):
    """Same as `torch.threshold`."""
    return _f().threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """Same as `torch.threshold_`."""
    return _f().threshold(input, threshold, value, True)


def hardshrink(input, lambd=0.5):
    """Same as `torch.hardshrink`."""
    return _f().hardshrink(input, lambd)


# ----- losses (integer reduction: 0 none, 1 mean, 2 sum)

def kl_div(input, target, reduction=0, *, log_target=False):
    """Same as `torch.kl_div` (reduction 1 averages over all elements)."""
    red = _reduction(reduction)
    if red == "mean":  # plain element mean, without nn.functional's batchmean warning
        return _f().kl_div(input, target, reduction="none", log_target=log_target).mean()
    return _f().kl_div(input, target, reduction=red, log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=0):
    """Same as `torch.binary_cross_entropy_with_logits`."""
    return _f().binary_cross_entropy_with_logits(input, target, weight, reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """Same as `torch.cosine_embedding_loss`."""
    return _f().cosine_embedding_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """Same as `torch.hinge_embedding_loss`."""
    return _f().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """Same as `torch.margin_ranking_loss`."""
    return _f().margin_ranking_loss(input1, input2, target, margin, reduction=_reduction(reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """Same as `torch.poisson_nll_loss`."""
    return _f().poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=_reduction(reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=0):
    """Same as `torch.triplet_margin_loss`."""
    return _f().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """Same as `torch.ctc_loss`."""
    return _f().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, _reduction(reduction),
                         zero_infinity)


def constant_pad_nd(input, pad, value=0):
    """Same as `torch.constant_pad_nd`."""
    return _f().pad(input, pad, "constant", value)


# ----- Tensor methods torch also spells as functions

def is_inference(input):
    """Same as `torch.is_inference`."""
    return input.is_inference()


def get_device(input):
    """Same as `torch.get_device`."""
    return input.get_device()


def detach(input):
    """Same as `torch.detach`."""
    return input.detach()


def detach_(input):
    """Same as `torch.detach_`."""
    return input.detach_()


def fill(input, value):
    """Same as `torch.fill`: a new tensor like input, filled with value (differentiable in a tensor value)."""
    return input.clone().fill_(value)


def fill_(input, value):
    """Same as `torch.fill_`."""
    return input.fill_(value)


def zero_(input):
    """Same as `torch.zero_`."""
    return input.zero_()


def xlogy_(input, other):
    """Same as `torch.xlogy_`."""
    return input.xlogy_(other)


def gcd_(input, other):
    """Same as `torch.gcd_`."""
    return input.gcd_(other)


def lcm_(input, other):
    """Same as `torch.lcm_`."""
    return input.lcm_(other)


def ldexp_(input, other):
    """Same as `torch.ldexp_`."""
    return input.ldexp_(other)


for _name, _fn in (("igamma", igamma), ("igammac", igammac)):
    setattr(Tensor, _name, _fn)
    setattr(Tensor, _name + "_", make_inplace(_fn, _name + "_"))
