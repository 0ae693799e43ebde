"""One-launch optimizer updates for parameters on a GPU: SGD (with or without momentum) and Adam/AdamW.

NOTE [ Fused device updates ]
On a GPU every ufunc of _functional's chains is a kernel launch of its own (host time per launch, and a pass over
memory): an Adam step is eight of them per parameter. Here an update is one CuPy ElementwiseKernel that reads the
parameter, its gradient and its state once and writes them once, as torch's fused optimizers do. The arithmetic is
_functional's, in the same order, in float (double for float64 parameters), so results match the CPU's to rounding.
The variants not fused here (amsgrad, complex parameters), and arrays the kernels cannot run on (see
_backend/kernels.py), take the ufunc chains.
"""
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
    wd, momentum, damp1, nesterov, maximize, neg_lr, init = c
    flags = (_MAXIMIZE if maximize else 0) | (_WD if wd is not None else 0)
    if len(arrays) == 2:
        return _launch(arrays, "sgd", (0.0 if wd is None else wd, neg_lr), flags)
    flags |= (_INIT if init else 0) | (_NESTEROV if nesterov else 0) | (_DAMP if damp1 is not None else 0)
    return _launch(arrays, "sgd_momentum", (0.0 if wd is None else wd, momentum, 0.0 if damp1 is None else damp1,
                                            neg_lr), flags)


def adam(arrays, c):
    wd, decoupled, maximize, b1, w1, b2, w2, eps_s, neg_s, amsgrad = c
    if amsgrad:
        return False
    flags = (_MAXIMIZE if maximize else 0) | (_WD if wd is not None else 0) | (_DECOUPLED if decoupled else 0)
    return _launch(arrays, "adam", (0.0 if wd is None else wd, b1, w1, b2, w2, eps_s, neg_s), flags)
