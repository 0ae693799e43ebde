"""F.linear_cross_entropy: cross_entropy(linear(input, linear_weight, linear_bias), target) in one call.

NOTE [ chunked linear_cross_entropy ]
With `options` (a LinearCrossEntropyOptions) torch computes the same loss over chunks of rows so that the
(N, C) logits never exist at once; only memory use changes. ember does the same with its own ops: each chunk is
linear + cross_entropy(reduction 'sum' or 'none'), and the mean divides the summed chunks by the weight of the
counted targets, as cross_entropy's mean does. When a gradient is needed each chunk runs under reentrant
checkpointing, so backward recomputes its logits instead of the graph keeping them: the peak is one chunk's
logits in both passes. acc_dtype is honoured by casting each chunk's logits (float32 for half inputs by default);
acc_policy and allow_retain_graph are accepted and change nothing (retain_graph always works here). As in torch,
the chunked path has no double backward (the recomputation runs outside the outer graph).
The chunked path is taken where torch takes it (class indices, no label smoothing, no out_features) and, in
ember, only where the target holds one index per row; anything else runs the reference path, which raises the
reference path's errors.
"""
import math
import warnings

import ember

from ...utils.checkpoint import checkpoint
from .linear import linear
from .loss import cross_entropy

__all__ = ["linear_cross_entropy"]


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """Same as `torch.nn.functional.linear_cross_entropy` (see NOTE [ chunked linear_cross_entropy ])."""
    in_features, num_classes, out_features = _check_shapes(input, linear_weight, linear_bias)
    logits_shape = (*input.shape[:-1], num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        tracing = ember.jit.is_tracing()
        if (out_features or reduction not in ("mean", "sum", "none") or label_smoothing != 0.0
                or target.dtype != ember.int64 or tracing):
            warnings.warn(
                "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in {'mean','sum','none'}, "
                "label_smoothing == 0, target.dtype == int64, out_features == (). Got "
                f"reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                f"out_features={out_features}, tracing={tracing}, linear_bias.shape="
                f"{None if linear_bias is None else tuple(linear_bias.shape)}.", stacklevel=2)
        elif tuple(target.shape) == tuple(input.shape[:-1]):
            return _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias)
    if out_features:
        logits = logits.reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, ignore_index=ignore_index, reduction=reduction,
                         label_smoothing=label_smoothing)


def _check_shapes(input, linear_weight, linear_bias):
    """(in_features, num_classes, out_features) after torch's checks of the three shapes."""
    if not 1 <= input.dim() <= 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    in_features = int(input.shape[-1])
    if int(linear_weight.shape[-1]) != in_features:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {in_features} and {int(linear_weight.shape[-1])}, respectively")
    num_classes = int(linear_weight.shape[0])
    out_features = tuple(int(d) for d in linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, "
                           f"got {tuple(linear_bias.shape)}")
    if out_features and input.dim() == 1:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires"
                           f" batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    return in_features, num_classes, out_features


def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index, options):
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n, in_features = input.shape
    num_classes = linear_weight.shape[0]
    dtype = input.dtype
    half = dtype in (ember.float16, ember.bfloat16)
    acc = _acc_dtype(options, dtype, half)
    size = _chunk_size(options, n, in_features, num_classes, half and input.device.type == "cpu")
    part = "none" if reduction == "none" else "sum"

    def chunk_loss(x, w, b, t):
        logits = linear(x, w, b)
        if acc != dtype:
            logits = logits.to(acc)
        return cross_entropy(logits, t, weight=weight, ignore_index=ignore_index, reduction=part)

    record = ember.is_grad_enabled() and any(a is not None and a.requires_grad
                                             for a in (input, linear_weight, linear_bias))
    losses = []
    for i in range(0, max(n, 1), size):
        args = (input[i:i + size], linear_weight, linear_bias, target[i:i + size])
        if record and size < n:
            losses.append(checkpoint(chunk_loss, *args, use_reentrant=True, preserve_rng_state=False))
        else:
            losses.append(chunk_loss(*args))
    if reduction == "none":
        loss = losses[0] if len(losses) == 1 else ember.cat(losses)
        return (loss.squeeze(0) if unbatched else loss).to(dtype)
    loss = losses[0] if len(losses) == 1 else ember.stack(losses).sum()
    if reduction == "mean":
        loss = loss / _counted(target, weight, ignore_index, loss.dtype)
    return loss.to(dtype)


def _counted(target, weight, ignore_index, dtype):
    """The mean's denominator: the summed class weights of the targets that are not ignored."""
    keep = target != ignore_index
    if weight is None:
        return keep.sum().to(dtype)
    return (weight.detach().to(dtype)[ember.where(keep, target, 0)] * keep).sum()


def _name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def _acc_dtype(options, dtype, half):
    """The dtype each chunk's logits are reduced in (torch's rule: float32 for half inputs under 'auto')."""
    acc = options.acc_dtype
    if acc is None:
        return ember.float32 if half and options.acc_policy == "auto" else dtype
    if _name(acc) != _name(dtype) and not (half and _name(acc) == "float32"):
        raise RuntimeError("linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                           f"{acc} acc_dtype and {dtype} inputs.")
    return getattr(ember, _name(acc))


def _chunk_size(options, n, in_features, num_classes, cpu_half):
    """Rows per chunk from options.batch_chunk_size and options.chunking_method, as torch resolves them."""
    size, method = options.batch_chunk_size, options.chunking_method
    if method == "auto":  # an explicit size turns the heuristic off
        method = None if size is not None else ("aspect_ratio" if cpu_half else "aspect_ratio:2")
    if method is None:
        return max(1, n if size is None else min(size, n))
    # "aspect_ratio:k": a chunk's logits as large as the input, divided by k, rounded up to a power of two first
    factor = int(method.partition(":")[2] or 1)
    rows = -(-n // -(-num_classes // max(in_features, 1)))
    got = min((1 << (rows - 1).bit_length()) // factor, n)
    if size is not None and size != got:
        raise ValueError(f"batch_chunk_size (={size}) and chunking_method ('{method}') give different chunk sizes "
                         f"({size} vs {got}); pass only one.")
    return max(1, got)
