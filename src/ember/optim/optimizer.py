"""The Optimizer base class: parameter groups, per-parameter state, state_dict, hooks.

Subclasses implement `step`; every `step` defined on a subclass is wrapped once, when the class is created, so that
step pre/post hooks run around it (torch patches the class on first instantiation; the result is the same).
"""
import copy
import functools
import warnings
from collections import OrderedDict, defaultdict
from itertools import chain

import numpy as np

from .._backend.deferred import CAPTURING as _CAPTURING
from .._dtype import strided
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import RemovableHandle, bump_version as _bump

__all__ = ["Optimizer", "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook", "required"]


class _RequiredParameter:
    """Singleton marking an optimizer option that every parameter group must specify."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Same as `torch.optim.optimizer.register_optimizer_step_pre_hook`."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Same as `torch.optim.optimizer.register_optimizer_step_post_hook`."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _with_hooks(step):
    """Wrap a subclass's step so that the global and per-optimizer pre/post hooks run around it."""
    @functools.wraps(step)
    def hooked_step(self, *args, **kwargs):
        if self._optimizer_step_pre_hooks or _global_optimizer_pre_hooks:
            for pre_hook in chain(_global_optimizer_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{step} must return None or a tuple of (new_args, new_kwargs), but got "
                                           f"{result}.")
        if _CAPTURING[0] is not None and not self._capture_safe:
            raise RuntimeError(f"Attempting CUDA graph capture of step() for an instance of {type(self).__name__}, "
                               "whose step count and bias corrections live on the host, so a replay would repeat "
                               "the captured step (capturable=True is accepted but not honoured by ember): capture "
                               "SGD steps, or step outside the graph")
        out = step(self, *args, **kwargs)
        if self._optimizer_step_post_hooks or _global_optimizer_post_hooks:
            for post_hook in chain(self._optimizer_step_post_hooks.values(), _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
        return out
    hooked_step.hooked = True
    return hooked_step


def _typename(obj):
    if isinstance(obj, Tensor):
        from .._dtype import legacy_type_name
        return legacy_type_name(obj)
    t = type(obj)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _is_sparse(g):
    return g.__class__ is not Tensor and g.layout is not strided


def _add_sparse_(p, g, alpha):
    """p += alpha * g for a sparse g (repeated indices add up), in place and outside the graph."""
    with no_grad():
        p.index_put_(tuple(g._indices()), g._values() * alpha, accumulate=True)


def _to_scalar(x):
    """A 1-element Tensor option (lr, betas...) as a Python number; anything else as is."""
    return x.item() if isinstance(x, Tensor) else x


def _check_lr(lr):
    """The checks torch's optimizers all start with: a Tensor lr has one element, and lr >= 0."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_fused(fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_differentiable(differentiable):
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported by ember's optimizers: their updates run "
                                  "on raw arrays outside autograd")


def _step_tensor(value=0.0):
    """A 0-dim float32 CPU tensor: how torch keeps counters such as state['step']."""
    return Tensor._make(np.array(value, dtype=np.float32))


def _zeros_state(p, fill=0):
    """A state tensor shaped like p, C-contiguous (the kernels' chunked path wants it)."""
    a = np.empty_like(p._data, order="C")
    a.fill(fill)
    return Tensor._make(a)


def _inc(step_t):
    """step_t += 1 in place (a 0-dim float32 counter); returns the new value as a float."""
    d = step_t._data
    v = float(d) + 1
    d[()] = v
    return v


def _tensorize(state, keys, dtype=np.float32):
    """Counters loaded from an old state dict as Python numbers become 0-dim tensors, as torch's __setstate__ does."""
    for p_state in state.values():
        for key in keys:
            if key in p_state and not isinstance(p_state[key], Tensor):
                p_state[key] = Tensor._make(np.array(float(p_state[key]), dtype=dtype))


class Optimizer:
    """Same as `torch.optim.Optimizer`."""
    _capture_safe = False  # whether a step may be captured into a CUDA graph (NOTE [ CUDA graphs ])

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _with_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._group_defaults.items():
                group.setdefault(key, value)
        if self._tensor_state:
            _tensorize(self.state, self._tensor_state)

    # Options that checkpoints of older versions may lack (filled in on unpickling), and state entries that they
    # may hold as plain numbers rather than 0-dim float32 tensors.
    _group_defaults = {}
    _tensor_state = ()

    def _init_state(self, p, group):
        """The state of parameter p on its first step."""
        raise NotImplementedError

    def _gather(self, group, keys):
        """The params of `group` that have a gradient, their gradients, and for each state key the list of those
        params' state values (a key of None gives an empty list: a state the group's options leave out). A param's
        state is made by _init_state on its first step."""
        params, grads = [], []
        columns = [[] for _ in keys]
        state = self.state
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            if g.__class__ is not Tensor and g.layout is not strided:
                self._sparse_grad(p, g)
            params.append(p)
            grads.append(g)
            s = state[p]
            if len(s) == 0:
                s.update(self._init_state(p, group))
            for column, key in zip(columns, keys):
                if key is not None:
                    column.append(s[key])
        return params, grads, columns

    def _sparse_grad(self, p, g):
        """A sparse gradient (Embedding(sparse=True)) reached an optimizer with no sparse update: torch's error."""
        raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ----- hooks -----
    def register_step_pre_hook(self, hook):
        """Same as `torch.optim.Optimizer.register_step_pre_hook`: hook(optimizer, args, kwargs)."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Same as `torch.optim.Optimizer.register_step_post_hook`: hook(optimizer, args, kwargs)."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _register(self, hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Same as `torch.optim.Optimizer.register_state_dict_pre_hook`."""
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Same as `torch.optim.Optimizer.register_state_dict_post_hook`."""
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Same as `torch.optim.Optimizer.register_load_state_dict_pre_hook`."""
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Same as `torch.optim.Optimizer.register_load_state_dict_post_hook`."""
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ----- state_dict -----
    def state_dict(self):
        """Same as `torch.optim.Optimizer.state_dict`: parameters replaced by their index in group order.
        The state tensors are the optimizer's own (not copies), as in torch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        mapping = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                if id(p) not in mapping:
                    mapping[id(p)] = len(mapping)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        # floating state follows the parameter's dtype; 'step' stays as saved unless the group is fused/capturable
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                from .._dtype import float32
                return value.to(dtype=float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Same as `torch.optim.Optimizer.load_state_dict`."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v, k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state, "param_groups": [update_group(g, ng) for g, ng in zip(groups,
                                                                                                saved_groups)]})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ----- gradients and parameter groups -----
    def zero_grad(self, set_to_none=True):
        """Same as `torch.optim.Optimizer.zero_grad`."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if _is_sparse(g):
                        g.zero_()
                        continue
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g._requires_grad = False
                    g._data.fill(0)
                    _bump(g, "zero_")

    def step(self, closure=None):
        """Same as `torch.optim.Optimizer.step`: implemented by subclasses."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Same as `torch.optim.Optimizer.add_param_group`."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        _split_names(param_group)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(map(id, params))):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(map(id, group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. cannot add param group "
                                 f"{which} to the optimizer")
        if not seen.isdisjoint(map(id, param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


def _split_names(param_group):
    """(name, tensor) pairs, as named_parameters() yields them, become params plus param_names."""
    tensors, names = [], []
    for param in param_group["params"]:
        if isinstance(param, tuple):
            names.append(param[0])
            tensors.append(param[1])
        else:
            tensors.append(param)
    param_group["params"] = tensors
    if names:
        if len(names) != len(tensors):
            raise ValueError("all optimizer params should be with/without names. Some param names are missing")
        param_group["param_names"] = names


def _closure_loss(closure):
    """Run the closure with grad mode on, as torch's optimizers do."""
    if closure is None:
        return None
    with enable_grad():
        return closure()

