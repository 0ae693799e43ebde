"""class Tensor: one backend array plus autograd fields; ops are bound onto it by the _ops modules."""
import sys as _sys
import warnings as _warnings
from collections import OrderedDict

import numpy as np

from . import _dtype
from ._backend import check_cuda_dtype, device_of, host, module_for, pinned, shared_memory, to_device
from ._device import CPU
from ._device import device as _device_cls
from ._dtype import FROM_NP
from ._dtype import dtype as _dtype_cls
from ._ops import _dispatch
from ._ops._dispatch import Op, dispatch1
from .autograd import graph
from .autograd.grad_mode import GRAD

__all__ = ["Tensor", "Size", "is_tensor", "numel"]

_new = object.__new__


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf Tensor, "
    "use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


class Size(tuple):
    """Same as `torch.Size`."""
    __slots__ = ()

    def __new__(cls, sizes=()):
        t = tuple.__new__(cls, sizes)
        for v in t:
            if v.__class__ is not int:
                return tuple.__new__(cls, _size_items(t))
        return t

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    def __getitem__(self, key):
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to ember.Size")
        return _new_size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return _new_size(tuple.__add__(other, self))

    def __mul__(self, n):
        return _new_size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


def _new_size(t):
    return tuple.__new__(Size, t)


def _size_items(t):
    """The entries of torch.Size(t) as ints: anything with __index__ (a 0-dim integer tensor) converts."""
    out = []
    for i, v in enumerate(t):
        try:
            out.append(v.__index__())
        except (AttributeError, TypeError):
            raise TypeError(f"ember.Size() takes an iterable of 'int' (item {i} is '{type(v).__name__}')") from None
    return out


class _Extras:
    """Rarely used per-tensor state, kept out of the hot slots."""
    __slots__ = ("post_acc_hooks", "retains_grad", "name")

    def __init__(self):
        self.post_acc_hooks = None
        self.retains_grad = False
        self.name = None


