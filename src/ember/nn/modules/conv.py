"""nn modules: convolution and transposed convolution."""
import math

import ember

from .. import init
from .._functional import conv as _F
from .._functional.padding import pad as _pad
from ..parameter import Parameter
from .lazy import _LazyConvTransposeXdMixin, _LazyConvXdMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _ntuple(v, n):
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """Shared constructor, initialization and repr of the convolution modules."""
    _nd = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = _reversed_padding(padding, kernel_size, dilation)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(ember.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(ember.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), torch's long-standing default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**{**self.__dict__, "bias": self.bias})


def _reversed_padding(padding, kernel_size, dilation):
    """The F.pad tuple (last dim first) that a non-zeros padding_mode applies before the conv."""
    n = len(kernel_size)
    if isinstance(padding, str):
        out = [0, 0] * n
        if padding == "same":
            for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                total = d * (k - 1)
                out[2 * i] = total // 2
                out[2 * i + 1] = total - total // 2
        return out
    return tuple(p for p in reversed(padding) for _ in range(2))


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        n = self._nd
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
                         padding if isinstance(padding, str) else _ntuple(padding, n), _ntuple(dilation, n), False,
                         (0,) * n, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            input = _pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._fn(input, weight, bias, self.stride, (0,) * self._nd, self.dilation, self.groups)
        return self._fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """Same as `torch.nn.Conv1d`."""
    _nd = 1
    _fn = staticmethod(_F.conv1d)


class Conv2d(_Conv):
    """Same as `torch.nn.Conv2d`."""
    _nd = 2
    _fn = staticmethod(_F.conv2d)


class Conv3d(_Conv):
    """Same as `torch.nn.Conv3d`."""
    _nd = 3
    _fn = staticmethod(_F.conv3d)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        n = self._nd
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n),
                         _ntuple(padding, n), _ntuple(dilation, n), True, _ntuple(output_padding, n), groups, bias,
                         padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return self.output_padding
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                             f"{num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} elements (got "
                             f"{len(output_size)})")
        dilation = dilation if dilation is not None else (1,) * num_spatial_dims
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + dilation[d] * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            if output_size[i] < min_sizes[i] or output_size[i] > max_sizes[i]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_sizes} to {max_sizes} (for an input of {input.size()[2:]})")
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                               self._nd, self.dilation)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                        self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Same as `torch.nn.ConvTranspose1d`."""
    _nd = 1
    _fn = staticmethod(_F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Same as `torch.nn.ConvTranspose2d`."""
    _nd = 2
    _fn = staticmethod(_F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Same as `torch.nn.ConvTranspose3d`."""
    _nd = 3
    _fn = staticmethod(_F.conv_transpose3d)


class LazyConv1d(_LazyConvXdMixin, Conv1d):
    """Same as `torch.nn.LazyConv1d`: in_channels is inferred from the first input; then it becomes a Conv1d."""
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvXdMixin, Conv2d):
    """Same as `torch.nn.LazyConv2d`: in_channels is inferred from the first input; then it becomes a Conv2d."""
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvXdMixin, Conv3d):
    """Same as `torch.nn.LazyConv3d`: in_channels is inferred from the first input; then it becomes a Conv3d."""
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposeXdMixin, ConvTranspose1d):
    """Same as `torch.nn.LazyConvTranspose1d`: in_channels is inferred from the first input."""
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposeXdMixin, ConvTranspose2d):
    """Same as `torch.nn.LazyConvTranspose2d`: in_channels is inferred from the first input."""
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposeXdMixin, ConvTranspose3d):
    """Same as `torch.nn.LazyConvTranspose3d`: in_channels is inferred from the first input."""
    cls_to_become = ConvTranspose3d
