"""Shape ops: the views that reshape, transpose, expand or squeeze a tensor, and as_strided. View ops return
tensors that share memory and the version counter with their base; as_view/view_op here are what every view
op (in join.py and rearrange.py too) builds on.

# NOTE [ Views ]
# A view op's forward returns a NumPy/CuPy view of its input's array and `as_view` ties the result to the root
# base (`_base`) and to the base's version counter (`_vc`), so an in-place op on any of them is seen by all.
# Views whose layout NumPy cannot express with its own indexing (diagonal, unfold, as_strided) are built with
# as_strided from the exact strides PyTorch computes. Each view op's backward is a "scatter into zeros" op
# (select_backward, slice_backward, diagonal_backward, unfold_backward) whose own backward is the view again,
# so double backward needs nothing more.
"""
import math
import operator
import warnings

import numpy as np

from .. import _dtype
from .._backend import XP, reshape_view
from .._dtype import FROM_NP
from .._tensor import Size, Tensor, _wrap_dim
from ..autograd.grad_mode import GRAD
from ..autograd.graph import FORWARD, bump_version, counter
from ._dispatch import SAVE_NONE, Op, dispatch1

__all__ = [
    "adjoint", "as_strided", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
    "broadcast_to", "expand_copy", "flatten", "meshgrid", "moveaxis", "movedim", "permute", "ravel", "reshape",
    "squeeze", "swapaxes", "swapdims", "t", "transpose", "unflatten", "unsqueeze",
]


# ----------------------------------------------------------------------------------------------------------------
# helpers

def as_view(y, x):
    """Mark y (a tensor over a NumPy view of x's memory) as a view of x."""
    y._base = x._base if x._base is not None else x
    c = y._vc = x._vc or counter(x)
    y._view_ver = c.v  # a later in-place change of the base makes this view's history stale
    return y


def view_op(op, x, *attrs):
    return as_view(dispatch1(op, x, *attrs), x)


def _views(outs, x):
    for y in outs:
        as_view(y, x)
    return outs


def _size_args(size, name="view"):
    """The sizes of `f(*sizes)` / `f(sizes)` as a tuple of ints."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    for s in size:
        if s.__class__ is not int:
            return tuple(_as_int(v, i, name) for i, v in enumerate(size))
    return tuple(size)


def _as_int(v, i, name):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found element of type "
                        f"{type(v).__name__} at pos {i}") from None


def _fmt(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def infer_size(shape, numel):
    """shape with its one -1 entry filled in from numel, checked as torch checks it."""
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return shape
    infer = -1
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {_fmt(shape)}")
        else:
            known *= s
    if infer < 0:
        if known != numel:
            raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
        return tuple(shape)
    if known == 0 and numel == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {_fmt(shape)} because the unspecified "
                           f"dimension size -1 can be any value and is ambiguous")
    if known == 0 or numel % known:
        raise RuntimeError(f"shape '{_fmt(shape)}' is invalid for input of size {numel}")
    shape = list(shape)
    shape[infer] = numel // known
    return tuple(shape)


def _strided(a, shape, strides):
    """A writeable view of `a` with byte strides, starting at a's first element."""
    if a.__class__ is np.ndarray:
        return np.lib.stride_tricks.as_strided(a, shape, strides)
    return XP[a.__class__].lib.stride_tricks.as_strided(a, shape, strides)


def _zeros_arr(like, shape):
    return XP[like.__class__].zeros(shape, dtype=like.dtype)


def _zeros(shape, like):
    return Tensor._make(_zeros_arr(like._data, shape))


def _type_name(x):
    from .._dtype import legacy_type_name
    return legacy_type_name(x)


def _scalar_name(np_dtype):
    from .._dtype import SCALAR_NAMES
    return SCALAR_NAMES[FROM_NP[np_dtype].name]


def _dims(dims):
    """dims given as an int or a sequence of ints."""
    if isinstance(dims, (list, tuple)):
        return tuple(operator.index(d) for d in dims)
    return (operator.index(dims),)


