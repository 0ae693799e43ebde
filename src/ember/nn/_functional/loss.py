"""nn.functional: loss functions.

# NOTE [ Class-index losses ]
nll_loss and cross_entropy with class indices run as one fused op each. Both are written as
loss_i = -(s_i * logp[i, t_i] + r_i * (logp_i . v)), where s_i folds the class weight of the target, the
ignore mask, (1 - label_smoothing) and the mean's denominator (torch's weighted mean: divided by the sum of the
weights of the non-ignored targets), and r_i * v is label smoothing's share (v = weight / C). The gradient of
cross_entropy is then g_i * (p_i * (s_i + r_i * sum(v)) - s_i * onehot(t_i) - r_i * v), computed in NumPy from
the forward's exponentials, or as ember ops on softmax(input) when the backward itself is differentiated
(create_graph=True). Class-probability targets go through log_softmax and ordinary ops.
"""
import math
import warnings

import numpy as np

from ..._autocast import AUTOCAST, cast_args
from ..._backend import XP, deferred, matmul, row_kernels
from ..._ops import reduce as _rd
from ..._ops._dispatch import SAVE_INPUTS, SAVE_NONE, Op, dispatch, dispatch1
from ..._ops.binary import where as _where
from ..._tensor import Tensor
from ...autograd.grad_mode import GRAD
from ._args import check_tensor
from .softmax import log_softmax, softmax

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_embedding_loss",
    "cross_entropy",
    "ctc_loss",
    "gaussian_nll_loss",
    "hinge_embedding_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "margin_ranking_loss",
    "mse_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "multilabel_soft_margin_loss",
    "nll_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_REDUCTIONS = ("none", "mean", "sum")


