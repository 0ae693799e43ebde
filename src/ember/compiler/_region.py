"""ember.compile's compiled regions: a function's ops captured once into a flat program, then replayed.

NOTE [ Compiled regions ]
The first call of a compiled function for a given set of guards (the shapes, dtypes, devices and requires_grad of
its tensor arguments, the values of its other arguments, grad mode, autocast, the training flags of the module and
the identity of its parameters) runs it eagerly under an OpTracer (NOTE [ Tracing ops ]), which records every op
as a step of a program over numbered slots: the arguments' and parameters' arrays, then each op's results. An array
no traced op produced and that is no argument or parameter is a constant of the program (a mask the code built).
When the call builds a graph (some input or parameter requires grad), its backward is captured too, by running
autograd.grad with create_graph=True under the tracer: a differentiable backward is made of ops only, so it records
completely; its steps read the forward's slots and the output gradients'. Later calls whose guards hold replay the
steps: each op's forward on arrays, without Tensors, dispatch or graph nodes; with a graph, the whole region is ONE
node whose backward replays the backward program (torch's AOT-autograd idea). Both programs have their runs of
elementwise steps fused into generated kernels first (NOTE [ Elementwise fusion ] in _fusion.py).
Whether a program is faithful is checked before it is used: it is replayed on the first call's inputs and on
inputs changed by noise, against eager runs (outputs, gradients, and the module's buffers afterwards, from the same
random state). Code the tracer cannot see (in-place writes, values computed outside ops, random numbers drawn outside
ops, data-dependent control flow) makes them differ: the function then runs eagerly for those guards, with a
warning (an error with fullgraph=True). Double backward through a compiled region is refused.

NOTE [ Graph breaks at submodules ]
torch splits a function at a graph break by rewriting its bytecode; ember captures whole calls, so it breaks a
MODULE's forward at its submodules instead: when a module's capture fails (a host read, an op without a
capturable backward, an unfaithful replay), the module's own forward runs eagerly for those guards and each
submodule it calls runs as a compiled region of its own (containers such as ModuleList are looked through), and so
on down, so only the code around the break runs eagerly. While such a call runs, each submodule's `forward` is an
instance attribute pointing at its CompiledFunction (the hooks of Module.__call__ still run around it). A plain
function has no submodules: a break makes it run eagerly for those guards. `ember._dynamo.explain` reports the
regions and the breaks, each with the user's line where it is known.
"""
import traceback
import warnings
import weakref

import numpy as np

from .. import _tensor
from .._autocast import AUTOCAST
from .._backend import XP
from .._dynamo import config
from .._ops import _dispatch
from .._ops.random import get_rng_state, set_rng_state
from .._tensor import Tensor
from .._tracing import _SCALARS, OpTracer, arrays_in
from ..autograd.grad_mode import GRAD
from ._fusion import fuse

CAPTURING = [False]    # compiler.is_compiling()
EAGER = object()       # a cache entry: these guards run eagerly
SPLIT = object()       # a cache entry: these guards run the module eagerly, its submodules compiled
LIVE = weakref.WeakSet()  # every CompiledFunction, for reset()


class CompileError(RuntimeError):
    """A region that cannot be compiled (raised with fullgraph=True; otherwise it runs eagerly). user_stack: the
    user's frames where the capture stopped (traceback.FrameSummary list), when known."""

    def __init__(self, msg, user_stack=None):
        super().__init__(msg)
        self.user_stack = user_stack or []


class RecompileError(RuntimeError):
    """A second program for a compiled function while ember._dynamo.config.error_on_recompile is set."""


def user_stack():
    """The frames of the current stack outside ember itself, outermost first."""
    return [f for f in traceback.extract_stack()[:-1] if not f.filename.startswith(_PACKAGE)]


def graph_break(reason):
    """Stop a capture here (no-op outside one): the region breaks at the caller's line."""
    if CAPTURING[0]:
        stack = user_stack()
        where = f" (at {stack[-1].filename}, line {stack[-1].lineno}: {stack[-1].line})" if stack else ""
        raise CompileError(reason + where, stack)


