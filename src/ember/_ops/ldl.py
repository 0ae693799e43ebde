"""LDL factorization of symmetric and Hermitian matrices with Bunch-Kaufman pivoting: linalg.ldl_factor(_ex) and
linalg.ldl_solve.

NOTE [ LDL compact format ]
The factorization is LAPACK's ?sytrf (?hetrf for complex Hermitian input) with uplo='L': A = L D L^T (L^H), L unit
lower triangular times permutations, D block diagonal with 1x1 and 2x2 blocks. LD holds D's diagonal blocks and
L's multipliers below them in its lower triangle (the strict upper triangle is zeroed, as torch does); pivots are
LAPACK's 1-based int32 ipiv: pivots[k] > 0 marks a 1x1 block at k after swapping rows k and pivots[k]-1, and
pivots[k] == pivots[k+1] < 0 a 2x2 block at k, k+1 after swapping rows k+1 and -pivots[k]-1. Only A's lower
triangle is read. Both ops run on the host through SciPy's LAPACK wrappers, one matrix of the batch at a time;
device arrays go there and back. torch has no derivative for either: requiring grad gives an output that requires
grad and whose backward raises, as torch's do.
"""
import math

import numpy as np

from .._backend import XP, host
from .._dtype import FROM_NP
from .._tensor import Tensor
from ._dispatch import SAVE_NONE, Op, check_same_device, dispatch1, dispatch2
from ._inplace import write_out
from ._linalg_util import _check_square, _structseq, _type_name
from .solve import _broadcast_error

__all__ = []

_LDLFactor = _structseq("linalg_ldl_factor", ("LD", "pivots"))
_LDLFactorEx = _structseq("linalg_ldl_factor_ex", ("LD", "pivots", "info"))


def _lapack(names, dtype, hermitian):
    """SciPy's LAPACK routines ?sy<name> (?he<name> for complex Hermitian input) of dtype."""
    from scipy.linalg import lapack
    part = "he" if hermitian and dtype.kind == "c" else "sy"
    prefix = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}[dtype.name]
    return [getattr(lapack, prefix + part + n) for n in names]


def _on_host(a):
    return (a, None) if a.__class__ is np.ndarray else (host(a), XP[a.__class__])


def _sytrf(a, hermitian):
    """(LD, 1-based int32 pivots, int32 info) of every matrix of array a (NOTE [ LDL compact format ])."""
    x, dev = _on_host(a)
    n = x.shape[-1]
    flat = x.reshape(math.prod(x.shape[:-2]), n, n)
    ld = np.zeros_like(flat)
    piv = np.empty((flat.shape[0], n), np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    if flat.size:
        trf, trf_lwork = _lapack(("trf", "trf_lwork"), x.dtype, hermitian)
        lwork = max(int(np.real(trf_lwork(n, lower=1)[0])), n)  # the blocked algorithm, as torch's workspace query
        for i, mat in enumerate(flat):
            f, piv[i], info[i] = trf(mat, lower=1, lwork=lwork)
            ld[i] = np.tril(f)
    shape = x.shape[:-2]
    out = (ld.reshape(x.shape), piv.reshape(shape + (n,)), info.reshape(shape))
    return out if dev is None else tuple(dev.asarray(o) for o in out)


def _sytrs(ld, b, piv, hermitian):
    """X with A X = B for every pair of the broadcast batches of LD (with pivots) and B."""
    ld, dev = _on_host(ld)
    b, piv = _on_host(b)[0], _on_host(piv)[0]
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    n, k = b.shape[-2:]
    x = np.empty(batch + (n, k), b.dtype)
    if x.size:
        try:
            trs, = _lapack(("trs",), ld.dtype, hermitian)
        except AttributeError:  # SciPy before 1.15 wraps no ?sytrs/?hetrs
            trs = _trs_numpy(hermitian and ld.dtype.kind == "c")
        lds = np.broadcast_to(ld, batch + (n, n))
        pivs = np.broadcast_to(piv.astype(np.int32, copy=False), batch + (n,))
        bs = np.broadcast_to(b, batch + (n, k))
        for i in np.ndindex(batch):
            x[i] = trs(lds[i], pivs[i], bs[i], lower=1)[0]
    return x if dev is None else dev.asarray(x)


def _trs_numpy(hermitian):
    """LAPACK's ?sytrs/?hetrs (uplo='L') in NumPy, with the same call signature: solve L D L^T X = B (L^H for
    Hermitian) from the compact LD and pivots (NOTE [ LDL compact format ]), one row swap, rank-1 update or
    2x2 block at a time, as the reference routine does."""
    conj = np.conj if hermitian else (lambda v: v)

    def trs(a, ipiv, b, lower=1):
        x = np.array(b, dtype=np.result_type(a, b), copy=True)
        n = a.shape[0]
        k = 0
        while k < n:  # L D Y = P^T B, forwards
            if ipiv[k] > 0:
                p = ipiv[k] - 1
                x[[k, p]] = x[[p, k]]
                x[k + 1:] -= np.outer(a[k + 1:, k], x[k])
                x[k] /= a[k, k].real if hermitian else a[k, k]
                k += 1
            else:
                p = -ipiv[k] - 1
                x[[k + 1, p]] = x[[p, k + 1]]
                x[k + 2:] -= np.outer(a[k + 2:, k], x[k]) + np.outer(a[k + 2:, k + 1], x[k + 1])
                e = a[k + 1, k]
                d0, d1 = a[k, k] / conj(e), a[k + 1, k + 1] / e
                denom = d0 * d1 - 1
                b0, b1 = x[k] / conj(e), x[k + 1] / e
                x[k], x[k + 1] = (d1 * b0 - b1) / denom, (d0 * b1 - b0) / denom
                k += 2
        k = n - 1
        while k >= 0:  # L^T P^T X = Y, backwards
            x[k] -= conj(a[k + 1:, k]) @ x[k + 1:]
            if ipiv[k] > 0:
                p = ipiv[k] - 1
                k_next = k - 1
            else:
                x[k - 1] -= conj(a[k + 1:, k - 1]) @ x[k + 1:]
                p = -ipiv[k] - 1
                k_next = k - 2
            x[[k, p]] = x[[p, k]]
            k = k_next
        return x, 0
    return trs


def _no_derivative(name):
    def bwd(ctx, g):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return bwd


_LDL_FACTOR = Op("linalg_ldl_factor_ex", _sytrf, _no_derivative("linalg_ldl_factor_ex"), SAVE_NONE, nout=3,
                 node_name="NotImplemented")
_LDL_SOLVE = Op("linalg_ldl_solve", _sytrs, _no_derivative("linalg_ldl_solve"), SAVE_NONE,
                node_name="NotImplemented")


def _check_input(A, name):
    """torch's checks of LD (ldl_solve) or A (ldl_factor): matrices of a floating point or complex dtype."""
    _check_square(A, name)
    dt = FROM_NP[A._data.dtype]
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(A._data)}")


