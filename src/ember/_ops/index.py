"""Indexing (x[key], x[key] = v), gather/scatter, masked and index_* ops, selection and sorting.

NOTE [ Indexing keys ]
A key is split, as torch does, into a basic part (ints, slices, None, Ellipsis) applied first as a NumPy view,
and an advanced part (integer arrays, masks turned into their nonzero() arrays) applied to that view. Ints are
selections, never advanced indices: x[0, :, [0, 1]] has shape [S1, 2] in torch where NumPy gives [2, S1]. On the
view, the advanced indices follow NumPy's layout rule (adjacent: in place; separated: first), which is torch's.
A parsed key is the pair (basic, adv): basic a NumPy key ending in Ellipsis (None: nothing to apply), adv a tuple
of index arrays and full slices (None: no advanced part).
"""
import builtins
import operator
import warnings

import numpy as np

from .. import return_types
from .._backend import XP
from .._dtype import FROM_NP
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import GRAD
from ..autograd.graph import bump_version
from ._dispatch import SAVE_NONE, Op, dispatch1, dispatch2
from ._inplace import inplace, make_inplace, write_out
from .shape import view_op

__all__ = ["argsort", "argwhere", "bincount", "bucketize", "gather", "histc", "histogram", "index_add",
           "index_copy", "index_fill", "index_put", "index_put_", "index_reduce", "index_select", "kthvalue", "masked_fill",
           "masked_scatter", "masked_select", "msort", "nonzero", "put", "scatter", "scatter_add", "scatter_reduce",
           "searchsorted", "sort", "take", "take_along_dim", "topk", "unique", "unique_consecutive"]

_ALL = slice(None)
_INT, _SLICE, _NONE, _ELLIPSIS, _BOOL, _MASK, _ARRAY = range(7)
_NUMBER = (builtins.int, builtins.float, builtins.bool, builtins.complex, np.number, np.bool_)
_VALID = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
          "(got {})")
_ZERO_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
             "convert a 0-dim tensor to a number")
_SEQ_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated; use x[tuple(seq)] instead "
                "of x[seq]. In the future this will be interpreted as tensor index, x[ember.tensor(seq)], which will "
                "result either in an error or a different result")
# C++ scalar type names, as torch's conversion errors print them
_CTYPE = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
          "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
          "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
_MASK_CTYPE = {"uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
               "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
               "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _scalar_name(arr):
    from .._tensor_str import SCALAR_NAMES
    return SCALAR_NAMES[FROM_NP[arr.dtype].name]


def _xp(arr):
    return XP[arr.__class__]


def _t(arr):
    return Tensor._make(arr)


def _bshape(a, b):
    """np.broadcast_shapes for two shapes, without its array machinery (ValueError when incompatible)."""
    if a == b:
        return a
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for p, q in zip(a, b):
        if p != q and p != 1 and q != 1:
            raise ValueError("shapes cannot be broadcast")
        out.append(q if p == 1 else p)
    return tuple(out)


_FMAX = {}


def _fmax(dt):
    m = _FMAX.get(dt)
    if m is None:
        m = _FMAX[dt] = builtins.float(np.finfo(dt).max)
    return m


# ---------------------------------------------------------------- array kernels
def _kget(x, basic, adv):
    if basic is not None:
        x = x[basic]
    if adv is None:
        return x
    a = adv[0]
    if len(adv) == 1 and a.__class__ is not slice:
        return x.take(a, axis=0)  # a single index array: take is 2-3x faster than fancy indexing
    return x[adv]


def _kset(y, basic, adv, v):
    """y[key] = v, in place."""
    if adv is None:
        y[basic] = v
    elif basic is None:
        y[adv] = v
    else:
        y[basic][adv] = v


def _kadd(y, basic, adv, v):
    """y[key] += v, in place, summing over repeated indices."""
    if basic is not None:
        y = y[basic]
    if adv is None:
        y += v
        return
    a = adv[0]
    if len(adv) == 1 and a.__class__ is not slice and y.__class__ is np.ndarray and y.ndim:
        _add_rows(y, a, v)
    else:
        _add_at(y, adv, v)


def _add_at(y, idx, v):
    if y.__class__ is np.ndarray:
        np.add.at(y, idx, v)
    else:
        import cupyx
        cupyx.scatter_add(y, idx, v)


def _add_rows(y, idx, v):
    """y[idx] += v over the first axis with repeated rows summed: sorting and np.add.reduceat beat np.add.at,
    which runs element by element."""
    full = idx.shape + y.shape[1:]
    idx = idx.reshape(-1)
    if idx.size == 0:
        return
    v = (np.broadcast_to(v, full) if v.shape != full else v).reshape((idx.size,) + y.shape[1:])
    n = y.shape[0]
    if idx.min() < 0:
        idx = np.where(idx < 0, idx + n, idx)
    if idx.size == 1 or np.bincount(idx, minlength=n).max() <= 1:
        y[idx] += v
        return
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    y[s[starts]] += np.add.reduceat(v[order], starts, axis=0)


def _zeros(shape, like):
    return _xp(like).zeros(shape, dtype=like.dtype)


# ---------------------------------------------------------------- differentiable region primitives
def _region_get_fwd(x, basic, adv):
    r = _kget(x, basic, adv)
    return r.copy() if adv is None else r  # a gradient must own its memory


def _region_scatter_fwd(g, shape, basic, adv):
    z = _zeros(shape, g)
    if adv is None:
        z[basic] = g
    else:
        _kadd(z, basic, adv, g)
    return z


def _region_fill_fwd(x, basic, adv, value):
    y = x.copy()
    _kset(y, basic, adv, value)
    return y


_REGION_GET = Op("index", _region_get_fwd, lambda ctx, g: region_scatter(g, ctx.shapes[0], *ctx.attrs))
_REGION_SCATTER = Op("index_put", _region_scatter_fwd, lambda ctx, g: region_get(g, *ctx.attrs[1:]))
_REGION_FILL = Op("masked_fill", _region_fill_fwd, lambda ctx, g: region_fill(g, ctx.attrs[0], ctx.attrs[1], 0))


def region_get(x, basic, adv):
    """x[key] as a new tensor (differentiable)."""
    return dispatch1(_REGION_GET, x, basic, adv)


def region_scatter(g, shape, basic, adv):
    """zeros(shape) with g added at key (differentiable in g): the gradient of region_get."""
    return dispatch1(_REGION_SCATTER, g, tuple(shape), basic, adv)


def region_fill(x, basic, adv, value):
    """x with value written at key (differentiable in x)."""
    return dispatch1(_REGION_FILL, x, basic, adv, value)


# ---------------------------------------------------------------- parsing keys
def _index_array(k):
    """An index array from a tensor, array or list: bool (a mask) or int32/int64."""
    if isinstance(k, Tensor):
        a = k._data
    elif k.__class__ in XP:
        a = k
    elif isinstance(k, (list, tuple)):
        a = np.asarray(k)
        if a.size == 0:
            a = a.astype(np.int64)
    else:
        raise IndexError(_VALID.format(type(k).__name__))
    kind = a.dtype.kind
    if kind == "b":
        return a
    if a.dtype == np.uint8:
        warnings.warn("indexing with dtype ember.uint8 is now deprecated, please use a dtype ember.bool instead.",
                      UserWarning, stacklevel=4)
        return a.astype(bool)
    if kind in "iu" and a.dtype.itemsize >= 4 and a.dtype != np.uint32 and a.dtype != np.uint64:
        return a
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _seq_as_tuple(key):
    """torch's legacy rule: a short list holding sequences, slices, None, Ellipsis or tensors is a tuple."""
    if key.__class__ is not list or len(key) >= 32:
        return False
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (Tensor, list, tuple, slice)) or k.__class__ in XP:
            warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=4)
            return True
    return False


