"""Cumulative ops: cumsum, cumprod, cummax, cummin and logcumsumexp, and the linear private ops their backwards
(and prod's) are built from."""
import ml_dtypes
import numpy as np

from .. import _dtype
from .. import return_types as _rt
from .._autocast import AUTOCAST, cast_one
from .._backend import XP, maybe_any
from .._backend.accumulate import accumulate
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import GRAD
from ._dispatch import SAVE_BOTH, SAVE_NONE, Op, dispatch1
from ._inplace import make_inplace
from .join import cat
from ._reduce_util import (_F32, _SCATTER, _acc, _acc_dtype, _back, _cast, _conj, _const, _is_float, _not_implemented,
                           _one_dim, _out, _out2, _zero_dim_pair)

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "diff", "gradient", "trapezoid", "trapz",
           "cumulative_trapezoid"]


# ---------------- linear private ops used by scan backwards ----------------
def _flip_fwd(x, dim):
    return np.flip(x, dim).copy()  # C order, on either device


_FLIP = Op("flip", _flip_fwd, lambda ctx, g: dispatch1(_FLIP, g, ctx.attrs[0]))


def _rcumsum_fwd(g, dim):
    return np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim).copy()


# reverse cumulative sum: the adjoint of cumsum
_RCUMSUM = Op("_reverse_cumsum", _rcumsum_fwd, lambda ctx, g: cumsum(g, ctx.attrs[0]))


def _rcumsum(g, dim):
    return dispatch1(_RCUMSUM, g, dim)


def _shift_fwd(x, dim, fill, step):
    """Shift along dim by one (step=1: towards the end), filling the vacated slot with `fill`."""
    out = np.empty_like(x)
    n = x.shape[dim]
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    src[dim], dst[dim] = (slice(0, n - 1), slice(1, n)) if step > 0 else (slice(1, n), slice(0, n - 1))
    out[tuple(dst)] = x[tuple(src)]
    edge = [slice(None)] * x.ndim
    edge[dim] = slice(0, 1) if step > 0 else slice(n - 1, n)
    out[tuple(edge)] = fill
    return out


_SHIFT = Op("_shift", _shift_fwd, lambda ctx, g: dispatch1(_SHIFT, g, ctx.attrs[0], 0, -ctx.attrs[2]))


def _exclusive_cumprod(x, dim):
    """prod_{i<j} x_i along dim (1 at the first position)."""
    return cumprod(dispatch1(_SHIFT, x, dim, 1, 1), dim)


# ---------------- cumsum / cumprod ----------------
# torch's CPU scans accumulate in a wider type (float32 in double, float16/bfloat16 in float): without it a
# float32 cumsum of 2**24 ones stalls at 16777216
_SCAN_ACC = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128),
             _dtype.float16.np: _F32, _dtype.bfloat16.np: _F32}


def _scan(fn, x, dim, np_dtype):
    if x.ndim == 0:
        return x.astype(np_dtype or x.dtype)
    if np_dtype is None:
        acc = _SCAN_ACC.get(x.dtype)
        if acc is not None:
            return fn(x, axis=dim, dtype=acc).astype(x.dtype)
    return fn(x, axis=dim, dtype=np_dtype)


def _cumsum_fwd(x, dim, np_dtype):
    return _scan(np.cumsum, x, dim, np_dtype)


CUMSUM = Op("cumsum", _cumsum_fwd, lambda ctx, g: _rcumsum(g, ctx.attrs[0]) if len(ctx.shapes[0]) else g)


def _scan_args(input, dim, dtype):
    if dtype is not None:
        input = _cast(input, dtype)
    return input, _one_dim(dim, input._data.ndim)


