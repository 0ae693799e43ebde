"""Linear algebra: the matmul family, einsum, products, norms and the decompositions behind `ember.linalg`.

Forwards are NumPy/LAPACK calls (np.matmul goes straight to BLAS); backwards are written with ember ops, so
higher-order gradients work. Gradients of decompositions follow the standard formulas (as torch's do): those
of eigenvectors and singular vectors are defined only where the eigen/singular values are distinct.
"""
import builtins
import math
import warnings

import numpy as np

from .. import return_types
from .._backend import XP
from .._dtype import FROM_NP
from .._tensor import Tensor, _wrap_dim
from .._tensor_str import SCALAR_NAMES
from ._dispatch import SAVE_BOTH, SAVE_INPUTS, SAVE_NONE, SAVE_OUTPUT, Op, dispatch, dispatch1, dispatch2
from ._inplace import make_inplace, write_out
from .reduce import expand_grad

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "addbmm",
           "baddbmm", "tensordot", "kron", "cross", "cdist", "trace", "einsum", "chain_matmul", "inverse", "det",
           "logdet", "slogdet", "pinverse", "matrix_power", "matrix_exp", "cholesky", "cholesky_solve",
           "cholesky_inverse", "svd", "qr", "triangular_solve"]

_make = Tensor._make


class LinAlgError(RuntimeError):
    """Same as `torch.linalg.LinAlgError`: a linear algebra routine failed on its input (singular, not
    positive-definite...)."""


LinAlgError.__module__ = "ember.linalg"


def _structseq(name, fields):
    # named tuples ember.return_types does not list yet
    cls = getattr(return_types, name, None)
    return cls if cls is not None else return_types._structseq(name, fields)


_TriangularSolve = _structseq("triangular_solve", ("solution", "cloned_coefficient"))


# ---------------------------------------------------------------- small helpers
def _type_name(a):
    return SCALAR_NAMES[FROM_NP[a.dtype].name]


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _c_name(a):
    return _C_NAMES[FROM_NP[a.dtype].name]


def _shape_str(shape, sep="x"):
    return sep.join(str(s) for s in shape)


def _const(t, arr):
    """A constant tensor (no history) on t's device."""
    d = t._data
    if d.__class__ is not np.ndarray:
        arr = XP[d.__class__].asarray(arr)
    return _make(arr)


def _mT(t):
    return t.transpose(-2, -1)


CONJ = Op("conj", np.conj, lambda ctx, g: _conj(g), SAVE_NONE, node_name="ConjBackward0")


def _conj(t):
    return dispatch1(CONJ, t) if t._data.dtype.kind == "c" else t


def _mH(t):
    return _conj(t.transpose(-2, -1))


def _pow_bwd(ctx, g):
    x, = ctx.inputs
    p = ctx.attrs[0]
    return g * p * _pow(x, p - 1)


POW = Op("pow", np.power, _pow_bwd, SAVE_INPUTS)


def _pow(t, p):
    """t ** p for a number p, differentiable (used by norm gradients)."""
    return dispatch1(POW, t, p)


def _eye(n, t, m=None):
    return _const(t, np.eye(n, m, dtype=t._data.dtype))


def _tril_mask(t, k=0):
    n, m = t._data.shape[-2:]
    return _const(t, np.tri(n, m, k, dtype=t._data.dtype))


def _triu_mask(t, k=0):
    n, m = t._data.shape[-2:]
    return _const(t, 1 - np.tri(n, m, k - 1, dtype=t._data.dtype))


def _diag_embed(v):
    """A batch of diagonal matrices from a batch of vectors (differentiable)."""
    n = v._data.shape[-1]
    return v.unsqueeze(-1) * _eye(n, v)


def _diag(a):
    """The main diagonals of a batch of square matrices, as a copy (differentiable)."""
    n = a._data.shape[-1]
    return (a * _eye(n, a)).sum(-1)


def _bad_dtype(name, a):
    k = a._data.dtype
    if k.kind == "V" or k == np.float16:
        return RuntimeError(f"{name}: Low precision dtypes not supported. Got {_type_name(a._data)}")
    return RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(a._data)}")


def _check_float(a, name):
    k = a._data.dtype.kind
    if (k != "f" and k != "c") or a._data.dtype == np.float16:
        raise _bad_dtype(name, a)


def _check_square(a, name, arg="A"):
    d = a._data
    if d.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if d.shape[-1] != d.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {d.shape[-2]} by "
                           f"{d.shape[-1]} matrices")


def _check_matrix(a, name, arg="A"):
    if a._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def _check_same_dtype(a, b, name, an="A", bn="B"):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{name}: Expected {an} and {bn} to have the same dtype, but found {an} of type "
                           f"{_type_name(a._data)} and {bn} of type {_type_name(b._data)} instead")


def _out(r, out, name):
    if out is None:
        return r
    if isinstance(r, tuple):
        if len(out) != len(r):
            raise RuntimeError(f"{name}: expected {len(r)} output tensors, got {len(out)}")
        return type(r)(*[write_out(x, o, name) for x, o in zip(r, out)])
    return write_out(r, out, name)


_WARNED = set()


def _warn_once(key, msg):
    # torch warns once per process (TORCH_WARN_ONCE) for its deprecated functions
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _batch_prefix(shape, idx):
    return f"(Batch element {idx}): " if len(shape) > 2 else ""


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


def _bf16_matmul(a, b):
    # NumPy multiplies bfloat16 in float32; torch returns bfloat16
    return np.matmul(a, b).astype(a.dtype)


