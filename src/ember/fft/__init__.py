"""Same as `torch.fft`: discrete Fourier transforms, their frequencies and shifts.

Arguments are parsed here, once, as torch's SpectralOps do (dtype promotion, dims, padding/cropping to n or s, the
normalization mode); every transform then runs one of the three differentiable primitives of ember/fft/_core.py
(see NOTE [ FFT primitives and their adjoints ] there).
"""
import math
import operator

import numpy as np

from .. import _dtype
from .._ops import creation as _cr
from .._ops._inplace import write_out as _write_out
from .._ops.rearrange import roll as _roll
from .._tensor import Tensor
from .._dtype import SCALAR_NAMES
from ._core import BY_N, NONE, ORTHO, c2c, c2r, r2c, resize

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]


# ---------------- argument parsing, in torch's words ----------------
def _tname(t):
    return SCALAR_NAMES[_dtype.FROM_NP[t._data.dtype].name]


def _check_tensor(input, fname):
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


def _promote(x):
    """torch's promote_tensor_fft: integer and bool inputs become the default float; half precisions are refused
    (torch's CPU kernels have none)."""
    c = x._data.dtype.char
    if c in "fdFD":
        return x
    if x._data.dtype.kind in "biu":
        x = x.to(_dtype.get_default_dtype())
        if x._data.dtype.char in "fd":
            return x
    raise RuntimeError(f"Unsupported dtype {_tname(x)}")


def _mode(norm, forward):
    """The scaling of a transform of the given direction: NONE, ORTHO (1/sqrt(n)) or BY_N (1/n)."""
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return ORTHO
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(d, ndim):
    d = operator.index(d)
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _dim_1d(x, n, dim, fname):
    """(dim, n) of a one-dimensional transform: n defaults to the input's size."""
    d = _wrap(dim, x._data.ndim)
    if n is None:
        return d, x._data.shape[d]
    try:
        if n.__class__ is bool:
            raise TypeError
        return d, operator.index(n)
    except TypeError:
        raise TypeError(f"fft_{fname}(): argument 'n' (position 2) must be int, not {type(n).__name__}") from None


def _as_tuple(v):
    return None if v is None else (v,) if not isinstance(v, (list, tuple)) else tuple(v)


def _dims_nd(x, s, dim):
    """torch's canonicalize_fft_shape_and_dim_args: the transformed dims and their sizes."""
    ndim = x._data.ndim
    shape = x._data.shape
    s, dim = _as_tuple(s), _as_tuple(dim)
    if dim is not None:
        dim = tuple(_wrap(d, ndim) for d in dim)
        if len(set(dim)) != len(dim):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dim is None:
            dim = tuple(range(ndim - len(s), ndim))
        s = tuple(shape[d] if n == -1 else operator.index(n) for d, n in zip(dim, s))
    elif dim is None:
        dim, s = tuple(range(ndim)), shape
    else:
        s = tuple(shape[d] for d in dim)
    for n in s:
        _check_n(n)
    return dim, tuple(s)