# ---------------- reduction arguments ----------------
def _legacy_reduction(size_average, reduce, emit_warning=True):
    """torch's _Reduction.legacy_get_string."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                      UserWarning, stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction, named=None):
    """The loss's reduction; with named (from _named_ends), under the grad_fn name of torch's fused kernel."""
    if named is None:
        if reduction == "mean":
            return loss.mean()
        if reduction == "sum":
            return loss.sum()
        return loss
    if reduction == "mean":
        return dispatch1(named[0], loss, None, False)
    if reduction == "sum":
        return dispatch1(named[1], loss, None, False, None)
    return dispatch1(named[2], loss)


def _alias_bwd(ctx, g):
    return (g,)


def _named_ends(node_name):
    """mean, sum and identity ops named like torch's fused loss kernel, so that printing a loss shows
    grad_fn=<MseLossBackward0> as in torch."""
    return (Op("mean", _rd._mean_fwd, _rd._mean_bwd, SAVE_NONE, node_name=node_name),
            Op("sum", _rd._sum_fwd, _rd._sum_bwd, SAVE_NONE, node_name=node_name),
            Op("alias", lambda x: x, _alias_bwd, SAVE_NONE, node_name=node_name))


_MSE_END = _named_ends("MseLossBackward0")
_SMOOTH_L1_END = _named_ends("SmoothL1LossBackward0")
_HUBER_END = _named_ends("HuberLossBackward0")
_BCE_END = _named_ends("BinaryCrossEntropyBackward0")
_BCE_LOGITS_END = _named_ends("BinaryCrossEntropyWithLogitsBackward0")
_SOFT_MARGIN_END = _named_ends("SoftMarginLossBackward0")
_MULTI_MARGIN_END = _named_ends("MultiMarginLossBackward0")
_MULTILABEL_MARGIN_END = _named_ends("MultilabelMarginLossBackward0")


def _size_str(shape):
    return f"torch.Size([{', '.join(str(d) for d in shape)}])"


def _warn_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size_str(target.shape)}) that is different to the input size "
                      f"({_size_str(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _const(arr, like=None):
    """arr as a constant tensor; a host array is moved to the device of array like when given."""
    if like is not None and like.__class__ is not np.ndarray and arr.__class__ is not like.__class__:
        return Tensor._make(XP[like.__class__].asarray(arr))
    return Tensor._make(arr if arr.__class__ in XP else np.asarray(arr))


def _xp(a):
    return np if a.__class__ is np.ndarray else XP[a.__class__]


# ---------------- private elementwise helpers with exact gradients ----------------
def _softplus_fwd(x):
    return np.logaddexp(0, x).astype(x.dtype, copy=False)


def _softplus_bwd(ctx, g):
    return (g * ctx.inputs[0].sigmoid(),)


_SOFTPLUS = Op("softplus", _softplus_fwd, _softplus_bwd, SAVE_INPUTS)


def _softplus(x):
    """log(1 + exp(x)), stable, with gradient sigmoid(x) everywhere."""
    return dispatch1(_SOFTPLUS, x)


def _log_sigmoid(x):
    return -_softplus(-x)


def _bool_as(target, input):
    return target.to(input.dtype) if target._data.dtype == np.bool_ else target


def _as_input(target, input):
    """A bool or floating target in the input's dtype: the losses whose result keeps the input's dtype."""
    k = target._data.dtype.kind
    return target.to(input.dtype) if (k == "b" or k == "f") and target._data.dtype != input._data.dtype else target


# ---------------- elementwise regression losses ----------------
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Same as `torch.nn.functional.l1_loss`."""
    if AUTOCAST[0]:
        input, target = cast_args("l1_loss", (input, target))
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    loss = (input - target).abs()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Same as `torch.nn.functional.mse_loss`."""
    if AUTOCAST[0]:
        input, target = cast_args("mse_loss", (input, target))
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    d = input - _bool_as(target, input)
    loss = d * d
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, _MSE_END)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Same as `torch.nn.functional.smooth_l1_loss`."""
    if AUTOCAST[0]:
        input, target = cast_args("smooth_l1_loss", (input, target))
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = input - _bool_as(target, input)
    ad = d.abs()
    if beta == 0:
        return _reduce(ad, reduction, _SMOOTH_L1_END)
    loss = _where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta)
    return _reduce(loss, reduction, _SMOOTH_L1_END)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Same as `torch.nn.functional.huber_loss`."""
    if AUTOCAST[0]:
        input, target = cast_args("huber_loss", (input, target))
    _warn_size(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = input - _as_input(target, input)
    ad = d.abs()
    loss = _where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, _HUBER_END)


# ---------------- binary cross entropy ----------------
def _bce_fwd(x, t):
    # written so that NaN fails the check too, as in torch
    if x.__class__ is not np.ndarray:  # reported at the next synchronization (see NOTE [ Deferred device checks ])
        xp = _xp(x)
        deferred.fail_if_any(xp, ~((x >= 0) & (x <= 1)), RuntimeError, "all elements of input should be between 0 "
                             "and 1")
        deferred.fail_if_any(xp, ~((t >= 0) & (t <= 1)), RuntimeError, "all elements of target should be between 0 "
                             "and 1")
    else:
        if x.size and not (x.min() >= 0 and x.max() <= 1):
            raise RuntimeError("all elements of input should be between 0 and 1")
        if t.size and not (t.min() >= 0 and t.max() <= 1):
            raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        a = np.maximum(np.log(x), -100)
        b = np.maximum(np.log1p(-x), -100)
    a *= t
    b *= 1 - t
    a += b
    return np.negative(a, out=a).astype(x.dtype, copy=False)


def _bce_bwd(ctx, g):
    x, t = ctx.inputs
    gx = gt = None
    if ctx.needs_input_grad[0]:
        gx = g * (x - t) / ((1 - x) * x).clamp_min(1e-12)
    if ctx.needs_input_grad[1]:
        gt = g * ((-x).log1p().clamp_min(-100) - x.log().clamp_min(-100))
    return gx, gt


_BCE = Op("binary_cross_entropy", _bce_fwd, _bce_bwd, SAVE_INPUTS, node_name="BinaryCrossEntropyBackward0")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.binary_cross_entropy`."""
    if AUTOCAST[0]:
        input, target, weight = cast_args("binary_cross_entropy", (input, target, weight))
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size_str(target.shape)}) that is different to the input size "
                         f"({_size_str(input.shape)}) is deprecated. Please ensure they have the same size.")
    if target._data.dtype != input._data.dtype:
        raise RuntimeError(f"Found dtype {_type_name(target)} but expected {_type_name(input)}")
    loss = dispatch(_BCE, (input, target))
    if weight is None and reduction == "none":
        return loss
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, _BCE_END)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Same as `torch.nn.functional.binary_cross_entropy_with_logits`."""
    if AUTOCAST[0]:
        input, target, weight, pos_weight = cast_args("binary_cross_entropy_with_logits", (input, target, weight, pos_weight))
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size_str(target.shape)}) must be the same as input size "
                         f"({_size_str(input.shape)})")
    k = target._data.dtype.kind
    if k == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if k in "iu":  # torch computes in the target's dtype
        raise RuntimeError(f"result type {_type_name(input)} can't be cast to the desired output type "
                           f"{_type_name(target)}")
    sp = _softplus(-input)
    if pos_weight is None:
        loss = (1 - target) * input + sp
    else:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, _BCE_LOGITS_END)


# ---------------- class-index losses (fused) ----------------
def _type_name(t):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(t._data.dtype.name, t._data.dtype.name)


def _class_setup(input, target, weight, ignore_index, reduction, smoothing):
    """Checks shapes, returns (x, tt, s, r, v, squeeze): x in (M, C) layout with classes last (a view when
    possible), tt the safe target indices, s and r the per-sample coefficients (see NOTE)."""
    x = input._data
    t = target._data
    nd = x.ndim
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd == 1:
        if t.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if t.ndim == 1 and t.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}")
    elif t.ndim == 0 or x.shape[0] != t.shape[0]:
        nt = t.shape[0] if t.ndim else 0
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({nt}).")
    elif nd == 2 and t.ndim != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif nd == 4 and t.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{t.ndim}")
    elif nd == 4 and t.shape != x.shape[:1] + x.shape[2:]:
        raise RuntimeError(f"size mismatch (got input: [{', '.join(str(d) for d in x.shape)}] , target: "
                           f"[{', '.join(str(d) for d in t.shape)}]")
    elif nd > 2 and t.shape != x.shape[:1] + x.shape[2:]:
        raise RuntimeError(f"Expected target size [{', '.join(str(d) for d in x.shape[:1] + x.shape[2:])}], "
                           f"got [{', '.join(str(d) for d in t.shape)}]")
    if t.dtype != np.int64 and t.dtype != np.uint8:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_type_name(target)}")
    c = x.shape[1] if nd > 1 else x.shape[0]
    if x.dtype == np.float16:
        x = x.astype(np.float32)  # half precision accumulates in float32, as torch's CPU kernels do
    if nd == 1:
        x = x.reshape(1, c)
    elif nd > 2:
        x = _xp(x).ascontiguousarray(np.moveaxis(x, 1, -1)).reshape(-1, c)
    tt = t.reshape(-1).astype(np.intp, copy=False)
    dt = x.dtype
    n = tt.shape[0]
    if tt.__class__ is np.ndarray:
        if n and 0 <= tt.min() and tt.max() < c and not 0 <= ignore_index < c and weight is None and not smoothing:
            # the common case: valid targets, nothing ignored, no weights: one scalar coefficient
            return x, tt, (1.0 / n if reduction == "mean" else 1.0), None, None, nd == 1
        m = tt != ignore_index
        bad = m & ((tt < 0) | (tt >= c))
        if bad.any():
            raise IndexError(f"Target {int(tt[bad][0])} is out of bounds.")
    elif n and not smoothing and row_kernels.available(x):  # NOTE [ Row kernels ]: one launch for all of it
        w = None if weight is None else _ascontiguous(_class_weight(weight, c).astype(dt, copy=False))
        xp = _xp(tt)
        tt, s, rec = row_kernels.class_targets(_ascontiguous(tt), w, c, ignore_index, reduction == "mean", 1.0,
                                               deferred.code(IndexError, "Target {} is out of bounds."), dt)
        deferred.submit(xp, rec)
        return x, tt, s, None, None, nd == 1
    else:  # reported at the next synchronization; clipped meanwhile (see NOTE [ Deferred device checks ])
        m = tt != ignore_index
        tt = deferred.check_range(_xp(tt), tt, 0, c, IndexError, "Target {} is out of bounds.", valid=m)
    tt = np.where(m, tt, 0)
    if weight is not None:
        w = _class_weight(weight, c).astype(dt, copy=False)
        wt = w[tt] * m
    else:
        w = None
        wt = m.astype(dt)
    if reduction == "mean":
        d = wt.sum()
        if tt.__class__ is np.ndarray:
            scale = (1.0 / d) if d != 0 else math.nan
        else:  # a device value: 1 / 0 is inf, and 0 * inf gives the nan of an all-ignored batch
            scale = 1.0 / d
    else:
        scale = 1.0
    s = wt * ((1.0 - smoothing) * scale)
    r = v = None
    if smoothing > 0:
        r = m * (smoothing * scale / c)
        v = _xp(x).ones(c, dt) if w is None else w
    return x, tt, s.astype(dt, copy=False), None if r is None else r.astype(dt), v, nd == 1


def _class_weight(weight, c):
    w = weight._data
    if w.ndim != 1 or w.shape[0] != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                           f"weight tensor of shape: [{', '.join(str(d) for d in w.shape)}]")
    return w


def _ascontiguous(a):
    return a if a.flags.c_contiguous else _xp(a).ascontiguousarray(a)


_ONES = {}
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _ones(n, dtype, like):
    v = _ONES.get((n, dtype, like.__class__))
    if v is None:
        v = _ONES[(n, dtype, like.__class__)] = _xp(like).ones(n, dtype)
    return v


def _finish(loss, reduction, shape):
    """Per-sample losses back to the target's shape, or summed (the mean's division is already in s)."""
    if reduction == "none":
        return loss.reshape(shape)
    if loss.size == 0 and reduction == "mean":
        return _xp(loss).asarray(np.nan, dtype=loss.dtype)
    return _xp(loss).asarray(loss.sum(), dtype=loss.dtype)


def _ce_fwd(x, xm, tt, s, r, v, reduction, shape):
    if s.__class__ is xm.__class__ and r is None and row_kernels.available(xm) and xm.flags.c_contiguous \
            and s.dtype == xm.dtype and tt.dtype == np.int64 and tt.flags.c_contiguous and s.flags.c_contiguous:
        loss, lse = row_kernels.class_loss(xm, tt, s)  # NOTE [ Row kernels ]
        return _finish(loss, reduction, shape).astype(x.dtype, copy=False), lse
    mx = xm.max(1, keepdims=True)
    e = np.subtract(xm, mx)
    np.exp(e, out=e)  # one buffer: the shifted logits are not needed again
    se = matmul(e, _ones(e.shape[1], e.dtype, e)) if e.dtype in _BLAS_DTYPES else e.sum(1)  # row sums by BLAS
    lse = np.log(se)
    lse += mx[:, 0]  # log-sum-exp of the raw logits
    loss = s * (lse - xm[_xp(xm).arange(xm.shape[0]), tt])
    if r is not None:
        loss += r * (lse * v.sum() - matmul(xm, v))
    return _finish(loss, reduction, shape).astype(x.dtype, copy=False), (e, se)


def _ce_dense_coef(tt, s, r, v, c, dtype):
    """The dense coefficient matrix B (see NOTE) and its row sums."""
    xp = _xp(tt)
    if np.ndim(s) == 0:
        s = xp.full(tt.shape[0], s, dtype)
    b = xp.zeros((tt.shape[0], c), dtype)
    b[xp.arange(tt.shape[0]), tt] = s
    tot = s
    if r is not None:
        b += r[:, None] * v
        tot = s + r * v.sum()
    return b, tot


def _to_input_layout(gm, shape):
    """(M, C) class-last rows back to the input's layout."""
    nd = len(shape)
    if nd == 1:
        return gm.reshape(shape)
    if nd == 2:
        return gm
    moved = (shape[0],) + shape[2:] + (shape[1],)
    return np.moveaxis(gm.reshape(moved), -1, 1)


