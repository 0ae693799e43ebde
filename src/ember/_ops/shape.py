"""Shape ops. View ops return tensors that share memory and the version counter with their base.

# NOTE [ Views ]
# A view op's forward returns a NumPy/CuPy view of its input's array and `as_view` ties the result to the root
# base (`_base`) and to the base's version counter (`_vc`), so an in-place op on any of them is seen by all.
# Views whose layout NumPy cannot express with its own indexing (diagonal, unfold, as_strided) are built with
# as_strided from the exact strides PyTorch computes. Each view op's backward is a "scatter into zeros" op
# (select_backward, slice_backward, diagonal_backward, unfold_backward) whose own backward is the view again,
# so double backward needs nothing more.
"""
import itertools
import math
import operator
import warnings

import numpy as np

from .. import _dtype
from .._backend import XP
from .._dtype import _PROMOTE, FROM_NP
from .._tensor import Size, Tensor, _wrap_dim
from ..autograd.grad_mode import GRAD
from ..autograd.graph import bump_version, counter
from ._dispatch import SAVE_NONE, Op, dispatch, dispatch1
from ._inplace import make_inplace, write_out

__all__ = [
    "adjoint", "alias_copy", "as_strided", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes",
    "broadcast_tensors", "broadcast_to", "cat", "chunk", "clone", "column_stack", "concat", "concatenate", "diag",
    "diag_embed", "diagflat", "diagonal", "dsplit", "dstack", "expand_copy", "flatten", "flip", "fliplr", "flipud",
    "hsplit", "hstack", "imag", "meshgrid", "moveaxis", "movedim", "narrow", "permute", "ravel", "real",
    "repeat_interleave", "reshape", "roll", "rot90", "row_stack", "select", "split", "squeeze", "stack", "swapaxes",
    "swapdims", "t", "tensor_split", "tile", "transpose", "tril", "triu", "unbind", "unflatten", "unsqueeze",
    "view_as_complex", "view_as_real", "vsplit", "vstack",
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
    from .._tensor_str import legacy_type_name
    return legacy_type_name(x)


def _scalar_name(np_dtype):
    from .._tensor_str import SCALAR_NAMES
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
UNSAFE_VIEW = Op("_unsafe_view", lambda x, shape: x.reshape(shape), _reshape_bwd, SAVE_NONE)
RESHAPE_ALIAS = Op("_reshape_alias", _view_fwd, _reshape_bwd, SAVE_NONE)


def view(self, *shape, dtype=None):
    """Same as `torch.Tensor.view`: view(*shape) or view(dtype)."""
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


def reshape(input, *shape):
    """Same as `torch.reshape`: a view when the layout allows it, else a copy."""
    d = input._data
    shape = infer_size(_size_args(shape, "reshape"), d.size)
    if d.flags.c_contiguous or shape == d.shape:
        return view_op(VIEW, input, shape)
    y = d.view()
    try:
        y.shape = shape
    except AttributeError:
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


def permute(input, *dims):
    """Same as `torch.permute`."""
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


def expand(self, *sizes):
    """Same as `torch.Tensor.expand`; expanded views are read-only in ember (torch raises on most writes)."""
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


def squeeze(input, dim=None):
    """Same as `torch.squeeze` (dim: None, an int or a tuple of ints)."""
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


def unsqueeze(input, dim):
    """Same as `torch.unsqueeze`."""
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


def unbind(input, dim=0):
    """Same as `torch.unbind`."""
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


def chunk(input, chunks, dim=0):
    """Same as `torch.chunk`."""
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
# diagonal, unfold, as_strided

def _diag_view(x, offset, d1, d2):
    """x's diagonal as a writeable view laid out as torch lays it out (the diagonal last)."""
    if x.__class__ is np.ndarray:
        y = x.diagonal(offset, d1, d2)
        if x.flags.writeable:  # NumPy hands out diagonals read-only, for backward compatibility only
            y.flags.writeable = True
        if y.size or not offset:
            return y
    shape, st = x.shape, x.strides
    if offset >= 0:
        length, at, skip = min(shape[d1], shape[d2] - offset), d2, offset
    else:
        length, at, skip = min(shape[d1] + offset, shape[d2]), d1, -offset
    length = max(length, 0)
    keep = [i for i in range(x.ndim) if i != d1 and i != d2]
    if length > 0 and skip:
        x = x[(slice(None),) * at + (slice(skip, None),)]
    return _strided(x, tuple(shape[i] for i in keep) + (length,), tuple(st[i] for i in keep) + (st[d1] + st[d2],))


def _diagonal_backward_fwd(g, shape, offset, d1, d2):
    z = _zeros_arr(g, shape)
    _diag_view(z, offset, d1, d2)[...] = g
    return z


DIAGONAL = Op("diagonal", _diag_view,
              lambda ctx, g: dispatch1(DIAGONAL_BACKWARD, g, ctx.shapes[0], *ctx.attrs))
DIAGONAL_BACKWARD = Op("diagonal_backward", _diagonal_backward_fwd,
                       lambda ctx, g: view_op(DIAGONAL, g, *ctx.attrs[1:]))
DIAGONAL_COPY = Op("diagonal_copy", lambda x, o, d1, d2: _diag_view(x, o, d1, d2).copy(),
                   lambda ctx, g: dispatch1(DIAGONAL_BACKWARD, g, ctx.shapes[0], *ctx.attrs),
                   node_name="DiagonalBackward0_copy")


def _diag_dims(n, offset, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return operator.index(offset), d1, d2


def diagonal(input, offset=0, dim1=0, dim2=1):
    """Same as `torch.diagonal`."""
    return view_op(DIAGONAL, input, *_diag_dims(input._data.ndim, offset, dim1, dim2))


def _unfold_fwd(x, dim, size, step):
    if x.ndim == 0:
        return x.reshape(1)[:size]
    shape, st = x.shape, x.strides
    count = (shape[dim] - size) // step + 1
    return _strided(x, shape[:dim] + (count,) + shape[dim + 1:] + (size,),
                    st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],))