def _c2r_dims(x, s, dim, fname):
    """The dims, the one-sided input sizes and the output size of the last dim of an n-dimensional c2r."""
    dims, sizes = _dims_nd(x, s, dim)
    if not dims:
        raise RuntimeError(f"{fname} must transform at least one axis")
    last = sizes[-1] if s is not None and _as_tuple(s)[-1] != -1 else 2 * (x._data.shape[dims[-1]] - 1)
    _check_n(last)
    return dims, sizes[:-1] + (last // 2 + 1,), last


def _check_out(out, fname, complex_out):
    if out is None:
        return
    k = out._data.dtype.kind
    if complex_out and k != "c":
        raise RuntimeError(f"{fname} expects a complex output tensor, but got {_tname(out)}")
    if not complex_out and k not in "fV":
        raise RuntimeError(f"{fname} expects a floating point output tensor, but got {_tname(out)}")


def _finish(r, out, name, strict=False):
    if out is None:
        return r
    if strict and out._data.dtype != r._data.dtype:  # torch writes these through conj_physical_out
        raise RuntimeError(f"Found dtype {_tname(out)} but expected {_tname(r)}")
    return _write_out(r, out, name)


# ---------------- one-dimensional transforms ----------------
def _c2c_1d(fname, input, n, dim, norm, out, forward):
    _check_tensor(input, fname)
    x = _promote(input)
    d, n = _dim_1d(x, n, dim, fname)
    _check_n(n)
    mode = _mode(norm, forward)
    _check_out(out, fname, True)
    x = resize(x, (d,), (n,))
    if x._data.dtype.kind == "c":
        return _finish(c2c(x, (d,), mode, forward), out, "_fft_c2c")
    # a real input: torch's two-sided r2c (conjugated for the inverse)
    return _finish(r2c(x, (d,), mode, forward, False), out, "_fft_r2c", strict=not forward)


def _r2c_1d(fname, input, n, dim, norm, out, forward):
    _check_tensor(input, fname)
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"{fname} expects a real input tensor, but got {_tname(input)}")
    _check_out(out, fname, True)
    x = _promote(input)
    d, n = _dim_1d(x, n, dim, fname)
    _check_n(n)
    mode = _mode(norm, forward)
    x = resize(x, (d,), (n,))
    return _finish(r2c(x, (d,), mode, forward, True), out, "_fft_r2c", strict=not forward)


