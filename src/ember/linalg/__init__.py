"""Same as `torch.linalg`: decompositions, solvers, inverses and norms.

The ops themselves live in ember/_ops/linalg.py (shared with the top-level ember.det, ember.svd, ...); this
module is the public namespace, loaded on first use of `ember.linalg`.
"""
import math

import numpy as np

from .._ops import linalg as _la
from .._ops.linalg import LinAlgError, matmul, matrix_exp, matrix_norm, matrix_power, multi_dot, vector_norm

__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "inv", "inv_ex", "pinv", "det", "slogdet", "solve",
           "solve_ex", "solve_triangular", "lstsq", "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "eig",
           "eigvals", "svd", "svdvals", "matrix_rank", "matrix_power", "matrix_exp", "multi_dot", "cross", "vecdot",
           "matmul", "diagonal", "tensorinv", "tensorsolve", "cond"]

norm = _la.linalg_norm
inv = _la.linalg_inv
inv_ex = _la.linalg_inv_ex
pinv = _la.linalg_pinv
det = _la.linalg_det
slogdet = _la.linalg_slogdet
solve = _la.linalg_solve
solve_triangular = _la.linalg_solve_triangular
lstsq = _la.linalg_lstsq
cholesky_ex = _la.linalg_cholesky_ex
qr = _la.linalg_qr
eigh = _la.linalg_eigh
eigvalsh = _la.linalg_eigvalsh
eig = _la.linalg_eig
eigvals = _la.linalg_eigvals
svd = _la.linalg_svd
svdvals = _la.linalg_svdvals
matrix_rank = _la.linalg_matrix_rank
cross = _la.linalg_cross
_SolveEx = _la._structseq("linalg_solve_ex", ("result", "info"))


def cholesky(A, *, upper=False, out=None):
    """Same as `torch.linalg.cholesky`."""
    return _la.linalg_cholesky(A, upper=upper, out=out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """Same as `torch.linalg.solve_ex`: (result, info). A singular A raises here, whatever check_errors says."""
    x = _la.linalg_solve(A, B, left=left)
    info = _la._const(A, np.zeros(A._data.shape[:-2], np.int32))
    return _la._out(_SolveEx(x, info), out, "linalg_solve_ex")


def vecdot(x, y, *, dim=-1, out=None):
    """Same as `torch.linalg.vecdot`: sum(conj(x) * y, dim)."""
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_la._type_name(x._data)} and y of type {_la._type_name(y._data)} instead")
    _la._check_float(x, "linalg.vecdot")
    r = (_la._conj(x) * y).sum(dim)
    return r if out is None else _la.write_out(r, out, "linalg_vecdot")


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """Same as `torch.linalg.diagonal`: a view of the diagonals over the last two dimensions by default."""
    return A.diagonal(offset=offset, dim1=dim1, dim2=dim2)


def tensorinv(A, ind=2, *, out=None):
    """Same as `torch.linalg.tensorinv`."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    r = inv(A.reshape(rows, cols)).reshape(shape[ind:] + shape[:ind])
    return r if out is None else _la.write_out(r, out, "linalg_tensorinv")


def tensorsolve(A, B, dims=None, *, out=None):
    """Same as `torch.linalg.tensorsolve`."""
    if dims is not None:
        nd = A._data.ndim
        dims = [d % nd for d in dims]
        A = A.permute([d for d in range(nd) if d not in dims] + dims)
    shape = A._data.shape
    nb = B._data.ndim
    rows = math.prod(shape[:nb])
    x = solve(A.reshape(rows, -1), B.reshape(rows))
    r = x.reshape(shape[nb:])
    return r if out is None else _la.write_out(r, out, "linalg_tensorsolve")


def cond(A, p=None, *, out=None):
    """Same as `torch.linalg.cond`."""
    if p is None or p in (2, -2):
        s = svdvals(A)
        big, small = vector_norm(s, math.inf, -1), vector_norm(s, -math.inf, -1)
        r = big / small if p != -2 else small / big
    else:
        r = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return r if out is None else _la.write_out(r, out, "linalg_cond")
