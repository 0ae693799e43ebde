"""parameters_to_vector and vector_to_parameters."""
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """Same as `torch.nn.utils.parameters_to_vector`: the parameters flattened into one (differentiable) vector."""
    from ..._ops.join import cat
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Same as `torch.nn.utils.vector_to_parameters`: each parameter's data becomes a view of its slice of vec."""
    if not isinstance(vec, Tensor):
        from ..modules.module import _typename
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        param.data = vec[pointer:pointer + num_param].view_as(param).data
        pointer += num_param


def _check_param_device(param, old_param_device):
    """The device index of the first parameter (-1 for CPU); raises when a later one is elsewhere."""
    on_gpu = param.device.type == "cuda"
    if old_param_device is None:
        return param.get_device() if on_gpu else -1
    warn = param.get_device() != old_param_device if on_gpu else old_param_device != -1
    if warn:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return old_param_device