def _perm_inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _reshape_bwd(ctx, g):
    return g.reshape(ctx.shapes[0])


# ----------------------------------------------------------------------------------------------------------------
# view / reshape

def _view_fwd(x, shape):
    y = reshape_view(x, shape)
    if y is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead.")
    return y


VIEW = Op("view", _view_fwd, _reshape_bwd, SAVE_NONE)
RESHAPE_COPY = Op("reshape", lambda x, shape: x.reshape(shape), _reshape_bwd, SAVE_NONE, node_name="CloneBackward0")
UNSAFE_VIEW = Op("_unsafe_view", lambda x, shape: x.reshape(shape), _reshape_bwd, SAVE_NONE)
RESHAPE_ALIAS = Op("_reshape_alias", _view_fwd, _reshape_bwd, SAVE_NONE)


def view(self, *shape, dtype=None, size=None):
    """Same as `torch.Tensor.view`: view(*shape), view(size=shape) or view(dtype)."""
    if size is not None:
        shape = (size,)
    if dtype is None and len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        dtype = shape[0]
    if dtype is not None:
        return _view_dtype(self, dtype)
    shape = infer_size(_size_args(shape), self._data.size)
    return view_op(VIEW, self, shape)


def _view_dtype(self, dtype):
    d = self._data
    new = np.dtype(dtype.np)
    if new == d.dtype:
        return view_op(VIEW, self, d.shape)
    if new.itemsize != d.itemsize:
        _check_view_dtype(self, new)
    return as_view(Tensor._make(d.view(new)), self)


def _check_view_dtype(self, new):
    d = self._data
    old = d.dtype
    what = f"to view {_scalar_name(old)} as {_scalar_name(new)} (different element sizes)"
    if d.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if self.stride(-1) != 1 and d.shape[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {self.stride(-1)}")
    if new.itemsize > old.itemsize:
        ratio = new.itemsize // old.itemsize
        if d.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got {d.shape[-1]}")
        if self.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but got "
                               f"{self.storage_offset()}")
        for i, st in enumerate(self.stride()[:-1]):
            if st % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, but got {st}")


def view_as(self, other):
    """Same as `torch.Tensor.view_as`."""
    return view_op(VIEW, self, other._data.shape)


def reshape(input, *args, shape=None):
    """Same as `torch.reshape`: a view when the layout allows it, else a copy."""
    if shape is None:
        shape = args
    d = input._data
    shape = infer_size(_size_args(shape, "reshape"), d.size)
    if d.flags.c_contiguous or shape == d.shape:
        return view_op(VIEW, input, shape)
    if reshape_view(d, shape) is None:
        return dispatch1(UNSAFE_VIEW, input, shape)
    return view_op(RESHAPE_ALIAS, input, shape)


def reshape_as(self, other):
    """Same as `torch.Tensor.reshape_as`."""
    return reshape(self, other._data.shape)