_PACKAGE = __file__[:-len("compiler/_region.py")]


class _Capture(OpTracer):
    """Records ops as program steps over the slots of `slots` (id(array) -> slot number)."""

    def __init__(self, slots, keep, meta):
        super().__init__()
        self.slots = slots
        self.keep = keep  # every array met: alive, so that ids stay unique while capturing
        self.meta = meta  # slot -> (shape, dtype, array class) at the capture, for fusion
        self.steps = []

    def slot(self, arr):
        i = self.slots.get(id(arr))
        if i is None:
            i = self.slots[id(arr)] = len(self.slots)
            self.keep.append(arr)
            self.meta[i] = (arr.shape, arr.dtype, arr.__class__)
        return i

    def _reshaped(self, a):
        """The slot of a, when a is a reshape of a slotted array made outside any op (a step is added to make it
        again), else None."""
        base = getattr(a, "base", None)
        i = self.slots.get(id(base)) if base is not None else None
        if i is None or a.size != base.size or not (a.flags.c_contiguous and base.flags.c_contiguous):
            return None
        j = self.slot(a)
        self.steps.append((_RESHAPE, [None, a.shape], ((0, None, i),), (j,), True))
        return j

    def record(self, op, args, out):
        template = list(args)
        reads = []
        for pos, a in enumerate(args):
            if _is_array(a):
                i = self.slots.get(id(a))
                if i is None:
                    i = self._reshaped(a)
                if i is not None:
                    reads.append((pos, None, i))
                    template[pos] = None
                else:
                    self.keep.append(a)  # a constant of the program
            elif a.__class__ is tuple:  # arrays in a tuple attribute (attention's (keep mask, scale))
                for k, b in enumerate(a):
                    i = self.slots.get(id(b)) if _is_array(b) else None
                    if i is not None:
                        reads.append((pos, k, i))
        results = arrays_in(out)
        writes = tuple(self.slot(a) for a in results)
        single = len(results) == 1 and out is results[0]
        self.steps.append((op, template, tuple(reads), writes, single))


def _is_array(a):
    return hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.generic)


_RESHAPE = _dispatch.Op("reshape", lambda x, shape: x.reshape(shape))


def _run(steps, values):
    for op, template, reads, writes, single in steps:
        args = template.copy()
        for pos, k, i in reads:
            if k is None:
                args[pos] = values[i]
            else:
                t = list(args[pos])
                t[k] = values[i]
                args[pos] = tuple(t)
        out = op.fwd(*args)
        if out.__class__ in _SCALARS:  # NumPy's answer on 0-d arrays: the capture saw a 0-d array (_tracing.py)
            out = np.asarray(out)
        if single:
            values[writes[0]] = out
        else:
            for i, a in zip(writes, arrays_in(out)):
                values[i] = a