def _ce_bwd(ctx, g):
    _, tt, s, r, v, reduction, _ = ctx.attrs
    shape = tuple(ctx.shapes[0])
    c = shape[1] if len(shape) > 1 else shape[0]
    if GRAD[0]:
        return (_ce_graph_bwd(ctx.inputs[0], g, tt, s, r, v, reduction, shape, c),)
    gd = g._data.reshape(-1) if reduction == "none" else g._data
    if ctx.extra.__class__ is not tuple:  # the row kernels' forward kept each row's log-sum-exp
        return (Tensor._make(_to_input_layout(row_kernels.class_loss_backward(ctx.attrs[0], tt, s, ctx.extra, gd),
                                              shape)),)
    e, se = ctx.extra
    gs = s * gd
    tot = gs if r is None else gs + (r * gd) * v.sum()
    grad = e * (tot / se)[:, None]
    rows = _xp(grad).arange(grad.shape[0])
    grad[rows, tt] -= gs
    if r is not None:
        grad -= (r * gd)[:, None] * v
    return (Tensor._make(_to_input_layout(grad, shape)),)


def _ce_graph_bwd(x, g, tt, s, r, v, reduction, shape, c):
    b, tot = _ce_dense_coef(tt, s, r, v, c, x._data.dtype)
    bt = _const(_to_input_layout(b, shape))
    tot_shape = (shape[0], 1) + shape[2:] if len(shape) > 1 else (1,)
    tott = _const(tot.reshape(tot_shape))
    if reduction == "none":
        g = g.reshape(tot_shape)
    dim = 1 if len(shape) > 1 else 0
    return g * (softmax(x, dim) * tott - bt)


