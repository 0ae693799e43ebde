"""Linear algebra products: the matmul family, addmm and friends, tensordot, kron, cross, trace, einsum and
chains of products.

Forwards are NumPy calls (np.matmul goes straight to BLAS); backwards are written with ember ops, so
higher-order gradients work. Inverses and solvers live in solve.py, decompositions in decomp.py and norms in
norms.py; ember.linalg is the public namespace over all of them.
"""
import math

import numpy as np

from .._autocast import AUTOCAST, cast_args
from .._backend import matmul as _matmul_arrays
from .._backend import matmul_bf16
from .._dtype import FROM_NP
from .._tensor import Tensor, _wrap_dim
from ._dispatch import SAVE_INPUTS, SAVE_NONE, Op, dispatch, dispatch1, dispatch2
from ._inplace import make_inplace, write_out
from ._linalg_util import _c_name, _conj, _const, _eye, _mH, _mT, _shape_str, _type_name, _warn_once

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "addbmm",
           "baddbmm", "tensordot", "kron", "cross", "trace", "einsum", "chain_matmul"]


# ---------------------------------------------------------------- matmul family
# NOTE [ matmul gradients ]
# Every product is y = a @ b on matrices (vectors are treated as 1-row / 1-column matrices), so
# ga = g @ b^H and gb = a^H @ g. Broadcast batch dimensions are summed back by the engine.
def _mm_bwd(ctx, g):
    a, b = ctx.inputs
    need = ctx.needs_input_grad
    return (matmul(g, _mH(b)) if need[0] else None, matmul(_mH(a), g) if need[1] else None)


def _dot_bwd(ctx, g):
    a, b = ctx.inputs
    need = ctx.needs_input_grad
    return (g * _conj(b) if need[0] else None, g * _conj(a) if need[1] else None)


def _mv_bwd(ctx, g):
    a, b = ctx.inputs
    need = ctx.needs_input_grad
    return (g.unsqueeze(-1) * _conj(b) if need[0] else None, matmul(_mH(a), g) if need[1] else None)


def _matmul_nd_bwd(ctx, g):
    a, b = ctx.inputs
    need = ctx.needs_input_grad
    a1, b1 = a._data.ndim == 1, b._data.ndim == 1
    a2 = a.unsqueeze(0) if a1 else a
    b2 = b.unsqueeze(-1) if b1 else b
    if a1:
        g = g.unsqueeze(-2)
    if b1:
        g = g.unsqueeze(-1)
    ga = gb = None
    if need[0]:
        ga = matmul(g, _mH(b2))
        if a1:
            ga = ga.squeeze(-2)
    if need[1]:
        gb = matmul(_mH(a2), g)
        if b1:
            gb = gb.squeeze(-1)
    return ga, gb


MM = Op("mm", _matmul_arrays, _mm_bwd, SAVE_INPUTS)
BMM = Op("bmm", _matmul_arrays, _mm_bwd, SAVE_INPUTS)
DOT = Op("dot", _matmul_arrays, _dot_bwd, SAVE_INPUTS)
MV = Op("mv", _matmul_arrays, _mv_bwd, SAVE_INPUTS)
MATMUL_ND = Op("matmul", _matmul_arrays, _matmul_nd_bwd, SAVE_INPUTS, node_name="UnsafeViewBackward0")
MATMUL_VM = Op("matmul", _matmul_arrays, _matmul_nd_bwd, SAVE_INPUTS, node_name="SqueezeBackward4")
# torch returns bfloat16 where NumPy's product of bfloat16 arrays is float32
_BF16 = {op: Op(op.name, matmul_bf16, op.bwd, op.save, node_name=op.node_name)
         for op in (MM, BMM, DOT, MV, MATMUL_ND, MATMUL_VM)}


def _matmul_dtype_error(a, b):
    na, nb = a.ndim, b.ndim
    if na == 1 and nb == 1:
        return RuntimeError(f"dot : expected both vectors to have same dtype, but found {_type_name(a)} and "
                            f"{_type_name(b)}")
    if na == 2 and nb == 1:
        return RuntimeError(f"addmv input tensors must have the same dtype, but got {_type_name(a)}, "
                            f"{_type_name(a)}, and {_type_name(b)}")
    return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_c_name(a)} != {_c_name(b)}")


