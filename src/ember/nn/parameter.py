"""nn.Parameter and nn.Buffer: tensors that modules register when assigned as attributes."""
import numpy as np

from .._backend import to_device
from .._device import device as _device
from .._tensor import Tensor
from ..autograd.graph import counter

__all__ = ["Buffer", "Parameter", "is_lazy"]


def _empty0():
    from .._ops.creation import empty
    return empty(0)


class Parameter(Tensor):
    """Same as `torch.nn.Parameter`: shares memory and the version counter with `data`, always a leaf."""
    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _empty0()
        elif not isinstance(data, Tensor):
            raise TypeError(f"_make_subclass(): argument 'data' (position 2) must be Tensor, not "
                            f"{type(data).__name__}")
        return _make_param(cls, data, requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(Tensor._make(self._data.copy()), self._requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __reduce_ex__(self, protocol):
        # like torch: data, requires_grad and any user attributes; the gradient is not pickled
        d = self._data if self._data.__class__ is np.ndarray else self._data.get()
        state = dict(self.__dict__) if self.__dict__ else None
        return (_rebuild_parameter, (type(self), np.array(d), str(self.device), self._requires_grad, state))


def _make_param(cls, data, requires_grad):
    # a fresh leaf over data's memory and version counter (built through _make so new Tensor slots are covered)
    t = Tensor._make(data._data).as_subclass(cls)
    t._vc = data._vc or counter(data)
    if requires_grad:
        if data._data.dtype.kind not in "fcV":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _rebuild_parameter(cls, arr, dev, requires_grad, state):
    if dev != "cpu":
        arr = to_device(arr, _device(dev))
    p = _make_param(cls, Tensor._make(arr), requires_grad)
    if state:
        p.__dict__.update(state)
    return p


class _BufferMeta(type):
    # Buffer(...) returns a plain tensor flagged `_is_buffer`; isinstance recognises the flag
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return type.__instancecheck__(cls, instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Same as `torch.nn.Buffer`: a detached tensor marked as a buffer (`persistent` decides state_dict membership)."""
    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _empty0()
        t = data.detach()
        if data._requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t


def is_lazy(param):
    """Same as `torch.nn.parameter.is_lazy` (ember has no uninitialized parameters: always False)."""
    return False
