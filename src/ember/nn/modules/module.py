"""nn.Module: parameters, buffers and submodules registered by attribute assignment; hooks; state_dict.

NOTE [ Attribute mirror ]
torch keeps parameters, buffers and submodules only in `_parameters`, `_buffers` and `_modules`, so every
`self.weight` in a forward misses the instance dict and pays for a Python `__getattr__` (~520 ns against ~10 ns
for a plain attribute). ember also stores each registered value in the instance `__dict__`, under its name, so
ordinary attribute lookup finds it. The three registries are `_Registry` dicts: every write to them (through
Module methods or directly, as `module._parameters[name] = p` in user code) updates the mirror, so the two can
not drift apart. Reads (`items()`, `in`, iteration) are plain dict reads. Pickling and deepcopy drop the mirror
and the registry type (`__getstate__`) and rebuild both (`__setstate__`).

NOTE [ Atomic load_state_dict ]
torch copies each tensor as soon as it is checked, so a mismatch found late leaves the module half loaded.
ember runs the same per-module `_load_from_state_dict` pass (subclasses may override it as in torch) but only
records the copies; they run after every key has been checked and nothing failed, so a failed load leaves the
module unchanged. Load post-hooks run during the pass, as in torch, and so see the values before the copy.
"""
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._dtype import memory_format as _memory_format
from ..._tensor import Tensor, _parse_to
from ...autograd.grad_mode import GRAD
from ...autograd.graph import bump_version
from ..parameter import Parameter
from . import _hooks
from ._hooks import (
    _GLOBAL_HOOKS_USED,
    RemovableHandle,
    _BackwardHook,
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_buffer_registration_hooks,
    _global_forward_hooks,
    _global_forward_hooks_always_called,
    _global_forward_hooks_with_kwargs,
    _global_forward_pre_hooks,
    _global_module_registration_hooks,
    _global_parameter_registration_hooks,
    _register_nonfull_hooks,
    _WithModule,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)

__all__ = [
    "Module",
    "RemovableHandle",
    "register_module_buffer_registration_hook",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

_REGISTRIES = ("_parameters", "_buffers", "_modules")
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# ----- the attribute mirror (NOTE [ Attribute mirror ]) -----

class _Registry(dict):
    """A name -> value dict that keeps its owner's instance `__dict__` in step with every write."""
    __slots__ = ("_owner",)

    def __init__(self, owner, items=()):
        dict.__init__(self, items)
        self._owner = weakref.ref(owner)
        d = owner.__dict__
        for k, v in dict.items(self):
            d[k] = v

    def _mirror(self):
        owner = self._owner()
        return owner.__dict__ if owner is not None else {}

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, value)
        self._mirror()[key] = value

    def __delitem__(self, key):
        dict.__delitem__(self, key)
        self._mirror().pop(key, None)

    def pop(self, key, *default):
        had = key in self
        value = dict.pop(self, key, *default)
        if had:
            self._mirror().pop(key, None)
        return value

    def popitem(self):
        key, value = dict.popitem(self)
        self._mirror().pop(key, None)
        return key, value

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)

    def update(self, *args, **kwargs):
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def __ior__(self, other):
        self.update(other)
        return self

    def clear(self):
        m = self._mirror()
        for k in dict.keys(self):
            m.pop(k, None)
        dict.clear(self)

    def __reduce_ex__(self, protocol):
        return (dict, (dict(self),))


def _unmirror(d, registry):
    for k in registry:
        if k in d and d[k] is registry[k]:
            del d[k]


def _install_registry(module, name, value):
    d = module.__dict__
    old = d.get(name)
    if old is not None:
        _unmirror(d, old)
    d[name] = _Registry(module, value)


def _typename(obj):
    if isinstance(obj, Tensor):
        from ..._dtype import legacy_type_name
        return legacy_type_name(obj)
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join((n * " ") + line if line.strip() else "" for line in lines)


def _forward_unimplemented(self, *input):
    """Same as torch's placeholder forward: subclasses must define `forward`."""
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


# ----- copies and conversions -----

