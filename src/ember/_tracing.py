"""Op tracing: see every op a piece of code runs, at the one dispatch point (what ONNX export and compile build on).

NOTE [ Tracing ops ]
An OpTracer, while open, swaps the forward of every Op record (those that exist and those made meanwhile) for a
wrapper that runs it and then calls `record(op, args, out)` with the forward's positional arguments (arrays, then
the op's attributes) and its result: the profiler's mechanism (NOTE [ Profiling at no cost ]), so nothing is paid
while no tracer is open. Only the outermost op is recorded: a forward that runs other ops counts as one.
"""
import numpy as np

from ._ops import _dispatch

_SCALARS = frozenset(np.sctypeDict.values()) - {np.ndarray}

__all__ = ["OpTracer", "arrays_in"]


class OpTracer:
    """A context manager calling self.record(op, args, out) for each op that runs inside it."""

    def __init__(self):
        self._saved = {}
        self._depth = 0

    def record(self, op, args, out):
        raise NotImplementedError

    def __enter__(self):
        for op in list(_dispatch.OPS):
            self._wrap(op)
        _dispatch.ON_NEW_OP.insert(0, self._wrap)
        return self

    def __exit__(self, *exc):
        _dispatch.ON_NEW_OP.remove(self._wrap)
        for op, fwd in self._saved.items():
            op.fwd = fwd
        self._saved.clear()

    def _wrap(self, op):
        if op.fwd is None or op in self._saved:
            return
        fwd = self._saved[op] = op.fwd

        def recorded(*args):
            self._depth += 1
            try:
                out = fwd(*args)
            finally:
                self._depth -= 1
            if out.__class__ in _SCALARS:  # NumPy's answer on 0-d arrays: dispatch would wrap a new array
                out = np.asarray(out)
            if self._depth == 0:
                self.record(op, args, out)
            return out
        op.fwd = recorded

    def forward_of(self, op):
        """op's own forward (not the recording wrapper), while the tracer is open."""
        return self._saved.get(op, op.fwd)


def arrays_in(v, out=None):
    """The arrays among v (an op's arguments or results: nested tuples and lists), in order."""
    out = [] if out is None else out
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        out.append(v)
    elif isinstance(v, (tuple, list)):
        for x in v:
            arrays_in(x, out)
    return out
