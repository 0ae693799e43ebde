"""ember.compiler: torch.compiler's user-facing switches. ember has no graph compiler yet (DESIGN.md: compile), so
`compile` runs models eagerly and these report that nothing is ever being compiled."""
import warnings

__all__ = ["allow_in_graph", "assume_constant_result", "compile", "cudagraph_mark_step_begin", "disable",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "list_backends", "reset"]

_WARNED = [False]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, name=None,
            disable=False, **kwargs):
    """Same as `torch.compile`, without the compiler: returns `model` itself, which runs eagerly with the same
    results (torch returns a wrapping OptimizedModule whose state_dict keys start with "_orig_mod."). Warns once
    per process, unless `disable=True` or `backend="eager"` asked for eager execution anyway."""
    if model is None:
        def decorate(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options,
                           name=name, disable=disable, **kwargs)
        return decorate
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if not disable and backend != "eager" and not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn("ember.compile: ember has no graph compiler yet; the model runs eagerly (same results, "
                      "eager speed)", UserWarning, stacklevel=2)
    return model


def is_compiling():
    """Same as `torch.compiler.is_compiling`: always False (nothing is traced)."""
    return False


is_dynamo_compiling = is_compiling


def is_exporting():
    """Same as `torch.compiler.is_exporting`: always False."""
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """Same as `torch.compiler.disable`: fn runs eagerly, which is how everything runs."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn):
    """Same as `torch.compiler.allow_in_graph`: returns fn."""
    return fn


def assume_constant_result(fn):
    """Same as `torch.compiler.assume_constant_result`: returns fn."""
    return fn


def reset():
    """Same as `torch.compiler.reset`: there are no compiled caches to clear."""


def cudagraph_mark_step_begin():
    """Same as `torch.compiler.cudagraph_mark_step_begin`: there are no CUDA graphs to step."""


def list_backends(exclude_tags=("debug", "experimental")):
    """Same as `torch.compiler.list_backends`: the backends `compile` accepts (all run eagerly)."""
    return ["eager", "inductor"]
