"""nn modules: padding layers."""
from .._functional.padding import pad
from .module import Module

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]


def _padding(padding, n):
    """An int pads every side; a tuple is F.pad's (last dim first) and must have 2n entries."""
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * (2 * n)


class _ConstantPadNd(Module):
    _nd = 0

    def __init__(self, padding, value):
        super().__init__()
        self.padding = _padding(padding, self._nd)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ModePadNd(Module):
    _nd = 0
    _mode = ""

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding(padding, self._nd)

    def forward(self, input):
        return pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ConstantPad1d(_ConstantPadNd):
    """Same as `torch.nn.ConstantPad1d`."""
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Same as `torch.nn.ConstantPad2d`."""
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Same as `torch.nn.ConstantPad3d`."""
    _nd = 3


class ZeroPad1d(ConstantPad1d):
    """Same as `torch.nn.ZeroPad1d`."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Same as `torch.nn.ZeroPad2d`."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    """Same as `torch.nn.ZeroPad3d`."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePadNd):
    """Same as `torch.nn.ReflectionPad1d`."""
    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_ModePadNd):
    """Same as `torch.nn.ReflectionPad2d`."""
    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_ModePadNd):
    """Same as `torch.nn.ReflectionPad3d`."""
    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_ModePadNd):
    """Same as `torch.nn.ReplicationPad1d`."""
    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_ModePadNd):
    """Same as `torch.nn.ReplicationPad2d`."""
    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_ModePadNd):
    """Same as `torch.nn.ReplicationPad3d`."""
    _nd, _mode = 3, "replicate"


class CircularPad1d(_ModePadNd):
    """Same as `torch.nn.CircularPad1d`."""
    _nd, _mode = 1, "circular"


class CircularPad2d(_ModePadNd):
    """Same as `torch.nn.CircularPad2d`."""
    _nd, _mode = 2, "circular"


class CircularPad3d(_ModePadNd):
    """Same as `torch.nn.CircularPad3d`."""
    _nd, _mode = 3, "circular"
