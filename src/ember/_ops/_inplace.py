"""In-place variants and out= arguments, derived from the out-of-place ops.

An in-place op computes the out-of-place result, writes it into the tensor's memory, bumps the version counter
and moves the result's history onto the tensor (for a view, onto its base through CopySlices).
"""
import warnings

import numpy as np

from .._backend import XP, read_only
from .._dtype import _BOOL, _COMPLEX, _FLOAT, _INT, FROM_NP
from ..autograd.grad_mode import GRAD
from .._tensor import Tensor
from .._view_autograd import _CUSTOM, _MULTI, _NO_GRAD, multi_output_view, view_error
from ..autograd.graph import CUSTOM_VIEWS, FORWARD, bump_version
from ._dispatch import Op

__all__ = ["inplace", "make_inplace", "write_out", "can_cast"]


def can_cast(from_, to):
    """torch.can_cast: no complex -> real, float -> integer or non-bool -> bool."""
    fc, tc = from_._cat, to._cat
    if fc == _COMPLEX and tc != _COMPLEX:
        return False
    if fc == _FLOAT and tc in (_INT, _BOOL):
        return False
    if fc != _BOOL and tc == _BOOL:
        return False
    return True


def _check_cast(result, out, name):
    rd, od = result._data.dtype, out._data.dtype
    if rd != od and not can_cast(FROM_NP[rd], FROM_NP[od]):
        raise RuntimeError(f"result type {_legacy(FROM_NP[rd])} can't be cast to the desired output type "
                           f"{_legacy(FROM_NP[od])}")


def _c10_name(t):
    """The dtype's name as torch's C++ messages print it: float, double, long int..."""
    from .._dtype import SCALAR_NAMES
    return {"Float": "float", "Double": "double", "Long": "long int", "Int": "int", "Half": "c10::Half",
            "BFloat16": "c10::BFloat16", "Bool": "bool"}.get(SCALAR_NAMES[FROM_NP[t._data.dtype].name],
                                                             str(t._data.dtype))


def _legacy(dt):
    from .._dtype import SCALAR_NAMES
    return SCALAR_NAMES[dt.name]


def _any_requires_grad(args, kwargs):
    from .._tensor import Tensor
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    for a in kwargs.values():
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


def check_leaf(t, used="is being used"):
    """torch's refusals before an in-place op that autograd records: views it cannot rebase (NOTE [ In-place checks
    on views ]), a leaf that requires grad, or a view of one."""
    if t._view_ver is not None:
        _check_view(t, used)
    elif t._grad_fn is None and t._requires_grad:
        raise RuntimeError(f"a leaf Variable that requires grad {used} in an in-place operation.")
    elif t._base is not None and t._grad_fn is not None and CUSTOM_VIEWS.get(id(t)) is t:
        raise view_error(t, _CUSTOM)


def _check_view(t, used):
    base = t._base
    if not (t._requires_grad or base._requires_grad):  # torch: a view requires grad when its base does
        return
    fn = t._grad_fn
    if fn is None:
        if base._requires_grad and t._view_ver == t._vc.v:
            raise view_error(t, _NO_GRAD)
    elif multi_output_view(t):
        raise view_error(t, _MULTI)
    if base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if fn is None:  # a view made before its base required grad
        raise RuntimeError(f"a leaf Variable that requires grad {used} in an in-place operation.")


def view_needs_grad(t):
    """Whether in-place writes into view t must take the autograd path although t itself does not require grad: in
    grad mode, a view of a base that requires grad (in torch such a view requires grad). Fast in-place paths test
    `t._base is not None` first."""
    return GRAD[0] and t._view_ver is not None and t._base._requires_grad


_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation.")


# In-place writes into a tensor's array run as the forward of these Ops (called directly, no dispatch): tracing
# (NOTE [ Tracing ops ]) then sees them, so that ember.compile replays them (NOTE [ Compiled regions ]).
def _assign_fwd(dst, src):
    dst[...] = src
    return dst


def _fill_into_fwd(dst, value):
    dst.fill(value)
    return dst


def _ufunc_into_fwd(dst, other, ufunc):
    ufunc(dst, other, out=dst)
    return dst