_CE = Op("cross_entropy", _ce_fwd, _ce_bwd, SAVE_INPUTS, extra=True,
         node_name="NllLossBackward0")
# torch runs inputs with spatial dims through nll_loss2d (and views unreduced losses back, except for 4-D input)
_CE_2D = Op("cross_entropy", _ce_fwd, _ce_bwd, SAVE_INPUTS, extra=True, node_name="NllLoss2DBackward0")
_CE_VIEW = Op("cross_entropy", _ce_fwd, _ce_bwd, SAVE_INPUTS, extra=True, node_name="ViewBackward0")
# with label smoothing torch's last op adds the smoothing term
_CE_SMOOTH = Op("cross_entropy", _ce_fwd, _ce_bwd, SAVE_INPUTS, extra=True, node_name="AddBackward0")


def _nll_fwd(x, xm, tt, s, reduction, shape):
    loss = -(s * xm[_xp(xm).arange(xm.shape[0]), tt])
    return _finish(loss, reduction, shape).astype(x.dtype, copy=False)


def _nll_bwd(ctx, g):
    _, tt, s, reduction, _ = ctx.attrs
    shape = tuple(ctx.shapes[0])
    c = shape[1] if len(shape) > 1 else shape[0]
    b, _ = _ce_dense_coef(tt, s, None, None, c, g._data.dtype)
    b = _to_input_layout(b, shape)
    if GRAD[0]:
        if reduction == "none":
            g = g.reshape((shape[0], 1) + shape[2:] if len(shape) > 1 else (1,))
        return (g * _const(-b),)
    gd = g._data
    if reduction == "none":
        gd = gd.reshape((shape[0], 1) + shape[2:] if len(shape) > 1 else (1,))
    return (Tensor._make(np.multiply(b, -gd)),)