MM = Op("mm", np.matmul, _mm_bwd, SAVE_INPUTS)
BMM = Op("bmm", np.matmul, _mm_bwd, SAVE_INPUTS)
DOT = Op("dot", np.matmul, _dot_bwd, SAVE_INPUTS)
MV = Op("mv", np.matmul, _mv_bwd, SAVE_INPUTS)
MATMUL_ND = Op("matmul", np.matmul, _matmul_nd_bwd, SAVE_INPUTS, node_name="UnsafeViewBackward0")
MATMUL_VM = Op("matmul", np.matmul, _matmul_nd_bwd, SAVE_INPUTS, node_name="SqueezeBackward4")
_BF16 = {op: Op(op.name, _bf16_matmul, op.bwd, op.save, node_name=op.node_name)
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


def _broadcast_error(sa, sb):
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast")


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
    if nb == 2 and na >= 2:  # folded to a matrix-matrix product
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


def _matmul(input, other):
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
    p = _PRODUCTS[kind](a, b)
    if alpha != 1:
        p = p * alpha
    if beta == 0:  # torch ignores input (even NaN) when beta is 0
        return np.broadcast_to(p, np.broadcast_shapes(p.shape, c.shape)).copy()
    return p + (c if beta == 1 else c * beta)


def _addbmm(a, b):
    return np.matmul(a, b).sum(0)


_PRODUCTS = {"mm": np.matmul, "mv": np.matmul, "bmm": np.matmul, "r": np.multiply.outer, "addbmm": _addbmm}


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
    sa, sb = a._data.shape, b._data.shape
    for x, y, ox, oy in zip(da, db, ra, rb):
        if sa[x] != sb[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[x]} in dim {ox} and "
                               f"second has size {sb[y]} in dim {oy}")
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
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
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
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
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


