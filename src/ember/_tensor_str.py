"""Printing tensors like torch does."""
import numpy as np

from ._dtype import FROM_NP, get_default_dtype

__all__ = ["tensor_repr", "legacy_type_name", "set_printoptions"]

SCALAR_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def legacy_type_name(t):
    """'ember.FloatTensor', 'ember.cuda.FloatTensor'..., as torch's Tensor.type() reports."""
    prefix = "ember." if t.device.type == "cpu" else "ember.cuda."
    return prefix + SCALAR_NAMES[FROM_NP[t._data.dtype].name] + "Tensor"


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Same as `torch.set_printoptions`."""


def tensor_repr(t):
    d = t._data
    if d.__class__ is not np.ndarray:
        d = d.get()
    if d.dtype.kind == "V":
        d = d.astype(np.float32)
    body = np.array2string(d, separator=", ", prefix="tensor(")
    parts = [body]
    dt = FROM_NP[t._data.dtype]
    if t.device.type != "cpu":
        parts.append(f"device='{t.device}'")
    if dt not in (get_default_dtype(),) and dt.name not in ("int64", "bool") and not (
            dt.is_complex and dt.name == "complex64"):
        parts.append(f"dtype={dt}")
    if t._grad_fn is not None:
        parts.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        parts.append("requires_grad=True")
    return "tensor(" + ", ".join(parts) + ")"