def flatten(input, start_dim=0, end_dim=-1):
    """Same as `torch.flatten`: input itself when there is nothing to flatten, as torch returns it."""
    d = input._data
    n = d.ndim
    if n == 0:
        return reshape(input, (1,))
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = d.shape
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(input, dim, sizes):
    """Same as `torch.unflatten`."""
    d = input._data
    dim = _wrap_dim(dim, d.ndim)
    sizes = tuple(operator.index(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = d.shape[dim] if d.ndim else 1
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if (known != n) if -1 not in sizes else (known == 0 or n % known):
        raise RuntimeError(f"unflatten: Provided sizes {_fmt(sizes)} don't multiply up to the size of dim {dim} "
                           f"({n}) in the input tensor")
    sizes = tuple(n // known if s == -1 else s for s in sizes)
    return view_op(VIEW, input, d.shape[:dim] + sizes + d.shape[dim + 1:])


def ravel(input):
    """Same as `torch.ravel`."""
    return view_op(VIEW, input.contiguous(), (input._data.size,))


# ----------------------------------------------------------------------------------------------------------------
# transposes and permutations

def _permute_fwd(x, perm):
    return x.transpose(perm)


def _permute_bwd(ctx, g):
    return g.permute(_perm_inverse(ctx.attrs[0]))


PERMUTE = Op("permute", _permute_fwd, _permute_bwd, SAVE_NONE)
_RANGES = [list(range(n)) for n in range(8)]
TRANSPOSE = Op("transpose", _permute_fwd, _permute_bwd, SAVE_NONE)
T_OP = Op("t", _permute_fwd, _permute_bwd, SAVE_NONE, node_name="TBackward0")


def permute(input, *args, dims=None):
    """Same as `torch.permute`."""
    dims = args if dims is None else dims
    n = input._data.ndim
    dims = _size_args(dims, "permute")
    if len(dims) == n and sorted(dims) == _RANGES[n] if n < 8 else False:
        return view_op(PERMUTE, input, dims)
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal to "
                           f"len(dims) = {len(dims)}")
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return view_op(PERMUTE, input, dims)


def transpose(input, dim0, dim1):
    """Same as `torch.transpose`."""
    n = input._data.ndim
    a, b = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    if n == 0:
        return view_op(TRANSPOSE, input, ())
    perm = list(range(n))
    perm[a], perm[b] = b, a
    return view_op(TRANSPOSE, input, tuple(perm))


swapaxes = swapdims = transpose


def t(input):
    """Same as `torch.t`."""
    n = input._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return view_op(T_OP, input, (1, 0) if n == 2 else tuple(range(n)))


def _T(self):
    n = self._data.ndim
    if n != 2:
        if n == 0:
            warnings.warn("Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
                          UserWarning, stacklevel=2)
        else:
            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                          "deprecated and it will throw an error in a future release. Consider `x.mT` to transpose "
                          "batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                          "dimensions of a tensor.", UserWarning, stacklevel=2)
    return view_op(PERMUTE, self, tuple(range(n - 1, -1, -1)))


def _mT(self):
    n = self._data.ndim
    if n < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    return transpose(self, -2, -1)


CONJ = Op("conj", lambda x: x.conj(), lambda ctx, g: _conj(g), SAVE_NONE)


def _conj(x):
    return dispatch1(CONJ, x)


def _H(self):
    n = self._data.ndim
    if n != 2:
        hint = " For batches of matrices, consider using tensor.mH" if n > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor.{hint}")
    y = transpose(self, 0, 1)
    return _conj(y) if self._data.dtype.kind == "c" else y


def _mH(self, what="tensor.mH"):
    n = self._data.ndim
    if n < 2:
        raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    y = transpose(self, -2, -1)
    return _conj(y) if self._data.dtype.kind == "c" else y


def adjoint(input):
    """Same as `torch.adjoint`; for complex tensors the result is a conjugated copy, not a view."""
    return _mH(input, "tensor.adjoint()")


def movedim(input, source, destination):
    """Same as `torch.movedim`."""
    n = input._data.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_fmt(src)} dims) should contain "
                           f"the same number of dims as destination ({_fmt(dst)} dims)")
    ws = [_wrap_dim(d, n) for d in src]
    wd = [_wrap_dim(d, n) for d in dst]
    if len(set(ws)) != len(ws):
        raise RuntimeError(f"movedim: repeated dim in `source` ({_fmt(src)})")
    if len(set(wd)) != len(wd):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({_fmt(dst)})")
    perm = [-1] * n
    for s, d in zip(ws, wd):
        perm[d] = s
    rest = iter(i for i in range(n) if i not in ws)
    perm = tuple(p if p >= 0 else next(rest) for p in perm)
    return view_op(PERMUTE, input, perm)


moveaxis = movedim


# ----------------------------------------------------------------------------------------------------------------
# expand and broadcasting

def _expand_fwd(x, shape):
    if x.shape == shape:
        return x.view()
    if 1 in shape:  # NumPy gives every size-1 dim stride 0, torch keeps a stride there: build torch's layout
        if x.__class__ is np.ndarray:
            return np.lib.stride_tricks.as_strided(x, shape, _expand_strides(x, shape), writeable=False)
        return _strided(x, shape, _expand_strides(x, shape))
    if x.__class__ is np.ndarray:
        return np.broadcast_to(x, shape)
    return XP[x.__class__].broadcast_to(x, shape)