def _not_implemented(name, a):
    return NotImplementedError(f"\"{name}\" not implemented for '{_type_name(a)}'")


def _matmul_shape_error(a, b):
    """torch's message for incompatible matmul operands (computed only after NumPy refused them)."""
    sa, sb = a.shape, b.shape
    na, nb = len(sa), len(sb)
    if na == 1 and nb == 1:
        return RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
                            f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
    if nb == 1:  # folded to a matrix-vector product
        rows = math.prod(sa[:-1])
        return RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})")
    if nb == 2:  # folded to a matrix-matrix product (a vector as a 1-row matrix)
        return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({math.prod(sa[:-1])}x{sa[-1]} and "
                            f"{_shape_str(sb)})")
    ba, bb = sa[:-2] if na >= 2 else (), sb[:-2]
    n = max(len(ba), len(bb))
    pa, pb = (1,) * (n - len(ba)) + ba, (1,) * (n - len(bb)) + bb
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                f"non-singleton dimension {i}")
    batch = math.prod(max(x, y) for x, y in zip(pa, pb))
    k = sa[-1]
    return RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{batch}, {k}] but got: "
                        f"[{batch}, {sb[-2]}].")


# ember.sparse registers its tensor class and product here (NOTE [ Sparse tensors ]): products with a sparse
# operand go there
SPARSE_CLASSES = set()
SPARSE_MM = [None]


def _out_or(r, out, name):
    return r if out is None else write_out(r, out, name)


def _matmul(input, other):
    if input.__class__ in SPARSE_CLASSES or other.__class__ in SPARSE_CLASSES:
        return SPARSE_MM[0](input, other)
    if AUTOCAST[0]:
        input, other = cast_args("matmul", (input, other))
    a, b = input._data, other._data
    if a.dtype is not b.dtype and a.dtype != b.dtype:
        raise _matmul_dtype_error(a, b)
    na, nb = a.ndim, b.ndim
    if na == 2 and nb == 2:
        op = MM
    elif na == 1:
        op = DOT if nb == 1 else MATMUL_VM if nb == 2 else MATMUL_ND
    elif nb == 1:
        op = MV if na == 2 else MATMUL_ND
    elif na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D")
    else:
        op = MATMUL_ND
    k = a.dtype.kind
    if k == "b" or k == "V":
        if k == "b":
            raise _not_implemented("dot" if op is DOT else "addmm_impl_cpu_", a)
        op = _BF16[op]
    try:
        return dispatch2(op, input, other)
    except ValueError:
        if na == 0 or nb == 0:
            raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {na}D and "
                               f"{nb}D") from None
        raise _matmul_shape_error(a, b) from None


def matmul(input, other, *, out=None):
    """Same as `torch.matmul` (no type promotion: both operands must share a dtype, as in torch)."""
    if out is None:
        return _matmul(input, other)
    return write_out(_matmul(input, other), out, "matmul")


def mm(input, mat2, *, out=None):
    """Same as `torch.mm`."""
    if input.__class__ in SPARSE_CLASSES or mat2.__class__ in SPARSE_CLASSES:
        return _out_or(SPARSE_MM[0](input, mat2), out, "mm")
    if AUTOCAST[0]:
        input, mat2 = cast_args("mm", (input, mat2))
    a, b = input._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.dtype != b.dtype:
        raise _matmul_dtype_error(a, b)
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(a.shape)} and "
                           f"{_shape_str(b.shape)})")
    k = a.dtype.kind
    r = dispatch2(MM, input, mat2) if k != "b" and k != "V" else _matmul(input, mat2)
    return r if out is None else write_out(r, out, "mm")


def bmm(input, mat2, *, out=None):
    """Same as `torch.bmm`."""
    if AUTOCAST[0]:
        input, mat2 = cast_args("bmm", (input, mat2))
    a, b = input._data, mat2._data
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(a)} but found {_type_name(b)}")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, "
                           f"{a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    if a.dtype.kind == "b":
        raise _not_implemented("bmm", a)
    r = dispatch2(BMM if a.dtype.kind != "V" else _BF16[BMM], input, mat2)
    return r if out is None else write_out(r, out, "bmm")