def einsum(equation, *operands):
    """Same as `torch.einsum` (equation form, including ellipsis and repeated subscripts, and the list form
    einsum(eq, [a, b]))."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError("einsum(): the equation must be a string (the sublist format is not supported)")
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


def matrix_power(input, n, *, out=None):
    """Same as `torch.matrix_power` / `torch.linalg.matrix_power`."""
    _check_square(input, "linalg.matrix_power")
    if n < 0:
        _check_float(input, "linalg.inv")
        input = linalg_inv(input)
        n = -n
    if n == 0:
        m = input._data.shape[-1]
        r = _const(input, np.broadcast_to(np.eye(m, dtype=input._data.dtype), input._data.shape).copy())
        return r if out is None else write_out(r, out, "linalg_matrix_power")
    r, base = None, input
    while True:  # binary exponentiation
        if n & 1:
            r = base if r is None else matmul(r, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    if r is input:
        r = r.clone()
    return r if out is None else write_out(r, out, "linalg_matrix_power")


# ---------------------------------------------------------------- matrix exponential
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)


def _expm_fwd(a):
    """Scaling and squaring with a [13/13] Pade approximant (Higham 2005), batched."""
    out_dtype = a.dtype
    a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    if a.shape[-1] == 0:
        return a.astype(out_dtype)
    norm = np.abs(a).sum(-2).max(-1) if a.size else np.zeros(a.shape[:-2])
    s = np.maximum(0, np.ceil(np.log2(np.maximum(norm, 1e-300) / 5.371920351148152))).astype(int)
    scale = np.power(2.0, -s)[..., None, None]
    a = a * scale
    eye = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
    b = _PADE13
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    smax = int(s.max()) if s.size else 0
    for i in range(smax):
        sq = r @ r
        r = np.where((s > i)[..., None, None], sq, r)
    return r.astype(out_dtype)


def _cat_last(a, b):
    n, m = a._data.shape[-1], b._data.shape[-1]
    ea = _const(a, np.eye(n, n + m, dtype=a._data.dtype))
    eb = _const(b, np.eye(m, n + m, n, dtype=b._data.dtype))
    return matmul(a, ea) + matmul(b, eb)


def _cat_rows(a, b):
    return _mT(_cat_last(_mT(a), _mT(b)))


def _expm_bwd(ctx, g):
    # the adjoint of the Frechet derivative: exp([[A^H, G], [0, A^H]]) holds it in its top-right block
    a, = ctx.inputs
    n = a._data.shape[-1]
    ah = _mH(a)
    big = _cat_rows(_cat_last(ah, g), _cat_last(ah * 0, ah))
    # top-right n x n block, selected with constant matrices so that it stays differentiable
    rows = _const(g, np.eye(n, 2 * n, dtype=g._data.dtype))
    cols = _const(g, np.eye(2 * n, n, -n, dtype=g._data.dtype))
    return matmul(matmul(rows, matrix_exp(big)), cols)


EXPM = Op("linalg_matrix_exp", _expm_fwd, _expm_bwd, SAVE_INPUTS)


def matrix_exp(A):
    """Same as `torch.matrix_exp` / `torch.linalg.matrix_exp`."""
    _check_square(A, "linalg.matrix_exp")
    _check_float(A, "linalg.matrix_exp")
    return dispatch1(EXPM, A)


# ---------------------------------------------------------------- inverse, determinants, solve
def _lu_zero_pivot(a):
    """1-based index of the first zero pivot of LU with partial pivoting (LAPACK getrf's info), 0 if none."""
    a = np.array(a)
    n = a.shape[-1]
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if a[p, k] == 0:
            return k + 1
        if p != k:
            a[[k, p]] = a[[p, k]]
        a[k + 1:, k:] -= np.multiply.outer(a[k + 1:, k] / a[k, k], a[k, k:])
    return 0


def _singular_error(x, name):
    flat = x.reshape(-1, *x.shape[-2:])
    for i, m in enumerate(flat):
        info = _lu_zero_pivot(m)
        if info:
            return LinAlgError(f"{name}: {_batch_prefix(x.shape, i)}The diagonal element {info} is zero, the "
                               f"inversion could not be completed because the input matrix is singular.")
    return LinAlgError(f"{name}: The inversion could not be completed because the input matrix is singular.")


def _inv_fwd(a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise _singular_error(a, "linalg.inv") from None


def _inv_bwd(ctx, g):
    y, = ctx.outputs
    yh = _mH(y)
    return -matmul(yh, matmul(g, yh))  # d(A^-1) = -A^-1 dA A^-1


INV = Op("linalg_inv", _inv_fwd, _inv_bwd, SAVE_OUTPUT, node_name="LinalgInvExBackward0")


def linalg_inv(A, *, out=None):
    """Same as `torch.linalg.inv`."""
    _check_square(A, "linalg.inv")
    _check_float(A, "linalg.inv")
    r = dispatch1(INV, A)
    return r if out is None else write_out(r, out, "linalg_inv")


def inverse(input, *, out=None):
    """Same as `torch.inverse`."""
    return linalg_inv(input, out=out)


def _inv_ex_fwd(a):
    try:
        return np.linalg.inv(a), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        flat = a.reshape(-1, *a.shape[-2:])
        info = np.array([_lu_zero_pivot(m) for m in flat], np.int32)
        inv = np.full_like(flat, np.nan)
        for i, m in enumerate(flat):
            if not info[i]:
                inv[i] = np.linalg.inv(m)
        return inv.reshape(a.shape), info.reshape(a.shape[:-2])


INV_EX = Op("linalg_inv_ex", _inv_ex_fwd, lambda ctx, g: _inv_bwd_ex(ctx, g), SAVE_OUTPUT, nout=2,
            node_name="LinalgInvExBackward0")


def _inv_bwd_ex(ctx, grads):
    g = grads[0]
    if g is None:
        return None
    yh = _mH(ctx.outputs[0])
    return -matmul(yh, matmul(g, yh))


def linalg_inv_ex(A, *, check_errors=False, out=None):
    """Same as `torch.linalg.inv_ex`: (inverse, info); info > 0 marks a singular matrix."""
    _check_square(A, "linalg.inv_ex")
    _check_float(A, "linalg.inv")
    if check_errors:
        inv = linalg_inv(A)
        r = return_types.linalg_inv_ex(inv, _const(A, np.zeros(A._data.shape[:-2], np.int32)))
    else:
        r = return_types.linalg_inv_ex(*dispatch1(INV_EX, A))
    return _out(r, out, "linalg_inv_ex")


def _det_bwd(ctx, g):
    a, = ctx.inputs
    d, = ctx.outputs
    if (d._data == 0).any():  # singular: d det(A) = tr(adj(A) dA), computed as a constant
        return g.unsqueeze(-1).unsqueeze(-1) * _const(a, np.conj(_mT_np(_adjugate_np(a._data))))
    gd = (g * _conj(d)).unsqueeze(-1).unsqueeze(-1)
    return gd * _mH(linalg_inv(a))  # d det(A) = det(A) tr(A^-1 dA)


def _mT_np(x):
    return np.swapaxes(x, -1, -2)


def _adjugate_np(a):
    """adj(A) through the SVD, defined for singular matrices too: adj(U S V^H) = adj(V^H) adj(S) adj(U)."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    prod = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], -1) if n else s
    du, dvh = np.linalg.det(u), np.linalg.det(vh)
    vs = np.conj(_mT_np(vh)) * prod[..., None, :]
    return (du * dvh)[..., None, None] * (vs @ np.conj(_mT_np(u)))


DET = Op("linalg_det", np.linalg.det, _det_bwd, SAVE_BOTH)


def linalg_det(A, *, out=None):
    """Same as `torch.linalg.det`."""
    _check_square(A, "linalg.det")
    _check_float(A, "linalg.det")
    r = dispatch1(DET, A)
    return r if out is None else write_out(r, out, "linalg_det")


def det(input):
    """Same as `torch.det`."""
    return linalg_det(input)


def _slogdet_fwd(a):
    s, l = np.linalg.slogdet(a)
    return s.astype(a.dtype), l.astype(a.real.dtype)


def _slogdet_bwd(ctx, grads):
    gs, gl = grads
    if gl is None:
        return None
    a, = ctx.inputs
    return gl.unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(a))  # d log|det A| = Re tr(A^-1 dA)


SLOGDET = Op("linalg_slogdet", _slogdet_fwd, _slogdet_bwd, SAVE_INPUTS, nout=2)


def _slogdet(A, name):
    _check_square(A, name)
    _check_float(A, name)
    sign, lad = dispatch1(SLOGDET, A)
    if sign._grad_fn is not None and A._data.dtype.kind != "c":
        sign._requires_grad, sign._grad_fn = False, None  # the sign of a real determinant is piecewise constant
    return sign, lad


def linalg_slogdet(A, *, out=None):
    """Same as `torch.linalg.slogdet`."""
    return _out(return_types.linalg_slogdet(*_slogdet(A, "linalg.slogdet")), out, "linalg_slogdet")


def slogdet(input, *, out=None):
    """Same as `torch.slogdet`."""
    return _out(return_types.slogdet(*_slogdet(input, "linalg.slogdet")), out, "slogdet")


def _logdet_fwd(a):
    s, l = np.linalg.slogdet(a)
    if a.dtype.kind == "c":
        return (np.log(s) + l).astype(a.dtype)
    return np.where(s < 0, np.nan, l).astype(a.dtype)


LOGDET = Op("logdet", _logdet_fwd, lambda ctx, g: g.unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(ctx.inputs[0])),
            SAVE_INPUTS)


def logdet(input):
    """Same as `torch.logdet`: nan for a negative determinant, -inf for zero."""
    _check_square(input, "linalg.slogdet")
    _check_float(input, "linalg.slogdet")
    return dispatch1(LOGDET, input)


def _is_vector_rhs(A, B):
    nb = B._data.ndim
    return nb == 1 or (nb == A._data.ndim - 1 and B._data.shape == A._data.shape[:-1])


def _solve_fwd(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None


def _solve_bwd(ctx, g):
    a, _ = ctx.inputs
    x, = ctx.outputs
    need = ctx.needs_input_grad
    gb = _solve(_mH(a), g)  # X = A^-1 B: gB = A^-H g, gA = -gB X^H
    return (-matmul(gb, _mH(x)) if need[0] else None, gb if need[1] else None)


SOLVE = Op("linalg_solve", _solve_fwd, _solve_bwd, SAVE_BOTH, node_name="LinalgSolveExBackward0")


def _solve(a, b):
    return dispatch2(SOLVE, a, b)


def linalg_solve(A, B, *, left=True, out=None):
    """Same as `torch.linalg.solve`."""
    _check_square(A, "linalg.solve")
    _check_float(A, "linalg.solve")
    _check_same_dtype(A, B, "linalg.solve")
    vec = _is_vector_rhs(A, B)
    b = B.unsqueeze(-1) if vec else B
    n = A._data.shape[-1]
    if left:
        if b._data.shape[-2] != n:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                               f"({n}x{n} and {_shape_str(b._data.shape[-2:])})")
        r = _solve_checked(A, b)
    else:
        if vec:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not supported for "
                               "left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)")
        if b._data.shape[-1] != n:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation XA = B "
                               f"({n}x{n} and {_shape_str(b._data.shape[-2:])})")
        r = _mT(_solve_checked(_mT(A), _mT(b)))
    if vec:
        r = r.squeeze(-1)
    return r if out is None else write_out(r, out, "linalg_solve")


def _solve_checked(a, b):
    try:
        return _solve(a, b)
    except ValueError:
        raise _broadcast_error(b._data.shape[:-2], a._data.shape[:-2]) from None


def _triangular_fwd(a, b, upper, unit):
    a = np.triu(a) if upper else np.tril(a)
    if unit:
        n = a.shape[-1]
        a = a.copy()
        a[..., np.arange(n), np.arange(n)] = 1
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return _substitute(a, b, upper)


def _substitute(a, b, upper):
    """Forward/back substitution: a singular triangular system gives inf/nan, as LAPACK's trsm does."""
    a, b = np.broadcast_arrays(a, b[..., :, :])[0], b
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, shape + a.shape[-2:])
    x = np.array(np.broadcast_to(b, shape + b.shape[-2:]), dtype=np.result_type(a, b))
    n = a.shape[-1]
    order = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in order:
            rest = slice(i + 1, n) if upper else slice(0, i)
            x[..., i, :] = (x[..., i, :] - np.einsum("...k,...kj->...j", a[..., i, rest], x[..., rest, :])) / \
                a[..., i, i, None]
    return x


def _triangular_bwd(ctx, g):
    a, _ = ctx.inputs
    x, = ctx.outputs
    upper, unit = ctx.attrs
    need = ctx.needs_input_grad
    gb = _triangular(_mH(a), g, not upper, unit)
    ga = None
    if need[0]:
        ga = -matmul(gb, _mH(x))
        mask = _triu_mask(ga, 1 if unit else 0) if upper else _tril_mask(ga, -1 if unit else 0)
        ga = ga * mask
    return ga, gb if need[1] else None


TRIANGULAR = Op("linalg_solve_triangular", _triangular_fwd, _triangular_bwd, SAVE_BOTH)


def _triangular(a, b, upper, unit):
    return dispatch2(TRIANGULAR, a, b, upper, unit)


def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """Same as `torch.linalg.solve_triangular`."""
    _check_square(A, "linalg.solve_triangular")
    _check_float(A, "linalg.solve_triangular")
    _check_matrix(B, "linalg.solve_triangular", "B")
    _check_same_dtype(A, B, "linalg.solve_triangular")
    n = A._data.shape[-1]
    if (B._data.shape[-2] if left else B._data.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {_shape_str(B._data.shape[-2:])})")
    if left:
        r = _triangular(A, B, upper, unitriangular)
    else:
        r = _mT(_triangular(_mT(A), _mT(B), not upper, unitriangular))
    return r if out is None else write_out(r, out, "linalg_solve_triangular")


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """Same as `torch.triangular_solve`: (solution, cloned_coefficient), with torch's deprecation warning."""
    _warn_once("triangular_solve", "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
               "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
               "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution"
               "\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    if transpose:
        x = linalg_solve_triangular(_mT(A), b, upper=not upper, unitriangular=unitriangular)
    else:
        x = linalg_solve_triangular(A, b, upper=upper, unitriangular=unitriangular)
    return _out(_TriangularSolve(x, A.clone()), out, "triangular_solve")


# ---------------------------------------------------------------- Cholesky
def _cholesky_info(a):
    """The order of the first leading minor that is not positive-definite (LAPACK potrf's info), 0 if none."""
    a = np.array(a)
    n = a.shape[-1]
    l = np.zeros_like(a)
    for j in range(n):
        d = a[j, j] - np.vdot(l[j, :j], l[j, :j])
        if not np.real(d) > 0:
            return j + 1
        l[j, j] = np.sqrt(np.real(d))
        l[j + 1:, j] = (a[j + 1:, j] - l[j + 1:, :j] @ np.conj(l[j, :j])) / l[j, j]
    return 0


def _not_pd_error(a, name):
    flat = a.reshape(-1, *a.shape[-2:])
    for i, m in enumerate(flat):
        info = _cholesky_info(m)
        if info:
            return LinAlgError(f"{name}: {_batch_prefix(a.shape, i)}The factorization could not be completed "
                               f"because the input is not positive-definite (the leading minor of order {info} "
                               f"is not positive-definite).")
    return LinAlgError(f"{name}: The factorization could not be completed because the input is not "
                       f"positive-definite.")


def _cholesky_fwd(a, name):
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise _not_pd_error(a, name) from None


def _cholesky_bwd(ctx, g):
    # A = L L^H: gA = sym(L^-H Phi(L^H gL) L^-1), Phi = lower triangle with the diagonal halved
    l, = ctx.outputs
    phi = matmul(_mH(l), g)
    phi = phi * (_tril_mask(phi) - 0.5 * _eye(phi._data.shape[-1], phi))
    t = _triangular(_mH(l), phi, True, False)           # L^-H Phi
    ga = _mT(_triangular(_mT(l), _mT(t), True, False))  # (L^-H Phi) L^-1
    return 0.5 * (ga + _mH(ga))


CHOLESKY = Op("linalg_cholesky", _cholesky_fwd, _cholesky_bwd, SAVE_OUTPUT, node_name="LinalgCholeskyExBackward0")


def linalg_cholesky(A, *, upper=False, out=None, _name="linalg.cholesky"):
    """Same as `torch.linalg.cholesky`."""
    _check_square(A, _name)
    _check_float(A, _name)
    l = dispatch1(CHOLESKY, A, _name)
    r = _mH(l) if upper else l
    return r if out is None else write_out(r, out, "linalg_cholesky")


def cholesky(input, upper=False, *, out=None):
    """Same as `torch.cholesky` (deprecated in torch, with the same one-time warning)."""
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
               "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
               "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced with\nU = "
               "torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for all valid "
               "(symmetric positive definite) inputs.")
    return linalg_cholesky(input, upper=upper, out=out, _name="cholesky")


def _cholesky_ex_fwd(a):
    try:
        return np.linalg.cholesky(a), np.zeros(a.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        flat = a.reshape(-1, *a.shape[-2:])
        info = np.array([_cholesky_info(m) for m in flat], np.int32)
        l = np.zeros_like(flat)
        for i, m in enumerate(flat):
            if not info[i]:
                l[i] = np.linalg.cholesky(m)
        return l.reshape(a.shape), info.reshape(a.shape[:-2])


def _cholesky_ex_bwd(ctx, grads):
    return None if grads[0] is None else _cholesky_bwd(_FirstOutput(ctx), grads[0])


class _FirstOutput:
    """A view of a multi-output node exposing only its first output (to reuse a one-output backward)."""
    __slots__ = ("outputs", "inputs", "attrs", "needs_input_grad")

    def __init__(self, ctx):
        self.outputs = ctx.outputs[:1]
        self.attrs = ctx.attrs
        self.needs_input_grad = ctx.needs_input_grad


CHOLESKY_EX = Op("linalg_cholesky_ex", _cholesky_ex_fwd, _cholesky_ex_bwd, SAVE_OUTPUT, nout=2)


def linalg_cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """Same as `torch.linalg.cholesky_ex`: (L, info); info > 0 is the order of the failing leading minor."""
    _check_square(A, "linalg.cholesky_ex")
    _check_float(A, "linalg.cholesky_ex")
    if check_errors:
        l, info = linalg_cholesky(A), _const(A, np.zeros(A._data.shape[:-2], np.int32))
    else:
        l, info = dispatch1(CHOLESKY_EX, A)
        info._requires_grad, info._grad_fn = False, None
    return _out(return_types.linalg_cholesky_ex(_mH(l) if upper else l, info), out, "linalg_cholesky_ex")


def _cholesky_solve_fwd(b, l, upper):
    lo = np.conj(_mT_np(l)) if upper else l
    y = _triangular_fwd(lo, b, False, False)
    return _triangular_fwd(np.conj(_mT_np(lo)), y, True, False)


def _cholesky_solve_bwd(ctx, g):
    # X = (L L^H)^-1 B, differentiated as a function of the full matrix L (as torch does)
    b, l = ctx.inputs
    x, = ctx.outputs
    upper, = ctx.attrs
    need = ctx.needs_input_grad
    gb = dispatch2(CHOLESKY_SOLVE, g, l, upper)
    gl = None
    if need[1]:
        common = matmul(gb, _mH(x))
        common = common + _mH(common)
        gl = -matmul(l, common) if upper else -matmul(common, l)
    return gb if need[0] else None, gl


CHOLESKY_SOLVE = Op("cholesky_solve", _cholesky_solve_fwd, _cholesky_solve_bwd, SAVE_BOTH)


def cholesky_solve(B, L, upper=False, *, out=None):
    """Same as `torch.cholesky_solve`: solves A X = B given A's Cholesky factor."""
    _check_matrix(B, "cholesky_solve", "B")
    _check_square(L, "cholesky_solve", "A")
    if B._data.dtype != L._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_type_name(B._data)} "
                           f"and A of type {_type_name(L._data)} instead.")
    try:
        x = dispatch2(CHOLESKY_SOLVE, B, L, builtins.bool(upper))
    except ValueError:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{_shape_str(L._data.shape[-2:], ' by ')} but each b matrix is "
                           f"{_shape_str(B._data.shape[-2:], ' by ')}") from None
    return x if out is None else write_out(x, out, "cholesky_solve")


