"""nn.utils.parametrize: tensors of a module computed from `original` tensors by a chain of modules.

NOTE [ Parametrized attribute ]
As torch does, registering the first parametrization on a module swaps the module's class for a generated subclass
`Parametrized<Name>` that carries one property per parametrized tensor; the property recomputes the tensor on each
read (or serves it from the `cached()` cache) and runs `right_inverse` on assignment. A property is a data
descriptor, so it wins over the instance `__dict__` that Module mirrors registered values into (NOTE [ Attribute
mirror ] in module.py); the parameter itself is deleted from the module (and from the mirror) and lives on as
`module.parametrizations.<name>.original`, so state_dict keys are torch's.
"""
import collections.abc
import copy

from ..._tensor import Tensor
from ...autograd.grad_mode import GRAD
from ...autograd.graph import bump_version
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import _set_data
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization", "remove_parametrizations",
           "transfer_parametrizations_and_params", "type_before_parametrizations"]

_cache_enabled = 0
_cache = {}


class cached:
    """Same as `torch.nn.utils.parametrize.cached`: inside it, each parametrized tensor is computed once."""
    __slots__ = ()

    def __enter__(self):
        global _cache_enabled
        _cache_enabled += 1

    def __exit__(self, *exc):
        global _cache_enabled
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()
        return False


class _no_grad:
    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = GRAD[0]
        GRAD[0] = False

    def __exit__(self, *exc):
        GRAD[0] = self.prev
        return False


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest, src):
    """dest.set_(src): dest keeps its identity and now shares src's memory (and shape, dtype)."""
    _set_data(dest, src)
    bump_version(dest, "set_")


