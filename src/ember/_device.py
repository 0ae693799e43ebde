"""device objects: 'cpu', 'cuda', 'cuda:1'."""

__all__ = ["device"]

_TYPES = ("cpu", "cuda")
# the device types torch's parser names when it rejects a device string
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, "
                 "meta, hpu, mtia, privateuseone")


class device:
    """Same as `torch.device`."""
    __slots__ = ("type", "index")

    def __new__(cls, type, index=None):
        if isinstance(type, device):
            return type
        if isinstance(type, int) and index is None:
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments: got {type!r}")
        if ":" in type:
            if index is not None:
                raise ValueError(f"type (string) must not include an index because index was passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _TYPES:
            # a type torch knows but ember does not run on gets the list ember supports
            known = "cpu, cuda" if type in _DEVICE_TYPES.split(", ") else _DEVICE_TYPES
            raise RuntimeError(f"Expected one of {known} device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        if type == "cpu" and index is None:
            return CPU
        self = object.__new__(cls)
        self.type = type
        self.index = index
        return self

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        DEFAULT_DEVICES.append(self)
        return self

    def __exit__(self, *exc):
        DEFAULT_DEVICES.pop()


CPU = object.__new__(device)
CPU.type, CPU.index = "cpu", None


# where factory functions put tensors when no device is given: the innermost `with device(...)` or
# set_default_device's device (the last entry); empty means the CPU
DEFAULT_DEVICES = []
