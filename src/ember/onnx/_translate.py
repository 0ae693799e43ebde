"""The ONNX form of each op the exporter traces (NOTE [ ONNX export by tracing ] in _export.py).

A translation receives the graph, the Op record, the forward's positional arguments (arrays, then the op's
attributes, in the layout of that Op's forward) and what the forward returned, adds nodes and binds the result
arrays to their names. Ops are found by their Op record where one name covers forwards of different layouts
(torch's "mm" is also a linear layer's), otherwise by name.
"""
import math

import numpy as np

from .._ops import binary as _binary
from .._ops import linalg as _linalg
from ..nn._functional import activation as _activation
from ..nn._functional import linear as _linear
from ._export import OnnxExporterError, _host

_BY_OP = {}
_BY_NAME = {}


def translate(g, op, args, out):
    fn = _BY_OP.get(op) or _BY_NAME.get(op.name)
    if fn is None:
        raise OnnxExporterError(f"ember.onnx.export: the op aten::{op.name} has no ONNX translation in ember")
    fn(g, op, args, out)


def _registrar(table):
    """A decorator factory: @registrar(key, ...) files the function under each key of table."""
    def keys(*ks):
        def register(fn):
            for k in ks:
                table[k] = fn
            return fn
        return register
    return keys


_names = _registrar(_BY_NAME)  # translations by op name
_ops = _registrar(_BY_OP)      # translations by Op record


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def _dtype_of(a):
    return np.float32 if a.dtype.kind == "V" else a.dtype


# ----- elementwise -----

_UNARY = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "neg": "Neg", "abs": "Abs", "erf": "Erf", "sin": "Sin", "cos": "Cos", "reciprocal": "Reciprocal",
          "floor": "Floor", "ceil": "Ceil", "sign": "Sign"}


def _unary(g, op, args, out):
    if len(args) != 1:
        raise OnnxExporterError(f"ember.onnx.export: aten::{op.name} with arguments {args[1:]!r} has no ONNX "
                                "translation in ember")
    g.out(_first(out), _UNARY[op.name], [g.value(args[0])])


for _n in _UNARY:
    _BY_NAME[_n] = _unary


@_names("rsqrt")
def _rsqrt(g, op, args, out):
    g.out(out, "Reciprocal", [g.node("Sqrt", [g.value(args[0])])])


@_names("gelu")
def _gelu(g, op, args, out):
    x = g.value(args[0])
    dt = _dtype_of(args[0])
    if op is _activation._GELU_TANH:  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Add", [x, g.node("Mul", [cube, g.const(np.array(0.044715, dt))])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.const(np.array(math.sqrt(2 / math.pi), dt))])])
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        t = g.node("Erf", [g.node("Mul", [x, g.const(np.array(1 / math.sqrt(2), dt))])])
    half = g.node("Mul", [x, g.const(np.array(0.5, dt))])
    g.out(_first(out), "Mul", [half, g.node("Add", [t, g.const(np.array(1, dt))])])


@_names("silu")
def _silu(g, op, args, out):
    x = g.value(args[0])
    g.out(_first(out), "Mul", [x, g.node("Sigmoid", [x])])


@_names("softmax", "log_softmax")
def _softmax(g, op, args, out):
    g.out(_first(out), "Softmax" if op.name == "softmax" else "LogSoftmax", [g.value(args[0])], axis=int(args[1]))


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "maximum": "Max",
           "minimum": "Min"}
_REVERSED = {_binary.RSUB_S, _binary.RDIV_S, _binary.RPOW_S}


def _operand(g, v, like):
    if isinstance(v, (bool, int, float, np.number)):
        return g.const(np.array(v, _dtype_of(like)), "scalar")
    return g.value(v)


@_names(*_BINARY)
def _binary_op(g, op, args, out):
    a, b = args[0], args[1]
    if len(args) > 3 or not hasattr(a, "shape") or (len(args) == 3 and op.name not in ("add", "sub")):
        raise OnnxExporterError(f"ember.onnx.export: this form of aten::{op.name} has no ONNX translation in ember")
    x, y = g.value(a), _operand(g, b, a)
    if len(args) == 3 and args[2] != 1:  # add/sub with alpha
        y = g.node("Mul", [y, g.const(np.array(args[2], _dtype_of(a)), "alpha")])
    if op in _REVERSED:
        x, y = y, x
    g.out(_first(out), _BINARY[op.name], [x, y])


