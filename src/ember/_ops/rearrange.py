"""Ops that pick out or rearrange elements: diagonals and triangles (diagonal, diag, diag_embed, diagflat, tril,
triu), unfold, flip/roll/rot90, repeat/tile/repeat_interleave, the complex views (real, imag, view_as_real,
view_as_complex), alias_copy and clone."""
import operator

import numpy as np

from .._backend import XP
from .._tensor import Tensor, _wrap_dim
from ._dispatch import SAVE_NONE, Op, dispatch1
from ._inplace import make_inplace, write_out
from .join import stack
from .shape import _dims, _fmt, _scalar_name, _size_args, _strided, _zeros, _zeros_arr, reshape, view_op

__all__ = [
    "alias_copy", "clone", "diag", "diag_embed", "diagflat", "diagonal", "flip", "fliplr", "flipud", "imag", "real",
    "repeat_interleave", "roll", "rot90", "tile", "tril", "triu", "view_as_complex", "view_as_real",
]


# ----------------------------------------------------------------------------------------------------------------
# diagonal, unfold

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


# ----------------------------------------------------------------------------------------------------------------
# triangles and diagonals

def _triangle(name, x, k):
    """np.tril/np.triu in x's dtype. CuPy's answer cupy.where(...), which has no bfloat16 loop (float32 comes
    back): there bfloat16 is cut as its bit patterns (bfloat16 zero is all zero bits)."""
    if x.__class__ is np.ndarray:
        return getattr(np, name)(x, k)
    xp = XP[x.__class__]
    if x.dtype.kind == "V":
        return getattr(xp, name)(x.view(np.uint16), k).view(x.dtype)
    return getattr(xp, name)(x, k)


def _tril_fwd(x, k):
    return _triangle("tril", x, k)


def _triu_fwd(x, k):
    return _triangle("triu", x, k)


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
    if x.__class__ is np.ndarray:
        return np.repeat(x, reps, axis=dim)
    return XP[x.__class__].repeat(x, reps if reps.__class__ is int else reps.tolist(), axis=dim)  # CuPy: a list


def _ri_int_bwd(ctx, g):
    reps, dim = ctx.attrs
    shape = ctx.shapes[0]
    return g.reshape(shape[:dim] + (shape[dim], reps) + shape[dim + 1:]).sum(dim + 1)


def _ri_backward_fwd(g, reps, dim, n):
    # segment sums of g along dim: out[i] = sum of the reps[i] copies of input i
    if g.__class__ is not np.ndarray:  # CuPy has no reduceat: differences of a running sum
        xp = XP[g.__class__]
        gm = xp.moveaxis(g, dim, 0)
        ends = xp.cumsum(xp.asarray(reps))
        cs = xp.concatenate([xp.zeros((1,) + gm.shape[1:], g.dtype), xp.cumsum(gm, axis=0, dtype=g.dtype)])
        return xp.moveaxis(cs[ends] - cs[ends - xp.asarray(reps)], 0, dim)
    xp = np
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
    if not d.size:  # NumPy gives empty arrays zero strides; torch's are contiguous
        return view_op(VIEW_AS_COMPLEX, input)
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


def _set_real(self, value):
    real(self).copy_(value) if self._data.dtype.kind == "c" else self.copy_(value)


def _set_imag(self, value):
    imag(self).copy_(value)


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