def _unfold_backward_fwd(g, shape, dim, size, step):
    # each input element gets the sum of the window entries that read it
    z = _zeros_arr(g, shape)
    if not shape:
        z[...] = g.sum()
        return z
    zm = np.moveaxis(z, dim, -1) if z.__class__ is np.ndarray else XP[z.__class__].moveaxis(z, dim, -1)
    gm = np.moveaxis(g, dim, -2) if g.__class__ is np.ndarray else XP[g.__class__].moveaxis(g, dim, -2)
    count = g.shape[dim]
    if count <= size:
        for i in range(count):
            zm[..., i * step:i * step + size] += gm[..., i, :]
    else:
        for k in range(size):
            zm[..., k:k + step * (count - 1) + 1:step] += gm[..., k]
    return z


UNFOLD = Op("unfold", _unfold_fwd, lambda ctx, g: dispatch1(UNFOLD_BACKWARD, g, ctx.shapes[0], *ctx.attrs))
UNFOLD_BACKWARD = Op("unfold_backward", _unfold_backward_fwd, lambda ctx, g: view_op(UNFOLD, g, *ctx.attrs[1:]))


def unfold(self, dimension, size, step):
    """Same as `torch.Tensor.unfold`."""
    d = self._data
    dim = _wrap_dim(dimension, d.ndim)
    n = d.shape[dim] if d.ndim else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return view_op(UNFOLD, self, dim, size, step)


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
        raise RuntimeError(f"setStorage: sizes {_fmt(size)}, strides {_fmt(stride)},"
                           f" storage offset {storage_offset}, and itemsize {input._data.itemsize} requiring a "
                           f"storage size of {need * input._data.itemsize} are out of bounds for storage of size "
                           f"{base._data.size * input._data.itemsize}")
    return view_op(AS_STRIDED, input, size, stride, storage_offset, base._data)


# ----------------------------------------------------------------------------------------------------------------
# complex views

def _complex_of(re, im):
    return view_as_complex(stack([re, im], -1))