def cholesky_inverse(L, upper=False, *, out=None):
    """Same as `torch.cholesky_inverse`: A^-1 given A's Cholesky factor."""
    _check_square(L, "cholesky_inverse", "input")
    eye = _const(L, np.broadcast_to(np.eye(L._data.shape[-1], dtype=L._data.dtype), L._data.shape).copy())
    return cholesky_solve(eye, L, upper, out=out)


# ---------------------------------------------------------------- QR
def _qr_fwd(a, mode):
    if mode == "r":
        r = np.linalg.qr(a, mode="r")
        return np.zeros((0,), a.dtype), r
    return np.linalg.qr(a, mode=mode)


def _qr_square_bwd(q, r, gq, gr):
    """Reduced QR with m >= n: gA = (gQ + Q N) R^-H, N = -triu(M) - strict_tril(M^H), M = Q^H gQ - gR R^H."""
    m = 0
    if gq is not None:
        m = matmul(_mH(q), gq)
    if gr is not None:
        m = m - matmul(gr, _mH(r))
    n = -(m * _triu_mask(m)) - _mH(m) * _tril_mask(m, -1)
    y = matmul(q, n)
    if gq is not None:
        y = y + gq
    return _mT(_triangular(_mT(_mH(r)), _mT(y), True, False))  # Y R^-H, solved as R^-* Y^T on the right


