"""ember: PyTorch's programming model in Python, on NumPy and CuPy."""
__version__ = "0.1.0"

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
from ._ops.norms import *  # noqa: F401,F403
from ._ops.random import *  # noqa: F401,F403
from ._ops.softmax import log_softmax, softmax
from . import autograd
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                                 set_grad_enabled)

from ._backend import default_device as get_default_device, set_default_device
from .backends._precision import get_float32_matmul_precision, set_float32_matmul_precision
from ._autocast import (autocast_decrement_nesting, autocast_increment_nesting, clear_autocast_cache,
                        get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled, set_autocast_cache_enabled,
                        set_autocast_dtype, set_autocast_enabled)

strided = "strided"
FloatTensor = DoubleTensor = LongTensor = None  # replaced below by dtype-checking classes


def _legacy_type(dt):
    class _Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, Tensor) and obj.dtype is dt

    def __new__(cls, *args, device=None):
        from ._ops import creation
        if len(args) == 1 and not isinstance(args[0], __builtins__["int"] if isinstance(__builtins__, dict)
                                             else __import__("builtins").int):
            return creation.tensor(args[0], dtype=dt, device=device)
        return creation.empty(*args, dtype=dt, device=device)
    return _Meta(dt.name.capitalize() + "Tensor", (), {"__new__": __new__, "dtype": dt})


FloatTensor = _legacy_type(float32)
DoubleTensor = _legacy_type(float64)
HalfTensor = _legacy_type(float16)
BFloat16Tensor = _legacy_type(bfloat16)
LongTensor = _legacy_type(int64)
IntTensor = _legacy_type(int32)
ShortTensor = _legacy_type(int16)
CharTensor = _legacy_type(int8)
ByteTensor = _legacy_type(uint8)
BoolTensor = _legacy_type(bool)


def is_floating_point(input):
    """Same as `torch.is_floating_point`."""
    return input.is_floating_point()


def is_complex(input):
    """Same as `torch.is_complex`."""
    return input.is_complex()


def is_nonzero(input):
    """Same as `torch.is_nonzero`."""
    if input.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if input.numel() == 0 else 'more than one value'} is ambiguous")
    return input.item() != 0


def set_num_threads(n):
    """Same as `torch.set_num_threads`: the BLAS thread pool size (through threadpoolctl)."""
    from ._threads import set_num_threads as _set
    _set(n)


def get_num_threads():
    """Same as `torch.get_num_threads`."""
    from ._threads import get_num_threads as _get
    return _get()


def __getattr__(name):
    # heavier submodules load on first use, keeping `import ember` fast
    import importlib
    if name in ("linalg", "testing", "cuda", "backends", "fft", "special", "utils", "nn", "optim", "amp",
                "multiprocessing", "distributed", "serialization", "profiler", "cpu", "func"):
        return importlib.import_module("." + name, __name__)
    if name == "autocast":
        return importlib.import_module(".amp", __name__).autocast
    if name in ("save", "load"):
        return getattr(importlib.import_module(".serialization", __name__), name)
    raise AttributeError(f"module 'ember' has no attribute '{name}'")
