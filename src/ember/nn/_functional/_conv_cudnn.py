"""Convolutions on a GPU through cuDNN, when NVIDIA's cuDNN frontend (`pip install nvidia-cudnn-frontend`, with
cuDNN 9 from the nvidia-cudnn-cu12/cu13 wheels) is installed.

NOTE [ cuDNN convolutions ]
conv.py's three array kernels (forward, data gradient, weight gradient) each map to one cuDNN operation graph:
conv_fprop, conv_dgrad and conv_wgrad, with the padding as pre/post padding (ember's lo/hi). A graph is built once
per signature -- operation, shapes, strides, dtype, geometry, the switches below, device -- and cached; building
takes milliseconds, executing one is a single call on CuPy's current stream, with a workspace from CuPy's pool.
Supported: float16, bfloat16 and float32 data (float32 accumulation), 1-d to 3-d (1-d runs as 2-d with a unit
height), groups, stride, dilation, non-negative padding. Everything else -- float64 and complex data, negative
padding (a transposed convolution's output_padding beyond its padding), a signature cuDNN reports unsupported, no
cuDNN frontend, a frontend that cannot start -- returns None and conv.py computes as it does without cuDNN.
Off unless EMBER_CUDNN_CONV=1 is set: with these graphs on, a GPU test run once hit an illegal memory access whose
cause is not yet known (all of test_conv_cudnn passed; a later test in the same process failed). Inputs are packed
and 256-byte aligned before they reach cuDNN (views with an offset were the first suspect).
The switches are torch's: `ember.backends.cudnn.enabled` (False: never cuDNN), `allow_tf32` (False: no tensor-core
plans for float32 data, i.e. no TF32 rounding), `deterministic` (no plans cuDNN marks nondeterministic).
`benchmark` is not timed here: plans come from cuDNN's heuristics either way.
"""
import os
import warnings

import numpy as np

from ... import backends
from ..._backend import XP

ENABLED = os.environ.get("EMBER_CUDNN_CONV") == "1"
_MODULE = [None]    # the cudnn module; False once it failed to import or start
WHY_NOT = [None]    # why it failed
_HANDLES = {}       # device id -> cudnn handle
_GRAPHS = {}        # signature -> (graph, {name: tensor}, workspace bytes), or None (unsupported)
UNSUPPORTED = {}    # signature -> why cuDNN refused it (tests and debugging read it)


def _cudnn():
    m = _MODULE[0]
    if m is None:
        try:
            with warnings.catch_warnings():  # the frontend's import-time notices are not the user's business
                warnings.simplefilter("ignore")
                import cudnn
            m = cudnn
        except Exception as e:  # noqa: BLE001 - not installed, or its libraries fail to load: no cuDNN
            WHY_NOT[0] = f"{type(e).__name__}: {e}"
            m = False
        _MODULE[0] = m
    return m or None


def _data_type(cudnn, dt):
    if dt == np.float32:
        return cudnn.data_type.FLOAT
    if dt == np.float16:
        return cudnn.data_type.HALF
    if dt.kind == "V" and dt.name == "bfloat16":
        return cudnn.data_type.BFLOAT16
    return None


def _handle(cudnn, xp):
    dev = xp.cuda.runtime.getDevice()
    h = _HANDLES.get(dev)
    if h is None:
        try:
            h = _HANDLES[dev] = cudnn.create_handle()
        except Exception as e:  # noqa: BLE001 - no driver or no GPU for cuDNN: never try again
            WHY_NOT[0] = f"{type(e).__name__}: {e}"
            _MODULE[0] = False
            return None, dev
    return h, dev


