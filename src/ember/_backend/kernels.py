"""Fused GPU kernels built on first use: CuPy ElementwiseKernels that replace a chain of ufunc launches.

A family of kernels (the optimizers' updates, an LSTM's steps) is a `Kernels`: `make(xp, name, wide)` builds one
from CuPy module xp, with `wide` the C type its arithmetic runs in ("float", or "double" for float64 data). Each is
built once per CuPy module and precision (CuPy then compiles it per dtype and caches that on disk). Where kernels
cannot run (host arrays, a CuPy without ElementwiseKernel such as the tests' fake, a compiler that fails), a call
answers False and the caller runs its ufunc chain; after a failed compilation, for the rest of the process.
"""
from . import XP


class Kernels:
    def __init__(self, make):
        self._make = make
        self.built = {}       # (xp, name, wide) -> kernel
        self.broken = False   # set when a kernel failed to compile

    def available(self, arr):
        """Whether this family's kernels can run on arrays like arr (float16/32/64 or bfloat16, on a GPU)."""
        return not self.broken and arr.dtype.kind in "fV" and hasattr(XP.get(arr.__class__), "ElementwiseKernel")

    def __call__(self, name, like, args):
        """Launch kernel `name` for arrays like `like` with args: True when it ran, False when it could not be built."""
        xp = XP[like.__class__]
        wide = "double" if like.dtype.char == "d" else "float"
        key = (xp, name, wide)
        try:
            kernel = self.built.get(key)
            if kernel is None:
                kernel = self.built[key] = self._make(xp, name, wide)
            kernel(*args)
        except Exception as e:  # noqa: BLE001 - a compiler that fails (no NVRTC, an old driver) must not stop training
            if type(e).__name__ != "CompileException":
                raise
            self.broken = True
            return False
        return True
