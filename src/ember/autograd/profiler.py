"""Same as `torch.autograd.profiler`: `record_function`, the `profile` context manager, and the recorder that
`ember.profiler` builds on. Times are taken on the host (CPU side), also for ops on CUDA tensors.
"""
import functools
import sys
import threading
import time

from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, build_events

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]

# NOTE [ Profiling at no cost ]
# ember's per-op overhead is what it competes on, so profiling adds nothing to an op's path, not even a test,
# while no profiler records. Instead, while one records, the functions on that path are swapped for timing ones:
# - every Op record is known (_dispatch.OPS; ops made meanwhile announce themselves through _dispatch.ON_NEW_OP),
#   and each op's `fwd` is replaced by a wrapper that times it under torch's name, aten::<op name>;
# - the engine runs built-in single-output nodes by calling op.bwd directly, unless their class is in
#   engine._SINGLE: that set is emptied, so every node goes through node.apply, and each Node class's own
#   `apply` is replaced by one that times it as torch shows it ("autograd::engine::evaluate_function: X" around
#   "X", around the ops of X's backward formula);
# - Function.apply is replaced by one that times a custom Function's forward under the Function's name.
# Stopping puts every original back: an op called after the profiler runs exactly the code it ran before.
# What an op's time covers: its kernel (the forward on arrays). The argument handling, type promotion and graph
# recording around the kernel count towards the enclosing range.

_clock = time.perf_counter_ns
_ident = threading.get_ident
_ACTIVE = [None]  # the _Recorder that records now, if any
_EVALUATE = "autograd::engine::evaluate_function: "


def _user_frames():
    """The caller's stack as 'file(line): function' entries, innermost first, without ember's own frames."""
    from .graph import _PKG_DIR
    f = sys._getframe(2)
    frames = []
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(_PKG_DIR):
            frames.append(f"{code.co_filename}({f.f_lineno}): {code.co_name}")
        f = f.f_back
    return frames


def _array_shapes(args):
    from .._backend import XP
    return [list(a.shape) if a.__class__ in XP else [] for a in args]


def _grad_shapes(grads):
    return [[] if g is None else list(g._data.shape) for g in grads]


def _timed_forward(fwd, name, rec):
    sink = rec.raw.append
    if not (rec.record_shapes or rec.with_stack):
        def timed(*args):
            t0 = _clock()
            out = fwd(*args)
            sink((name, t0, _clock(), _ident(), None, None, False))
            return out
        return timed
    shapes, stack = rec.record_shapes, rec.with_stack

    def timed_with_details(*args):
        t0 = _clock()
        out = fwd(*args)
        t1 = _clock()
        sink((name, t0, t1, _ident(), _array_shapes(args) if shapes else None, _user_frames() if stack else None,
              False))
        return out
    return timed_with_details


def _timed_apply(apply, rec):
    sink = rec.raw.append
    shapes = rec.record_shapes

    def timed(node, grads):
        name = node.name()
        t0 = _clock()
        t1 = _clock()  # the node's own range starts strictly inside the engine's
        out = apply(node, grads)
        t2 = _clock()
        tid = _ident()
        sink((name, t1, t2, tid, _grad_shapes(grads) if shapes else None, None, False))
        sink((_EVALUATE + name, t0, _clock(), tid, None, None, False))
        return out
    return timed


def _timed_function_apply(apply):
    def timed(cls, *args, **kwargs):
        rec = _ACTIVE[0]  # not the recorder of the time it was made: `F.apply` may have been kept (f = F.apply)
        if rec is None:
            return apply(cls, *args, **kwargs)
        t0 = _clock()
        out = apply(cls, *args, **kwargs)
        rec.raw.append((cls.__name__, t0, _clock(), _ident(), None, _user_frames() if rec.with_stack else None,
                        False))
        return out
    return classmethod(timed)


def _classes(root):
    seen = {root: None}
    todo = [root]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen[sub] = None
                todo.append(sub)
    return list(seen)


