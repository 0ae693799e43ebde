"""One-launch optimizer updates for parameters on a GPU: SGD (with or without momentum) and Adam/AdamW.

NOTE [ Fused device updates ]
On a GPU every ufunc of _functional's chains is a kernel launch of its own (host time per launch, and a pass over
memory): an Adam step is eight of them per parameter. Here an update is one CuPy ElementwiseKernel that reads the
parameter, its gradient and its state once and writes them once, as torch's fused optimizers do. The arithmetic is
_functional's, in the same order, in float (double for float64 parameters), so results match the CPU's to rounding.
The variants not fused here (amsgrad, complex parameters), and arrays the kernels cannot run on (see
_backend/kernels.py), take the ufunc chains.
Parameters that share an update (same kind, hyperparameters, step and dtype) go to one launch per _GROUP of them,
as torch's multi-tensor (foreach/fused) kernels: a RawKernel whose arguments are each tensor's pointers and size
(passed by value, so nothing is copied to the device and the host never waits), one row of blocks per tensor, the
same update text inside. float16/bfloat16 and strided parameters take one ElementwiseKernel each.
"""
import numpy as np

from .._backend import XP
from .._backend.kernels import Kernels

_MAXIMIZE, _WD, _DECOUPLED, _INIT, _NESTEROV, _DAMP = 1, 2, 4, 8, 16, 32

# g: the gradient the update uses (maximize, then L2 weight decay), as _functional.grad_of computes it
_GRAD = """
W pv = (W)p;
W gv = (W)g;
if (flags & {MAXIMIZE}) gv = -gv;
"""

_SGD = _GRAD + """
if (flags & {WD}) gv = pv * (W)wd + gv;
p = (T)(pv + gv * (W)neg_lr);
"""

_SGD_MOMENTUM = _GRAD + """
if (flags & {WD}) gv = pv * (W)wd + gv;
W b;
if (flags & {INIT}) {{
    b = gv;
}} else {{
    b = (W)buf * (W)momentum;
    b = (flags & {DAMP}) ? b + gv * (W)damp1 : b + gv;
}}
buf = (T)b;
gv = (flags & {NESTEROV}) ? gv + (W)buf * (W)momentum : (W)buf;
p = (T)(pv + gv * (W)neg_lr);
"""

_ADAM = _GRAD + """
if (flags & {WD}) {{
    if (flags & {DECOUPLED}) {{
        p = (T)(pv * (W)wd);
        pv = (W)p;
    }} else {{
        gv = pv * (W)wd + gv;
    }}
}}
m = (T)((W)m * (W)b1 + gv * (W)w1);
v = (T)((W)v * (W)b2 + gv * gv * (W)w2);
W d = sqrt((W)v) + (W)eps;
p = (T)(pv + ((W)m / d) * (W)neg_s);
"""

_SIGNATURES = {
    "sgd": ("T g, float64 wd, float64 neg_lr, int32 flags", "T p", _SGD),
    "sgd_momentum": ("T g, float64 wd, float64 momentum, float64 damp1, float64 neg_lr, int32 flags", "T p, T buf",
                     _SGD_MOMENTUM),
    "adam": ("T g, float64 wd, float64 b1, float64 w1, float64 b2, float64 w2, float64 eps, float64 neg_s, "
             "int32 flags", "T p, T m, T v", _ADAM),
}
_FLAGS = {"MAXIMIZE": _MAXIMIZE, "WD": _WD, "DECOUPLED": _DECOUPLED, "INIT": _INIT, "NESTEROV": _NESTEROV,
          "DAMP": _DAMP}


def _make(xp, name, wide):
    ins, outs, body = _SIGNATURES[name]
    return xp.ElementwiseKernel(ins, outs, f"typedef {wide} W;" + body.format(**_FLAGS), f"ember_{name}_{wide}")


KERNELS = Kernels(_make)


def _launch(arrays, name, scalars, flags):
    """Run kernel `name` on the row's arrays (parameter first, then gradient and state): False where the row is
    not for a fused kernel (host or complex arrays, a CuPy without kernels, a kernel that failed to build)."""
    p = arrays[0]
    return KERNELS.available(p) and KERNELS(name, p, (arrays[1], *scalars, flags, p, *arrays[2:]))


def sgd(arrays, c):
    """(kernel name, scalars, flags) of an SGD row."""
    wd, momentum, damp1, nesterov, maximize, neg_lr, init = c
    flags = (_MAXIMIZE if maximize else 0) | (_WD if wd is not None else 0)
    if len(arrays) == 2:
        return "sgd", (0.0 if wd is None else wd, neg_lr), flags
    flags |= (_INIT if init else 0) | (_NESTEROV if nesterov else 0) | (_DAMP if damp1 is not None else 0)
    return "sgd_momentum", (0.0 if wd is None else wd, momentum, 0.0 if damp1 is None else damp1, neg_lr), flags