def _qr_bwd(ctx, grads):
    gq, gr = grads
    a, = ctx.inputs
    q, r = ctx.outputs
    mode, = ctx.attrs
    mrows, ncols = a._data.shape[-2:]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    if mode == "complete" and mrows > ncols:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    if mrows >= ncols:
        return _qr_square_bwd(q, r, gq, gr)
    # wide A = Q [R1 R2]: A1 = Q R1 is square and R2 = Q^H A2
    e1 = _const(a, np.eye(ncols, mrows, dtype=a._data.dtype))        # selects the first m columns
    e2 = _const(a, np.eye(ncols, ncols - mrows, -mrows, dtype=a._data.dtype))
    r1 = matmul(r, e1)
    ga2 = None
    if gr is not None:
        gr1, gr2 = matmul(gr, e1), matmul(gr, e2)
        ga2 = matmul(q, gr2)
        a2 = matmul(a, e2)
        gq = matmul(a2, _mH(gr2)) if gq is None else gq + matmul(a2, _mH(gr2))
    else:
        gr1 = None
    ga1 = _qr_square_bwd(q, r1, gq, gr1)
    ga = matmul(ga1, _mT(e1))
    return ga if ga2 is None else ga + matmul(ga2, _mT(e2))


QR = Op("linalg_qr", _qr_fwd, _qr_bwd, SAVE_BOTH, nout=2)