# ----- products -----

_LINEAR_OPS = set(_linear._LINEAR.values()) | set(_linear._LINEAR_BF16.values())


@_ops(*_LINEAR_OPS)
def _linear_op(g, op, args, out):
    x, w = args[0], args[1]
    b = args[2] if len(args) > 2 and hasattr(args[2], "shape") else None
    xv = g.value(x)
    if x.ndim == 2 and g.traced(w) is None:
        ins = [xv, g.value(w)] + ([g.value(b)] if b is not None else [])
        g.out(out, "Gemm", ins, transB=1)
        return
    wt = g.node("Transpose", [g.traced(w)], perm=[1, 0]) if g.traced(w) is not None else g.const(w.T, "weight_t")
    y = g.node("MatMul", [xv, wt])
    g.out(out, "Add" if b is not None else "Identity", [y, g.value(b)] if b is not None else [y])


@_ops(_linalg.MM, _linalg.BMM, _linalg.MATMUL_ND, _linalg.MATMUL_VM)
@_names("matmul")
def _matmul(g, op, args, out):
    g.out(out, "MatMul", [g.value(args[0]), g.value(args[1])])


# ----- shapes -----

def _reshape_code(g, src, dst, dynamic):
    """The Reshape target for src -> dst: a dim kept at its place copies the input's (0); the one dynamic dim
    (NOTE [ Dynamic dims by a second trace ] in _export.py) not copied is inferred (-1); the rest are fixed."""
    code = [0 if i < len(src) and src[i] == n and n != 0 else int(n) for i, n in enumerate(dst)]
    free = [i for i in dynamic if code[i] != 0]
    if len(free) > 1:
        raise OnnxExporterError(f"ember.onnx.export: a reshape to {tuple(dst)} whose dims {free} all follow "
                                "dynamic dims has no ONNX translation in ember")
    if free:
        code[free[0]] = -1
    return code


@_names("view", "_reshape_alias", "_unsafe_view", "reshape", "squeeze", "unsqueeze", "flatten", "unflatten",
        "alias", "_to_copy_view")
def _reshape(g, op, args, out):
    x, y = args[0], _first(out)
    if tuple(x.shape) == tuple(y.shape):
        g.out(y, "Identity", [g.value(x)])
        return
    g.out(y, "Reshape", [g.value(x), g.ints(_reshape_code(g, x.shape, y.shape, g.dynamic_dims(y)))])


@_names("permute", "transpose", "t")
def _permute(g, op, args, out):
    x = args[0]
    perm = [int(p) for p in args[1]] if len(args) > 1 else list(range(x.ndim))[::-1]
    g.out(out, "Transpose", [g.value(x)], perm=perm)


@_names("expand")
def _expand(g, op, args, out):
    # a dim the input already has at its place is given as 1 (broadcasting keeps the input's): it may be dynamic
    x = args[0]
    lead = out.ndim - x.ndim
    shape = [1 if i >= lead and x.shape[i - lead] == n else int(n) for i, n in enumerate(out.shape)]
    if any(shape[i] != 1 for i in g.dynamic_dims(out)):
        raise OnnxExporterError("ember.onnx.export: an expand to a dynamic size has no ONNX translation in ember")
    g.out(out, "Expand", [g.value(x), g.ints(shape)])


@_names("clone", "contiguous", "detach", "alias_copy", "lift_fresh")
def _identity(g, op, args, out):
    g.out(out, "Identity", [g.value(args[0])])


@_names("_to_copy")
def _to_copy(g, op, args, out):
    from onnx import helper
    g.out(out, "Cast", [g.value(args[0])], to=helper.np_dtype_to_tensor_dtype(np.dtype(_dtype_of(out))))


