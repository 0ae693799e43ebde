"""torch's TypeError for a non-Tensor argument, used where a function would otherwise fail on an attribute."""
from ..._tensor import Tensor

__all__ = ["check_tensor", "not_tensor", "type_name"]


def type_name(value):
    """The type name torch prints: numpy's types keep their module (numpy.ndarray), builtins do not (list)."""
    t = type(value)
    return f"numpy.{t.__name__}" if t.__module__ == "numpy" else t.__name__


def not_tensor(fname, arg, position, value):
    return TypeError(f"{fname}(): argument '{arg}' (position {position}) must be Tensor, not {type_name(value)}")


def check_tensor(value, fname, arg="input", position=1):
    if not isinstance(value, Tensor):
        raise not_tensor(fname, arg, position, value)
