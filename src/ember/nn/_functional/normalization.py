"""nn.functional: normalization (batch/layer/group/instance/RMS norm, local response norm) and distances.

NOTE [ Fused normalization ]
batch_norm, layer_norm, group_norm, instance_norm and rms_norm share one fused op. The public function computes,
in NumPy, the statistics (mean, 1/std) and the normalized input xhat over a "statistics view" of x (x itself, or
(N, groups, -1) for group norm), so running statistics are updated without a graph; the op's forward is then only
the affine step y = xhat * w + b. The backward is the standard formula over the reduced axes R (n elements):
    gx = invstd * (gxhat - mean_R(gxhat) - xhat * mean_R(gxhat * xhat)),   gxhat = g * w
with the centring term dropped for RMS norm and both mean terms dropped when fixed (running) statistics were used.
Without create_graph it runs in NumPy (reductions of products through einsum, so no temporaries); with
create_graph it recomputes the statistics from x in ember ops, so the result is differentiable again.
xhat is kept for the backward only when the output is a separate array (with an affine step): otherwise the
output is xhat itself and an in-place change to it (a following ReLU(inplace=True)) must not reach the backward.
Layer norm and RMS norm (statistics over the trailing dims, float32/float64) see x as (M, N) rows: row sums are
BLAS matrix-vector products with a cached ones vector, row sums of products np.vecdot, column sums of products
einsum; in measurements these beat ndarray.sum and einsum over several axes, and no pass copies xhat.
"""
import numbers
import string

import ml_dtypes
import numpy as np

import ember

from ..._autocast import AUTOCAST, cast_args
from ..._backend import _BF16, XP, jit, matmul, row_kernels
from ..._ops._dispatch import Op, dispatch, wrap
from ...autograd.grad_mode import GRAD
from ...autograd.graph import bump_version
from ._args import check_tensor

__all__ = [
    "batch_norm",
    "cosine_similarity",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "local_response_norm",
    "normalize",
    "pairwise_distance",
    "pdist",
    "rms_norm",
]


# ----- reductions without temporaries -----

_SUBSCRIPTS = {}


def _subscripts(ndim, axes, nops):
    key = (ndim, axes, nops)
    s = _SUBSCRIPTS.get(key)
    if s is None:
        letters = string.ascii_letters[:ndim]
        kept = "".join(c for i, c in enumerate(letters) if i not in axes)
        s = _SUBSCRIPTS[key] = ",".join([letters] * nops) + "->" + kept
    return s


def _keep(r, shape, axes):
    return r.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))


def _sum(a, axes):
    """a.sum(axes, keepdims=True); einsum is several times faster than ndarray.sum over several axes."""
    if a.dtype == _BF16:  # einsum has no bfloat16 loop; the sum is taken in float32, as torch accumulates
        return a.sum(axis=axes, dtype=np.float32, keepdims=True).astype(a.dtype)
    if a.__class__ is not np.ndarray:  # on a GPU one reduction kernel; CuPy's einsum is a chain of them
        return a.sum(axis=axes, keepdims=True)
    return _keep(np.einsum(_subscripts(a.ndim, axes, 1), a), a.shape, axes)


def _dot(a, b, axes):
    """(a * b).sum(axes, keepdims=True) without the product temporary."""
    if a.dtype == _BF16 or a.__class__ is not np.ndarray:
        return _sum(a * b, axes)
    return _keep(np.einsum(_subscripts(a.ndim, axes, 2), a, b), a.shape, axes)


# ----- the fused op (NOTE [ Fused normalization ]) -----
# attrs: xhat in x's shape (the forward's input), xhat kept for the backward (or None), mu (None for RMS norm),
# invstd, axes (reduced axes of the statistics view), sshape (statistics view shape, None for x's own shape),
# wview (shape w and b take to broadcast against x, or None), waxes (axes summed for gw/gb), has_w, has_b,
# fixed (statistics are constants), eps

