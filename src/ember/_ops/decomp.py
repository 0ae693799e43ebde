"""Linear algebra decompositions: Cholesky (with cholesky_solve and cholesky_inverse), QR, eigh and eig, SVD,
and pinv, lstsq and matrix_rank built on them.

Forwards are NumPy/LAPACK calls; backwards are written with ember ops, so higher-order gradients work. Gradients
of decompositions follow the standard formulas (as torch's do): those of eigenvectors and singular vectors are
defined only where the eigen/singular values are distinct.
"""
import builtins

import numpy as np

from .. import return_types
from .._backend import xp_of
from .._tensor import Tensor
from ..autograd.graph import carries_tangent
from ._dispatch import SAVE_BOTH, SAVE_INPUTS, SAVE_OUTPUT, Op, dispatch1, dispatch2, wrap
from ._inplace import write_out
from ._linalg_util import (LinAlgError, _batch_prefix, _check_float, _check_matrix, _check_square, _const,
                           _diag_embed, _eye, _make, _mH, _mT, _mT_np, _out, _shape_str, _tril_mask, _triu_mask,
                           _type_name, _warn_once)
from .linalg import matmul
from .solve import _triangular, _triangular_fwd

__all__ = ["pinverse", "cholesky", "cholesky_solve", "cholesky_inverse", "svd", "qr"]


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
        return np.linalg.cholesky(a), np.zeros_like(a, np.int32, shape=a.shape[:-2])
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
        return np.zeros_like(a, shape=(0,)), r
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
    if A._requires_grad or carries_tangent(A):
        w = dispatch1(EIGH, A, UPLO)[0]
    else:
        w = _make(np.linalg.eigvalsh(A._data, UPLO=UPLO))
    return w if out is None else write_out(w, out, "linalg_eigvalsh")


def _complex_of(a):
    return a.astype(np.complex128 if a.dtype in (np.float64, np.complex128) else np.complex64)


def _eig_fwd(a):
    w, v = np.linalg.eig(a)
    return _complex_of(w), _complex_of(v)


def _eig_bwd(ctx, grads):
    # gA = V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(L_j - L_i)) V^H, the real part for a
    # real A (the engine takes it); defined where the eigenvalues are distinct, as torch's
    gl, gv = grads
    lam, v = ctx.outputs
    vh = _mH(v)
    if gv is None:
        inner = _diag_embed(gl)
    else:
        vhgv = matmul(vh, gv)
        inner = vhgv - matmul(vh, v * vhgv.diagonal(0, -2, -1).real.to(v.dtype).unsqueeze(-2))
        lc = lam.conj()
        e = lc.unsqueeze(-2) - lc.unsqueeze(-1)
        n = lam.shape[-1]
        e = e + _eye(n, e)  # the diagonal is set apart below
        inner = inner / e
        if gl is not None:
            inner = inner * (1 - _eye(n, inner)) + _diag_embed(gl)
    from .solve import linalg_solve
    return (linalg_solve(vh, matmul(inner, vh)),)


EIG = Op("linalg_eig", _eig_fwd, _eig_bwd, SAVE_OUTPUT, nout=2, node_name="LinalgEigBackward0")


def linalg_eig(A, *, out=None):
    """Same as `torch.linalg.eig` (always complex results); differentiable where the eigenvalues are distinct."""
    _check_square(A, "linalg.eig")
    _check_float(A, "linalg.eig")
    w, v = dispatch1(EIG, A)
    return _out(return_types.linalg_eig(w, v), out, "linalg_eig")


def linalg_eigvals(A, *, out=None):
    """Same as `torch.linalg.eigvals` (complex results); differentiable as linalg.eig's eigenvalues."""
    _check_square(A, "linalg.eigvals")
    _check_float(A, "linalg.eigvals")
    if A._requires_grad or carries_tangent(A):
        r = dispatch1(EIG, A)[0]
    else:
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
    if A._requires_grad or carries_tangent(A):
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
    smax = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros_like(s, shape=s.shape[:-1] + (1,))
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
    xp = xp_of(a)
    sol = np.stack(sols).reshape(shape + (n, b.shape[-1])) if sols else xp.zeros(shape + (n, b.shape[-1]), a.dtype)
    # NumPy answers each rank as an integer, CuPy as a 0-dim device array
    if driver == "gels":  # QR without pivoting computes no rank: torch answers an empty tensor
        rank = xp.zeros((0,), np.int64)
    else:
        rank = (np.array(ranks, np.int64) if xp is np else xp.asarray(ranks, dtype=np.int64)).reshape(shape)
    real = a.real.dtype
    if driver in ("gelsd", "gelss") and sols:
        sv = np.stack(svals).reshape(shape + (min(m, n),)).astype(real)
    else:
        sv = xp.zeros((0,), real)
    if driver != "gelsy" and m > n and sols and all(k == n for k in ranks):
        resid = np.stack(res).reshape(shape + (b.shape[-1],)).astype(real)
    else:
        resid = xp.zeros((0,), real)
    return sol.astype(a.dtype), resid, rank, sv


LSTSQ = Op("linalg_lstsq", _lstsq_fwd, _lstsq_bwd, SAVE_INPUTS, nout=4)


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """Same as `torch.linalg.lstsq`: (solution, residuals, rank, singular_values); driver as torch's CPU
    drivers report them (default gelsy: residuals and singular_values empty; gels: rank empty too)."""
    _check_matrix(A, "torch.linalg.lstsq")
    _check_float(A, "linalg.lstsq")
    if driver is None:
        driver = "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
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
    if sol._requires_grad or carries_tangent(sol):  # the residuals are differentiable too, as torch's: recomputed from the solution
        if res._data.size:
            d = matmul(A, sol) - b
            res = (d.conj() * d).real.sum(-2) if d.is_complex() else (d * d).sum(-2)
        else:
            res = sol.reshape(-1)[:0]
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
    smax = s.max(-1, keepdims=True) if s.shape[-1] else np.zeros_like(s, shape=s.shape[:-1] + (1,))
    r = wrap((s > np.maximum(atol, rtol * smax)).sum(-1).astype(np.int64))
    return r if out is None else write_out(r, out, "linalg_matrix_rank")


# ---------------------------------------------------------------- binding
for _name in ("pinverse", "cholesky", "cholesky_solve", "cholesky_inverse", "svd", "qr"):
    setattr(Tensor, _name, globals()[_name])
