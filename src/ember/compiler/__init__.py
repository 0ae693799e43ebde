"""ember.compiler: torch.compiler. `compile` captures the ops a function or module runs and replays them
(NOTE [ Compiled regions ] in _region.py); the switches below are torch's."""
from ._region import CompiledFunction, CompileError  # noqa: F401 - CompileError: what fullgraph=True raises

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "cudagraph_mark_step_begin", "disable",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "list_backends", "reset"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, name=None,
            disable=False, **kwargs):
    """Same as `torch.compile`: a module comes back as an OptimizedModule (its state_dict keys start with
    "_orig_mod."), a function as a CompiledFunction; each call for the same guards replays the captured ops (NOTE
    [ Compiled regions ]), runs of elementwise ops fused where numba is installed. Regions the capture cannot
    reproduce run eagerly with a warning (an error with fullgraph=True); a module splits at its submodules instead
    (NOTE [ Graph breaks at submodules ]). Shapes are always specialized (dynamic is accepted and has no effect);
    every backend and mode replays the same way; disable=True or backend="eager" returns model itself."""
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, **kwargs)
        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if disable or backend == "eager":
        return model
    from ..nn.modules.module import Module
    if isinstance(model, Module):
        from ._module import OptimizedModule
        return OptimizedModule(model, fullgraph)
    owner = getattr(model, "__self__", None)
    return CompiledFunction(model, owner if isinstance(owner, Module) else None, fullgraph)


def is_compiling():
    """Same as `torch.compiler.is_compiling`: True while ember.compile captures a region."""
    from . import _region
    return _region.CAPTURING[0]


is_dynamo_compiling = is_compiling


def is_exporting():
    """Same as `torch.compiler.is_exporting`: always False."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """Same as `torch.compiler.disable`: fn always runs eagerly; called inside a compiled region it breaks the region
    there (a module splits at its submodules: NOTE [ Graph breaks at submodules ])."""
    from .._dynamo import disable as dynamo_disable
    return dynamo_disable(fn, recursive, reason=reason)


def allow_in_graph(fn):
    """Same as `torch.compiler.allow_in_graph`: returns fn."""
    return fn


def assume_constant_result(fn):
    """Same as `torch.compiler.assume_constant_result`: returns fn."""
    return fn


def reset():
    """Same as `torch.compiler.reset`: every compiled function forgets its programs (the next call captures again)."""
    from .._dynamo import reset as dynamo_reset
    dynamo_reset()


def cudagraph_mark_step_begin():
    """Same as `torch.compiler.cudagraph_mark_step_begin`: there are no CUDA graphs to step."""


def list_backends(exclude_tags=("debug", "experimental")):
    """Same as `torch.compiler.list_backends`: the backends `compile` accepts ("eager" returns the function itself;
    the others all capture and replay the same way)."""
    return ["eager", "inductor"]