_NLL = Op("nll_loss", _nll_fwd, _nll_bwd, SAVE_NONE, node_name="NllLossBackward0")
_NLL_2D = Op("nll_loss", _nll_fwd, _nll_bwd, SAVE_NONE, node_name="NllLoss2DBackward0")
_NLL_VIEW = Op("nll_loss", _nll_fwd, _nll_bwd, SAVE_NONE, node_name="ViewBackward0")


def _class_op(ndim, reduction, plain, two_d, view):
    if ndim < 3:
        return plain
    return two_d if reduction != "none" or ndim == 4 else view


def _target_shape(input, target):
    return target._data.shape if input._data.ndim > 1 else ()


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.nll_loss`."""
    check_tensor(input, "nll_loss_nd")
    check_tensor(target, "nll_loss_nd", "target", 2)
    if AUTOCAST[0]:
        input, weight = cast_args("nll_loss", (input, weight))
    reduction = _reduction(size_average, reduce, reduction)
    xm, tt, s, _, _, _ = _class_setup(input, target, weight, ignore_index, reduction, 0.0)
    if input._data.dtype.kind not in "fcV":
        kernel = "nll_loss_out_frame" if input._data.ndim < 3 else "nll_loss2d_forward_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input)}'")
    op = _class_op(input._data.ndim, reduction, _NLL, _NLL_2D, _NLL_VIEW)
    return dispatch1(op, input, xm, tt, s, reduction, _target_shape(input, target))


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Same as `torch.nn.functional.cross_entropy`."""
    check_tensor(input, "cross_entropy_loss")
    check_tensor(target, "cross_entropy_loss", "target", 2)
    if AUTOCAST[0]:
        input, target, weight = cast_args("cross_entropy_loss", (input, target, weight))
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input._data.dtype.kind not in "fcV":  # torch's log_softmax runs first
        kernel = "log_softmax_lastdim_kernel_impl" if input._data.ndim <= 2 else "log_softmax_kernel_impl"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(input)}'")
    if tuple(target.shape) == tuple(input.shape):
        if target._data.dtype.kind not in "fV":
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_type_name(target)}")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    xm, tt, s, r, v, _ = _class_setup(input, target, weight, ignore_index, reduction, label_smoothing)
    op = _CE_SMOOTH if label_smoothing > 0 else _class_op(input._data.ndim, reduction, _CE, _CE_2D, _CE_VIEW)
    return dispatch1(op, input, xm, tt, s, r, v, reduction, _target_shape(input, target))


def _div_scalar_fwd(x, n):
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x / n).astype(x.dtype, copy=False)


def _div_scalar_bwd(ctx, g):
    return (g / ctx.attrs[0],)


_DIV_SCALAR = Op("div", _div_scalar_fwd, _div_scalar_bwd, SAVE_NONE, node_name="DivBackward1")


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing):
    dim = 1 if input.dim() > 1 else 0
    c = input.shape[dim]
    lp = log_softmax(input, dim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    prod = lp * target
    if weight is not None:
        if weight.dim() != 1 or weight.shape[0] != c:
            raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {c} classes or no "
                               f"classes but got weight tensor of shape: [{', '.join(str(d) for d in weight.shape)}]")
        prod = prod * weight.reshape((c,) + (1,) * (input.dim() - dim - 1))
    # negated last, as in torch (grad_fn NegBackward0); the mean divides by a scalar (DivBackward1)
    if reduction == "mean":
        n = input.numel() // c if input.numel() else 0
        return dispatch1(_DIV_SCALAR, -prod.sum(), n)
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum(dim)


# ---------------- KL divergence, Poisson and Gaussian NLL ----------------
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Same as `torch.nn.functional.kl_div`."""
    if AUTOCAST[0]:
        input, target = cast_args("kl_div", (input, target))
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      UserWarning, stacklevel=2)
    if reduction not in _REDUCTIONS and reduction != "batchmean":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if input._data.dtype.kind in "biu" or target._data.dtype.kind in "biu":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        if input.dim() == 0:
            return loss.sum()
        return loss.sum() / input.shape[0]
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Same as `torch.nn.functional.poisson_nll_loss`."""
    if AUTOCAST[0]:
        input, target = cast_args("poisson_nll_loss", (input, target))
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Same as `torch.nn.functional.gaussian_nll_loss`."""
    if isinstance(var, (int, float)):
        var = input.new_full(input.shape, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
            pass  # one dimension of size 1 where input's differs: broadcast (torch: (4, 1, 32, 32) for (4, 3, 32, 32))
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    if var._data.__class__ is not np.ndarray:
        deferred.fail_if_any(_xp(var._data), var._data < 0, ValueError, "var has negative entry/entries")
    elif (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    vd = var.detach()
    var = var + (vd.clamp(min=eps) - vd)  # clamped value, identity gradient (torch clamps in place under no_grad)
    d = input - target
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ---------------- margin losses ----------------
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.soft_margin_loss`."""
    if AUTOCAST[0]:
        input, target = cast_args("soft_margin_loss", (input, target))
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(_softplus(-_as_input(target, input) * input), reduction, _SOFT_MARGIN_END)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.multilabel_soft_margin_loss`."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * _log_sigmoid(input) + (1 - target) * _log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.margin_ranking_loss`."""
    if AUTOCAST[0]:
        input1, input2, target = cast_args("margin_ranking_loss", (input1, input2, target))
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size_str(input1.shape)}, input2: {_size_str(input2.shape)}, "
                           f"target: {_size_str(target.shape)} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.hinge_embedding_loss`."""
    if AUTOCAST[0]:
        input, target = cast_args("hinge_embedding_loss", (input, target))
    reduction = _reduction(size_average, reduce, reduction)
    zeros = input.new_zeros(())
    out_margin = _where(target != 1, (margin - input).clamp_min(0), zeros)
    out_self = _where(target != -1, input, zeros)
    return _reduce(out_margin + out_self, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.cosine_embedding_loss`."""
    if AUTOCAST[0]:
        input1, input2, target = cast_args("cosine_embedding_loss", (input1, input2, target))
    reduction = _reduction(size_average, reduce, reduction)
    td = target.dim()
    if td > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != td + 1 or input2.dim() != td + 1:
        raise RuntimeError(f"{td}D target tensor expects {td + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    nd = td + 1
    dim = nd - 1
    prod = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12)
    cos = prod / mag.sqrt()
    zeros = cos.new_zeros(())
    pos = _where(target == 1, 1 - cos, zeros)
    neg = _where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Same as `torch.nn.functional.multi_margin_loss`."""
    if AUTOCAST[0]:
        input, weight = cast_args("multi_margin_loss", (input, weight))
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nd = input.dim()
    if nd > 2 or (nd == 2 and input.shape[1] == 0) or (nd < 2 and input.numel() == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    n = input.shape[0] if nd == 2 else 1
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    x = input if nd == 2 else input.reshape(1, -1)
    c = x.shape[1]
    t = target.reshape(-1, 1)
    td = t._data
    if td.__class__ is not np.ndarray:
        td = deferred.check_range(_xp(td), td, 0, c, RuntimeError, "target out of range")
        t = Tensor._make(td)
    elif ((td < 0) | (td >= c)).any():
        raise RuntimeError("target out of range")
    xt = x.gather(1, t)
    z = (margin - xt + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.gather(0, target.reshape(-1)).reshape(-1, 1)
    xp = _xp(td)
    mask = xp.ones(x.shape, bool)
    mask[xp.arange(x.shape[0]), td.reshape(-1)] = False
    loss = (z * _const(mask.astype(x._data.dtype))).sum(1) / c
    if nd < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction, _MULTI_MARGIN_END)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.multilabel_margin_loss`."""
    if AUTOCAST[0]:
        input, = cast_args("multilabel_margin_loss", (input,))
    reduction = _reduction(size_average, reduce, reduction)
    nd = input.dim()
    if nd > 2 or tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if nd and input.shape[-1] == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    x = input if nd == 2 else input.reshape(1, -1)
    c = x.shape[1]
    td = target.cpu()._data.reshape(x.shape)  # the targets are read on the host
    n = x.shape[0]
    is_target = np.zeros((n, c), bool)
    pair = np.zeros((n, c, c), x._data.dtype)  # pair[i, j, k]: j a target class, k not a target class
    for i in range(n):
        js = []
        for j in td[i]:
            if j < 0:
                break
            if j >= c:
                raise RuntimeError("target out of range")
            js.append(int(j))
        is_target[i, js] = True
        np.add.at(pair[i], js, 1)  # a repeated target counts each time, as in torch
    pair *= ~is_target[:, None, :]
    z = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0)
    loss = (z * _const(pair, x._data)).sum((1, 2)) / c
    if nd < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction, _MULTILABEL_MARGIN_END)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """Same as `torch.nn.functional.triplet_margin_loss`."""
    if AUTOCAST[0]:
        anchor, positive, negative = cast_args("triplet_margin_loss", (anchor, positive, negative))
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == nd):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {nd}D inputs")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(_pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """Same as `torch.nn.functional.triplet_margin_with_distance_loss`."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == nd):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {pd}D, and negative {nd}D inputs")
    dist = distance_function if distance_function is not None else _pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# ---------------- CTC ----------------