class _Recorder:
    """Swaps the timing functions in (start) and the originals back (stop); records accumulate in `raw` as
    (name, start ns, end ns, thread ident, input shapes, stack, is user annotation)."""

    def __init__(self, record_shapes=False, with_stack=False):
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.raw = []
        self.threads = {}
        self._fwd = {}  # op -> its own forward
        self._plain = {}  # timing wrapper -> the forward it times
        self._apply = {}
        self._single = None
        self._function_apply = None

    def _wrap_op(self, op):
        if op.fwd is None or op in self._fwd:
            return
        # an op made now from another op's forward (Op(name, OTHER.fwd, ...) in a module imported while recording)
        # must keep the plain function, or the timing wrapper would outlive the recording
        fwd = self._plain.get(op.fwd, op.fwd)
        self._fwd[op] = fwd
        op.fwd = timed = _timed_forward(fwd, "aten::" + op.name, self)
        self._plain[timed] = fwd

    def start(self):
        if _ACTIVE[0] is not None:
            raise RuntimeError("ember.profiler: another profiler is already recording; stop it before starting "
                               "this one (profilers do not nest)")
        from .._ops import _dispatch
        from . import engine, function, graph
        try:
            for op in list(_dispatch.OPS):
                self._wrap_op(op)
            _dispatch.ON_NEW_OP.append(self._wrap_op)
            self._single = engine._SINGLE
            engine._SINGLE = frozenset()
            for cls in _classes(graph.Node):
                own = cls.__dict__.get("apply")
                if own is not None:
                    self._apply[cls] = own
                    cls.apply = _timed_apply(own, self)
            self._function_apply = function.Function.__dict__["apply"]
            function.Function.apply = _timed_function_apply(self._function_apply.__func__)
        except BaseException:
            self._restore()
            raise
        _ACTIVE[0] = self

    def stop(self):
        if _ACTIVE[0] is self:
            _ACTIVE[0] = None
        self._restore()
        self.threads = {t.ident: t.native_id for t in threading.enumerate()}

    def _restore(self):
        from .._ops import _dispatch
        from . import engine, function
        if self._wrap_op in _dispatch.ON_NEW_OP:
            _dispatch.ON_NEW_OP.remove(self._wrap_op)
        for op, fwd in self._fwd.items():
            op.fwd = fwd
        self._fwd = {}
        self._plain = {}
        if self._single is not None:
            engine._SINGLE = self._single
            self._single = None
        for cls, apply in self._apply.items():
            cls.apply = apply
        self._apply = {}
        if self._function_apply is not None:
            function.Function.apply = self._function_apply
            self._function_apply = None

    def events(self):
        return build_events(self.raw, self.threads)


class record_function:
    """Same as `torch.autograd.profiler.record_function` (and `torch.profiler.record_function`): a named range in
    the profile around a block, as a context manager or a decorator. With no profiler recording it records nothing.
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._rec = None
        self._t0 = 0

    def __enter__(self):
        rec = _ACTIVE[0]
        if rec is not None:
            self._rec = rec
            self._t0 = _clock()
        return self

    def __exit__(self, *exc):
        rec = self._rec
        if rec is not None:
            t1 = _clock()
            self._rec = None
            shapes = [[]] if self.args is not None and rec.record_shapes else None
            rec.raw.append((self.name, self._t0, t1, _ident(), shapes, _user_frames() if rec.with_stack else None,
                            True))
        return False

    def __call__(self, fn):
        name, args = self.name, self.args

        @functools.wraps(fn)
        def ranged(*a, **kw):
            with record_function(name, args):
                return fn(*a, **kw)
        return ranged


class profile:
    """Same as `torch.autograd.profiler.profile`: records ops, backward nodes and record_function ranges while
    entered; then `function_events`, `key_averages()`, `table()` and `export_chrome_trace()` report them. Host-side
    times only (no CUDA kernel times) and no memory or FLOP counts: see the README."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None,
                 post_processing_timeout_s=None, activity_filters=None):
        self.enabled = enabled
        self.use_device = "cuda" if use_cuda else use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.acc_events = acc_events
        self.entered = False
        self.function_events = None
        self._recorder = None
        self._metadata = {}

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._stop_trace()
        return False

    def _prepare_trace(self):
        """Swap the timing functions in (what they record until _start_trace is a warm-up, dropped)."""
        rec = _Recorder(self.record_shapes, self.with_stack)
        rec.start()
        self._recorder = rec
        self.entered = True

    def _start_trace(self):
        del self._recorder.raw[:]

    def _stop_trace(self):
        rec = self._recorder
        if rec is None:
            return
        self._recorder = None
        self.entered = False
        rec.stop()
        events = rec.events()
        if self.acc_events and self.function_events is not None:
            events = list(self.function_events) + events
        self.function_events = EventList(events, use_device=self.use_device, profile_memory=self.profile_memory,
                                         with_flops=self.with_flops)
        self.function_events._metadata = self._metadata

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def __repr__(self):
        return "<unfinished profile>" if self.function_events is None else repr(self.function_events)

    def __str__(self):
        return "<unfinished profile>" if self.function_events is None else str(self.function_events)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        self._check_finish()
        return self.function_events.table(sort_by, row_limit, max_src_column_width, max_name_column_width,
                                          max_shapes_column_width, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        self._check_finish()
        return self.function_events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        return self.function_events.export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        self._check_finish()
        return self.function_events.self_cpu_time_total
