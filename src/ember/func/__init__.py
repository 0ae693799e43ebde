"""ember.func: torch.func's function transforms and functional_call."""
from ..nn.utils.stateless import _func_functional_call as functional_call
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap

__all__ = ["functional_call", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap",
           "linearize", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize"]


def functionalize(func, *, remove="mutations"):
    """Same as `torch.func.functionalize`: in eager mode the program's results are unchanged, so func itself."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. "
                           "Valid options are:\n     remove='mutations': all inplace and out= operators will be "
                           "removed from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n")
    return func


def replace_all_batch_norm_modules_(root):
    """Same as `torch.func.replace_all_batch_norm_modules_`: batch norms stop tracking running statistics."""
    from ..nn.modules.batchnorm import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def stack_module_state(models):
    """Same as `torch.func.stack_module_state`: (params, buffers) with each entry stacked over the models."""
    from .._ops.join import stack
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    first = type(models[0])
    if any(type(m) is not first for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(named):
        out = {}
        for name, t in named(models[0]):
            s = stack([dict(named(m))[name].detach() for m in models])
            out[name] = s.requires_grad_(True) if t.requires_grad else s
        return out
    return stacked(lambda m: m.named_parameters()), stacked(lambda m: m.named_buffers())