class Tensor:
    """Same as `torch.Tensor`."""
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_grad", "_base", "_vc", "_accum", "_ext", "_view_ver", "__weakref__", "__dict__")
    __array_priority__ = 1000  # so ndarray + Tensor defers to Tensor.__radd__

    @staticmethod
    def _make(arr):
        t = _new(Tensor)
        t._data = arr
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._grad = None
        t._base = None
        t._vc = None
        t._accum = None
        t._ext = None
        t._view_ver = None
        return t

    def as_subclass(self, cls):
        t = _new(cls)
        for s in Tensor.__slots__[:-2]:  # all but __weakref__ and __dict__
            setattr(t, s, getattr(self, s))
        return t

    # ----- metadata -----
    @property
    def shape(self):
        return tuple.__new__(Size, self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return tuple.__new__(Size, self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return FROM_NP[self._data.dtype]

    @property
    def device(self):
        return CPU if self._data.__class__ is np.ndarray else device_of(self._data)

    @property
    def is_cuda(self):
        return self._data.__class__ is not np.ndarray

    @property
    def is_cpu(self):
        return self._data.__class__ is np.ndarray

    def get_device(self):
        return -1 if self._data.__class__ is np.ndarray else self._data.device.id

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def is_floating_point(self):
        return self._data.dtype.kind == "f" or self._data.dtype.kind == "V"

    def is_complex(self):
        return self._data.dtype.kind == "c"

    def apply_(self, callable):
        """Same as `torch.Tensor.apply_`: callable(python_number) for every element, in place (CPU only)."""
        if self._requires_grad:
            raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() "
                               "instead.")
        d = self._data
        flat = d.reshape(-1) if d.flags.c_contiguous else d.ravel()
        vals = [callable(v) for v in flat.tolist()]
        d[...] = np.asarray(vals).astype(d.dtype, copy=False).reshape(d.shape)
        graph.bump_version(self, "apply_")
        return self

    def map_(self, tensor, callable):
        """Same as `torch.Tensor.map_`: callable(a, b) for every element of self and the broadcast tensor."""
        if self._requires_grad or tensor._requires_grad:
            raise RuntimeError("Can't call map_() on Variable that requires grad. Use var.detach().map_() instead.")
        d = self._data
        other = np.broadcast_to(tensor._data, d.shape)
        vals = [callable(a, b) for a, b in zip(d.reshape(-1).tolist(), other.reshape(-1).tolist())]
        d[...] = np.asarray(vals).astype(d.dtype, copy=False).reshape(d.shape)
        graph.bump_version(self, "map_")
        return self

    def is_signed(self):
        return self._data.dtype.kind not in "bu"

    def is_same_size(self, other):
        return self._data.shape == other._data.shape

    def is_nonzero(self):
        n = self._data.size
        if n != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
                               "is ambiguous")
        return self.item() != 0

    def sum_to_size(self, *size):
        shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        own = self._data.shape
        lead = len(own) - len(shape)
        if lead < 0 or any(s != 1 and s != own[lead + i] for i, s in enumerate(shape)):
            raise RuntimeError(f"size {{[{', '.join(map(str, shape))}]}} is not expandable to size "
                               f"{{[{', '.join(map(str, own))}]}}.")
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape) if s == 1 and own[lead + i] != 1)
        r = self.sum(dims, keepdim=True) if dims else self
        return r.reshape(shape) if lead else r

    def is_contiguous(self, memory_format=None):
        if memory_format is None or memory_format is _dtype.contiguous_format:
            return self._data.flags.c_contiguous
        return _is_channels_last(self._data, memory_format)

    def stride(self, dim=None):
        isz = self._data.itemsize
        st = tuple(s // isz for s in self._data.strides)
        if self._data.size <= 1 or not st:  # torch reports contiguous strides for these
            st = _contiguous_strides(self._data.shape)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        # measured from the array that owns the memory, so tensors sharing one storage (views, or tensors loaded
        # from one saved storage) report torch's offsets
        arr = self._data
        return (_address(arr) - _address(_root_array(arr))) // arr.itemsize

    def untyped_storage(self):
        """Same as `torch.Tensor.untyped_storage`: the bytes of the memory this tensor views (CPU tensors)."""
        return UntypedStorage._wrap(_storage_bytes(self._data))

    def storage(self):
        """Same as `torch.Tensor.storage` (deprecated there too): the elements of the memory this tensor views."""
        if not _STORAGE_WARNED[0]:
            _STORAGE_WARNED[0] = True
            _warnings.warn(_TYPED_STORAGE_MSG, UserWarning, stacklevel=2)
        d = self._data
        return TypedStorage._wrap(_storage_bytes(d).view(d.dtype), self.dtype)

    def data_ptr(self):
        return _address(self._data)

    @property
    def _version(self):
        c = self._vc
        return 0 if c is None else c.v

    def is_inference(self):
        return False

    @property
    def is_sparse(self):
        return False

    @property
    def layout(self):
        return _dtype.strided

    # ----- autograd fields -----
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if value and self._grad_fn is None and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
            return self
        if requires_grad and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")  # torch's wording
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad_fn(self):
        if self._view_ver is not None and self._view_ver != self._vc.v:
            from ._view_autograd import refresh_view
            refresh_view(self)
        return self._grad_fn

    @property
    def grad(self):
        g = self._grad
        if g is None and self._grad_fn is not None and not self.retains_grad:
            _warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(_grad_dtype_error(value._data.dtype, self._data.dtype))
            if value.device != self.device:
                raise RuntimeError(_grad_device_error(value.device, self.device))
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor "
                                   f"of size '{list(self._data.shape)}'. Please ensure that the gradient and the "
                                   f"tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def name(self):
        return None if self._ext is None else self._ext.name

    @property
    def retains_grad(self):
        return self._ext is not None and self._ext.retains_grad

    def _extras(self):
        if self._ext is None:
            self._ext = _Extras()
        return self._ext

    @property
    def data(self):
        t = Tensor._make(self._data)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data

    def detach(self):
        """Same as `torch.Tensor.detach`: shares memory and the version counter."""
        t = Tensor._make(self._data)
        c = t._vc = self._vc or graph.counter(self)
        b = self._base
        if b is not None:
            # no view of self (its views must not count as views of a base that requires grad), but as_strided
            # still needs the storage's root: an alias of it
            t._base = a = Tensor._make(b._data)
            a._vc = c
        return t

    def detach_(self):
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        return self

    def register_hook(self, hook):
        """Same as `torch.Tensor.register_hook`: hook(grad) may return a replacement gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self._grad_fn or graph.grad_accumulator(self)
        return node._register_tensor_hook(self._output_nr, hook)

    def retain_grad(self):
        """Same as `torch.Tensor.retain_grad`."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self.retains_grad:
            return
        ext = self._extras()
        ext.retains_grad = True
        import weakref
        ref = weakref.ref(self)

        def retain(g):
            t = ref()
            if t is not None and t._ext is not None and t._ext.retains_grad:
                gd = g.detach()
                t._grad = gd.clone() if t._grad is None else t._grad + gd
            return None
        retain._retains_grad = True
        self._grad_fn._register_tensor_hook(self._output_nr, retain)

    def register_post_accumulate_grad_hook(self, hook):
        """Same as `torch.Tensor.register_post_accumulate_grad_hook`: hook(tensor) after .grad is updated."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        ext = self._extras()
        if ext.post_acc_hooks is None:
            ext.post_acc_hooks = OrderedDict()
        return graph.add_hook(ext.post_acc_hooks, hook)

    # ----- conversion -----
    def item(self):
        if HOST_READ[0] is not None:
            HOST_READ[0](self, "item")
        d = self._data
        if d.size != 1:
            raise RuntimeError(f"a Tensor with {d.size} elements cannot be converted to Scalar")
        if d.__class__ is not np.ndarray:
            d = host(d)
        v = d.reshape(()).item() if d.dtype.kind != "V" else float(d.reshape(()))
        return v

    def tolist(self):
        if HOST_READ[0] is not None:
            HOST_READ[0](self, "tolist")
        d = self._data
        if d.__class__ is not np.ndarray:
            d = host(d)
        if d.dtype.kind == "V":
            d = d.astype(np.float32)
        return d.tolist()

    def numpy(self, *, force=False):
        """Same as `torch.Tensor.numpy`: shares memory with the tensor."""
        if not force:
            if self._requires_grad and GRAD[0]:
                raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                                   "instead.")
            if self._data.__class__ is not np.ndarray:
                raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                                "tensor to host memory first.")
            return self._data
        d = self._data
        return d if d.__class__ is np.ndarray else host(d)

    def __array_wrap__(self, array, context=None, return_scalar=False):
        # a NumPy ufunc applied to a tensor gives a tensor, as in torch (bool results as uint8, torch's legacy)
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return Tensor._make(np.asarray(array))

    def __reversed__(self):
        return self if self._data.ndim == 0 else self.flip(0)

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad and GRAD[0]:  # as torch: NumPy conversion goes through numpy()
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        d = self._data if self._data.__class__ is np.ndarray else host(self._data)
        if dtype is not None and d.dtype != dtype:
            return d.astype(dtype)
        return d.copy() if copy else d

    def __dlpack__(self, *args, **kwargs):
        if self._requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def to(self, *args, **kwargs):
        """Same as `torch.Tensor.to`: (dtype), (device, dtype), (other) and non_blocking/copy."""
        fmt = kwargs.pop("memory_format", None) if kwargs else None
        dev, dt, non_blocking, copy = _parse_to(self, args, kwargs)
        r = _to(self, dev, dt, non_blocking, copy)
        if fmt is None or fmt is _dtype.preserve_format:
            return r
        return r.contiguous(memory_format=fmt)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return _dtype.legacy_type_name(self)
        if isinstance(dtype, str):
            dtype = _LEGACY_TYPES[dtype.rsplit(".", 1)[-1]]
        return self.to(dtype)

    def type_as(self, other):
        return self.to(other.dtype)

    def float(self, memory_format=None):
        return _cast(self, _dtype.float32, memory_format)

    def double(self, memory_format=None):
        return _cast(self, _dtype.float64, memory_format)

    def half(self, memory_format=None):
        return _cast(self, _dtype.float16, memory_format)

    def bfloat16(self, memory_format=None):
        return _cast(self, _dtype.bfloat16, memory_format)

    def int(self, memory_format=None):
        return _cast(self, _dtype.int32, memory_format)

    def long(self, memory_format=None):
        return _cast(self, _dtype.int64, memory_format)

    def short(self, memory_format=None):
        return _cast(self, _dtype.int16, memory_format)

    def char(self, memory_format=None):
        return _cast(self, _dtype.int8, memory_format)

    def byte(self, memory_format=None):
        return _cast(self, _dtype.uint8, memory_format)

    def bool(self, memory_format=None):
        return _cast(self, _dtype.bool, memory_format)

    def cfloat(self, memory_format=None):
        return _cast(self, _dtype.complex64, memory_format)

    def cdouble(self, memory_format=None):
        return _cast(self, _dtype.complex128, memory_format)

    def cpu(self, memory_format=None):
        return _to(self, CPU, None)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return _to(self, _device_cls(device), None, non_blocking)

    def clone(self, *, memory_format=None):
        """Same as `torch.Tensor.clone`."""
        if memory_format is None or memory_format is _dtype.preserve_format or \
                memory_format is _dtype.contiguous_format:
            return dispatch1(_CLONE, self)
        return dispatch1(_CLONE_CL, self, _channels_last_perm(self, memory_format))

    def contiguous(self, memory_format=None):
        if memory_format is None or memory_format is _dtype.contiguous_format:
            if self._data.flags.c_contiguous:
                return self
            return dispatch1(_CLONE, self)
        if _is_channels_last(self._data, memory_format):
            return self
        return dispatch1(_CLONE_CL, self, _channels_last_perm(self, memory_format))

    # ----- Python protocol -----
    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __float__(self):
        if self._requires_grad and GRAD[0]:
            _warn_requires_grad(self)
        return float(_scalar(self))

    def __int__(self):
        return int(_scalar(self).real) if self._data.dtype.kind == "c" else int(_scalar(self))

    def __complex__(self):
        if self._requires_grad and GRAD[0]:
            _warn_requires_grad(self)
        return complex(_scalar(self))

    def __index__(self):
        if HOST_READ[0] is not None:
            HOST_READ[0](self, "__index__")
        if self._data.dtype.kind not in "biu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        d = self._data
        return int(d.reshape(()) if d.__class__ is np.ndarray else host(d).reshape(()))

    def __hash__(self):
        return id(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self, tensor_contents=tensor_contents)

    def share_memory_(self):
        """Same as `torch.Tensor.share_memory_`: moves the data into shared memory (a no-op if already there)."""
        return shared_memory.share_memory_(self)

    def is_shared(self):
        """Same as `torch.Tensor.is_shared`."""
        return shared_memory.is_shared(self)

    def pin_memory(self, device=None):
        """Same as `torch.Tensor.pin_memory`: a copy in page-locked host memory (needs a GPU, as in torch), the
        tensor itself if already pinned."""
        pinned.require_gpu()
        if self._data.__class__ is not np.ndarray:
            raise RuntimeError(f"cannot pin a tensor on {self.device}: only dense CPU tensors can be pinned")
        return self if pinned.is_pinned(self._data) else dispatch1(_PIN, self)

    def is_pinned(self, device=None):
        """Same as `torch.Tensor.is_pinned`: whether the tensor's memory is page-locked (False without a GPU)."""
        return pinned.is_pinned(self._data)

    def __reduce_ex__(self, protocol):
        # pickled by value; ember.multiprocessing and ember.save replace this with their own reducers
        d = self._data if self._data.__class__ is np.ndarray else host(self._data)
        return (_rebuild, (type(self), np.array(d), str(self.device), self._requires_grad, self._grad))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        t = Tensor._make(self._data.copy())
        t = t if type(self) is Tensor else t.as_subclass(type(self))
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            import copy
            t._grad = copy.deepcopy(self._grad, memo)
        if type(self) is not Tensor:
            t.__dict__.update(copy_dict(self.__dict__, memo))
        memo[id(self)] = t
        return t


def copy_dict(d, memo):
    import copy
    return {k: copy.deepcopy(v, memo) for k, v in d.items()}


def _rebuild(cls, arr, dev, requires_grad, grad):
    t = Tensor._make(to_device(arr, _device_cls(dev)) if dev != "cpu" else arr)
    if cls is not Tensor:
        t = t.as_subclass(cls)
    t._requires_grad = requires_grad
    t._grad = grad
    return t


# A function called with (tensor, what) when code reads a tensor's values on the host (item, tolist, float, int,
# bool, index) while a tracer wants to know: ember.compile's capture gives up (the value fixes what the code does
# next). None otherwise.
HOST_READ = [None]


def _scalar(t):
    d = t._data
    if d.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return t.item()


def _warn_requires_grad(t):
    # torch warns in grad mode for float() and complex() (not int(), bool() or item()); ember's own conversions
    # (where torch converts in C++ or under no_grad, as LBFGS does) stay silent
    if _sys._getframe(2).f_code.co_filename.startswith(graph._PKG_DIR):
        return
    _warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                   "Consider using tensor.detach() first.", UserWarning, stacklevel=3)