REAL = Op("real", lambda x: x.real, lambda ctx, g: _complex_of(g, _zeros(g._data.shape, g)),
          node_name="SelectBackward0")
IMAG = Op("imag", lambda x: x.imag, lambda ctx, g: _complex_of(_zeros(g._data.shape, g), g),
          node_name="SelectBackward0")


def real(input):
    """Same as `torch.real`: a view of the real parts; a real tensor itself."""
    if input._data.dtype.kind != "c":
        return input
    return view_op(REAL, input)


def imag(input):
    """Same as `torch.imag`."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_op(IMAG, input)


_REAL_OF = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}
_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}

VIEW_AS_REAL = Op("view_as_real", lambda x: x[..., None].view(_REAL_OF[x.dtype]),
                  lambda ctx, g: view_as_complex(g.contiguous()))
VIEW_AS_COMPLEX = Op("view_as_complex", lambda x: x.view(_COMPLEX_OF[x.dtype])[..., 0],
                     lambda ctx, g: view_as_real(g))


def view_as_real(input):
    """Same as `torch.view_as_real`."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return view_op(VIEW_AS_REAL, input)


def view_as_complex(input):
    """Same as `torch.view_as_complex` (float32 and float64; ember has no complex32)."""
    d = input._data
    if d.dtype not in _COMPLEX_OF:
        raise RuntimeError(f"view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_scalar_name(d.dtype)}")
    if d.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if d.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    st = d.strides
    isz = d.itemsize
    if st[-1] != isz:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * isz) for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return view_op(VIEW_AS_COMPLEX, input)


ALIAS_COPY = Op("alias_copy", lambda x: x.copy(), lambda ctx, g: g, node_name="AliasBackward0_copy")


def alias_copy(input, *, out=None):
    """Same as `torch.alias_copy`."""
    r = dispatch1(ALIAS_COPY, input)
    return r if out is None else write_out(r, out, "alias_copy")


def clone(input, *, memory_format=None):
    """Same as `torch.clone`."""
    return input.clone()


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
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{tensors[0].device} and {x.device}!")
        if d.dtype != dt:
            same = False
            dt = _PROMOTE[(FROM_NP[dt], FROM_NP[d.dtype])].np
    return None if same else dt


def cat(tensors, dim=0, *, out=None):
    """Same as `torch.cat`: 1-D empty tensors are skipped, as torch skips them."""
    if tensors.__class__ is not list and tensors.__class__ is not tuple:
        _check_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
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
            return r if out is None else write_out(r, out, "cat")
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
    if not keep:
        d = tensors[0]._data
        _wrap_dim(dim, 1)
        r = Tensor._make(XP[d.__class__].empty((0,), dtype=dt if dt is not None else d.dtype))
    else:
        dim = _check_cat_shapes(tensors, keep, dim)
        skip = None if len(keep) == len(tensors) else tuple(x._data.shape == (0,) for x in tensors)
        r = dispatch(CAT, tuple(tensors), dim, dt, skip)
    return r if out is None else write_out(r, out, "cat")


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


def stack(tensors, dim=0, *, out=None):
    """Same as `torch.stack`."""
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


# ----------------------------------------------------------------------------------------------------------------
# flip, roll, rot90

def _flip_fwd(x, dims, key):
    return x[key].copy()


FLIP = Op("flip", _flip_fwd, lambda ctx, g: dispatch1(FLIP, g, *ctx.attrs), SAVE_NONE)
_REV = slice(None, None, -1)
_ALL = slice(None)


def _flip(input, dims):
    return dispatch1(FLIP, input, dims, tuple(_REV if i in dims else _ALL for i in range(max(dims, default=-1) + 1)))


def flip(input, dims):
    """Same as `torch.flip`."""
    n = input._data.ndim
    dims = tuple(_wrap_dim(d, n) for d in _dims(dims))
    if len(set(dims)) != len(dims):
        dup = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    return _flip(input, dims)


def fliplr(input):
    """Same as `torch.fliplr`."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flip(input, (1,))


def flipud(input):
    """Same as `torch.flipud`."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flip(input, (0,))