def _classify(key):
    """[(kind, value)] and the number of tensor dims the key consumes."""
    items = []
    used = 0
    for k in key:
        c = k.__class__
        if c is builtins.int:
            items.append((_INT, k))
            used += 1
        elif c is slice:
            items.append((_SLICE, k))
            used += 1
        elif k is None:
            items.append((_NONE, None))
        elif k is Ellipsis:
            items.append((_ELLIPSIS, None))
        elif c is builtins.bool or c is np.bool_:
            items.append((_BOOL, bool(k)))
        elif isinstance(k, np.integer):
            items.append((_INT, int(k)))
            used += 1
        else:
            a = _index_array(k)
            if a.ndim == 0:
                items.append((_BOOL, bool(a)) if a.dtype.kind == "b" else (_INT, int(a)))
                used += a.dtype.kind != "b"
            elif a.dtype.kind == "b":
                items.append((_MASK, a))
                used += a.ndim
            else:
                items.append((_ARRAY, a))
                used += 1
    return items, used


def _check_step(s):
    if s.step is not None:
        step = operator.index(s.step)
        if step <= 0:
            raise ValueError("slice step cannot be zero" if step == 0 else "step must be greater than zero")


def _check_mask(m, shape, dim):
    if m.shape != tuple(shape[dim:dim + m.ndim]):
        for j in range(m.ndim):
            if m.shape[j] != shape[dim + j]:
                raise IndexError(f"The shape of the mask {_fmt(m.shape)} at index {j} does not match the shape of the "
                                 f"indexed tensor {_fmt(shape)} at index {dim + j}")


def parse_key(key, shape):
    """(basic, adv, node name of the basic part) for a key on a tensor of `shape` (see NOTE [ Indexing keys ])."""
    if key.__class__ is not tuple:
        key = tuple(key) if _seq_as_tuple(key) else (key,)
    items, used = _classify(key)
    ndim = len(shape)
    if used > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    basic, adv = [], []
    name, dim, trivial, has_adv = "AliasBackward0", 0, True, False
    for kind, v in items:
        if kind is _INT:
            n = shape[dim]
            if not -n <= v < n:
                raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {n}")
            basic.append(v)
            dim += 1
            name, trivial = "SelectBackward0", False
        elif kind is _SLICE:
            _check_step(v)
            basic.append(v)
            adv.append(_ALL)
            if v.indices(shape[dim]) != (0, shape[dim], 1):
                name, trivial = "SliceBackward0", False
            dim += 1
        elif kind is _NONE:
            basic.append(None)
            adv.append(_ALL)
            name, trivial = "UnsqueezeBackward0", False
        elif kind is _ELLIPSIS:
            n = ndim - used
            used = ndim  # a second Ellipsis stands for no dims, as in torch
            basic.extend([_ALL] * n)
            adv.extend([_ALL] * n)
            dim += n
        elif kind is _BOOL:  # a new dim of size 1, indexed by [0] (True) or [] (False)
            basic.append(None)
            adv.append(np.zeros(1 if v else 0, dtype=np.int64))
            trivial, has_adv = False, True
        elif kind is _MASK:
            k = v.ndim
            _check_mask(v, shape, dim)
            basic.extend([_ALL] * k)
            adv.extend(v.nonzero())
            dim += k
            has_adv = True
        else:
            basic.append(_ALL)
            adv.append(v)
            dim += 1
            has_adv = True
    if has_adv:
        while adv[-1].__class__ is slice:
            adv.pop()
        adv = tuple(adv)
    else:
        adv = None
    if trivial and has_adv:
        return None, adv, name
    basic.append(Ellipsis)
    return tuple(basic), adv, name


def _adv_error(shape, adv, exc):
    """torch's error for an advanced index NumPy refused (shape: of the tensor the index applies to)."""
    ordinal = 0
    for p, a in enumerate(adv):
        if a.__class__ is slice:
            continue
        n = shape[p]
        bad = (a < -n) | (a >= n)
        if bad.any():
            return IndexError(f"index {int(a[bad].reshape(-1)[0])} is out of bounds for dimension {ordinal} with "
                              f"size {n}")
        ordinal += 1
    shapes = [a.shape for a in adv if a.__class__ is not slice]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                          + ", ".join(_fmt(s) for s in shapes))
    return exc


# ---------------------------------------------------------------- x[key]
def _view_fwd(x, key):
    return x[key]


def _view_bwd(ctx, g):
    return region_scatter(g, ctx.shapes[0], ctx.attrs[0], None)


_VIEW_OPS = {n: Op(n, _view_fwd, _view_bwd, SAVE_NONE, node_name=n)
             for n in ("SelectBackward0", "SliceBackward0", "UnsqueezeBackward0", "AliasBackward0")}
_SELECT = _VIEW_OPS["SelectBackward0"]
_SLICE = _VIEW_OPS["SliceBackward0"]
_UNSQUEEZE = _VIEW_OPS["UnsqueezeBackward0"]
_INDEX = Op("index", lambda x, adv: _kget(x, None, adv), lambda ctx, g: region_scatter(g, ctx.shapes[0], None,
                                                                                         ctx.attrs[0]))


def _index(x, adv):
    try:
        return dispatch1(_INDEX, x, adv)
    except IndexError as e:
        raise _adv_error(x._data.shape, adv, e) from None


def _getitem(self, key):
    """Same as `torch.Tensor.__getitem__`: basic indexing gives a view, advanced indexing a copy."""
    c = key.__class__
    if c is builtins.int:
        shape = self._data.shape
        if not shape:
            raise IndexError(_ZERO_DIM)
        if not -shape[0] <= key < shape[0]:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {shape[0]}")
        return view_op(_SELECT, self, (key, Ellipsis))
    if c is slice:
        if key.step is not None:
            _check_step(key)
        if not self._data.ndim:
            raise IndexError(_ZERO_DIM)
        return view_op(_SLICE, self, (key, Ellipsis))
    if key is None:
        return view_op(_UNSQUEEZE, self, (None, Ellipsis))
    if c is Tensor:
        a = key._data
        if a.dtype.kind == "i" and a.dtype.itemsize >= 4 and a.ndim and self._data.ndim:
            return _index(self, (a,))
    elif c is tuple:
        fast = _basic_fast(self, key)
        if fast is not None:
            return fast
    basic, adv, name = parse_key(key, self._data.shape)
    y = self if basic is None else view_op(_VIEW_OPS[name], self, basic)
    return y if adv is None else _index(y, adv)


def _basic_fast(self, key):
    """The view for a key of ints, step-less slices, None and one Ellipsis, or None for any other key."""
    shape = self._data.shape
    ndim = len(shape)
    name = None
    d = 0
    ellipsis = False
    for p, k in enumerate(key):
        c = k.__class__
        if c is builtins.int:
            if d >= ndim:
                return None
            if not -shape[d] <= k < shape[d]:
                raise IndexError(f"index {k} is out of bounds for dimension {d} with size {shape[d]}")
            name = _SELECT
            d += 1
        elif c is slice:
            if k.step is not None or d >= ndim:
                return None
            if (k.start is not None or k.stop is not None) and k.indices(shape[d]) != (0, shape[d], 1):
                name = _SLICE
            d += 1
        elif k is None:
            name = _UNSQUEEZE
        elif k is Ellipsis and not ellipsis:
            ellipsis = True
            d = ndim - sum(1 for q in key[p + 1:] if q is not None)
            if d < p - key[:p].count(None):
                return None
        else:
            return None
    return view_op(name or _VIEW_OPS["AliasBackward0"], self, key if ellipsis else key + (Ellipsis,))


# ---------------------------------------------------------------- x[key] = value
def _put_fwd(x, v, basic, adv, accumulate):
    y = x.copy()
    if accumulate:
        _kadd(y, basic, adv, v)
    else:
        _kset(y, basic, adv, v)
    return y


def _put_bwd(ctx, g):
    basic, adv, accumulate = ctx.attrs
    need = ctx.needs_input_grad
    gx = (g if accumulate else region_fill(g, basic, adv, 0)) if need[0] else None
    gv = region_get(g, basic, adv) if need[1] else None
    return gx, gv


_COPY_SLICES = Op("copy_slices", _put_fwd, _put_bwd, SAVE_NONE, node_name="torch::autograd::CopySlices")
_INDEX_PUT = Op("index_put", _put_fwd, _put_bwd, SAVE_NONE)