@_names("select")
def _select(g, op, args, out):
    x, dim, index = args[0], int(args[1]), int(args[2])
    g.out(out, "Gather", [g.value(x), g.const(np.array(index, np.int64), "index")], axis=dim)


@_names("slice")
def _slice(g, op, args, out):
    x, dim, start, stop, step = args[0], int(args[1]), args[2], args[3], args[4]
    n = x.shape[dim]
    start, stop, step = slice(start, stop, step).indices(n)
    g.out(out, "Slice", [g.value(x), g.ints([start]), g.ints([stop]), g.ints([dim]), g.ints([step])])


@_names("unbind", "split", "split_with_sizes")
def _split(g, op, args, out):
    x, dim = args[0], int(args[1])
    parts = out if isinstance(out, tuple) else (out,)
    sizes = [p.shape[dim] if op.name != "unbind" else 1 for p in parts]
    names = g.node("Split", [g.value(x), g.ints(sizes)], outputs=len(parts), axis=dim)
    names = names if isinstance(names, list) else [names]
    for p, name in zip(parts, names):
        if op.name == "unbind":
            g.out(p, "Squeeze", [name, g.ints([dim])])
        else:
            g.bind(p, name)


@_names("stack")
def _stack(g, op, args, out):
    arrays, dim = args[:-2], int(args[-2])
    dim = dim if dim >= 0 else dim + out.ndim
    parts = [g.node("Unsqueeze", [g.value(a), g.ints([dim])]) for a in arrays]
    g.out(out, "Concat", parts, axis=dim)


@_names("cat")
def _cat(g, op, args, out):
    arrays, dim, skip = args[:-3], int(args[-3]), args[-1]
    if skip is not None:
        arrays = [a for a, s in zip(arrays, skip) if not s]
    g.out(out, "Concat", [g.value(a) for a in arrays], axis=dim if dim >= 0 else dim + out.ndim)


# ----- reductions -----

def _reduce(g, op_type, x, dims, keepdim, result):
    axes = list(range(x.ndim)) if dims is None or dims == () else [int(d) for d in np.atleast_1d(dims)]
    if g.opset >= 18 or op_type == "ReduceSum":
        g.out(result, op_type, [g.value(x), g.ints(axes)], keepdims=int(bool(keepdim)))
    else:
        g.out(result, op_type, [g.value(x)], axes=axes, keepdims=int(bool(keepdim)))


@_names("mean")
def _mean(g, op, args, out):
    _reduce(g, "ReduceMean", args[0], args[1], args[2], out)


@_names("sum")
def _sum(g, op, args, out):
    if len(args) > 3 and args[3] is not None and np.dtype(args[3]) != out.dtype:
        raise OnnxExporterError("ember.onnx.export: aten::sum with a dtype has no ONNX translation in ember")
    _reduce(g, "ReduceSum", args[0], args[1], args[2], out)


# ----- layers -----

@_names("convolution")
def _conv(g, op, args, out):
    x, w = args[0], args[1]
    has_b = hasattr(args[2], "shape")
    b = args[2] if has_b else None
    stride, lo, hi, dil, groups = args[3:8] if has_b else args[2:7]
    if any(h < 0 for h in hi):
        raise OnnxExporterError("ember.onnx.export: a convolution cropping its input (negative padding) has no "
                                "ONNX translation in ember")
    ins = [g.value(x), g.value(w)] + ([g.value(b)] if has_b else [])
    g.out(_first(out), "Conv", ins, strides=list(stride), pads=list(lo) + list(hi), dilations=list(dil),
          group=int(groups))


@_names("convolution_transpose")
def _conv_transpose(g, op, args, out):
    x, w = args[0], args[1]
    has_b = hasattr(args[2], "shape")
    stride, lo, hi, dil, groups, xsp = args[3:9] if has_b else args[2:8]
    opad = [a - b for a, b in zip(lo, hi)]  # conv_transpose's output_padding: hi = padding - output_padding
    if any(p < 0 for p in opad):
        raise OnnxExporterError("ember.onnx.export: this transposed convolution's padding has no ONNX translation "
                                "in ember")
    ins = [g.value(x), g.value(w)] + ([g.value(args[2])] if has_b else [])
    g.out(out, "ConvTranspose", ins, strides=list(stride), pads=list(lo) * 2, dilations=list(dil),
          group=int(groups), output_padding=opad)