def mv(input, vec, *, out=None):
    """Same as `torch.mv`."""
    if AUTOCAST[0]:
        input, vec = cast_args("mv", (input, vec))
    a, b = input._data, vec._data
    if a.ndim != 2 or b.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {b.ndim}")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({a.shape[0]}), mat ({_shape_str(a.shape)}), vec "
                           f"({b.shape[0]})")
    if a.dtype != b.dtype:
        raise _matmul_dtype_error(a, b)
    k = a.dtype.kind
    r = dispatch2(MV, input, vec) if k != "b" and k != "V" else _matmul(input, vec)
    return r if out is None else write_out(r, out, "mv")


def dot(input, tensor, *, out=None):
    """Same as `torch.dot`."""
    if AUTOCAST[0]:
        input, tensor = cast_args("dot", (input, tensor))
    a, b = input._data, tensor._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype != b.dtype:
        raise _matmul_dtype_error(a, b)
    if a.shape[0] != b.shape[0]:
        raise _matmul_shape_error(a, b)
    k = a.dtype.kind
    r = dispatch2(DOT, input, tensor) if k != "b" and k != "V" else _matmul(input, tensor)
    return r if out is None else write_out(r, out, "dot")


def vdot(input, other, *, out=None):
    """Same as `torch.vdot`: the dot product with the first argument conjugated."""
    a, b = input._data, other._data
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    r = matmul(_conj(input), other)
    return r if out is None else write_out(r, out, "vdot")


def inner(input, other, *, out=None):
    """Same as `torch.inner`."""
    a, b = input._data, other._data
    if a.ndim == 0 or b.ndim == 0:
        r = input * other
    else:
        if a.shape[-1] != b.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"[{', '.join(map(str, a.shape))}] and [{', '.join(map(str, b.shape))}]")
        if a.dtype != b.dtype:
            raise RuntimeError("both inputs should have same dtype")
        r = tensordot(input, other, ([-1], [-1])) if b.ndim > 1 or a.ndim > 1 else matmul(input, other)
    return r if out is None else write_out(r, out, "inner")


def outer(input, vec2, *, out=None):
    """Same as `torch.outer`."""
    for t, name in ((input, "self"), (vec2, "vec2")):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t._data.ndim}-D")
    r = input.unsqueeze(1) * vec2
    return r if out is None else write_out(r, out, "outer")


def ger(input, vec2, *, out=None):
    """Same as `torch.ger` (an alias of `outer`)."""
    return outer(input, vec2, out=out)


# ---------------------------------------------------------------- beta * input + alpha * (a @ b)
def _addprod_fwd(c, a, b, beta, alpha, kind):
    if a.dtype.kind == "V" or a.dtype == np.float16:  # computed in float32 (BLAS), rounded once, as torch's CPU
        f = np.float32
        return _addprod_fwd(c.astype(f), a.astype(f), b.astype(f), beta, alpha, kind).astype(a.dtype)
    p = _PRODUCTS[kind](a, b)
    if alpha != 1:
        p = p * alpha
    if beta == 0:  # torch ignores input (even NaN) when beta is 0
        return np.broadcast_to(p, np.broadcast_shapes(p.shape, c.shape)).copy()
    return p + (c if beta == 1 else c * beta)


def _addbmm(a, b):
    return np.matmul(a, b).sum(0)


_PRODUCTS = {"mm": _matmul_arrays, "mv": _matmul_arrays, "bmm": _matmul_arrays, "r": np.multiply.outer, "addbmm": _addbmm}


def _addprod_bwd(ctx, g):
    c, a, b = ctx.inputs
    beta, alpha, kind = ctx.attrs
    need = ctx.needs_input_grad
    gc = ga = gb = None
    if need[0]:
        gc = g if beta == 1 else g * beta
    if alpha != 1:
        g = g * alpha
    if kind == "r":
        ga = matmul(g, _conj(b)) if need[1] else None
        gb = matmul(_mT(g), _conj(a)) if need[2] else None
    elif kind == "mv":
        ga = g.unsqueeze(-1) * _conj(b) if need[1] else None
        gb = matmul(_mH(a), g) if need[2] else None
    else:  # mm, bmm, addbmm (g broadcasts over the batch)
        ga = matmul(g, _mH(b)) if need[1] else None
        gb = matmul(_mH(a), g) if need[2] else None
    return gc, ga, gb