def _scalar_for(value, arr, half_to_inf=False):
    """A Python number as a value written into arr, with torch's overflow errors (x[k] = v lets float16 and
    bfloat16 overflow to inf, as torch does)."""
    dt = arr.dtype
    kind = dt.kind
    c = value.__class__
    if (c is builtins.float or c is builtins.int) and -65504.0 <= value <= 65504.0 and (kind == "f" or kind == "c"):
        return value  # the common case: fits every floating dtype

    if isinstance(value, (builtins.complex, np.complexfloating)) and kind != "c":
        if value.imag != 0 or kind not in "fV":
            raise RuntimeError(f"value cannot be converted to type {_CTYPE[FROM_NP[dt].name]} without overflow")
        value = value.real
    if kind in "iu" and isinstance(value, (builtins.int, np.integer)) and not isinstance(value, builtins.bool):
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:
            if kind == "u" and -(1 << (8 * dt.itemsize - 1)) <= value < 0:
                return value % (1 << 8 * dt.itemsize)  # torch wraps small negatives into unsigned types
            raise RuntimeError(f"value cannot be converted to type {_CTYPE[FROM_NP[dt].name]} without overflow")
    elif kind in "fV" and isinstance(value, (builtins.float, builtins.int, np.number)):
        fv = builtins.float(value)
        if _fmax(dt) < abs(fv) < builtins.float("inf"):  # NaN and inf convert
            if half_to_inf and dt.itemsize == 2:
                return builtins.float("inf") if fv > 0 else -builtins.float("inf")
            raise RuntimeError(f"value cannot be converted to type {_CTYPE[FROM_NP[dt].name]} without overflow")
    return value


def _assign_value(self, value, basic, adv, mask_key):
    """The array (or number) that `value` writes into self[key]."""
    d = self._data
    if isinstance(value, Tensor):
        v = value._data
        if v.dtype != d.dtype:
            if adv is not None and not (mask_key and v.ndim == 0):
                _fit_value(self, basic, adv, value)  # torch reports a bad shape before a bad dtype
                raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                                   f"{_scalar_name(d)} for the destination and {_scalar_name(v)} for the source.")
            v = _cast(v, d.dtype)
        return v
    if isinstance(value, (builtins.int, builtins.float, builtins.complex)):  # numpy scalars other than
        return _scalar_for(value, d, True)                                   # float64 are refused, as in torch
    cls = type(value)
    name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    from .._tensor_str import legacy_type_name
    raise TypeError(f"can't assign a {name} to a {legacy_type_name(self)}")


def _cast(v, dtype):
    if v.dtype.kind == "c" and dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)
        v = v.real
    return v.astype(dtype)


def _write_error(self, basic, adv, v, exc):
    """torch's words for a value that does not fit the indexed region."""
    if not self._data.flags.writeable:
        return RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                            "single memory location. Please clone() the tensor before performing the operation.")
    if isinstance(exc, IndexError):
        if adv is None:
            return exc
        view = self._data if basic is None else self._data[basic]
        return _adv_error(view.shape, adv, exc)
    region = _kget(self._data, basic, adv).shape
    vs = np.shape(v)
    if adv is not None:
        return RuntimeError(f"shape mismatch: value tensor of shape {_fmt(vs)} cannot be broadcast to indexing "
                            f"result of shape {_fmt(region)}")
    while len(vs) > len(region) and vs[0] == 1:
        vs = vs[1:]
    if len(vs) > len(region):
        return RuntimeError(f"expand(ember.{_scalar_name(v)}Tensor{{{_fmt(np.shape(v))}}}, size={_fmt(region)}): "
                            f"the number of sizes provided ({len(region)}) must be greater or equal to the number "
                            f"of dimensions in the tensor ({len(np.shape(v))})")
    lead = len(region) - len(vs)
    for i in range(len(vs) - 1, -1, -1):
        if vs[i] != 1 and vs[i] != region[lead + i]:
            return RuntimeError(f"The expanded size of the tensor ({region[lead + i]}) must match the existing size "
                                f"({vs[i]}) at non-singleton dimension {lead + i}.  Target sizes: {_fmt(region)}.  "
                                f"Tensor sizes: {_fmt(vs)}")
    return exc


def _setitem(self, key, value):
    """Same as `torch.Tensor.__setitem__` (an in-place write: copy_ for basic keys, index_put_ otherwise)."""
    c = key.__class__
    if c is builtins.int or c is slice:
        shape = self._data.shape
        if not shape:
            raise IndexError(_ZERO_DIM)
        if c is slice:
            _check_step(key)
        elif not -shape[0] <= key < shape[0]:
            raise IndexError(f"index {key} is out of bounds for dimension 0 with size {shape[0]}")
        basic, adv = (key, Ellipsis), None
    else:
        basic, adv, _ = parse_key(key, self._data.shape)
    if GRAD[0] and (self._requires_grad or (isinstance(value, Tensor) and value._requires_grad)):
        return _setitem_grad(self, basic, adv, value, _is_mask_key(key))
    v = _assign_value(self, value, basic, adv, _is_mask_key(key))
    try:
        _kset(self._data, basic, adv, v)
    except (ValueError, IndexError) as e:
        raise _write_error(self, basic, adv, value._data if isinstance(value, Tensor) else v, e) from None
    bump_version(self, "copy_" if adv is None else "index_put_")


def _is_mask_key(key):
    # x[mask] = 0-dim tensor is masked_fill_ in torch, which casts the value
    return isinstance(key, Tensor) and key._data.dtype.kind == "b"


def _setitem_grad(self, basic, adv, value, mask_key):
    if adv is None and self._grad_fn is None and self._requires_grad:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if not isinstance(value, Tensor):
        value = Tensor._make(np.asarray(_assign_value(self, value, basic, None, True), dtype=self._data.dtype))
    elif value._data.dtype != self._data.dtype:
        _assign_value(self, value, basic, adv, mask_key)  # raises torch's errors for a bad value
        value = value.to(FROM_NP[self._data.dtype])
    value = _fit_value(self, basic, adv, value)
    op = _COPY_SLICES if adv is None else _INDEX_PUT
    inplace(self, lambda x, v: dispatch2(op, x, v, basic, adv, False), (value,), {},
            "copy_" if adv is None else "index_put_")


def _fit_value(self, basic, adv, value):
    """value with leading size-1 dims beyond the region's rank dropped (torch allows them), broadcast-checked."""
    region = _kget(self._data, basic, adv).shape
    vs = value._data.shape
    trimmed = vs
    while len(trimmed) > len(region) and trimmed[0] == 1:
        trimmed = trimmed[1:]
    try:
        ok = len(trimmed) <= len(region) and _bshape(trimmed, region) == region
    except ValueError:
        ok = False
    if not ok:
        raise _write_error(self, basic, adv, value._data, ValueError())
    return value.reshape(trimmed) if trimmed != vs else value


Tensor.__getitem__ = _getitem
Tensor.__setitem__ = _setitem


# ---------------------------------------------------------------- index_put
def _index_tuple(self, indices):
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    basic, adv, _ = parse_key(tuple(indices), self._data.shape)
    return basic, adv


def _index_put_args(self, indices, values):
    basic, adv = _index_tuple(self, indices)
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' must be Tensor, not {type(values).__name__}")
    if values._data.dtype != self._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_scalar_name(self._data)} for the destination and {_scalar_name(values._data)} for "
                           f"the source.")
    return basic, adv, _fit_value(self, basic, adv, values)


def index_put(input, indices, values, accumulate=False):
    """Same as `torch.index_put`."""
    basic, adv, values = _index_put_args(input, indices, values)
    return dispatch2(_INDEX_PUT, input, values, basic, adv, bool(accumulate))


def index_put_(self, indices, values, accumulate=False):
    """Same as `torch.Tensor.index_put_`."""
    if GRAD[0] and (self._requires_grad or values._requires_grad):
        return inplace(self, index_put, (indices, values, accumulate), {}, "index_put_")
    basic, adv, values = _index_put_args(self, indices, values)
    d = self._data
    if accumulate:
        _kadd(d, basic, adv, values._data)
    else:
        _kset(d, basic, adv, values._data)
    bump_version(self, "index_put_")
    return self


