"""Compiled CPU kernels: numba, where it is installed (`pip install ember[jit]`) and not switched off.

# NOTE [ Compiled CPU kernels ]
NumPy runs one pass over memory per call; a few CPU kernels need one pass where NumPy needs several (the
scatter-add of a convolution's input gradient, max pooling and its backward). Those are written as plain Python
loops and compiled by numba on first use. Rules:
  - Every kernel has a NumPy path next to the code that calls it, complete and tested: `EMBER_JIT=0` in the
    environment (read here, once, at import) or `ENABLED[0] = False` (tests) runs everything without numba, and
    CI runs the suite both ways.
  - A kernel goes in only where bench/ shows it faster than the NumPy path; its docstring gives the figures.
  - Compiled code is cached on disk (numba's cache=True: next to the kernel's source file, or in the user's cache
    directory where that is read-only), so only the first process on a machine pays the compile time.
  - Kernels are serial (no parallel=True). numba's parallel thread pools either abort when two threads enter
    them at once (workqueue) or hang in a forked child (GNU OpenMP), and on a machine whose cores BLAS already
    fills, their threads waited milliseconds for a core behind OpenBLAS's spinning ones: a 10 us kernel took 8 ms.
    The kernels here are memory-bound; one core runs them at most a few times slower than all of them.
"""
import importlib.util
import os

import numpy as np

ENABLED = [os.environ.get("EMBER_JIT", "1") != "0" and importlib.util.find_spec("numba") is not None]


DTYPES = (np.dtype(np.float32), np.dtype(np.float64))  # what the kernels are written for


def enabled():
    return ENABLED[0]


def kernel(fn=None, *, fastmath=False):
    """Decorator: fn compiled by numba on its first call (numba's own lazy dispatcher), cached on disk.
    fastmath: numba's flag set (e.g. {"contract"} for fused multiply-adds)."""
    if fn is None:
        return lambda f: kernel(f, fastmath=fastmath)
    import numba
    return numba.njit(cache=True, nogil=True, error_model="numpy", fastmath=fastmath)(fn)


def kernel_inline(fn=None, *, fastmath=False):
    """kernel() for a small helper that is inlined into the kernels calling it (so their loops vectorize)."""
    if fn is None:
        return lambda f: kernel_inline(f, fastmath=fastmath)
    import numba
    return numba.njit(cache=True, nogil=True, error_model="numpy", fastmath=fastmath, inline="always")(fn)