_ADDPROD = {k: Op(n, _addprod_fwd, _addprod_bwd, SAVE_INPUTS)
            for k, n in (("mm", "addmm"), ("mv", "addmv"), ("r", "addr"), ("bmm", "baddbmm"),
                         ("addbmm", "addbmm"))}


def _addprod(kind, name, input, a, b, beta, alpha, out):
    if AUTOCAST[0]:
        input, a, b = cast_args(name, (input, a, b))
    if a._data.dtype != b._data.dtype or input._data.dtype != a._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_type_name(input._data)} and "
                           f"{_type_name(b._data)}" if input._data.dtype != b._data.dtype else
                           f"expected m1 and m2 to have the same dtype, but got: {_c_name(a._data)} != "
                           f"{_c_name(b._data)}")
    if a._data.dtype.kind == "b":
        raise _not_implemented(name, a._data)
    if input._data.dtype.kind in "biu" and (isinstance(beta, float) or isinstance(alpha, float)):
        beta, alpha = int(beta), int(alpha)
    try:
        r = dispatch(_ADDPROD[kind], (input, a, b), beta, alpha, kind)
    except ValueError:
        raise _addprod_error(kind, input, a, b) from None
    return r if out is None else write_out(r, out, name)


def _addprod_error(kind, c, a, b):
    """torch's expand error for an input that does not broadcast to the product's shape."""
    shape = (*a._data.shape[:-1], b._data.shape[-1]) if kind != "r" else (a._data.shape[0], b._data.shape[0])
    if kind == "addbmm":
        shape = shape[1:]
    if kind == "mv":
        shape = a._data.shape[:1]
    cs = c._data.shape
    lead = len(shape) - len(cs)
    dim = next((i for i in range(len(shape) - 1, lead - 1, -1)
                if i >= 0 and cs[i - lead] != 1 and cs[i - lead] != shape[i]), len(shape) - 1)
    return RuntimeError(f"The expanded size of the tensor ({shape[dim]}) must match the existing size "
                        f"({cs[dim - lead]}) at non-singleton dimension {dim}.  Target sizes: "
                        f"[{', '.join(map(str, shape))}].  Tensor sizes: [{', '.join(map(str, cs))}]")


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """Same as `torch.addmm`: beta * input + alpha * (mat1 @ mat2)."""
    if mat1._data.ndim != 2 or mat2._data.ndim != 2:
        raise RuntimeError(f"{'mat1' if mat1._data.ndim != 2 else 'mat2'} must be a matrix, got "
                           f"{(mat1 if mat1._data.ndim != 2 else mat2)._data.ndim}-D tensor")
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_shape_str(mat1._data.shape)} and "
                           f"{_shape_str(mat2._data.shape)})")
    return _addprod("mm", "addmm", input, mat1, mat2, beta, alpha, out)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """Same as `torch.addmv`: beta * input + alpha * (mat @ vec)."""
    if mat._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input._data.ndim}, {mat._data.ndim}, "
                           f"{vec._data.ndim}")
    c = input._data.shape
    if mat._data.shape[1] != vec._data.shape[0] or (len(c) == 1 and c[0] not in (1, mat._data.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({c[0] if c else 1}), mat ({_shape_str(mat._data.shape)}), "
                           f"vec ({vec._data.shape[0]})")
    return _addprod("mv", "addmv", input, mat, vec, beta, alpha, out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """Same as `torch.addr`: beta * input + alpha * outer(vec1, vec2)."""
    if vec1._data.ndim != 1 or vec2._data.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec{1 if vec1._data.ndim != 1 else 2}, but got "
                           f"{(vec1 if vec1._data.ndim != 1 else vec2)._data.ndim}-D")
    return _addprod("r", "addr", input, vec1, vec2, beta, alpha, out)


def _check_batches(b1, b2):
    a, b = b1._data, b2._data
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, "
                           f"{a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """Same as `torch.addbmm`: beta * input + alpha * sum_i batch1[i] @ batch2[i]."""
    _check_batches(batch1, batch2)
    return _addprod("addbmm", "addbmm", input, batch1, batch2, beta, alpha, out)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """Same as `torch.baddbmm`: beta * input + alpha * (batch1 @ batch2)."""
    _check_batches(batch1, batch2)
    return _addprod("bmm", "baddbmm", input, batch1, batch2, beta, alpha, out)


# ---------------------------------------------------------------- tensordot, kron, cross, trace
def _dims_list(dims):
    if isinstance(dims, int):
        return [dims]
    return [int(d) for d in dims]


def tensordot(a, b, dims=2, out=None):
    """Same as `torch.tensordot`: dims is a count, a pair of lists, or a tensor of either."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        dims = int(dims)
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a._data.ndim or dims > b._data.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        ra, rb = list(range(-dims, 0)), list(range(dims))
    else:
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists or an int")
        ra, rb = _dims_list(dims[0]), _dims_list(dims[1])
        if len(ra) != len(rb):
            raise RuntimeError("both dimension lists should have same length")
    da = [_wrap_dim(d, a._data.ndim) for d in ra]
    db = [_wrap_dim(d, b._data.ndim) for d in rb]
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    sa, sb = list(a._data.shape), list(b._data.shape)
    for x, y, ox, oy in zip(da, db, ra, rb):
        if sa[x] != sb[y]:
            if sa[x] != 1 and sb[y] != 1:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[x]} in dim {ox} "
                                   f"and second has size {sb[y]} in dim {oy}")
            sa[x] = sb[y] = max(sa[x], sb[y])  # a size-1 dimension broadcasts, as in torch
    if sa != list(a._data.shape):
        a = a.expand(sa)
    if sb != list(b._data.shape):
        b = b.expand(sb)
    free_a = [i for i in range(len(sa)) if i not in da]
    free_b = [i for i in range(len(sb)) if i not in db]
    k = math.prod(sa[i] for i in da)
    am = a.permute(free_a + da).reshape(math.prod(sa[i] for i in free_a), k)
    bm = b.permute(db + free_b).reshape(k, math.prod(sb[i] for i in free_b))
    r = matmul(am, bm).reshape([sa[i] for i in free_a] + [sb[i] for i in free_b])
    return r if out is None else write_out(r, out, "tensordot")