# ---------------------------------------------------------------- shared checks for dim-wise ops
def _dim_index(index, name, message, allow32=True):
    """index's array, checked to hold int64 (or int32) values."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64 and not (allow32 and a.dtype == np.int32):
        raise RuntimeError(message.format(_scalar_name(a)))
    return a


def _check_bounds(idx, n, dim, exc=RuntimeError, fmt="index {v} is out of bounds for dimension {dim} with size {n}"):
    # one pass: seen as unsigned, negative indices are huge
    if idx.size and idx.view(np.uint64 if idx.dtype.itemsize == 8 else np.uint32).max() >= n:
        v = int(idx[(idx < 0) | (idx >= n)].reshape(-1)[0])
        raise exc(fmt.format(v=v, dim=dim, n=n))


def _same_dtype(a, b, message):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(message.format(_scalar_name(a._data), _scalar_name(b._data)))


def _fill_value(value, arr, name):
    """A Python number or 0-dim tensor used as a fill value: (number or None, tensor or None)."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value._data.ndim} dimension(s).")
        return None, value
    if not isinstance(value, _NUMBER):
        raise TypeError(f"{name}(): argument 'value' must be Number, not {type(value).__name__}")
    return _scalar_for(value, arr), None


def _lin(shape, dim, idx):
    """Flat positions, in a C-contiguous array of `shape`, that scatter along dim writes for index idx."""
    nd = len(shape)
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    lin = idx.astype(np.int64)  # a new array: updated in place below
    if strides[dim] != 1:
        lin *= strides[dim]
    for d in range(nd):
        n = idx.shape[d]
        if d != dim and n > 1:
            lin += np.arange(0, n * strides[d], strides[d], dtype=np.int64).reshape((n,) + (1,) * (nd - d - 1))
    return lin.reshape(-1)


def _part(src, idx):
    """The leading block of src that an index of idx's shape uses."""
    shape = idx.shape
    if src.shape == shape:
        return src
    return src[tuple(slice(0, s) for s in shape)]


def _contig(fn, y, *args):
    """Run an in-place kernel that needs a C-contiguous array on y (any layout)."""
    if y.flags.c_contiguous:
        fn(y, *args)
        return
    tmp = np.ascontiguousarray(y)
    fn(tmp, *args)
    y[...] = tmp


def _pad_to(g, shape):
    """g placed at the start of zeros(shape) (differentiable): a gradient for the used block of a larger input."""
    if g._data.shape == tuple(shape):
        return g
    return region_scatter(g, shape, tuple(slice(0, s) for s in g._data.shape) + (Ellipsis,), None)


# ---------------------------------------------------------------- gather / scatter
def _gather_fwd(x, idx, dim):
    if x.ndim == 0:
        return x.reshape(1)[idx.reshape(-1)].reshape(idx.shape)
    if x.flags.c_contiguous and x.__class__ is np.ndarray:  # flat positions: cheaper than take_along_axis
        return x.reshape(-1).take(_lin(x.shape, dim, idx)).reshape(idx.shape)
    if any(s < x.shape[d] for d, s in enumerate(idx.shape) if d != dim):
        x = x[tuple(_ALL if d == dim else slice(0, s) for d, s in enumerate(idx.shape))]
    return np.take_along_axis(x, idx, axis=dim)


def _gather_bwd(ctx, g):
    dim, idx = ctx.attrs
    z = _t(_zeros(ctx.shapes[0], g._data))
    return _scatter_add_t(z, g, dim, idx)


_GATHER = Op("gather", lambda x, dim, idx: _gather_fwd(x, idx, dim), _gather_bwd, SAVE_NONE)


