"""nn.functional: embedding, embedding_bag and one_hot."""
import numpy as np

from ..._backend import XP, deferred
from ..._backend.accumulate import add_at, reduce_at
from ..._ops._dispatch import Op, dispatch1, wrap
from ...autograd.grad_mode import GRAD
from ...autograd.graph import bump_version
from ._args import check_tensor

__all__ = ["embedding", "embedding_bag", "one_hot"]

_INDEX_KINDS = (np.int64, np.int32)


def _check_indices(indices, what="embedding"):
    if indices._data.dtype.type not in _INDEX_KINDS:
        name = indices.type().split(".")[-1]
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{name} instead (while checking arguments for {what})")


def _check_range(idx, n):
    """idx, checked to lie in [0, n); on a GPU clipped into it, the check reported at the next synchronization."""
    if idx.__class__ is not np.ndarray:
        return deferred.check_range(XP[idx.__class__], idx, 0, n, IndexError, "index out of range in self")
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    return idx


# ----- embedding: a gather whose backward scatters rows back (index_add, so it is differentiable again) -----

def _embedding_fwd(w, idx, padding_idx, scale_grad_by_freq):
    return w[idx]


def _embedding_bwd(ctx, g):
    idx, padding_idx, scale = ctx.attrs
    num, dim = ctx.shapes[0]
    flat = idx.reshape(-1)
    if ctx.op is _EMBEDDING_SPARSE:
        return (_sparse_grad(g, flat, num, dim, padding_idx),)
    if GRAD[0]:
        return (_embedding_grad_graph(g, flat, num, dim, padding_idx, scale),)
    g2 = g._data.reshape(-1, dim)
    if scale or padding_idx is not None:
        g2 = _mask_scale(g2.copy(), flat, num, padding_idx, scale)
    gw = _xp(g2).zeros((num, dim), dtype=g2.dtype)
    add_at(gw, flat, g2)
    return (wrap(gw),)


def _xp(a):
    return np if a.__class__ is np.ndarray else XP[a.__class__]


def _mask_scale(g2, flat, num, padding_idx, scale):
    if scale:
        g2 /= np.bincount(flat, minlength=num)[flat][:, None]
    if padding_idx is not None:
        g2[flat == padding_idx] = 0
    return g2


def _embedding_grad_graph(g, flat, num, dim, padding_idx, scale):
    g2 = g.reshape(-1, dim)
    if scale or padding_idx is not None:
        factor = _xp(flat).ones(flat.shape, dtype=g._data.dtype)
        if scale:
            factor /= np.bincount(flat, minlength=num)[flat]
        if padding_idx is not None:
            factor[flat == padding_idx] = 0
        g2 = g2 * wrap(factor[:, None])
    # no copy of an int64 index: the capture of ember.compile sees a reshape of its input, not a constant
    return g2.new_zeros((num, dim)).index_add(0, wrap(flat.astype(np.int64, copy=False)), g2)


def _sparse_grad(g, flat, num, dim, padding_idx):
    """The weight's gradient as a COO tensor, as torch's: one entry per looked-up row (repeats not summed,
    padding_idx's left out), values the output gradient's rows."""
    from ...sparse import SparseTensor
    values = g.reshape(-1, dim)
    if padding_idx is not None:
        keep = flat != padding_idx
        flat, values = flat[keep], values[wrap(keep)]
    elif not GRAD[0]:
        values = values.clone()  # .grad owns its values: the output gradient may be shared
    indices = wrap(flat.astype(np.int64).reshape(1, -1))
    return SparseTensor._new(indices, values, (num, dim), coalesced=flat.shape[0] <= 1)


_EMBEDDING = Op("embedding", _embedding_fwd, _embedding_bwd, node_name="EmbeddingBackward0")
_EMBEDDING_SPARSE = Op("embedding", _embedding_fwd, _embedding_bwd, node_name="EmbeddingBackward0")


def _renorm_(weight, idx, max_norm, norm_type):
    """Rescales, in place, the rows of weight that idx references whose norm exceeds max_norm (as torch)."""
    w = weight._data
    if w.__class__ is not np.ndarray:
        return _renorm_device(weight, idx, max_norm, norm_type)
    rows = np.unique(idx)
    sub = w[rows]
    if norm_type == np.inf:
        norms = np.abs(sub).max(1)
    else:
        norms = (np.abs(sub) ** norm_type).sum(1) ** (1.0 / norm_type)
    hit = norms > max_norm
    if hit.any():
        scale = (max_norm / (norms[hit] + 1e-7)).astype(w.dtype)
        w[rows[hit]] = sub[hit] * scale[:, None]
        bump_version(weight, "embedding_renorm_")


def _renorm_device(weight, idx, max_norm, norm_type):
    # rows referenced twice are rescaled twice from the same values (the same write): no unique(), whose size
    # the host would have to wait for
    w = weight._data
    flat = idx.reshape(-1)
    sub = w[flat]
    if norm_type == np.inf:
        norms = np.abs(sub).max(1)
    else:
        norms = (np.abs(sub) ** norm_type).sum(1) ** (1.0 / norm_type)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    w[flat] = sub * scale[:, None]
    bump_version(weight, "embedding_renorm_")


