"""Linear algebra: inverses, determinants, linear solvers (general and triangular) and matrix functions
(matrix_power, matrix_exp).

Forwards are NumPy/LAPACK calls; backwards are written with ember ops, so higher-order gradients work.
"""
import numpy as np

from .. import return_types
from .._backend import XP, xp_of
from ..autograd.graph import carries_tangent
from .._tensor import Tensor
from ._dispatch import SAVE_BOTH, SAVE_INPUTS, SAVE_OUTPUT, Op, dispatch1, dispatch2
from ._inplace import write_out
from ._linalg_util import (LinAlgError, _batch_prefix, _check_float, _check_matrix, _check_same_dtype,
                           _check_square, _conj, _const, _mH, _mT, _mT_np, _out, _shape_str, _structseq,
                           _tril_mask, _triu_mask, _warn_once)
from .binary import where
from .linalg import matmul

__all__ = ["inverse", "det", "logdet", "slogdet", "matrix_power", "matrix_exp", "triangular_solve"]

_TriangularSolve = _structseq("triangular_solve", ("solution", "cloned_coefficient"))


# ---------------------------------------------------------------- matrix power
def matrix_power(input, n, *, out=None):
    """Same as `torch.matrix_power` / `torch.linalg.matrix_power`."""
    _check_square(input, "linalg.matrix_power")
    if n < 0:
        _check_float(input, "linalg.inv")
        input = linalg_inv(input)
        n = -n
    if n == 0:
        m = input._data.shape[-1]
        eye = _const(input, np.broadcast_to(np.eye(m, dtype=input._data.dtype), input._data.shape).copy())
        # torch's identity is in the graph (a zero gradient); a where() keeps its values exact even for inf/nan
        r = where(_const(input, np.zeros((), bool)), input, eye) if input.requires_grad or carries_tangent(input) \
            else eye
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
    xp = np if a.__class__ is np.ndarray else XP[a.__class__]
    norm = np.abs(a).sum(-2).max(-1) if a.size else xp.zeros(a.shape[:-2])
    s = np.maximum(0, np.ceil(np.log2(np.maximum(norm, 1e-300) / 5.371920351148152))).astype(int)
    scale = np.power(2.0, -s)[..., None, None]
    a = a * scale
    eye = np.broadcast_to(xp.eye(a.shape[-1]), a.shape)
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
        return np.linalg.inv(a), np.zeros_like(a, np.int32, shape=a.shape[:-2])
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
    a, = ctx.inputs
    if gl is None:  # the sign of a real determinant is piecewise constant: a zero gradient, as torch gives
        return a.new_zeros(a.shape) if gs is None or a._data.dtype.kind != "c" else _sign_grad(a, ctx, gs)
    g = gl.unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(a))  # d log|det A| = Re tr(A^-1 dA)
    if gs is not None and a._data.dtype.kind == "c":
        g = g + _sign_grad(a, ctx, gs)
    return g


def _sign_grad(a, ctx, gs):
    """The gradient through sign = det / |det| of a complex A: d sign = i sign Im tr(A^-1 dA)."""
    det = linalg_det(a.detach())
    sign = det / det.abs()
    t = (gs.conj() * sign).imag  # minus the real coefficient c of d sign = i sign c, c = Im tr(A^-1 dA)
    return (-1j * t).to(a.dtype).unsqueeze(-1).unsqueeze(-1) * _mH(linalg_inv(a))


SLOGDET = Op("linalg_slogdet", _slogdet_fwd, _slogdet_bwd, SAVE_INPUTS, nout=2)


def _slogdet(A, name):
    _check_square(A, name)
    _check_float(A, name)
    return dispatch1(SLOGDET, A)


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
    if a.shape[:-2] != b.shape[:-2] and a.__class__ is not np.ndarray:  # CuPy's solve does not broadcast
        xp = xp_of(a)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = xp.ascontiguousarray(xp.broadcast_to(a, batch + a.shape[-2:]))
        b = xp.ascontiguousarray(xp.broadcast_to(b, batch + b.shape[-2:]))
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


def _broadcast_error(sa, sb):
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                                f"non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} cannot be broadcast")


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


# ---------------------------------------------------------------- binding
for _name in ("inverse", "det", "logdet", "slogdet", "matrix_power", "matrix_exp", "triangular_solve"):
    setattr(Tensor, _name, globals()[_name])