class ParametrizationList(ModuleList):
    """Same as `torch.nn.utils.parametrize.ParametrizationList`."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with _no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "  # noqa: TRY004
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            self._init_one(original, new)
        else:
            self._init_many(original, new)
        if not self.unsafe:
            self._check_forward(original_shape, original_dtype)

    def _init_one(self, original, new):
        if original.dtype != new.dtype:
            raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                             f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
        if original.device != new.device:
            raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the device.\n"
                             f"original.device: {original.device}\nright_inverse(original).device: {new.device}")
        with _no_grad():
            _maybe_set(original, new)
        _register_parameter_or_buffer(self, "original", original)

    def _init_many(self, original, new):
        for i, originali in enumerate(new):
            if not isinstance(originali, Tensor):
                raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "  # noqa: TRY004
                                 f"Got element {i} of the sequence with type {type(originali).__name__}.")
            if isinstance(original, Parameter):
                originali = Parameter(originali, original.requires_grad)
            originali.requires_grad_(original.requires_grad)
            _register_parameter_or_buffer(self, f"original{i}", originali)

    def _check_forward(self, original_shape, original_dtype):
        z = self()
        if not isinstance(z, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")  # noqa: TRY004
        if z.dtype != original_dtype:
            raise ValueError(f"Registering a parametrization may not change the dtype of the tensor, unless `unsafe` "
                             f"flag is enabled.\nunparametrized dtype: {original_dtype}\nparametrized dtype: "
                             f"{z.dtype}")
        if z.shape != original_shape:
            raise ValueError(f"Registering a parametrization may not change the shape of the tensor, unless `unsafe` "
                             f"flag is enabled.\nunparametrized shape: {original_shape}\nparametrized shape: "
                             f"{z.shape}")

    def right_inverse(self, value):
        """Same as `torch.nn.utils.parametrize.ParametrizationList.right_inverse`: sets the originals from value."""
        with _no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                                     f"`original` has dtype {self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                self._set_many(value)

    def _set_many(self, value):
        if not isinstance(value, collections.abc.Sequence):
            raise ValueError(f"'right_inverse' must return a sequence of tensors. Got {type(value).__name__}.")  # noqa: TRY004
        if len(value) != self.ntensors:
            raise ValueError(f"'right_inverse' must return a sequence of tensors of length {self.ntensors}. Got a "
                             f"sequence of length {len(value)}.")
        for i, tensor in enumerate(value):
            original_i = getattr(self, f"original{i}")
            if not isinstance(tensor, Tensor):
                raise ValueError(f"'right_inverse' must return a sequence of tensors or reference-type opaques. Got "  # noqa: TRY004
                                 f"element {i} of type {type(tensor).__name__}.")
            if original_i.dtype != tensor.dtype:
                raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} while "
                                 f"`original{i}` has dtype {original_i.dtype}")
            _maybe_set(original_i, tensor)

    def forward(self):
        mods = self._modules
        if self.is_tensor:
            x = mods["0"](self.original)
        else:
            x = mods["0"](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for i in range(1, len(mods)):
            x = mods[str(i)](x)
        return x


# ----- the generated subclass (NOTE [ Parametrized attribute ]) -----

def _parametrized_getstate(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(). See:\n"
                       "https://pytorch.org/tutorials/beginner/saving_loading_models.html"
                       "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _parametrized_deepcopy(self, memo):
    # the state as the original class pickles it (registries without their mirror), rebuilt on the replica
    obj = memo.get(id(self))
    if obj is not None:
        return obj
    base = type(self).__bases__[0]
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    base.__setstate__(replica, copy.deepcopy(base.__getstate__(self), memo))
    return replica


def _inject_new_class(module):
    cls = module.__class__
    dct = {"__getstate__": _parametrized_getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = _parametrized_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")
    key = (id(module), tensor_name)

    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        tensor = _cache.get(key)
        if tensor is None:
            tensor = _cache[key] = parametrization()
        return tensor

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def _check_appended(module, tensor_name, parametrization):
    """The checks torch runs before appending a parametrization to a tensor that already has some."""
    y = getattr(module, tensor_name)
    x = parametrization(y)
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")  # noqa: TRY004
    if x.dtype != y.dtype:
        raise ValueError(f"Registering a parametrization may not change the dtype of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
                         f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
    if x.shape != y.shape:
        raise ValueError(f"Registering a parametrization may not change the shape of the tensor, unless the `unsafe` "
                         f"flag is enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
                         f"parametrization(module.{tensor_name}).shape: {x.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        z = parametrization.right_inverse(x)
    except NotImplementedError:
        return
    if not isinstance(z, Tensor):
        raise ValueError(f"parametrization.right_inverse must return a tensor. Got: {type(z).__name__}")  # noqa: TRY004
    head = "The tensor returned by parametrization.right_inverse must have the same {} as module." + tensor_name + \
        ", unless the `unsafe` flag is enabled.\nmodule." + tensor_name + ".{}: {}\nreturned {}: {}"
    if z.dtype != y.dtype:
        raise ValueError(head.format("dtype", "dtype", y.dtype, "dtype", z.dtype))
    if z.shape != y.shape:
        raise ValueError(head.format("shape", "shape", y.shape, "shape", z.shape))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Same as `torch.nn.utils.parametrize.register_parametrization`."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_appended(module, tensor_name, parametrization)
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with name "
                         f"'{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Same as `torch.nn.utils.parametrize.is_parametrized`."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Same as `torch.nn.utils.parametrize.remove_parametrizations`."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with _no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in "
                         "terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """Same as `torch.nn.utils.parametrize.type_before_parametrizations`."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Same as `torch.nn.utils.parametrize.transfer_parametrizations_and_params`."""
    if not is_parametrized(from_module):
        return to_module
    names = from_module.parametrizations if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        src = from_module.parametrizations[name]
        for param_func in src:
            register_parametrization(to_module, name, param_func)
        dst = to_module.parametrizations[name]
        if hasattr(src, "original"):
            dst.original = src.original
        else:
            i = 0
            while hasattr(src, f"original{i}"):
                setattr(dst, f"original{i}", getattr(src, f"original{i}"))
                i += 1
    return to_module