# the C++ element type names torch's .grad setter reports for the assigned gradient, and its ScalarType names
_CPP_TYPE_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "int8": "signed char",
    "uint8": "unsigned char", "int16": "short int", "int32": "int", "int64": "long int", "bool": "bool",
    "uint16": "short unsigned int", "uint32": "unsigned int", "uint64": "long unsigned int",
}
_SCALAR_TYPE_NAMES = {"uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}


def _grad_dtype_error(grad_dt, dt):
    g, d = FROM_NP[grad_dt].name, FROM_NP[dt].name
    return (f"attempting to assign a gradient with dtype '{_CPP_TYPE_NAMES.get(g, g)}' to a tensor with grad_dtype "
            f"'{_dtype.SCALAR_NAMES.get(d) or _SCALAR_TYPE_NAMES.get(d, d)}'. The gradient must match the tensor's "
            f"grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with a "
            f"specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
            f"tensor and its gradient may break downstream systems that assume they match.")


def _grad_device_error(grad_dev, dev):
    if grad_dev.type != dev.type:
        return (f"attempting to assign a gradient with device type '{grad_dev.type}' to a tensor with device type "
                f"'{dev.type}'. Please ensure that the gradient and the tensor are on the same device")
    return (f"attempting to assign a gradient located on device with index '{grad_dev.index}' to a tensor located "
            f"on device with index '{dev.index}'. Please ensure that the gradient and the tensor are on the same "
            f"device")


def _root_array(arr):
    """The array that owns arr's memory (through views and as_strided's wrapper objects)."""
    root = arr
    while True:
        b = root.base
        if isinstance(b, type(arr)):
            root = b
        elif isinstance(getattr(b, "base", None), type(arr)):  # as_strided's wrapper object
            root = b.base
        else:
            return root


def _storage_bytes(arr):
    if arr.__class__ is not np.ndarray:
        raise RuntimeError("storage() of a CUDA tensor is not supported by ember; use .cpu() first")
    root = _root_array(arr)
    if not root.flags.c_contiguous:  # not an allocation: the tensor's own elements are its storage
        root = np.ascontiguousarray(arr)
    return root.reshape(-1).view(np.uint8)


_STORAGE_WARNED = [False]
_TYPED_STORAGE_MSG = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage "
    "class. This should only matter to you if you are using storages directly.  To access UntypedStorage "
    "directly, use tensor.untyped_storage() instead of tensor.storage()")


