"""Joining and splitting: cat/concat/stack and their h/v/d/column variants, and the views that take a tensor
apart (select, narrow, unbind, split, chunk, tensor_split, hsplit/vsplit/dsplit)."""
import itertools
import operator

import numpy as np

from .._backend import XP
from .._dtype import _PROMOTE, FROM_NP
from .._tensor import Tensor, _wrap_dim
from ._dispatch import SAVE_NONE, Op, check_same_device, dispatch, dispatch1
from ._inplace import write_out
from .shape import _fmt, _scalar_name, _views, _zeros, _zeros_arr, atleast_1d, atleast_2d, atleast_3d, reshape, view_op

__all__ = ["block_diag", "cartesian_prod", "cat", "chunk", "column_stack", "combinations", "concat", "concatenate",
           "dsplit", "dstack", "hsplit", "hstack", "narrow", "row_stack", "select", "split", "split_with_sizes",
           "stack", "tensor_split", "unbind", "unsafe_chunk", "unsafe_split", "vander", "vsplit", "vstack"]


# ----------------------------------------------------------------------------------------------------------------
# select / narrow and the multi-output views (unbind, split)

def _select_fwd(x, dim, index):
    return x[(slice(None),) * dim + (index, Ellipsis)]


def _select_backward_fwd(g, shape, dim, index):
    z = _zeros_arr(g, shape)
    z[(slice(None),) * dim + (index, Ellipsis)] = g
    return z


SELECT = Op("select", _select_fwd, lambda ctx, g: dispatch1(SELECT_BACKWARD, g, ctx.shapes[0], *ctx.attrs))
SELECT_BACKWARD = Op("select_backward", _select_backward_fwd,
                     lambda ctx, g: view_op(SELECT, g, ctx.attrs[1], ctx.attrs[2]))


def _slice_fwd(x, dim, start, stop, step):
    return x[(slice(None),) * dim + (slice(start, stop, step),)]


def _slice_backward_fwd(g, shape, dim, start, stop, step):
    z = _zeros_arr(g, shape)
    z[(slice(None),) * dim + (slice(start, stop, step),)] = g
    return z


SLICE = Op("slice", _slice_fwd, lambda ctx, g: dispatch1(SLICE_BACKWARD, g, ctx.shapes[0], *ctx.attrs))
SLICE_BACKWARD = Op("slice_backward", _slice_backward_fwd, lambda ctx, g: view_op(SLICE, g, *ctx.attrs[1:]))


def slice_view(input, dim, start, stop, step=1):
    """input[..., start:stop:step] along dim as a view (SliceBackward0); start/stop already in range."""
    return view_op(SLICE, input, dim, start, stop, step)


def select(input, dim, index):
    """Same as `torch.select`."""
    d = input._data
    if d.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, d.ndim)
    index = operator.index(index)
    n = d.shape[dim]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {_fmt(d.shape)} at dimension "
                         f"{dim}")
    return view_op(SELECT, input, dim, index + n if index < 0 else index)


