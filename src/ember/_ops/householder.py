"""Householder representations of Q: geqrf (LAPACK's QR in compact form), linalg.householder_product (orgqr) and
ormqr.

geqrf's (a, tau) stores Q = H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^H, where v_i is column i of a below the
diagonal with a 1 on it (zeros above). householder_product and ormqr apply the reflectors one at a time with
ember ops (a rank-1 update each), so their gradients, and higher ones, come from those ops. geqrf itself runs on
the host (SciPy's LAPACK) and, as in torch, has no derivative.
"""
import builtins

import numpy as np

from .._backend import XP, host
from .._dtype import SCALAR_NAMES
from .._tensor import Tensor
from ._dispatch import Op, dispatch1
from .binary import where
from ._linalg_util import _out, _structseq
from .creation import arange, eye
from .linalg import matmul

__all__ = ["geqrf", "orgqr", "ormqr"]

_Geqrf = _structseq("geqrf", ("a", "tau"))


def _geqrf_fwd(a):
    import scipy.linalg
    dev = None if a.__class__ is np.ndarray else XP[a.__class__]
    x = a if dev is None else host(a)
    m, n = x.shape[-2:]
    flat = x.reshape((int(np.prod(x.shape[:-2])), m, n))
    qr = np.empty_like(flat)
    tau = np.zeros((flat.shape[0], min(m, n)), x.dtype)
    for i, mat in enumerate(flat):
        if mat.size:
            (q, t), _ = scipy.linalg.qr(mat, mode="raw", check_finite=False)
            qr[i], tau[i] = q, t
    out = (qr.reshape(x.shape), tau.reshape(x.shape[:-2] + (min(m, n),)))
    return out if dev is None else tuple(dev.asarray(o) for o in out)


def _geqrf_bwd(ctx, grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


_GEQRF = Op("geqrf", _geqrf_fwd, _geqrf_bwd, nout=2, node_name="GeqrfBackward0")


def geqrf(input, *, out=None):
    """Same as `torch.geqrf`: (a, tau), Q and R of input's QR decomposition in LAPACK's compact form."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if input._data.dtype.kind not in "fc" or input._data.dtype.itemsize < 4:
        raise NotImplementedError(f"\"geqrf_cpu\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'")
    return _out(_Geqrf(*dispatch1(_GEQRF, input)), out, "geqrf")


def _reflector(A, i):
    """v_i of the reflectors stored in A (..., m, n): column i with zeros above the diagonal and 1 on it."""
    col = A[..., :, i]
    rows = arange(A.shape[-2], device=A.device)
    one = col.new_ones(())
    zero = col.new_zeros(())
    return where(rows == i, one, where(rows > i, col, zero))


def _check_batch(name, A, t, what, core):
    """torch's error where t's batch dims (all but its last `core`) are not A's."""
    got = t.shape[:-core]
    if tuple(got) != tuple(A.shape[:-2]):
        raise RuntimeError(f"torch.{name}: Expected batch dimensions of {what} to be equal to input.shape[:-2], but "
                           f"got {list(got)}")


def householder_product(A, tau, *, out=None):
    """Same as `torch.linalg.householder_product`: the first n columns of H_1 ... H_k (A is m x n)."""
    name = "linalg.householder_product"
    if A.dim() < 2:
        raise RuntimeError(f"torch.{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"torch.{name}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"torch.{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if tau.dim() != A.dim() - 1:
        raise RuntimeError(f"torch.{name}: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {tau.dim()} and input.ndim is equal to {A.dim()}")
    _check_batch(name, A, tau, "tau", 1)
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"torch.{name}: tau dtype {SCALAR_NAMES[tau.dtype.name]} does not match input dtype "
                           f"{SCALAR_NAMES[A.dtype.name]}")
    m, n = A.shape[-2:]
    q = eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], m, n)
    if tau.shape[-1] == 0 and (A.requires_grad or tau.requires_grad):  # no reflector: I, still a function of both
        q = q + A * 0 + tau.sum(-1)[..., None, None] * 0
    for i in reversed(builtins.range(tau.shape[-1])):  # Q = H_1 (H_2 (... (H_k I)))
        v = _reflector(A, i).unsqueeze(-1)
        q = q - tau[..., i, None, None] * v * matmul(v.mH, q)
    return _out(q, out, "linalg.householder_product")


def orgqr(input, tau):
    """Same as `torch.orgqr`: the same as householder_product."""
    return householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False, *, out=None):
    """Same as `torch.ormqr`: op(Q) @ other (left) or other @ op(Q), op transposing (conjugating) when
    `transpose`, Q = H_1 ... H_k given by geqrf's (input, tau)."""
    if input.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim "
                           f"equal to {tau.dim()} and input.ndim is equal to {input.dim()}")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           f"input.shape[-1])")
    _check_batch("ormqr", input, tau, "tau", 1)
    _check_batch("ormqr", input, other, "other", 2)
    for what, t in (("tau", tau), ("other", other)):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {what} to have the same dtype, but input has dtype"
                               f"{SCALAR_NAMES[input.dtype.name]} and {what} has dtype "
                               f"{SCALAR_NAMES[t.dtype.name]}")
    c = other
    k = tau.shape[-1]
    # Q C = H_1 (... (H_k C)); Q^H C = H_k^H (... (H_1^H C)); C Q = ((C H_1) ...) H_k; C Q^H = ((C H_k^H) ...) H_1^H
    order = builtins.range(k) if left == transpose else reversed(builtins.range(k))
    for i in order:
        v = _reflector(input, i).unsqueeze(-1)
        t = tau[..., i, None, None]
        if transpose:
            t = t.conj()
        c = c - t * v * matmul(v.mH, c) if left else c - t * matmul(c, v) * v.mH
    return _out(c, out, "ormqr")


Tensor.geqrf = geqrf
Tensor.orgqr = orgqr
Tensor.ormqr = ormqr
