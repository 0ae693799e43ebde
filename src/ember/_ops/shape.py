"""Shape ops. View ops return tensors that share memory and the version counter with their base."""
import numpy as np

from .._tensor import Tensor, _wrap_dim
from ..autograd.graph import counter
from ._dispatch import SAVE_NONE, Op, dispatch1

__all__ = ["reshape", "transpose", "swapaxes", "swapdims", "permute", "squeeze", "unsqueeze", "t", "as_strided",
           "expand_copy"]


def as_view(y, x):
    """Mark y (a tensor over a NumPy view of x's memory) as a view of x."""
    y._base = x._base if x._base is not None else x
    y._vc = x._vc or counter(x)
    return y


def view_op(op, x, *attrs):
    return as_view(dispatch1(op, x, *attrs), x)


def _size_args(size):
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    return tuple(int(s) for s in size)


def infer_size(shape, numel):
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return tuple(shape)


def _reshape_bwd(ctx, g):
    return g.reshape(ctx.shapes[0])


def _view_fwd(x, shape):
    y = x.view()
    try:
        y.shape = shape  # assigning .shape never copies: it raises where a view is impossible
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead.") from None
    return y


VIEW = Op("view", _view_fwd, _reshape_bwd, SAVE_NONE)
RESHAPE_COPY = Op("reshape", lambda x, shape: x.reshape(shape), _reshape_bwd, SAVE_NONE, node_name="CloneBackward0")
UNSAFE_VIEW = Op("_unsafe_view", lambda x, shape: np.reshape(x, shape), _reshape_bwd, SAVE_NONE)


def view(self, *shape):
    """Same as `torch.Tensor.view` (shape form; the dtype form reinterprets the bytes)."""
    from .._dtype import dtype as dtype_cls
    if len(shape) == 1 and isinstance(shape[0], dtype_cls):
        return as_view(Tensor._make(self._data.view(shape[0].np)), self)
    shape = infer_size(_size_args(shape), self._data.size)
    return view_op(VIEW, self, shape)


def reshape(input, *shape):
    """Same as `torch.reshape`: a view when the layout allows it, else a copy."""
    shape = infer_size(_size_args(shape), input._data.size)
    d = input._data
    if shape == d.shape:
        return view_op(VIEW, input, shape)
    y = d.view()
    try:
        y.shape = shape
    except AttributeError:
        return dispatch1(UNSAFE_VIEW, input, shape)
    return view_op(VIEW, input, shape)


def _expand_fwd(x, shape):
    return np.broadcast_to(x, shape) if x.__class__ is np.ndarray else _xp_broadcast(x, shape)


def _xp_broadcast(x, shape):
    from .._backend import xp_of
    return xp_of(x).broadcast_to(x, shape)


def _expand_bwd(ctx, g):
    return g  # the engine sums a gradient back over broadcast dimensions


EXPAND = Op("expand", _expand_fwd, _expand_bwd, SAVE_NONE)


def expand(self, *sizes):
    """Same as `torch.Tensor.expand`."""
    sizes = _size_args(sizes)
    d = self._data
    if len(sizes) < d.ndim:
        raise RuntimeError(f"expand(torch.FloatTensor{{[{', '.join(map(str, d.shape))}]}}, size=[{', '.join(map(str, sizes))}]): the number of sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions in the tensor ({d.ndim})")
    lead = len(sizes) - d.ndim
    shape = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            shape.append(s)
            continue
        cur = d.shape[i - lead]
        if s == -1:
            s = cur
        elif cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                               f"Tensor sizes: [{', '.join(map(str, d.shape))}]")
        shape.append(s)
    shape = tuple(shape)
    if shape == d.shape:
        return view_op(VIEW, self, shape)
    return view_op(EXPAND, self, shape)


def expand_as(self, other):
    return expand(self, other._data.shape)


def expand_copy(input, size):
    return expand(input, size).clone()


def _perm_inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


PERMUTE = Op("permute", lambda x, perm: x.transpose(perm), lambda ctx, g: g.permute(_perm_inverse(ctx.attrs[0])),
             SAVE_NONE)
TRANSPOSE = Op("transpose", lambda x, perm: x.transpose(perm),
               lambda ctx, g: g.permute(_perm_inverse(ctx.attrs[0])), SAVE_NONE)