def kron(input, other, *, out=None):
    """Same as `torch.kron`."""
    sa, sb = input._data.shape, other._data.shape
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    a = input.reshape([x for s in sa for x in (s, 1)])
    b = other.reshape([x for s in sb for x in (1, s)])
    r = (a * b).reshape([x * y for x, y in zip(sa, sb)])
    return r if out is None else write_out(r, out, "kron")


def _cross_bwd(ctx, g):
    a, b = ctx.inputs
    dim = ctx.attrs[0]
    need = ctx.needs_input_grad
    # d(a x b) = da x b + a x db; the adjoint of (. x b) is (b x .)
    return (_cross(b, g, dim) if need[0] else None, _cross(g, a, dim) if need[1] else None)


def _cross_fwd(a, b, dim):
    a, b = np.broadcast_arrays(a, b)
    return np.cross(a, b, axis=dim)


CROSS = Op("linalg_cross", _cross_fwd, _cross_bwd, SAVE_INPUTS)


def _cross(a, b, dim):
    return dispatch2(CROSS, a, b, dim)


def cross(input, other, dim=None, *, out=None):
    """Same as `torch.cross` (dim=None: the first dimension of size 3, with torch's deprecation warning)."""
    if input._data.ndim != other._data.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if dim is None:
        _warn_once("cross", "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
                   "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to "
                   "agree with that of linalg.cross in a future release.")
        shape = np.broadcast_shapes(input._data.shape, other._data.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim, out=out)


def linalg_cross(input, other, *, dim=-1, out=None):
    """Same as `torch.linalg.cross`."""
    a, b = input._data, other._data
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, a.ndim)
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {a.shape[d]} and "
                           f"{b.shape[d]}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(a)} but found {_type_name(b)}")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        for i in range(a.ndim - 1, -1, -1):
            if a.shape[i] != b.shape[i] and a.shape[i] != 1 and b.shape[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a.shape[i]}) must match the size of tensor b "
                                   f"({b.shape[i]}) at non-singleton dimension {i}") from None
    r = dispatch2(CROSS, input, other, d)
    return r if out is None else write_out(r, out, "linalg_cross")


def _trace_bwd(ctx, g):
    n, m = ctx.shapes[0]
    return g * _const(g, np.eye(n, m, dtype=g._data.dtype))