def _norm_fwd(x, *args):
    *wb, xhat, saved, _, _, _, _, wview, _, has_w, has_b, _, _ = args
    if not (has_w or has_b):
        return xhat
    if saved is None and wview is not None and _channel_view(wview, xhat.shape) and row_kernels.available(xhat) \
            and xhat.flags.c_contiguous and all(a.dtype == xhat.dtype for a in wb):  # NOTE [ Row kernels ]
        return row_kernels.channel_affine(xhat, _contiguous(wb[0]) if has_w else None,
                                          _contiguous(wb[-1]) if has_b else None)
    # without a graph nothing keeps xhat, so the affine step may overwrite it; otherwise the first product
    # writes a new array (no copy pass)
    if has_w:
        w = wb[0] if wview is None else wb[0].reshape(wview)
        y = np.multiply(xhat, w, out=xhat if saved is None else None)
        if has_b:
            y += wb[-1] if wview is None else wb[-1].reshape(wview)
        return y
    b = wb[-1] if wview is None else wb[-1].reshape(wview)
    return np.add(xhat, b, out=xhat if saved is None else None)


def _contiguous(a):
    return a if a.flags.c_contiguous else _xp(a).ascontiguousarray(a)


def _xhat(xa, mu, invstd, sshape):
    """The normalized input, in the statistics view."""
    xs = xa if sshape is None else xa.reshape(sshape)
    y = xs - mu if mu is not None else xs.copy()
    y *= invstd
    return y


def _norm_bwd(ctx, g):
    if GRAD[0]:
        return _norm_bwd_graph(ctx, g, ctx.inputs[0])
    _, xhat, mu, invstd, axes, sshape, wview, waxes, has_w, has_b, fixed, _ = ctx.attrs
    need = ctx.needs_input_grad
    xa, ga = ctx.inputs[0]._data, g._data
    if not xa.size:  # an empty input: an empty input gradient and zero parameter gradients
        return (wrap(ga.astype(xa.dtype)),) + tuple(wrap(_xp(xa).zeros(s, xa.dtype)) for s in ctx.shapes[1:])
    if sshape is None and wview is None and not fixed and xa.size and xa.dtype in _BLAS_DTYPES \
            and ga.dtype == xa.dtype:
        return _trailing_bwd(ctx, xa, ga, xhat, mu, invstd, has_w, has_b, need)
    if wview is not None and ga.dtype == xa.dtype and _kernel_backward(xa, mu, invstd, ctx.inputs[1] if has_w else None,
                                                                       sshape, wview, axes, waxes, fixed):
        return _channel_bwd(ctx, xa, ga, mu, invstd, has_w, has_b, need)
    if wview is not None and not fixed and sshape is None and mu is not None and axes == waxes \
            and ga.dtype == xa.dtype and _channel_view(wview, xa.shape) and _channels_jit(xa):
        return _channel_bwd_jit(ctx, xa, ga, mu, invstd, has_w, has_b, need)
    xs_shape = xa.shape if sshape is None else sshape
    xhat = _xhat(xa, mu, invstd, sshape) if xhat is None else xhat
    xh = xhat.reshape(xa.shape)
    w = None
    if has_w:
        w = ctx.inputs[1]._data if wview is None else ctx.inputs[1]._data.reshape(wview)
    gw = _dot(ga, xh, waxes) if has_w and need[1] or not fixed and sshape is None and axes == waxes else None
    gb = _sum(ga, waxes) if has_b and need[-1] or not fixed and sshape is None and axes == waxes else None
    grads = [None]
    if need[0]:
        grads[0] = wrap(_input_grad(ga, xhat, w, invstd, mu is not None, axes, waxes, xs_shape, fixed, gw, gb)
                        .reshape(xa.shape).astype(xa.dtype, copy=False))
    if has_w:
        grads.append(wrap(gw.reshape(ctx.shapes[1])) if need[1] else None)
    if has_b:
        grads.append(wrap(gb.reshape(ctx.shapes[-1])) if need[-1] else None)
    return tuple(grads)


def _input_grad(ga, xhat, w, invstd, center, axes, waxes, xs_shape, fixed, gw, gb):
    if fixed:
        return ga * (invstd if w is None else w * invstd)
    n = ga.size // invstd.size
    if axes == waxes and ga.shape == xs_shape:
        # batch norm: w is constant over R, so mean_R(g w xhat) = w gw / n and mean_R(g w) = w gb / n
        scale = invstd if w is None else w * invstd
        gx = xhat * (gw / n)
        np.subtract(ga, gx, out=gx)
        if center:
            gx -= gb / n
        gx *= scale
        return gx
    gxhat = ga if w is None else ga * w
    gxhat = gxhat.reshape(xs_shape)
    gx = xhat * (_dot(gxhat, xhat, axes) / n)
    np.subtract(gxhat, gx, out=gx)
    if center:
        gx -= _sum(gxhat, axes) / n
    gx *= invstd
    return gx


