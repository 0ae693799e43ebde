"""ember: PyTorch's programming model in Python, on NumPy and CuPy."""
from ._version import __version__

import builtins as _builtins  # int, bool and float are ember dtypes in this namespace

import numpy as _np

from . import _dtype
from ._device import device
from ._dtype import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, finfo, float, float16,
                     float32, float64, get_default_dtype, half, iinfo, int, int8, int16, int32, int64, long,
                     promote_types, set_default_dtype, short, uint8)
from ._tensor import Size, Tensor, is_tensor, numel
from ._tensor_str import set_printoptions
from ._ops import creation, unary, binary, comparison, reduce, shape, index, linalg as _linalg_ops, random
from ._ops.creation import *  # noqa: F401,F403
from ._ops.unary import *  # noqa: F401,F403
from ._ops.binary import *  # noqa: F401,F403
from ._ops.comparison import *  # noqa: F401,F403
from ._ops.reduce import *  # noqa: F401,F403
from ._ops.stats import *  # noqa: F401,F403
from ._ops.scan import *  # noqa: F401,F403
from ._ops.shape import *  # noqa: F401,F403
from ._ops.join import *  # noqa: F401,F403
from ._ops.rearrange import *  # noqa: F401,F403
from ._ops.index import *  # noqa: F401,F403
from ._ops.scatter import *  # noqa: F401,F403
from ._ops.masked import *  # noqa: F401,F403
from ._ops.sort import *  # noqa: F401,F403
from ._ops.linalg import *  # noqa: F401,F403
from ._ops.solve import *  # noqa: F401,F403
from ._ops.decomp import *  # noqa: F401,F403
from ._ops.lu import *  # noqa: F401,F403
from ._ops.householder import *  # noqa: F401,F403
from ._ops.segment import *  # noqa: F401,F403
from ._ops.norms import *  # noqa: F401,F403
from ._ops.random import *  # noqa: F401,F403
from ._functional_aliases import *  # noqa: F401,F403
from ._ops.windows import *  # noqa: F401,F403
from ._stft import *  # noqa: F401,F403
from ._ops.view_variants import *  # noqa: F401,F403
from ._ops.softmax import log_softmax, softmax
from . import autograd
Tensor.backward = autograd._tensor_backward  # ember.autograd runs before the Tensor class exists (it holds graph.py)
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                                 set_grad_enabled)

from ._backend import default_device as get_default_device, set_default_device
from .backends._precision import get_float32_matmul_precision, set_float32_matmul_precision
from ._autocast import (autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
                        get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled, set_autocast_cache_enabled,
                        set_autocast_dtype, set_autocast_enabled)

from ._dtype import sparse_coo, sparse_csr, strided
from ._tensor import TypedStorage, UntypedStorage