def _trace_fwd(x):
    return np.trace(x, dtype=np.int64 if x.dtype.kind in "iu" else None)


TRACE = Op("trace", _trace_fwd, _trace_bwd, SAVE_NONE)


def trace(input):
    """Same as `torch.trace`."""
    d = input._data
    if d.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {d.ndim}")
    if AUTOCAST[0]:
        input = cast_args("trace", (input,))[0]
        d = input._data
    if d.dtype.kind == "b":
        raise _not_implemented("trace", d)
    return dispatch1(TRACE, input)


# ---------------------------------------------------------------- einsum
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_parse(equation, shapes):
    """(list of operand subscripts, output subscripts), with any ellipsis spelled out as letters."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for i, c in enumerate(eq):
        if c not in _LETTERS and c not in ".,->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                               f"subscripts must be in [a-zA-Z]")
    used = set(eq)
    free = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            n_ell = max(n_ell, len(s) - (len(t) - 3))
    ell = "".join(free[:n_ell])
    subs = []
    for k, (t, s) in enumerate(zip(terms, shapes)):
        if "..." in t:
            k_ell = len(s) - (len(t) - 3)
            if k_ell < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t) - 3}) is more "
                                   f"than the number of dimensions ({len(s)}) for operand {k}")
            t = t.replace("...", ell[n_ell - k_ell:])
        elif len(t) != len(s):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) does not match the "
                               f"number of dimensions ({len(s)}) for operand {k} and no ellipsis was given")
        subs.append(t)
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if not any(c in s for s in subs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   f"operand")
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    else:
        joined = "".join(subs)
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1 and c not in ell))
    _einsum_sizes(subs, shapes)
    return subs, out


def _einsum_sizes(subs, shapes):
    size = {}
    for k, (t, s) in enumerate(zip(subs, shapes)):
        for c, n in zip(t, s):
            m = size.get(c)
            if m is None or m == 1:
                size[c] = n
            elif n != m and n != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                                   f"with previously seen size {m}")
    return size


def _einsum_fwd(*args):
    *arrays, eq = args
    big = len(arrays) > 2 or any(a.size > 4096 for a in arrays)
    r = np.einsum(eq, *arrays, optimize="greedy" if big else False)
    if len(arrays) == 1 and np.may_share_memory(r, arrays[0]):
        r = r.copy()  # NumPy returns views for pure transposes/diagonals; torch's result owns its memory
    return r


def _einsum_bwd(ctx, g):
    ins = ctx.inputs
    eq = ctx.attrs[0]
    lhs, out = eq.split("->")
    subs = lhs.split(",")
    grads = []
    for k, need in enumerate(ctx.needs_input_grad):
        grads.append(_einsum_grad(k, subs, out, ins, g) if need else None)
    return tuple(grads)


def _einsum_grad(k, subs, out, ins, g):
    """d/d operand k: contract g with the other operands back onto operand k's subscripts."""
    mine = subs[k]
    used = set("".join(subs) + out)
    fresh = iter(c for c in _LETTERS if c not in used)
    terms, ops = [out], [g]
    for j, (s, t) in enumerate(zip(subs, ins)):
        if j != k:
            terms.append(s)
            ops.append(_conj(t))
    target, seen = [], set()
    for c, n in zip(mine, ins[k]._data.shape):
        if c in seen:  # a repeated subscript reads a diagonal: scatter back onto it with a delta
            f = next(fresh)
            terms.append(c + f)
            ops.append(_eye(n, g))
            target.append(f)
        else:
            seen.add(c)
            target.append(c)
    present = set("".join(terms))
    kept = "".join(c for c in target if c in present)
    r = einsum(",".join(terms) + "->" + kept, *ops)
    if len(kept) != len(target):  # subscripts only operand k has were summed away: broadcast back
        shape = ins[k]._data.shape
        r = r.reshape([s if c in present else 1 for c, s in zip(target, shape)]).expand(shape)
    return r


EINSUM = Op("einsum", _einsum_fwd, _einsum_bwd, SAVE_INPUTS, node_name="EinsumBackward0")


def _sublist_letters(sublist):
    out = []
    for s in sublist:
        if s is Ellipsis:
            out.append("...")
        elif not 0 <= s < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        else:
            out.append(chr(ord("a") + s) if s < 26 else chr(ord("A") + s - 26))
    return "".join(out)