def adam(arrays, c):
    """(kernel name, scalars, flags) of an Adam/AdamW row; None for amsgrad (not fused)."""
    wd, decoupled, maximize, b1, w1, b2, w2, eps_s, neg_s, amsgrad = c
    if amsgrad:
        return None
    flags = (_MAXIMIZE if maximize else 0) | (_WD if wd is not None else 0) | (_DECOUPLED if decoupled else 0)
    return "adam", (0.0 if wd is None else wd, b1, w1, b2, w2, eps_s, neg_s), flags


def update(plan, rows):
    """Run the fused updates of the GPU rows ((arrays, consts) pairs; plan is sgd or adam above): rows that share
    an update in multi-tensor launches, the others one launch each. Returns the rows left for the ufunc chains."""
    left, groups = [], {}
    for row in rows:
        arrays, c = row
        p = arrays[0]
        call = plan(arrays, c) if p.__class__ is not np.ndarray and KERNELS.available(p) else None
        if call is None:
            left.append(row)
        else:
            groups.setdefault((call, p.dtype, p.__class__), []).append(row)
    for (call, dtype, _), members in groups.items():
        name, scalars, flags = call
        if dtype in _MT_TYPES:
            dense = [r for r in members if all(a.flags.c_contiguous for a in r[0])]
            if len(dense) > 1 and _launch_many(name, scalars, flags, [r[0] for r in dense]):
                members = [r for r in members if not all(a.flags.c_contiguous for a in r[0])]
        left.extend(r for r in members if not _launch(r[0], name, scalars, flags))
    return left


# ----- multi-tensor launches -----

_GROUP = 32  # tensors per launch: 4 pointers and a size each stay well inside CUDA's 4 KiB of kernel arguments
_MT_TYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_MT_ARRAYS = {"sgd": ("p", "g"), "sgd_momentum": ("p", "g", "buf"), "adam": ("p", "g", "m", "v")}
_CTYPES = {"float64": "double", "int32": "int"}
_MT = {}  # (CuPy module, name, dtype) -> RawKernel, or None after a failed compilation


def _mt_source(name, ctype):
    """The multi-tensor kernel of update `name`: blockIdx.y picks the tensor, a grid-stride loop its elements."""
    ins, _, body = _SIGNATURES[name]
    arrays = _MT_ARRAYS[name]
    scalars = [a.split() for a in ins.split(", ")[1:]]
    params = [f"{'const ' if a == 'g' else ''}T* {a}{k}" for k in range(_GROUP) for a in arrays]
    params += [f"long long n{k}" for k in range(_GROUP)] + [f"{_CTYPES[t]} {v}" for t, v in scalars]
    decl = " ".join(f"{'const ' if a == 'g' else ''}T* {a}_ = 0;" for a in arrays)
    cases = "\n".join(f"case {k}: " + " ".join(f"{a}_ = {a}{k};" for a in arrays) + f" n = n{k}; break;"
                       for k in range(_GROUP))
    refs = " ".join("const T g = g_[i];" if a == "g" else f"T& {a} = {a}_[i];" for a in arrays)
    return (f"typedef {ctype} T;\ntypedef {ctype} W;\n"
            f"extern \"C\" __global__ void ember_mt_{name}({', '.join(params)}) {{\n"
            f"{decl} long long n = 0;\nswitch (blockIdx.y) {{\n{cases}\n}}\n"
            "for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; "
            "i += (long long)gridDim.x * blockDim.x) {\n" + refs + "\n" + body.format(**_FLAGS) + "}\n}\n")


def _mt_kernel(xp, name, dtype):
    key = (xp, name, dtype)
    k = _MT.get(key, False)
    if k is False:
        try:
            k = xp.RawKernel(_mt_source(name, _MT_TYPES[dtype]), f"ember_mt_{name}")
            k.compile()  # now, so that a compiler error falls back here rather than at the launch
        except Exception as e:  # a compiler that fails must not stop training: one launch each
            if type(e).__name__ != "CompileException":
                raise
            k = None
        _MT[key] = k
    return k


def _launch_many(name, scalars, flags, rows):
    """The updates of the rows (of C-contiguous arrays) in launches of up to _GROUP tensors; False where the kernel
    cannot be built (then nothing ran)."""
    p0 = rows[0][0]
    xp = XP[p0.__class__]
    if not hasattr(xp, "RawKernel"):
        return False
    kernel = _mt_kernel(xp, name, p0.dtype)
    if kernel is None:
        return False
    tail = tuple(np.float64(v) for v in scalars) + (np.int32(flags),)
    for s in range(0, len(rows), _GROUP):
        chunk = rows[s:s + _GROUP]
        ptrs = [a for r in chunk for a in r] + [a for _ in range(_GROUP - len(chunk)) for a in chunk[0]]
        sizes = [np.int64(r[0].size) for r in chunk] + [np.int64(0)] * (_GROUP - len(chunk))
        blocks = min(-(-max(r[0].size for r in chunk) // 256), 1024)
        kernel((blocks, len(chunk)), (256,), (*ptrs, *sizes, *tail))
    return True
