"""nn.Parameter and nn.Buffer: tensors that modules register when assigned as attributes."""
import numpy as np

from .._backend import to_device
from .._device import device as _device
from .._tensor import Tensor
from ..autograd.graph import counter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "UninitializedTensorMixin",
           "is_lazy"]


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


class UninitializedTensorMixin:
    """Same as `torch.nn.parameter.UninitializedTensorMixin`: a placeholder of no shape until `materialize`.

    Deviation: torch refuses almost every tensor function on it; ember refuses `shape` and `share_memory_` (other
    ops see an empty tensor)."""
    __slots__ = ()

    def materialize(self, shape, device=None, dtype=None):
        """Same as `torch.nn.parameter.UninitializedTensorMixin.materialize`: new memory of that shape, and the
        object becomes a `cls_to_become` (Parameter or Tensor) in place."""
        from .._ops.creation import empty
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        self._data = empty(shape, device=device, dtype=dtype)._data
        acc = self._accum
        if acc is not None:
            acc._meta = ((self._data.shape, self._data.dtype),)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self._requires_grad,))


def is_lazy(param):
    """Same as `torch.nn.parameter.is_lazy`: whether param is an uninitialized parameter or buffer."""
    return isinstance(param, UninitializedTensorMixin)


def _empty_on(device, dtype):
    from .._ops.creation import empty
    return empty(0, device=device, dtype=dtype)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """Same as `torch.nn.parameter.UninitializedParameter`."""
    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _make_param(cls, _empty_on(device, dtype), requires_grad)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self._requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """Same as `torch.nn.parameter.UninitializedBuffer`."""
    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _empty_on(device, dtype).as_subclass(cls)
        if requires_grad:
            t.requires_grad_(True)
        t.persistent = persistent
        t._is_buffer = True
        return t
