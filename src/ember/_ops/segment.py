"""segment_reduce and _chunk_cat: reductions over consecutive segments of a dim, and the chunked concatenation of
several tensors. Both are compositions of ember ops (gradients come from those), one segment or tensor at a time.
"""
import math

import numpy as np

from .._backend import host
from .join import cat, stack

__all__ = ["_chunk_cat", "_segment_reduce", "segment_reduce"]

def _on_host(t):
    a = t._data
    return (a if a.__class__ is np.ndarray else host(a)).astype(np.int64)


_EMPTY = {"max": -math.inf, "min": math.inf, "sum": 0.0, "mean": math.nan, "prod": 1.0}


def _one_segment(seg, reduce, initial):
    """The reduction of seg (1-d along dim 0, trailing dims kept), torch's rules for initial and ties (max/min:
    the gradient is shared by the elements equal to the result, initial takes none)."""
    n = seg.shape[0]
    if n == 0:
        return seg.new_full(seg.shape[1:], _EMPTY[reduce] if initial is None else initial)
    if reduce == "sum":
        r = seg.sum(0)
        return r if initial is None else r + initial
    if reduce == "mean":
        r = seg.sum(0)
        return (r if initial is None else r + initial) / n
    if reduce == "prod":
        r = seg.prod(0)
        return r if initial is None else r * initial
    best = seg.detach().amax(0) if reduce == "max" else seg.detach().amin(0)
    if initial is not None:
        best = best.clamp(min=initial) if reduce == "max" else best.clamp(max=initial)
    hit = seg.detach() == best
    count = hit.sum(0)
    shared = (seg * hit).sum(0) / count.clamp(min=1)
    return shared.where(count > 0, best)  # where initial wins, no element of seg takes a gradient


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Same as `torch.segment_reduce`: reduce (sum, mean, max, min, prod) over the consecutive segments of dim
    `axis` given by lengths (or offsets), for every position of the dims before it."""
    if reduce not in _EMPTY:
        raise RuntimeError(f"segment_reduce(): reduction {reduce!r} is not supported")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined")
    axis = axis + data.dim() if axis < 0 else axis
    if offsets is not None:
        off = _on_host(offsets)
        lens = np.diff(off, axis=-1)
        starts = off[..., :-1]
    else:
        lens = _on_host(lengths)
        starts = np.cumsum(lens, axis=-1) - lens
    if lens.ndim != axis + 1:
        raise RuntimeError(f"segment_reduce(): Expected lengths/offsets to have {axis + 1} dimension(s) (the dims of "
                           f"data up to axis), but got {lens.ndim}")
    if not unsafe:
        if (lens < 0).any():
            raise RuntimeError("segment_reduce(): lengths contains negative value!")
        if offsets is None and (lens.sum(-1) != data.shape[axis]).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    rows = []
    for lead in np.ndindex(*lens.shape[:-1]):
        x = data[lead] if lead else data
        rows.append(stack([_one_segment(x[int(s):int(s) + int(n)], reduce, initial)
                          for s, n in zip(starts[lead], lens[lead])]))
    if not lens.shape[:-1]:
        return rows[0]
    return stack(rows).reshape(lens.shape + tuple(data.shape[axis + 1:]))


def _segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Same as `torch._segment_reduce` (torch.segment_reduce's op)."""
    return segment_reduce(data, reduce, lengths=lengths, indices=indices, offsets=offsets, axis=axis, unsafe=unsafe,
                          initial=initial)


def _chunk_cat(tensors, dim, num_chunks, *, out=None):
    """Same as `torch._chunk_cat`: each tensor split along dim into num_chunks chunks (zero-padded to equal ones),
    each chunk flattened with the dims after dim, and chunk i of every tensor concatenated: the result is
    tensors[0].shape[:dim] + (num_chunks, total)."""
    if not tensors:
        raise RuntimeError("_chunk_cat expects a non-empty input tensor list")
    if num_chunks < 1:
        raise RuntimeError("_chunk_cat expects positive num_chunks")
    first = tensors[0]
    if dim < 0:
        if any(t.dim() != first.dim() for t in tensors):
            raise RuntimeError("_chunk_cat expects non-negative dim when input tensors have different ndims")
        dim += first.dim()
    d = dim
    parts = []
    for t in tensors:
        if t.dim() <= d:
            raise RuntimeError("_chunk_cat expects dim < ndim for all input tensors")
        if tuple(t.shape[:d]) != tuple(first.shape[:d]):
            raise RuntimeError("_chunk_cat expects same sizes of 0,...,dim-1 dimensions for all tensors")
        if t.numel() == 0:
            raise RuntimeError("_chunk_cat expects non-empty tensor")
        size = t.shape[d]
        chunk = -(-size // num_chunks)
        if chunk * num_chunks > size:  # zeros after the last chunk
            t = cat([t, t.new_zeros(tuple(t.shape[:d]) + (chunk * num_chunks - size,) + tuple(t.shape[d + 1:]))], d)
        parts.append(t.reshape(tuple(t.shape[:d]) + (num_chunks, -1)))
    r = cat(parts, -1)
    return r if out is None else out.copy_(r)
