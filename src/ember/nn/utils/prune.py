"""Same as `torch.nn.utils.prune`: pruning a module's parameter `name` replaces it by the parameter `name + "_orig"`
and the buffer `name + "_mask"`; a forward pre-hook (the pruning method itself) recomputes
`name = name_orig * name_mask` before each forward, so gradients reach `name_orig` and are zero where masked.

NOTE [ Iterative pruning ]
A module holds at most one pruning hook per parameter. Pruning an already pruned parameter again wraps the old
method and the new one in a `PruningContainer`, whose mask starts from the current mask and lets the newest method
act only on what is still unpruned: the unpruned entries (unstructured), the channels not yet all zero
(structured), or the whole tensor (global)."""
import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ..._dtype import contiguous_format
from ..._ops.creation import ones_like, zeros_like
from ..._ops.random import rand, rand_like
from ..._ops.sort import kthvalue, topk
from ..._ops.stats import norm
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured", "PruningContainer",
           "RandomStructured", "RandomUnstructured", "custom_from_mask", "global_unstructured", "identity",
           "is_pruned", "l1_unstructured", "ln_structured", "random_structured", "random_unstructured", "remove"]


def _scores(importance_scores, t, what):
    """The scores a mask is computed from: t itself unless importance_scores (of t's shape) are given."""
    if importance_scores is None:
        return t
    if importance_scores.shape != t.shape:
        raise AssertionError(f"importance_scores should have the same shape as {what}, "
                             f"got {importance_scores.shape} vs {t.shape}")
    return importance_scores