class _Program:
    """A captured region: forward steps, and for regions with a graph the backward steps and their slots."""

    def __init__(self, n_slots, in_slots, param_slots, fwd_steps, out_slots, out_form):
        self.n = n_slots
        self.in_slots = in_slots        # one per tensor argument
        self.param_slots = param_slots  # one per parameter / buffer (read at each call)
        self.fwd = fwd_steps
        self.out_slots = out_slots
        self.out_form = out_form        # the result's form (_outputs)
        self.bwd = None
        self.gout_slots = None          # one per output (None: no gradient flows from it)
        self.grad_slots = None          # one per differentiable input (tensor args + params), None if unused
        self.op = None

    def forward_values(self, arrays, params):
        values = [None] * self.n
        for i, a in zip(self.in_slots, arrays):
            values[i] = a
        for i, p in zip(self.param_slots, params):
            values[i] = p._data
        _run(self.fwd, values)
        return values

    def call(self, tensors, params, leaves):
        """Replay on Tensors: plain arrays without a graph, else through the region's one node."""
        if self.bwd is None or not GRAD[0] or not any(t._requires_grad for t in leaves):
            values = self.forward_values([t._data for t in tensors], params)
            return self.pack([_dispatch.wrap(values[i]) for i in self.out_slots])
        outs = _dispatch.dispatch(self.op, tuple(leaves))
        return self.pack(list(outs) if isinstance(outs, tuple) else [outs])

    def pack(self, outs):
        return outs[0] if self.out_form is None else _packed(list(outs), self.out_form)

    def make_op(self, n_tensors, params):
        """The Op of the region's node: its inputs are the tensor arguments, then the parameters."""
        prog = self
        nout = len(self.out_slots)

        def fwd(*arrays):
            values = prog.forward_values(arrays[:n_tensors], params)
            outs = tuple(values[i] for i in prog.out_slots)
            return (outs if nout > 1 else outs[0]), values

        def bwd(ctx, grads):
            if GRAD[0]:
                raise RuntimeError("ember.compile: a compiled region's backward is not differentiable again (double "
                                   "backward): run the function without ember.compile")
            values = list(ctx.extra)
            grads = grads if isinstance(grads, (list, tuple)) else (grads,)
            for i, g, o in zip(prog.gout_slots, grads, prog.out_slots):
                if i is not None:
                    values[i] = g._data if g is not None else np.zeros_like(values[o])
            _run(prog.bwd, values)
            return tuple(None if i is None else _dispatch.wrap(values[i]) for i in prog.grad_slots)

        self.op = _dispatch.Op("compiled_region", fwd, bwd, nout=nout, extra=True, node_name="CompiledFunctionBackward")


def _flat_tensors(args, kwargs):
    out = []

    def walk(v):
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
    walk(args)
    walk(kwargs)
    return out