def _sublist_equation(args):
    """einsum(a, [0, 1], b, [1, 2], [0, 2]) as ("ab,bc->ac", (a, b))."""
    if len(args) % 2:  # an odd count: the output sublist closes the list
        operands, subs, out = args[0:-1:2], args[1:-1:2], args[-1]
    else:
        operands, subs, out = args[0::2], args[1::2], None
    eq = ",".join(_sublist_letters(s) for s in subs)
    return (eq if out is None else eq + "->" + _sublist_letters(out)), tuple(operands)


def einsum(equation, *operands):
    """Same as `torch.einsum`: the equation form (with ellipsis and repeated subscripts), the list form
    einsum(eq, [a, b]) and the sublist form einsum(a, [0, 1], b, [1, 2], [0, 2])."""
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation,) + operands)
    elif len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    dt = operands[0]._data.dtype
    for t in operands[1:]:
        if t._data.dtype != dt:
            raise RuntimeError(f"expected scalar type {_type_name(operands[0]._data)} but found "
                               f"{_type_name(t._data)}")
    subs, out = _einsum_parse(equation, [t._data.shape for t in operands])
    eq = ",".join(subs) + "->" + out
    if dt.kind == "V":
        r = dispatch(EINSUM, tuple(t.float() for t in operands), eq)
        return r.to(FROM_NP[dt])
    return dispatch(EINSUM, tuple(operands), eq)


# ---------------------------------------------------------------- chains of products
def multi_dot(tensors, *, out=None):
    """Same as `torch.linalg.multi_dot`: the product in the cheapest order."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first1, last1 = tensors[0]._data.ndim == 1, tensors[-1]._data.ndim == 1
    if first1:
        tensors[0] = tensors[0].unsqueeze(0)
    if last1:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i, t in enumerate(tensors):
        if t._data.ndim != 2:
            where = "first" if i == 0 else "last" if i == n - 1 else None
            raise RuntimeError(f"multi_dot(): the {where} tensor must be 1D or 2D but got {t._data.ndim}D"
                               if where else f"multi_dot(): tensor {i} must be 2D but got {t._data.ndim}D")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_c_name(tensors[0]._data)} and tensor {i} {_c_name(t._data)}")
        if i and tensors[i - 1]._data.shape[1] != t._data.shape[0]:
            a, b = tensors[i - 1]._data.shape, t._data.shape
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes [{a[0]}, {a[1]}] and "
                               f"[{b[0]}, {b[1]}] cannot be multiplied")
    r = _chain(tensors, _chain_order([t._data.shape[0] for t in tensors] + [tensors[-1]._data.shape[1]]), 0, n - 1)
    if first1:
        r = r.squeeze(0)
    if last1:
        r = r.squeeze(-1)
    return r if out is None else write_out(r, out, "linalg_multi_dot")


def _chain_order(p):
    """Matrix-chain dynamic programme: split[i][j] is where the cheapest product of i..j splits."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(ts, split, i, j):
    if i == j:
        return ts[i]
    k = split[i][j]
    return matmul(_chain(ts, split, i, k), _chain(ts, split, k + 1, j))


def chain_matmul(*matrices, out=None):
    """Same as `torch.chain_matmul` (deprecated in torch in favour of linalg.multi_dot, with the same warning)."""
    _warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. "
               "Use torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
               "parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = matrices[0]
    for t in matrices:
        if t._data.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t._data.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        r = matrices[0].clone()
        return r if out is None else write_out(r, out, "chain_matmul")
    return multi_dot(matrices, out=out)


# ---------------------------------------------------------------- binding
def _matmul_method(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return _matmul(self, other)


def _rmatmul_method(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return _matmul(other, self)


for _name in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "kron", "trace", "cross"):
    setattr(Tensor, _name, globals()[_name])
for _name in ("addmm", "addmv", "addr", "addbmm", "baddbmm"):
    setattr(Tensor, _name, globals()[_name])
    setattr(Tensor, _name + "_", make_inplace(globals()[_name], _name + "_"))
# Tensor has no __imatmul__, as in torch: `a @= b` rebinds a to a @ b
Tensor.__matmul__ = _matmul_method
Tensor.__rmatmul__ = _rmatmul_method
