"""cuDNN on a GPU through NVIDIA's cuDNN frontend (`pip install nvidia-cudnn-frontend`, cuDNN 9 from the
nvidia-cudnn-cu12/cu13 wheels): the module, one handle per device, and cached operation graphs.

NOTE [ cuDNN graphs ]
A caller (convolutions in nn/_functional/_conv_cudnn.py, attention in nn/_functional/_sdpa_cudnn.py) describes an
operation by a signature -- the operation, shapes, strides, dtype, its parameters, the backends switches that
change plans, the device -- and a builder that makes the cuDNN graph. `run` builds the graph once per signature
(milliseconds), caches it, and executes it on CuPy's current stream with a workspace from CuPy's pool. A signature
cuDNN refuses is remembered as unsupported (`UNSUPPORTED` says why) and `run` answers None, so the caller computes
without cuDNN; so does every call when the frontend is missing or cannot start (`WHY_NOT` says why).
"""
import warnings

import numpy as np

from . import XP

_MODULE = [None]    # the cudnn module; False once it failed to import or start
WHY_NOT = [None]    # why it failed
_HANDLES = {}       # device id -> cudnn handle
GRAPHS = {}         # signature -> (graph, {name: graph tensor}, workspace bytes), or None (unsupported)
UNSUPPORTED = {}    # signature -> why cuDNN refused it (tests and debugging read it)


def module():
    """The cudnn frontend module, or None where it is not installed or cannot load its libraries."""
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


def for_array(a):
    """The cudnn module where cuDNN can work on array a: device memory of a CuPy that runs kernels (host arrays and
    NumPy-backed stand-ins for CuPy, which have no ElementwiseKernel, are not device memory), with the frontend
    loaded; else None."""
    if a.__class__ is np.ndarray or not hasattr(XP.get(a.__class__), "ElementwiseKernel"):
        return None
    return module()


def data_type(cudnn, dt):
    """cuDNN's data type for NumPy dtype dt: float32, float16 and bfloat16 (None for anything else)."""
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


def elements(a):
    """a's strides in elements, as cuDNN's tensors take them."""
    return [s // a.itemsize for s in a.strides]


def contiguous_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return out[::-1]


def packed(a):
    """a as cuDNN takes it: C-contiguous and 256-byte aligned (a view into a buffer may start anywhere)."""
    if a.flags.c_contiguous and a.data.ptr % 256 == 0:
        return a
    out = XP[a.__class__].empty(a.shape, a.dtype)
    out[...] = a
    return out


def finish(cudnn, g, deselect=()):
    """Validate graph g and build its plans from cuDNN's heuristics, without plans carrying the numerical notes
    in deselect; raises where cuDNN supports no plan."""
    if deselect:
        g.deselect_numeric_notes(list(deselect))
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    g.check_support()
    g.build_plans()
    return g


def run(key, build, ins, outs, like):
    """Execute the graph of signature `key` (built by build(cudnn, handle) -> (graph, {name: graph tensor}) on
    first use) with device arrays `ins` and `outs` ({name: array}, the names build's tensors have); True when it
    ran, None where cuDNN is not used for this signature (NOTE [ cuDNN graphs ]). like: an array of the device."""
    cudnn = module()
    if cudnn is None:
        return None
    xp = XP[like.__class__]
    handle, dev = _handle(cudnn, xp)
    if handle is None:
        return None
    key = key + (dev,)
    entry = GRAPHS.get(key, False)
    if entry is False:
        try:
            graph, tensors = build(cudnn, handle)
            entry = graph, tensors, max(graph.get_workspace_size(), 1)
        except Exception as e:  # noqa: BLE001 - cuDNN refuses some signatures: the caller computes those
            UNSUPPORTED[key] = f"{type(e).__name__}: {e}"
            entry = None
        GRAPHS[key] = entry
    if entry is None:
        return None
    graph, tensors, workspace_size = entry
    workspace = xp.empty(workspace_size, np.uint8)
    cudnn.set_stream(handle, xp.cuda.get_current_stream().ptr)
    pointers = {tensors[name]: a.data.ptr for name, a in ins.items()}
    for name, a in outs.items():
        pointers[tensors[name]] = a.data.ptr
    graph.execute(pointers, workspace.data.ptr, handle=handle)
    return True

