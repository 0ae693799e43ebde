"""Indexing: x[key], x[key] = v and index_put, with the array kernels and differentiable region primitives that
the other indexing modules (scatter.py, masked.py, sort.py) build on.

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

import ml_dtypes
import numpy as np

from .._backend import XP, deferred, device_of, read_only, to_device
from .._backend.accumulate import add_at as _add_at
from .._dtype import FROM_NP
from .._tensor import Tensor
from ..autograd.grad_mode import GRAD
from ..autograd.graph import FORWARD, bump_version
from ._dispatch import SAVE_NONE, Op, dispatch1, dispatch2
from ._inplace import check_leaf, inplace, view_needs_grad
from .shape import view_op

__all__ = ["_unsafe_masked_index", "_unsafe_masked_index_put_accumulate", "index_put", "index_put_", "unravel_index"]

_ALL = slice(None)
_INT, _KEY_SLICE, _NONE, _ELLIPSIS, _BOOL, _MASK, _ARRAY = range(7)
_NUMBER = (builtins.int, builtins.float, builtins.bool, builtins.complex, np.number, np.bool_)
_VALID = ("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
          "(got {})")
_ZERO_DIM = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
             "convert a 0-dim tensor to a number")
_SEQ_WARNING = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor "
                "index, x[ember.tensor(seq)], which will result either in an error or a different result")
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
    from .._dtype import SCALAR_NAMES
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
        m = _FMAX[dt] = builtins.float(ml_dtypes.finfo(dt).max)
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


def _add_rows(y, idx, v):
    """y[idx] += v over the first axis with repeated rows summed: sorting and np.add.reduceat beat np.add.at,
    which runs element by element."""
    full = idx.shape + y.shape[1:]
    idx = idx.reshape(-1)
    if idx.size == 0:
        return
    v = (np.broadcast_to(v, full) if v.shape != full else v).reshape((idx.size,) + y.shape[1:])
    n = y.shape[0]
    if idx.__class__ is not np.ndarray or idx.min() < 0:  # on a GPU always: asking would make the host wait
        idx = np.where(idx < 0, idx + n, idx)
    if y.__class__ is not np.ndarray:  # CuPy: no reduceat; its add.at sums repeated rows atomically
        _add_at(y, idx, v)
        return
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
    elif isinstance(k, (list, tuple, range)):  # torch treats a range like a list of its ints
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
        if k is None or k is Ellipsis or isinstance(k, (Tensor, list, tuple, range, slice)) or k.__class__ in XP:
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
            items.append((_KEY_SLICE, k))
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
        elif kind is _KEY_SLICE:
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
            if v.__class__ is not np.ndarray:
                v = _device_index(v, shape[dim], sum(1 for a in adv if a.__class__ is not slice))
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


def _device_index(a, n, ordinal):
    """A device index array for a dim of size n, clipped into [-n, n): NumPy raises for an index out of range, CuPy
    wraps it silently; torch's error comes at the next synchronization (see NOTE [ Deferred device checks ])."""
    return deferred.check_range(XP[a.__class__], a, -n, n, IndexError,
                                f"index {{}} is out of bounds for dimension {ordinal} with size {n}")


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
            return _index(self, (a if a.__class__ is np.ndarray else _device_index(a, self._data.shape[0], 0),))
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
    elif kind in "iu" and isinstance(value, (builtins.float, np.floating)):
        info = np.iinfo(dt)
        if not info.min <= value <= info.max:  # NaN fails this too
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
        if v.__class__ is not d.__class__:  # a tensor on another device is copied over, as torch does
            v = to_device(v, device_of(d))
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
    from .._dtype import legacy_type_name
    raise TypeError(f"can't assign a {name} to a {legacy_type_name(self)}")


def _cast(v, dtype):
    if v.dtype.kind == "c" and dtype.kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)
        v = v.real
    return v.astype(dtype)


def _write_error(self, basic, adv, v, exc):
    """torch's words for a value that does not fit the indexed region."""
    if read_only(self._data):
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
    if self._base is not None and view_needs_grad(self):  # a view made under no_grad of a base in the graph
        check_leaf(self)
    if GRAD[0] and (self._requires_grad or (isinstance(value, Tensor) and value._requires_grad)) or \
            FORWARD[0] is not None and FORWARD[0].involved(self, value):  # the tangent follows the value
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
        d, v = self._data, _assign_value(self, value, basic, None, True)
        v = np.asarray(v, d.dtype) if d.__class__ is np.ndarray else XP[d.__class__].asarray(v, d.dtype)
        value = Tensor._make(v)
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


def _in_range(input, indices):
    """indices with each clamped into its dim (where the mask is False they may point anywhere)."""
    return tuple(None if i is None else i.clamp(-input.shape[d], input.shape[d] - 1) for d, i in enumerate(indices))


def _unsafe_masked_index(input, mask, indices, fill):
    """Same as `torch._unsafe_masked_index`: input[indices] where mask is True, fill elsewhere."""
    return input[_in_range(input, indices)].where(mask, fill)


def _unsafe_masked_index_put_accumulate(input, mask, indices, values):
    """Same as `torch._unsafe_masked_index_put_accumulate`: values added at input[indices] where mask is True."""
    return index_put(input, _in_range(input, indices), values.masked_fill(~mask, 0), accumulate=True)


def index_put_(self, indices, values, accumulate=False):
    """Same as `torch.Tensor.index_put_`."""
    if GRAD[0] and (self._requires_grad or values._requires_grad) or FORWARD[0] is not None:
        return inplace(self, index_put, (indices, values, accumulate), {}, "index_put_")
    basic, adv, values = _index_put_args(self, indices, values)
    d = self._data
    if accumulate:
        _kadd(d, basic, adv, values._data)
    else:
        _kset(d, basic, adv, values._data)
    bump_version(self, "index_put_")
    return self


def unravel_index(indices, shape):
    """Same as `torch.unravel_index`: the coordinates of flat indices, wrapped modulo the number of elements."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index(): argument 'indices' must be Tensor, not {type(indices).__name__}")
    d = indices._data
    if d.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, builtins.int) else tuple(shape)
    if builtins.any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    xp = XP[d.__class__]
    flat = d.astype(np.int64) % builtins.max(1, int(np.prod(shape))) if shape else d.astype(np.int64)
    coords = xp.unravel_index(flat, shape) if shape else ()
    return tuple(Tensor._make(xp.asarray(c, dtype=np.int64)) for c in coords)


# ---------------------------------------------------------------- binding
Tensor.index_put = index_put
Tensor.index_put_ = index_put_