def _expand_strides(x, shape):
    """Byte strides of torch's expand (inferExpandGeometry)."""
    lead = len(shape) - x.ndim
    st = [0] * len(shape)
    for i in range(len(shape) - 1, -1, -1):
        if i >= lead:
            size, stride = x.shape[i - lead], x.strides[i - lead]
        else:
            size, stride = 1, shape[i + 1] * st[i + 1] if i + 1 < len(shape) else x.itemsize
        st[i] = stride if size == shape[i] else 0
    return tuple(st)


EXPAND = Op("expand", _expand_fwd, lambda ctx, g: g, SAVE_NONE)  # the engine sums g over the broadcast dims


def expand(self, *sizes, size=None):
    """Same as `torch.Tensor.expand`; expanded views are read-only in ember (torch raises on most writes)."""
    if size is not None:
        sizes = (size,)
    sizes = _size_args(sizes, "expand")
    if -1 not in sizes and len(sizes) >= self._data.ndim:
        # without -1, NumPy's broadcasting rule is torch's expand rule; its error only tells us to explain
        try:
            return view_op(EXPAND, self, sizes)
        except ValueError:
            pass
    return view_op(EXPAND, self, _expand_shape(self, sizes))


def _expand_shape(self, sizes):
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({_type_name(self)}{{{_fmt(shape)}}}, size={_fmt(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            continue
        cur = shape[i - lead]
        if s == -1:
            out[i] = cur
        elif cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {_fmt(sizes)}.  "
                               f"Tensor sizes: {_fmt(shape)}")
    return tuple(out)


def expand_as(self, other):
    """Same as `torch.Tensor.expand_as`."""
    return expand(self, other._data.shape)


def expand_copy(input, size):
    """Same as `torch.expand_copy`."""
    return expand(input, size).clone()


def broadcast_to(input, size):
    """Same as `torch.broadcast_to`."""
    return expand(input, tuple(size))


def broadcast_shapes(*shapes):
    """Same as `torch.broadcast_shapes`."""
    res = []
    for idx, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        if any(v < 0 for v in s):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
        if len(s) > len(res):
            res = [1] * (len(s) - len(res)) + res
        for k in range(1, len(s) + 1):
            a, b = res[-k], s[-k]
            if b == 1 or a == b:
                continue
            if a != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {b} at {-k}! Mismatching "
                                   f"argument at index {idx} had {s}; but expected shape should be broadcastable "
                                   f"to {_fmt(res)}")
            res[-k] = b
    return Size(res)


def _broadcast_pair(res, shape):
    n = max(len(res), len(shape))
    a = (1,) * (n - len(res)) + tuple(res)
    b = (1,) * (n - len(shape)) + tuple(shape)
    out = []
    for i in range(n):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                               f"non-singleton dimension {i}")
        out.append(b[i] if a[i] == 1 else a[i])
    return tuple(out)


def broadcast_tensors(*tensors):
    """Same as `torch.broadcast_tensors`: tensors already of the common shape are returned as they are."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = ()
    for x in tensors:
        shape = _broadcast_pair(shape, x._data.shape)
    return tuple(x if x._data.shape == shape else view_op(EXPAND, x, shape) for x in tensors)


def meshgrid(*tensors, indexing=None):
    """Same as `torch.meshgrid`."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for x in tensors:
        if x._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {x!r}")
        if x._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    shape = tuple(x._data.size for x in tensors)
    n = len(shape)
    out = [expand(reshape(x, tuple(-1 if i == k else 1 for i in range(n))), shape) for k, x in enumerate(tensors)]
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


# ----------------------------------------------------------------------------------------------------------------
# squeeze / unsqueeze / atleast_nd

def _reshape_fwd(x, shape):
    return x.reshape(shape)  # adding or removing size-1 dims never copies


