"""Module hook machinery: removable handles, the global module hooks and full backward hooks."""
import warnings
import weakref
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import GRAD
from ...autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "register_module_buffer_registration_hook", "register_module_forward_hook",
           "register_module_forward_pre_hook", "register_module_full_backward_hook",
           "register_module_full_backward_pre_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]


# ----- global hooks -----

_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()


# NOTE [ Global hook flag ]
# Set for good once any global call hook is registered: until then Module.__call__ need not look at the four
# global dicts (removing the hooks later only costs those lookups again).
_GLOBAL_HOOKS_USED = [False]


def _global_hook(d, hook):
    if d is not _global_buffer_registration_hooks and d is not _global_module_registration_hooks and \
            d is not _global_parameter_registration_hooks:
        _GLOBAL_HOOKS_USED[0] = True
    handle = RemovableHandle(d)
    d[handle.id] = hook
    return handle


def register_module_buffer_registration_hook(hook):
    """Same as `torch.nn.modules.module.register_module_buffer_registration_hook`."""
    return _global_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """Same as `torch.nn.modules.module.register_module_module_registration_hook`."""
    return _global_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """Same as `torch.nn.modules.module.register_module_parameter_registration_hook`."""
    return _global_hook(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """Same as `torch.nn.modules.module.register_module_forward_pre_hook`."""
    return _global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """Same as `torch.nn.modules.module.register_module_forward_hook`."""
    handle = _global_hook(_global_forward_hooks, hook)
    handle.extra_dict_ref = (weakref.ref(_global_forward_hooks_always_called),
                             weakref.ref(_global_forward_hooks_with_kwargs))
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """Same as `torch.nn.modules.module.register_module_full_backward_pre_hook`."""
    return _global_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """Same as `torch.nn.modules.module.register_module_full_backward_hook`."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is False:
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = True
    return _global_hook(_global_backward_hooks, hook)


# ----- full backward hooks -----

class BackwardHookFunction(Function):
    """The identity, recorded as a graph node so that module input and output gradients can be observed."""

    @staticmethod
    def forward(ctx, *args):
        return args

    @staticmethod
    def backward(ctx, *args):
        return args


class _BackwardHook:
    """Calls a module's full backward (pre-)hooks (torch.utils.hooks.BackwardHook): identity nodes around the
    module's tensor inputs and outputs capture grad_output, then grad_input, and the hooks receive both."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = self.n_outputs = -1
        self.input_index = self.output_index = None

    @staticmethod
    def _wrap(args, install):
        """Route the tensors of args that require grad through one identity node; (new args, tensor positions)."""
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (GRAD[0] and any(args[i]._requires_grad for i in idx)):
            return args, None
        # only tensors requiring grad pass through the node; the others keep their identity and no history
        wrapped = [i for i in idx if args[i]._requires_grad]
        new = BackwardHookFunction.apply(*[args[i] for i in wrapped])
        install(new[0].grad_fn, wrapped)
        out = list(args)
        for i, t in zip(wrapped, new):
            out[i] = t
        return tuple(out), idx

    def setup_input_hook(self, args):
        res, idx = self._wrap(args, self._install_input_hook)
        self.n_inputs = len(args)
        self.input_index = idx
        return res

    def _install_input_hook(self, node, wrapped):
        def hook(grad_inputs, _):
            if self.grad_outputs is None:  # a gradient reaching the inputs without passing the outputs
                return None
            res = [None] * self.n_inputs
            for i in self.input_index:  # tensors that needed no grad get zeros, as torch's materialized grads
                res[i] = self._zeros_like(self._input_meta[i])
            for i, g in zip(wrapped, grad_inputs):
                res[i] = g
            res = tuple(res)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, "
                                       f"but expected {len(res)}")
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in wrapped)
        node.register_hook(hook)

    @staticmethod
    def _zeros_like(meta):
        if meta is None:
            return None
        from ..._ops.creation import zeros
        shape, dt, dev = meta
        return zeros(shape, dtype=dt, device=dev)

    def record_input_meta(self, args):
        self._input_meta = {i: (a.shape, a.dtype, a.device) for i, a in enumerate(args) if isinstance(a, Tensor)}

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, idx = self._wrap(args, self._install_output_hook)
        self.n_outputs = len(args)
        self.output_index = idx
        return res if is_tuple else res[0]

    def _install_output_hook(self, node, wrapped):
        def hook(_, grad_outputs):
            packed = [None] * self.n_outputs
            for i, g in zip(wrapped, grad_outputs):
                packed[i] = g
            self.grad_outputs = tuple(packed)
            for pre in self.user_pre_hooks:
                new = pre(self.module, self.grad_outputs)
                if new is None:
                    continue
                if len(new) != len(self.grad_outputs):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(new)}, but expected {len(self.grad_outputs)}")
                self.grad_outputs = tuple(new)
            local = self.grad_outputs
            if self.input_index is None:
                self._fire_without_inputs()
            return tuple(local[i] for i in wrapped)
        node.register_hook(hook)

    def _fire_without_inputs(self):
        warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                      "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                      "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                      stacklevel=5)
        grad_inputs = (None,) * self.n_inputs
        for user_hook in self.user_hooks:
            res = user_hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                   "return None or None for all gradients.")
        self.grad_outputs = None


def _register_nonfull_hooks(module, hooks, result):
    """The deprecated register_backward_hook: hooks on the grad_fn of the first output tensor."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
    node = var.grad_fn
    if node is None:
        return
    for user_hook in hooks:
        node.register_hook(lambda gi, go, h=user_hook: h(module, gi, go))


class _WithModule:
    """A load_state_dict pre-hook that also receives its module (held weakly)."""

    def __init__(self, hook, module):
        self.hook = hook
        self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self):
        return {"hook": self.hook, "module": self.module()}

    def __setstate__(self, state):
        self.hook = state["hook"]
        self.module = weakref.ref(state["module"])