def _padding(padding_idx, num):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
        padding_idx += num
    return padding_idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Same as `torch.nn.functional.embedding`; with sparse=True the weight's gradient is a sparse COO tensor
    (ember.sparse) holding only the rows looked up, for optim.SparseAdam / SGD."""
    check_tensor(input, "embedding", "indices", 2)
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    num = weight.shape[0]
    padding_idx = _padding(padding_idx, num)
    _check_indices(input)
    idx = _check_range(input._data, num)
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    if sparse and scale_grad_by_freq and weight.requires_grad:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    return dispatch1(_EMBEDDING_SPARSE if sparse else _EMBEDDING, weight, idx, padding_idx, bool(scale_grad_by_freq))


# ----- embedding_bag: embedding, then a per-bag sum / mean / max -----

def _bag_ids(input, offsets, include_last_offset):
    """(flat indices, bag id of each, number of bags) from a 1-D input with offsets or a 2-D input."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type "
                             f"{type(offsets)}".replace("ember._tensor.Tensor", "torch.Tensor"))
        b, length = input.shape
        return input._data.reshape(-1), _xp(input._data).repeat(_xp(input._data).arange(b), length), b
    if input.dim() != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.dim() != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    _check_indices(offsets, "embedding_bag")
    off = offsets._data.astype(np.int64)
    n = input.shape[0]
    if off.shape[0]:
        first, last = int(off[0]), int(off[-1])
        # torch prints offsets[0] as a 0-dim int64 tensor whatever the offsets' type
        if first != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {first}\n[ torch.LongTensor{{}} ]")
        if last > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {last}")
    if include_last_offset:
        starts, b = off[:-1], off.shape[0] - 1
    else:
        starts, b = off, off.shape[0]
    counts = np.diff(np.append(starts, n if not include_last_offset else off[-1]))
    if counts.__class__ is not np.ndarray:  # repeat counts are read on the host
        xp = XP[counts.__class__]
        return input._data[:int(counts.sum())], xp.asarray(np.repeat(np.arange(b), np.maximum(
            xp.asnumpy(counts), 0))), b
    ids = np.repeat(np.arange(b), np.maximum(counts, 0))
    return input._data[:ids.shape[0]], ids, b


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Same as `torch.nn.functional.embedding_bag`; sparse=True gives the weight a sparse gradient, as embedding."""
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if sparse and mode == "max":
        raise ValueError("max mode does not support sparse weights")
    _check_indices(input, "embedding_bag")
    flat, ids, b = _bag_ids(input, offsets, include_last_offset)
    num, dim = weight.shape
    padding_idx = _padding(padding_idx, num)
    flat = _check_range(flat, num)
    keep = None
    if padding_idx is not None:
        keep = flat != padding_idx
        flat, ids = flat[keep], ids[keep]
    if max_norm is not None:
        _renorm_(weight, flat, max_norm, norm_type)
    if sparse and scale_grad_by_freq and weight.requires_grad:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    rows = dispatch1(_EMBEDDING_SPARSE if sparse else _EMBEDDING, weight, flat, None, bool(scale_grad_by_freq))
    if per_sample_weights is not None:
        psw = per_sample_weights.reshape(-1)
        if keep is not None:
            psw = psw[wrap(np.flatnonzero(keep))]
        rows = rows * psw.unsqueeze(1).to(rows.dtype)
    counts = np.bincount(ids, minlength=b)
    if mode == "max":
        return _bag_max(rows, ids, counts, b, dim)
    if ids.__class__ is np.ndarray:
        out = rows.new_zeros((b, dim)).index_add(0, wrap(ids.astype(np.int64)), rows)
    else:  # bag sums as a product with the (bags, rows) membership matrix
        sel = (XP[ids.__class__].arange(b)[:, None] == ids).astype(rows._data.dtype)
        out = wrap(sel) @ rows
    if mode == "mean":
        out = out / wrap(np.maximum(counts, 1).astype(out._data.dtype)[:, None])
    return out


def _bag_max(rows, ids, counts, b, dim):
    """Per-bag, per-column maximum as a gather of the winning rows (empty bags give zeros)."""
    r = rows._data
    xp = _xp(r)
    n = r.shape[0]
    best = xp.full((b, dim), -np.inf, dtype=r.dtype)
    reduce_at(np.maximum, best, ids, r)
    # the first row of each bag reaching the maximum (a NaN, if the bag has one) wins, as a gather index
    top = best[ids]
    hit = (r == top) | ((r != r) & (top != top))
    first = xp.full((b, dim), n, dtype=np.int64)
    reduce_at(np.minimum, first, ids, np.where(hit, xp.arange(n)[:, None], n))
    win = np.where(first < n, first, 0)  # empty bags: any row, zeroed below
    out = rows.gather(0, wrap(win)) if n else rows.new_zeros((b, dim))
    empty = counts == 0
    if empty.any() and n:
        out = out * wrap((~empty).astype(r.dtype)[:, None])
    return out


# ----- one_hot -----

def one_hot(tensor, num_classes=-1):
    """Same as `torch.nn.functional.one_hot`."""
    a = tensor._data
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size and a.__class__ is not np.ndarray:  # reported at the next synchronization, clipped meanwhile
        xp = XP[a.__class__]
        deferred.fail_if_any(xp, a < 0, RuntimeError, "Class values must be non-negative.")
        deferred.fail_if_any(xp, a >= num_classes, RuntimeError, "Class values must be smaller than num_classes.")
        a = xp.clip(a, 0, num_classes - 1)
    elif a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = _xp(a).zeros(a.shape + (num_classes,), dtype=np.int64)
    np.put_along_axis(out, a[..., None], 1, axis=-1)
    return wrap(out)

