"""LU factorization with partial pivoting: linalg.lu_factor(_ex), linalg.lu, lu_unpack, linalg.lu_solve and the
older torch.lu / torch.lu_solve spellings.

NOTE [ LU gradients ]
Only the factorization is an Op of its own: LU (L's strict lower part and U packed together, as LAPACK's getrf
leaves them) with its backward below; lu_unpack cuts L and U out of LU with differentiable ember ops, and
lu_solve solves with them through solve_triangular, so their gradients (and higher ones) come from those ops. With
A = P L U (P a permutation, L unit lower m x k, U upper k x n, k = min(m, n)) the gradient of A for gradients gL
and gU of L and U is, for square A,
    gA = P L^-H [ tril_-1(L^H gL) + triu(gU U^H) ] U^-H;
for wide A = P L [U1 U2] the columns of U2 = L^-1 P^T A2 add gA2 = P L^-H gU2 and change L's part to
L^H gL - gU2 U2^H; for tall A = P [L1; L2] U the rows of L2 = P^T A2 U^-1 add gA2 = P gL2 U^-H and change U's part
to gU U^H - L2^H gL2. The forward runs on the host (SciPy's getrf); device arrays go there and back.
"""
import warnings

import numpy as np

from .._backend import XP, host
from .._tensor import Tensor
from ._dispatch import SAVE_BOTH, Op, dispatch1
from ._linalg_util import (LinAlgError, _batch_prefix, _check_float, _check_matrix, _const, _eye, _mH, _out,
                           _structseq)
from .join import cat
from .linalg import matmul
from .solve import linalg_solve_triangular

__all__ = ["lu", "lu_solve", "lu_unpack"]