def _trailing_bwd(ctx, xa, ga, xhat, mu, invstd, has_w, has_b, need):
    """The NumPy backward of layer norm and RMS norm, as (M, N) rows: BLAS row and column reductions."""
    m = invstd.size
    n = xa.size // m if m else 0
    dt = xa.dtype
    if _rows_backward(xa, mu, invstd, ctx.inputs[1] if has_w else None):
        return _trailing_bwd_rows(ctx, xa, ga, mu, invstd, m, n, has_w, has_b, need)
    if xhat is None:
        xhat = _xhat(xa, mu, invstd, None)
    h = xhat.reshape(m, n)
    g2 = ga.reshape(m, n)
    grads = [None]
    if need[0]:
        r = invstd.reshape(m)
        gs = g2 * ctx.inputs[1]._data.reshape(n) if has_w else g2
        # gx = r * (gs - mean(gs) - xhat * mean(gs * xhat)), the means over each row
        a = _vecdot(gs, h)
        a *= r
        a *= 1.0 / n
        gx = _xp(xa).empty(xa.shape, dt)  # written through a 2-D view, so the result owns its memory
        gx2 = gx.reshape(m, n)
        np.multiply(h, a[:, None], out=gx2)
        if mu is not None:
            c = matmul(gs, _ones(n, dt, xa))
            c *= r
            c *= 1.0 / n
        if gs is g2:
            gs = g2 * r[:, None]
        else:
            gs *= r[:, None]
        np.subtract(gs, gx2, out=gx2)
        if mu is not None:
            gx2 -= c[:, None]
        grads[0] = wrap(gx)
    if has_w:
        gw = np.einsum("ij,ij->j", g2, h) if g2.__class__ is np.ndarray else (g2 * h).sum(0)  # CuPy: no cuBLAS
        grads.append(wrap(_shaped(gw, ctx.shapes[1])) if need[1] else None)
    if has_b:
        grads.append(wrap(_shaped(matmul(_ones(m, dt, g2), g2), ctx.shapes[-1])) if need[-1] else None)
    return tuple(grads)


def _rows_backward(xa, mu, invstd, weight):
    """Whether layer/RMS norm's backward runs on the GPU's row kernels (NOTE [ Row kernels ])."""
    dt = xa.dtype
    return (row_kernels.available(xa) and invstd.dtype == dt and (mu is None or mu.dtype == dt)
            and (weight is None or weight._data.dtype == dt))


def _kernel_backward(xa, mu, invstd, weight, sshape, wview, axes, waxes, fixed):
    """Whether the backward runs on the GPU's row or channel kernels, which recompute xhat from x."""
    if sshape is not None or fixed or not _rows_backward(xa, mu, invstd, weight):
        return False
    return wview is None or (axes == waxes and mu is not None and _channel_view(wview, xa.shape))


def _channel_view(wview, shape):
    """Whether wview is (1, C, 1, ...): parameters along dim 1 of x."""
    return len(shape) >= 2 and wview == (1, shape[1]) + (1,) * (len(shape) - 2)


def _channel_bwd(ctx, xa, ga, mu, invstd, has_w, has_b, need):
    """Batch norm's backward on the GPU: the parameter gradients in one kernel, the input gradient in another."""
    xp = _xp(xa)
    x, g = xp.ascontiguousarray(xa), xp.ascontiguousarray(ga)
    c = xa.shape[1]
    mean, rstd = xp.ascontiguousarray(mu).reshape(c), xp.ascontiguousarray(invstd).reshape(c)
    gw, gb = row_kernels.channel_grads(g, x, mean, rstd)
    grads = [None]
    if need[0]:
        w = xp.ascontiguousarray(ctx.inputs[1]._data).reshape(c) if has_w else None
        grads[0] = wrap(row_kernels.channel_input_grad(g, x, mean, rstd, gw, gb, w))
    if has_w:
        grads.append(wrap(_shaped(gw, ctx.shapes[1])) if need[1] else None)
    if has_b:
        grads.append(wrap(_shaped(gb, ctx.shapes[-1])) if need[-1] else None)
    return tuple(grads)


