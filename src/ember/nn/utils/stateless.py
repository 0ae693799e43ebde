"""functional_call: run a module with some of its parameters and buffers replaced for the duration of one call."""
import warnings
from collections.abc import Sequence

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Extend the mapping to every name of a tied tensor when one of its names is given."""
    names_of = {}  # id(tensor) -> the names it is registered under
    for name, t in (*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)):
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given_tied = [n for n in parameters_and_buffers if n in tied]
    for name in given_tied:
        names = tied[name]
        values = {id(parameters_and_buffers[n]) for n in names if n in parameters_and_buffers}
        if len(names.intersection(given_tied)) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. Consider "
                             f"using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given_tied:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


def _swap_tensor(module, name, tensor):
    """Put tensor (or nothing, for _MISSING) under module.name; returns what was there."""
    if tensor is not _MISSING and not isinstance(tensor, Tensor):
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    for reg in (module._parameters, module._buffers):
        if name in reg:
            orig = reg[name]
            if tensor is _MISSING:
                del reg[name]
            else:
                reg[name] = tensor
            return orig
    orig = getattr(module, name, _MISSING)
    if orig is not _MISSING and not isinstance(orig, Tensor):
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif orig is not _MISSING:
        delattr(module, name)
    return orig


def _swap_all(module, mapping):
    swapped = {}
    for name, tensor in mapping.items():
        prefix, _, attr = name.rpartition(".")
        swapped[name] = _swap_tensor(module.get_submodule(prefix), attr, tensor)
    return swapped


def _check_keys(module, keys):
    valid = {n for n, _ in (*module.named_parameters(remove_duplicate=False),
                            *module.named_buffers(remove_duplicate=False))}
    keys = set(keys)
    missing, unexpected = sorted(valid - keys), sorted(keys - valid)
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(), "\n\t".join(msgs)))


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    mapping = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        _check_keys(module, mapping)
    orig = {}
    try:
        orig = _swap_all(module, mapping)
        return module(*args, **kwargs)
    finally:
        new = _swap_all(module, orig)
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Same as `torch.nn.utils.stateless.functional_call` (deprecated in favor of torch.func.functional_call)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
                  "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _func_functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                          strict=False):
    """torch.func.functional_call: also takes a sequence of dicts (with no key in two of them)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        mapping = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        mapping = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "  # noqa: TRY004
                         f"{type(parameter_and_buffer_dicts)}")
    return _functional_call(module, mapping, args, kwargs, tie_weights=tie_weights, strict=strict)