_LUFactor = _structseq("linalg_lu_factor", ("LU", "pivots"))
_LUFactorEx = _structseq("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_LU = _structseq("linalg_lu", ("P", "L", "U"))
_LUUnpack = _structseq("lu_unpack", ("P", "L", "U"))


def _getrf(a):
    """(LU, 1-based int32 pivots, int32 info) of every matrix of array a, as LAPACK's getrf."""
    import scipy.linalg
    dev = None if a.__class__ is np.ndarray else XP[a.__class__]
    x = a if dev is None else host(a)
    m, n = x.shape[-2:]
    k = min(m, n)
    flat = x.reshape(-1, m, n)
    lu = np.empty_like(flat)
    piv = np.empty((flat.shape[0], k), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    with warnings.catch_warnings():  # a singular matrix is reported through info, as torch does
        warnings.simplefilter("ignore")
        for i, mat in enumerate(flat):
            if mat.size:
                lu[i], p = scipy.linalg.lu_factor(mat, check_finite=False)
                piv[i] = p[:k] + 1
                zero = np.flatnonzero(np.diagonal(lu[i])[:k] == 0)
                info[i] = zero[0] + 1 if zero.size else 0
            else:
                piv[i] = np.arange(1, k + 1)
    shape = x.shape[:-2]
    out = (lu.reshape(x.shape), piv.reshape(shape + (k,)), info.reshape(shape))
    return out if dev is None else tuple(dev.asarray(o) for o in out)


def _lu_bwd(ctx, grads):
    """gA from gLU through the unpacked L and U (NOTE [ LU gradients ])."""
    g = grads[0]
    if g is None:
        return (None,)
    lu, piv, _ = ctx.outputs
    m, n = lu.shape[-2:]
    k = min(m, n)
    P, L, U = _unpack(lu, piv._data, True)
    gL = g.narrow(-1, 0, k).tril(-1)
    gU = g.narrow(-2, 0, k).triu()
    return (matmul(P, _lu_grad(L, U, gL, gU, m, n, k)),)


def _lu_grad(L, U, gL, gU, m, n, k):
    """P^T gA for A = P L U, given gL and gU (either may be None), for any m x n (NOTE [ LU gradients ])."""
    if m == n:
        phi = _phi(L, U, gL, gU)
        return _solve_l_h(L, _solve_u_h_right(U, phi))
    if m < n:  # wide: U = [U1 U2]
        U1, U2 = U.narrow(-1, 0, k), U.narrow(-1, k, n - k)
        gU1 = None if gU is None else gU.narrow(-1, 0, k)
        gU2 = None if gU is None else gU.narrow(-1, k, n - k)
        phi = _phi(L, U1, gL, gU1)
        if gU2 is not None:
            phi = phi - matmul(gU2, _mH(U2)).tril(-1)
        ga1 = _solve_u_h_right(U1, phi)
        ga = ga1 if gU2 is None else cat([ga1, gU2], -1)
        return _solve_l_h(L, ga)
    L1, L2 = L.narrow(-2, 0, k), L.narrow(-2, k, m - k)  # tall: L = [L1; L2]
    gL1 = None if gL is None else gL.narrow(-2, 0, k)
    gL2 = None if gL is None else gL.narrow(-2, k, m - k)
    phi = _phi(L1, U, gL1, gU)
    if gL2 is not None:
        phi = phi - matmul(_mH(L2), gL2).triu()
    ga1 = _solve_l_h(L1, phi)
    ga = ga1 if gL2 is None else cat([ga1, gL2], -2)
    return _solve_u_h_right(U, ga)


def _phi(L, U, gL, gU):
    parts = []
    if gL is not None:
        parts.append(matmul(_mH(L), gL).tril(-1))
    if gU is not None:
        parts.append(matmul(gU, _mH(U)).triu())
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


def _solve_l_h(L, B):
    """L^-H B for unit lower L."""
    return linalg_solve_triangular(_mH(L), B, upper=True, unitriangular=True)


def _solve_u_h_right(U, B):
    """B U^-H for upper U."""
    return linalg_solve_triangular(_mH(U), B, upper=False, left=False)


_LU_FACTOR = Op("linalg_lu_factor_ex", _getrf, _lu_bwd, SAVE_BOTH, nout=3, node_name="LinalgLuFactorExBackward0")


def _factor(A, name, pivot):
    _check_matrix(A, name)
    _check_float(A, name)
    if not pivot:
        raise RuntimeError(f"{name}: LU without pivoting is not implemented on the CPU")
    return dispatch1(_LU_FACTOR, A)


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """Same as `torch.linalg.lu_factor_ex`: (LU, pivots, info); info > 0 where U[info-1, info-1] is zero."""
    lu, piv, info = _factor(A, "torch.linalg.lu_factor_ex", pivot)
    if check_errors:
        _raise_info(info, "torch.linalg.lu_factor_ex")
    return _out(_LUFactorEx(lu, piv, info), out, "linalg.lu_factor_ex")


def linalg_lu_factor(A, *, pivot=True, out=None):
    """Same as `torch.linalg.lu_factor`: (LU, pivots), raising where U has a zero on its diagonal."""
    lu, piv, info = _factor(A, "torch.linalg.lu_factor", pivot)
    _raise_info(info, "torch.linalg.lu_factor")
    return _out(_LUFactor(lu, piv), out, "linalg.lu_factor")


def _raise_info(info, name):
    codes = info._data if info._data.__class__ is np.ndarray else host(info._data)
    bad = np.flatnonzero(codes.reshape(-1))
    if bad.size:
        i = bad[0]
        c = int(codes.reshape(-1)[i])
        raise LinAlgError(f"{name}: {_batch_prefix(codes.shape + (0, 0), i)}U[{c},{c}] is zero and using it on "
                          "lu_solve would result in a division by zero. If you still want to perform the "
                          "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _permutation(piv, m, like):
    """P (..., m, m) of LAPACK pivots (1-based row interchanges, applied in order), with P^T A = A[perm], as a
    constant tensor like `like`."""
    p = piv if piv.__class__ is np.ndarray else host(piv)
    flat = p.reshape(int(np.prod(p.shape[:-1])), p.shape[-1])
    eye = np.eye(m, dtype=like._data.dtype)
    out = np.empty((flat.shape[0], m, m), eye.dtype)
    for b, row in enumerate(flat):
        perm = np.arange(m)
        for i, j in enumerate(row):
            perm[[i, j - 1]] = perm[[j - 1, i]]
        out[b] = eye[perm].T
    return _const(like, out.reshape(p.shape[:-1] + (m, m)))


def _unpack(lu, piv, want_p):
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = lu.narrow(-1, 0, k).tril(-1) + _eye(m, lu, k)
    U = lu.narrow(-2, 0, k).triu()
    P = _permutation(piv, m, lu) if want_p else None
    return P, L, U


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """Same as `torch.lu_unpack`: (P, L, U) of lu_factor's result (empty tensors for what is not unpacked)."""
    if LU_pivots._data.dtype != np.int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 dtype.")
    m, n = LU_data.shape[-2:]
    P, L, U = _unpack(LU_data, LU_pivots._data, unpack_pivots) if unpack_data else (
        _permutation(LU_pivots._data, m, LU_data) if unpack_pivots else None, None, None)
    empty = LU_data.new_empty(0)
    r = _LUUnpack(P if P is not None else empty, L if L is not None else empty, U if U is not None else empty)
    return _out(r, out, "lu_unpack")


def linalg_lu(A, *, pivot=True, out=None):
    """Same as `torch.linalg.lu`: (P, L, U) with A = P L U."""
    lu, piv, _ = _factor(A, "linalg.lu", pivot)
    P, L, U = _unpack(lu, piv._data, True)
    return _out(_LU(P, L, U), out, "linalg.lu")


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """Same as `torch.linalg.lu_solve`: X with A X = B (left) or X A = B, A (or its adjoint) given by lu_factor."""
    _check_matrix(B, "linalg.lu_solve", "B")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError("linalg.lu_solve: Expected LU to be a square matrix.")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    P, L, U = _unpack(LU, pivots._data, True)
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _out(_mH(_lu_solve_left(P, L, U, _mH(B), not adjoint)), out, "linalg.lu_solve")
    return _out(_lu_solve_left(P, L, U, B, adjoint), out, "linalg.lu_solve")


def _lu_solve_left(P, L, U, B, adjoint):
    if adjoint:  # A^H = U^H L^H P^T
        y = linalg_solve_triangular(_mH(U), B, upper=False)
        y = linalg_solve_triangular(_mH(L), y, upper=True, unitriangular=True)
        return matmul(P, y)
    y = linalg_solve_triangular(L, matmul(_mH(P), B), upper=False, unitriangular=True)
    return linalg_solve_triangular(U, y, upper=True)


def lu(A, pivot=True, get_infos=False, out=None):
    """Same as `torch.lu` (torch.linalg.lu_factor_ex under its older name): (LU, pivots[, infos])."""
    lu_, piv, info = _factor(A, "torch.lu", pivot)
    if get_infos:
        return _out((lu_, piv, info), out, "lu")
    _raise_info(info, "torch.linalg.lu_factor")
    return _out((lu_, piv), out, "lu")


def lu_solve(b, LU_data, LU_pivots, *, out=None):
    """Same as `torch.lu_solve` (torch.linalg.lu_solve(LU_data, LU_pivots, b))."""
    return _out(linalg_lu_solve(LU_data, LU_pivots, b), out, "lu_solve")


Tensor.lu = lambda self, pivot=True, get_infos=False: lu(self, pivot, get_infos)
Tensor.lu_solve = lambda self, LU_data, LU_pivots: lu_solve(self, LU_data, LU_pivots)