class BasePruningMethod(ABC):
    """Same as `torch.nn.utils.prune.BasePruningMethod`."""

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """Same as `torch.nn.utils.prune.BasePruningMethod.compute_mask`."""

    def apply_mask(self, module):
        """Same as `torch.nn.utils.prune.BasePruningMethod.apply_mask`: name_mask * name_orig."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Same as `torch.nn.utils.prune.BasePruningMethod.apply`; a failure leaves the module as it was."""
        old_key, old = _find_hook(module, name)
        method = cls(*args, **kwargs)
        method._tensor_name = name
        orig = getattr(module, name)
        importance_scores = _scores(importance_scores, orig, f"parameter {name} of {module}")
        if old is None:
            default_mask = ones_like(orig)
            container = None
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=contiguous_format)
            container = old if isinstance(old, PruningContainer) else PruningContainer(old)
            container.add_pruning_method(method)
        computing = method if container is None else container
        try:
            mask = computing.compute_mask(importance_scores, default_mask=default_mask)
        except Exception:
            if old is not None and container is old:
                old._pruning_methods = old._pruning_methods[:-1]
            raise
        if old is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        else:
            del module._forward_pre_hooks[old_key]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, computing.apply_mask(module))
        module.register_forward_pre_hook(computing)
        return computing

    def prune(self, t, default_mask=None, importance_scores=None):
        """Same as `torch.nn.utils.prune.BasePruningMethod.prune`: t with this method's mask applied."""
        importance_scores = _scores(importance_scores, t, "tensor t")
        if default_mask is None:
            default_mask = ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module):
        """Same as `torch.nn.utils.prune.BasePruningMethod.remove`: name becomes the pruned values, as a parameter."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        name = self._tensor_name
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters[name + "_orig"]
        orig.data = weight.data
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _find_hook(module, name):
    """The key and pruning hook acting on parameter `name` of `module`, or (None, None)."""
    found = [(k, h) for k, h in module._forward_pre_hooks.items()
             if isinstance(h, BasePruningMethod) and h._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             f"Use a PruningContainer.")
    return found[0] if found else (None, None)


class PruningContainer(BasePruningMethod):
    """Same as `torch.nn.utils.prune.PruningContainer`: the sequence of methods applied to one parameter."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
            return
        methods = args[0] if len(args) == 1 else args
        for method in methods:
            if self._tensor_name is None:
                self._tensor_name = method._tensor_name
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Same as `torch.nn.utils.prune.PruningContainer.add_pruning_method`."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """Same as `torch.nn.utils.prune.PruningContainer.compute_mask`: the newest method's mask, computed on the
        part of t that default_mask leaves (NOTE [ Iterative pruning ])."""
        method = self._pruning_methods[-1]
        slc = _unpruned_part(method, t, default_mask)
        new_mask = default_mask.to(dtype=t.dtype)
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


def _unpruned_part(method, t, mask):
    """The index selecting what `method` may still prune in t, given the current mask."""
    kind = method.PRUNING_TYPE
    if kind == "unstructured":
        return mask == 1
    if kind == "global":
        return (slice(None),) * t.ndim
    if kind != "structured":
        raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
    if not hasattr(method, "dim"):
        raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` defined.')
    nd = t.ndim
    dim = method.dim + nd if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {nd}")
    # the channels along dim not yet entirely zeroed
    keep = mask.sum(dim=[d for d in range(nd) if d != dim]) != 0
    return tuple(keep if d == dim else slice(None) for d in range(nd))


class Identity(BasePruningMethod):
    """Same as `torch.nn.utils.prune.Identity`: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Same as `torch.nn.utils.prune.Identity.apply`."""
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes `amount` single entries: those `_pruned(t, k)` picks among the flattened t."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _nparams_toprune(self.amount, t.numel())
        mask = default_mask.clone(memory_format=contiguous_format)
        if k != 0:
            mask.view(-1)[self._pruned(t, k)] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Same as `torch.nn.utils.prune.RandomUnstructured`: prunes `amount` entries chosen at random."""

    @staticmethod
    def _pruned(t, k):
        return topk(rand_like(t).view(-1), k=k).indices

    @classmethod
    def apply(cls, module, name, amount):
        """Same as `torch.nn.utils.prune.RandomUnstructured.apply`."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Same as `torch.nn.utils.prune.L1Unstructured`: prunes the `amount` entries of smallest magnitude."""

    @staticmethod
    def _pruned(t, k):
        return topk(t.abs().reshape(-1), k=k, largest=False).indices

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Same as `torch.nn.utils.prune.L1Unstructured.apply`."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Same as `torch.nn.utils.prune.RandomStructured`: zeroes `amount` channels along `dim` chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        nchannels, k = _structured_counts(t, self.amount, self.dim)
        if k == 0:
            return default_mask
        scores = rand(nchannels, device=t.device)
        keep = scores > kthvalue(scores, k=k).values
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Same as `torch.nn.utils.prune.RandomStructured.apply`."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Same as `torch.nn.utils.prune.LnStructured`: zeroes the `amount` channels along `dim` of smallest Ln norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        nchannels, k = _structured_counts(t, self.amount, self.dim)
        if k == 0:
            return default_mask
        keep = topk(_channel_norms(t, self.n, self.dim), k=nchannels - k, largest=True).indices
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Same as `torch.nn.utils.prune.LnStructured.apply`."""
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Same as `torch.nn.utils.prune.CustomFromMask`: prunes where the given mask is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Same as `torch.nn.utils.prune.CustomFromMask.apply`."""
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Same as `torch.nn.utils.prune.identity`."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Same as `torch.nn.utils.prune.random_unstructured`."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Same as `torch.nn.utils.prune.l1_unstructured`."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Same as `torch.nn.utils.prune.random_structured`."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Same as `torch.nn.utils.prune.ln_structured`."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Same as `torch.nn.utils.prune.global_unstructured`: one unstructured method over all (module, name) pairs
    concatenated, each then pruned with its slice of the mask."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    if importance_scores is None:
        importance_scores = {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    parameters = list(parameters)
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    default_mask = parameters_to_vector([getattr(m, n + "_mask", ones_like(getattr(m, n))) for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container = PruningContainer(method)
    final_mask = container.compute_mask(scores, default_mask)
    start = 0
    for module, name in parameters:
        param = getattr(module, name)
        stop = start + param.numel()
        custom_from_mask(module, name, mask=final_mask[start:stop].view_as(param))
        start = stop


def custom_from_mask(module, name, mask):
    """Same as `torch.nn.utils.prune.custom_from_mask`."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Same as `torch.nn.utils.prune.remove`: makes the pruning of `name` permanent and drops the hook."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module):
    """Same as `torch.nn.utils.prune.is_pruned`: whether module or a submodule holds a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, m in module.named_modules() for hook in m._forward_pre_hooks.values())


def _validate_pruning_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (amount < 0 if isinstance(amount, numbers.Integral) else not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _nparams_toprune(amount, tensor_size):
    """amount as a count (an int) or a fraction of tensor_size (a float), checked against tensor_size."""
    if not isinstance(amount, numbers.Integral):
        return round(amount * tensor_size)
    if amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")
    return amount


def _structured_counts(t, amount, dim):
    """(channels along dim, channels to prune), after torch's checks on t and dim."""
    if t.ndim <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. Found tensor of "
                         f"shape {t.shape} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    nchannels = t.shape[dim]
    return nchannels, _nparams_toprune(amount, nchannels)


def _channel_norms(t, n, dim):
    """The n-norm of each slice of t along dim."""
    dims = list(range(t.ndim))
    del dims[dim]
    return norm(t, p=n, dim=dims)


def _channel_mask(t, dim, channels):
    """Ones in the channels along dim that `channels` (a bool mask or indices) selects, zeros elsewhere."""
    mask = zeros_like(t)
    mask[tuple(channels if d == dim % t.ndim else slice(None) for d in range(t.ndim))] = 1
    return mask