# NOTE [ CTC ]
# The forward is the alpha recursion over the blank-extended target in log space, one sample at a time; the
# backward runs the beta recursion. alpha[t, s] and beta[t, s] both include the emission at t, so
# d(-log p)/d(log_probs[t, c]) = -exp(log(sum over positions s labelled c of alpha * beta) + nll - log_probs[t, c]).
# That is the exact gradient with respect to log_probs (torch's kernel adds exp(log_probs), which vanishes once it
# flows back through a log_softmax).
def _lse(a, b):
    m = np.maximum(a, b)
    with np.errstate(invalid="ignore"):
        r = m + np.log(np.exp(a - m) + np.exp(b - m))
    return np.where(np.isneginf(m), -np.inf, r)


def _ctc_one(lp, ext, T):
    """alpha, beta (T, S) and -log p for one sample: lp (T_max, C), ext the blank-extended labels."""
    S = ext.shape[0]
    ninf = -np.inf
    alpha = np.full((T, S), ninf)
    beta = np.full((T, S), ninf)
    if T == 0:
        return alpha, beta, (0.0 if S == 1 else math.inf)
    # a transition s-2 -> s is allowed when ext[s] is a label that differs from ext[s-2]
    skip = np.zeros(S, bool)
    skip[2:] = (ext[2:] != ext[:-2]) & (np.arange(2, S) % 2 == 1)
    emit = lp[:T, ext]
    alpha[0, 0] = emit[0, 0]
    if S > 1:
        alpha[0, 1] = emit[0, 1]
    for t in range(1, T):
        prev = alpha[t - 1]
        a = prev.copy()
        a[1:] = _lse(a[1:], prev[:-1])
        a[2:] = np.where(skip[2:], _lse(a[2:], prev[:-2]), a[2:])
        alpha[t] = a + emit[t]
    beta[T - 1, S - 1] = emit[T - 1, S - 1]
    if S > 1:
        beta[T - 1, S - 2] = emit[T - 1, S - 2]
    for t in range(T - 2, -1, -1):
        nxt = beta[t + 1]
        b = nxt.copy()
        b[:-1] = _lse(b[:-1], nxt[1:])
        b[:-2] = np.where(skip[2:], _lse(b[:-2], nxt[2:]), b[:-2])
        beta[t] = b + emit[t]
    ll = alpha[T - 1, S - 1] if S == 1 else _lse(alpha[T - 1, S - 1], alpha[T - 1, S - 2])
    return alpha, beta, -float(ll)


