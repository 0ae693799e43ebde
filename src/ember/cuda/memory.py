"""GPU memory: CuPy's memory pool is ember's caching allocator (`_backend/cuda_alloc.py`); this module reports
torch's statistics and manages the pool.

Allocations made by ember (and by any CuPy code in the process) go through `_make_malloc`'s function, installed with
cupy.cuda.set_allocator when ember first imports CuPy.
"""
import collections
import warnings

from . import _state

__all__ = [
    "OutOfMemoryError",
    "empty_cache",
    "max_memory_allocated",
    "max_memory_cached",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_cached",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_accumulated_memory_stats",
    "reset_max_memory_allocated",
    "reset_max_memory_cached",
    "reset_peak_memory_stats",
    "set_per_process_memory_fraction",
]


from .._backend.cuda_alloc import OutOfMemoryError, _default_pool, _stats

def _index(device):
    return _state.device_index(device, optional=True)


def _reserved(cp, pool, index):
    with cp.cuda.Device(index):
        return pool.total_bytes()


def _stats_dict(st, reserved):
    """torch's memory_stats keys (those that CuPy's pool can back), sorted as torch sorts them."""
    reserved_peak = max(st.reserved_peak, reserved)
    d = {
        "active_bytes.all.current": st.allocated,
        "active_bytes.all.peak": st.peak,
        "allocated_bytes.all.allocated": st.bytes_alloc,
        "allocated_bytes.all.current": st.allocated,
        "allocated_bytes.all.freed": st.bytes_alloc - st.allocated,
        "allocated_bytes.all.peak": st.peak,
        "allocation.all.allocated": st.n_alloc,
        "allocation.all.current": st.n_alloc - st.n_free,
        "allocation.all.freed": st.n_free,
        "num_alloc_retries": st.retries,
        "num_ooms": st.ooms,
        "reserved_bytes.all.current": reserved,
        "reserved_bytes.all.peak": reserved_peak,
    }
    return collections.OrderedDict(sorted(d.items()))


def memory_stats(device=None):
    """Same as `torch.cuda.memory_stats`, with the keys that CuPy's pool can back (empty before CUDA is used)."""
    got = _pool_of(device)
    if got is None:
        return collections.OrderedDict()
    cp, pool, st, index = got
    return _stats_dict(st, _reserved(cp, pool, index))


def _pool_of(device):
    cp = _state.loaded()
    if cp is None:
        return None
    index = _index(device)
    return cp, _default_pool(cp), _stats(index), index


def memory_allocated(device=None):
    """Same as `torch.cuda.memory_allocated`: bytes held by tensors (0 before CUDA is used)."""
    got = _pool_of(device)
    return 0 if got is None else got[2].allocated


def max_memory_allocated(device=None):
    """Same as `torch.cuda.max_memory_allocated`."""
    got = _pool_of(device)
    return 0 if got is None else got[2].peak


def memory_reserved(device=None):
    """Same as `torch.cuda.memory_reserved`: bytes held by the caching allocator (CuPy's pool)."""
    got = _pool_of(device)
    return 0 if got is None else _reserved(got[0], got[1], got[3])


def max_memory_reserved(device=None):
    """Same as `torch.cuda.max_memory_reserved`."""
    got = _pool_of(device)
    if got is None:
        return 0
    cp, pool, st, index = got
    return max(st.reserved_peak, _reserved(cp, pool, index))