@_names("max_pool_with_indices")
def _max_pool(g, op, args, out):
    x, nd, k, s, p, d, outs = args[:7]
    sp = x.shape[-nd:]
    floor = tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for n, kk, ss, pp, dd in zip(sp, k, s, p, d))
    y, idx = out
    g.out(y, "MaxPool", [g.value(x)], kernel_shape=list(k), strides=list(s), pads=list(p) * 2,
          dilations=list(d), ceil_mode=int(tuple(outs) != floor))
    g.bind(idx, g.fresh("indices"))
    g.unexported[g.traced(idx)] = "max pooling's indices"


@_names("NativeLayerNormBackward0", "NativeBatchNormBackward0", "NativeGroupNormBackward0", "FusedRmsNormBackward0")
def _norm(g, op, args, out):
    (xhat, saved, mu, invstd, axes, sshape, wview, waxes, has_w, has_b, fixed, eps) = args[-12:]
    x = args[0]
    w = args[1] if has_w else None
    b = args[1 + has_w] if has_b else None
    if not fixed and ("LayerNorm" not in op.name or sshape is not None or mu is None):
        _norm_from_stats(g, op, x, w, b, mu is not None, axes, sshape, wview, eps, out)
        return
    if not fixed:
        axis = min(axes)
        n = x.shape[axis:]
        dt = _dtype_of(x)
        scale = g.value(w) if w is not None else g.const(np.ones(n, dt), "ones")
        ins = [g.value(x), scale] + ([g.value(b)] if b is not None else [])
        g.out(out, "LayerNormalization", ins, axis=int(axis), epsilon=float(eps))
        return
    # running statistics: y = x * scale + shift, folded at export
    if sshape is not None:
        raise OnnxExporterError(f"ember.onnx.export: this form of aten::{op.name} has no ONNX translation in ember")
    scale = np.asarray(invstd, np.float64)
    shift = -np.asarray(mu, np.float64) * scale
    if w is not None:
        wv = np.asarray(w, np.float64).reshape(wview) if wview is not None else np.asarray(w, np.float64)
        scale, shift = scale * wv, shift * wv
    if b is not None:
        shift = shift + (np.asarray(b, np.float64).reshape(wview) if wview is not None else b)
    dt = _dtype_of(x)
    y = g.node("Mul", [g.value(x), g.const(scale.astype(dt), "bn_scale")])
    g.out(out, "Add", [y, g.const(shift.astype(dt), "bn_shift")])


@_names("norm_stats")
def _norm_stats(g, op, args, out):
    # a normalization's statistics: the normalization's own translation covers them (LayerNormalization, or batch
    # norm's folded scale and shift from their values)
    for a in out:
        g.bind(a, g.fresh("statistics"))
        g.unexported[g.traced(a)] = "a normalization's statistics"


# ----- in-place writes (NOTE [ Tracing ops ]): the written array takes the new value's name -----

@_names("relu_")
def _relu_inplace(g, op, args, out):
    g.out(out, "Relu", [g.value(args[0])])


@_names("copy_")
def _assign(g, op, args, out):
    dst, src = args
    if tuple(dst.shape) == tuple(src.shape) and dst.dtype == src.dtype:
        g.out(out, "Identity", [g.value(src)])
    else:
        from onnx import helper
        x = g.value(src)
        if dst.dtype != src.dtype:
            x = g.node("Cast", [x], to=helper.np_dtype_to_tensor_dtype(np.dtype(_dtype_of(dst))))
        g.out(out, "Expand", [x, g.ints(dst.shape)])


_UFUNCS = {np.add: "Add", np.subtract: "Sub", np.multiply: "Mul", np.true_divide: "Div", np.maximum: "Max",
           np.minimum: "Min", np.power: "Pow"}


