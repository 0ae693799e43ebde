"""Vector and matrix norms (the ops behind ember.linalg.vector_norm, matrix_norm and norm) and cdist."""
import math

import numpy as np

from .._autocast import AUTOCAST, cast_args, cast_one
from .._tensor import Tensor, _wrap_dim
from .._dtype import SCALAR_NAMES
from ._dispatch import SAVE_BOTH, Op, dispatch1, dispatch2
from ._inplace import write_out
from ._linalg_util import _bad_dtype, _check_float, _const, _mT, _pow, _type_name
from ._reduce_util import expand_grad
from .decomp import linalg_svdvals
from .linalg import matmul

__all__ = ["cdist", "dist", "renorm"]


# ---------------------------------------------------------------- norms
def _vnorm_fwd(x, ord, dims, keepdim):
    if x.ndim == 0:
        dims = None
    low = x.dtype.kind == "V" or x.dtype == np.float16
    a = np.abs(x) if (x.dtype.kind == "c" or ord != 2) else x
    if low:
        a = a.astype(np.float32)
    if ord == 2:
        r = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    elif ord == math.inf:
        r = np.max(a, axis=dims, keepdims=keepdim)
    elif ord == -math.inf:
        r = np.min(a, axis=dims, keepdims=keepdim)
    elif ord == 0:
        r = np.sum(a != 0, axis=dims, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        r = np.sum(a, axis=dims, keepdims=keepdim)
    else:
        r = np.power(np.sum(np.power(a, ord), axis=dims, keepdims=keepdim), 1.0 / ord)
    rt = x.real.dtype if x.dtype.kind == "c" else x.dtype
    return r.astype(rt, copy=False)  # NumPy scalars have astype too


def _sgn_np(x):
    if x.dtype.kind == "c":
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a))
    return np.sign(x)


def _vnorm_bwd(ctx, g):
    x, = ctx.inputs
    y, = ctx.outputs
    ord, dims, keepdim = ctx.attrs
    shape = ctx.shapes[0]
    if x._data.ndim == 0:
        dims = None
    if ord == 0:
        return None
    # the masks and signs below are ops (comparisons, sign), not arrays computed aside: ember.compile captures them
    g = expand_grad(g, shape, dims, keepdim)
    real = x._data.dtype.kind != "c"
    sgn = x.sign() if real else _const(x, _sgn_np(x._data))
    if ord == 1:
        return g * sgn
    y = expand_grad(y, shape, dims, keepdim)
    dt = y.dtype
    if ord == 2:  # x / |x|, and 0 at the zero vector (as torch)
        return g * x / (y + (y == 0).to(dt))
    if ord == math.inf or ord == -math.inf:  # split evenly between the entries that attain the max / min
        mask = (x.abs() == y).to(dt)
        count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
        return g * sgn * (mask / count)
    # d ||x||_p = sgn(x) |x|^(p-1) / ||x||^(p-1)
    ax = x * sgn if real else _const(x, np.abs(x._data))
    nz = (x != 0).to(dt)
    return g * sgn * nz * _pow(ax + (1 - nz), ord - 1) / _pow(y + (y == 0).to(dt), ord - 1)


VNORM = Op("linalg_vector_norm", _vnorm_fwd, _vnorm_bwd, SAVE_BOTH)


def _dims(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return (_wrap_dim(dim, ndim),)
    dims = tuple(_wrap_dim(d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims if dims else None


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """Same as `torch.linalg.vector_norm`."""
    if isinstance(ord, str) or not isinstance(ord, (int, float, np.number)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not {type(ord).__name__}")
    if dtype is not None:
        if dtype._cat < 2:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got "
                               f"{SCALAR_NAMES[dtype.name]}")
        x = x.to(dtype)
    elif AUTOCAST[0]:
        x = cast_one("linalg_vector_norm", x)
    k = x._data.dtype.kind
    if k != "f" and k != "c" and k != "V":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(x._data)}")
    dims = _dims(dim, x._data.ndim)
    if (ord < 0 or ord == math.inf) and x._data.size == 0:
        if dims is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_str(ord)} norm on an empty tensor "
                               f"because the operation does not have an identity")
        for d in dims:
            if x._data.shape[d] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_str(ord)} norm on the dimension "
                                   f"{d}because this dimension is empty and the operation does not have an "
                                   f"identity")
    r = dispatch1(VNORM, x, float(ord), dims, keepdim)
    return r if out is None else write_out(r, out, "linalg_vector_norm")