def _copy_into(dst, src):
    """dst.copy_(src) without recording a graph (load_state_dict's in-place copy)."""
    prev = GRAD[0]
    GRAD[0] = False
    try:
        copy_ = getattr(Tensor, "copy_", None)
        if copy_ is not None:
            copy_(dst, src)
            return
        s = src._data
        if type(s) is not type(dst._data):
            s = src.to(dst.device)._data
        dst._data[...] = s
        bump_version(dst, "copy_")
    finally:
        GRAD[0] = prev


_TO_SIGNATURES = (
    " * (ember.device device = None, ember.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "ember.memory_format memory_format = None)\n * (ember.dtype dtype, bool non_blocking = False, bool copy = False, "
    "*, ember.memory_format memory_format = None)\n * (Tensor tensor, bool non_blocking = False, bool copy = False, "
    "*, ember.memory_format memory_format = None)\n")


def _set_data(t, new):
    """t.data = new, keeping t's identity; a gradient accumulator made earlier learns the new shape/dtype."""
    if new is t or new._data is t._data:
        return
    t._data = new._data
    acc = t._accum
    if acc is not None:
        acc._meta = ((new._data.shape, new._data.dtype),)


def _is_buffer_value(value):
    return isinstance(value, Tensor) and value.__dict__.get("_is_buffer", False)


