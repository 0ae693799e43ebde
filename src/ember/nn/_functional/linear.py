"""Linear maps: F.linear as one fused op (one matmul plus the bias add), F.bilinear.

NOTE [ fused linear ]
y = x @ w^T + b runs as a single op over arrays: the input is folded to a matrix (x2 of shape (rows, in)), one
BLAS call computes x2 @ w^T and the bias is added in place. The backward is three ember ops:
gx = g2 @ w, gw = g2^T @ x2, gb = sum(g2, 0), each only when needed (so double backward works).
"""
import math

import numpy as np

import ember

from ..._autocast import AUTOCAST, cast_args
from ..._backend import matmul, matmul_bf16
from ..._backend.deferred import CAPTURING
from ..._dtype import FROM_NP
from ..._ops._dispatch import SAVE_INPUTS, Op, dispatch, dispatch2
from ..._dtype import SCALAR_NAMES
from ._args import not_tensor

__all__ = ["bilinear", "linear"]


def _linear_fwd(x, w, b=None):
    # np.dot: the same BLAS call as matmul with less per-call overhead on small matrices
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x
    y = np.dot(x2, w.T) if CAPTURING[0] is None else matmul(x2, w.T)  # a capture takes ember's kernel
    if b is not None:
        y += b
    if x.ndim != 2:
        y = y.reshape(x.shape[:-1] + (w.shape[0],))
    return y


def _bf16_linear_fwd(x, w, b=None):
    if x.__class__ is np.ndarray:  # NumPy multiplies bfloat16 in float32: add the bias there too, round once
        f32 = np.float32
        return _linear_fwd(x.astype(f32), w.astype(f32), None if b is None else b.astype(f32)).astype(x.dtype)
    y = matmul_bf16(x.reshape(-1, x.shape[-1]) if x.ndim != 2 else x, w.T)  # cuBLAS's bfloat16 GEMM on CuPy
    if b is not None:
        y += b
    return y.reshape(x.shape[:-1] + (w.shape[0],)) if x.ndim != 2 else y


def _linear_bwd(ctx, g):
    x, w = ctx.inputs[0], ctx.inputs[1]
    need = ctx.needs_input_grad
    nd = x._data.ndim
    if nd != 2:
        g = g.reshape(-1, g._data.shape[-1])
    gx = gw = gb = None
    if need[0]:
        gx = g.mm(w)
        if nd != 2:
            gx = gx.reshape(x._data.shape)
    if need[1]:
        gw = g.t().mm(x if nd == 2 else x.reshape(-1, x._data.shape[-1]))
    if len(need) > 2 and need[2]:
        gb = g.sum(0)
    return gx, gw, gb


def _ops(fwd):
    return {(True, True): Op("addmm", fwd, _linear_bwd, SAVE_INPUTS, node_name="AddmmBackward0"),
            (True, False): Op("mm", fwd, _linear_bwd, SAVE_INPUTS, node_name="MmBackward0"),
            (False, True): Op("linear", fwd, _linear_bwd, SAVE_INPUTS, node_name="ViewBackward0"),
            (False, False): Op("linear", fwd, _linear_bwd, SAVE_INPUTS, node_name="UnsafeViewBackward0"),
            # a vector input without bias: torch's matmul squeezes the result
            (None, False): Op("linear", fwd, _linear_bwd, SAVE_INPUTS, node_name="SqueezeBackward4")}


_LINEAR = _ops(_linear_fwd)
_LINEAR_BF16 = _ops(_bf16_linear_fwd)


def _type_name(a):
    return SCALAR_NAMES[FROM_NP[a.dtype].name]


def _check(x, w, b):
    """torch's errors for mismatched operands (checked only when the fast path is not taken)."""
    xd, wd = x._data, w._data
    if b is not None:  # torch's addmm compares dtypes before shapes
        if xd.dtype != wd.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_type_name(xd)} and "
                               f"{_type_name(wd)}")
        if b._data.dtype != wd.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {_type_name(b._data)} and "
                               f"{_type_name(wd)}")
    if xd.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D and 2D")
    if xd.shape[-1] != wd.shape[1]:
        # torch names the transposed weight as mat2
        rows = math.prod(xd.shape[:-1])
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{xd.shape[-1]} and "
                           f"{wd.shape[1]}x{wd.shape[0]})")
    if xd.dtype != wd.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_type_name(xd).lower()} != "
                           f"{_type_name(wd).lower()}")
    if b is not None:
        bd = b._data
        if bd.ndim > 1 or (bd.ndim == 1 and bd.shape[0] not in (1, wd.shape[0])):
            shape = list(xd.shape[:-1]) + [wd.shape[0]]
            raise RuntimeError(f"The expanded size of the tensor ({wd.shape[0]}) must match the existing size "
                               f"({bd.shape[-1]}) at non-singleton dimension {len(shape) - 1}.  Target sizes: "
                               f"[{', '.join(map(str, shape))}].  Tensor sizes: [{', '.join(map(str, bd.shape))}]")


def linear(input, weight, bias=None):
    """Same as `torch.nn.functional.linear`."""
    if AUTOCAST[0]:
        input, weight, bias = cast_args("linear", (input, weight, bias))
    try:
        xd, wd = input._data, weight._data
    except AttributeError:
        bad = "input" if not isinstance(input, ember.Tensor) else "weight"
        val = input if bad == "input" else weight
        raise not_tensor("linear", bad, 1 if bad == "input" else 2, val) from None
    if wd.ndim != 2 or xd.ndim == 0 or (bias is not None and bias._data.ndim > 1):
        return _general(input, weight, bias)
    _check(input, weight, bias)
    k = xd.dtype.kind
    if k == "b":
        raise NotImplementedError(f"\"addmm_impl_cpu_\" not implemented for '{_type_name(xd)}'")
    ops = _LINEAR_BF16 if k == "V" else _LINEAR
    op = ops[(xd.ndim == 2 or (None if xd.ndim == 1 and bias is None else False), bias is not None)]
    if bias is None:
        return dispatch2(op, input, weight)
    return dispatch(op, (input, weight, bias))


def _general(input, weight, bias):
    """Shapes off the fast path (a vector weight, a 0-d input, a matrix bias): composite, as torch."""
    if weight._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight._data.ndim}D")
    if weight._data.ndim == 1 and bias is not None and input._data.ndim == 2:
        raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    y = ember.matmul(input, weight.t())
    return y if bias is None else y + bias


def bilinear(input1, input2, weight, bias=None):
    """Same as `torch.nn.functional.bilinear`: y_k = x1^T W_k x2 + b_k."""
    x1, x2, w = input1._data, input2._data, weight._data
    if x1.ndim != x2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {x1.ndim} and {x2.ndim}")
    for i, (n1, n2) in enumerate(zip(x1.shape[:-1], x2.shape[:-1])):
        if n1 != n2:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {n1} and {n2}")
    if w.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {w.ndim}")
    if x1.shape[-1] != w.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {x1.shape[-1]} but expected "
                           f"{w.shape[1]}")
    if x2.shape[-1] != w.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {x2.shape[-1]} but expected "
                           f"{w.shape[2]}")
    # (..., i) @ (i, o*j) -> (..., o, j) in one BLAS product, then contract j with input2
    o, i, j = w.shape
    t = ember.matmul(input1, weight.permute(1, 0, 2).reshape(i, o * j)).reshape(x1.shape[:-1] + (o, j))
    y = (t * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias
