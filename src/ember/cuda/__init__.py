"""ember.cuda: GPU devices through CuPy (imported only when asked for).

Without CuPy or a GPU, the query functions answer as torch's do on a machine without CUDA (is_available() is
False, device_count() is 0, memory_allocated() is 0) and the calls that need a GPU raise a RuntimeError that says
what is missing.
"""
import importlib.util

from .._backend import cupy_bf16_missing, raise_capturing
from .._backend import deferred as _deferred
from . import _state
from .memory import (
    OutOfMemoryError,
    empty_cache,
    max_memory_allocated,
    max_memory_cached,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_cached,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_max_memory_cached,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from .graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables
from .streams import Event, ExternalStream, Stream, StreamContext, current_stream, default_stream, set_stream, stream

__all__ = [
    "CUDAGraph", "Event", "ExternalStream", "OutOfMemoryError", "Stream", "StreamContext", "current_device",
    "current_stream", "graph", "graph_pool_handle", "is_current_stream_capturing", "make_graphed_callables",
    "default_stream", "device", "device_count", "device_of", "empty_cache", "get_arch_list", "get_device_capability",
    "get_device_name", "get_device_properties", "get_rng_state", "get_rng_state_all", "init", "initial_seed",
    "is_available", "is_bf16_supported", "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated",
    "max_memory_cached", "max_memory_reserved", "mem_get_info", "memory_allocated", "memory_cached",
    "memory_reserved", "memory_stats", "memory_summary", "reset_accumulated_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "reset_peak_memory_stats", "seed", "seed_all",
    "set_device", "set_per_process_memory_fraction", "set_rng_state", "set_rng_state_all", "set_stream", "stream",
    "synchronize",
]


def _cupy():
    return _state.cupy()


# ----------------------------------------------------------------------------------------------------- devices
def is_available():
    """Same as `torch.cuda.is_available`: True when CuPy is installed and sees an NVIDIA GPU."""
    if importlib.util.find_spec("cupy") is None:
        return False
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() == 0:
            return False
    except Exception:  # noqa: BLE001 - no driver, no device, broken install: all mean "not available"
        return False
    try:  # CuPy is loaded now anyway: install ember's allocator before the first GPU tensor exists
        _state.cupy()
    except RuntimeError:
        return False
    return True


def device_count():
    """Same as `torch.cuda.device_count`."""
    if not is_available():
        return 0
    import cupy
    return cupy.cuda.runtime.getDeviceCount()


def is_initialized():
    """Same as `torch.cuda.is_initialized`: whether this process has started using the GPU through ember."""
    return _state.loaded() is not None


def init():
    """Same as `torch.cuda.init`: sets CUDA up now instead of on first use (raises without a GPU)."""
    _cupy()


def current_device():
    """Same as `torch.cuda.current_device`."""
    return _cupy().cuda.runtime.getDevice()


def set_device(device):
    """Same as `torch.cuda.set_device` (a negative index is a no-op, as in torch)."""
    index = _state.device_index(device)
    if index >= 0:
        _cupy().cuda.runtime.setDevice(index)


class device:
    """Same as `torch.cuda.device`: a context manager that makes a GPU the current one (None or -1: no-op)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _state.device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx == -1:
            return
        runtime = _cupy().cuda.runtime
        self.prev_idx = runtime.getDevice()
        if self.prev_idx != self.idx:
            runtime.setDevice(self.idx)

    def __exit__(self, *exc):
        if self.idx != -1 and self.prev_idx != self.idx:
            _cupy().cuda.runtime.setDevice(self.prev_idx)
        return False


def device_of(obj):
    """Same as `torch.cuda.device_of`: a device context for the GPU a tensor lives on (no-op for CPU tensors)."""
    return device(obj.get_device() if obj.is_cuda else -1)


def synchronize(device=None):
    """Same as `torch.cuda.synchronize`: waits for all work queued on the GPU (current one when None), then raises
    the first device-side check that failed (an index out of range...), as torch reports its device asserts."""
    cp = _cupy()
    index = _state.device_index(device)
    if _deferred.CAPTURING[0] is not None:
        raise_capturing("ember.cuda.synchronize()")
    with cp.cuda.Device(index):
        cp.cuda.runtime.deviceSynchronize()
    _deferred.synchronize(device=index)


class _CudaDeviceProperties:
    """What `torch.cuda.get_device_properties` returns: name, major, minor, total_memory, multi_processor_count..."""
    __slots__ = (
        "L2_cache_size",
        "is_integrated",
        "is_multi_gpu_board",
        "major",
        "max_threads_per_multi_processor",
        "minor",
        "multi_processor_count",
        "name",
        "regs_per_multiprocessor",
        "total_memory",
        "uuid",
        "warp_size",
    )

    def __init__(self, props):
        """From the dict of cupy.cuda.runtime.getDeviceProperties."""
        name = props.get("name", b"")
        self.name = name.decode(errors="replace").rstrip("\0") if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(props.get("major", 0)), int(props.get("minor", 0))
        self.total_memory = int(props.get("totalGlobalMem", 0))
        self.multi_processor_count = int(props.get("multiProcessorCount", 0))
        self.is_integrated = int(props.get("integrated", 0))
        self.is_multi_gpu_board = int(props.get("isMultiGpuBoard", 0))
        self.max_threads_per_multi_processor = int(props.get("maxThreadsPerMultiProcessor", 0))
        self.warp_size = int(props.get("warpSize", 32))
        self.regs_per_multiprocessor = int(props.get("regsPerMultiprocessor", 0))
        self.L2_cache_size = int(props.get("l2CacheSize", 0))
        uuid = props.get("uuid", b"")
        self.uuid = uuid.hex() if isinstance(uuid, bytes) else str(uuid)

    def __repr__(self):
        mb = 1024 * 1024
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // mb}MB, multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // mb}MB)")


def get_device_properties(device=None):
    """Same as `torch.cuda.get_device_properties`."""
    cp = _cupy()
    index = _state.device_index(device)
    if index < 0 or index >= cp.cuda.runtime.getDeviceCount():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(cp.cuda.runtime.getDeviceProperties(index))


def get_device_name(device=None):
    """Same as `torch.cuda.get_device_name`."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """Same as `torch.cuda.get_device_capability`: (major, minor) compute capability."""
    p = get_device_properties(device)
    return p.major, p.minor


def get_arch_list():
    """Same as `torch.cuda.get_arch_list`: the GPU architectures kernels can be built for ([] without a GPU).

    ember's kernels are compiled at run time (NVRTC), so this lists what the installed NVRTC supports.
    """
    if not is_available():
        return []
    cp = _cupy()
    try:
        archs = cp.cuda.nvrtc.getSupportedArchs()
    except Exception:  # noqa: BLE001 - older NVRTC: the architectures of the visible GPUs
        archs = sorted({10 * p.major + p.minor for p in map(get_device_properties, range(device_count()))})
    return [f"sm_{a}" for a in archs]


def is_bf16_supported(including_emulation=True):
    """Same as `torch.cuda.is_bf16_supported`: native bfloat16 from compute capability 8.0 (Ampere) on, emulated
    below; False where the installed CuPy has no bfloat16 (NOTE [ bfloat16 on CUDA ] in ember/_backend)."""
    if not is_available() or cupy_bf16_missing(_cupy()) is not None:
        return False
    if get_device_capability()[0] >= 8:
        return True
    return bool(including_emulation)


# --------------------------------------------------------------------------------------------- random numbers
def _generator(device="cuda"):
    from .._ops.random import default_cuda_generator
    _cupy()
    index = device if isinstance(device, int) else _state.device_index(device)
    return default_cuda_generator(index)


def manual_seed(seed):
    """Same as `torch.cuda.manual_seed`: seeds the current GPU's generator; a no-op without a GPU, as in torch."""
    if is_available():
        from .._ops.random import default_cuda_generator
        default_cuda_generator().manual_seed(seed)


def manual_seed_all(seed):
    """Same as `torch.cuda.manual_seed_all`."""
    if is_available():
        from .._ops.random import default_cuda_generator
        for i in range(device_count()):
            default_cuda_generator(i).manual_seed(seed)


def seed():
    """Same as `torch.cuda.seed`: re-seeds the current GPU's generator non-deterministically (no-op without one)."""
    if is_available():
        _generator().seed()


def seed_all():
    """Same as `torch.cuda.seed_all`: one fresh random seed for every GPU's generator."""
    if is_available():
        s = _generator(0).seed()
        for i in range(1, device_count()):
            _generator(i).manual_seed(s)


def initial_seed():
    """Same as `torch.cuda.initial_seed`: the current GPU generator's seed."""
    return _generator().initial_seed()


def get_rng_state(device="cuda"):
    """Same as `torch.cuda.get_rng_state`: the GPU generator's state as a uint8 tensor."""
    return _generator(device).get_state()


def set_rng_state(new_state, device="cuda"):
    """Same as `torch.cuda.set_rng_state`."""
    _generator(device).set_state(new_state)


def get_rng_state_all():
    """Same as `torch.cuda.get_rng_state_all`."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    """Same as `torch.cuda.set_rng_state_all`."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def __getattr__(name):
    if name == "amp":  # loaded on first use, as the other heavier submodules
        import importlib
        return importlib.import_module(".amp", __name__)
    raise AttributeError(f"module 'ember.cuda' has no attribute '{name}'")
