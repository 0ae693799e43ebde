"""The *_copy and *_scatter forms of the view ops: torch.view_copy, torch.select_scatter and their kin.

A *_copy op is its view op followed by a contiguous copy: the result never aliases the input. A *_scatter op is
the converse: a copy of the input with `src` written into the view that the op names. Both are composites of
differentiable ops, so their gradients (and higher ones) come from those.
"""
from .._dtype import contiguous_format
from .._tensor import Tensor
from ._inplace import write_out
from .rearrange import view_as_complex, view_as_real

__all__ = ["as_strided_copy", "detach_copy", "diagonal_copy", "narrow_copy", "permute_copy", "select_copy",
           "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy",
           "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_as_complex_copy", "view_as_real_copy", "view_copy",
           "as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_scatter"]


def _slice(input, dim=0, start=None, end=None, step=1):
    if not input.dim():
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    return input[(slice(None),) * (dim % input.dim()) + (slice(start, end, step),)]


def _named(fn, name, what):
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Same as `torch.{name}`: {what}."
    return fn


def _copying(view, name):
    def fn(input, *args, out=None, **kwargs):
        r = view(input, *args, **kwargs)
        if isinstance(r, (tuple, list)):
            return tuple(t.clone(memory_format=contiguous_format) for t in r)
        r = r.clone(memory_format=contiguous_format)
        return r if out is None else write_out(r, out, name)
    return _named(fn, name, f"`{name[:-5]}` with a result that owns its memory")


as_strided_copy = _copying(Tensor.as_strided, "as_strided_copy")
detach_copy = _copying(Tensor.detach, "detach_copy")
diagonal_copy = _copying(Tensor.diagonal, "diagonal_copy")
def _narrow(input, dim, start, length):
    if isinstance(dim, int) and dim >= input.dim():  # torch's narrow_copy checks this itself, before wrapping dims
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request to "
                           "PyTorch.)")
    return input.narrow(dim, start, length)


narrow_copy = _copying(_narrow, "narrow_copy")
permute_copy = _copying(Tensor.permute, "permute_copy")
select_copy = _copying(Tensor.select, "select_copy")
slice_copy = _copying(_slice, "slice_copy")
split_copy = _copying(Tensor.split, "split_copy")
split_with_sizes_copy = _copying(Tensor.split, "split_with_sizes_copy")
squeeze_copy = _copying(Tensor.squeeze, "squeeze_copy")
t_copy = _copying(Tensor.t, "t_copy")
transpose_copy = _copying(Tensor.transpose, "transpose_copy")
unbind_copy = _copying(Tensor.unbind, "unbind_copy")
unfold_copy = _copying(Tensor.unfold, "unfold_copy")
unsqueeze_copy = _copying(Tensor.unsqueeze, "unsqueeze_copy")
view_as_complex_copy = _copying(view_as_complex, "view_as_complex_copy")
view_as_real_copy = _copying(view_as_real, "view_as_real_copy")
view_copy = _copying(Tensor.view, "view_copy")


def _scattering(view, name):
    def fn(input, src, *args, **kwargs):
        out = input.clone()
        part = view(out, *args, **kwargs)
        if tuple(src.shape) != tuple(part.shape):
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                               f"{list(src.shape)}, slice size = {list(part.shape)}")
        part.copy_(src)
        return out
    return _named(fn, name, f"input with src written into its `{name[:-8]}` view, as a new tensor")


as_strided_scatter = _scattering(Tensor.as_strided, "as_strided_scatter")
diagonal_scatter = _scattering(Tensor.diagonal, "diagonal_scatter")
select_scatter = _scattering(Tensor.select, "select_scatter")
slice_scatter = _scattering(_slice, "slice_scatter")

for _name in ("as_strided_scatter", "diagonal_scatter", "select_scatter", "slice_scatter", "narrow_copy"):
    setattr(Tensor, _name, globals()[_name])
