"""Sorting and selection (sort, argsort, msort, topk, kthvalue), nonzero/argwhere, unique, and binning
(searchsorted, bucketize, histc, histogram, bincount)."""
import builtins
import math
import numbers

import numpy as np

from .. import return_types
from .._backend import XP, sort_keys
from .._tensor import Tensor, _wrap_dim
from ._dispatch import SAVE_NONE, Op, dispatch1
from ._inplace import write_out
from .index import _ALL, _fmt, _scalar_name, _t, _zeros
from .scatter import _scatter_add_t

__all__ = ["argsort", "argwhere", "bincount", "bucketize", "histc", "histogram", "histogramdd", "kthvalue", "msort", "nonzero",
           "nonzero_static", "searchsorted", "sort", "topk", "unique", "unique_consecutive"]


# ---------------------------------------------------------------- sort / topk / kthvalue
def _argsort(x, dim, descending):
    """Stable sorting indices; descending keeps equal elements in order and puts NaN first, as torch does."""
    x = sort_keys(x)
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    idx = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
    return (n - 1) - np.flip(idx, dim)


def _sort_fwd(x, dim, descending):
    if x.ndim == 0:
        return (x.copy(), np.zeros((), dtype=np.int64)), np.zeros((), dtype=np.int64)
    idx = _argsort(x, dim, descending)
    return (np.take_along_axis(x, idx, axis=dim), idx), idx


def _select_bwd(ctx, g):
    """Gradient of values picked by indices along a dim (sort, topk, kthvalue): scattered back."""
    gv = g[0]
    if gv is None:
        return None
    idx = ctx.extra
    dim = ctx.attrs[0]
    shape = ctx.shapes[0]
    if idx.ndim < len(shape):  # kthvalue without keepdim
        idx = np.expand_dims(idx, dim)
        gv = gv.unsqueeze(dim)
    return _scatter_add_t(_t(_zeros(shape, gv._data)), gv, dim, idx)


_SORT = Op("sort", _sort_fwd, _select_bwd, SAVE_NONE, nout=2, extra=True)
_SORT_STABLE = Op("sort", _sort_fwd, _select_bwd, SAVE_NONE, nout=2, extra=True, node_name="SortBackward1")


def _write_pair(r, out, name, inputs=()):
    write_out(r[0], out[0], name, inputs)
    write_out(r[1], out[1], name, inputs)
    return out


def sort(input, dim=-1, descending=False, *, stable=False, out=None, axis=None):
    """Same as `torch.sort` (always stable: equal elements keep their order)."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    dim = _wrap_dim(dim, input._data.ndim)
    v, i = dispatch1(_SORT_STABLE if stable else _SORT, input, dim, bool(descending))
    r = return_types.sort(v, i)
    return r if out is None else return_types.sort(*_write_pair(r, out, "sort"))


def argsort(input, dim=-1, descending=False, *, stable=False, axis=None):
    """Same as `torch.argsort`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    x = input._data
    dim = _wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return _t(np.zeros((), dtype=np.int64))
    return _t(_argsort(x, dim, descending))


def msort(input, *, out=None):
    """Same as `torch.msort`."""
    r = sort(input, 0).values
    return r if out is None else write_out(r, out, "msort")


def _topk_fwd(x, dim, k, largest):
    if x.ndim == 0:
        return (x.reshape(1)[:k].reshape(()) if k else x.reshape(1)[:0], np.zeros((), np.int64)[()] if k else
                np.zeros(0, np.int64)), None
    n = x.shape[dim]
    if 0 < k < n // 4:  # partition first: O(n) instead of sorting everything
        part = np.argpartition(sort_keys(x), n - k if largest else k - 1, axis=dim)
        sl = [_ALL] * x.ndim
        sl[dim] = slice(n - k, n) if largest else slice(0, k)
        cand = part[tuple(sl)]
        order = _argsort(np.take_along_axis(x, cand, axis=dim), dim, largest)
        idx = np.take_along_axis(cand, order, axis=dim)
    else:
        idx = _argsort(x, dim, largest)
        sl = [_ALL] * x.ndim
        sl[dim] = slice(0, k)
        idx = idx[tuple(sl)]
    return (np.take_along_axis(x, idx, axis=dim), idx), idx