def _channels_jit(xa):
    """Whether batch norm's statistics and backward run the compiled CPU kernels (_jit_norm.py)."""
    return xa.__class__ is np.ndarray and xa.dtype in _BLAS_DTYPES and xa.ndim >= 3 and xa.flags.c_contiguous \
        and jit.enabled()


def _stats_channels(x, axes, eps):
    """_stats of batch norm (axes: all but dim 1) by the compiled kernel: mean, var, 1/std in keepdims shape, xhat."""
    from ._jit_norm import channel_stats
    n, c = x.shape[:2]
    dt = x.dtype
    mean, var, rstd = np.empty(c, dt), np.empty(c, dt), np.empty(c, dt)
    xhat = np.empty(x.shape, dt)
    channel_stats(x.reshape(n, c, -1), eps, mean, var, rstd, xhat.reshape(n, c, -1))
    view = (1, c) + (1,) * (x.ndim - 2)
    return mean.reshape(view), var.reshape(view), rstd.reshape(view), xhat


def _channel_bwd_jit(ctx, xa, ga, mu, invstd, has_w, has_b, need):
    """Batch norm's backward with batch statistics on the CPU, by the compiled kernel (xhat recomputed from x)."""
    from ._jit_norm import channel_backward
    n, c = xa.shape[:2]
    dt = xa.dtype
    w = np.ascontiguousarray(ctx.inputs[1]._data.reshape(c), dt) if has_w else np.ones(c, dt)
    gx, gw, gb = np.empty(xa.shape, dt), np.empty(c, dt), np.empty(c, dt)
    channel_backward(np.ascontiguousarray(ga).reshape(n, c, -1), xa.reshape(n, c, -1),
                     np.ascontiguousarray(mu, dt).reshape(c), np.ascontiguousarray(invstd, dt).reshape(c), w,
                     gx.reshape(n, c, -1), gw, gb)
    grads = [wrap(gx) if need[0] else None]
    if has_w:
        grads.append(wrap(_shaped(gw, ctx.shapes[1])) if need[1] else None)
    if has_b:
        grads.append(wrap(_shaped(gb, ctx.shapes[-1])) if need[-1] else None)
    return tuple(grads)


def _trailing_bwd_rows(ctx, xa, ga, mu, invstd, m, n, has_w, has_b, need):
    """_trailing_bwd on the GPU: the input gradient in one kernel, the weight's and bias's in two; xhat is
    recomputed from x and the statistics inside them (the forward kept none)."""
    xp = _xp(xa)
    x2, g2 = xp.ascontiguousarray(xa).reshape(m, n), xp.ascontiguousarray(ga).reshape(m, n)
    mean, rstd = (None if mu is None else xp.ascontiguousarray(mu).reshape(m)), xp.ascontiguousarray(invstd).reshape(m)
    grads = [None]
    if need[0]:
        w = xp.ascontiguousarray(ctx.inputs[1]._data).reshape(n) if has_w else None
        grads[0] = wrap(row_kernels.norm_backward(g2, x2, mean, rstd, w).reshape(xa.shape))
    need_w, need_b = has_w and need[1], has_b and need[-1]
    if need_w or need_b:
        gw, gb = row_kernels.weight_bias_grads(g2, x2, mean, rstd, need_w, need_b)
    if has_w:
        grads.append(wrap(_shaped(gw, ctx.shapes[1])) if need_w else None)
    if has_b:
        grads.append(wrap(_shaped(gb, ctx.shapes[-1])) if need_b else None)
    return tuple(grads)


def _shaped(a, shape):
    # a reshape to the same shape would still make a view, and a view cannot become .grad without a copy
    return a if a.shape == tuple(shape) else a.reshape(shape)


