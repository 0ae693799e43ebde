"""The legacy `Variable` wrapper: since torch 0.4 every Tensor is a Variable."""
import warnings

from .._tensor import Tensor

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Same as `torch.autograd.Variable`: `Variable(t, requires_grad)` returns a Tensor sharing t's data, detached
    from t's history."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if data is None:
            from .._ops.creation import empty
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        t = data.detach()
        if requires_grad:
            if t._data.dtype.kind not in "fcV":
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            t.requires_grad_(True)
        return t