class UntypedStorage:
    """Same as `torch.UntypedStorage` for reading and writing a CPU tensor's memory: bytes, shared with it."""
    __slots__ = ("_bytes",)

    @classmethod
    def _wrap(cls, arr):
        st = object.__new__(cls)
        st._bytes = arr
        return st

    def __len__(self):
        return self._bytes.size

    def size(self):
        return self._bytes.size

    def nbytes(self):
        return self._bytes.nbytes

    def element_size(self):
        return 1

    def data_ptr(self):
        return _address(self._bytes)

    @property
    def device(self):
        return CPU

    def __getitem__(self, i):
        r = self._bytes[i]
        return type(self)._wrap(r) if isinstance(i, slice) else int(r)

    def __setitem__(self, i, value):
        self._bytes[i] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._bytes.tolist()

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = body + "\n" if body else ""
        return f"{head}[ember.storage.{type(self).__name__}(device=cpu) of size {len(self)}]"


class TypedStorage(UntypedStorage):
    """Same as `torch.TypedStorage` (deprecated in torch) for a CPU tensor: its elements, shared with it."""
    __slots__ = ("dtype",)

    @classmethod
    def _wrap(cls, arr, dtype=None):
        st = super()._wrap(arr)
        st.dtype = dtype if dtype is not None else FROM_NP[arr.dtype]
        return st

    def __getitem__(self, i):
        r = self._bytes[i]
        return TypedStorage._wrap(r, self.dtype) if isinstance(i, slice) else r.item()

    def element_size(self):
        return self._bytes.itemsize

    def nbytes(self):
        return self._bytes.nbytes

    def untyped(self):
        return UntypedStorage._wrap(self._bytes.view(np.uint8))

    def __repr__(self):
        body = "\n".join(f" {v}" for v in self.tolist())
        head = body + "\n" if body else ""
        return f"{head}[ember.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {len(self)}]"