def cumsum(input, dim=None, *, dtype=None, out=None, axis=None):
    """Same as `torch.cumsum`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("cumsum() missing 1 required positional argument: 'dim'")
    if AUTOCAST[0] and dtype is None:
        input = cast_one("cumsum", input)
    input, dim = _scan_args(input, dim, dtype)
    return _out(dispatch1(CUMSUM, input, dim, _acc_dtype(input, dtype)), out, "cumsum")


def _cumprod_fwd(x, dim, np_dtype):
    return _scan(np.cumprod, x, dim, np_dtype)


def _cumprod_bwd(ctx, g):
    # dy_k/dx_j = prod_{i<=k, i!=j} x_i for k >= j, so grad_j = sum_{k>=j} g_k y_k / x_j where x_j != 0
    x, y = ctx.inputs[0], ctx.output
    dim = ctx.attrs[0]
    xd = x._data
    if xd.ndim == 0:
        return g
    zero = xd == 0
    if not maybe_any(zero):
        return _rcumsum(g * _conj(y), dim) / _conj(x)
    # Past the first zero of a line every product holds that zero: no gradient. Before it, the formula above
    # holds. At it, grad_z = sum_{k>=z} g_k prod_{i<=k, i!=z} x_i: the cumprod with that zero replaced by one.
    if GRAD[0]:  # create_graph: the masked formula below is exact but not differentiable at the zeros
        return _cumprod_grad_quadratic(x, g, dim)
    seen = np.cumsum(zero, axis=dim)
    before = seen == 0
    first = zero & (seen == 1)
    xs = x * _const(before, x) + _const(~before, x)
    ga = _rcumsum(g * _conj(y), dim) / _conj(xs) * _const(before, x)
    w = cumprod(x * _const(~first, x) + _const(first, x), dim)
    gb = _rcumsum(g * _conj(w), dim) * _const(first, x)
    return ga + gb


def _cumprod_grad_quadratic(x, g, dim):
    """grad_k = prod_{i<k} x_i * sum_{m>=k} g_m prod_{k<i<=m} x_i, from differentiable ops on an n x n grid (grid
    axis 0 is k, the scanned dim moves to dim + 1). O(n^2): only for double backward through zeros, as torch."""
    xd = x._data
    n, nd = xd.shape[dim], xd.ndim
    k = np.arange(n).reshape((n,) + (1,) * nd)
    i = np.arange(n).reshape([n if a == dim + 1 else 1 for a in range(nd + 1)])
    after = np.broadcast_to(i > k, (n,) + (1,) * dim + (n,) + (1,) * (nd - dim - 1))
    partial = cumprod(x.unsqueeze(0) * _const(after, x) + _const(~after, x), dim + 1)  # prod_{k<i<=m} x_i
    s = (g.unsqueeze(0) * partial * _const(i >= k, x)).sum(dim + 1)
    s = s.permute(*range(1, dim + 1), 0, *range(dim + 1, nd))
    return _exclusive_cumprod(x, dim) * s


CUMPROD = Op("cumprod", _cumprod_fwd, _cumprod_bwd, SAVE_BOTH)


def cumprod(input, dim=None, *, dtype=None, out=None, axis=None):
    """Same as `torch.cumprod`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("cumprod() missing 1 required positional argument: 'dim'")
    if AUTOCAST[0] and dtype is None:
        input = cast_one("cumprod", input)
    input, dim = _scan_args(input, dim, dtype)
    return _out(dispatch1(CUMPROD, input, dim, _acc_dtype(input, dtype)), out, "cumprod")


# ---------------- cummax / cummin ----------------
def _cumext_fwd(ufunc):
    def fwd(x, dim):
        if x.ndim == 0:
            return _zero_dim_pair(x)
        v = accumulate(ufunc, x, dim)
        # torch's index: the latest position holding the running extreme (ties and NaNs move it forward)
        mark = x == v
        if _is_float(x.dtype):
            mark |= np.isnan(x)
        xp = np if x.__class__ is np.ndarray else XP[x.__class__]
        pos = xp.arange(x.shape[dim]).reshape([-1 if i == dim else 1 for i in range(x.ndim)])
        idx = accumulate(np.maximum, np.where(mark, pos, 0), dim)
        return (v, idx), idx
    return fwd


def _cumext_bwd(ctx, gs):
    g = gs[0]
    if g is None:
        return None
    idx = ctx.extra
    if idx is None:
        return g
    return dispatch1(_SCATTER, g, idx, ctx.attrs[0], ctx.shapes[0])


CUMMAX = Op("cummax", _cumext_fwd(np.maximum), _cumext_bwd, SAVE_NONE, nout=2, extra=True)
CUMMIN = Op("cummin", _cumext_fwd(np.minimum), _cumext_bwd, SAVE_NONE, nout=2, extra=True)