_ASSIGN = Op("copy_", _assign_fwd)
_CLONE_ARRAY = Op("clone", lambda a: a.copy())
_UFUNC_INTO = Op("inplace_ufunc", _ufunc_into_fwd)
_FILL_INTO = Op("fill_", _fill_into_fwd)


def _check_writable(d):
    if read_only(d):  # an expanded tensor: NumPy marks broadcast views read-only
        raise RuntimeError(_OVERLAP)


def _snapshot(self):
    """A copy of self's current values that keeps self's place in the graph (the op's input before it is
    overwritten)."""
    from .._tensor import Tensor
    t = Tensor._make(_CLONE_ARRAY.fwd(self._data))
    t._requires_grad = self._requires_grad
    t._grad_fn = self._grad_fn
    t._output_nr = self._output_nr
    t._accum = self._accum
    return t


def inplace(self, fn, args, kwargs, name):
    """Run the out-of-place `fn(self, *args, **kwargs)` and make its result self's new value and history."""
    if GRAD[0] and (self._requires_grad or _any_requires_grad(args, kwargs) or
                    self._base is not None and view_needs_grad(self)):
        check_leaf(self)
        _check_writable(self._data)
        if self._view_ver is not None and self._view_ver != self._vc.v:
            from .._view_autograd import refresh_view  # the base changed since: the view's current history
            refresh_view(self)
        result = fn(_snapshot(self), *args, **kwargs)
        _check_cast(result, self, name)
        if result._data.shape != self._data.shape:
            _shape_error(self, result, name)
        fw = FORWARD[0]
        if fw is None:
            commit(self, result, name)
        else:
            fw.write(self, result, lambda: commit(self, result, name))
        return self
    result = fn(self, *args, **kwargs)
    _check_cast(result, self, name)
    d = self._data
    if result._data.shape != d.shape:
        _shape_error(self, result, name)
    if d.__class__ is np.ndarray and not d.flags.writeable:  # CuPy arrays have no read-only flag
        raise RuntimeError(_OVERLAP)
    fw = FORWARD[0]
    if fw is not None:
        fw.write(self, result, lambda: _overwrite(self, result, name))
        return self
    _ASSIGN.fwd(d, result._data)
    bump_version(self, name)
    return self


def _overwrite(self, result, name):
    _ASSIGN.fwd(self._data, result._data)
    bump_version(self, name)


def _shape_error(self, result, name):
    raise RuntimeError(f"output with shape [{', '.join(map(str, self.shape))}] doesn't match the broadcast shape "
                       f"[{', '.join(map(str, result.shape))}]")


def commit(self, result, name):
    """Write result into self and give self result's history."""
    _check_writable(self._data)
    _ASSIGN.fwd(self._data, result._data)
    bump_version(self, name)
    if not result._requires_grad:
        return
    if self._view_ver is not None:
        from .._view_autograd import rebase_view
        rebase_view(self, result)
        return
    self._grad_fn = result._grad_fn
    self._output_nr = result._output_nr
    self._requires_grad = True


def make_inplace(fn, name, ufunc=None):
    """The in-place method `name` (e.g. 'add_') of the out-of-place function fn.

    With a NumPy ufunc of two operands, the common case (a float tensor and a same-dtype tensor or a Python number,
    nothing requiring grad) runs as ufunc(self, other, out=self): no temporary, no copy.
    """
    if ufunc is None:
        def method(self, *args, **kwargs):
            return inplace(self, fn, args, kwargs, name)
    else:
        from .._tensor import Tensor
        number = (int, float)

        def method(self, *args, **kwargs):
            if len(args) == 1 and not kwargs and not self._requires_grad and FORWARD[0] is None and \
                    (self._base is None or not view_needs_grad(self)):
                d = self._data
                o = args[0]
                if d.dtype.kind in "fc":
                    if o.__class__ is Tensor and not o._requires_grad and o._data.dtype == d.dtype:
                        o = o._data
                    elif o.__class__ not in number:
                        return inplace(self, fn, args, kwargs, name)
                    try:
                        _UFUNC_INTO.fwd(d, o, ufunc)
                    except ValueError:  # not broadcastable into self: the generic path words the error
                        return inplace(self, fn, args, kwargs, name)
                    bump_version(self, name)
                    return self
            return inplace(self, fn, args, kwargs, name)
    method.__name__ = name
    method.__qualname__ = "Tensor." + name
    method.__doc__ = f"Same as `torch.Tensor.{name}`."
    return method