def permute(input, *dims):
    """Same as `torch.permute`."""
    n = input._data.ndim
    dims = tuple(_wrap_dim(d, n) for d in _size_args(dims))
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
                           f"len(dims) = {len(dims)}")
    if sorted(dims) != list(range(n)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return view_op(PERMUTE, input, dims)


def transpose(input, dim0, dim1):
    """Same as `torch.transpose`."""
    n = input._data.ndim
    perm = list(range(n))
    if n == 0:
        _wrap_dim(dim0, 0), _wrap_dim(dim1, 0)
        return view_op(VIEW, input, ())
    a, b = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    perm[a], perm[b] = perm[b], perm[a]
    return view_op(TRANSPOSE, input, tuple(perm))


swapaxes = swapdims = transpose


def t(input):
    """Same as `torch.t`."""
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return transpose(input, 0, 1) if n == 2 else view_op(VIEW, input, input._data.shape)


def squeeze(input, dim=None):
    """Same as `torch.squeeze`."""
    shape = input._data.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = {_wrap_dim(d, len(shape)) for d in ((dim,) if isinstance(dim, int) else dim)}
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return view_op(VIEW, input, new)


def unsqueeze(input, dim):
    """Same as `torch.unsqueeze`."""
    shape = list(input._data.shape)
    dim = _wrap_dim(dim, len(shape) + 1)
    shape.insert(dim, 1)
    return view_op(VIEW, input, tuple(shape))


def _strided_positions(size, stride, offset):
    """Storage index of every element of a strided view."""
    pos = np.full((), offset, dtype=np.int64)
    for s, st in zip(size, stride):
        pos = pos[..., None] + np.arange(s, dtype=np.int64) * st
    return pos


def _address(arr):
    return arr.__array_interface__["data"][0]


def _as_strided_fwd(x, size, stride, offset, base_arr):
    isz = x.itemsize
    flat = np.lib.stride_tricks.as_strided(base_arr, shape=(base_arr.size,), strides=(isz,))
    y = np.lib.stride_tricks.as_strided(flat[offset:], shape=size, strides=tuple(s * isz for s in stride))
    # where x's own elements sit in the storage, for the backward
    x_geom = (x.shape, tuple(s // isz for s in x.strides), (_address(x) - _address(base_arr)) // isz)
    return y, x_geom


def _as_strided_bwd(ctx, g):
    from .creation import zeros
    size, stride, offset, base_arr = ctx.attrs
    xs, xst, xoff = ctx.extra
    storage = zeros(base_arr.size, dtype=g.dtype, device=g.device)
    storage = storage.index_add(0, Tensor._make(_strided_positions(size, stride, offset).reshape(-1)),
                                g.reshape(-1))
    return storage[Tensor._make(_strided_positions(xs, xst, xoff))]


AS_STRIDED = Op("as_strided", _as_strided_fwd, _as_strided_bwd, SAVE_NONE, extra=True)


def as_strided(input, size, stride, storage_offset=None):
    """Same as `torch.as_strided`: strides and offset in elements of the input's storage.

    ember's gradient assumes the input is contiguous (as torch's own fast path does)."""
    base = input._base if input._base is not None else input
    if storage_offset is None:
        storage_offset = input.storage_offset()
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    need = storage_offset + sum((s - 1) * st for s, st in zip(size, stride) if s > 0) + 1
    if any(s == 0 for s in size):
        need = 0
    if need > base._data.size:
        raise RuntimeError(f"setStorage: sizes [{', '.join(map(str, size))}], strides [{', '.join(map(str, stride))}],"
                           f" storage offset {storage_offset}, and itemsize {input._data.itemsize} requiring a "
                           f"storage size of {need * input._data.itemsize} are out of bounds for storage of size "
                           f"{base._data.size * input._data.itemsize}")
    return view_op(AS_STRIDED, input, size, stride, storage_offset, base._data)


Tensor.view = view
Tensor.view_as = lambda self, other: view(self, other._data.shape)
Tensor.reshape = reshape
Tensor.reshape_as = lambda self, other: reshape(self, other._data.shape)
Tensor.expand = expand
Tensor.expand_as = expand_as
Tensor.permute = permute
Tensor.transpose = transpose
Tensor.swapaxes = Tensor.swapdims = transpose
Tensor.t = t
Tensor.squeeze = squeeze
Tensor.unsqueeze = unsqueeze
Tensor.as_strided = as_strided
Tensor.T = property(lambda self: permute(self, tuple(range(self._data.ndim - 1, -1, -1))))
Tensor.mT = property(lambda self: transpose(self, -2, -1))
