"""The one dispatch point every op goes through: forward on backend arrays, then (only when needed) the graph.

An op is an `Op` record: a forward over arrays and a backward over Tensors. A tracer or profiler observes
every op here.
"""
import weakref

import numpy as np

from .._backend import XP
from ..autograd.grad_mode import GRAD
from ..autograd.graph import FORWARD, record

__all__ = ["Op", "dispatch", "dispatch1", "dispatch2", "wrap"]

SAVE_NONE, SAVE_INPUTS, SAVE_OUTPUT, SAVE_BOTH = 0, 1, 2, 3

# Every Op ever made (weakly: a few are made per call, e.g. by gradcheck), and what to do with an Op made while an
# observer (the profiler) is attached. Observers swap op.fwd for the time they run: see NOTE [ Profiling at no cost ].
OPS = weakref.WeakSet()
ON_NEW_OP = []



class Op:
    """An op record.

    fwd(*arrays, *attrs) -> array (or tuple of arrays when nout > 1; with `extra`, (result, extra) where extra
    is anything the backward needs, kept on the node as ctx.extra).
    bwd(ctx, g) -> one gradient per tensor input (a Tensor or None); None when the op is not differentiable.
    ctx is the node: ctx.inputs, ctx.output(s), ctx.attrs, ctx.extra, ctx.shapes, ctx.needs_input_grad.
    The engine sums gradients over broadcast dimensions and casts them to each input's dtype, so a backward
    may return a gradient in the broadcast shape.
    """
    __slots__ = ("name", "fwd", "bwd", "save", "nout", "extra", "node_name", "node_cls", "__weakref__")

    def __init__(self, name, fwd, bwd=None, save=SAVE_NONE, nout=1, extra=False, node_name=None):
        self.name = name
        self.fwd = fwd
        self.bwd = bwd
        self.save = save
        self.nout = nout
        self.extra = extra
        self.node_name = node_name or "".join(p.capitalize() for p in name.split("_")) + "Backward0"
        self.node_cls = [None, None]  # the graph node classes of single- and multi-output calls, made on first use
        OPS.add(self)
        if ON_NEW_OP:
            ON_NEW_OP[0](self)

    def __repr__(self):
        return f"Op({self.name})"


def wrap(arr):
    """A new Tensor around a backend array (NumPy scalars become 0-d arrays)."""
    if arr.__class__ not in XP:
        arr = np.asarray(arr)
    return _make(arr)


# NOTE [ Zero-dim kernels ]
# NumPy answers a ufunc on 0-d arrays with a scalar, so a kernel that writes into its own temporaries
# (np.reciprocal(t, out=t)) or looks up the array module of one (XP[type(t)]) fails on 0-d inputs. Rather than
# guard every kernel, the dispatch functions run a kernel that raised such an error on 0-d inputs once more on
# 1-element views and give the results their 0-d shape back: nothing is paid when no error is raised.
_ZERO_DIM_ERRORS = (TypeError, AttributeError, KeyError)


def _on_zero_dim(fwd, arrays, attrs):
    return _as_zero_dim(fwd(*[a.reshape(1) for a in arrays], *attrs))


def _as_zero_dim(out):
    """A kernel's results (arrays, tuples of them, extras) with 1-element arrays given back their 0-d shape."""
    if out.__class__ is tuple:
        return tuple(_as_zero_dim(o) for o in out)
    return out.reshape(()) if out.__class__ in XP and out.size == 1 else out


def dispatch(op, inputs, *attrs):
    """Run `op` on a tuple of Tensors with extra non-tensor arguments."""
    if FORWARD[0] is not None:
        return FORWARD[0].run(_plain, op, inputs, attrs)
    arrays = [t._data for t in inputs]
    try:
        out = op.fwd(*arrays, *attrs)
    except _ZERO_DIM_ERRORS:  # TypeError is CuPy's answer to mixed host and device arrays: torch's message instead
        check_same_device(inputs)
        if not arrays or any(a.ndim for a in arrays):
            raise
        out = _on_zero_dim(op.fwd, arrays, attrs)  # NOTE [ Zero-dim kernels ]
    extra = None
    if op.extra:
        out, extra = out
    if GRAD[0] and op.bwd is not None:
        for t in inputs:
            if t._requires_grad:
                return record(op, inputs, attrs, _as_array(out, op.nout), extra, op.nout)
    if op.nout == 1:
        return wrap(out)
    return tuple(wrap(o) for o in out)


def dispatch1(op, x, *attrs):
    """dispatch() for one tensor input: the common case, kept short."""
    if FORWARD[0] is not None:
        return FORWARD[0].run(_plain, op, (x,), attrs)
    try:
        out = op.fwd(x._data, *attrs)
    except _ZERO_DIM_ERRORS:
        if x._data.ndim:
            raise
        out = _on_zero_dim(op.fwd, (x._data,), attrs)  # NOTE [ Zero-dim kernels ]
    if op.extra:
        out, extra = out
    else:
        extra = None
    if op.nout == 1:
        if out.__class__ not in XP:
            out = np.asarray(out)
        if x._requires_grad and GRAD[0] and op.bwd is not None:
            return record(op, (x,), attrs, out, extra, 1)
        return _make(out)
    if x._requires_grad and GRAD[0] and op.bwd is not None:
        return record(op, (x,), attrs, _as_array(out, op.nout), extra, op.nout)
    return tuple(wrap(o) for o in out)


def dispatch2(op, a, b, *attrs):
    """dispatch() for two tensor inputs."""
    if FORWARD[0] is not None:
        return FORWARD[0].run(_plain, op, (a, b), attrs)
    try:
        out = op.fwd(a._data, b._data, *attrs)
    except _ZERO_DIM_ERRORS:  # TypeError: CuPy's answer to mixed host and device arrays (free when nothing is raised)
        check_same_device((a, b))
        if a._data.ndim or b._data.ndim:
            raise
        out = _on_zero_dim(op.fwd, (a._data, b._data), attrs)  # NOTE [ Zero-dim kernels ]
    if op.extra:
        out, extra = out
    else:
        extra = None
    if op.nout == 1:
        if out.__class__ not in XP:
            out = np.asarray(out)
        if (a._requires_grad or b._requires_grad) and GRAD[0] and op.bwd is not None:
            return record(op, (a, b), attrs, out, extra, 1)
        return _make(out)
    if (a._requires_grad or b._requires_grad) and GRAD[0] and op.bwd is not None:
        return record(op, (a, b), attrs, _as_array(out, op.nout), extra, op.nout)
    return tuple(wrap(o) for o in out)


def _plain(op, inputs, attrs):
    """The dispatch of the op itself, for the tangent propagation (which turns FORWARD off around it)."""
    return dispatch(op, tuple(inputs), *attrs)


def check_same_device(tensors):
    """Raise torch's error when the tensors live on different devices."""
    devs = []
    for t in tensors:
        d = t.device
        if d not in devs:
            devs.append(d)
    if len(devs) > 1:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{devs[-1] if devs[0].type == 'cpu' else devs[0]} and "
                           f"{devs[0] if devs[0].type == 'cpu' else devs[-1]}!")


def _as_array(out, nout):
    if nout == 1:
        return out if out.__class__ in XP else np.asarray(out)
    return tuple(o if o.__class__ in XP else np.asarray(o) for o in out)


def _make(arr):  # replaced by Tensor._make once the Tensor class exists
    raise RuntimeError("ember._tensor was not imported")


def _bind(make):
    global _make
    _make = make