def _norm_bwd_graph(ctx, g, x):
    """The backward in ember ops, with statistics recomputed from x so it is differentiable again."""
    _, _, mu, invstd, axes, sshape, wview, waxes, has_w, has_b, fixed, eps = ctx.attrs
    xs = x if sshape is None else x.reshape(sshape)
    if fixed:
        m, inv = wrap(mu), wrap(invstd)
    else:
        m = xs.mean(axes, keepdim=True) if mu is not None else None
        xc = xs - m if m is not None else xs
        inv = ((xc * xc).mean(axes, keepdim=True) + eps).rsqrt()
    xhat = (xs - m) * inv if m is not None else xs * inv
    w = None
    if has_w:
        w = ctx.inputs[1] if wview is None else ctx.inputs[1].reshape(wview)
    gxhat = g if w is None else g * w
    gs = gxhat if sshape is None else gxhat.reshape(sshape)
    if fixed:
        gx = gs * inv
    else:
        gx = gs - xhat * (gs * xhat).mean(axes, keepdim=True)
        if m is not None:
            gx = gx - gs.mean(axes, keepdim=True)
        gx = gx * inv
    grads = [gx.reshape(x.shape)]
    xhat = xhat.reshape(x.shape)
    if has_w:
        grads.append(_summed(g * xhat, waxes).reshape(ctx.shapes[1]))
    if has_b:
        grads.append(_summed(g, waxes).reshape(ctx.shapes[-1]))
    return tuple(grads)


def _summed(t, axes):
    return t.sum(axes) if axes else t  # sum(()) would reduce every dim


_OPS = {}


def _op_named(name):
    op = _OPS.get(name)
    if op is None:
        op = _OPS[name] = Op(name, _norm_fwd, _norm_bwd, save=1, node_name=name)
    return op


def _apply(name, x, weight, bias, xhat, mu, invstd, axes, sshape, wview, waxes, fixed, eps):
    ins = [x]
    if weight is not None:
        ins.append(weight)
    if bias is not None:
        ins.append(bias)
    y = xhat if sshape is None else xhat.reshape(x.shape)
    saved = None
    # the row kernels' backward recomputes xhat from x (NOTE [ Row kernels ]): nothing more to keep
    if GRAD[0] and (weight is not None or bias is not None) and not _kernel_backward(
            x._data, mu, invstd, weight, sshape, wview, axes, waxes, fixed):
        for t in ins:
            if t._requires_grad:
                saved = xhat
                break
    return dispatch(_op_named(name), tuple(ins), y, saved, mu, invstd, axes, sshape, wview, waxes,
                    weight is not None, bias is not None, fixed, eps)


def _stats(xs, axes, eps, center=True):
    """Mean (None without centring), biased variance, 1/sqrt(var + eps) and xhat of a NumPy array over axes."""
    if xs.dtype == _BF16:  # computed in float32, as torch accumulates (and einsum has no bfloat16 loop)
        return tuple(None if r is None else r.astype(_BF16) for r in _stats(xs.astype(np.float32), axes, eps, center))
    n = 1
    for a in axes:
        n *= xs.shape[a]
    n = max(n, 1)
    mu = _sum(xs, axes) / n if center else None
    xc = xs - mu if center else xs
    var = _dot(xc, xc, axes)
    var /= n
    invstd = 1.0 / np.sqrt(var + eps)
    if center:
        xc *= invstd
        return mu, var, invstd.astype(xs.dtype, copy=False), xc
    invstd = invstd.astype(xs.dtype, copy=False)
    return mu, var, invstd, xs * invstd


_ONES = {}
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _ones(n, dtype, like):
    """A cached vector of ones on like's device: row and column sums as BLAS matrix-vector products."""
    v = _ONES.get((n, dtype, like.__class__))
    if v is None:
        v = _ONES[(n, dtype, like.__class__)] = _xp(like).ones(n, dtype)
    return v


def _xp(a):
    return np if a.__class__ is np.ndarray else XP[a.__class__]


def _vecdot(a, b):
    """Row sums of a * b (np.vecdot on the CPU; CuPy may lack it)."""
    if a.__class__ is np.ndarray:
        return np.vecdot(a, b)
    return (a * b).sum(-1)


