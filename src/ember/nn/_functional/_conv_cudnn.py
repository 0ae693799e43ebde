"""Convolutions on a GPU through cuDNN, when NVIDIA's cuDNN frontend (`pip install nvidia-cudnn-frontend`, with
cuDNN 9 from the nvidia-cudnn-cu12/cu13 wheels) is installed.

NOTE [ cuDNN convolutions ]
conv.py's three array kernels (forward, data gradient, weight gradient) each map to one cuDNN operation graph:
conv_fprop, conv_dgrad and conv_wgrad, with the padding as pre/post padding (ember's lo/hi), built once per
signature -- operation, shapes, strides, dtype, geometry, the switches below -- and cached (NOTE [ cuDNN graphs ]).
Supported: float16, bfloat16 and float32 data (float32 accumulation), 1-d to 3-d (1-d runs as 2-d with a unit
height), groups, stride, dilation, non-negative padding. Everything else -- float64 and complex data, negative
padding (a transposed convolution's output_padding beyond its padding), a signature cuDNN reports unsupported, no
cuDNN frontend, a frontend that cannot start -- returns None and conv.py computes as it does without cuDNN.
EMBER_CUDNN_CONV=0 in the environment turns this path off. Inputs are packed and 256-byte aligned before they
reach cuDNN (a view into a buffer may start anywhere).
The switches are torch's: `ember.backends.cudnn.enabled` (False: never cuDNN), `allow_tf32` (False: no tensor-core
plans for float32 data, i.e. no TF32 rounding), `deterministic` (no plans cuDNN marks nondeterministic).
`benchmark` is not timed here: plans come from cuDNN's heuristics either way.
"""
import os

from ... import backends
from ..._backend import XP
from ..._backend import cudnn as _cudnn

ENABLED = os.environ.get("EMBER_CUDNN_CONV", "1") == "1"


def _build(kind, ins, out_shape, geometry, dtype):
    """The builder of one convolution graph, for _cudnn.run."""
    lo, hi, stride, dil = geometry

    def build(cudnn, handle):
        dt = _cudnn.data_type(cudnn, dtype)
        g = cudnn.pygraph(io_data_type=dt, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
        t = {name: g.tensor(name=name, dim=list(a.shape), stride=_cudnn.elements(a), data_type=dt)
             for name, a in ins.items()}
        geo = {"pre_padding": list(lo), "post_padding": list(hi), "stride": list(stride), "dilation": list(dil)}
        if kind == "fprop":
            y = g.conv_fprop(image=t["x"], weight=t["w"], **geo)
        elif kind == "dgrad":
            y = g.conv_dgrad(loss=t["dy"], filter=t["w"], **geo)
        else:
            y = g.conv_wgrad(image=t["x"], loss=t["dy"], **geo)
        y.set_output(True).set_dim(list(out_shape)).set_stride(_cudnn.contiguous_strides(out_shape)).set_data_type(dt)
        notes = []
        if not backends.cudnn.allow_tf32 and dt == cudnn.data_type.FLOAT:
            notes.append(cudnn.numerical_note.TENSOR_CORE)
        if backends.cudnn.deterministic:
            notes.append(cudnn.numerical_note.NONDETERMINISTIC)
        t["out"] = y
        return _cudnn.finish(cudnn, g, notes), t
    return build


def usable(a):
    """Whether cuDNN may take the convolutions of arrays like a: device arrays of a dtype it convolves, with the
    frontend installed and cuDNN enabled."""
    if not ENABLED or not backends.cudnn.enabled:
        return False
    cudnn = _cudnn.for_array(a)
    return cudnn is not None and _cudnn.data_type(cudnn, a.dtype) is not None


def _run(kind, ins, out_shape, geometry):
    """Run one cuDNN convolution graph on the device arrays `ins` (usable() said yes); the new output array, or
    None where cuDNN is not used for it (NOTE [ cuDNN convolutions ])."""
    first = next(iter(ins.values()))
    if min(geometry[0]) < 0 or min(geometry[1]) < 0 or 0 in out_shape or any(0 in a.shape for a in ins.values()):
        return None
    key = ("conv", kind, tuple((a.shape, a.strides) for a in ins.values()), tuple(out_shape), geometry,
           first.dtype.str, backends.cudnn.allow_tf32, backends.cudnn.deterministic)
    out = XP[first.__class__].empty(out_shape, first.dtype)
    if _cudnn.run(key, _build(kind, ins, out_shape, geometry, first.dtype), ins, {"out": out}, first) is None:
        return None
    return out


def _as_2d(a, one):
    """A 1-d convolution's array as a 2-d one with a unit height (cuDNN's convolutions start at 2-d)."""
    return a.reshape(a.shape[:2] + (1,) + a.shape[2:]) if one else a


def _geometry(one, lo, hi, stride, dil):
    if one:
        return (0,) + tuple(lo), (0,) + tuple(hi), (1,) + tuple(stride), (1,) + tuple(dil)
    return tuple(lo), tuple(hi), tuple(stride), tuple(dil)


def _out_size(sp, lo, hi, dil, k, stride):
    return tuple((s + a + b - d * (kk - 1) - 1) // st + 1 for s, a, b, d, kk, st in zip(sp, lo, hi, dil, k, stride))


def _as_nd(y, one):
    """Back from _as_2d's layout (None passes through)."""
    return y.reshape(y.shape[:2] + y.shape[3:]) if y is not None and one else y


def forward(x, w, stride, lo, hi, dil):
    """conv(x, w) (no bias), or None where cuDNN is not used."""
    one = x.ndim == 3
    out = (x.shape[0], w.shape[0]) + ((1,) if one else ()) + _out_size(x.shape[2:], lo, hi, dil, w.shape[2:], stride)
    y = _run("fprop", {"x": _as_2d(_cudnn.packed(x), one), "w": _as_2d(_cudnn.packed(w), one)}, out,
             _geometry(one, lo, hi, stride, dil))
    return _as_nd(y, one)


def data_grad(g, w, stride, lo, hi, dil, groups, xsp):
    """The gradient of conv(x, w) in x (spatial size xsp) for the output gradient g, or None."""
    one = g.ndim == 3
    if _out_size(xsp, lo, hi, dil, w.shape[2:], stride) != tuple(g.shape[2:]):
        return None
    out = (g.shape[0], w.shape[1] * groups) + ((1,) if one else ()) + tuple(xsp)
    dx = _run("dgrad", {"dy": _as_2d(_cudnn.packed(g), one), "w": _as_2d(_cudnn.packed(w), one)}, out,
              _geometry(one, lo, hi, stride, dil))
    return _as_nd(dx, one)


def weight_grad(x, g, stride, lo, hi, dil, groups, k):
    """The gradient of conv(x, w) in w (kernel size k) for the output gradient g, or None."""
    one = x.ndim == 3
    if _out_size(x.shape[2:], lo, hi, dil, k, stride) != tuple(g.shape[2:]):
        return None
    out = (g.shape[1], x.shape[1] // groups) + ((1,) if one else ()) + tuple(k)
    dw = _run("wgrad", {"x": _as_2d(_cudnn.packed(x), one), "dy": _as_2d(_cudnn.packed(g), one)}, out,
              _geometry(one, lo, hi, stride, dil))
    return _as_nd(dw, one)