def _c2r_1d(fname, input, n, dim, norm, out, forward):
    _check_tensor(input, fname)
    _check_out(out, fname, False)
    x = _promote(input)
    given = n is not None
    d, m = _dim_1d(x, n, dim, fname)
    n = m if given else 2 * (m - 1)
    _check_n(n)
    mode = _mode(norm, forward)
    if given:
        x = resize(x, (d,), (n // 2 + 1,))
    return _finish(c2r(x, (d,), mode, forward, n), out, "_fft_c2r")


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """Same as `torch.fft.fft`."""
    return _c2c_1d("fft", input, n, dim, norm, out, True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """Same as `torch.fft.ifft`."""
    return _c2c_1d("ifft", input, n, dim, norm, out, False)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Same as `torch.fft.rfft`."""
    return _r2c_1d("rfft", input, n, dim, norm, out, True)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Same as `torch.fft.ihfft`."""
    return _r2c_1d("ihfft", input, n, dim, norm, out, False)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Same as `torch.fft.irfft`."""
    return _c2r_1d("irfft", input, n, dim, norm, out, False)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Same as `torch.fft.hfft`."""
    return _c2r_1d("hfft", input, n, dim, norm, out, True)


# ---------------- n-dimensional transforms ----------------
def _c2c_nd(fname, input, s, dim, norm, out, forward):
    _check_tensor(input, fname)
    x = _promote(input)
    dims, sizes = _dims_nd(x, s, dim)
    mode = _mode(norm, forward)
    _check_out(out, "fftn", True)
    # a real input is transformed as complex (torch converts it first); its gradient is the real part
    return _finish(c2c(resize(x, dims, sizes), dims, mode, forward), out, "_fft_c2c")


def _rfftn(fname, input, s, dim, norm, out):
    _check_tensor(input, fname)
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {_tname(input)}")
    x = _promote(input)
    dims, sizes = _dims_nd(x, s, dim)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    mode = _mode(norm, True)
    _check_out(out, "rfftn", True)
    return _finish(r2c(resize(x, dims, sizes), dims, mode, True, True), out, "_fft_r2c")


def _ihfftn(fname, input, s, dim, norm, out):
    _check_tensor(input, fname)
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {_tname(input)}")
    x = _promote(input)
    dims, sizes = _dims_nd(x, s, dim)
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    mode = _mode(norm, False)
    _check_out(out, "ihfftn", True)
    # one op for torch's conj(r2c) over the last dim followed by an inverse c2c over the others
    r = r2c(resize(x, dims, sizes), dims, mode, False, True)
    return _finish(r, out, "_fft_r2c" if len(dims) == 1 else "_fft_c2c", strict=len(dims) == 1)


def _c2r_nd(fname, input, s, dim, norm, out, forward):
    _check_tensor(input, fname)
    x = _promote(input)
    dims, sizes, last = _c2r_dims(x, s, dim, fname)
    mode = _mode(norm, forward)
    _check_out(out, fname, False)
    return _finish(c2r(resize(x, dims, sizes), dims, mode, forward, last), out, "_fft_c2r")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Same as `torch.fft.fft2`."""
    return _c2c_nd("fft2", input, s, dim, norm, out, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Same as `torch.fft.ifft2`."""
    return _c2c_nd("ifft2", input, s, dim, norm, out, False)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """Same as `torch.fft.fftn`."""
    return _c2c_nd("fftn", input, s, dim, norm, out, True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """Same as `torch.fft.ifftn`."""
    return _c2c_nd("ifftn", input, s, dim, norm, out, False)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Same as `torch.fft.rfft2`."""
    return _rfftn("rfft2", input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Same as `torch.fft.rfftn`."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Same as `torch.fft.ihfft2`."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Same as `torch.fft.ihfftn`."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Same as `torch.fft.irfft2`."""
    return _c2r_nd("irfftn", input, s, dim, norm, out, False)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Same as `torch.fft.irfftn`."""
    return _c2r_nd("irfftn", input, s, dim, norm, out, False)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Same as `torch.fft.hfft2`."""
    return _c2r_nd("hfftn", input, s, dim, norm, out, True)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Same as `torch.fft.hfftn`."""
    return _c2r_nd("hfftn", input, s, dim, norm, out, True)


# ---------------- frequencies ----------------
def _freq(name, k, n, d, out, dtype, device, requires_grad):
    """k (integer bin numbers, float64) times 1/(n*d), computed in the result dtype as torch's mul_ does."""
    _cr._check_dtype(dtype, name)
    dt = dtype or (out.dtype if out is not None else _dtype.get_default_dtype())
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{SCALAR_NAMES[dt.name]}'")
    nd = float(n) * float(d)
    scale = 1.0 / nd if nd else math.copysign(math.inf, nd)
    # half precisions: the scale rounded to the dtype, the product computed in float32 and rounded back
    work = dt.np if dt.np.char in "fd" else np.dtype(np.float32)
    arr = (k.astype(work) * np.asarray(scale, dt.np).astype(work)).astype(dt.np, copy=False)
    return _cr._out(_cr._finish(arr, device, requires_grad), out, f"fft_{name}")


def _negative(m):
    raise RuntimeError(f"Trying to create tensor with negative dimension {m}: [{m}]")


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.fft.fftfreq`."""
    n = operator.index(n)
    if n < 0:
        _negative(n)
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]).astype(np.float64)
    return _freq("fftfreq", k, n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """Same as `torch.fft.rfftfreq`."""
    n = operator.index(n)
    m = int(n / 2) + 1  # C's truncating division, as torch computes n/2 + 1
    if m < 0:
        _negative(m)
    return _freq("rfftfreq", np.arange(m, dtype=np.float64), n, d, out, dtype, device, requires_grad)


# ---------------- shifts ----------------
def _shift(input, dim, inverse):
    _check_tensor(input, "ifftshift" if inverse else "fftshift")
    ndim = input._data.ndim
    dims = tuple(range(ndim)) if dim is None else tuple(_wrap(d, ndim) for d in _as_tuple(dim))
    if not dims:
        raise RuntimeError("`shifts` required")
    shape = input._data.shape
    return _roll(input, [(shape[d] + inverse) // 2 for d in dims], dims)


def fftshift(input, dim=None):
    """Same as `torch.fft.fftshift`."""
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    """Same as `torch.fft.ifftshift`."""
    return _shift(input, dim, True)
