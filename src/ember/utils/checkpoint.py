"""ember.utils.checkpoint: same as torch.utils.checkpoint (activation checkpointing)."""
import contextlib
import warnings

from ..autograd.function import Function

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential", "detach_variable", "noop_context_fn"]


class CheckpointError(RuntimeError):
    """Same as `torch.utils.checkpoint.CheckpointError`."""


def noop_context_fn():
    """Same as `torch.utils.checkpoint.noop_context_fn`."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Same as `torch.utils.checkpoint.detach_variable`: detached copies keeping each tensor's requires_grad."""
    from .._tensor import Tensor
    if not isinstance(inputs, tuple):
        raise RuntimeError(  # noqa: TRY004 - torch raises RuntimeError here
            f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    """Runs the function without a graph, then again under grad mode during backward (the reentrant variant)."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        from .._ops.random import get_rng_state
        from .._tensor import Tensor
        ctx.run_function = run_function
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.tensor_slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_slots])
        return run_function(*args)  # Function.forward already runs without recording a graph

    @staticmethod
    def backward(ctx, *grads):
        from .. import autograd
        from .._ops.random import get_rng_state, set_rng_state
        from .._tensor import Tensor
        from ..autograd.grad_mode import enable_grad
        args = list(ctx.args)
        for slot, t in zip(ctx.tensor_slots, ctx.saved_tensors):
            d = t.detach()
            d.requires_grad = t.requires_grad
            args[slot] = d
        outer = get_rng_state() if ctx.rng_state is not None else None
        if outer is not None:
            set_rng_state(ctx.rng_state)  # dropout draws the same mask as in forward
        try:
            with enable_grad():
                outputs = ctx.run_function(*args)
        finally:
            if outer is not None:
                set_rng_state(outer)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None for a in args)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """Same as `torch.utils.checkpoint.checkpoint`. With use_reentrant=False the function simply runs with a graph
    (same results and gradients, no memory saved)."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
                      "two variants.", UserWarning, stacklevel=2)
        use_reentrant = True
    if not use_reentrant:
        forward_ctx, _ = context_fn()
        with forward_ctx:
            return function(*args, **kwargs)
    if context_fn is not noop_context_fn or debug is not False:
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from .._tensor import Tensor
    if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning,
                      stacklevel=2)
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Same as `torch.utils.checkpoint.checkpoint_sequential`: every segment but the last is checkpointed."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
                      "two variants.", UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
