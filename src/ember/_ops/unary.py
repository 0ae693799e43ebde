"""Elementwise unary math."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._dispatch import SAVE_INPUTS, SAVE_NONE, SAVE_OUTPUT, Op, dispatch1
from ._inplace import make_inplace, write_out

__all__ = ["neg", "negative", "exp"]


def _float_input(x):
    """Integer and bool inputs of float-valued functions compute in the default float dtype, as torch does."""
    return x.to(_dtype.get_default_dtype()) if x._data.dtype.kind in "biu" else x


def define(name, fwd, bwd, save=SAVE_INPUTS, floating=True, method=True, inplace=True, aliases=(), node_name=None):
    """Bind an elementwise unary op as ember.<name>, Tensor.<name> and Tensor.<name>_.

    floating=True: integer inputs are computed in the default float dtype (exp, sin, ...).
    """
    op = Op(name, fwd, bwd, save, node_name=node_name)

    if floating:
        def fn(input, *, out=None):
            r = dispatch1(op, input if input._data.dtype.kind not in "biu" else _float_input(input))
            return r if out is None else write_out(r, out, name)
    else:
        def fn(input, *, out=None):
            r = dispatch1(op, input)
            return r if out is None else write_out(r, out, name)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Same as `torch.{name}`."
    if method:
        setattr(Tensor, name, fn)
    if inplace:
        setattr(Tensor, name + "_", make_inplace(fn, name + "_"))
    for alias in aliases:
        if method:
            setattr(Tensor, alias, fn)
        if inplace:
            setattr(Tensor, alias + "_", getattr(Tensor, name + "_"))
    return op, fn


NEG, neg = define("neg", np.negative, lambda ctx, g: -g, save=SAVE_NONE, floating=False, aliases=("negative",))
negative = neg
EXP, exp = define("exp", np.exp, lambda ctx, g: g * ctx.output.conj() if ctx.output.is_complex() else g * ctx.output,
                  save=SAVE_OUTPUT)

Tensor.__neg__ = neg
Tensor.__pos__ = lambda self: self