def _cumext(name, op, cls, input, dim, out):
    if input._data.dtype.kind == "c":
        raise _not_implemented(f"{name}_cpu", input)
    r = dispatch1(op, input, _one_dim(dim, input._data.ndim))
    return _out2(r, out, name, cls)


def cummax(input, dim=None, *, out=None, axis=None):
    """Same as `torch.cummax`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("cummax() missing 1 required positional argument: 'dim'")
    return _cumext("cummax", CUMMAX, _rt.cummax, input, dim, out)


def cummin(input, dim=None, *, out=None, axis=None):
    """Same as `torch.cummin`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("cummin() missing 1 required positional argument: 'dim'")
    return _cumext("cummin", CUMMIN, _rt.cummin, input, dim, out)


# ---------------- logcumsumexp ----------------
def _lcse_fwd(x, dim):
    if x.ndim == 0:
        return x.copy()
    xc, dt = _acc(x)
    if xc.dtype.kind == "c":
        with np.errstate(divide="ignore", invalid="ignore"):
            m = xc.real.max(axis=dim, keepdims=True) if xc.size else 0
            m = np.where(np.isfinite(m), m, 0)
            return np.log(np.cumsum(np.exp(xc - m), axis=dim)) + m
    return _back(accumulate(np.logaddexp, xc, dim), dt)


def _log_or_lowest(t):
    """log(t) where t > 0, else the lowest finite float: unlike -inf it keeps the log-space sums below free of
    inf - inf, so the double backward stays finite (torch's formulation)."""
    z = t._data <= 0
    if not maybe_any(z):
        return t.log()
    lowest = ml_dtypes.finfo(t._data.dtype).min
    return (t * _const(~z, t) + _const(z, t)).log() + _const(np.where(z, lowest, 0), t)


def _rlcse(t, dim):
    """logcumsumexp from the end of the dim."""
    return dispatch1(_FLIP, logcumsumexp(dispatch1(_FLIP, t, dim), dim), dim)


def _lcse_bwd(ctx, g):
    # grad_j = sum_{k>=j} g_k exp(x_j - y_k), summed in log space separately for the positive and negative g
    x, y = ctx.inputs[0], ctx.output
    dim = ctx.attrs[0]
    if x._data.ndim == 0:
        return g
    if x._data.dtype.kind == "c":
        return (x.exp() * _rcumsum(g * (-y).exp().conj(), dim).conj()).conj()
    with np.errstate(invalid="ignore", over="ignore"):
        gp = (x + _rlcse(_log_or_lowest(g) - y, dim)).exp()
        gn = (x + _rlcse(_log_or_lowest(-g) - y, dim)).exp()
    return gp - gn


LOGCUMSUMEXP = Op("logcumsumexp", _lcse_fwd, _lcse_bwd, SAVE_BOTH)


def logcumsumexp(input, dim=None, *, out=None, axis=None):
    """Same as `torch.logcumsumexp`."""
    if axis is not None:  # torch also takes numpy's argument names
        dim = axis
    elif dim is None:
        raise TypeError("logcumsumexp() missing 1 required positional argument: 'dim'")
    d = input._data
    if not _is_float(d.dtype) and d.dtype.kind != "c":
        raise _not_implemented("logcumsumexp_out_cpu", input)
    return _out(dispatch1(LOGCUMSUMEXP, input, _one_dim(dim, d.ndim)), out, "logcumsumexp")


