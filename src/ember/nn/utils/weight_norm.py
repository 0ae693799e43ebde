"""Legacy hook-based weight normalization (nn.utils.weight_norm): weight = g * v / ||v||, recomputed before each
forward by a forward pre-hook; parameters `<name>_g` and `<name>_v`."""
import warnings

from ..parameter import Parameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _norm_except_dim(v, pow, dim):
    """torch.norm_except_dim: the pow-norm over every dim but `dim`, kept as size-1 dims; dim=-1 means the norm
    of the whole tensor (a 0-dim tensor)."""
    from ...linalg import vector_norm
    if dim == -1:
        return vector_norm(v, pow)
    nd = v.ndim
    d = dim + nd if dim < 0 else dim
    others = tuple(i for i in range(nd) if i != d)
    if not others:
        return v.abs()
    return vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: v * (g / ||v||), the norm taken over every dim but `dim`."""
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """Same as `torch.nn.utils.weight_norm.WeightNorm`: the forward pre-hook that recomputes the weight."""

    def __init__(self, name, dim):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        from ..parameter import UninitializedParameter
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to run "  # noqa: TRY004
                             "the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Same as `torch.nn.utils.weight_norm` (deprecated: warns FutureWarning, as torch)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Same as `torch.nn.utils.remove_weight_norm`."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")