def _sparse_method(name):
    def method(self, *args, **kwargs):
        from . import sparse  # loads on first use; it then binds its own versions onto Tensor
        return getattr(sparse, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"Same as `torch.Tensor.{name}` (see ember.sparse)."
    return method


Tensor.to_sparse = _sparse_method("to_sparse")
Tensor.to_sparse_csr = _sparse_method("to_sparse_csr")
Tensor.to_sparse_coo = _sparse_method("to_sparse")
Tensor.is_sparse_csr = property(lambda self: False)

# the C names torch's TensorOptions print for the legacy types' dtypes
_OPTION_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                 "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                 "uint8": "unsigned char", "bool": "bool"}
_LEGACY_SIGNATURES = (" * (ember.Storage storage)\n * (Tensor other)\n * (tuple of ints size, *, ember.device device = "
                      "None)\n * (object data, *, ember.device device = None)\n")


def _options(dt, dev):
    return (f"TensorOptions(dtype={_OPTION_NAMES.get(dt.name, dt.name)}, device={dev}, layout=Strided, "
            f"requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))")


def _legacy_from_tensor(t, dt, device):
    """FloatTensor(tensor): an alias of a tensor of exactly this type, as torch."""
    if device is not None:
        raise RuntimeError("Legacy tensor constructor of the form ember.Tensor(tensor, device=device) is not "
                           "supported.  Use ember.tensor(...) or ember.as_tensor(...) instead.")
    if t.dtype is not dt or t.device.type != "cpu":
        raise TypeError(f"expected {_options(dt, 'cpu')} (got {_options(t.dtype, t.device)})")
    return t[...]


def _legacy_new(dt, args, device):
    """The legacy constructors' argument forms, as Tensor.__new__ (with the type's dtype): () an empty 1-D
    tensor; (Size) or (*ints) sizes; (tensor) an alias; (sequence) the data."""
    py_typename = unary.py_typename
    if not args:
        return creation.empty(0, dtype=dt, device=device)
    sizes = _builtins.all(isinstance(a, (_builtins.int, _np.integer)) for a in args)
    if sizes and not (len(args) == 1 and isinstance(args[0], _builtins.bool)):  # a lone bool is data
        return creation.empty(*[_builtins.int(a) for a in args], dtype=dt, device=device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            return _legacy_from_tensor(a, dt, device)
        if isinstance(a, Size):
            return creation.empty(a, dtype=dt, device=device)
        if isinstance(a, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(a).__name__}'")
        if a is None or isinstance(a, (_builtins.float, _builtins.complex, _builtins.bool, _np.generic)):
            raise TypeError(f"new(): data must be a sequence (got {py_typename(a)})")
        return creation.tensor(a, dtype=dt, device=device)
    got = ", ".join(py_typename(a) for a in args)
    marked = ", ".join(f"!{py_typename(a)}!" for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    f" * (*, ember.device device = None)\n      didn't match because some of the arguments have "
                    f"invalid types: ({marked})\n" + _LEGACY_SIGNATURES)


def _legacy_type(dt, name):
    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, Tensor) and obj.dtype is dt

    def __new__(cls, *args, device=None):
        return _legacy_new(dt, args, device)
    return _Meta(name, (), {"__new__": __new__, "dtype": dt, "__module__": __name__})


FloatTensor = _legacy_type(float32, "FloatTensor")
DoubleTensor = _legacy_type(float64, "DoubleTensor")
HalfTensor = _legacy_type(float16, "HalfTensor")
BFloat16Tensor = _legacy_type(bfloat16, "BFloat16Tensor")
LongTensor = _legacy_type(int64, "LongTensor")
IntTensor = _legacy_type(int32, "IntTensor")
ShortTensor = _legacy_type(int16, "ShortTensor")
CharTensor = _legacy_type(int8, "CharTensor")
ByteTensor = _legacy_type(uint8, "ByteTensor")
BoolTensor = _legacy_type(bool, "BoolTensor")


_legacy_warned = [False]


def set_default_tensor_type(t):
    """Same as `torch.set_default_tensor_type` (deprecated there too): a legacy type like `DoubleTensor` or its
    name "torch.DoubleTensor"; only the dtype is taken."""
    if not _legacy_warned[0]:
        _legacy_warned[0] = True
        import warnings
        warnings.warn("ember.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                      "ember.set_default_dtype() and ember.set_default_device() as alternatives.", UserWarning,
                      stacklevel=2)
    if isinstance(t, str):
        t = globals().get(t.rsplit(".", 1)[-1])
    dt = t.dtype if isinstance(t, type) and isinstance(getattr(t, "dtype", None), dtype) else None
    if dt is None:
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(dt)


def to_dlpack(tensor):
    """Same as `torch.to_dlpack`."""
    return tensor.__dlpack__()


def is_floating_point(input):
    """Same as `torch.is_floating_point`."""
    return input.is_floating_point()


def is_complex(input):
    """Same as `torch.is_complex`."""
    return input.is_complex()


def is_nonzero(input):
    """Same as `torch.is_nonzero`."""
    if input.numel() != 1:
        what = "no values" if input.numel() == 0 else "more than one value"
        raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
    return input.item() != 0


def _check_thread_count(name, n):
    if type(n) is not _builtins.int:  # torch refuses bool and float too
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n < 1:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_threads(n):
    """Same as `torch.set_num_threads`: the BLAS thread pool size (through threadpoolctl)."""
    _check_thread_count("set_num_threads", n)
    from ._threads import set_num_threads as _set
    _set(n)


_interop_threads = [None]


def set_num_interop_threads(n):
    """Same as `torch.set_num_interop_threads`; ember runs no inter-op pool, so only the number is kept."""
    _check_thread_count("set_num_interop_threads", n)
    _interop_threads[0] = n


def get_num_interop_threads():
    """Same as `torch.get_num_interop_threads`."""
    import os
    return _interop_threads[0] or os.cpu_count() or 1


_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Same as `torch.use_deterministic_algorithms`; ember's CPU ops are deterministic anyway."""
    for arg, v in (("mode' (position 1)", mode), ("warn_only'", warn_only)):
        if not isinstance(v, _builtins.bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{arg} must be bool, not "
                            f"{type(v).__name__}")
    _deterministic["mode"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    """Same as `torch.are_deterministic_algorithms_enabled`."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    """Same as `torch.is_deterministic_algorithms_warn_only_enabled`."""
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """Same as `torch.set_deterministic_debug_mode`: "default"/0, "warn"/1 or "error"/2."""
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    elif not isinstance(debug_mode, _builtins.int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """Same as `torch.get_deterministic_debug_mode`."""
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def get_num_threads():
    """Same as `torch.get_num_threads`."""
    from ._threads import get_num_threads as _get
    return _get()


def _version_module():
    # torch.version: programs read torch.version.cuda / .hip to pick code paths; ember is a CPU/CuPy build of neither
    import sys
    import types
    mod = types.ModuleType(__name__ + ".version", "Same as `torch.version`: build information.")
    mod.__version__ = __version__
    mod.cuda = mod.hip = mod.rocm = mod.xpu = None
    mod.debug = False
    mod.git_version = "Unknown"
    sys.modules[mod.__name__] = mod
    return mod


version = _version_module()


def _accelerator_module():
    # torch.accelerator: the device-agnostic API of torch's own tutorials ("cuda" when a GPU is usable, else None)
    import importlib
    import sys
    import types
    mod = types.ModuleType(__name__ + ".accelerator", "Same as `torch.accelerator`.")

    def cuda():
        return importlib.import_module(".cuda", __name__)

    def usable():
        if not cuda().is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return cuda()
    mod.is_available = lambda: cuda().is_available()
    mod.current_accelerator = lambda check_available=False: device("cuda") if cuda().is_available() else None
    mod.device_count = lambda: cuda().device_count() if cuda().is_available() else 0
    mod.current_device_index = mod.current_device_idx = lambda: usable().current_device()
    mod.set_device_index = mod.set_device_idx = lambda device: usable().set_device(device)
    mod.synchronize = lambda device=None: usable().synchronize(device)
    mod.empty_cache = lambda: cuda().empty_cache()
    sys.modules[mod.__name__] = mod
    return mod


accelerator = _accelerator_module()
inf, nan, pi, e, newaxis = _builtins.float("inf"), _builtins.float("nan"), 3.141592653589793, 2.718281828459045, None
_warn_always = [False]


def set_warn_always(b):
    """Same as `torch.set_warn_always`."""
    _warn_always[0] = _builtins.bool(b)


def is_warn_always_enabled():
    """Same as `torch.is_warn_always_enabled`."""
    return _warn_always[0]


def set_flush_denormal(mode):
    """Same as `torch.set_flush_denormal`; NumPy cannot flush denormals, so this returns False (unsupported)."""
    return False


def typename(obj):
    """Same as `torch.typename`: "ember.FloatTensor" for tensors, else the qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if not hasattr(obj, "__qualname__"):
        module = type(obj).__module__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def compile(model=None, **kwargs):
    """Same as `torch.compile`; see `ember.compiler.compile` (the ops of the first call are captured and replayed)."""
    from .compiler import compile as _compile
    return _compile(model, **kwargs)


def __getattr__(name):
    # heavier submodules load on first use, keeping `import ember` fast
    import importlib
    if name in ("linalg", "testing", "cuda", "backends", "fft", "special", "utils", "nn", "optim", "amp",
                "multiprocessing", "distributed", "distributions", "serialization", "profiler", "cpu", "func",
                "compiler", "_dynamo", "jit", "signal", "masked", "sparse", "onnx", "nested", "library"):
        try:
            return importlib.import_module("." + name, __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":  # a missing dependency inside the submodule stays visible
                raise
        # not written yet: hasattr(ember, name) must answer False, not raise
        raise AttributeError(f"module 'ember' has no attribute '{name}'")
    if name == "autocast":
        return importlib.import_module(".amp", __name__).autocast
    if name in ("save", "load"):
        return getattr(importlib.import_module(".serialization", __name__), name)
    if name == "vmap":
        return importlib.import_module(".func", __name__).vmap
    if name in ("sparse_coo_tensor", "sparse_csr_tensor", "spmm"):
        return getattr(importlib.import_module(".sparse", __name__), name)
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