def _trailing_stats(xa, k, eps, center=True):
    """_stats over the last k axes of a float32/float64 array, as (M, N) rows: the row sums are BLAS
    matrix-vector products, the row sums of squares vecdot, and xhat owns its memory."""
    stat_shape = xa.shape[:xa.ndim - k] + (1,) * k
    m = 1
    for s in stat_shape:
        m *= s
    n = xa.size // m
    x2 = xa.reshape(m, n)
    if row_kernels.available(xa) and x2.flags.c_contiguous:  # NOTE [ Row kernels ]
        mu, invstd, xhat = row_kernels.norm_forward(x2, eps, center)
        return (None if mu is None else mu.reshape(stat_shape)), invstd.reshape(stat_shape), xhat.reshape(xa.shape)
    xhat = _xp(xa).empty(xa.shape, xa.dtype)
    h = xhat.reshape(m, n)
    mu = None
    if center:
        mu = matmul(x2, _ones(n, xa.dtype, xa))
        mu *= 1.0 / n
        np.subtract(x2, mu[:, None], out=h)
        mu = mu.reshape(stat_shape)
    else:
        h[...] = x2
    invstd = _vecdot(h, h)
    invstd *= 1.0 / n
    invstd += eps
    np.sqrt(invstd, out=invstd)
    np.divide(1.0, invstd, out=invstd)
    h *= invstd[:, None]
    return mu, invstd.reshape(stat_shape), xhat


def _trailing_ok(xa, weight, bias):
    """The fast statistics apply: float32/float64, nonempty, and weight/bias (if any) of the same dtype."""
    dt = xa.dtype
    return (dt in _BLAS_DTYPES and xa.size and (weight is None or weight._data.dtype == dt)
            and (bias is None or bias._data.dtype == dt))


# ----- batch norm -----