def linalg_qr(A, mode="reduced", *, out=None):
    """Same as `torch.linalg.qr`."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           f"or 'complete'")
    _check_matrix(A, "linalg.qr")
    _check_float(A, "linalg.qr")
    return _out(return_types.linalg_qr(*dispatch1(QR, A, mode)), out, "linalg_qr")


def qr(input, some=True, *, out=None):
    """Same as `torch.qr` (some=True: reduced, some=False: complete), with torch's deprecation warning."""
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
               "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = "
               "torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else "
               "'complete')")
    q, r = linalg_qr(input, "reduced" if some else "complete")
    return _out(return_types.qr(q, r), out, "qr")


# ---------------------------------------------------------------- eigh
def _eigh_bwd(ctx, grads):
    # gA = V (diag(gL) + F o (V^H gV)) V^H with F_ij = 1 / (L_j - L_i) off the diagonal
    gl, gv = grads
    lam, v = ctx.outputs
    inner = 0
    if gv is not None:
        vhgv = matmul(_mH(v), gv)
        diff = lam.unsqueeze(-2) - lam.unsqueeze(-1)
        n = lam._data.shape[-1]
        eye = _eye(n, diff)
        inner = vhgv * (1 - eye) / (diff + eye)
    if gl is not None:
        inner = inner + _diag_embed(gl)
    ga = matmul(v, matmul(inner, _mH(v)))
    return ga


EIGH = Op("linalg_eigh", lambda a, uplo: np.linalg.eigh(a, UPLO=uplo), _eigh_bwd, SAVE_OUTPUT, nout=2)