def _guard_part(v):
    if isinstance(v, Tensor):
        d = v._data
        return ("T", d.shape, d.dtype, d.__class__, v._requires_grad)
    if isinstance(v, (list, tuple)):
        return (type(v), tuple(_guard_part(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple((k, _guard_part(x)) for k, x in v.items()))
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return ("id", id(v))


class CompiledFunction:
    """What ember.compile returns for a function (NOTE [ Compiled regions ]); a module's forward uses one too."""

    def __init__(self, fn, module=None, fullgraph=False, name=None, quiet=False):
        self.fn = fn
        self.module = module
        self.fullgraph = fullgraph
        self.quiet = quiet  # a split module's submodule: its breaks are for explain(), its parent warned
        self.cache = {}
        self.name = name or getattr(fn, "__qualname__", type(fn).__name__)
        self.compile_seconds = []  # first-call (trace + verify) times, for reporting
        self.reasons = []          # why guard sets run eagerly
        self.breaks = []           # (reason, user stack) of each failed capture, for explain()
        self.slower = []           # (guards, program) of faithful programs eager outran: they run eagerly
        self._subs = None          # [(submodule, its CompiledFunction)] once this module has been split
        LIVE.add(self)

    def _state(self):
        m = self.module
        if m is None:
            return [], [], ()
        params = [p for p in m.parameters()]
        buffers = [b for b in m.buffers() if b is not None]
        return params, buffers, tuple(s.training for s in m.modules())

    def __call__(self, *args, **kwargs):
        params, buffers, training = self._state()
        key = (GRAD[0], AUTOCAST[0], training, tuple(map(id, params)), tuple(map(id, buffers)),
               _guard_part(args), _guard_part(kwargs))
        entry = self.cache.get(key)
        if entry is EAGER:
            return self.fn(*args, **kwargs)
        if entry is SPLIT:
            return self._split_call(args, kwargs)
        if entry is None:
            if self.cache and config.error_on_recompile:
                raise RecompileError(f"Recompiling function {self.name}: its arguments or state no longer match the "
                                     "guards of its programs (ember._dynamo.config.error_on_recompile is set)")
            limit = config.recompile_limit
            if len(self.cache) >= limit:
                if not getattr(self, "_warned_limit", False):
                    self._warned_limit = True
                    warnings.warn(f"ember.compile: {self.name} hit the recompile limit ({limit}); later guard sets "
                                  "run eagerly", UserWarning, stacklevel=2)
                return self.fn(*args, **kwargs)
            return self._compile(key, args, kwargs, params, buffers)
        tensors = _flat_tensors(args, kwargs)
        return entry.call(tensors, params + buffers, tensors + params)

    # ----- the first call -----
    def _compile(self, key, args, kwargs, params, buffers):
        import time
        t0 = time.perf_counter()
        tensors = _flat_tensors(args, kwargs)
        before = _snapshot(buffers)
        rng = get_rng_state()
        try:
            result, prog, grads_eager, gouts = self._capture(args, kwargs, tensors, params, buffers)
        except CompileError as e:
            return self._give_up(key, e, args, kwargs, before, buffers, rng)
        after = _snapshot(buffers)
        rng_after = get_rng_state()
        try:
            self._verify(prog, tensors, params, buffers, result, grads_eager, gouts, before, after, rng,
                         args, kwargs)
        except CompileError as e:
            _restore(buffers, after)
            set_rng_state(rng_after)
            self.reasons.append(str(e))
            if isinstance(e, _NotFaster):
                self.cache[key] = EAGER
                if not isinstance(e, _Unchecked):
                    self.slower.append((key, prog))  # faithful: a region for explain(), though eager runs
            elif self._broken(key, e):  # this first call runs split too, from the state it started in
                _restore(buffers, before)
                set_rng_state(rng)
                return self._split_call(args, kwargs)
            return result  # the capture ran the function eagerly
        _restore(buffers, after)
        set_rng_state(rng_after)
        self.cache[key] = prog
        self.compile_seconds.append(time.perf_counter() - t0)
        return result

    def _give_up(self, key, err, args, kwargs, before, buffers, rng):
        _restore(buffers, before)
        set_rng_state(rng)
        self.reasons.append(str(err))
        if self._broken(key, err):
            return self._split_call(args, kwargs)
        return self.fn(*args, **kwargs)

    def _broken(self, key, err):
        """Record a failed capture; these guards then run split at the submodules (True) or eagerly."""
        stack = err.user_stack or _definition(self.fn)
        self.breaks.append((str(err), stack))
        split = not self.fullgraph and bool(self._submodules())
        self.cache[key] = SPLIT if split else EAGER
        if self.fullgraph:
            raise CompileError(f"ember.compile(fullgraph=True): {self.name} cannot be compiled: {err}", stack)
        if not self.quiet:
            how = "is split at its submodules" if split else "runs eagerly"
            warnings.warn(f"ember.compile: {self.name} {how}: {err}" +
                          (" (ember._dynamo.explain lists the breaks below it)" if split else ""),
                          UserWarning, stacklevel=5)
        return split

    # ----- graph breaks: NOTE [ Graph breaks at submodules ] -----
    def _submodules(self):
        """[(submodule, its CompiledFunction)]: the modules this module's forward may call, containers looked
        through."""
        if self._subs is None:
            from ..nn.modules.module import Module
            found = []

            def walk(m):
                for c in m.children():
                    if getattr(type(c), "forward", None) is Module.forward:  # ModuleList, ModuleDict: never called
                        walk(c)
                    else:
                        found.append(c)
            if self.module is not None:
                walk(self.module)
            subs = []
            for c in found:
                fwd = c.__dict__.get("forward", c.forward)
                fwd = fwd.fn if isinstance(fwd, CompiledFunction) else fwd
                if not getattr(fwd, "_ember_disabled", False):  # disable()d: eager all the way down
                    subs.append((c, CompiledFunction(fwd, c, name=f"{self.name}.{type(c).__name__}", quiet=True)))
            self._subs = subs
        return self._subs

    def _split_call(self, args, kwargs):
        swapped = []
        try:
            for c, compiled in self._submodules():
                swapped.append((c, c.__dict__.get("forward", _NONE)))
                c.__dict__["forward"] = compiled
            return self.fn(*args, **kwargs)
        finally:
            for c, before in reversed(swapped):
                if before is _NONE:
                    c.__dict__.pop("forward", None)
                else:
                    c.__dict__["forward"] = before

    def regions(self):
        """[(name, guards described, program)] of every compiled region this function and its split submodules
        hold."""
        out = [(self.name, _describe(key), p) for key, p in self.cache.items() if isinstance(p, _Program)]
        out += [(self.name, _describe(key) + " (runs eagerly: eager was faster)", p) for key, p in self.slower]
        for _, sub in self._subs or ():
            out += sub.regions()
        return out

    def all_breaks(self):
        """[(reason, user stack)] of this function's failed captures and its submodules', each place once (a module
        that split because a submodule broke reports the submodule's break)."""
        below = []
        for _, sub in self._subs or ():
            below += sub.all_breaks()
        seen = {reason for reason, _ in below}
        return [b for b in self.breaks if b[0] not in seen] + below

    def reset(self):
        self.cache.clear()
        self.compile_seconds.clear()
        self.reasons.clear()
        self.breaks.clear()
        self.slower.clear()
        self._subs = None

    def _capture(self, args, kwargs, tensors, params, buffers):
        slots, keep, meta = {}, [], {}
        cap = _Capture(slots, keep, meta)
        in_slots = [cap.slot(t._data) for t in tensors]
        state = params + buffers
        state_slots = [cap.slot(p._data) for p in state]
        CAPTURING[0] = True
        _tensor.HOST_READ[0] = _refuse_host_read
        try:
            with cap:
                result = self.fn(*args, **kwargs)
        finally:
            CAPTURING[0] = False
            _tensor.HOST_READ[0] = None
        outs, form = _outputs(result)
        for o in outs:
            if id(o._data) not in slots:
                raise CompileError("an output was not computed by the ops ember sees")
        prog = _Program(0, in_slots, state_slots, cap.steps, [slots[id(o._data)] for o in outs], form)
        leaves = tensors + params
        grads_eager = gouts = None
        if GRAD[0] and any(t._requires_grad for t in leaves) and any(o._requires_grad for o in outs):
            from .. import autograd
            diff = [o for o in outs if o._requires_grad]
            gouts = [_noise_like(o._data, 0) for o in diff]
            bcap = _Capture(slots, keep, meta)
            gout_slots = [bcap.slot(g._data) for g in gouts]
            wanted = [t for t in leaves if t._requires_grad]
            with bcap:
                got = autograd.grad(diff, wanted, gouts, retain_graph=True, create_graph=True, allow_unused=True)
            grads_eager = [None if g is None else g._data.copy() for g in got]
            by_leaf = dict(zip(map(id, wanted), got))
            prog.bwd = bcap.steps
            it = iter(gout_slots)
            prog.gout_slots = [next(it) if o._requires_grad else None for o in outs]
            grad_slots = []
            for t in leaves:
                g = by_leaf.get(id(t))
                if g is not None and id(g._data) not in slots:
                    raise CompileError("a gradient was not computed by the ops ember sees")
                grad_slots.append(None if g is None else slots[id(g._data)])
            prog.grad_slots = grad_slots
            prog.bwd = fuse(prog.bwd, meta, {i for i in grad_slots if i is not None})
            prog.make_op(len(tensors), state)
        prog.fwd = fuse(prog.fwd, meta, set(prog.out_slots) | {i for step in prog.bwd or () for _, _, i in step[2]})
        prog.n = len(slots)
        return result, prog, grads_eager, gouts

    def _verify(self, prog, tensors, params, buffers, result, grads_eager, gouts, before, after, rng, args, kwargs):
        outs_eager = [o._data for o in _outputs(result)[0]]
        # 1. the program on the first call's inputs, from the same state
        _restore(buffers, before)
        set_rng_state(rng)
        got, grads = _replay(prog, tensors, params, buffers, gouts)
        _same(got, outs_eager, "outputs")
        _same(_snapshot(buffers), after, "buffers")
        if grads_eager is not None:
            _same([g for g in grads if g is not None], [g for g in grads_eager if g is not None], "gradients")
        # 2. inputs changed by noise: eager against the program again
        noisy = {id(t): _perturbed(t) for t in tensors}
        args2, kwargs2 = _substitute(args, noisy), _substitute(kwargs, noisy)
        t2 = _flat_tensors(args2, kwargs2)
        from .. import autograd, rand
        _restore(buffers, before)
        set_rng_state(rng)
        rand(3)  # another random state than the first call's: random numbers drawn outside ops show
        rng2 = get_rng_state()
        if gouts is not None:  # other output gradients too: a backward may compute constants from them
            gouts = [_noise_like(g._data, 1) for g in gouts]
        try:
            res2 = self.fn(*args2, **kwargs2)
            outs2, _ = _outputs(res2)
            want_buf = _snapshot(buffers)
            want_grads = None
            if grads_eager is not None:
                diff = [o for o in outs2 if o._requires_grad]
                wanted = [t for t in t2 + params if t._requires_grad]
                # the formulas the program was captured with (create_graph's), so that rounding compares too
                g2 = autograd.grad(diff, wanted, gouts, create_graph=True, allow_unused=True) if diff else []
                want_grads = [g._data for g in g2 if g is not None]
        except Exception as e:  # noqa: BLE001 - e.g. a matrix the noise made singular: nothing to compare with
            raise _Unchecked(f"it raised on the inputs changed for the check ({type(e).__name__}: {e})") from e
        _restore(buffers, before)
        set_rng_state(rng2)
        try:
            got2, grads2 = _replay(prog, t2, params, buffers, gouts)
        except Exception as e:  # noqa: BLE001 - eager did not raise: the program is not the function
            raise CompileError(f"its replay raised where eager did not ({type(e).__name__}: {e})") from e
        _same(got2, [o._data for o in outs2], "outputs for other input values")
        _same(_snapshot(buffers), want_buf, "buffers for other input values")
        if want_grads is not None:
            _same([g for g in grads2 if g is not None], want_grads, "gradients for other input values")
        # 3. worth it: the replay must not be slower than eager (a backward captured through create_graph's
        # formulas can be, where eager has fused kernels: attention, layer norm)
        _restore(buffers, before)
        eager_s = _timed(lambda: self._eager_step(args2, kwargs2, gouts, params))
        _restore(buffers, before)
        replay_s = _timed(lambda: _replay(prog, t2, params, buffers, gouts))
        _restore(buffers, before)
        if replay_s > eager_s:
            raise _NotFaster(f"its replay ({replay_s * 1e3:.2f} ms) is slower than eager ({eager_s * 1e3:.2f} ms)")

    def _eager_step(self, args, kwargs, gouts, params):
        """A plain eager forward (and backward, into no .grad) for timing."""
        from .. import autograd
        outs, _ = _outputs(self.fn(*args, **kwargs))
        diff = [o for o in outs if o._requires_grad]
        leaves = [t for t in _flat_tensors(args, kwargs) + params if t._requires_grad]
        if gouts is not None and diff and leaves:
            autograd.grad(diff, leaves, gouts, allow_unused=True)


_NONE = object()


def _describe(key):
    """A cache key (see CompiledFunction.__call__) in words."""
    grad, autocast, training, _, _, args, kwargs = key

    def part(g):
        if g.__class__ is tuple and g and g[0] == "T":
            _, shape, dtype, cls, rg = g
            device = "cpu" if cls is np.ndarray else "cuda"
            return f"Tensor(shape={list(shape)}, dtype={dtype}, device={device}, requires_grad={rg})"
        if g.__class__ is tuple and len(g) == 2 and g[0] in (tuple, list):
            return "(" + ", ".join(part(x) for x in g[1]) + ")"
        if g.__class__ is tuple and len(g) == 2 and g[0] is dict:
            return "{" + ", ".join(f"{k}={part(x)}" for k, x in g[1]) + "}"
        if g.__class__ is tuple and len(g) == 2 and g[0] == "id":
            return "the same object"
        return repr(g)
    return (f"grad_mode={grad}, autocast={autocast}, training={list(training)}, args={part(args)}, "
            f"kwargs={part(kwargs)}, parameters and buffers: the same objects")


def _definition(fn):
    """[the FrameSummary of fn's def line], or [] when fn has no Python code."""
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "forward", None), "__code__", None)
    if code is None:
        return []
    return [traceback.FrameSummary(code.co_filename, code.co_firstlineno, code.co_name)]