def _address(arr):
    if arr.__class__ is np.ndarray:
        return arr.__array_interface__["data"][0]
    return arr.data.ptr


def _contiguous_strides(shape):
    st = []
    acc = 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


_LEGACY_TYPES = {
    "FloatTensor": _dtype.float32, "DoubleTensor": _dtype.float64, "HalfTensor": _dtype.float16,
    "BFloat16Tensor": _dtype.bfloat16, "ByteTensor": _dtype.uint8, "CharTensor": _dtype.int8,
    "ShortTensor": _dtype.int16, "IntTensor": _dtype.int32, "LongTensor": _dtype.int64, "BoolTensor": _dtype.bool,
    "ComplexFloatTensor": _dtype.complex64, "ComplexDoubleTensor": _dtype.complex128,
}


def _parse_to(t, args, kwargs):
    dev = dt = None
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    kwargs.pop("memory_format", None)
    for a in list(args) + [kwargs.pop("device", None), kwargs.pop("dtype", None), kwargs.pop("other", None)]:
        if a is None:
            continue
        if isinstance(a, Tensor):
            dev, dt = a.device, a.dtype
        elif isinstance(a, _dtype_cls):
            dt = a
        elif isinstance(a, (str, _device_cls, int)) and not isinstance(a, bool):
            dev = _device_cls(a)
        elif isinstance(a, bool):
            non_blocking = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments: got {a!r}")
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return dev, dt, non_blocking, copy


