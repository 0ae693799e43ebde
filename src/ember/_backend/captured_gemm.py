"""Matrix products inside a CUDA graph capture: one CuPy kernel, since CuPy refuses to capture cuBLAS calls.

While a graph is captured (NOTE [ CUDA graphs ] in ember/cuda/graphs.py), `ember._backend.matmul` sends device
products here: every output element is one thread's dot product over K, accumulated in float (double for float64)
as cuBLAS accumulates, so a captured product equals the eager one to rounding. The kernel reads its operands from
global memory without tiling: it is meant for the small products of the steps worth capturing (where launches,
not FLOPs, are the cost), and is far below cuBLAS on large ones.
"""
import numpy as np

from . import XP
from .kernels import Kernels

_BODY = """
const long long row = (i / n) % m, col = i % n, batch = i / (m * n);
const long long ao = batch * a_batch + row * k, bo = batch * b_batch + col;
W acc = 0;
for (long long p = 0; p < k; ++p) acc += (W)a[ao + p] * (W)b[bo + p * n];
c = (T)acc;
"""


def _make(xp, name, wide):
    return xp.ElementwiseKernel("raw T a, raw T b, int64 m, int64 k, int64 n, int64 a_batch, int64 b_batch", "T c",
                                f"typedef {wide} W;" + _BODY, f"ember_captured_gemm_{wide}")


KERNELS = Kernels(_make)


def matmul(a, b):
    """np.matmul(a, b) of two device arrays of one real floating dtype (1-d operands and broadcast batch
    dimensions as np.matmul has them), as one kernel launch."""
    if a.dtype != b.dtype or a.ndim == 0 or b.ndim == 0 or not KERNELS.available(a) or a.dtype.kind == "c":
        raise RuntimeError(f"a matrix product of {a.dtype} and {b.dtype} arrays cannot be captured into a CUDA "
                           "graph: CuPy cannot capture cuBLAS, and ember's own kernel takes two arrays of one real "
                           "floating dtype")
    xp = XP[a.__class__]
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    m, k, n = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    if b2.shape[-2] != k:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} are not aligned")
    batch = np.broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    if b2.ndim == 2:  # every row of every batch times one matrix: one product of (batch * m, k) rows
        A, B = xp.ascontiguousarray(a2).reshape(-1), xp.ascontiguousarray(b2).reshape(-1)
        rows, nb, a_batch, b_batch = a2.size // k if k else int(np.prod(batch, dtype=np.int64)) * m, 1, 0, 0
    else:
        A = xp.ascontiguousarray(xp.broadcast_to(a2, batch + (m, k))).reshape(-1)
        B = xp.ascontiguousarray(xp.broadcast_to(b2, batch + (k, n))).reshape(-1)
        rows, nb, a_batch, b_batch = m, int(np.prod(batch, dtype=np.int64)), m * k, k * n
    out = xp.empty((nb, rows, n), a.dtype)
    if out.size and not KERNELS("gemm", a, (A, B, rows, k, n, a_batch, b_batch, out)):
        raise RuntimeError("the captured matrix product kernel could not be compiled")
    shape = batch + (m, n)
    if a.ndim == 1:
        shape = shape[:-2] + (n,)
    if b.ndim == 1:
        shape = shape[:-1]
    return out.reshape(shape)