class _NotFaster(CompileError):
    """The region is faithful but eager is faster: it runs eagerly, without a warning."""


class _Unchecked(_NotFaster):
    """The function raised on the changed inputs of the check, so the program cannot be trusted: it runs eagerly,
    without a warning (eager is what the user wrote)."""


def _timed(fn):
    """Seconds of fn: the better of two runs after a warm-up (one run alone flipped the choice on noise)."""
    import time
    fn()
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _refuse_host_read(t, what):
    graph_break(f"it reads a tensor's value on the host (Tensor.{what}), which decides what it does next")


def _replay(prog, tensors, params, buffers, gouts):
    values = prog.forward_values([t._data for t in tensors], params + buffers)
    outs = [values[i] for i in prog.out_slots]
    grads = None
    if prog.bwd is not None:
        it = iter(gouts)
        for i in prog.gout_slots:
            if i is not None:
                values[i] = next(it)._data
        _run(prog.bwd, values)
        grads = [None if i is None else values[i] for i in prog.grad_slots]
    return outs, grads


def _outputs(result):
    """(the tensors of a result, its form: None for one tensor, else (type, forms of the items))."""
    if isinstance(result, Tensor):
        return [result], None
    if isinstance(result, (tuple, list)) and result:
        flat, forms = [], []
        for r in result:
            f, form = _outputs(r)
            flat.extend(f)
            forms.append(form)
        return flat, (type(result), forms)
    raise CompileError(f"it returns {type(result).__name__}, not tensors (in tuples and lists)")