def _roll_fwd(x, shifts, dims):
    xp = np if x.__class__ is np.ndarray else XP[x.__class__]
    return xp.roll(x, shifts, axis=dims)


ROLL = Op("roll", _roll_fwd,
          lambda ctx, g: dispatch1(ROLL, g, tuple(-s for s in ctx.attrs[0]), ctx.attrs[1]), SAVE_NONE)


def roll(input, shifts, dims=None):
    """Same as `torch.roll`."""
    shifts = (shifts,) if not isinstance(shifts, (list, tuple)) else tuple(shifts)
    dims = () if dims is None else (dims,) if not isinstance(dims, (list, tuple)) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    shifts = tuple(operator.index(s) for s in shifts)
    n = input._data.ndim
    return dispatch1(ROLL, input, shifts, tuple(_wrap_dim(d, n) for d in dims) if dims else None)


def _rot90_fwd(x, k, d0, d1):
    xp = np if x.__class__ is np.ndarray else XP[x.__class__]
    # the layouts torch returns: k=1 and k=3 give a transposed (non-contiguous) copy
    if k == 1:
        return xp.flip(x, d1).copy().swapaxes(d0, d1)
    if k == 2:
        return xp.flip(x, (d0, d1)).copy()
    if k == 3:
        return xp.flip(x, d0).copy().swapaxes(d0, d1)
    return x.copy()


ROT90 = Op("rot90", _rot90_fwd, lambda ctx, g: dispatch1(ROT90, g, (4 - ctx.attrs[0]) % 4, *ctx.attrs[1:]))


def rot90(input, k=1, dims=(0, 1)):
    """Same as `torch.rot90`."""
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input._data.ndim
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return dispatch1(ROT90, input, operator.index(k) % 4, d0, d1)


# ----------------------------------------------------------------------------------------------------------------
# repeat, tile, repeat_interleave

def _tile_fwd(x, reps):
    xp = np if x.__class__ is np.ndarray else XP[x.__class__]
    return xp.tile(x, reps)


def _repeat_bwd(ctx, g):
    # y is x tiled: view g as (r0, s0, r1, s1, ...) and sum the r axes
    reps = ctx.attrs[0]
    shape = ctx.shapes[0]
    if not reps:
        return g
    pad = (1,) * (len(reps) - len(shape)) + tuple(shape)
    blocks = []
    for r, s in zip(reps, pad):
        blocks += [r, s]
    return g.reshape(blocks).sum(tuple(range(0, 2 * len(reps), 2))).reshape(shape)


REPEAT = Op("repeat", _tile_fwd, _repeat_bwd, SAVE_NONE)


def repeat(self, *sizes):
    """Same as `torch.Tensor.repeat`."""
    sizes = _size_args(sizes, "repeat")
    shape = self._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    pad = (1,) * (len(sizes) - len(shape)) + shape
    out = [r * s for r, s in zip(sizes, pad)]
    neg = [v for v in out if v < 0]
    if neg:
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg[0]}: {_fmt(out)}")
    return dispatch1(REPEAT, self, sizes)


def tile(input, dims):
    """Same as `torch.tile`."""
    dims = _dims(dims)
    n = input._data.ndim
    if len(dims) < n:
        dims = (1,) * (n - len(dims)) + dims
    return repeat(input, dims)


def _ri_fwd(x, reps, dim):
    xp = np if x.__class__ is np.ndarray else XP[x.__class__]
    return xp.repeat(x, reps, axis=dim)


def _ri_int_bwd(ctx, g):
    reps, dim = ctx.attrs
    shape = ctx.shapes[0]
    return g.reshape(shape[:dim] + (shape[dim], reps) + shape[dim + 1:]).sum(dim + 1)


