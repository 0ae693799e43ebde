"""ember._dynamo: torch._dynamo's public surface over ember.compile (NOTE [ Compiled regions ] and NOTE [ Graph
breaks at submodules ] in compiler/_region.py): `explain`, `reset`, `config`, `disable`, `graph_break`, the
dynamic-shape marks (accepted; ember always specializes shapes) and the pass-through decorators."""
import dataclasses
import functools
import warnings

from . import config  # exc loads on first use: it imports compiler, which imports config

__all__ = ["ExplainOutput", "GraphCompileReason", "OptimizedModule", "allow_in_graph", "assume_constant_result",
           "config", "disable", "exc", "explain", "forbid_in_graph", "graph_break", "is_compiling", "is_dynamo_supported",
           "list_backends", "mark_dynamic", "mark_static", "maybe_mark_dynamic", "optimize", "reset"]


@dataclasses.dataclass
class GraphCompileReason:
    """Same as torch's: why a capture stopped, and the user's frames where it did (outermost first)."""
    reason: str
    user_stack: list
    graph_break: bool = True


@dataclasses.dataclass
class ExplainOutput:
    """Same as torch's: what `explain(fn)(*args)` found. `graphs` are ember's captured programs (not fx graphs);
    `ops_per_graph` names the ops of each program's forward."""
    graphs: list
    graph_count: int
    graph_break_count: int
    break_reasons: list
    op_count: int
    ops_per_graph: list = None
    out_guards: list = None
    compile_times: str = None

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}", f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}", "Break Reasons:"]
        for i, br in enumerate(self.break_reasons):
            lines += [f"  Break Reason {i + 1}:", f"    Reason: {br.reason}", "    User Stack:"]
            lines += [f"      {frame}" for frame in br.user_stack]
        if self.ops_per_graph is not None:
            lines.append("Ops per Graph:")
            for i, ops in enumerate(self.ops_per_graph):
                lines.append(f"  Ops {i + 1}:")
                lines += [f"    {op}" for op in ops]
        if self.out_guards is not None:
            lines.append("Out Guards:")
            lines += [f"  Guard {i + 1}:\n    {g}" for i, g in enumerate(self.out_guards)]
        if self.compile_times is not None:
            lines.append(f"Compile Times: {self.compile_times}")
        return "\n".join(lines) + "\n"


def explain(f, *extra_args, **extra_kwargs):
    """Same as `torch._dynamo.explain`: `explain(f)(*args, **kwargs)` compiles f afresh, calls it once (the capture
    runs f and checks the program against more eager runs, so f's Python side effects happen more than once) and
    reports the compiled regions and the graph breaks. ember breaks a module at its submodules (NOTE [ Graph
    breaks at submodules ]): a function with a break reports no region and the break."""
    def inner(*args, **kwargs):
        from ..compiler import CompiledFunction
        from ..nn.modules.module import Module
        owner = f if isinstance(f, Module) else getattr(f, "__self__", None)
        compiled = CompiledFunction(f, owner if isinstance(owner, Module) else None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            compiled(*args, **kwargs)
        regions = compiled.regions()
        breaks = [GraphCompileReason(reason, list(stack)) for reason, stack in compiled.all_breaks()]
        ops = [[step[0].name for step in prog.fwd] for _, _, prog in regions]
        times = ", ".join(f"{s:.4f}" for s in _seconds(compiled))
        return ExplainOutput([prog for _, _, prog in regions], len(regions), len(breaks), breaks,
                             sum(map(len, ops)), ops, [f"{name}: {guards}" for name, guards, _ in regions],
                             f"first calls (capture and checks), seconds: {times}" if times else None)

    if extra_args or extra_kwargs:
        warnings.warn("explain(f, *args, **kwargs) is deprecated, use explain(f)(*args, **kwargs) instead.  If "
                      "you don't migrate, we may break your explain call in the future if your user defined kwargs "
                      "conflict with future kwargs added to explain(f).", FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)
    return inner


def _seconds(compiled):
    """First-call times of a compiled function and of the submodules it was split into."""
    out = list(compiled.compile_seconds)
    for _, sub in compiled._subs or ():
        out += _seconds(sub)
    return out


def reset():
    """Same as `torch._dynamo.reset`: every compiled function forgets its programs (the next call captures again)."""
    from ..compiler._region import LIVE
    for compiled in list(LIVE):
        compiled.reset()


def graph_break(msg=""):
    """Same as `torch._dynamo.graph_break`: inside a capture, the region breaks here; otherwise nothing."""
    from ..compiler._region import graph_break as brk
    brk(f"graph_break() called{': ' + msg if msg else ''}")


def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
    """Same as `torch._dynamo.disable`: fn always runs eagerly; called inside a compiled region it breaks the
    region there (a module splits at its submodules)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason, wrapping=wrapping)
    from ..compiler._region import CAPTURING
    from ..compiler._region import graph_break as brk
    from ..nn.modules.module import Module
    if isinstance(fn, Module):  # the module itself, its forward disabled
        fn.__dict__["forward"] = disable(fn.forward, recursive, reason=reason)
        return fn

    @functools.wraps(fn)
    def eager(*args, **kwargs):
        if CAPTURING[0]:
            brk(f"it calls {getattr(fn, '__qualname__', fn)}, which is disabled for compilation"
                        + (f" ({reason})" if reason else ""))
        return fn(*args, **kwargs)
    eager._ember_disabled = True
    return eager


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """Same as `torch._dynamo.mark_dynamic`, accepted: ember specializes every shape (a new size is a new
    program, up to config.recompile_limit)."""


def maybe_mark_dynamic(t, index):
    """Same as `torch._dynamo.maybe_mark_dynamic`: accepted (see mark_dynamic)."""


def mark_static(t, index=None):
    """Same as `torch._dynamo.mark_static`: every shape is static in ember."""


def allow_in_graph(fn):
    """Same as `torch._dynamo.allow_in_graph`: returns fn (its ops are captured as any others)."""
    return fn


def forbid_in_graph(fn):
    """Same as `torch._dynamo.forbid_in_graph`: fn breaks any region that calls it (see disable)."""
    return disable(fn)


def assume_constant_result(fn):
    """Same as `torch._dynamo.assume_constant_result`: returns fn."""
    return fn


def is_compiling():
    """Same as `torch._dynamo.is_compiling`."""
    from ..compiler import is_compiling as compiling
    return compiling()


def is_dynamo_supported():
    """Same as `torch._dynamo.is_dynamo_supported`: ember.compile works on every supported Python."""
    return True


def list_backends(exclude_tags=("debug", "experimental")):
    """Same as `torch._dynamo.list_backends`."""
    from ..compiler import list_backends as backends
    return backends(exclude_tags)


def optimize(backend="inductor", *, nopython=False, dynamic=None, **kwargs):
    """Same as the older `torch._dynamo.optimize(backend)`: a decorator compiling its function
    (nopython=True: fullgraph)."""
    from ..compiler import compile
    return functools.partial(compile, backend=backend, fullgraph=nopython, dynamic=dynamic)


def __getattr__(name):
    if name == "exc":
        import importlib
        return importlib.import_module(".exc", __name__)
    if name == "OptimizedModule":
        from ..compiler._module import OptimizedModule
        return OptimizedModule
    raise AttributeError(f"module 'ember._dynamo' has no attribute '{name}'")