def _to_fwd(x, np_dtype, dev, non_blocking):
    if dev is not None:
        x = to_device(x, dev, non_blocking)
    if np_dtype is not None and x.dtype != np_dtype:
        if x.__class__ is not np.ndarray:
            check_cuda_dtype(np_dtype)
        if x.dtype.kind == "c" and np_dtype.kind != "c":
            # NumPy would warn with its own ComplexWarning; _to warns as torch does. To bool is "nonzero".
            x = x != 0 if np_dtype.kind == "b" else x.real
        x = x.astype(np_dtype)
    return x


def _to_bwd(ctx, g):
    src = ctx.attrs[2]
    return g.to(src) if src is not None else g


_TO = Op("_to_copy", lambda x, np_dtype, dev, nb, src: _to_fwd(x, np_dtype, dev, nb), _to_bwd,
         node_name="ToCopyBackward0")
_CLONE = Op("clone", lambda x: x.copy(), lambda ctx, g: g)


def _clone_cl_fwd(x, perm):
    """A copy of x whose memory is in the permuted (channels-last) order; shape and values unchanged."""
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return x.transpose(perm).copy().transpose(inv)


_CLONE_CL = Op("clone", _clone_cl_fwd, lambda ctx, g: g, node_name="CloneBackward0")


def _channels_last_perm(t, memory_format):
    nd = t._data.ndim
    if memory_format is _dtype.channels_last:
        if nd != 4:
            raise RuntimeError("required rank 4 tensor to use channels_last format")
        return (0, 2, 3, 1)
    if memory_format is _dtype.channels_last_3d:
        if nd != 5:
            raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
        return (0, 2, 3, 4, 1)
    raise RuntimeError(f"unsupported memory format {memory_format}")