def _gather_args(input, dim, index, name="gather"):
    idx = _dim_index(index, name, name + "(): Expected dtype int32/int64 for index")
    x = input._data
    dim = _wrap_dim(dim, x.ndim)
    if max(idx.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if x.ndim and idx.ndim:
        for d in range(x.ndim):
            if d != dim and idx.shape[d] > x.shape[d]:
                raise RuntimeError(f"Size does not match at dimension {d} expected index {_fmt(idx.shape)} to be no "
                                   f"larger than self {_fmt(x.shape)} apart from dimension {dim}")
    _check_bounds(idx, x.shape[dim] if x.ndim else 1, dim)
    return dim, idx


def gather(input, dim, index, *, sparse_grad=False, out=None):
    """Same as `torch.gather`."""
    dim, idx = _gather_args(input, dim, index)
    r = dispatch1(_GATHER, input, dim, idx)
    return r if out is None else write_out(r, out, "gather")


def _gather_t(x, dim, idx):
    return dispatch1(_GATHER, x, dim, idx)


def _k_scatter(y, dim, idx, src):
    y.reshape(-1)[_lin(y.shape, dim, idx)] = src if not hasattr(src, "shape") or not src.shape else \
        _part(src, idx).reshape(-1)


def _k_scatter_add(y, dim, idx, src):
    _add_at(y.reshape(-1), _lin(y.shape, dim, idx), _part(src, idx).reshape(-1))


def _as_nd(a):
    return a.reshape(1) if a.ndim == 0 else a


def _scatter_fwd(kernel, x, src, dim, idx):
    y = _as_nd(x).copy()
    kernel(y, dim, _as_nd(idx), src if np.ndim(src) == 0 else _as_nd(src))
    return y.reshape(x.shape)


def _src_grad(ctx, g, dim, idx):
    return _pad_to(_gather_t(g, dim, idx), ctx.shapes[1])


def _scatter_bwd(ctx, g):
    dim, idx = ctx.attrs
    need = ctx.needs_input_grad
    gx = _scatter_value_t(g, dim, idx, 0) if need[0] else None
    return gx, (_src_grad(ctx, g, dim, idx) if need[1] else None)


def _scatter_add_bwd(ctx, g):
    dim, idx = ctx.attrs
    return g, (_src_grad(ctx, g, dim, idx) if ctx.needs_input_grad[1] else None)


def _no_reduce_grad(ctx, g):
    raise RuntimeError("the derivative for 'scatter' with a `reduce` argument is not implemented")


_SCATTER = Op("scatter", lambda x, s, dim, idx: _scatter_fwd(_k_scatter, x, s, dim, idx), _scatter_bwd, SAVE_NONE)
_SCATTER_VALUE = Op("scatter", lambda x, dim, idx, v: _scatter_fwd(_k_scatter, x, v, dim, idx),
                    lambda ctx, g: _scatter_value_t(g, ctx.attrs[0], ctx.attrs[1], 0), SAVE_NONE,
                    node_name="ScatterBackward1")
_SCATTER_ADD = Op("scatter_add", lambda x, s, dim, idx: _scatter_fwd(_k_scatter_add, x, s, dim, idx),
                  _scatter_add_bwd, SAVE_NONE)


def _k_scatter_multiply(y, dim, idx, src):
    lin = _lin(y.shape, dim, idx)
    v = src if np.ndim(src) == 0 else _part(src, idx).reshape(-1)
    np.multiply.at(y.reshape(-1), lin, np.broadcast_to(v, lin.shape))


def _k_scatter_add_value(y, dim, idx, src):
    lin = _lin(y.shape, dim, idx)
    v = src if np.ndim(src) == 0 else _part(src, idx).reshape(-1)
    _add_at(y.reshape(-1), lin, np.broadcast_to(np.asarray(v, dtype=y.dtype), lin.shape))


_SCATTER_REDUCE_KERNELS = {"add": _k_scatter_add_value, "multiply": _k_scatter_multiply}
_SCATTER_REDUCE_OLD = Op("scatter", lambda x, s, dim, idx, k: _scatter_fwd(k, x, s, dim, idx), _no_reduce_grad,
                         SAVE_NONE, node_name="torch::autograd::NotImplemented")
_SCATTER_REDUCE_OLD_VALUE = Op("scatter", lambda x, dim, idx, v, k: _scatter_fwd(k, x, v, dim, idx), _no_reduce_grad,
                               SAVE_NONE, node_name="torch::autograd::NotImplemented")


def _scatter_add_t(x, src, dim, idx):
    return dispatch2(_SCATTER_ADD, x, src, dim, idx)


def _scatter_value_t(x, dim, idx, value):
    return dispatch1(_SCATTER_VALUE, x, dim, idx, value)


def _scatter_args(input, dim, index, src, name="scatter"):
    idx = _dim_index(index, name, "scatter(): Expected dtype int32/int64 for index")
    x = input._data
    dim = _wrap_dim(dim, x.ndim)
    if max(idx.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    s = src._data if isinstance(src, Tensor) else None
    if s is not None and max(s.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if x.ndim and idx.ndim:
        for d in range(x.ndim):
            if (d != dim and idx.shape[d] > x.shape[d]) or (s is not None and idx.shape[d] > s.shape[d]):
                raise RuntimeError(f"Expected index {_fmt(idx.shape)} to be no larger than self {_fmt(x.shape)} "
                                   f"apart from dimension {dim}" + (f" and to be no larger size than src "
                                                                    f"{_fmt(s.shape)}" if s is not None else ""))
    if s is not None and s.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_bounds(idx, x.shape[dim] if x.ndim else 1, dim)
    return dim, idx


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    """Same as `torch.scatter` (src a tensor, or a number given as src or value)."""
    if src is None:
        src = value
    if src is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    dim, idx = _scatter_args(input, dim, index, src)
    if reduce is not None:
        r = _scatter_reduce_old(input, dim, idx, src, reduce)
    elif isinstance(src, Tensor):
        r = dispatch2(_SCATTER, input, src, dim, idx)
    else:
        v, vt = _fill_value(src, input._data, "scatter")
        r = dispatch1(_SCATTER_VALUE, input, dim, idx, v) if vt is None else dispatch2(
            _SCATTER, input, vt.expand(idx.shape).to(input.dtype), dim, idx)
    return r if out is None else write_out(r, out, "scatter")


def _scatter_reduce_old(input, dim, idx, src, reduce):
    kernel = _SCATTER_REDUCE_KERNELS.get(reduce)
    if kernel is None:
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                      "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                      UserWarning, stacklevel=3)
        return dispatch2(_SCATTER_REDUCE_OLD, input, src, dim, idx, kernel)
    return dispatch1(_SCATTER_REDUCE_OLD_VALUE, input, dim, idx, _scalar_for(src, input._data), kernel)


def scatter_add(input, dim, index, src):
    """Same as `torch.scatter_add`."""
    dim, idx = _scatter_args(input, dim, index, src, "scatter_add")
    return dispatch2(_SCATTER_ADD, input, src, dim, idx)


def _inplace_fast(self, name, kernel, *kargs):
    """An in-place op with nothing requiring grad: run `kernel(self_array, *kargs)` directly."""
    _contig(kernel, self._data if self._data.ndim else self._data.reshape(1), *kargs)
    bump_version(self, name)
    return self


def _needs_grad(self, *others):
    if not GRAD[0]:
        return False
    if self._requires_grad:
        return True
    for o in others:
        if isinstance(o, Tensor) and o._requires_grad:
            return True
    return False


def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    """Same as `torch.Tensor.scatter_`."""
    if src is None:
        src = value
    if reduce is not None or _needs_grad(self, src) or isinstance(src, Tensor) and src._data.ndim == 0:
        return inplace(self, scatter, (dim, index, src), {"reduce": reduce}, "scatter_")
    dim, idx = _scatter_args(self, dim, index, src)
    s = src._data if isinstance(src, Tensor) else _fill_value(src, self._data, "scatter")[0]
    return _inplace_fast(self, "scatter_", _k_scatter, dim, _as_nd(idx), s if np.ndim(s) == 0 else _as_nd(s))


def scatter_add_(self, dim, index, src):
    """Same as `torch.Tensor.scatter_add_`."""
    if _needs_grad(self, src):
        return inplace(self, scatter_add, (dim, index, src), {}, "scatter_add_")
    dim, idx = _scatter_args(self, dim, index, src, "scatter_add")
    return _inplace_fast(self, "scatter_add_", _k_scatter_add, dim, _as_nd(idx), _as_nd(src._data))


# ---------------------------------------------------------------- scatter_reduce / index_reduce
def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    if dtype.kind == "b":
        return reduce == "amin"
    return -np.inf if reduce == "amax" else np.inf


_UFUNC_AT = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _counts(shape, lin, include_self):
    n = 1
    for s in shape:
        n *= s
    return np.bincount(lin, minlength=n).reshape(shape) + (1 if include_self else 0)


def _k_scatter_reduce(y, dim, idx, src, reduce, include_self):
    lin = _lin(y.shape, dim, idx)
    v = _part(src, idx).reshape(-1)
    flat = y.reshape(-1)
    if not include_self:
        flat[lin] = _identity(reduce, y.dtype)
    if reduce in ("sum", "mean"):
        _add_at(flat, lin, v)
    else:
        _UFUNC_AT[reduce].at(flat, lin, v)
    if reduce == "mean":
        cnt = np.maximum(_counts(y.shape, lin, include_self), 1)
        if y.dtype.kind in "iu":
            np.floor_divide(y, cnt.astype(y.dtype), out=y)
        else:
            np.true_divide(y, cnt, out=y, casting="unsafe")


def _scatter_reduce_fwd(x, src, dim, idx, reduce, include_self):
    y = x.copy()
    _k_scatter_reduce(y, dim, idx, src, reduce, include_self)
    return y


def _scattered(shape, lin):
    m = np.zeros(shape, dtype=bool)
    m.reshape(-1)[lin] = True
    return m


def _scatter_reduce_bwd(ctx, g):
    dim, idx, reduce, include_self = ctx.attrs
    shape = ctx.shapes[0]
    lin = _lin(shape, dim, idx)
    if reduce in ("sum", "mean"):
        if reduce == "mean":
            g = g / _t(np.maximum(_counts(shape, lin, include_self), 1).astype(g._data.dtype))
        gx = g if include_self else g.masked_fill(_t(_scattered(shape, lin)), 0)
        return gx, _src_grad(ctx, g, dim, idx)
    x, src = (t._data for t in ctx.inputs)
    y = ctx.outputs[0]._data
    if reduce == "prod":
        cx, cs = _prod_others(x, _part(src, idx), y, lin, include_self)
        return g * _t(cx), _pad_to(_gather_t(g, dim, idx) * _t(cs), ctx.shapes[1])
    # ties share the gradient; like torch, self counts as a tie even when include_self=False
    hit_x = x == y
    hit_s = _part(src, idx) == _gather_fwd(y, idx, dim)
    cnt = hit_x.astype(np.float64)
    np.add.at(cnt.reshape(-1), lin, hit_s.reshape(-1))
    share = hit_x / cnt
    if not include_self:
        share[_scattered(shape, lin)] = 0
    gx = g * _t(share.astype(g._data.dtype))
    gs = _gather_t(g / _t(cnt.astype(g._data.dtype)), dim, idx) * _t(hit_s.astype(g._data.dtype))
    return gx, _pad_to(gs, ctx.shapes[1])


def _prod_others(x, s, y, lin, include_self):
    """For every contributor of a product, the product of the other contributors (exact with zeros)."""
    flat_s = s.reshape(-1)
    zeros = np.zeros(x.size, dtype=np.int64)
    nz = np.ones(x.size, dtype=x.dtype)
    if include_self:
        zeros += (x.reshape(-1) == 0)
        nz = np.where(x.reshape(-1) == 0, 1, x.reshape(-1)).astype(x.dtype)
    np.add.at(zeros, lin, (flat_s == 0).astype(np.int64))
    np.multiply.at(nz, lin, np.where(flat_s == 0, 1, flat_s).astype(x.dtype))

    def others(v, z, p):
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(v != 0, np.where(z == 0, p / np.where(v == 0, 1, v), 0), np.where(z == 1, p, 0))
        return r.astype(x.dtype)
    cx = others(x.reshape(-1), zeros, nz).reshape(x.shape)
    if not include_self:
        cx = np.where(_scattered(x.shape, lin), 0, 1).astype(x.dtype)
    cs = others(flat_s, zeros[lin], nz[lin]).reshape(s.shape)
    return cx, cs


_SCATTER_REDUCE = Op("scatter_reduce", _scatter_reduce_fwd, _scatter_reduce_bwd, 3)
_INDEX_REDUCE = Op("index_reduce", _scatter_reduce_fwd, _scatter_reduce_bwd, 3)
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """Same as `torch.scatter_reduce`."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    dim, idx = _scatter_args(input, dim, index, src, "scatter_reduce")
    if input._data.ndim == 0:
        return scatter_reduce(input.reshape(1), 0, index.reshape(1), src.reshape(1), reduce,
                              include_self=include_self, out=out).reshape(())
    r = dispatch2(_SCATTER_REDUCE, input, src, dim, idx, reduce, bool(include_self))
    return r if out is None else write_out(r, out, "scatter_reduce")


def _expand_index(idx, dim, shape):
    """A 1-D index along dim, repeated over the other dims of shape (index_* ops as scatter ops)."""
    view = [1] * len(shape)
    view[dim] = -1
    return np.broadcast_to(idx.reshape(view), shape)


def index_reduce(input, dim, index, source, reduce, *, include_self=True, out=None):
    """Same as `torch.index_reduce`."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    x = input if input._data.ndim else input.reshape(1)
    s = source if source._data.ndim else source.reshape(1)
    dim, idx = _index_args(x, dim, index, s, "index_reduce_",
                           "index_reduce_(): Expected dtype int32/int64 for index but got: {}")
    _same_dtype(x, s, "index_reduce_(): self ({}) and source ({}) must have the same scalar type")
    r = dispatch2(_INDEX_REDUCE, x, s, dim, _expand_index(idx, dim, s._data.shape), reduce, bool(include_self))
    r = r if input._data.ndim else r.reshape(())
    return r if out is None else write_out(r, out, "index_reduce")


# ---------------------------------------------------------------- index_select / index_add / index_copy / index_fill
def _index_args(x, dim, index, source, name, message):
    """dim and a checked 1-D index array for the index_* ops (source: a tensor of matching shape, or None)."""
    idx = _dim_index(index, name, message)
    a = x._data
    dim = _wrap_dim(dim, a.ndim)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{_scalar_name(idx)} and size: {_fmt(idx.shape)}")
    idx = idx.reshape(-1)
    n = a.shape[dim] if a.ndim else 1
    if source is not None:
        s = source._data
        ns = s.shape[dim] if s.ndim else 1
        if idx.size != ns:
            raise RuntimeError(f"{name}(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                               f"({ns}), for dim: {dim}")
        if max(s.ndim, 1) != max(a.ndim, 1) or any(s.shape[d] != a.shape[d] for d in range(a.ndim) if d != dim):
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified "
                               f"dimension. Got self.shape = {_fmt(a.shape)} source.shape = {_fmt(s.shape)}")
    _check_bounds(idx, n, dim)
    return dim, idx


def _dim_front(a, dim):
    """a viewed with dim first (0-dim arrays as 1-element vectors)."""
    if a.ndim == 0:
        return a.reshape(1)
    return a if dim == 0 else np.moveaxis(a, dim, 0)


def _k_index_add(y, dim, idx, src, alpha):
    s = _dim_front(src, dim)
    _add_rows(_dim_front(y, dim), idx, s if alpha == 1 else s * np.asarray(alpha).astype(y.dtype))


def _k_index_copy(y, dim, idx, src):
    _dim_front(y, dim)[idx] = _dim_front(src, dim)


def _k_index_fill(y, dim, idx, value):
    _dim_front(y, dim)[idx] = value


def _copy_then(kernel):
    def fwd(x, *args):
        y = x.copy()
        kernel(y, *args)
        return y
    return fwd


def _index_select_fwd(x, dim, idx):
    return x.take(idx, axis=dim) if x.ndim else x.reshape(1).take(idx).reshape(idx.shape[:0] + x.shape)


def _index_select_bwd(ctx, g):
    dim, idx = ctx.attrs
    return _index_add_t(_t(_zeros(ctx.shapes[0], g._data)), g, dim, idx, 1)


def _index_add_bwd(ctx, g):
    dim, idx, alpha = ctx.attrs
    gs = _index_select_t(g, dim, idx) if ctx.needs_input_grad[1] else None
    return g, (gs if gs is None or alpha == 1 else gs * alpha)


def _index_copy_bwd(ctx, g):
    dim, idx = ctx.attrs
    need = ctx.needs_input_grad
    return (_index_fill_t(g, dim, idx, 0) if need[0] else None,
            _index_select_t(g, dim, idx) if need[1] else None)


def _index_fill_tensor_bwd(ctx, g):
    dim, idx = ctx.attrs
    need = ctx.needs_input_grad
    return (_index_fill_t(g, dim, idx, 0) if need[0] else None,
            _index_select_t(g, dim, idx).sum() if need[1] else None)


_INDEX_SELECT = Op("index_select", _index_select_fwd, _index_select_bwd, SAVE_NONE)
_INDEX_ADD = Op("index_add", _copy_then(lambda y, s, dim, idx, alpha: _k_index_add(y, dim, idx, s, alpha)),
                _index_add_bwd, SAVE_NONE)
_INDEX_COPY = Op("index_copy", _copy_then(lambda y, s, dim, idx: _k_index_copy(y, dim, idx, s)), _index_copy_bwd,
                 SAVE_NONE)
_INDEX_FILL = Op("index_fill", _copy_then(_k_index_fill),
                 lambda ctx, g: _index_fill_t(g, ctx.attrs[0], ctx.attrs[1], 0), SAVE_NONE)
_INDEX_FILL_T = Op("index_fill", _copy_then(lambda y, v, dim, idx: _k_index_fill(y, dim, idx, v)),
                   _index_fill_tensor_bwd, SAVE_NONE, node_name="IndexFillBackward1")


def _index_select_t(x, dim, idx):
    return dispatch1(_INDEX_SELECT, x, dim, idx)


def _index_add_t(x, src, dim, idx, alpha):
    return dispatch2(_INDEX_ADD, x, src, dim, idx, alpha)


def _index_fill_t(x, dim, idx, value):
    return dispatch1(_INDEX_FILL, x, dim, idx, value)


def index_select(input, dim, index, *, out=None):
    """Same as `torch.index_select`."""
    idx = _dim_index(index, "index_select", "index_select(): Expected dtype int32 or int64 for index")
    dim = _wrap_dim(dim, input._data.ndim)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    x = input._data
    _check_bounds(idx, x.shape[dim] if x.ndim else 1, dim,
                  fmt="INDICES element is out of DATA bounds, id={v} axis_dim={n}")
    r = dispatch1(_INDEX_SELECT, input, dim, idx.reshape(-1) if x.ndim else idx)
    return r if out is None else write_out(r, out, "index_select")


_INDEX_ADD_MSG = "index_add_(): Expected dtype int32/int64 for index but got: {}"


def index_add(input, dim, index, source, *, alpha=1, out=None):
    """Same as `torch.index_add`."""
    dim, idx = _index_args(input, dim, index, source, "index_add_", _INDEX_ADD_MSG)
    _same_dtype(input, source, "index_add_(): self ({}) and source ({}) must have the same scalar type")
    r = dispatch2(_INDEX_ADD, input, source, dim, idx, alpha)
    return r if out is None else write_out(r, out, "index_add")


def index_add_(self, dim, index, source, *, alpha=1):
    """Same as `torch.Tensor.index_add_`."""
    if _needs_grad(self, source):
        return inplace(self, index_add, (dim, index, source), {"alpha": alpha}, "index_add_")
    dim, idx = _index_args(self, dim, index, source, "index_add_", _INDEX_ADD_MSG)
    _same_dtype(self, source, "index_add_(): self ({}) and source ({}) must have the same scalar type")
    _k_index_add(self._data, dim, idx, source._data, alpha)
    bump_version(self, "index_add_")
    return self


_INDEX_COPY_MSG = "index_copy_(): Expected a long tensor for index, but got {}"


def _index_copy_args(input, dim, index, source):
    if isinstance(index, Tensor) and index._data.dtype != np.int64:
        raise RuntimeError(_INDEX_COPY_MSG.format(_scalar_name(index._data)))
    sn, dn = source._data.ndim, input._data.ndim
    if sn and dn and sn != dn:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({sn}), destination dimensionality ({dn})")
    try:
        dim, idx = _index_args(input, dim, index, source, "index_copy_", _INDEX_COPY_MSG)
    except RuntimeError as e:
        msg = str(e)
        if "Number of indices" in msg:
            raise IndexError(msg.replace("source.size(dim): ", "source.size(dim) ").split(", for dim")[0]) from None
        if "out of bounds" in msg:
            raise IndexError("index_copy_(): " + msg) from None
        raise
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_scalar_name(input._data)} and (source) {_scalar_name(source._data)}")
    return dim, idx


def index_copy(input, dim, index, source, *, out=None):
    """Same as `torch.index_copy`."""
    dim, idx = _index_copy_args(input, dim, index, source)
    r = dispatch2(_INDEX_COPY, input, source, dim, idx)
    return r if out is None else write_out(r, out, "index_copy")


def index_copy_(self, dim, index, source):
    """Same as `torch.Tensor.index_copy_`."""
    if _needs_grad(self, source):
        return inplace(self, index_copy, (dim, index, source), {}, "index_copy_")
    dim, idx = _index_copy_args(self, dim, index, source)
    _k_index_copy(self._data, dim, idx, source._data)
    bump_version(self, "index_copy_")
    return self


def _index_fill_args(input, dim, index, value):
    if isinstance(index, Tensor) and index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(index, Tensor) and index._data.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    try:
        dim, idx = _index_args(input, dim, index, None, "index_fill_", "")
    except RuntimeError as e:
        if "out of bounds" in str(e):
            raise IndexError(str(e)) from None
        raise
    v, vt = _fill_value(value, input._data, "index_fill_")
    return dim, idx, v, vt


def index_fill(input, dim, index, value):
    """Same as `torch.index_fill`."""
    dim, idx, v, vt = _index_fill_args(input, dim, index, value)
    if vt is None:
        return dispatch1(_INDEX_FILL, input, dim, idx, v)
    return dispatch2(_INDEX_FILL_T, input, vt.to(input.dtype), dim, idx)


def index_fill_(self, dim, index, value):
    """Same as `torch.Tensor.index_fill_`."""
    if _needs_grad(self, value):
        return inplace(self, index_fill, (dim, index, value), {}, "index_fill_")
    dim, idx, v, vt = _index_fill_args(self, dim, index, value)
    _k_index_fill(self._data, dim, idx, v if vt is None else vt._data.astype(self._data.dtype))
    bump_version(self, "index_fill_")
    return self


# ---------------------------------------------------------------- masked ops
def _mask_of(mask, name):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    m = mask._data
    if m.dtype.kind != "b":
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_MASK_CTYPE[FROM_NP[m.dtype].name] if name == 'masked_fill_' else _scalar_name(m)}")
    return m


def _broadcast(a, b):
    """The broadcast shape of two tensors, with torch's error."""
    try:
        return _bshape(a._data.shape, b._data.shape)
    except ValueError:
        from .binary import _broadcast_error
        raise _broadcast_error(a, b) from None


def _masked_fill_fwd(x, m, value):
    shape = _bshape(x.shape, m.shape)
    y = x.copy() if shape == x.shape else np.broadcast_to(x, shape).copy()
    np.copyto(y, value, where=m, casting="unsafe")
    return y


def _masked_fill_t_fwd(x, v, m):
    return _masked_fill_fwd(x, m, v.astype(x.dtype))


def _masked_fill_bwd(ctx, g):
    return g.masked_fill(_t(ctx.attrs[0]), 0)


def _masked_fill_t_bwd(ctx, g):
    m = _t(ctx.attrs[0])
    need = ctx.needs_input_grad
    return (g.masked_fill(m, 0) if need[0] else None, masked_select(g, m).sum() if need[1] else None)


_MASKED_FILL = Op("masked_fill", _masked_fill_fwd, _masked_fill_bwd, SAVE_NONE)
_MASKED_FILL_T = Op("masked_fill", _masked_fill_t_fwd, _masked_fill_t_bwd, SAVE_NONE, node_name="MaskedFillBackward1")


def masked_fill(input, mask, value):
    """Same as `torch.masked_fill`."""
    m = _mask_of(mask, "masked_fill_")
    _broadcast(input, mask)
    v, vt = _fill_value(value, input._data, "masked_fill_")
    if vt is None:
        return dispatch1(_MASKED_FILL, input, m, v)
    return dispatch2(_MASKED_FILL_T, input, vt if vt._data.dtype == input._data.dtype else vt.to(input.dtype), m)


def masked_fill_(self, mask, value):
    """Same as `torch.Tensor.masked_fill_`."""
    if _needs_grad(self, value):
        return inplace(self, masked_fill, (mask, value), {}, "masked_fill_")
    m = _mask_of(mask, "masked_fill_")
    shape = _broadcast(self, mask)
    if shape != self._data.shape:
        raise RuntimeError(f"output with shape {_fmt(self._data.shape)} doesn't match the broadcast shape "
                           f"{_fmt(shape)}")
    v, vt = _fill_value(value, self._data, "masked_fill_")
    np.copyto(self._data, v if vt is None else vt._data, where=m, casting="unsafe")
    bump_version(self, "masked_fill_")
    return self


def _masked_select_fwd(x, m):
    shape = _bshape(x.shape, m.shape)
    if shape == x.shape and shape == m.shape:
        return x[m]
    return np.broadcast_to(x, shape)[np.broadcast_to(m, shape)]


def _masked_select_bwd(ctx, g):
    m = ctx.attrs[0]
    shape = _bshape(ctx.shapes[0], m.shape)
    return _masked_scatter_t(_t(_zeros(shape, g._data)), _t(m), g)


_MASKED_SELECT = Op("masked_select", _masked_select_fwd, _masked_select_bwd, SAVE_NONE)


def masked_select(input, mask, *, out=None):
    """Same as `torch.masked_select`."""
    if not isinstance(mask, Tensor) or mask._data.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    _broadcast(input, mask)
    r = dispatch1(_MASKED_SELECT, input, mask._data)
    return r if out is None else write_out(r, out, "masked_select")


def _masked_scatter_fwd(x, s, m):
    shape = _bshape(x.shape, m.shape)
    y = np.broadcast_to(x, shape).copy()
    mb = np.broadcast_to(m, shape)
    n = int(np.count_nonzero(mb))
    y[mb] = s.reshape(-1)[:n]
    return y


def _masked_scatter_bwd(ctx, g):
    m = _t(ctx.attrs[0])
    need = ctx.needs_input_grad
    gx = g.masked_fill(m, 0) if need[0] else None
    gs = None
    if need[1]:
        shape = ctx.shapes[1]
        numel = int(np.prod(shape))
        gs = _pad_to(masked_select(g, m), (numel,)).reshape(shape)
    return gx, gs


_MASKED_SCATTER = Op("masked_scatter", _masked_scatter_fwd, _masked_scatter_bwd, SAVE_NONE)


def _masked_scatter_t(x, mask, source):
    return dispatch2(_MASKED_SCATTER, x, source, mask._data)


def _masked_scatter_args(input, mask, source):
    m = _mask_of(mask, "masked_scatter_")
    if input._data.dtype != source._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_scalar_name(input._data)} and {_scalar_name(source._data)}")
    shape = _broadcast(input, mask)
    if np.count_nonzero(np.broadcast_to(m, shape)) > source._data.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return m