def memory_cached(device=None):
    """Same as `torch.cuda.memory_cached` (deprecated there): memory_reserved."""
    warnings.warn("ember.cuda.memory_cached has been renamed to ember.cuda.memory_reserved", FutureWarning,
                  stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Same as `torch.cuda.max_memory_cached` (deprecated there): max_memory_reserved."""
    warnings.warn("ember.cuda.max_memory_cached has been renamed to ember.cuda.max_memory_reserved",
                  FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    """Same as `torch.cuda.reset_peak_memory_stats`: the peaks restart from the current values."""
    got = _pool_of(device)
    if got is None:
        return
    cp, pool, st, index = got
    st.peak = st.allocated
    st.reserved_peak = _reserved(cp, pool, index)


def reset_accumulated_memory_stats(device=None):
    """Same as `torch.cuda.reset_accumulated_memory_stats`: the cumulative counts restart from zero."""
    got = _pool_of(device)
    if got is None:
        return
    st = got[2]
    live = st.n_alloc - st.n_free
    st.n_alloc, st.n_free, st.bytes_alloc = live, 0, st.allocated
    st.retries = st.ooms = 0


def reset_max_memory_allocated(device=None):
    """Same as `torch.cuda.reset_max_memory_allocated`: resets all the peaks (with torch's FutureWarning)."""
    warnings.warn("ember.cuda.reset_max_memory_allocated now calls ember.cuda.reset_peak_memory_stats, which "
                  "resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    """Same as `torch.cuda.reset_max_memory_cached`: resets all the peaks (with torch's FutureWarning)."""
    warnings.warn("ember.cuda.reset_max_memory_cached now calls ember.cuda.reset_peak_memory_stats, which "
                  "resets /all/ peak memory stats.", FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def empty_cache():
    """Same as `torch.cuda.empty_cache`: returns the pool's unused cached blocks to the GPU (every device)."""
    cp = _state.loaded()
    if cp is None:
        return
    pool = _default_pool(cp)
    for i in range(cp.cuda.runtime.getDeviceCount()):
        with cp.cuda.Device(i):
            pool.free_all_blocks()


def mem_get_info(device=None):
    """Same as `torch.cuda.mem_get_info`: (free, total) bytes of the GPU, as cudaMemGetInfo reports them."""
    cp = _state.cupy()
    with cp.cuda.Device(_index(device)):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


def set_per_process_memory_fraction(fraction, device=None):
    """Same as `torch.cuda.set_per_process_memory_fraction`: caps what the pool may reserve on the GPU to
    fraction * total memory (CuPy's MemoryPool.set_limit); beyond it allocations raise OutOfMemoryError."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    cp = _state.cupy()
    with cp.cuda.Device(_index(device)):
        _, total = cp.cuda.runtime.memGetInfo()
        # CuPy reads 0 as "no limit"; a zero fraction must forbid every allocation, as in torch
        _default_pool(cp).set_limit(size=max(int(fraction * total), 1))


_ROW = "| {:<24}| {:>10} | {:>10} | {:>10} | {:>10} |"
_WIDTH = len(_ROW.format("", "", "", "", "")) - 2


def _summary(stats, device, abbreviated=False):
    """memory_summary's table, from a memory_stats dict."""
    def g(key):
        return stats.get(key, 0)

    def row(name, fmt, cur, peak=None, alloc=None, freed=None):
        return _ROW.format(name, *("" if v is None else fmt(v) for v in (cur, peak, alloc, freed)))

    line, sep = "|" + "=" * _WIDTH + "|", "|" + "-" * _WIDTH + "|"
    rows = [line, "|" + f"ember CUDA memory summary, device ID {device}".center(_WIDTH) + "|",
            sep, "|" + f"CUDA OOMs: {g('num_ooms')}  |  allocation retries: {g('num_alloc_retries')}".center(_WIDTH)
            + "|", line, _ROW.format("Metric", "Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"), sep,
            row("Allocated memory", _short_size, g("allocated_bytes.all.current"), g("allocated_bytes.all.peak"),
                g("allocated_bytes.all.allocated"), g("allocated_bytes.all.freed"))]
    if not abbreviated:
        rows.append(row("Active memory", _short_size, g("active_bytes.all.current"), g("active_bytes.all.peak")))
    rows += [row("Reserved memory (pool)", _short_size, g("reserved_bytes.all.current"),
                 g("reserved_bytes.all.peak")),
             sep,
             row("Allocations", str, g("allocation.all.current"), None, g("allocation.all.allocated"),
                 g("allocation.all.freed")),
             line]
    return "\n".join(rows) + "\n"


def _short_size(n):
    """A compact size for the summary table: '0 B', '512 B', '12 KiB', '1023 MiB', '3 GiB'."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.0f} {unit}"
        n /= 1024
    return None  # unreachable


def memory_summary(device=None, abbreviated=False):
    """Same as `torch.cuda.memory_summary`: a readable table of memory_stats (fewer rows than torch's, since
    CuPy's pool has no large/small pools or per-segment counts)."""
    got = _pool_of(device)
    index = 0 if got is None else got[3]
    return _summary(memory_stats(device) if got is not None else {}, index, abbreviated)