def write_out(result, out, name, inputs=(), exact_dtype=False):
    """Implements out=: copies result into out (resizing an out of the wrong shape, as torch does). `inputs` are
    the op's inputs where torch refuses an out that overlaps one of them; exact_dtype: torch wants out in the
    result's dtype (no cast)."""
    if inputs:
        _check_no_overlap(out, inputs)
    if any(st == 0 and n > 1 for st, n in zip(out._data.strides, out._data.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    if exact_dtype and out._data.dtype != result._data.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_c10_name(result)}, but got {_c10_name(out)} "
                           "instead")
    if GRAD[0] and (out._requires_grad or result._requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           f"but one of the arguments requires grad.")
    _check_cast(result, out, name)
    if FORWARD[0] is not None:
        FORWARD[0].write(out, result, lambda: _write_out(result, out, name))
    else:
        _write_out(result, out, name)
    return out


def _write_out(result, out, name):
    if out._data.shape != result._data.shape:
        out._data = result._data.astype(out._data.dtype, copy=True)
    else:
        out._data[...] = result._data
    bump_version(out, name)


def _check_no_overlap(out, inputs):
    d = out._data
    for t in inputs:
        a = t._data
        if t is out or a.__class__ is d.__class__ and a.size and d.size and XP[a.__class__].may_share_memory(a, d):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               "refer to a single memory location. Please clone() the tensor before performing the "
                               "operation.")


# ---------------- copy_ ----------------
def _copy_fwd(dst, src):
    out = np.empty_like(dst)
    np.copyto(out, src, casting="unsafe")
    return out


def _copy(dst, src):
    from ._dispatch import dispatch2
    try:
        return dispatch2(_COPY, dst, src)
    except ValueError:
        raise _copy_shape_error(dst, src) from None


def copy_(self, src, non_blocking=False):
    """Same as `torch.Tensor.copy_`: broadcasts src into self, converting dtype and device."""
    from .._tensor import Tensor
    if not isinstance(src, Tensor):
        t = type(src)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {name}")
    if src._data.__class__ is not self._data.__class__ or src.device != self.device:
        src = src.to(self.device, non_blocking=non_blocking)
    if FORWARD[0] is not None and FORWARD[0].involved(self, src):
        return inplace(self, _copy, (src,), {}, "copy_")  # the tangent follows the value (NOTE [ Forward-mode AD ])
    if not (GRAD[0] and (self._requires_grad or src._requires_grad or
                         self._base is not None and view_needs_grad(self))):
        d = self._data
        if read_only(d):
            raise RuntimeError(_OVERLAP)
        sd = src._data
        if sd.dtype.kind == "c" and d.dtype.kind != "c":
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
            sd = sd.real
        try:
            np.copyto(d, sd, casting="unsafe")
        except ValueError:
            raise _copy_shape_error(self, src) from None
        bump_version(self, "copy_")
        return self
    return inplace(self, _copy, (src,), {}, "copy_")


def _copy_shape_error(self, src):
    from .binary import _broadcast_error
    e = _broadcast_error(self, src)
    if e is None:  # src broadcasts, but to a bigger shape than self's
        shape = np.broadcast_shapes(self._data.shape, src._data.shape)
        e = RuntimeError(f"output with shape [{', '.join(map(str, self.shape))}] doesn't match the broadcast shape "
                         f"[{', '.join(map(str, shape))}]")
    return e


def _init_copy():
    global _COPY
    from ._dispatch import SAVE_NONE, Op
    _COPY = Op("copy_", _copy_fwd, lambda ctx, g: (None, g), SAVE_NONE, node_name="torch::autograd::CopyBackwards")


_COPY = None
_init_copy()


Tensor.copy_ = copy_
