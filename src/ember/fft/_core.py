"""The FFT primitives: complex-to-complex, real-to-complex and complex-to-real transforms, with their adjoints.

# NOTE [ FFT primitives and their adjoints ]
Every public transform of ember.fft is one of three ops (torch's _fft_c2c, _fft_r2c, _fft_c2r), each taking the
transformed dims, a scaling mode (none, 1/sqrt(n), 1/n) and a direction (forward: exp(-2 pi i jk/n)), after an
optional zero-pad/crop of the input (RESIZE). The adjoint of a transform of one direction is the transform of the
other direction with the same scaling, so every backward is again one of these ops and double backward is free:
- c2c(d)  -> c2c(not d)
- r2c(d)  -> real(c2c(not d)) of the gradient zero-filled back to the full (two-sided) length
- c2r(d)  -> r2c(not d, onesided) with bins 1 .. n - (n//2 + 1) of the last dim doubled: each of them stands for
             itself and its conjugate mirror in the full spectrum the c2r implicitly reads.
An inverse-direction r2c is the conjugate of the forward one (ihfft), a forward-direction c2r reads the conjugate
of its input (hfft), as torch defines them. The kernels are scipy.fft (cupyx.scipy.fft for CuPy arrays), which
keeps single precision (NumPy's np.fft would compute float32 in double).
"""
import numpy as np

from .._backend import XP, scipy_module
from .._ops._dispatch import Op, dispatch1
from .._ops.rearrange import real

__all__ = ["BY_N", "NONE", "ORTHO", "c2c", "c2r", "r2c", "resize"]

NONE, ORTHO, BY_N = 0, 1, 2
# the scipy.fft `norm` that scales a transform by the mode: [inverse transforms, forward transforms]
_NORM = ({NONE: "forward", ORTHO: "ortho", BY_N: "backward"}, {NONE: "backward", ORTHO: "ortho", BY_N: "forward"})

def _fftmod(x):
    """scipy.fft, or cupyx.scipy.fft for CuPy arrays, imported on first use."""
    return scipy_module(x, "fft")


# ---------------- complex to complex ----------------
def _c2c_fwd(x, dims, mode, forward):
    if not dims:  # nothing to transform: a complex copy, as torch gives
        return x.astype(np.result_type(x.dtype, np.complex64))
    m = _fftmod(x)
    return (m.fftn if forward else m.ifftn)(x, axes=dims, norm=_NORM[forward][mode])


C2C = Op("fft_c2c", _c2c_fwd, lambda ctx, g: c2c(g, *ctx.attrs[:2], not ctx.attrs[2]), node_name="FftC2CBackward0")


def c2c(x, dims, mode, forward):
    """The c2c transform of x over dims (a real x is read as complex; its gradient is then real)."""
    return dispatch1(C2C, x, dims, mode, forward)


# ---------------- real to complex ----------------
def _r2c_fwd(x, dims, mode, forward, onesided):
    m = _fftmod(x)
    if not onesided:
        return (m.fftn if forward else m.ifftn)(x, axes=dims, norm=_NORM[forward][mode])
    y = m.rfftn(x, axes=dims, norm=_NORM[True][mode])
    return y if forward else XP[y.__class__].conjugate(y, out=y)


def _r2c_bwd(ctx, g):
    dims, mode, forward, onesided = ctx.attrs
    if onesided:  # the dropped half of the spectrum had no effect on the output: zeros there
        last = dims[-1]
        g = resize(g, (last,), (ctx.shapes[0][last],))
    return real(c2c(g, dims, mode, not forward))


# torch's graph names the inverse (conjugated) one ConjBackward0 for one dim, FftC2CBackward0 for several
R2C = Op("fft_r2c", _r2c_fwd, _r2c_bwd, node_name="FftR2CBackward0")
_R2C_CONJ = Op("fft_r2c", _r2c_fwd, _r2c_bwd, node_name="ConjBackward0")
_R2C_INVN = Op("fft_r2c", _r2c_fwd, _r2c_bwd, node_name="FftC2CBackward0")


def r2c(x, dims, mode, forward, onesided):
    """The r2c transform of the real x over dims; onesided keeps n//2 + 1 bins of the last dim."""
    op = R2C if forward else _R2C_CONJ if len(dims) == 1 else _R2C_INVN
    return dispatch1(op, x, dims, mode, forward, onesided)


# ---------------- complex to real ----------------
def _c2r_fwd(x, dims, mode, forward, n):
    m = _fftmod(x)
    if forward:
        x = XP[x.__class__].conjugate(x)
    s = [x.shape[d] for d in dims[:-1]]
    s.append(n)
    return m.irfftn(x, s=s, axes=dims, norm=_NORM[False][mode])


def _c2r_bwd(ctx, g):
    dims, mode, forward, n = ctx.attrs
    gx = r2c(g, dims, mode, not forward, True)
    k = n - (n // 2 + 1)
    return dispatch1(_DOUBLE, gx, dims[-1], k) if k > 0 else gx


C2R = Op("fft_c2r", _c2r_fwd, _c2r_bwd, node_name="FftC2RBackward0")


def c2r(x, dims, mode, forward, n):
    """The c2r transform of the one-sided x (last dim n//2 + 1) over dims, n points along the last dim."""
    return dispatch1(C2R, x, dims, mode, forward, n)


def _double_fwd(x, dim, k):
    y = x.copy()
    y[(slice(None),) * dim + (slice(1, 1 + k),)] *= 2
    return y


# bins 1 .. k of dim times 2: real weights, so the op is its own adjoint
_DOUBLE = Op("fft_double", _double_fwd, lambda ctx, g: dispatch1(_DOUBLE, g, *ctx.attrs), node_name="MulBackward0")


# ---------------- zero-padding / cropping ----------------
def _resize_fwd(x, dims, sizes):
    shape = list(x.shape)
    idx = [slice(None)] * x.ndim
    pad = False
    for d, n in zip(dims, sizes):
        if n > shape[d]:
            pad = True
        idx[d] = slice(0, min(n, shape[d]))
        shape[d] = n
    idx = tuple(idx)
    if not pad:  # a crop is a view: only an FFT kernel, which never writes its input, reads it
        return x[idx]
    y = XP[x.__class__].zeros(shape, x.dtype)
    y[idx] = x[idx]
    return y


# padding's adjoint is cropping and cropping's is padding: resize back to the input's sizes
RESIZE = Op("fft_resize", _resize_fwd,
            lambda ctx, g: resize(g, ctx.attrs[0], tuple(ctx.shapes[0][d] for d in ctx.attrs[0])),
            node_name="ConstantPadNdBackward0")


def resize(x, dims, sizes):
    """x zero-padded or cropped (at the end) to sizes along dims; x itself when nothing changes."""
    shape = x._data.shape
    for d, n in zip(dims, sizes):
        if shape[d] != n:
            return dispatch1(RESIZE, x, dims, sizes)
    return x