SQUEEZE = Op("squeeze", _reshape_fwd, _reshape_bwd, SAVE_NONE, node_name="SqueezeBackward0")
SQUEEZE_DIM = Op("squeeze", _reshape_fwd, _reshape_bwd, SAVE_NONE, node_name="SqueezeBackward1")
SQUEEZE_DIMS = Op("squeeze", _reshape_fwd, _reshape_bwd, SAVE_NONE, node_name="SqueezeBackward2")
def _unsqueeze_fwd(x, shape, d):
    if d == x.ndim and x.ndim and x.strides[-1] != x.itemsize:
        # NumPy strides a new trailing size-1 dim like the last one; torch gives it stride 1
        return _strided(x, shape, x.strides + (x.itemsize,))
    return x.reshape(shape)


UNSQUEEZE = Op("unsqueeze", _unsqueeze_fwd, _reshape_bwd, SAVE_NONE)


def squeeze(input, dim=None, *, axis=None):
    """Same as `torch.squeeze` (dim: None, an int or a tuple of ints)."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    shape = input._data.shape
    if dim is None:
        return view_op(SQUEEZE, input, tuple(s for s in shape if s != 1) if 1 in shape else shape)
    n = len(shape)
    if isinstance(dim, int):
        d = _wrap_dim(dim, n)
        new = shape[:d] + shape[d + 1:] if n and shape[d] == 1 else shape
        return view_op(SQUEEZE_DIM, input, new)
    dims = {_wrap_dim(d, n) for d in dim}
    return view_op(SQUEEZE_DIMS, input, tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1)))


def unsqueeze(input, dim=None, *, axis=None):
    """Same as `torch.unsqueeze`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("unsqueeze() missing 1 required positional argument: 'dim'")
    shape = input._data.shape
    d = _wrap_dim(dim, len(shape) + 1)
    return view_op(UNSQUEEZE, input, shape[:d] + (1,) + shape[d:], d)


def _atleast(fn, tensors):
    if len(tensors) == 1:
        x = tensors[0]
        if isinstance(x, (list, tuple)):
            return tuple(fn(y) for y in x)
        return fn(x)
    return tuple(fn(y) for y in tensors)


def _at1(x):
    return reshape(x, (1,)) if x._data.ndim == 0 else x


def _at2(x):
    n = x._data.ndim
    return reshape(x, (1, 1)) if n == 0 else unsqueeze(x, 0) if n == 1 else x


def _at3(x):
    n = x._data.ndim
    if n == 0:
        return reshape(x, (1, 1, 1))
    if n == 1:
        return unsqueeze(unsqueeze(x, 0), -1)
    return unsqueeze(x, -1) if n == 2 else x


def atleast_1d(*tensors):
    """Same as `torch.atleast_1d`."""
    return _atleast(_at1, tensors)


def atleast_2d(*tensors):
    """Same as `torch.atleast_2d`."""
    return _atleast(_at2, tensors)


def atleast_3d(*tensors):
    """Same as `torch.atleast_3d`."""
    return _atleast(_at3, tensors)


# ----------------------------------------------------------------------------------------------------------------
# as_strided

def _strided_positions(size, stride, offset):
    """Storage index of every element of a strided view."""
    pos = np.full((), offset, dtype=np.int64)
    for s, st in zip(size, stride):
        pos = pos[..., None] + np.arange(s, dtype=np.int64) * st
    return pos


def _address(arr):
    return arr.__array_interface__["data"][0] if arr.__class__ is np.ndarray else arr.data.ptr


