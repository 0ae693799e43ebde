"""Same as `torch.linalg`: decompositions, solvers, inverses and norms.

The ops themselves live in ember/_ops/linalg.py (products), solve.py (inverses, determinants, solvers, matrix
functions), decomp.py (decompositions) and norms.py, shared with the top-level ember.det, ember.svd, ...; this
module is the public namespace, loaded on first use of `ember.linalg`.
"""
import math

import numpy as np

from .._ops import _linalg_util as _lu
from .._ops import decomp as _dc
from .._ops import linalg as _la
from .._ops import householder as _hh
from .._ops import ldl as _ldl_ops
from .._ops import lu as _lu_ops
from .._ops import norms as _nm
from .._ops import solve as _sv
from .._ops._inplace import write_out as _write_out
from .._ops._linalg_util import LinAlgError
from .._ops.linalg import matmul, multi_dot
from .._ops.norms import matrix_norm, vector_norm
from .._ops.solve import matrix_exp, matrix_power

__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "inv", "inv_ex", "pinv", "det", "slogdet", "solve",
           "solve_ex", "solve_triangular", "lstsq", "cholesky", "cholesky_ex", "qr", "eigh", "eigvalsh", "eig",
           "eigvals", "svd", "svdvals", "matrix_rank", "matrix_power", "matrix_exp", "multi_dot", "cross", "vecdot",
           "matmul", "diagonal", "tensorinv", "tensorsolve", "cond", "vander", "lu", "lu_factor", "lu_factor_ex",
           "lu_solve", "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve"]

norm = _nm.linalg_norm
inv = _sv.linalg_inv
inv_ex = _sv.linalg_inv_ex
pinv = _dc.linalg_pinv
det = _sv.linalg_det
slogdet = _sv.linalg_slogdet
solve = _sv.linalg_solve
solve_triangular = _sv.linalg_solve_triangular
lstsq = _dc.linalg_lstsq
cholesky_ex = _dc.linalg_cholesky_ex
qr = _dc.linalg_qr
eigh = _dc.linalg_eigh
eigvalsh = _dc.linalg_eigvalsh
eig = _dc.linalg_eig
eigvals = _dc.linalg_eigvals
svd = _dc.linalg_svd
svdvals = _dc.linalg_svdvals
matrix_rank = _dc.linalg_matrix_rank
cross = _la.linalg_cross
householder_product = _hh.householder_product
lu = _lu_ops.linalg_lu
lu_factor = _lu_ops.linalg_lu_factor
lu_factor_ex = _lu_ops.linalg_lu_factor_ex
lu_solve = _lu_ops.linalg_lu_solve
ldl_factor = _ldl_ops.linalg_ldl_factor
ldl_factor_ex = _ldl_ops.linalg_ldl_factor_ex
ldl_solve = _ldl_ops.linalg_ldl_solve
_SolveEx = _lu._structseq("linalg_solve_ex", ("result", "info"))


def cholesky(A, *, upper=False, out=None):
    """Same as `torch.linalg.cholesky`."""
    return _dc.linalg_cholesky(A, upper=upper, out=out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """Same as `torch.linalg.solve_ex`: (result, info). A singular A raises here, whatever check_errors says."""
    x = _sv.linalg_solve(A, B, left=left)
    info = _lu._const(A, np.zeros(A._data.shape[:-2], np.int32))
    return _lu._out(_SolveEx(x, info), out, "linalg_solve_ex")


def vecdot(x, y, *, dim=-1, out=None):
    """Same as `torch.linalg.vecdot`: sum(conj(x) * y, dim)."""
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{_lu._type_name(x._data)} and y of type {_lu._type_name(y._data)} instead")
    _lu._check_float(x, "linalg.vecdot")
    r = (_lu._conj(x) * y).sum(dim)
    return r if out is None else _write_out(r, out, "linalg_vecdot")


def vander(x, *, N=None):
    """Same as `torch.linalg.vander`: x (*, n) -> (*, n, N), the powers x**0 ... x**(N-1) of each element
    (products of x, so exact for integers and differentiable at 0); integer inputs widen to int64."""
    from .. import bool as _bool, cat, int64
    if x.dtype == _bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got Bool")
    n = N if N is not None else (x.shape[-1] if x.dim() else 0)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x.dim() == 0:
        x = x.reshape(1)
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(int64)
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cat([x.new_ones(x.shape + (1,)), powers], -1)


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
    return r if out is None else _write_out(r, out, "linalg_tensorinv")


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
    return r if out is None else _write_out(r, out, "linalg_tensorsolve")


def cond(A, p=None, *, out=None):
    """Same as `torch.linalg.cond`."""
    if p is None or p in (2, -2):
        s = svdvals(A)
        big, small = vector_norm(s, math.inf, -1), vector_norm(s, -math.inf, -1)
        r = big / small if p != -2 else small / big
    else:
        r = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return r if out is None else _write_out(r, out, "linalg_cond")