def _ctc_fwd(lp, targets_list, in_lens, blank, zero_infinity):
    T_max, N, C = lp.shape
    if lp.__class__ is not np.ndarray:  # the recursions run on the host
        xp = XP[lp.__class__]
        nll, grads = _ctc_fwd(xp.asnumpy(lp), targets_list, in_lens, blank, zero_infinity)
        return xp.asarray(nll), xp.asarray(grads)
    lp64 = lp.astype(np.float64)
    nll = np.zeros(N)
    grads = np.zeros((T_max, N, C))
    for n in range(N):
        tg = targets_list[n]
        ext = np.full(2 * len(tg) + 1, blank, np.intp)
        ext[1::2] = tg
        T = in_lens[n]
        alpha, beta, loss = _ctc_one(lp64[:, n], ext, T)
        if math.isinf(loss):
            nll[n] = 0.0 if zero_infinity else math.inf
            continue
        nll[n] = loss
        ab = alpha + beta
        lcab = np.full((T, C), -np.inf)
        for s in range(ext.shape[0]):
            lcab[:, ext[s]] = _lse(lcab[:, ext[s]], ab[:, s])
        with np.errstate(over="ignore"):
            grads[:T, n] = -np.exp(lcab + loss - lp64[:T, n])
    return nll.astype(lp.dtype), grads