def narrow(input, dim, start, length):
    """Same as `torch.narrow`."""
    d = input._data
    if d.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if isinstance(start, Tensor) and (start.dim() != 0 or start._data.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    if isinstance(start, bool) or isinstance(length, bool):
        raise TypeError(f"narrow() received an invalid combination of arguments - got ({type(dim).__name__}, "
                        f"{type(start).__name__}, {type(length).__name__}), but expected (int dim, int start, "
                        f"int length)")
    start, length = operator.index(start), operator.index(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    dim = _wrap_dim(dim, d.ndim)
    n = d.shape[dim]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return view_op(SLICE, input, dim, start, start + length, 1)


_MULTI = {}


def _multi_op(kind, n):
    """The Op of a multi-output view op with n outputs (Op records have a fixed output count)."""
    op = _MULTI.get((kind, n))
    if op is None:
        name, fwd, bwd, node_name = _MULTI_KINDS[kind]
        op = _MULTI[(kind, n)] = Op(name, fwd if n != 1 else (lambda *a: fwd(*a)[0]), bwd, SAVE_NONE, nout=n,
                                    node_name=node_name)
    return op


def _multi(kind, x, n, *attrs):
    if n == 0:
        return ()
    outs = dispatch1(_multi_op(kind, n), x, *attrs)
    return _views(outs if n != 1 else (outs,), x)


def _filled(ctx, grads, shapes):
    """The output gradients of a multi-output node with zeros where an output got none."""
    grads = grads if ctx.nout != 1 else [grads]
    like = next(g for g in grads if g is not None)
    return [g if g is not None else _zeros(s, like) for g, s in zip(grads, shapes)]


def _unbind_fwd(x, dim):
    if dim == 0 and x.ndim > 1:
        return tuple(x)  # iterating an array yields views of its rows
    pre = (slice(None),) * dim
    return tuple(x[pre + (i, Ellipsis)] for i in range(x.shape[dim]))


def _unbind_bwd(ctx, grads):
    shape = ctx.shapes[0]
    dim = ctx.attrs[0]
    return stack(_filled(ctx, grads, [shape[:dim] + shape[dim + 1:]] * ctx.nout), dim)


def _split_fwd(x, dim, sizes):
    pre = (slice(None),) * dim
    out = []
    start = 0
    for s in sizes:
        out.append(x[pre + (slice(start, start + s),)])
        start += s
    return tuple(out)


def _split_bwd(ctx, grads):
    shape = ctx.shapes[0]
    dim, sizes = ctx.attrs
    return cat(_filled(ctx, grads, [shape[:dim] + (s,) + shape[dim + 1:] for s in sizes]), dim)


_MULTI_KINDS = {
    "unbind": ("unbind", _unbind_fwd, _unbind_bwd, None),
    "split": ("split", _split_fwd, _split_bwd, None),
    "split_with_sizes": ("split_with_sizes", _split_fwd, _split_bwd, None),
}


def unbind(input, dim=0, *, axis=None):
    """Same as `torch.unbind`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    d = input._data
    if d.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    dim = _wrap_dim(dim, d.ndim)
    return _multi("unbind", input, d.shape[dim], dim)


def _split_dim(input, dim, name):
    d = input._data
    if d.ndim == 0:
        raise RuntimeError(f"{name} expects at least a 1-dimensional tensor")
    return _wrap_dim(dim, d.ndim)


def split(tensor, split_size_or_sections, dim=0):
    """Same as `torch.split`."""
    dim = _split_dim(tensor, dim, "split")
    n = tensor._data.shape[dim]
    if not isinstance(split_size_or_sections, (list, tuple)):
        s = operator.index(split_size_or_sections)
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={s}")
        if s == 0 and n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = (s,) * (n // s) + ((n % s,) if n % s else ()) if n else (0,)
        return _multi("split", tensor, len(sizes), dim, sizes)
    return _split_with_sizes(tensor, tuple(operator.index(s) for s in split_size_or_sections), dim, n)


def _split_with_sizes(tensor, sizes, dim, n):
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={_fmt(sizes)}")
    if sum(sizes) != n:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {dim}), but got split_sizes={_fmt(sizes)}")
    return _multi("split_with_sizes", tensor, len(sizes), dim, sizes)


def chunk(input, chunks, dim=0, *, axis=None):
    """Same as `torch.chunk`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    dim = _split_dim(input, dim, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[dim]
    if n == 0:
        return _multi("split_with_sizes", input, chunks, dim, (0,) * chunks)
    return split(input, -(-n // chunks), dim)


def tensor_split(input, indices_or_sections, dim=0):
    """Same as `torch.tensor_split`: int sections, a sequence of indices, or a 0-/1-D int64 tensor of either."""
    d = input._data
    if d.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    dim = _wrap_dim(dim, d.ndim)
    n = d.shape[dim]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = _split_tensor_arg(ios)
    if isinstance(ios, (list, tuple)):
        bounds = [0] + [operator.index(i) for i in ios] + [n]
        return tuple(_clamped_slice(input, dim, n, a, b) for a, b in itertools.pairwise(bounds))
    k = operator.index(ios)
    if k <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {k}")
    size, extra = divmod(n, k)
    out = []
    start = 0
    for i in range(k):
        stop = start + size + (i < extra)
        out.append(view_op(SLICE, input, dim, start, stop, 1))
        start = stop
    return tuple(out)


def _split_tensor_arg(ios):
    d = ios._data
    if d.dtype != np.int64:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{_scalar_name(d.dtype)}")
    if d.ndim > 1:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {d.ndim} dims")
    return int(d) if d.ndim == 0 else [int(v) for v in ios.tolist()]


def _clamped_slice(input, dim, n, start, stop):
    # torch's slice semantics: negative bounds wrap once, then everything is clamped into [0, n]
    start = min(max(start + n if start < 0 else start, 0), n)
    stop = min(max(stop + n if stop < 0 else stop, 0), n)
    return view_op(SLICE, input, dim, start, max(stop, start), 1)


def _hvd_split(input, ios, dim, name, need):
    d = input._data
    if d.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{d.ndim} dimensions!")
    if isinstance(ios, int):
        n = d.shape[dim]
        if ios == 0 or n % ios:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {n} is not divisible by the split_size {ios}!")
    return tensor_split(input, ios, dim)


def hsplit(input, indices_or_sections):
    """Same as `torch.hsplit`."""
    return _hvd_split(input, indices_or_sections, 1 if input._data.ndim > 1 else 0, "hsplit", 1)


def vsplit(input, indices_or_sections):
    """Same as `torch.vsplit`."""
    return _hvd_split(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    """Same as `torch.dsplit`."""
    return _hvd_split(input, indices_or_sections, 2, "dsplit", 3)


# ----------------------------------------------------------------------------------------------------------------
# joining: cat and stack

def _cat_fwd(*args):
    arrays, dim, dt, skip = args[:-3], args[-3], args[-2], args[-1]
    if skip is not None:
        arrays = [a for a, s in zip(arrays, skip) if not s]
    xp = np if arrays[0].__class__ is np.ndarray else XP[arrays[0].__class__]
    if dt is None:
        return xp.concatenate(arrays, axis=dim)
    return xp.concatenate(arrays, axis=dim, dtype=dt, casting="unsafe")


def _cat_bwd(ctx, g):
    dim, _, skip = ctx.attrs
    if skip is None:
        return split(g, [s[dim] for s in ctx.shapes], dim)
    parts = iter(split(g, [s[dim] for s, k in zip(ctx.shapes, skip) if not k], dim))
    return tuple(_zeros((0,), g) if k else next(parts) for k in skip)


def _stack_fwd(*args):
    arrays, dim, dt = args[:-2], args[-2], args[-1]
    xp = np if arrays[0].__class__ is np.ndarray else XP[arrays[0].__class__]
    shape = arrays[0].shape
    new = shape[:dim] + (1,) + shape[dim:]
    arrays = [a.reshape(new) for a in arrays]  # adding a size-1 dim never copies; faster than xp.stack
    if dt is None:
        return xp.concatenate(arrays, axis=dim)
    return xp.concatenate(arrays, axis=dim, dtype=dt, casting="unsafe")


CAT = Op("cat", _cat_fwd, _cat_bwd, SAVE_NONE)
STACK = Op("stack", _stack_fwd, lambda ctx, g: unbind(g, ctx.attrs[0]), SAVE_NONE)


def _check_list(tensors, name):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")


def _common_dtype(tensors):
    """torch's promoted dtype of a tensor list (None when all agree), checking they share a device."""
    first = tensors[0]._data
    dt, cls = first.dtype, first.__class__
    same = True
    for x in tensors:
        d = x._data
        if d.__class__ is not cls or (cls is not np.ndarray and x.device != tensors[0].device):
            check_same_device(tensors)
        if d.dtype != dt:
            same = False
            dt = _PROMOTE[(FROM_NP[dt], FROM_NP[d.dtype])].np
    return None if same else dt


def cat(tensors, dim=0, *, out=None, axis=None):
    """Same as `torch.cat`: 1-D empty tensors are skipped, as torch skips them."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        _check_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    try:
        return _cat_tensors(tensors, dim, out)
    except AttributeError:  # something that is not a Tensor (free to guard: nothing is paid unless raised)
        for i, x in enumerate(tensors):
            if not isinstance(x, Tensor):
                raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(x).__name__}") from None
        raise


def _cat_tensors(tensors, dim, out):
    d = tensors[0]._data
    shape = d.shape
    if shape and d.__class__ is np.ndarray and shape != (0,):
        # the common case first: CPU tensors of one dtype whose shapes agree
        dim = _wrap_dim(dim, len(shape))
        pre, post, n, dt = shape[:dim], shape[dim + 1:], len(shape), d.dtype
        for x in tensors:
            a = x._data
            s = a.shape
            if a.dtype != dt or a.__class__ is not np.ndarray or s != shape and (
                    len(s) != n or s[:dim] != pre or s[dim + 1:] != post):
                break
        else:
            r = dispatch(CAT, tensors if tensors.__class__ is tuple else tuple(tensors), dim, None, None)
            return r if out is None else write_out(r, out, "cat", tensors)
    return _cat(tensors, dim, out)


def _cat(tensors, dim, out):
    dt = _common_dtype(tensors)
    keep = []
    for i, x in enumerate(tensors):
        shape = x._data.shape
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if shape != (0,):
            keep.append(i)
    if not keep:  # every input is a 1-D empty tensor: a new one, in the graph like torch's
        _wrap_dim(dim, 1)
        first = tensors[0]
        r = (first if dt is None else first.to(FROM_NP[dt])).clone()
    else:
        dim = _check_cat_shapes(tensors, keep, dim)
        skip = None if len(keep) == len(tensors) else tuple(x._data.shape == (0,) for x in tensors)
        r = dispatch(CAT, tuple(tensors), dim, dt, skip)
    return r if out is None else write_out(r, out, "cat", tensors)


def _check_cat_shapes(tensors, keep, dim):
    ref = tensors[keep[0]]._data.shape
    dim = _wrap_dim(dim, len(ref))
    for i in keep[1:]:
        shape = tensors[i]._data.shape
        if shape == ref:
            continue
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {len(shape)}")
        for k, (a, b) in enumerate(zip(ref, shape)):
            if k != dim and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected size {a} but "
                                   f"got size {b} for tensor number {i} in the list.")
    return dim


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None, axis=None):
    """Same as `torch.stack`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        _check_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref = tensors[0]._data.shape
    for i, x in enumerate(tensors):
        if x._data.shape != ref:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_fmt(ref)} at entry 0 and "
                               f"{_fmt(x._data.shape)} at entry {i}")
    dim = _wrap_dim(dim, len(ref) + 1)
    r = dispatch(STACK, tensors if tensors.__class__ is tuple else tuple(tensors), dim, _common_dtype(tensors))
    return r if out is None else write_out(r, out, "stack")


def _nonempty(tensors, name):
    _check_list(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors, *, out=None):
    """Same as `torch.hstack`."""
    _nonempty(tensors, "hstack")
    ts = atleast_1d(list(tensors))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    """Same as `torch.vstack`."""
    _nonempty(tensors, "vstack")
    return cat(atleast_2d(list(tensors)), 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    """Same as `torch.dstack`."""
    _nonempty(tensors, "dstack")
    return cat(atleast_3d(list(tensors)), 2, out=out)


def column_stack(tensors, *, out=None):
    """Same as `torch.column_stack`."""
    _nonempty(tensors, "column_stack")
    ts = [reshape(x, (x._data.size, 1)) if x._data.ndim <= 1 else x for x in tensors]
    return cat(ts, 1, out=out)


def split_with_sizes(input, split_sizes, dim=0):
    """Same as `torch.split_with_sizes`."""
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' must be tuple of ints, not "
                        f"{type(split_sizes).__name__}")
    return split(input, list(split_sizes), dim)


def unsafe_chunk(input, chunks, dim=0):
    """Same as `torch.unsafe_chunk` (the results are views, as with chunk)."""
    return chunk(input, chunks, dim)


def unsafe_split(tensor, split_size_or_sections, dim=0):
    """Same as `torch.unsafe_split` (the results are views, as with split)."""
    return split(tensor, split_size_or_sections, dim)


# ----------------------------------------------------------------------------------------------------------------
# products and block layouts, composed of differentiable ops

def _all_tensors(tensors):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")


def _one_dim_inputs(name, tensors):
    _all_tensors(tensors)
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(t._data.shape)}")


def cartesian_prod(*tensors):
    """Same as `torch.cartesian_prod`."""
    from .shape import meshgrid
    _one_dim_inputs("cartesian_prod", tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """Same as `torch.combinations`."""
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_fmt(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = np.array(list(pick(range(input._data.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return input[Tensor._make(XP[input._data.__class__].asarray(idx))]


def block_diag(*tensors):
    """Same as `torch.block_diag`."""
    from .creation import zeros
    _all_tensors(tensors)
    blocks = []
    for i, t in enumerate(tensors):
        nd = t._data.ndim
        if nd > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{nd} dimensions")
        blocks.append(t.reshape(1, -1) if nd == 1 else t.reshape(1, 1) if nd == 0 else t)
    dt = FROM_NP[blocks[0]._data.dtype] if blocks else None
    for b in blocks[1:]:
        dt = _PROMOTE[(dt, FROM_NP[b._data.dtype])]
    dev = blocks[0].device if blocks else None
    rows, width, col = [], sum(b.shape[1] for b in blocks), 0
    for b in blocks:
        h, w = b.shape
        parts = [zeros(h, col, dtype=dt, device=dev), b.to(dt), zeros(h, width - col - w, dtype=dt, device=dev)]
        rows.append(cat(parts, 1))
        col += w
    return cat(rows, 0) if rows else zeros(1, 0)


def vander(x, N=None, increasing=False):
    """Same as `torch.vander`."""
    from .creation import ones
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "bu" or x._data.dtype.itemsize < 8 and x._data.dtype.kind == "i":
        x = x.long()  # integer inputs widen to int64, as torch's
    cols = [ones(x.shape[0], 1, dtype=x.dtype, device=x.device)] if n else []
    if n > 1:
        cols.append(x.unsqueeze(1).expand(-1, n - 1).cumprod(1))  # cumprod keeps x**k exact and x=0 differentiable
    r = cat(cols, 1) if cols else x.new_empty(x.shape[0], 0)
    return r if increasing else r.flip(1)


# ----------------------------------------------------------------------------------------------------------------
# Tensor methods

Tensor.narrow = narrow
Tensor.select = select
Tensor.unbind = unbind
def _split_method(self, split_size, dim=0):
    """Same as `torch.Tensor.split` (its size argument is named split_size)."""
    return split(self, split_size, dim)


Tensor.split = _split_method
Tensor.chunk = chunk
Tensor.tensor_split = tensor_split
Tensor.hsplit = hsplit
Tensor.vsplit = vsplit
Tensor.dsplit = dsplit
Tensor.split_with_sizes = split_with_sizes
Tensor.unsafe_chunk = unsafe_chunk
Tensor.unsafe_split = unsafe_split