def linalg_eigh(A, UPLO="L", *, out=None):
    """Same as `torch.linalg.eigh`. Eigenvector gradients are defined only for distinct eigenvalues."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_square(A, "linalg.eigh")
    _check_float(A, "linalg.eigh")
    w, v = dispatch1(EIGH, A, UPLO)
    return _out(return_types.linalg_eigh(w, v), out, "linalg_eigh")


def linalg_eigvalsh(A, UPLO="L", *, out=None):
    """Same as `torch.linalg.eigvalsh`."""
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_square(A, "linalg.eigvalsh")
    _check_float(A, "linalg.eigvalsh")
    if A._requires_grad:
        w = dispatch1(EIGH, A, UPLO)[0]
    else:
        w = _make(np.linalg.eigvalsh(A._data, UPLO=UPLO))
    return w if out is None else write_out(w, out, "linalg_eigvalsh")


def _complex_of(a):
    return a.astype(np.complex128 if a.dtype in (np.float64, np.complex128) else np.complex64)


def linalg_eig(A, *, out=None):
    """Same as `torch.linalg.eig` (always complex results). Not differentiable in ember."""
    _check_square(A, "linalg.eig")
    _check_float(A, "linalg.eig")
    w, v = np.linalg.eig(A._data)
    return _out(return_types.linalg_eig(_make(_complex_of(w)), _make(_complex_of(v))), out, "linalg_eig")


def linalg_eigvals(A, *, out=None):
    """Same as `torch.linalg.eigvals` (complex results). Not differentiable in ember."""
    _check_square(A, "linalg.eigvals")
    _check_float(A, "linalg.eigvals")
    r = _make(_complex_of(np.linalg.eigvals(A._data)))
    return r if out is None else write_out(r, out, "linalg_eigvals")


# ---------------------------------------------------------------- SVD
def _svd_fwd(a, full_matrices):
    return np.linalg.svd(a, full_matrices=full_matrices)


def _svd_bwd(ctx, grads):
    gu, gs, gvh = grads
    a, = ctx.inputs
    u, s, vh = ctx.outputs
    full, = ctx.attrs
    m, n = a._data.shape[-2:]
    k = min(m, n)
    if full and m != n:  # only the first k singular vectors enter the gradient (as in torch)
        cols = _const(u, np.eye(m, k, dtype=u._data.dtype))
        rows = _const(vh, np.eye(k, n, dtype=vh._data.dtype))
        u, vh = matmul(u, cols), matmul(rows, vh)
        gu = None if gu is None else matmul(gu, cols)
        gvh = None if gvh is None else matmul(rows, gvh)
    if gu is None and gvh is None:
        return matmul(u * gs.unsqueeze(-2), vh)
    v = _mH(vh)
    gv = None if gvh is None else _mH(gvh)
    s2 = s * s
    eye = _eye(k, s)
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1) + eye  # E_jk = s_k^2 - s_j^2, 1 on the diagonal
    inner = 0
    if gu is not None:
        uhgu = matmul(_mH(u), gu)
        inner = (uhgu - _mH(uhgu)) * s.unsqueeze(-2)
    if gv is not None:
        vhgv = matmul(_mH(v), gv)
        inner = inner + s.unsqueeze(-1) * (vhgv - _mH(vhgv))
    inner = inner / e
    if gs is not None:
        inner = inner + _diag_embed(gs)
    if m > n and gu is not None:
        ga = matmul(u, inner)
        gus = gu / s.unsqueeze(-2)
        ga = ga + gus - matmul(u, matmul(_mH(u), gus))
        return matmul(ga, _mH(v))
    if m < n and gv is not None:
        ga = matmul(inner, _mH(v))
        sgv = _mH(gv) / s.unsqueeze(-1)
        ga = ga + sgv - matmul(matmul(sgv, v), _mH(v))
        return matmul(u, ga)
    return matmul(u, matmul(inner, _mH(v)))


SVD = Op("linalg_svd", _svd_fwd, _svd_bwd, SAVE_BOTH, nout=3)


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """Same as `torch.linalg.svd`. Singular vector gradients are defined only for distinct singular values."""
    _check_matrix(A, "linalg.svd")
    _check_float(A, "linalg.svd")
    return _out(return_types.linalg_svd(*dispatch1(SVD, A, full_matrices)), out, "linalg_svd")


def linalg_svdvals(A, *, driver=None, out=None):
    """Same as `torch.linalg.svdvals`."""
    _check_matrix(A, "linalg.svdvals")
    _check_float(A, "linalg.svdvals")
    if A._requires_grad:
        s = dispatch1(SVD, A, False)[1]
    else:
        s = _make(np.linalg.svd(A._data, compute_uv=False))
    return s if out is None else write_out(s, out, "linalg_svdvals")


def svd(input, some=True, compute_uv=True, *, out=None):
    """Same as `torch.svd` (the old API): U, S, V with V (not V^H); compute_uv=False gives zero U and V."""
    _check_matrix(input, "linalg.svd")
    _check_float(input, "linalg.svd")
    if not compute_uv:
        m, n = input._data.shape[-2:]
        s = linalg_svdvals(input)
        z = input._data.shape[:-2]
        u = _const(input, np.zeros(z + (m, m), input._data.dtype))
        v = _const(input, np.zeros(z + (n, n), input._data.dtype))
        return _out(return_types.svd(u, s, v), out, "svd")
    u, s, vh = linalg_svd(input, full_matrices=not some)
    return _out(return_types.svd(u, s, _mH(vh)), out, "svd")


# ---------------------------------------------------------------- pinv, lstsq, rank
def _pinv_fwd(a, atol, rtol, hermitian):
    if hermitian:
        w, v = np.linalg.eigh(a)
        s = np.abs(w)
    else:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    tol = np.maximum(atol, rtol * smax)
    keep = s > tol
    with np.errstate(divide="ignore"):
        inv = np.where(keep, 1 / np.where(keep, s if not hermitian else w, 1), 0).astype(a.dtype)
    if hermitian:
        return (v * inv[..., None, :]) @ np.conj(_mT_np(v))
    return np.conj(_mT_np(vh)) * inv[..., None, :] @ np.conj(_mT_np(u))


def _pinv_grad(g, p, a):
    """Adjoint of d(A+) = -A+ dA A+ + A+ A+^H dA^H (I - A A+) + (I - A+ A) dA^H A+^H A+."""
    ph, gh = _mH(p), _mH(g)
    ga = -matmul(ph, matmul(g, ph))
    ga = ga + matmul(gh - matmul(a, matmul(p, gh)), matmul(p, ph))
    ga = ga + matmul(matmul(ph, p), gh - matmul(gh, matmul(p, a)))
    return ga


PINV = Op("linalg_pinv", _pinv_fwd, lambda ctx, g: _pinv_grad(g, ctx.outputs[0], ctx.inputs[0]), SAVE_BOTH)


def _default_tols(A, atol, rtol):
    if isinstance(atol, Tensor) or isinstance(rtol, Tensor):
        atol = 0.0 if atol is None else (atol._data[..., None] if isinstance(atol, Tensor) else atol)
        rtol = 0.0 if rtol is None else (rtol._data[..., None] if isinstance(rtol, Tensor) else rtol)
        return atol, rtol
    if rtol is None:
        m, n = A._data.shape[-2:]
        rtol = np.finfo(A._data.real.dtype if A._data.dtype.kind == "c" else A._data.dtype).eps * max(m, n) \
            if atol is None or atol == 0 else 0.0
    return (0.0 if atol is None else atol), rtol


def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Same as `torch.linalg.pinv`."""
    k = A._data.dtype.kind
    if A._data.ndim < 2 or (k != "f" and k != "c") or A._data.dtype == np.float16:
        raise RuntimeError(f"linalg.pinv({_type_name(A._data)}{{[{', '.join(map(str, A._data.shape))}]}}): "
                           f"expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble types")
    atol, rtol = _default_tols(A, atol, rtol)
    r = dispatch1(PINV, A, atol, rtol, hermitian)
    return r if out is None else write_out(r, out, "linalg_pinv")


def pinverse(input, rcond=1e-15):
    """Same as `torch.pinverse`."""
    return linalg_pinv(input, atol=0.0, rtol=rcond)


def _lstsq_bwd(ctx, grads):
    g = grads[0]
    if g is None:
        return None, None
    a, b = ctx.inputs
    need = ctx.needs_input_grad
    p = linalg_pinv(a)  # the solution is pinv(A) @ B
    ga = _pinv_grad(matmul(g, _mH(b)), p, a) if need[0] else None
    gb = matmul(_mH(p), g) if need[1] else None
    return ga, gb