def _cast(t, dt, memory_format):
    """Tensor.float(), .half(), ...: a dtype change in the given memory format (torch's default keeps it)."""
    r = _to(t, None, dt)
    if memory_format is None or memory_format is _dtype.preserve_format:
        return r
    return r.contiguous(memory_format=memory_format)


def _to(t, dev, dt, non_blocking=False, copy=False):
    d = t._data
    if dev is not None and dev.type == "cuda" and dev.index is None:
        dev = _device_cls("cuda", module_for(dev).cuda.runtime.getDevice() if d.__class__ is np.ndarray else
                          d.device.id)
    same_dev = dev is None or dev == t.device
    same_dt = dt is None or dt.np == d.dtype
    if same_dev and same_dt:
        return t.clone() if copy else t
    if dev is not None and dev.type == "cuda":
        module_for(dev)
    src = None if same_dev else t.device
    if not same_dt and d.dtype.kind == "c" and dt.np.kind not in "cb":
        _warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
    return dispatch1(_TO, t, None if same_dt else dt.np, None if same_dev else dev, non_blocking, src)


def _is_channels_last(d, memory_format):
    """Whether d's strides are dense in NHWC (NDHWC) order; dims of size 1 may have any stride, as in torch."""
    nd = 4 if memory_format is _dtype.channels_last else 5 if memory_format is _dtype.channels_last_3d else None
    if nd is None:
        raise RuntimeError(f"unsupported memory format {memory_format}")
    if d.ndim != nd:
        return False
    expected = d.itemsize
    for dim in (1,) + tuple(range(nd - 1, 1, -1)) + (0,):  # C, then W, H (D), then N: fastest to slowest
        if d.shape[dim] != 1 and d.strides[dim] != expected:
            return False
        expected *= d.shape[dim]
    return True


def is_tensor(obj):
    """Same as `torch.is_tensor`."""
    return isinstance(obj, Tensor)


def numel(input):
    """Same as `torch.numel`."""
    return input._data.size


_PIN = Op("_pin_memory", pinned.pinned_copy, lambda ctx, g: g)

_dispatch._bind(Tensor._make)
graph.bind_tensor(Tensor)