def masked_scatter(input, mask, source):
    """Same as `torch.masked_scatter`."""
    _masked_scatter_args(input, mask, source)
    return _masked_scatter_t(input, mask, source)


# ---------------------------------------------------------------- take / put / take_along_dim
def _long_index(index, name):
    if not isinstance(index, Tensor):
        raise TypeError(f"{name}(): argument 'index' must be Tensor, not {type(index).__name__}")
    a = index._data
    if a.dtype != np.int64:
        raise RuntimeError(f"{name}(): Expected a long tensor for index, but got {_scalar_name(a)}")
    return a


def _take_bwd(ctx, g):
    shape = ctx.shapes[0]
    n = int(np.prod(shape))
    return region_scatter(g, (n,), None, (ctx.attrs[0],)).reshape(shape)


_TAKE = Op("take", lambda x, idx: x.reshape(-1).take(idx), _take_bwd, SAVE_NONE)


def take(input, index):
    """Same as `torch.take`."""
    idx = _long_index(index, "take")
    n = input._data.size
    _check_take_bounds(idx, n)
    return dispatch1(_TAKE, input, np.where(idx < 0, idx + n, idx) if idx.size and idx.min() < 0 else idx)


def _check_take_bounds(idx, n):
    if idx.size and (idx.min() < -n or idx.max() >= n):
        v = int(idx[(idx < -n) | (idx >= n)].reshape(-1)[0])
        raise IndexError(f"out of range: tried to access index {v} on a tensor of {n} elements.")