def _packed(outs, form):
    """The result of the form `form` (see _outputs) made of the tensors outs, consumed from the front."""
    if form is None:
        return outs.pop(0)
    kind, forms = form
    items = [_packed(outs, f) for f in forms]
    return kind(*items) if hasattr(kind, "_fields") else kind(items)  # a named tuple (torch.return_types)


def _same(got, want, what):
    if len(got) != len(want):
        raise CompileError(f"its {what} differ in number when replayed")
    for a, b in zip(got, want):
        a, b = np.asarray(_host(a)), np.asarray(_host(b))
        if a.shape != b.shape or a.dtype != b.dtype or not np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True):
            raise CompileError(f"its {what} differ when replayed (code the tracer cannot see: in-place writes, "
                               "values computed outside ember's ops, data-dependent branches or random numbers)")


def _host(a):
    return a if isinstance(a, np.ndarray) or not hasattr(a, "get") else a.get()


def _snapshot(tensors):
    return [t._data.copy() for t in tensors]


def _restore(tensors, arrays):
    for t, a in zip(tensors, arrays):
        t._data[...] = a


def _noise_like(a, seed):
    """A Tensor of standard normal noise with a's shape, dtype and device."""
    noise = np.random.default_rng(seed).standard_normal(a.shape).astype(a.dtype)
    return Tensor._make(noise if isinstance(a, np.ndarray) else XP[a.__class__].asarray(noise))


def _perturbed(t):
    d = _host(t._data)
    if d.dtype.kind in "fc":
        noise = np.random.default_rng(1).standard_normal(d.shape).astype(d.dtype)
        scale = np.abs(d).mean() if d.size else 0
        new = np.asarray(d + noise * (scale if scale > 0 else 1) * 0.5, d.dtype)  # zeros change too
    elif d.dtype.kind in "iu" and d.size:
        new = np.random.default_rng(1).permutation(d.reshape(-1)).reshape(d.shape)  # the same values, moved
    else:
        new = d.copy()
    r = Tensor._make(new if isinstance(t._data, np.ndarray) else XP[t._data.__class__].asarray(new))
    if t._requires_grad:
        r.requires_grad_(True)
    return r


def _substitute(v, swap):
    if isinstance(v, Tensor):
        return swap.get(id(v), v)
    if isinstance(v, (list, tuple)):
        return type(v)(_substitute(x, swap) for x in v)
    if isinstance(v, dict):
        return {k: _substitute(x, swap) for k, x in v.items()}
    return v
