"""ember.autograd: same as torch.autograd."""
from .._dtype import strided
from . import grad_mode, graph
from .engine import run_backward
from .gradcheck import gradcheck, gradgradcheck
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled, set_multithreading_enabled)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "Function", "gradcheck", "gradgradcheck", "detect_anomaly", "set_detect_anomaly", "functional", "Variable",
           "set_multithreading_enabled"]


def _as_tuple(x):
    if x is None:
        return None
    if isinstance(x, graph._Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs, grad_outputs):
    from .._ops.creation import ones_like
    from .._tensor import Tensor
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out._requires_grad:
                if out._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out._data.dtype.kind not in "fV":
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
                g = ones_like(out)
        elif not isinstance(g, Tensor):
            from .._ops.creation import tensor
            g = tensor(g, dtype=out.dtype, device=out.device)
        elif g._data.shape != out._data.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has "
                               f"a shape of {out.shape}.")
        grads.append(g)
    return grads


def _check_outputs(outputs):
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


_WARNED_CYCLE = [False]  # torch gives this warning once per process


def _warn_cycle():
    import warnings
    _WARNED_CYCLE[0] = True
    from .engine import _user_stacklevel
    warnings.warn("Using backward() with create_graph=True will create a reference cycle between the parameter and "
                  "its gradient which can cause a memory leak. We recommend using autograd.grad when creating the "
                  "graph to avoid this. If you have to use this function, make sure to reset the .grad fields of "
                  "your parameters to None after use to break the cycle and avoid the leak.", UserWarning,
                  stacklevel=_user_stacklevel())


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Same as `torch.autograd.backward`."""
    tensors = _as_tuple(tensors)
    grad_tensors = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables) or (None,) * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    if retain_graph is None:
        retain_graph = create_graph
    _check_outputs(tensors)
    grads = _make_grads(tensors, grad_tensors)
    if create_graph and not _WARNED_CYCLE[0]:
        _warn_cycle()
    inputs = _as_tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    results = run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=True)
    if inputs is not None:  # non-leaf inputs get their gradient in .grad, as retain_grad would
        for t, g in zip(inputs, results):
            if t._grad_fn is not None and g is not None:
                g = g if create_graph else g.detach()
                t._grad = g if t._grad is None else t._grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Same as `torch.autograd.grad`."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grad_outputs = _as_tuple(grad_outputs) or (None,) * len(outputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if not allow_unused and materialize_grads:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    given = inputs
    # a sparse tensor is differentiated through its values; its gradient is sparse with its indices
    inputs = tuple(t._values() if t.layout is not strided else t for t in inputs)
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    _check_outputs(outputs)
    grads = _make_grads(outputs, grad_outputs)
    results = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, accumulate=False)
    results = [g if g is None or t.layout is strided else t._with_values(g) for t, g in zip(given, results)]
    out = []
    for i, (t, g) in enumerate(zip(given, results)):
        if g is None:
            if materialize_grads:
                from .._ops.creation import zeros_like
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        elif not create_graph and g._requires_grad:
            g = g.detach()
        out.append(g)
    return tuple(out)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad with is_grads_batched: one backward per entry of the grad_outputs' first dimension, results stacked."""
    sizes = {g.shape[0] for g in grad_outputs if g is not None}
    if len(sizes) != 1:
        raise RuntimeError("Expected all grad_outputs to be batched (have a leading batch dimension of the same size)")
    n = sizes.pop()
    rows = []
    for b in range(n):
        gs = tuple(None if g is None else g[b] for g in grad_outputs)
        rows.append(grad(outputs, inputs, gs, retain_graph=retain_graph or b < n - 1, create_graph=create_graph,
                         allow_unused=allow_unused, materialize_grads=materialize_grads))
    from .._ops.join import stack
    return tuple(None if col[0] is None else stack(col) for col in zip(*rows))


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Same as `torch.Tensor.backward`."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_tensor_backward.__name__ = _tensor_backward.__qualname__ = "backward"  # Tensor.backward (bound in ember/__init__)


def __getattr__(name):
    # the heavier parts load on first use, keeping `import ember` fast
    import importlib
    if name in ("Function", "FunctionCtx", "once_differentiable"):
        return getattr(importlib.import_module(".function", __name__), name)
    if name in ("detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled"):
        return getattr(importlib.import_module(".anomaly_mode", __name__), name)
    if name == "Variable":
        return importlib.import_module(".variable", __name__).Variable
    if name in ("functional", "forward_ad", "variable", "profiler", "profiler_util"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'ember.autograd' has no attribute '{name}'")
