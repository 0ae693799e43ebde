"""Helpers shared by the linear algebra op modules (linalg, solve, decomp, norms): LinAlgError, dtype and shape
checks, constants on a tensor's device, small differentiable pieces (conj, mH, pow, diag) and torch's warnings."""
import warnings

import numpy as np

from .. import return_types
from .._backend import XP
from .._dtype import FROM_NP
from .._tensor import Tensor
from .._dtype import SCALAR_NAMES
from ._dispatch import SAVE_INPUTS, SAVE_NONE, Op, dispatch1
from ._inplace import write_out

__all__ = []  # private helpers only

_make = Tensor._make


class LinAlgError(RuntimeError):
    """Same as `torch.linalg.LinAlgError`: a linear algebra routine failed on its input (singular, not
    positive-definite...)."""


LinAlgError.__module__ = "ember.linalg"


def _structseq(name, fields):
    # named tuples ember.return_types does not list yet
    cls = getattr(return_types, name, None)
    return cls if cls is not None else return_types._structseq(name, fields)


# ---------------------------------------------------------------- small helpers
def _type_name(a):
    return SCALAR_NAMES[FROM_NP[a.dtype].name]


_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def _c_name(a):
    return _C_NAMES[FROM_NP[a.dtype].name]


def _shape_str(shape, sep="x"):
    return sep.join(str(s) for s in shape)


def _const(t, arr):
    """A constant tensor (no history) on t's device."""
    d = t._data
    return _make((np if d.__class__ is np.ndarray else XP[d.__class__]).asarray(arr))  # NumPy scalars too


def _mT(t):
    return t.transpose(-2, -1)


CONJ = Op("conj", np.conj, lambda ctx, g: _conj(g), SAVE_NONE, node_name="ConjBackward0")


def _conj(t):
    return dispatch1(CONJ, t) if t._data.dtype.kind == "c" else t


def _mH(t):
    return _conj(t.transpose(-2, -1))


def _pow_bwd(ctx, g):
    x, = ctx.inputs
    p = ctx.attrs[0]
    return g * p * _pow(x, p - 1)


POW = Op("pow", np.power, _pow_bwd, SAVE_INPUTS)


def _pow(t, p):
    """t ** p for a number p, differentiable (used by norm gradients)."""
    return dispatch1(POW, t, p)


def _eye(n, t, m=None):
    return _const(t, np.eye(n, m, dtype=t._data.dtype))


def _tril_mask(t, k=0):
    n, m = t._data.shape[-2:]
    return _const(t, np.tri(n, m, k, dtype=t._data.dtype))


def _triu_mask(t, k=0):
    n, m = t._data.shape[-2:]
    return _const(t, 1 - np.tri(n, m, k - 1, dtype=t._data.dtype))


def _diag_embed(v):
    """A batch of diagonal matrices from a batch of vectors (differentiable)."""
    n = v._data.shape[-1]
    return v.unsqueeze(-1) * _eye(n, v)


def _diag(a):
    """The main diagonals of a batch of square matrices, as a copy (differentiable)."""
    n = a._data.shape[-1]
    return (a * _eye(n, a)).sum(-1)


def _bad_dtype(name, a):
    k = a._data.dtype
    if k.kind == "V" or k == np.float16:
        return RuntimeError(f"{name}: Low precision dtypes not supported. Got {_type_name(a._data)}")
    return RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_type_name(a._data)}")


def _check_float(a, name):
    k = a._data.dtype.kind
    if (k != "f" and k != "c") or a._data.dtype == np.float16:
        raise _bad_dtype(name, a)


def _check_square(a, name, arg="A"):
    d = a._data
    if d.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    if d.shape[-1] != d.shape[-2]:
        raise RuntimeError(f"{name}: {arg} must be batches of square matrices, but they are {d.shape[-2]} by "
                           f"{d.shape[-1]} matrices")


def _check_matrix(a, name, arg="A"):
    if a._data.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def _check_same_dtype(a, b, name, an="A", bn="B"):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"{name}: Expected {an} and {bn} to have the same dtype, but found {an} of type "
                           f"{_type_name(a._data)} and {bn} of type {_type_name(b._data)} instead")


def _out(r, out, name):
    if out is None:
        return r
    if isinstance(r, tuple):
        if len(out) != len(r):
            raise RuntimeError(f"{name}: expected {len(r)} output tensors, got {len(out)}")
        return type(r)(*[write_out(x, o, name) for x, o in zip(r, out)])
    return write_out(r, out, name)


_WARNED = set()


def _warn_once(key, msg):
    # torch warns once per process (TORCH_WARN_ONCE) for its deprecated functions
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(msg, UserWarning, stacklevel=3)


def _batch_prefix(shape, idx):
    return f"(Batch element {idx}): " if len(shape) > 2 else ""


def _mT_np(x):
    return np.swapaxes(x, -1, -2)
