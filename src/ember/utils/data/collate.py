"""Turning lists of samples into batches (same as `torch.utils.data._utils.collate`)."""
import collections.abc
import copy
import re

import numpy as np

from ..._tensor import Tensor

__all__ = [
    "collate",
    "collate_float_fn",
    "collate_int_fn",
    "collate_numpy_array_fn",
    "collate_numpy_scalar_fn",
    "collate_str_fn",
    "collate_tensor_fn",
    "default_collate",
    "default_collate_fn_map",
    "default_convert",
]

# NumPy dtype codes of strings, bytes and objects: arrays of these are not turned into tensors
_np_str_obj_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                                  "lists; found {}")


def _ember():
    import ember
    return ember


def _map_like(data, fn):
    """`data` with fn applied to each value, keeping the mapping's own type where it can be rebuilt."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)  # keeps extra attributes a mapping subclass may carry
            clone.update({k: fn(k) for k in data})
            return clone
        return type(data)({k: fn(k) for k in data})
    except TypeError:
        return {k: fn(k) for k in data}


def _seq_like(data, items):
    """A sequence of data's type holding items (a list when the type cannot be rebuilt, like range)."""
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, v in enumerate(items):
                clone[i] = v
            return clone
        return type(data)(items)
    except TypeError:
        return list(items)


def default_convert(data):
    """Same as `torch.utils.data.default_convert`."""
    t = type(data)
    if isinstance(data, Tensor):
        return data
    if t.__module__ == "numpy" and t.__name__ not in ("str_", "bytes_"):
        if t is np.ndarray and _np_str_obj_pattern.search(data.dtype.str) is not None:
            return data
        return _ember().as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _map_like(data, lambda k: default_convert(data[k]))
    if isinstance(data, tuple):
        if hasattr(data, "_fields"):  # namedtuple
            return t(*(default_convert(d) for d in data))
        return [default_convert(d) for d in data]  # a tuple becomes a list, as in torch
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _seq_like(data, [default_convert(d) for d in data])
    return data


def collate(batch, *, collate_fn_map=None):
    """Same as `torch.utils.data._utils.collate.collate`: the generic collation with a type -> function registry."""
    elem = batch[0]
    t = type(elem)
    if collate_fn_map is not None:
        fn = collate_fn_map.get(t)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        return _map_like(elem, lambda k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map))
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return t(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if len(set(map(len, batch))) != 1:
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)]
        return columns if isinstance(elem, tuple) else _seq_like(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(t))


# the BatchArena of the batch a DataLoader worker is collating now (see _worker._fetch), else None
_ARENA = [None]


def _shared_out(elem, n):
    """In a DataLoader worker: an uninitialized (n, *elem.shape) tensor in shared memory, so that the batch is
    written once and reaches the main process as a handle; None where that is not available."""
    if elem._data.__class__ is not np.ndarray:
        return None
    arena = _ARENA[0]
    if arena is not None:
        return Tensor._make(arena.alloc((n,) + elem._data.shape, elem._data.dtype))
    from .dataloader import get_worker_info
    if get_worker_info() is None:
        return None
    alloc = _shared_allocator()
    if alloc is None:
        return None
    return Tensor._make(alloc((n,) + elem._data.shape, elem._data.dtype))


def _into_batch(t):
    """A small tensor made by collate (labels and other numbers) moved into the worker's batch memory, so that it
    travels with the rest of the batch instead of in a shared memory file of its own."""
    arena = _ARENA[0]
    if arena is None or t._data.__class__ is not np.ndarray:
        return t
    out = arena.alloc(t._data.shape, t._data.dtype)
    np.copyto(out, t._data, casting="no")
    return Tensor._make(out)


_ALLOC = []


def _shared_allocator():
    if not _ALLOC:
        try:
            from ..._backend import shared_memory as _shared
            _ALLOC.append(getattr(_shared, "empty_shared", None))
        except ImportError:
            _ALLOC.append(None)
    return _ALLOC[0]


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stacks tensors along a new first dimension (into shared memory inside a worker)."""
    elem = batch[0]
    if getattr(elem, "is_sparse", False):
        raise RuntimeError("Batches of sparse tensors are not currently supported by the default collate_fn; "
                           "please provide a custom collate_fn to handle them appropriately.")
    out = _shared_out(elem, len(batch))
    res = _stack_plain(batch, out)
    if res is not None:
        return res
    return _ember().stack(batch, 0, out=out)


def _stack_plain(batch, out):
    """The common case without ember.stack's dispatch: plain CPU tensors of one shape and dtype that need no graph,
    copied with one concatenate along the existing first axis (no per-sample reshape); None for anything else."""
    first = batch[0]._data
    if first.__class__ is not np.ndarray or not first.ndim:
        return None
    shape, dt = first.shape, first.dtype
    arrays = []
    for t in batch:
        a = t._data
        if t.__class__ is not Tensor or t._requires_grad or a.__class__ is not np.ndarray or a.shape != shape \
                or a.dtype != dt:
            return None
        arrays.append(a)
    res = np.empty((len(batch),) + shape, dt) if out is None else out._data
    np.concatenate(arrays, axis=0, out=res.reshape((len(batch) * shape[0],) + shape[1:]))
    return Tensor._make(res) if out is None else out


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    as_tensor = _ember().as_tensor
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return _into_batch(_ember().as_tensor(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    ember = _ember()
    return _into_batch(ember.tensor(batch, dtype=ember.float64))


def collate_int_fn(batch, *, collate_fn_map=None):
    return _into_batch(_ember().tensor(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,  # also np.memmap, a subclass
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,  # string scalars are left out on purpose
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Same as `torch.utils.data.default_collate`."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