def _as_strided_fwd(x, size, stride, offset, base_arr):
    isz = x.itemsize
    flat = _strided(base_arr, (base_arr.size,), (isz,))
    y = _strided(flat[offset:], size, tuple(s * isz for s in stride))
    # where x's own elements sit in the storage, for the backward
    x_geom = (x.shape, tuple(s // isz for s in x.strides), (_address(x) - _address(base_arr)) // isz)
    return y, x_geom


def _as_strided_bwd(ctx, g):
    from .creation import zeros
    size, stride, offset, base_arr = ctx.attrs
    xs, xst, xoff = ctx.extra
    storage = zeros(base_arr.size, dtype=g.dtype, device=g.device)
    pos_in, pos_x = _strided_positions(size, stride, offset).reshape(-1), _strided_positions(xs, xst, xoff)
    if g._data.__class__ is not np.ndarray:  # positions are computed on the host
        xp = XP[g._data.__class__]
        pos_in, pos_x = xp.asarray(pos_in), xp.asarray(pos_x)
    storage = storage.index_add(0, Tensor._make(pos_in), g.reshape(-1))
    return storage[Tensor._make(pos_x)]


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
        raise RuntimeError(f"setStorage: sizes {_fmt(size)}, strides {_fmt(stride)},"
                           f" storage offset {storage_offset}, and itemsize {input._data.itemsize} requiring a "
                           f"storage size of {need * input._data.itemsize} are out of bounds for storage of size "
                           f"{base._data.size * input._data.itemsize}")
    return view_op(AS_STRIDED, input, size, stride, storage_offset, base._data)


# ----------------------------------------------------------------------------------------------------------------
# Tensor methods

def _inplace_view(fn, name):
    """The in-place variant of a view op (squeeze_, t_, ...): self takes the view's layout and history."""
    def method(self, *args, **kwargs):
        if GRAD[0] and self._requires_grad and self._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        r = fn(self, *args, **kwargs)
        self._data = r._data
        if r._grad_fn is not None:
            self._grad_fn, self._output_nr = r._grad_fn, r._output_nr
        if FORWARD[0] is not None:
            FORWARD[0].adopt(self, r, name)
        else:
            bump_version(self, name)
        return self
    method.__name__ = name
    method.__doc__ = f"Same as `torch.Tensor.{name}`."
    return method


def resize_(self, *sizes, memory_format=None):
    """Same as `torch.Tensor.resize_`. A grown tensor gets fresh memory (zeros past the old elements), so views
    of the old memory stop seeing it; a shrunk or same-size contiguous tensor keeps its memory."""
    shape = _size_args(sizes, "resize_")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {_fmt(shape)}")
    d = self._data
    n = math.prod(shape)
    if n <= d.size:
        # the first n elements in memory order; a reshape of a contiguous array is a view, as torch keeps storage
        flat = d.reshape(-1) if d.flags.c_contiguous else d.ravel()
        self._data = flat[:n].reshape(shape)
    else:
        new = _zeros_arr(d, (n,))
        new[:d.size] = d.reshape(-1)
        self._data = new.reshape(shape)
    bump_version(self, "resize_")
    return self


def resize_as_(self, the_template, memory_format=None):
    """Same as `torch.Tensor.resize_as_`."""
    return resize_(self, the_template.shape)


Tensor.resize_ = resize_
Tensor.resize_as_ = resize_as_
Tensor.view = view
Tensor.view_as = view_as
Tensor.reshape = reshape
Tensor.reshape_as = reshape_as
Tensor.flatten = flatten
Tensor.unflatten = unflatten
Tensor.ravel = ravel
Tensor.expand = expand
Tensor.expand_as = expand_as
Tensor.broadcast_to = broadcast_to
Tensor.permute = permute
Tensor.transpose = transpose
Tensor.swapaxes = Tensor.swapdims = transpose
Tensor.t = t
Tensor.adjoint = adjoint
Tensor.movedim = Tensor.moveaxis = movedim
Tensor.squeeze = squeeze
Tensor.unsqueeze = unsqueeze
Tensor.as_strided = as_strided
Tensor.T = property(_T)
Tensor.mT = property(_mT)
Tensor.H = property(_H)
Tensor.mH = property(_mH)
for _fn in (squeeze, unsqueeze, t, transpose, as_strided):
    setattr(Tensor, _fn.__name__ + "_", _inplace_view(_fn, _fn.__name__ + "_"))
Tensor.swapaxes_ = Tensor.swapdims_ = Tensor.transpose_