def _k_put(y, idx, src, accumulate):
    flat = y.reshape(-1)
    if accumulate:
        _add_at(flat, idx.reshape(-1), src.reshape(-1))
    else:
        flat[idx.reshape(-1)] = src.reshape(-1)


def _put_flat_bwd(ctx, g):
    idx, accumulate = ctx.attrs
    need = ctx.needs_input_grad
    gx = None
    if need[0]:
        gx = g if accumulate else region_fill(g.reshape(-1), None, (idx.reshape(-1),), 0).reshape(ctx.shapes[0])
    gs = dispatch1(_TAKE, g, idx.reshape(-1)).reshape(ctx.shapes[1]) if need[1] else None
    return gx, gs


_PUT = Op("put", _copy_then(lambda y, s, idx, accumulate: _k_put(y, idx, s, accumulate)), _put_flat_bwd, SAVE_NONE)


def _put_args(input, index, source):
    idx = _long_index(index, "put_")
    if not isinstance(source, Tensor):
        raise TypeError(f"put(): argument 'source' must be Tensor, not {type(source).__name__}")
    if source._data.size != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source._data.size}, index.numel() = {idx.size}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"put_(): self ({_scalar_name(input._data)}) and source ({_scalar_name(source._data)}) "
                           f"must have the same scalar type")
    n = input._data.size
    _check_take_bounds(idx, n)
    return np.where(idx < 0, idx + n, idx) if idx.size and idx.min() < 0 else idx