def _gradient_weights(x, edge_order):
    """Coefficients (on f[i-1], f[i], f[i+1]) of the second-order central differences at the interior points of
    coordinates x, and those of the two edges (on f[0..2] and f[-3..-1]), as numpy.gradient has them."""
    hl, hr = np.diff(x)[:-1], np.diff(x)[1:]
    inner = (-hr / (hl * (hl + hr)), (hr - hl) / (hl * hr), hl / (hr * (hl + hr)))
    if edge_order == 1:
        d0, d1 = x[1] - x[0], x[-1] - x[-2]
        return inner, (-1 / d0, 1 / d0, 0.0), (0.0, -1 / d1, 1 / d1)
    a, b = x[1] - x[0], x[2] - x[1]
    left = (-(2 * a + b) / (a * (a + b)), (a + b) / (a * b), -a / (b * (a + b)))
    a, b = x[-2] - x[-3], x[-1] - x[-2]
    right = (b / (a * (a + b)), -(a + b) / (a * b), (2 * b + a) / (b * (a + b)))
    return inner, left, right


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Same as `torch.gradient`: second-order accurate central differences of input along each of `dim` (all dims
    when None), one-sided at the edges (edge_order 1 or 2); `spacing` is one number, one number per dim, or one
    1-d tensor of coordinates per dim. Differentiable: each result is a fixed linear combination of input."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    nd = input.dim()
    dims = list(range(nd)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [_wrap_dim(d, nd) for d in dims]
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if spacing is None:
        spacing = 1
    if not isinstance(spacing, (list, tuple)):
        spacing = [spacing] * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {len(spacing)} "
                           f"and a dim argument of length {len(dims)}.")
    f = input if input.is_floating_point() or input.is_complex() else input.to(_dtype.get_default_dtype())
    out = []
    for d, h in zip(dims, spacing):
        n = f.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        x = h.cpu()._data.astype(np.float64) if isinstance(h, Tensor) else np.arange(n, dtype=np.float64) * float(h)
        inner, left, right = _gradient_weights(x, edge_order)
        shape = [1] * nd
        shape[d] = n - 2

        def combo(coeffs, starts, length):
            """sum of coeffs[k] * f[starts[k] : starts[k] + length] along d (zero coefficients skipped)."""
            terms = [f.new_tensor(np.asarray(c).reshape(shape) if np.ndim(c) else c) * f.narrow(d, s0, length)
                     for c, s0 in zip(coeffs, starts) if np.ndim(c) or c != 0.0]
            total = terms[0]
            for t in terms[1:]:
                total = total + t
            return total

        parts = [combo(left, (0, 1, 2), 1)]
        if n > 2:
            parts.append(combo(inner, (0, 1, 2), n - 2))
        parts.append(combo(right, (n - 3, n - 2, n - 1), 1))
        out.append(cat(parts, d))
    return tuple(out)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """Same as `torch.diff`."""
    from .join import cat  # composite of differentiable ops, so autograd needs nothing more
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    parts = [t for t in (prepend, input, append) if t is not None]
    for t in parts:
        if t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    if n == 0:  # torch leaves prepend and append out then
        return input
    x = cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        hi, lo = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = hi != lo if x.dtype is _dtype.bool else hi - lo  # bool differences are xor, as in torch
    return x


def _trapz_parts(y, x, dx, dim, name):
    """The interval widths and the mean heights of y's neighbours along dim, as differentiable tensors."""
    if y._data.ndim == 0:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
    if y._data.dtype.kind in "biu":
        y = y.to(_dtype.get_default_dtype())
    n = y.shape[dim]
    heights = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2 if n else y
    if x is None:
        return heights, (1 if dx is None else dx)
    if x._data.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        widths = diff(x)
        widths = widths.reshape((-1,) + (1,) * (y._data.ndim - 1 - (dim % y._data.ndim))) if y._data.ndim > 1 else widths
    else:
        widths = diff(x, dim=dim)
    return heights, widths


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Same as `torch.trapezoid`."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments - got both x and dx")
    if y.shape[dim] == 0:
        return (y.to(_dtype.get_default_dtype()) if y._data.dtype.kind in "biu" else y).sum(dim)
    heights, widths = _trapz_parts(y, x, dx, dim, "trapezoid")
    return (heights * widths).sum(dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    """Same as `torch.trapz`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """Same as `torch.cumulative_trapezoid`."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments - got both x and dx")
    heights, widths = _trapz_parts(y, x, dx, dim, "cumulative_trapezoid")
    return (heights * widths).cumsum(dim)


# ---------------- binding ----------------
def _bind():
    for name in __all__:
        if "trap" not in name:  # the trapezoid rules are functions only, as in torch
            setattr(Tensor, name, globals()[name])
    Tensor.cumsum_ = make_inplace(cumsum, "cumsum_")
    Tensor.cumprod_ = make_inplace(cumprod, "cumprod_")


_bind()