def _ctc_bwd(ctx, g):
    grads = ctx.extra  # (T, N, C): d nll_n / d log_probs
    gn = g.reshape(1, -1, 1)
    return (gn * _const(grads.astype(ctx.inputs[0]._data.dtype)),)


_CTC = Op("ctc_loss", _ctc_fwd, _ctc_bwd, SAVE_INPUTS, extra=True, node_name="CtcLossBackward0")


def _lengths(x):
    if isinstance(x, Tensor):
        return [int(v) for v in x._data.reshape(-1)]
    return [int(v) for v in x]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Same as `torch.nn.functional.ctc_loss`. The gradient with respect to log_probs is the exact one (see NOTE
    [ CTC ]); through a log_softmax it equals torch's."""
    if AUTOCAST[0]:
        log_probs, = cast_args("ctc_loss", (log_probs,))
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    in_lens = _lengths(input_lengths)
    tg_lens = _lengths(target_lengths)
    T_max, N, _ = log_probs.shape
    if len(in_lens) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tg_lens) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 0 <= blank < log_probs.shape[2]:
        raise RuntimeError("blank must be in label range")
    td = targets.cpu()._data  # labels are read on the host
    where = "(while checking arguments for ctc_loss_allocate_outputs)"
    if td.ndim == 2 and td.shape[1] < max(tg_lens, default=0):
        raise RuntimeError(f"Expected tensor to have size at least {max(tg_lens)} at dimension 1, but got size "
                           f"{td.shape[1]} for argument #2 'targets' {where}")
    if td.ndim == 1 and td.shape[0] != sum(tg_lens):
        raise RuntimeError(f"Expected tensor to have size {sum(tg_lens)} at dimension 0, but got size "
                           f"{td.shape[0]} for argument #2 'targets' {where}")
    tl = []
    off = 0
    for n in range(N):
        if in_lens[n] > T_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {T_max}, but got value "
                               f"{in_lens[n]} {where}")
        if td.ndim == 2:
            tl.append(td[n, :tg_lens[n]].astype(np.intp))
        else:
            tl.append(td[off:off + tg_lens[n]].astype(np.intp))
            off += tg_lens[n]
    nll = dispatch1(_CTC, log_probs, tl, in_lens, blank, zero_infinity)
    if reduction == "mean":
        lens = _const(np.maximum(np.array(tg_lens), 1).astype(log_probs._data.dtype), log_probs._data)
        return (nll / lens).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.reshape(()) if unbatched else nll