def _lstsq_fwd(a, b, rcond, driver):
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    af = np.broadcast_to(a, shape + a.shape[-2:]).reshape(-1, *a.shape[-2:])
    bf = np.broadcast_to(b, shape + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    m, n = a.shape[-2:]
    if rcond is None:
        rcond = np.finfo(a.real.dtype).eps * max(m, n)
    sols, res, ranks, svals = [], [], [], []
    for x, y in zip(af, bf):
        sol, r, k, s = np.linalg.lstsq(x, y, rcond=rcond)
        sols.append(sol)
        res.append(r)
        ranks.append(k)
        svals.append(s)
    sol = np.stack(sols).reshape(shape + (n, b.shape[-1])) if sols else np.zeros(shape + (n, b.shape[-1]), a.dtype)
    rank = np.array(ranks, np.int64).reshape(shape)
    real = a.real.dtype
    if driver in ("gelsd", "gelss") and sols:
        sv = np.stack(svals).reshape(shape + (min(m, n),)).astype(real)
    else:
        sv = np.zeros((0,), real)
    if driver != "gelsy" and m > n and sols and all(k == n for k in ranks):
        resid = np.stack(res).reshape(shape + (b.shape[-1],)).astype(real)
    else:
        resid = np.zeros((0,), real)
    return sol.astype(a.dtype), resid, rank, sv


LSTSQ = Op("linalg_lstsq", _lstsq_fwd, _lstsq_bwd, SAVE_INPUTS, nout=4)


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """Same as `torch.linalg.lstsq`: (solution, residuals, rank, singular_values); driver as torch's CPU
    drivers report them (default gelsy: residuals and singular_values empty)."""
    _check_matrix(A, "torch.linalg.lstsq")
    _check_float(A, "linalg.lstsq")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_type_name(A._data)} and other's dtype {_type_name(B._data)}")
    vec = B._data.ndim == A._data.ndim - 1
    if B._data.ndim < A._data.ndim - 1 or B._data.ndim > A._data.ndim:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    b = B.unsqueeze(-1) if vec else B
    if b._data.shape[-2] != A._data.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-{1 if vec else 2})")
    sol, res, rank, sv = dispatch2(LSTSQ, A, b, rcond, driver)
    for t in (res, rank, sv):
        t._requires_grad, t._grad_fn = False, None
    if vec:
        sol = sol.squeeze(-1)
    return return_types.linalg_lstsq(sol, res, rank, sv)


def linalg_matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None, tol=None):
    """Same as `torch.linalg.matrix_rank`."""
    _check_matrix(A, "torch.linalg.matrix_rank")
    if A._data.dtype.kind not in "fc" or A._data.dtype == np.float16:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _default_tols(A, atol, rtol)
    d = A._data
    s = np.abs(np.linalg.eigvalsh(d)) if hermitian else np.linalg.svd(d, compute_uv=False)
    smax = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros(s.shape[:-1] + (1,), s.dtype)
    r = _make(np.asarray((s > np.maximum(atol, rtol * smax)).sum(-1), dtype=np.int64))
    return r if out is None else write_out(r, out, "linalg_matrix_rank")


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
    return np.asarray(r, dtype=rt)


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
    g = expand_grad(g, shape, dims, keepdim)
    sgn = _const(x, _sgn_np(x._data))
    if ord == 1:
        return g * sgn
    y = expand_grad(y, shape, dims, keepdim)
    if ord == 2:  # x / |x|, and 0 at the zero vector (as torch)
        return g * x / (y + _const(y, (y._data == 0).astype(y._data.dtype)))
    if ord == math.inf or ord == -math.inf:  # split evenly between the entries that attain the max / min
        mask = (np.abs(x._data) == y._data).astype(y._data.dtype)
        count = mask.sum(axis=dims, keepdims=True) if dims is not None or x._data.ndim else mask.sum()
        return g * sgn * _const(x, mask / count)
    # d ||x||_p = sgn(x) |x|^(p-1) / ||x||^(p-1)
    ax = x * sgn if x._data.dtype.kind != "c" else _const(x, np.abs(x._data))
    nz = _const(x, (x._data != 0).astype(y._data.dtype))
    ysafe = y + _const(y, (y._data == 0).astype(y._data.dtype))
    return g * sgn * nz * _pow(ax + (1 - nz), ord - 1) / _pow(ysafe, ord - 1)


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
    if ord == "nuc":
        r = s.sum(-1)
    else:  # the largest / smallest singular value (svdvals are sorted in descending order)
        k = s._data.shape[-1]
        pick = np.zeros(k, s._data.dtype)
        pick[0 if ord == 2 else k - 1] = 1
        r = matmul(s, _const(s, pick))
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
        n1 = np.sum(x1 * x1, -1)[..., :, None]
        n2 = np.sum(x2 * x2, -1)[..., None, :]
        d2 = n1 + n2 - 2 * (x1 @ np.swapaxes(x2, -1, -2))
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


# ---------------------------------------------------------------- binding
def _matmul_method(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return _matmul(self, other)


def _rmatmul_method(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    return _matmul(other, self)


for _name in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "kron", "trace", "inverse",
              "det", "logdet", "slogdet", "pinverse", "matrix_power", "matrix_exp", "cholesky", "cholesky_solve",
              "cholesky_inverse", "svd", "qr", "triangular_solve", "cross"):
    setattr(Tensor, _name, globals()[_name])
for _name in ("addmm", "addmv", "addr", "addbmm", "baddbmm"):
    setattr(Tensor, _name, globals()[_name])
    setattr(Tensor, _name + "_", make_inplace(globals()[_name], _name + "_"))
# Tensor has no __imatmul__, as in torch: `a @= b` rebinds a to a @ b
Tensor.__matmul__ = _matmul_method
Tensor.__rmatmul__ = _rmatmul_method
