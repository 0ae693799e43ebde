"""Autograd for in-place ops on views.

NOTE [ In-place on a view ]
When an in-place op writes into a view v of base b and a gradient is involved, b's values changed too, so b
gets a new history: b_new = b_old with v's region replaced by the op's result r (the `CopySlices` node). Its
backward sends g outside the region to b's old history and g inside the region to r's history (which itself
leads back, through the op and the view, to b's old history). The view's own history becomes "the region of
b_new" (`AsStridedBackward0`). This is torch's CopySlices scheme, written as two ordinary ops.
"""
import numpy as np

from ._backend import XP
from ._ops._dispatch import SAVE_NONE, Op
from .autograd import graph
from .autograd.graph import _short_name, record

__all__ = ["multi_output_view", "rebase_view", "view_error"]

# NOTE [ In-place checks on views ]
# torch refuses some in-place ops on views, from how the view was made (its CreationMeta): outputs of split/unbind
# (multi-output views), views made in no_grad mode of a base that requires grad, and inputs a custom Function
# returned as-is. ember keeps no such tag for the first two; it reads them from the graph: a fresh view without
# history of a base that requires grad was made in no_grad mode (or before the base's requires_grad_(): torch
# refuses that too, with the leaf message); a view whose chain of view nodes passes a Split/Unbind node is a
# multi-output view. Only views made by view ops count (`_view_ver` set): detach() shares memory without being a
# view, as in torch.
_VIEW_NODES = frozenset({
    "AliasBackward0", "AsStridedBackward0", "DiagonalBackward0", "ExpandBackward0", "NarrowBackward0",
    "PermuteBackward0", "ReshapeAliasBackward0", "SelectBackward0", "SliceBackward0", "SplitBackward0",
    "SplitWithSizesBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "SqueezeBackward3",
    "TBackward0", "TransposeBackward0", "TransposeBackward1", "UnbindBackward0", "UnfoldBackward0",
    "UnsqueezeBackward0", "ViewAsComplexBackward0", "ViewAsRealBackward0", "ViewBackward0",
})
_MULTI_NODES = frozenset({"SplitBackward0", "SplitWithSizesBackward0", "UnbindBackward0"})
_MULTI, _NO_GRAD, _CUSTOM = range(3)
_VIEW_HINTS = (
    (" This view is the output of a function that returns multiple views. Such functions do not allow the output "
     "views to be modified inplace. You should replace the inplace operation by an out-of-place one."),
    (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
     "both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be "
     "tracked) or both outside (if you want the inplace to be tracked)."),
    (" This view was created inside a custom Function (or because an input was returned as-is) and the autograd "
     "logic to handle view+inplace would override the custom backward associated with the custom Function, "
     "leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the "
     "custom Function."),
)


def view_error(t, kind, indirect=False):
    """torch's error for an in-place change of (indirect: the base of) a view it refuses to rebase."""
    what = "its base or another view of its base has been" if indirect else "is being"
    fn = t._grad_fn
    if fn is None:
        msg = f"A view was created in no_grad mode and {what} modified inplace with grad mode enabled."
    elif kind == _NO_GRAD:
        msg = (f"Output {t._output_nr} of {_short_name(fn)} is a view of a view which was created in no_grad mode "
               f"and {what} modified inplace with grad mode enabled.")
    else:
        msg = f"Output {t._output_nr} of {_short_name(fn)} is a view and {what} modified inplace."
    return RuntimeError(msg + _VIEW_HINTS[kind])


def multi_output_view(t):
    """Whether view t (with a history) was made by split/unbind, or is a view of such an output."""
    fn = t._grad_fn
    stop = t._base._grad_fn
    while fn is not None and fn is not stop:
        name = fn.__class__.__name__
        if name not in _VIEW_NODES:
            return False
        if name in _MULTI_NODES:
            return True
        nf = fn.next_functions
        fn = nf[0][0] if nf else None
    return False


def _addr(arr):
    return arr.__array_interface__["data"][0] if arr.__class__ is np.ndarray else arr.data.ptr


def _positions(view_arr, base_arr):
    """Flat (row-major) indices into base of every element of view, both arrays over one memory block; computed
    on the host from addresses and strides, returned on the arrays' device."""
    pos = _host_positions(view_arr, base_arr)
    return pos if base_arr.__class__ is np.ndarray else XP[base_arr.__class__].asarray(pos)


def _host_positions(view_arr, base_arr):
    isz = base_arr.itemsize
    base_addr = _addr(base_arr)

    def storage_positions(arr):
        pos = np.full((), (_addr(arr) - base_addr) // isz, dtype=np.int64)
        for size, stride in zip(arr.shape, arr.strides):
            pos = pos[..., None] + np.arange(size, dtype=np.int64) * (stride // isz)
        return pos

    base_pos = storage_positions(base_arr).reshape(-1)
    view_pos = storage_positions(view_arr)
    if base_arr.flags.c_contiguous:
        return view_pos
    inverse = np.empty(base_pos.max() + 1 if base_pos.size else 0, dtype=np.int64)
    inverse[base_pos] = np.arange(base_pos.size)
    return inverse[view_pos]


def _flat_index(pos):
    return graph._make(pos.reshape(-1))


def _copy_slices_bwd(ctx, g):
    pos, base_shape, view_shape = ctx.attrs
    flat = g.reshape(-1)
    gb = g
    if ctx.needs_input_grad[0]:
        mask = (np if pos.__class__ is np.ndarray else XP[pos.__class__]).ones(int(np.prod(base_shape)), dtype=bool)
        mask[pos.reshape(-1)] = False
        gb = g * graph._make(mask.reshape(base_shape)).to(g.dtype)
    gr = flat[_flat_index(pos)].reshape(view_shape) if ctx.needs_input_grad[1] else None
    return (gb if ctx.needs_input_grad[0] else None, gr)


def _region_bwd(ctx, g):
    pos, base_shape, view_shape = ctx.attrs
    n = int(np.prod(base_shape))
    return g.new_zeros(n).index_add(0, _flat_index(pos), g.reshape(-1)).reshape(base_shape)


_COPY_SLICES = Op("copy_slices", None, _copy_slices_bwd, SAVE_NONE, node_name="torch::autograd::CopySlices")
_REGION = Op("as_strided", None, _region_bwd, SAVE_NONE, node_name="AsStridedBackward0")


def rebase_view(view, result):
    """view's memory already holds result's values; give its base and itself the histories described above."""
    base = view._base
    attrs = (_positions(view._data, base._data), base._data.shape, view._data.shape)
    b_new = record(_COPY_SLICES, (base, result), attrs, base._data, None, 1)
    base._grad_fn = b_new._grad_fn
    base._output_nr = 0
    base._requires_grad = True
    _set_region_history(view, base, attrs)


def _set_region_history(view, base, attrs):
    v_new = record(_REGION, (base,), attrs, view._data, None, 1)
    view._grad_fn = v_new._grad_fn
    view._output_nr = 0
    view._requires_grad = True
    view._view_ver = view._vc.v


def refresh_view(view):
    """A view whose base was modified in place since the view was made: its history becomes 'the region of the
    base's current history' (torch regenerates such a view's grad_fn the same way). Returns the new grad_fn."""
    base = view._base
    if view._grad_fn is not None:
        if multi_output_view(view):  # torch refuses to regenerate the history of split/unbind outputs
            raise view_error(view, _MULTI, indirect=True)
    if base._requires_grad and view._data.dtype == base._data.dtype:
        _set_region_history(view, base, (_positions(view._data, base._data), base._data.shape, view._data.shape))
    else:
        view._view_ver = view._vc.v
    return view._grad_fn