@_names("inplace_ufunc")
def _ufunc_inplace(g, op, args, out):
    dst, other, ufunc = args
    if ufunc not in _UFUNCS:
        raise OnnxExporterError(f"ember.onnx.export: an in-place {ufunc.__name__} has no ONNX translation in ember")
    g.out(out, _UFUNCS[ufunc], [g.value(dst), _operand(g, other, dst)])


@_names("fill_")
def _fill(g, op, args, out):
    g.bind(out, g.const(np.full(out.shape, args[1], _dtype_of(out)), "filled"))


@_names("tril", "triu")
def _trilu(g, op, args, out):
    g.out(out, "Trilu", [g.value(args[0]), g.const(np.array(int(args[1]), np.int64), "k")],
          upper=int(op.name == "triu"))


@_names("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(g, op, args, out):
    x, (_, k, s, p, hi, _, _, div) = args[0], args[1]
    if any(hi) or not np.all(np.asarray(_host(div)) == math.prod(k)):  # every window divided by its full size
        raise OnnxExporterError(f"ember.onnx.export: aten::{op.name} with ceil_mode, count_include_pad=False or "
                                "a divisor_override has no ONNX translation in ember")
    g.out(out, "AveragePool", [g.value(x)], kernel_shape=list(k), strides=list(s), pads=list(p) * 2,
          count_include_pad=1)


@_names("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")
def _adaptive_avg_pool(g, op, args, out):
    x = args[0]
    nd = int(op.name[-2])
    sp, osp = x.shape[-nd:], out.shape[-nd:]
    if all(o == 1 for o in osp):
        g.out(out, "GlobalAveragePool", [g.value(x)])
    elif all(n % o == 0 for n, o in zip(sp, osp)):
        k = [n // o for n, o in zip(sp, osp)]
        g.out(out, "AveragePool", [g.value(x)], kernel_shape=k, strides=k)
    else:
        raise OnnxExporterError(f"ember.onnx.export: aten::{op.name} to a size that does not divide the input's "
                                "has no ONNX translation in ember")


def _norm_from_stats(g, op, x, w, b, center, axes, sshape, wview, eps, out):
    """A normalization computing its statistics (group, instance, RMS, batch norm in training mode): the mean
    (when centring) and variance over axes of x (viewed as sshape), then the affine step."""
    dt = _dtype_of(x)
    xs = g.value(x)
    if sshape is not None:
        xs = g.node("Reshape", [xs, g.ints(_reshape_code(g, x.shape, sshape, set()))])  # the batch dim copied
    axes = [int(a) for a in axes]

    def mean(v):
        if g.opset >= 18:
            return g.node("ReduceMean", [v, g.ints(axes)], keepdims=1)
        return g.node("ReduceMean", [v], axes=axes, keepdims=1)
    d = g.node("Sub", [xs, mean(xs)]) if center else xs
    var = mean(g.node("Mul", [d, d]))
    inv = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [var, g.const(np.array(eps, dt), "eps")])])])
    y = g.node("Mul", [d, inv])
    if sshape is not None:
        y = g.node("Reshape", [y, g.ints(_reshape_code(g, sshape, x.shape, g.dynamic_dims(out)))])
    for t, kind in ((w, "Mul"), (b, "Add")):
        if t is not None:
            tv = g.value(t) if wview is None else g.node("Reshape", [g.value(t), g.ints(wview)])
            y = g.node(kind, [y, tv])
    g.out(out, "Identity", [y])


@_names("embedding")
def _embedding(g, op, args, out):
    w, idx = args[0], args[1]
    g.out(out, "Gather", [g.value(w), g.value(idx)], axis=0)