def _topk_bwd(ctx, g):
    if ctx.extra is None:  # 0-dim input
        return g[0].reshape(()) if g[0] is not None and g[0]._data.size else None
    return _select_bwd(ctx, g)


_TOPK = Op("topk", _topk_fwd, _topk_bwd, SAVE_NONE, nout=2, extra=True)


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None, axis=None):
    """Same as `torch.topk` (results always sorted)."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    x = input._data
    dim = _wrap_dim(-1 if dim is None else dim, x.ndim)
    n = x.shape[dim] if x.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    r = return_types.topk(*dispatch1(_TOPK, input, dim, int(k), bool(largest)))
    return r if out is None else return_types.topk(*_write_pair(r, out, "topk"))


def _kthvalue_fwd(x, dim, k, keepdim):
    if x.ndim == 0:
        return (x.copy(), np.zeros((), np.int64)), np.zeros((), np.int64)
    part = np.argpartition(sort_keys(x), k - 1, axis=dim)
    idx = np.take(part, [k - 1], axis=dim)
    v = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, v = np.squeeze(idx, dim), np.squeeze(v, dim)
    return (v, idx), idx


_KTHVALUE = Op("kthvalue", _kthvalue_fwd, _select_bwd, SAVE_NONE, nout=2, extra=True)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None, axis=None, keepdims=None):
    """Same as `torch.kthvalue`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    x = input._data
    dim = _wrap_dim(-1 if dim is None else dim, x.ndim)
    n = x.shape[dim] if x.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    r = return_types.kthvalue(*dispatch1(_KTHVALUE, input, dim, int(k), bool(keepdim)))
    return r if out is None else return_types.kthvalue(*_write_pair(r, out, "kthvalue", (input,)))


# ---------------------------------------------------------------- nonzero / unique
def nonzero(input, *, out=None, as_tuple=False):
    """Same as `torch.nonzero`."""
    x = input._data
    if as_tuple:
        return tuple(_t(a.astype(np.int64, copy=False)) for a in np.nonzero(x.reshape(1) if x.ndim == 0 else x))
    r = _t(np.argwhere(x).astype(np.int64, copy=False))
    return r if out is None else write_out(r, out, "nonzero")


def nonzero_static(input, *, size, fill_value=-1):
    """Same as `torch.nonzero_static`: nonzero's indices in a (size, input.dim()) result, cut at size rows or
    padded with fill_value."""
    x = input._data
    found = XP[x.__class__].argwhere(x)
    r = XP[x.__class__].full((size, x.ndim), fill_value, np.int64)
    k = min(size, found.shape[0])
    r[:k] = found[:k]
    return _t(r)


def argwhere(input):
    """Same as `torch.argwhere`."""
    return nonzero(input)