def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Same as `torch.nn.functional.batch_norm`."""
    x = input
    if not x.numel():  # an empty batch: the running statistics are left as they are (torch)
        y = x.clone()
        if x.dim() >= 2:
            view = (1, x.shape[1]) + (1,) * (x.dim() - 2)
            y = y if weight is None else y * weight.reshape(view)
            y = y if bias is None else y + bias.reshape(view)
        return y
    if x.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(x.dim(), 1)}, "
                         f"{max(x.dim(), 1) - 1}], but got 1)")
    c = x.shape[1]
    if training and x.numel() // c == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape!r}")
    for t, what in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"),
                    (bias, "bias")):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{what} should contain {c} elements not {t.numel()}")
    axes = (0,) + tuple(range(2, x.dim()))
    view = (1, c) + (1,) * (x.dim() - 2)
    xa = x._data
    if (training or running_mean is None) and _channels_ok(xa, weight, bias):  # NOTE [ Row kernels ]
        mu, var, invstd = row_kernels.channel_stats(xa, eps)
        xhat = row_kernels.channel_normalize(xa, mu, invstd)
        if training and running_mean is not None:
            _update_running_channels(running_mean, running_var, mu, var, momentum, xa.size // c)
        return _apply("NativeBatchNormBackward0", x, weight, bias, xhat, mu.reshape(view), invstd.reshape(view), axes,
                      None, view, axes, False, eps)
    if training or running_mean is None:
        mu, var, invstd, xhat = _traced_stats(4, _stats_channels if _channels_jit(xa) else _stats, x, axes, eps)
        if training and running_mean is not None:
            n = xa.size // c
            _update_running(running_mean, mu, momentum)
            _update_running(running_var, var, momentum, n / max(n - 1, 1))
        fixed = False
    else:
        xhat, mu, invstd = (t._data for t in dispatch(_RUNNING_XHAT, (x, running_mean, running_var), view, eps))
        fixed = True
    return _apply("NativeBatchNormBackward0", x, weight, bias, xhat, mu, invstd, axes, None, view, axes, fixed, eps)


def _channels_ok(xa, weight, bias):
    """Whether batch norm's statistics run on the GPU's channel kernels: float32/float64, C-contiguous, weight and
    bias (if any) of the same dtype."""
    dt = xa.dtype
    return (row_kernels.available(xa) and xa.flags.c_contiguous and (weight is None or weight._data.dtype == dt)
            and (bias is None or bias._data.dtype == dt))


def _update_running_channels(running_mean, running_var, mean, var, momentum, n):
    rm, rv = running_mean._data, running_var._data if running_var is not None else None
    if rv is not None and rm.dtype == rv.dtype == mean.dtype and rm.flags.c_contiguous and rv.flags.c_contiguous:
        row_kernels.channel_running(rm, rv, mean, var, momentum, n / max(n - 1, 1))
        bump_version(running_mean, "batch_norm")
        bump_version(running_var, "batch_norm")
        return
    _update_running(running_mean, mean, momentum)
    if running_var is not None:
        _update_running(running_var, var * (n / max(n - 1, 1)), momentum)


def _update_running(buf, stat, momentum, scale=1.0):
    """running = (1 - momentum) * running + momentum * scale * stat (stat: any shape of running's size), in place,
    without a graph: an op writing into the buffer's array, which tracing sees."""
    dispatch(_RUNNING, (buf,), stat, momentum, scale)
    bump_version(buf, "batch_norm")


def _running_fwd(data, stat, momentum, scale):
    data *= 1 - momentum
    stat = stat.reshape(data.shape).astype(data.dtype, copy=False)
    data += momentum * (stat * scale if scale != 1.0 else stat)
    return data


_RUNNING = Op("running_stats_update", _running_fwd)


# The statistics of a normalization as an op of their own (no gradient: the normalization op's backward covers
# them), so that tracing (ONNX export, ember.compile) sees them come from x: _STATS[n] runs fn(x, *attrs), which
# returns n arrays.
_STATS = {n: Op("norm_stats", lambda x, fn, *attrs: fn(x, *attrs), nout=n) for n in (3, 4)}


def _running_xhat(xa, running_mean, running_var, view, eps):
    """(xhat, mean, 1/sqrt(var + eps)) of batch norm with running statistics."""
    mu = running_mean.reshape(view).astype(xa.dtype, copy=False)
    invstd = (1.0 / np.sqrt(running_var.reshape(view) + eps)).astype(xa.dtype, copy=False)
    return _xhat(xa, mu, invstd, None), mu, invstd


_RUNNING_XHAT = Op("norm_stats", _running_xhat, nout=3)


def _grouped_stats(xa, sshape, eps):
    return _stats(xa.reshape(sshape), (2,), eps)


def _traced_stats(n, fn, x, *attrs):
    return tuple(t._data for t in dispatch(_STATS[n], (x,), fn, *attrs))


# ----- layer norm / rms norm / group norm -----

def _norm_shape(normalized_shape):
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(int(s) for s in normalized_shape)


def _check_norm_shape(x, shape, weight, sep, bias=None):
    k = len(shape)
    if k == 0 or x.dim() < k or tuple(x.shape[x.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*{sep}"
                           f"{', '.join(str(s) for s in shape)}], but got input of size{list(x.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    if bias is not None and tuple(bias.shape) != shape:
        raise RuntimeError(f"Expected bias to be of same shape as normalized_shape, but got bias of shape "
                           f"{list(bias.shape)} and normalized_shape = {list(shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Same as `torch.nn.functional.layer_norm`."""
    check_tensor(input, "layer_norm")
    if AUTOCAST[0]:
        input, weight, bias = cast_args("layer_norm", (input, weight, bias))
    shape = _norm_shape(normalized_shape)
    _check_norm_shape(input, shape, weight, ", ", bias)
    k, d = len(shape), input.dim()
    axes = tuple(range(d - k, d))
    xa = input._data
    if _trailing_ok(xa, weight, bias):
        mu, invstd, xhat = _traced_stats(3, _trailing_stats, input, k, eps)
    else:
        mu, _, invstd, xhat = _traced_stats(4, _stats, input, axes, eps)
    return _apply("NativeLayerNormBackward0", input, weight, bias, xhat, mu, invstd, axes, None, None,
                  tuple(range(d - k)), False, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Same as `torch.nn.functional.rms_norm`."""
    shape = _norm_shape(normalized_shape)
    _check_norm_shape(input, shape, weight, "")
    if eps is None:
        eps = float(ml_dtypes.finfo(input._data.dtype).eps)
    k, d = len(shape), input.dim()
    axes = tuple(range(d - k, d))
    xa = input._data
    if _trailing_ok(xa, weight, None):
        _, invstd, xhat = _traced_stats(3, _trailing_stats, input, k, eps, False)
    else:
        _, _, invstd, xhat = _traced_stats(4, _stats, input, axes, eps, False)
    return _apply("FusedRmsNormBackward0", input, weight, None, xhat, None, invstd, axes, None, None,
                  tuple(range(d - k)), False, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Same as `torch.nn.functional.group_norm`."""
    if AUTOCAST[0]:
        input, weight, bias = cast_args("group_norm", (input, weight, bias))
    x = input
    if x.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.dim()}")
    n, c = x.shape[0], x.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(x.shape)} and num_groups={num_groups}")
    for t, what in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of channels in input, "
                               f"but got {what} of shape {list(t.shape)} and input of shape {list(x.shape)}")
    sshape = (n, num_groups, x.numel() // (n * num_groups) if n * num_groups else 0)
    mu, _, invstd, xhat = _traced_stats(4, _grouped_stats, x, sshape, eps)
    view = (1, c) + (1,) * (x.dim() - 2)
    return _apply("NativeGroupNormBackward0", x, weight, bias, xhat, mu, invstd, (2,), sshape, view,
                  (0,) + tuple(range(2, x.dim())), False, eps)


# ----- instance norm -----

def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Same as `torch.nn.functional.instance_norm`."""
    x = input
    if x.dim() < 2:
        raise ValueError(f"Expected 2D or higher input to instance_norm (got {x.dim()}D input)")
    n, c = x.shape[0], x.shape[1]
    if use_input_stats and x.numel() // (n * c) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {x.shape!r}")
    d = x.dim()
    view = (1, c) + (1,) * (d - 2)
    xa = x._data
    if use_input_stats or running_mean is None:
        axes = tuple(range(2, d))
        mu, var, invstd, xhat = _traced_stats(4, _stats, x, axes, eps)
        if use_input_stats and running_mean is not None:
            m = xa.size // (n * c)
            _update_running(running_mean, mu.reshape(n, c).mean(0), momentum)
            _update_running(running_var, (var.reshape(n, c) * (m / max(m - 1, 1))).mean(0), momentum)
        return _apply("NativeBatchNormBackward0", x, weight, bias, xhat, mu, invstd, axes, None, view,
                      (0,) + axes, False, eps)
    mu = running_mean._data.reshape(view).astype(xa.dtype, copy=False)
    invstd = (1.0 / np.sqrt(running_var._data.reshape(view) + eps)).astype(xa.dtype, copy=False)
    axes = (0,) + tuple(range(2, d))
    return _apply("NativeBatchNormBackward0", x, weight, bias, _xhat(xa, mu, invstd, None), mu, invstd, axes, None,
                  view, axes, True, eps)


# ----- local response norm -----

def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Same as `torch.nn.functional.local_response_norm`."""
    d = input.dim()
    if d < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {d} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    lo, hi = size // 2, (size - 1) // 2
    parts = []
    if lo:
        parts.append(sq.new_zeros((sq.shape[0], lo) + tuple(sq.shape[2:])))
    parts.append(sq)
    if hi:
        parts.append(sq.new_zeros((sq.shape[0], hi) + tuple(sq.shape[2:])))
    padded = ember.cat(parts, 1) if len(parts) > 1 else sq
    # window sum over channels: size shifted slices of the zero-padded squares
    div = padded.narrow(1, 0, c)
    for i in range(1, size):
        div = div + padded.narrow(1, i, c)
    div = (div * (alpha / size) + k) ** beta
    return input / div


# ----- normalize and distances -----

def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """Same as `torch.nn.functional.normalize`."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return ember.div(input, denom, out=out)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Same as `torch.nn.functional.cosine_similarity`."""
    if AUTOCAST[0]:
        x1, x2 = cast_args("cosine_similarity", (x1, x2))
    x1, x2 = ember.broadcast_tensors(x1, x2)
    n1 = ember.linalg.vector_norm(x1, 2, dim, keepdim=True).clamp_min(eps)
    n2 = ember.linalg.vector_norm(x2, 2, dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """Same as `torch.nn.functional.pairwise_distance`."""
    d = max(x1.dim(), x2.dim())
    if d == 0:
        raise RuntimeError("pairwise_distance: expected at least one input with 1 or more dimensions")
    return ember.linalg.vector_norm(x1 - x2 + eps, p, d - 1, keepdim=keepdim)


def pdist(input, p=2):
    """Same as `torch.nn.functional.pdist`."""
    if AUTOCAST[0]:
        input, = cast_args("pdist", (input,))
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = np.triu_indices(n, 1)  # none for n < 2: an empty result, still in the graph as torch's
    diff = input.index_select(0, wrap(i.astype(np.int64))) - input.index_select(0, wrap(j.astype(np.int64)))
    return ember.linalg.vector_norm(diff, p, 1)