def _ri_backward_fwd(g, reps, dim, n):
    # segment sums of g along dim: out[i] = sum of the reps[i] copies of input i
    xp = np if g.__class__ is np.ndarray else XP[g.__class__]
    gm = xp.moveaxis(g, dim, 0)
    out = xp.zeros((n,) + gm.shape[1:], dtype=g.dtype)
    nz = reps > 0
    if nz.any():
        starts = xp.concatenate([xp.zeros(1, dtype=reps.dtype), xp.cumsum(reps)[:-1]])
        out[nz] = xp.add.reduceat(gm, starts[nz], axis=0)
    return xp.moveaxis(out, 0, dim)


# torch builds the int-repeats case from unsqueeze + expand + view, hence its grad_fn name
RI_INT = Op("repeat_interleave", _ri_fwd, _ri_int_bwd, SAVE_NONE, node_name="ViewBackward0")
RI_TENSOR = Op("repeat_interleave", _ri_fwd,
               lambda ctx, g: dispatch1(RI_BACKWARD, g, ctx.attrs[0], ctx.attrs[1], ctx.shapes[0][ctx.attrs[1]]),
               SAVE_NONE, node_name="IndexSelectBackward0")
RI_BACKWARD = Op("repeat_interleave_backward", _ri_backward_fwd,
                 lambda ctx, g: dispatch1(RI_TENSOR, g, ctx.attrs[0], ctx.attrs[1]), SAVE_NONE)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Same as `torch.repeat_interleave` (also the one-argument form on a repeats tensor)."""
    if repeats is None:
        return _ri_indices(input, output_size)
    if dim is None:
        input = reshape(input, (-1,))
        dim = 0
    dim = _wrap_dim(dim, input._data.ndim)
    if input._data.ndim == 0:
        input = reshape(input, (1,))
    if isinstance(repeats, Tensor):
        r = _ri_repeats(repeats, input._data.shape[dim], dim)
        if not isinstance(r, int):
            _check_output_size(int(r.sum()), output_size)
            return dispatch1(RI_TENSOR, input, r, dim)
        repeats = r
    repeats = operator.index(repeats)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    _check_output_size(repeats * input._data.shape[dim], output_size)
    return dispatch1(RI_INT, input, repeats, dim)


def _ri_repeats(repeats, n, dim):
    """A repeats tensor as an int (one element) or an int64 array of length n."""
    d = repeats._data
    if d.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if d.dtype.kind not in "iu":
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_scalar_name(d.dtype)}'")
    if d.size == 1:
        return int(d.reshape(()))
    if d.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{d.shape[0]} and input.size({dim}) = {n}")
    r = np.asarray(d if d.__class__ is np.ndarray else d.get(), dtype=np.int64)
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    return r


def _check_output_size(n, output_size):
    if output_size is not None and output_size != n:
        raise RuntimeError("allocated size does not match required size")


def _ri_indices(repeats, output_size):
    d = repeats._data
    if d.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if d.dtype.kind not in "iu":
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_scalar_name(d.dtype)}'")
    r = d.reshape(-1)
    xp = XP[d.__class__]
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    _check_output_size(int(r.sum()), output_size)
    return Tensor._make(xp.repeat(xp.arange(r.shape[0], dtype=d.dtype), r))


# ----------------------------------------------------------------------------------------------------------------
# triangles and diagonals

def _tril_fwd(x, k):
    return (np if x.__class__ is np.ndarray else XP[x.__class__]).tril(x, k)


def _triu_fwd(x, k):
    return (np if x.__class__ is np.ndarray else XP[x.__class__]).triu(x, k)


TRIL = Op("tril", _tril_fwd, lambda ctx, g: dispatch1(TRIL, g, ctx.attrs[0]), SAVE_NONE)
TRIU = Op("triu", _triu_fwd, lambda ctx, g: dispatch1(TRIU, g, ctx.attrs[0]), SAVE_NONE)


def tril(input, diagonal=0, *, out=None):
    """Same as `torch.tril`."""
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    r = dispatch1(TRIL, input, operator.index(diagonal))
    return r if out is None else write_out(r, out, "tril")


def triu(input, diagonal=0, *, out=None):
    """Same as `torch.triu`."""
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    r = dispatch1(TRIU, input, operator.index(diagonal))
    return r if out is None else write_out(r, out, "triu")


def _diag_embed_fwd(x, offset, d1, d2):
    n = x.shape[-1] + abs(offset)
    shape = list(x.shape[:-1])
    lo, hi = min(d1, d2), max(d1, d2)
    shape.insert(lo, n)
    shape.insert(hi, n)
    z = _zeros_arr(x, tuple(shape))
    _diag_view(z, offset, d1, d2)[...] = x
    return z


DIAG_EMBED = Op("diag_embed", _diag_embed_fwd, lambda ctx, g: view_op(DIAGONAL, g, *ctx.attrs), SAVE_NONE)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Same as `torch.diag_embed`."""
    if input._data.ndim == 0:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got -1)")
    return dispatch1(DIAG_EMBED, input, *_diag_dims(input._data.ndim + 1, offset, dim1, dim2))