def _ord_str(ord):
    return "inf" if ord == math.inf else "-inf" if ord == -math.inf else f"{ord:g}"


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Same as `torch.linalg.matrix_norm`."""
    if A._data.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if isinstance(dim, int):
        raise TypeError("linalg_matrix_norm(): argument 'dim' must be tuple of ints, not int")
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {_dims_str(dim)}")
    d0, d1 = (_wrap_dim(d, A._data.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        r = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord == "nuc" or ord in (2, -2):
        r = _svd_norm(A, ord, d0, d1, keepdim)
    elif ord in (1, -1, math.inf, -math.inf):
        k = A._data.dtype.kind
        if k != "f" and k != "c":
            raise _bad_dtype("linalg.matrix_norm", A)
        # 1: max column sum of |A|; inf: max row sum
        summed, other = (d0, d1) if abs(ord) == 1 else (d1, d0)
        s = vector_norm(A, 1, summed, True)
        if ord > 0 and A._data.shape[other] == 0:  # the largest of no sums: 0, as torch
            r = s.sum(other, keepdim=True)
        else:
            r = vector_norm(s, math.inf if ord > 0 else -math.inf, other, True)
        if not keepdim:
            r = r.squeeze((d0, d1))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return r if out is None else write_out(r, out, "linalg_matrix_norm")


def _dims_str(dim):
    return str(dim) if isinstance(dim, int) else ", ".join(map(str, dim))


def _svd_norm(A, ord, d0, d1, keepdim):
    _check_float(A, "linalg.matrix_norm")
    n = A._data.ndim
    perm = [i for i in range(n) if i not in (d0, d1)] + [d0, d1]
    s = linalg_svdvals(A.permute(perm))
    if ord == "nuc" or ord == 2 and s._data.shape[-1] == 0:  # the largest of no singular values: 0, as torch
        r = s.sum(-1)
    else:  # the largest / smallest singular value; equal ones share the gradient, as torch's amax/amin
        r = s.amax(-1) if ord == 2 else s.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):
    """Same as `torch.linalg.norm`."""
    nd = A._data.ndim
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            r = vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        elif len(dims) == 2:
            r = matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        else:
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                               f"[{', '.join(map(str, dims))}]")
    elif ord is None:
        r = vector_norm(A, 2, None, keepdim, dtype=dtype)
    elif nd == 1:
        r = vector_norm(A, ord, None, keepdim, dtype=dtype)
    elif nd == 2:
        r = matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    else:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{nd}D.")
    return r if out is None else write_out(r, out, "linalg_norm")


# ---------------------------------------------------------------- cdist
def _cdist2_fwd(x1, x2, use_mm):
    if use_mm:
        # |a|^2 + |b|^2 - 2 a.b as one product of padded rows, [-2a, |a|^2, 1] . [b, 1, |b|^2]: torch's rounding
        n1, n2 = np.sum(x1 * x1, -1, keepdims=True), np.sum(x2 * x2, -1, keepdims=True)
        d2 = np.concatenate([-2 * x1, n1, np.ones_like(n1)], -1) @ np.swapaxes(
            np.concatenate([x2, np.ones_like(n2), n2], -1), -1, -2)
        return np.sqrt(np.maximum(d2, 0))
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return np.sqrt(np.sum(diff * diff, -1))


def _cdist2_bwd(ctx, g):
    # d_ij = |x1_i - x2_j|: gx1_i = sum_j w_ij (x1_i - x2_j), w = g / d (0 where d = 0)
    x1, x2 = ctx.inputs
    d, = ctx.outputs
    need = ctx.needs_input_grad
    w = g / (d + _const(d, (d._data == 0).astype(d._data.dtype)))
    gx1 = w.sum(-1).unsqueeze(-1) * x1 - matmul(w, x2) if need[0] else None
    gx2 = w.sum(-2).unsqueeze(-1) * x2 - matmul(_mT(w), x1) if need[1] else None
    return gx1, gx2


CDIST2 = Op("cdist", _cdist2_fwd, _cdist2_bwd, SAVE_BOTH)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Same as `torch.cdist`."""
    if AUTOCAST[0]:
        x1, x2 = cast_args("cdist", (x1, x2))
    a, b = x1._data, x2._data
    if a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D")
    if b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    for t, name in ((a, "X1"), (b, "X2")):
        if t.dtype.kind != "f":
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {_type_name(t)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(a)} but found {_type_name(b)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if p == 2:
        if compute_mode == modes[0]:
            use_mm = a.shape[-2] > 25 or b.shape[-2] > 25
        else:
            use_mm = compute_mode == modes[1]
        return dispatch2(CDIST2, x1, x2, use_mm)
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


def dist(input, other, p=2):
    """Same as `torch.dist`: the p-norm of input - other."""
    return vector_norm(input - other, p)


def renorm(input, p, dim, maxnorm, *, out=None):
    """Same as `torch.renorm`."""
    nd = input._data.ndim
    if nd <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    dim = _wrap_dim(dim, nd)
    norms = vector_norm(input, p, tuple(d for d in range(nd) if d != dim), True)
    factor = (maxnorm / (norms + 1e-7)).where(norms > maxnorm, 1.0).to(input.dtype)
    r = input * factor
    return r if out is None else write_out(r, out, "renorm")


def _renorm_(self, p, dim, maxnorm):
    """Same as `torch.Tensor.renorm_`."""
    return self.copy_(renorm(self, p, dim, maxnorm))


Tensor.dist = dist
Tensor.renorm = renorm
Tensor.renorm_ = _renorm_
