"""ember.utils.dlpack: same as torch.utils.dlpack."""
from .._backend.dlpack import DLDeviceType, _array_from_capsule

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


def to_dlpack(tensor):
    """Same as `torch.utils.dlpack.to_dlpack`: a DLPack capsule sharing the tensor's memory."""
    return tensor.__dlpack__()


def from_dlpack(ext_tensor):
    """Same as `torch.utils.dlpack.from_dlpack`: a tensor sharing memory with a DLPack producer or a CPU capsule."""
    if type(ext_tensor).__name__ == "PyCapsule":
        from .._tensor import Tensor
        return Tensor._make(_array_from_capsule(ext_tensor))
    from .._ops.creation import from_dlpack as _from
    return _from(ext_tensor)