def _check_kernel_dtype(A, kernel):
    dt = A._data.dtype
    if dt.kind != "c" and dt != np.float32 and dt != np.float64:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(A._data)}\'')


def _factor(A, hermitian):
    _check_input(A, "torch.linalg.ldl_factor_ex")
    _check_kernel_dtype(A, "ldl_factor_kernel_cpu")
    return dispatch1(_LDL_FACTOR, A, hermitian)


def _out(r, out, name):
    """out= as torch has it for these ops: exact dtypes; an out that requires grad is refused, but inputs that do
    are not (torch's out then requires grad, with a backward that raises; here it does not require grad)."""
    if out is None:
        return r
    if r.__class__ is Tensor:
        return write_out(r.detach(), out, name, exact_dtype=True)
    if len(out) != len(r):
        raise TypeError(f"expected tuple of {len(r)} elements but got {len(out)}")
    return type(r)(*[write_out(x.detach(), o, name, exact_dtype=True) for x, o in zip(r, out)])


def _raise_info(info, name):
    codes = info._data if info._data.__class__ is np.ndarray else host(info._data)
    bad = np.flatnonzero(codes)
    if bad.size:  # torch reports a zero block of D as an unknown LAPACK error
        raise RuntimeError(f"{name}: Unknown error code: {codes.reshape(-1)[bad[0]]}.")


def linalg_ldl_factor_ex(A, *, hermitian=False, check_errors=False, out=None):
    """Same as `torch.linalg.ldl_factor_ex`: (LD, pivots, info); info > 0 where D has a zero diagonal block."""
    LD, piv, info = _factor(A, hermitian)
    if check_errors:
        _raise_info(info, "torch.linalg.ldl_factor_ex")
    return _out(_LDLFactorEx(LD, piv, info), out, "aten::linalg_ldl_factor_ex")


def linalg_ldl_factor(A, *, hermitian=False, out=None):
    """Same as `torch.linalg.ldl_factor`: (LD, pivots), raising where D has a zero diagonal block."""
    LD, piv, info = _factor(A, hermitian)
    _raise_info(info, "torch.linalg.ldl_factor")
    return _out(_LDLFactor(LD, piv), out, "aten::linalg_ldl_factor_ex")


def linalg_ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """Same as `torch.linalg.ldl_solve`: X with A X = B for A factored by ldl_factor; the batches of LD and B
    broadcast."""
    name = "torch.linalg.ldl_solve"
    _check_input(LD, name)
    if B._data.dtype != LD._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_type_name(B._data)} and A "
                           f"of type {_type_name(LD._data)} instead.")
    _check_b(LD, B, name)
    _check_pivots(LD, pivots, name)
    sb, sa = B._data.shape[:-2], LD._data.shape[:-2]
    try:
        np.broadcast_shapes(sb, sa)
    except ValueError:
        raise _broadcast_error(sb, sa) from None
    _check_pivot_values(pivots._data, LD._data.shape[-1])
    _check_kernel_dtype(LD, "ldl_solve_kernel_cpu")
    check_same_device((LD, pivots, B))
    return _out(dispatch2(_LDL_SOLVE, LD, B, pivots._data, hermitian), out, "aten::linalg_ldl_solve")


def _check_b(LD, B, name):
    b = B._data
    if b.ndim < 2:
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if b.ndim == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    n = LD._data.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")


def _check_pivots(LD, pivots, name):
    p = pivots._data
    if p.shape != LD._data.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
                           f"shape {list(p.shape)} instead")
    if p.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {_type_name(p)}")


def _check_pivot_values(p, n):
    """Out-of-range pivots would send LAPACK outside the matrix."""
    if p.size:
        a = np.abs(_on_host(p)[0].astype(np.int64))
        if a.min() < 1:
            raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass the "
                               "result of ldl_factor?")
        if a.max() > n:
            raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you properly "
                               "pass the result of ldl_factor?")