def put(input, index, source, accumulate=False):
    """Same as `torch.put`."""
    idx = _put_args(input, index, source)
    return dispatch2(_PUT, input, source, idx, bool(accumulate))


def put_(self, index, source, accumulate=False):
    """Same as `torch.Tensor.put_`."""
    if _needs_grad(self, source):
        return inplace(self, put, (index, source, accumulate), {}, "put_")
    idx = _put_args(self, index, source)
    return _inplace_fast(self, "put_", _k_put, idx, source._data, bool(accumulate))


def take_along_dim(input, indices, dim=None, *, out=None):
    """Same as `torch.take_along_dim`."""
    if not isinstance(indices, Tensor) or indices._data.dtype != np.int64:
        got = _scalar_name(indices._data) if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"ember.take_along_dim(): dtype of indices should be Long but got {got}")
    if dim is None:
        r = gather(input.reshape(-1), 0, indices.reshape(-1))
    else:
        x, idx = input._data, indices._data
        dim = _wrap_dim(dim, x.ndim)
        if x.ndim != idx.ndim:
            raise RuntimeError(f"ember.take_along_dim(): input and indices should have the same number of "
                               f"dimensions, but got {x.ndim} dimensions for input, and {idx.ndim} dimensions for "
                               f"indices")
        xs, ids = list(x.shape), list(idx.shape)
        xs[dim] = ids[dim] = 1
        shape = _broadcast(_t(np.empty(xs, dtype=np.bool_)), _t(np.empty(ids, dtype=np.bool_)))
        xs, ids = list(shape), list(shape)
        xs[dim], ids[dim] = x.shape[dim], idx.shape[dim]
        xe = input if tuple(xs) == x.shape else input.expand(xs)
        ie = indices if tuple(ids) == idx.shape else indices.expand(ids)
        r = gather(xe, dim, ie)
    return r if out is None else write_out(r, out, "take_along_dim")


# ---------------------------------------------------------------- sort / topk / kthvalue
def _argsort(x, dim, descending):
    """Stable sorting indices; descending keeps equal elements in order and puts NaN first, as torch does."""
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


def _write_pair(r, out, name):
    write_out(r[0], out[0], name)
    write_out(r[1], out[1], name)
    return out


def sort(input, dim=-1, descending=False, *, stable=False, out=None):
    """Same as `torch.sort` (always stable: equal elements keep their order)."""
    dim = _wrap_dim(dim, input._data.ndim)
    v, i = dispatch1(_SORT_STABLE if stable else _SORT, input, dim, bool(descending))
    r = return_types.sort(v, i)
    return r if out is None else return_types.sort(*_write_pair(r, out, "sort"))


def argsort(input, dim=-1, descending=False, *, stable=False):
    """Same as `torch.argsort`."""
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
        part = np.argpartition(x, n - k if largest else k - 1, axis=dim)
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


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """Same as `torch.topk` (results always sorted)."""
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
    part = np.argpartition(x, k - 1, axis=dim)
    idx = np.take(part, [k - 1], axis=dim)
    v = np.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        idx, v = np.squeeze(idx, dim), np.squeeze(v, dim)
    return (v, idx), idx


_KTHVALUE = Op("kthvalue", _kthvalue_fwd, _select_bwd, SAVE_NONE, nout=2, extra=True)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """Same as `torch.kthvalue`."""
    x = input._data
    dim = _wrap_dim(-1 if dim is None else dim, x.ndim)
    n = x.shape[dim] if x.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    r = return_types.kthvalue(*dispatch1(_KTHVALUE, input, dim, int(k), bool(keepdim)))
    return r if out is None else return_types.kthvalue(*_write_pair(r, out, "kthvalue"))


# ---------------------------------------------------------------- nonzero / unique
def nonzero(input, *, out=None, as_tuple=False):
    """Same as `torch.nonzero`."""
    x = input._data
    if as_tuple:
        return tuple(_t(a.astype(np.int64, copy=False)) for a in np.nonzero(x.reshape(1) if x.ndim == 0 else x))
    r = _t(np.argwhere(x).astype(np.int64, copy=False))
    return r if out is None else write_out(r, out, "nonzero")


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
        v, inv, cnt = np.unique(x.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
        return _unique_result(v, inv.reshape(x.shape), cnt, return_inverse, return_counts)
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, x.ndim)
    v, inv, cnt = np.unique(x, return_inverse=True, return_counts=True, axis=dim)
    return _unique_result(v, inv.reshape(-1), cnt, return_inverse, return_counts)


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
        flat = rows.reshape(rows.shape[0], -1)
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
    return np.asarray(values)


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None, out=None, sorter=None):
    """Same as `torch.searchsorted`."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"ember.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("ember.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    v = _values_array(values, seq)
    srt = None if sorter is None else sorter._data
    how = "right" if right else "left"
    if seq.ndim <= 1:
        r = np.searchsorted(seq.reshape(-1), v, side=how, sorter=srt)
    else:
        if v.ndim != seq.ndim or v.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(f"ember.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               f"dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {_fmt(seq.shape)} and input value tensor {_fmt(v.shape)}")
        s2, v2 = seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1])
        o2 = None if srt is None else srt.reshape(-1, srt.shape[-1])
        r = np.stack([np.searchsorted(s2[i], v2[i], side=how, sorter=None if o2 is None else o2[i])
                      for i in range(s2.shape[0])]).reshape(v.shape) if s2.shape[0] else np.zeros(v.shape, np.int64)
    r = _t(np.asarray(r, dtype=np.int32 if out_int32 else np.int64))
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

for _name in ("index_put", "gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
              "index_copy", "index_fill", "index_reduce", "masked_fill", "masked_select", "masked_scatter", "take",
              "take_along_dim", "put", "nonzero", "argwhere", "sort", "argsort", "msort", "topk", "kthvalue",
              "unique", "unique_consecutive", "histc", "histogram", "bincount"):
    setattr(Tensor, _name, globals()[_name])
for _name in ("index_put_", "scatter_", "scatter_add_", "index_add_", "index_copy_", "index_fill_", "masked_fill_",
              "put_"):
    setattr(Tensor, _name, globals()[_name])
Tensor.scatter_reduce_ = make_inplace(scatter_reduce, "scatter_reduce_")
Tensor.index_reduce_ = make_inplace(index_reduce, "index_reduce_")
Tensor.masked_scatter_ = make_inplace(masked_scatter, "masked_scatter_")