def _elements(a):
    return [s // a.itemsize for s in a.strides]


def _contiguous_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return out[::-1]


def _build(cudnn, handle, kind, ins, out_shape, geometry, dt):
    lo, hi, stride, dil = geometry
    g = cudnn.pygraph(io_data_type=dt, intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    t = {name: g.tensor(name=name, dim=list(a.shape), stride=_elements(a), data_type=dt) for name, a in ins.items()}
    geo = {"pre_padding": list(lo), "post_padding": list(hi), "stride": list(stride), "dilation": list(dil)}
    if kind == "fprop":
        y = g.conv_fprop(image=t["x"], weight=t["w"], **geo)
    elif kind == "dgrad":
        y = g.conv_dgrad(loss=t["dy"], filter=t["w"], **geo)
    else:
        y = g.conv_wgrad(image=t["x"], loss=t["dy"], **geo)
    y.set_output(True).set_dim(list(out_shape)).set_stride(_contiguous_strides(out_shape)).set_data_type(dt)
    notes = []
    if not backends.cudnn.allow_tf32 and dt == cudnn.data_type.FLOAT:
        notes.append(cudnn.numerical_note.TENSOR_CORE)
    if backends.cudnn.deterministic:
        notes.append(cudnn.numerical_note.NONDETERMINISTIC)
    if notes:
        g.deselect_numeric_notes(notes)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    t["out"] = y
    return g, t, max(g.get_workspace_size(), 1)


def usable(a):
    """Whether cuDNN may take the convolutions of arrays like a: device arrays of a dtype it convolves, with the
    frontend installed and cuDNN enabled."""
    if not ENABLED or a.__class__ is np.ndarray or not backends.cudnn.enabled:
        return False
    cudnn = _cudnn()
    return cudnn is not None and _data_type(cudnn, a.dtype) is not None


def _run(kind, ins, out_shape, geometry):
    """Run one cuDNN convolution graph on the device arrays `ins` (usable() said yes); the new output array, or
    None where cuDNN is not used for it (NOTE [ cuDNN convolutions ])."""
    first = next(iter(ins.values()))
    cudnn = _cudnn()
    if min(geometry[0]) < 0 or min(geometry[1]) < 0 or 0 in out_shape or any(0 in a.shape for a in ins.values()):
        return None
    dt = _data_type(cudnn, first.dtype)
    xp = XP[first.__class__]
    handle, dev = _handle(cudnn, xp)
    if handle is None:
        return None
    key = (kind, tuple((a.shape, a.strides) for a in ins.values()), tuple(out_shape), geometry, first.dtype.str,
           backends.cudnn.allow_tf32, backends.cudnn.deterministic, dev)
    entry = _GRAPHS.get(key, False)
    if entry is False:
        try:
            entry = _build(cudnn, handle, kind, ins, out_shape, geometry, dt)
        except Exception as e:  # noqa: BLE001 - cuDNN refuses some signatures: conv.py computes those
            UNSUPPORTED[key] = f"{type(e).__name__}: {e}"
            entry = None
        _GRAPHS[key] = entry
    if entry is None:
        return None
    graph, tensors, workspace_size = entry
    out = xp.empty(out_shape, first.dtype)
    workspace = xp.empty(workspace_size, np.uint8)
    cudnn.set_stream(handle, xp.cuda.get_current_stream().ptr)
    pointers = {tensors[name]: a.data.ptr for name, a in ins.items()}
    pointers[tensors["out"]] = out.data.ptr
    graph.execute(pointers, workspace.data.ptr, handle=handle)
    return out


def _as_2d(a, one):
    """A 1-d convolution's array as a 2-d one with a unit height (cuDNN's convolutions start at 2-d)."""
    return a.reshape(a.shape[:2] + (1,) + a.shape[2:]) if one else a


def _geometry(one, lo, hi, stride, dil):
    if one:
        return (0,) + tuple(lo), (0,) + tuple(hi), (1,) + tuple(stride), (1,) + tuple(dil)
    return tuple(lo), tuple(hi), tuple(stride), tuple(dil)


def _packed(a):
    """a as cuDNN takes it: C-contiguous and 256-byte aligned (a view into a buffer may start anywhere)."""
    if a.flags.c_contiguous and a.data.ptr % 256 == 0:
        return a
    out = XP[a.__class__].empty(a.shape, a.dtype)
    out[...] = a
    return out


def _out_size(sp, lo, hi, dil, k, stride):
    return tuple((s + a + b - d * (kk - 1) - 1) // st + 1 for s, a, b, d, kk, st in zip(sp, lo, hi, dil, k, stride))


def _as_nd(y, one):
    """Back from _as_2d's layout (None passes through)."""
    return y.reshape(y.shape[:2] + y.shape[3:]) if y is not None and one else y


def forward(x, w, stride, lo, hi, dil):
    """conv(x, w) (no bias), or None where cuDNN is not used."""
    one = x.ndim == 3
    out = (x.shape[0], w.shape[0]) + ((1,) if one else ()) + _out_size(x.shape[2:], lo, hi, dil, w.shape[2:], stride)
    y = _run("fprop", {"x": _as_2d(_packed(x), one), "w": _as_2d(_packed(w), one)}, out,
             _geometry(one, lo, hi, stride, dil))
    return _as_nd(y, one)


def data_grad(g, w, stride, lo, hi, dil, groups, xsp):
    """The gradient of conv(x, w) in x (spatial size xsp) for the output gradient g, or None."""
    one = g.ndim == 3
    if _out_size(xsp, lo, hi, dil, w.shape[2:], stride) != tuple(g.shape[2:]):
        return None
    out = (g.shape[0], w.shape[1] * groups) + ((1,) if one else ()) + tuple(xsp)
    dx = _run("dgrad", {"dy": _as_2d(_packed(g), one), "w": _as_2d(_packed(w), one)}, out,
              _geometry(one, lo, hi, stride, dil))
    return _as_nd(dx, one)


def weight_grad(x, g, stride, lo, hi, dil, groups, k):
    """The gradient of conv(x, w) in w (kernel size k) for the output gradient g, or None."""
    one = x.ndim == 3
    if _out_size(x.shape[2:], lo, hi, dil, k, stride) != tuple(g.shape[2:]):
        return None
    out = (g.shape[1], x.shape[1] // groups) + ((1,) if one else ()) + tuple(k)
    dw = _run("wgrad", {"x": _as_2d(_packed(x), one), "dy": _as_2d(_packed(g), one)}, out,
              _geometry(one, lo, hi, stride, dil))
    return _as_nd(dw, one)