@_names("scaled_dot_product_attention")
def _sdpa(g, op, args, out):
    q, k, v, mask, causal, scale, group, keep = args[:8]
    if group != 1 or keep is not None:
        raise OnnxExporterError("ember.onnx.export: attention with grouped keys or dropout has no ONNX translation "
                                "in ember")
    dt = _dtype_of(q)
    perm = list(range(k.ndim - 2)) + [k.ndim - 1, k.ndim - 2]
    scores = g.node("MatMul", [g.node("Mul", [g.value(q), g.const(np.array(scale, dt), "scale")]),
                               g.node("Transpose", [g.value(k)], perm=perm)])
    lq, lk = q.shape[-2], k.shape[-2]
    if causal:
        keep_mask = np.tril(np.ones((lq, lk), bool))
        scores = g.node("Where", [g.const(keep_mask, "causal"), scores, g.const(np.array(-np.inf, dt), "ninf")])
    if mask is not None:
        if mask.dtype == np.bool_:
            scores = g.node("Where", [g.value(mask), scores, g.const(np.array(-np.inf, dt), "ninf")])
        else:
            scores = g.node("Add", [scores, g.value(mask)])
    p = g.node("Softmax", [scores], axis=-1)
    if mask is not None or causal:  # a row with no key left gives zeros, as ember's kernel
        p = g.node("Where", [g.node("IsNaN", [p]), g.const(np.array(0, dt), "zero"), p])
    g.out(_first(out), "MatMul", [p, g.value(v)])


# ----- recurrent layers -----

def _gates(w, order, H):
    """w's row blocks (torch's order) rearranged into ONNX's, with a leading direction dim."""
    return np.concatenate([np.asarray(w)[i * H:(i + 1) * H] for i in order])[None]


@_names("lstm_layer", "rnn_layer")
def _rnn_layer(g, op, args, out):
    sp = args[-1]
    x = args[0]
    plan = sp.plan
    if x.ndim != 3 or sp.proj or plan.batch != x.shape[1]:
        raise OnnxExporterError(f"ember.onnx.export: a {sp.mode} layer over packed sequences or with proj_size "
                                "has no ONNX translation in ember")
    w = list(args[1:-1])
    if sp.mode == "LSTM":
        h0, c0, w_ih, w_hh = w[:4]
        bias = w[4:6] if sp.bias else None
        kind, order, H = "LSTM", (0, 3, 1, 2), w_hh.shape[1]  # torch (i, f, g, o) -> ONNX (i, o, f, c)
    else:
        h0, w_ih, w_hh = w[:3]
        c0 = None
        bias = w[3:5] if sp.bias else None
        H = w_hh.shape[1]
        kind, order = ("GRU", (1, 0, 2)) if sp.mode == "GRU" else ("RNN", (0,))  # torch (r, z, n) -> (z, r, h)
    for t, what in ((w_ih, "weight"), (w_hh, "weight")):
        if g.traced(t) is not None:
            raise OnnxExporterError(f"ember.onnx.export: a {sp.mode} {what} computed in the model has no ONNX "
                                    "translation in ember")
    ins = [g.value(x), g.const(_gates(w_ih, order, H), "W"), g.const(_gates(w_hh, order, H), "R")]
    if bias is not None:
        ins.append(g.const(np.concatenate([_gates(bias[0], order, H), _gates(bias[1], order, H)], -1), "B"))
    else:
        ins.append("")
    ins.append("")  # sequence_lens: every sequence is full length
    states = [h0] + ([c0] if c0 is not None else [])
    for s in states:  # fixed zero initial states are ONNX's default: left out, the batch dim stays free
        if not g.is_variable(s) and not np.any(_host(s)):
            ins.append("")
        else:
            ins.append(g.node("Unsqueeze", [g.value(s), g.ints([0])]))
    while ins and ins[-1] == "":
        ins.pop()
    attrs = {"hidden_size": int(H), "direction": "reverse" if plan.reverse else "forward"}
    if kind == "GRU":
        attrs["linear_before_reset"] = 1  # torch's n = tanh(W x + b + r * (R h + b_r))
    if kind == "RNN":
        attrs["activations"] = ["Relu" if sp.mode == "RNN_RELU" else "Tanh"]
    names = g.node(kind, ins, outputs=3 if kind == "LSTM" else 2, **attrs)
    (y, hn, *cn), _ = out
    g.out(y, "Squeeze", [names[0], g.ints([1])])  # (T, 1, B, H) -> (T, B, H)
    g.out(hn, "Squeeze", [names[1], g.ints([0])])
    if cn:
        g.out(cn[0], "Squeeze", [names[2], g.ints([0])])