class Module:
    """Same as `torch.nn.Module`."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False
    forward = _forward_unimplemented

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were "
                            f"given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = _Registry(self)
        d["_buffers"] = _Registry(self)
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = _Registry(self)
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    # ----- calling -----

    def __call__(self, *args, **kwargs):
        # the fast path first: with no hooks anywhere, a call is just forward (torch's _call_impl)
        if (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _GLOBAL_HOOKS_USED[0]):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    _call_impl = _wrapped_call_impl = __call__

    def _call_with_hooks(self, args, kwargs):
        result = None
        called_always = set()
        try:
            if self._forward_pre_hooks or _global_forward_pre_hooks:
                args, kwargs = self._run_forward_pre_hooks(args, kwargs)
            bw = nonfull = None
            if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks or \
                    _global_backward_pre_hooks:
                full, nonfull = self._get_backward_hooks()
                pre = self._get_backward_pre_hooks()
                if full or pre:
                    bw = _BackwardHook(self, full, pre)
                    bw.record_input_meta(args)
                    args = bw.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            if self._forward_hooks or _global_forward_hooks:
                result = self._run_forward_hooks(args, kwargs, result, called_always)
            if bw is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(f"For backward hooks to be called, module output should be a Tensor or a tuple of "
                                  f"Tensors but received {type(result)}", stacklevel=3)
                result = bw.setup_output_hook(result)
            if nonfull:
                _register_nonfull_hooks(self, nonfull, result)
            return result
        except Exception:
            self._run_always_called_hooks(args, kwargs, result, called_always)
            raise

    def _run_forward_pre_hooks(self, args, kwargs):
        with_kwargs = self._forward_pre_hooks_with_kwargs
        for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hook_id in with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        return args, kwargs

    def _run_forward_hooks(self, args, kwargs, result, called_always):
        for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                called_always.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        return result

    def _run_always_called_hooks(self, args, kwargs, result, called_always):
        """After forward raised: the always_call forward hooks that did not run yet (their errors only warn)."""
        pending = [(i, h, False) for i, h in _global_forward_hooks.items() if i in _global_forward_hooks_always_called]
        pending += [(i, h, True) for i, h in self._forward_hooks.items() if i in self._forward_hooks_always_called]
        for hook_id, hook, local in pending:
            if hook_id in called_always:
                continue
            try:
                if local and hook_id in self._forward_hooks_with_kwargs:
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
            except Exception as e:  # noqa: BLE001 - silenced like torch: forward's error is raised
                kind = "module" if local else "global module"
                warnings.warn(f"{kind} forward hook with ``always_call=True`` raised an exception that was silenced "
                              f"as another error was raised in forward: {e}", stacklevel=3)

    def _get_backward_hooks(self):
        full, nonfull = [], []
        if _hooks._global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        elif _hooks._global_is_full_backward_hook is False:
            nonfull += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            nonfull += self._backward_hooks.values()
        return full, nonfull

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # ----- hook registration -----

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Same as `torch.nn.Module.register_forward_pre_hook`."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Same as `torch.nn.Module.register_forward_hook`."""
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Same as `torch.nn.Module.register_full_backward_pre_hook`."""
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Same as `torch.nn.Module.register_full_backward_hook`."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """Same as `torch.nn.Module.register_backward_hook` (deprecated: hooks the grad_fn of the output)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """Same as `torch.nn.Module.register_state_dict_post_hook`: hook(module, state_dict, prefix, metadata)."""
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook):
        """Same as `torch.nn.Module.register_state_dict_pre_hook`: hook(module, prefix, keep_vars)."""
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = _WithModule(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """Same as `torch.nn.Module.register_load_state_dict_pre_hook`."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """Same as `torch.nn.Module.register_load_state_dict_post_hook`: hook(module, incompatible_keys)."""
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ----- registration -----

    def register_buffer(self, name, tensor, persistent=True):
        """Same as `torch.nn.Module.register_buffer`."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (torch Tensor or None "
                            f"required)")
        for hook in _global_buffer_registration_hooks.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Same as `torch.nn.Module.register_parameter`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None:
            if not isinstance(param, Parameter):
                raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                                f"(torch.nn.Parameter or None required)")
            if param._grad_fn is not None:
                raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                                 f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                                 f"the value in the forward() method.")
            for hook in _global_parameter_registration_hooks.values():
                out = hook(self, name, param)
                if out is not None:
                    param = out
        self._parameters[name] = param

    def add_module(self, name, module):
        """Same as `torch.nn.Module.add_module`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name, module):
        """Same as `torch.nn.Module.register_module`: an alias of add_module."""
        self.add_module(name, module)

    # ----- attribute protocol (NOTE [ Attribute mirror ]) -----

    def __getattr__(self, name):
        # only reached when the mirror lacks the name; the registries are still consulted, as torch does
        d = self.__dict__
        for reg in _REGISTRIES:
            r = d.get(reg)
            if r is not None and name in r:
                return r[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' (torch.nn.Parameter or "
                                f"None expected)")
            self.register_parameter(name, value)
        else:
            self._setattr_other(d, name, value)

    def _setattr_other(self, d, name, value):
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, self._parameters, self._buffers)
            self._set_module(modules, name, value)
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (torch.nn.Module or "
                                f"None expected)")
            self._set_module(modules, name, value)
        else:
            buffers = d.get("_buffers")
            if _is_buffer_value(value) or (buffers is not None and name in buffers):
                if value is not None and not isinstance(value, Tensor):
                    raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (torch.nn.Buffer, "
                                    f"torch.Tensor or None expected)")
                if _is_buffer_value(value):
                    persistent = value.persistent
                else:
                    persistent = name not in self._non_persistent_buffers_set
                self.register_buffer(name, value, persistent)
            elif name in _REGISTRIES and "_parameters" in d:
                _install_registry(self, name, value)
            else:
                object.__setattr__(self, name, value)

    def _forget(self, name, *registries):
        """Drop name from the plain attributes and the given registries before registering it anew."""
        d = self.__dict__
        for r in registries:
            if name in r:
                del r[name]
        if name in d and name not in d["_parameters"] and name not in d["_buffers"] and name not in d["_modules"]:
            del d[name]
        d["_non_persistent_buffers_set"].discard(name)

    def _set_module(self, modules, name, value):
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, value)
            if out is not None:
                value = out
        modules[name] = value

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted({k for k in keys if not k[0].isdigit()})

    def __getstate__(self):
        state = self.__dict__.copy()
        for reg in _REGISTRIES:
            r = state.get(reg)
            if r is not None:
                _unmirror(state, r)
                state[reg] = dict(r)
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state):
        d = self.__dict__
        d.update(state)
        defaults = (("_forward_pre_hooks", OrderedDict), ("_forward_pre_hooks_with_kwargs", OrderedDict),
                    ("_forward_hooks_with_kwargs", OrderedDict), ("_forward_hooks_always_called", OrderedDict),
                    ("_state_dict_hooks", OrderedDict), ("_state_dict_pre_hooks", OrderedDict),
                    ("_load_state_dict_pre_hooks", OrderedDict), ("_load_state_dict_post_hooks", OrderedDict),
                    ("_non_persistent_buffers_set", set), ("_backward_pre_hooks", OrderedDict))
        for name, make in defaults:
            if name not in d:
                d[name] = make()
        d.setdefault("_is_full_backward_hook", None)
        for reg in _REGISTRIES:
            d[reg] = _Registry(self, d.get(reg) or ())

    # ----- lookup -----

    def get_submodule(self, target):
        """Same as `torch.nn.Module.get_submodule`."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")  # noqa: TRY004 - as torch
        return mod

    def set_submodule(self, target, module, strict=False):
        """Same as `torch.nn.Module.set_submodule`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")  # noqa: TRY004 - as torch
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """Same as `torch.nn.Module.get_parameter`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")  # noqa: TRY004 - as torch
        return param

    def get_buffer(self, target):
        """Same as `torch.nn.Module.get_buffer`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buf = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buf

    def get_extra_state(self):
        """Same as `torch.nn.Module.get_extra_state`: override it (with set_extra_state) to save extra state."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state):
        """Same as `torch.nn.Module.set_extra_state`."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # ----- iteration -----

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else \
            [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """Same as `torch.nn.Module.parameters`."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Same as `torch.nn.Module.named_parameters`."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """Same as `torch.nn.Module.buffers`."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Same as `torch.nn.Module.named_buffers`."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix, recurse=recurse,
                                       remove_duplicate=remove_duplicate)

    def children(self):
        """Same as `torch.nn.Module.children`."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """Same as `torch.nn.Module.named_children`."""
        memo = set()
        for name, m in self._modules.items():
            if m is not None and m not in memo:
                memo.add(m)
                yield name, m

    def modules(self, remove_duplicate=True):
        """Same as `torch.nn.Module.modules`."""
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Same as `torch.nn.Module.named_modules`."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # ----- modes and gradients -----

    def train(self, mode=True):
        """Same as `torch.nn.Module.train`."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")  # noqa: TRY004 - as torch
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """Same as `torch.nn.Module.eval`."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Same as `torch.nn.Module.requires_grad_`."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Same as `torch.nn.Module.zero_grad`."""
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p._grad = None
            else:
                if g._grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # ----- conversion -----

    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            prev = GRAD[0]
            GRAD[0] = False  # parameters stay leaves: the conversion is not recorded
            try:
                applied = fn(param)
                grad = param._grad
                grad_applied = fn(grad) if grad is not None else None
            finally:
                GRAD[0] = prev
            _set_data(param, applied)
            if grad is not None:
                _set_data(grad, grad_applied)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Same as `torch.nn.Module.apply`: fn on every submodule (children first), then self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Same as `torch.nn.Module.to`: parameters keep their identity (their data is swapped in place)."""
        kwargs = dict(kwargs)
        fmt = kwargs.pop("memory_format", None)
        if fmt is not None and not isinstance(fmt, _memory_format):
            from ..._ops.unary import py_typename
            raise TypeError(f"to() received an invalid combination of arguments - got (memory_format="
                            f"{py_typename(fmt)}, ), but expected one of:\n" + _TO_SIGNATURES)
        device, dtype, non_blocking, _ = _parse_to(None, args, kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers. Please file an issue at https://github.com/pytorch/pytorch/issues/new?"
                              "template=bug-report.yml if a complex module does not work as expected.", stacklevel=2)

        def convert(t):
            dt = dtype if t.is_floating_point() or t.is_complex() else None
            if fmt is not None and t.dim() in (4, 5):  # as torch: only 4-D and 5-D tensors change layout
                return t.to(device=device, dtype=dt, non_blocking=non_blocking, memory_format=fmt)
            return t.to(device=device, dtype=dt, non_blocking=non_blocking)
        return self._apply(convert)

    def share_memory(self):
        """Same as `torch.nn.Module.share_memory`: parameters and buffers move into shared memory."""
        return self._apply(lambda t: t.share_memory_())

    def cuda(self, device=None):
        """Same as `torch.nn.Module.cuda`."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        """Same as `torch.nn.Module.cpu`."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        """Same as `torch.nn.Module.type`."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Same as `torch.nn.Module.float`."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Same as `torch.nn.Module.double`."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Same as `torch.nn.Module.half`."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Same as `torch.nn.Module.bfloat16`."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def to_empty(self, *, device, recurse=True):
        """Same as `torch.nn.Module.to_empty`."""
        from ..._ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)


    # ----- state_dict -----

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        nonpersistent = self._non_persistent_buffers_set
        for name, b in self._buffers.items():
            if b is not None and name not in nonpersistent:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Same as `torch.nn.Module.state_dict`."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/"
                          "docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details.",
                          FutureWarning, stacklevel=2)
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            res = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if res is not None:
                    destination = res
            elif res is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Check this module's own entries of state_dict and copy them (deferred, see NOTE [ Atomic
        load_state_dict ]); submodules are handled by their own call."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        nonpersistent = self._non_persistent_buffers_set
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), self._buffers.items())
                       if v is not None and not (k in nonpersistent and k in self._buffers)}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            self._load_one(name, key, param, state_dict[key], assign, error_msgs)
        self._load_extra_state(state_dict, prefix, strict, missing_keys, unexpected_keys)
        if strict:
            extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    if (head[0] not in self._modules) if len(head) > 1 else (head[0] not in local_state):
                        unexpected_keys.append(key)

    def _load_one(self, name, key, param, value, assign, error_msgs):
        if not isinstance(value, Tensor):
            error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                              f'object from checkpoint but received {type(value)}')
            return
        if param._data.ndim == 0 and value._data.shape == (1,):  # checkpoints from torch 0.3
            value = value[0]
        if value._data.shape != param._data.shape:
            error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                              f"the shape in current model is {param.shape}.")
            return
        if assign:
            _defer(lambda: self._assign(name, param, value))
        else:
            _defer(lambda: _copy_into(param, value))

    def _assign(self, name, param, value):
        if isinstance(param, Parameter):
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=param._requires_grad)
            else:
                value.requires_grad_(param._requires_grad)
        setattr(self, name, value)

    def _load_extra_state(self, state_dict, prefix, strict, missing_keys, unexpected_keys):
        key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if key in state_dict:
                value = state_dict[key]
                _defer(lambda: self.set_extra_state(value))
            elif strict:
                missing_keys.append(key)
        elif strict and key in state_dict:
            unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Same as `torch.nn.Module.load_state_dict`, except that a failed load leaves the module unchanged (torch
        may have copied some tensors by then)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        outer = _PENDING[0]
        _PENDING[0] = pending = []
        try:
            self._load_tree(state_dict, "", metadata, assign, missing, unexpected, errors)
        finally:
            _PENDING[0] = outer
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                     "\n\t".join(errors)))
        for action in pending:
            action()
        return _IncompatibleKeys(missing, unexpected)

    def _load_tree(self, local_state_dict, prefix, metadata, assign, missing, unexpected, errors):
        local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
        if assign:
            local_metadata["assign_to_params_buffers"] = assign
        self._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing, unexpected, errors)
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                child_sd = {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)}
                child._load_tree(child_sd, child_prefix, metadata, assign, missing, unexpected, errors)
        keys = _IncompatibleKeys(missing, unexpected)
        for hook in self._load_state_dict_post_hooks.values():
            if hook(self, keys) is not None:
                raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not expected "
                                     "to return new values, if incompatible_keys need to be modified, it should be "
                                     "done inplace.")

    # ----- printing -----

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """Same as `torch.nn.Module.extra_repr`: the text inside the parentheses of this module's repr."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _check_name(module, name, kind, registry):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\"")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")
    if hasattr(module, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


# the copies a running load_state_dict has checked and will make once nothing failed (None: copy at once)
_PENDING = [None]


def _defer(action):
    pending = _PENDING[0]
    if pending is None:
        action()
    else:
        pending.append(action)