def diag(input, diagonal=0, *, out=None):
    """Same as `torch.diag`."""
    n = input._data.ndim
    if n == 1:
        r = dispatch1(DIAG_EMBED, input, operator.index(diagonal), 0, 1)
    elif n == 2:
        r = dispatch1(DIAGONAL_COPY, input, operator.index(diagonal), 0, 1)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")
    return r if out is None else write_out(r, out, "diag")


def diagflat(input, offset=0):
    """Same as `torch.diagflat`."""
    return dispatch1(DIAG_EMBED, reshape(input, (-1,)), operator.index(offset), 0, 1)


# ----------------------------------------------------------------------------------------------------------------
# Tensor methods

def _method_dims(fn):
    """Tensor.fn(*dims) / Tensor.fn(dims) / Tensor.fn(dims=...) from fn(input, dims)."""
    def method(self, *dims, **kwargs):
        if kwargs:
            dims = (kwargs.pop("dims"),)
        return fn(self, dims[0] if len(dims) == 1 else dims)
    method.__name__ = fn.__name__
    method.__doc__ = f"Same as `torch.Tensor.{fn.__name__}`."
    return method


def _inplace_view(fn, name):
    """The in-place variant of a view op (squeeze_, t_, ...): self takes the view's layout and history."""
    def method(self, *args, **kwargs):
        if GRAD[0] and self._requires_grad and self._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        r = fn(self, *args, **kwargs)
        self._data = r._data
        if r._grad_fn is not None:
            self._grad_fn, self._output_nr = r._grad_fn, r._output_nr
        bump_version(self, name)
        return self
    method.__name__ = name
    method.__doc__ = f"Same as `torch.Tensor.{name}`."
    return method


def _set_real(self, value):
    real(self).copy_(value) if self._data.dtype.kind == "c" else self.copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


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
Tensor.narrow = narrow
Tensor.select = select
Tensor.unbind = unbind
Tensor.split = split
Tensor.chunk = chunk
Tensor.tensor_split = tensor_split
Tensor.hsplit = hsplit
Tensor.vsplit = vsplit
Tensor.dsplit = dsplit
Tensor.diagonal = diagonal
Tensor.unfold = unfold
Tensor.real = property(real, _set_real)
Tensor.imag = property(imag, _set_imag)
Tensor.flip = _method_dims(flip)
Tensor.fliplr = fliplr
Tensor.flipud = flipud
Tensor.roll = roll
Tensor.rot90 = rot90
Tensor.repeat = repeat
Tensor.tile = _method_dims(tile)
Tensor.repeat_interleave = repeat_interleave
Tensor.tril = tril
Tensor.triu = triu
Tensor.tril_ = make_inplace(tril, "tril_")
Tensor.triu_ = make_inplace(triu, "triu_")
Tensor.diag = diag
Tensor.diag_embed = diag_embed
Tensor.diagflat = diagflat
for _fn in (squeeze, unsqueeze, t, transpose, as_strided):
    setattr(Tensor, _fn.__name__ + "_", _inplace_view(_fn, _fn.__name__ + "_"))
Tensor.swapaxes_ = Tensor.swapdims_ = Tensor.transpose_