def _unique_result(values, inverse, counts, return_inverse, return_counts):
    out = (_t(values),)
    if return_inverse:
        out += (_t(inverse.astype(np.int64, copy=False)),)
    if return_counts:
        out += (_t(counts.astype(np.int64, copy=False)),)
    return out[0] if len(out) == 1 else out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """Same as `torch.unique` (always sorted; NaNs are kept apart, as in torch)."""
    x = input._data
    if dim is None:
        v, inv, cnt = np.unique(sort_keys(x.reshape(-1)), return_inverse=True, return_counts=True, equal_nan=False)
        return _unique_result(v.astype(x.dtype, copy=False), inv.reshape(x.shape), cnt, return_inverse, return_counts)
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, x.ndim)
    v, inv, cnt = np.unique(sort_keys(x), return_inverse=True, return_counts=True, axis=dim)
    return _unique_result(v.astype(x.dtype, copy=False), inv.reshape(-1), cnt, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Same as `torch.unique_consecutive`."""
    x = input._data
    if dim is None:
        rows = x.reshape(-1)
        flat = rows[:, None]
    else:
        if x.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        dim = _wrap_dim(dim, x.ndim)
        rows = np.moveaxis(x, dim, 0)
        flat = rows.reshape(rows.shape[0], math.prod(rows.shape[1:]))  # -1 is ambiguous when a size is 0
    n = flat.shape[0]
    change = np.ones(n, dtype=bool)
    if n > 1:
        change[1:] = (flat[1:] != flat[:-1]).any(axis=1) if flat.shape[1] else False
    starts = np.flatnonzero(change)
    values = rows[starts] if dim is None else np.moveaxis(rows[starts], 0, dim)
    inverse = np.cumsum(change) - 1
    counts = np.diff(np.append(starts, n))
    return _unique_result(values, inverse.reshape(x.shape) if dim is None else inverse, counts, return_inverse,
                          return_counts)


# ---------------------------------------------------------------- searchsorted / bucketize / histograms
def _values_array(values, like):
    if isinstance(values, Tensor):
        return values._data
    return np.asarray(values) if like.__class__ is np.ndarray else XP[like.__class__].asarray(values)


def searchsorted(sorted_sequence, values=None, *, out_int32=False, right=False, side=None, out=None, sorter=None,
                 input=None):
    """Same as `torch.searchsorted` (torch's argument parser also names the values `input`)."""
    if input is not None:
        values = input
    elif values is None:
        raise TypeError("searchsorted() missing 1 required positional argument: 'values'")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"ember.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("ember.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    v = sort_keys(_values_array(values, seq))
    seq = sort_keys(seq)
    srt = None if sorter is None else sorter._data
    how = "right" if right else "left"
    if seq.ndim <= 1:
        r = np.searchsorted(seq.reshape(-1), v, side=how, sorter=srt)
    else:
        if v.ndim != seq.ndim or v.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(f"ember.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               f"dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {_fmt(seq.shape)} and input value tensor {_fmt(v.shape)}")
        rows = math.prod(seq.shape[:-1])  # not -1: ambiguous when a size is 0
        s2, v2 = seq.reshape(rows, seq.shape[-1]), v.reshape(rows, v.shape[-1])
        o2 = None if srt is None else srt.reshape(rows, srt.shape[-1])
        r = np.stack([np.searchsorted(s2[i], v2[i], side=how, sorter=None if o2 is None else o2[i])
                      for i in range(s2.shape[0])]).reshape(v.shape) if s2.shape[0] else np.zeros_like(v, np.int64)
    r = r.astype(np.int32 if out_int32 else np.int64)  # a NumPy scalar for a scalar value on the CPU
    r = _t(r if r.__class__ in XP else np.asarray(r))
    return r if out is None else write_out(r, out, "searchsorted")


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """Same as `torch.bucketize`."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def _float_only(x, name):
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f'"{name}" not implemented for \'{_scalar_name(x)}\'')


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Same as `torch.histc`."""
    x = input._data
    _float_only(x, "histogram_cpu")
    if bins <= 0:
        raise RuntimeError("ember.histc(): bins must be > 0, but got " + str(bins) + " for dimension 0")
    lo, hi = builtins.float(min), builtins.float(max)
    if lo > hi:
        raise RuntimeError("ember.histc(): max must be larger than min")
    if lo == hi and x.size:
        finite = x[np.isfinite(x)]
        lo, hi = (builtins.float(finite.min()), builtins.float(finite.max())) if finite.size else (lo, hi)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    xs = x.reshape(-1)
    keep = (xs >= lo) & (xs <= hi)
    xs = xs[keep].astype(np.float64 if x.dtype == np.float64 else np.float32)
    pos = ((xs - lo) * bins / (hi - lo)).astype(np.int64)
    pos[pos == bins] = bins - 1
    r = _t(np.bincount(pos, minlength=bins).astype(x.dtype))
    return r if out is None else write_out(r, out, "histc")


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """Same as `torch.histogram`."""
    x = input._data
    _float_only(x, "histogram_cpu")
    edges = bins._data if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight._data.reshape(-1)
    hist, e = np.histogram(x.reshape(-1), bins=edges, range=range, weights=w, density=density)
    r = return_types.histogram(_t(hist.astype(x.dtype)), _t(np.asarray(e).astype(x.dtype)))
    return r if out is None else return_types.histogram(*_write_pair(r, out, "histogram"))


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
    """Same as `torch.histogramdd`: the points of input (*, D) binned per coordinate; bins is an int, D ints or D
    tensors of edges, range a flat [min_0, max_0, min_1, max_1, ...]."""
    x = input._data
    _float_only(x, "histogramdd")
    if x.ndim < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions, but got {x.ndim}")
    d = x.shape[-1]
    pts = x.reshape(-1, d)
    if isinstance(bins, (list, tuple)) and bins and isinstance(bins[0], Tensor):
        edges = [np.asarray(b._data, np.float64) for b in bins]
    else:
        edges = [bins] * d if isinstance(bins, numbers.Integral) else list(bins)
    if len(edges) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each of the {d} "
                           f"dimensions of the input, but got {len(edges)}")
    pts = pts.astype(np.float64)
    edges = [e if isinstance(e, np.ndarray) else _even_edges(pts[:, j], e, None if range is None else
                                                             (range[2 * j], range[2 * j + 1]))
             for j, e in enumerate(edges)]
    shape = tuple(len(e) - 1 for e in edges)
    keep = np.ones(pts.shape[0], bool)
    index = []
    for j, e in enumerate(edges):  # the bin of each coordinate; the last edge closes the last bin
        c = pts[:, j]
        k = np.searchsorted(e, c, side="right") - 1
        k[c == e[-1]] = len(e) - 2
        keep &= (c >= e[0]) & (c <= e[-1]) & (k >= 0) & (k < len(e) - 1)  # decreasing edges keep no point
        index.append(k)
    w = None if weight is None else weight._data.reshape(-1).astype(np.float64)[keep]
    flat = np.ravel_multi_index([k[keep] for k in index], shape) if math.prod(shape) else np.zeros(0, np.int64)
    hist = np.bincount(flat, weights=w, minlength=math.prod(shape)).astype(np.float64).reshape(shape)
    if density:
        volume = np.ones(shape)
        for j, e in enumerate(edges):
            volume = volume * np.diff(e).reshape((-1,) + (1,) * (d - 1 - j))
        hist = hist / hist.sum() / volume
    r = return_types.histogramdd(_t(hist.astype(x.dtype)), tuple(_t(e.astype(x.dtype)) for e in edges))
    if out is None:
        return r
    hist_out, edges_out = out
    write_out(r.hist, hist_out, "histogramdd")
    for e, o in zip(r.bin_edges, edges_out):
        write_out(e, o, "histogramdd")
    return return_types.histogramdd(hist_out, tuple(edges_out))


def _even_edges(c, bins, lohi):
    """bins + 1 evenly spaced edges over lohi, or over the values c (a constant c widened by 0.5 each way, no
    values: [0, 1]), as torch's histograms."""
    if lohi is None:
        lohi = (c.min(), c.max()) if c.size else (0.0, 1.0)
    lo, hi = builtins.float(lohi[0]), builtins.float(lohi[1])
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, bins + 1)


def bincount(input, weights=None, minlength=0):
    """Same as `torch.bincount`."""
    x = input._data
    if x.dtype.kind not in "iub":
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{_scalar_name(x)}\'')
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return _t(np.bincount(x, minlength=minlength).astype(np.int64, copy=False))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != x.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    r = np.bincount(x, weights=w.astype(np.float64), minlength=minlength)
    return _t(r.astype(w.dtype if w.dtype.kind in "fV" else np.float64))


# ---------------------------------------------------------------- binding
for _name in ("nonzero", "nonzero_static", "argwhere", "sort", "argsort", "msort", "topk", "kthvalue", "unique", "unique_consecutive",
              "histc", "histogram", "histogramdd", "bincount"):
    setattr(Tensor, _name, globals()[_name])
