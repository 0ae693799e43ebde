"""ember.cuda memory: statistics, the counting allocator, out-of-memory errors, per-process limits.

The allocator and statistics logic runs here against a small stand-in for CuPy's pool; the tests marked cuda
run the same checks on a real GPU (skipped without one).
"""
import collections
import types
import warnings

import pytest

import ember
from ember._backend import cuda_alloc
from ember.cuda import _state
from ember.cuda import memory as mem

GPU = ember.cuda.is_available() and not getattr(__import__("sys").modules.get("cupy"), "IS_FAKE", False)
needs_gpu = pytest.mark.skipif(not GPU, reason="needs CuPy and an NVIDIA GPU")

MiB = 1 << 20
GiB = 1 << 30


# ------------------------------------------------------------------------------------- a stand-in for CuPy's pool
class _OOM(MemoryError):
    pass


class _PoolMem:
    def __init__(self, pool, size):
        self.pool, self.size = pool, size

    def __del__(self):
        self.pool.used -= self.size
        self.pool.free.append(self.size)  # back to the cache


class _Ptr:
    def __init__(self, mem, dev=0):
        self.mem, self.ptr, self.device_id = mem, id(mem), dev


class _Pool:
    """Like CuPy's pool: 512-byte rounding, freed blocks cached and split, new blocks up to the capacity or limit."""

    def __init__(self, capacity):
        self.capacity, self.limit, self.used, self.total = capacity, 0, 0, 0
        self.free, self.freed_calls = [], 0

    def malloc(self, size):
        n = -(-size // 512) * 512
        fits = sorted(f for f in self.free if f >= n)
        if fits:
            self.free.remove(fits[0])
            if fits[0] > n:
                self.free.append(fits[0] - n)
        elif self.total + n > min(self.capacity, self.limit or self.capacity):
            raise _OOM(f"Out of memory allocating {n:,} bytes")
        else:
            self.total += n
        self.used += n
        return _Ptr(_PoolMem(self, n))

    def total_bytes(self):
        return self.total

    def free_all_blocks(self, stream=None):
        self.freed_calls += 1
        self.total -= sum(self.free)
        self.free = []

    def get_limit(self):
        return self.limit

    def set_limit(self, size=None, fraction=None):
        self.limit = size


class _Device:
    def __init__(self, i):
        self.id = i

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Unowned:
    """Stands for cupy.cuda.memory.UnownedMemory (a class: the allocator subclasses it)."""

    def __init__(self, ptr, size, owner, device_id):
        self.ptr, self.size, self.owner, self.device_id = ptr, size, owner, device_id


def _fake_cupy(pool, free=10 * GiB, total=80 * GiB):
    return types.SimpleNamespace(
        get_default_memory_pool=lambda: pool,
        cuda=types.SimpleNamespace(
            Device=_Device,
            memory=types.SimpleNamespace(
                OutOfMemoryError=_OOM,
                UnownedMemory=_Unowned,
                MemoryPointer=lambda m, off: types.SimpleNamespace(mem=m, ptr=m.ptr + off, device_id=m.device_id)),
            runtime=types.SimpleNamespace(getDevice=lambda: 0, getDeviceCount=lambda: 1,
                                          memGetInfo=lambda: (free, total))))


@pytest.fixture
def fake(monkeypatch):
    """ember.cuda's memory functions running on the stand-in pool (fresh counters)."""
    pool = _Pool(capacity=4 * MiB)
    cp = _fake_cupy(pool, free=3 * MiB, total=4 * MiB)
    monkeypatch.setattr(cuda_alloc, "_STATS", {})
    malloc = cuda_alloc._make_malloc(cp)
    monkeypatch.setattr(_state, "loaded", lambda: cp)
    monkeypatch.setattr(_state, "cupy", lambda: cp)
    return types.SimpleNamespace(cp=cp, pool=pool, malloc=malloc)


# ----------------------------------------------------------------------------------------------- no GPU needed
def test_format_size():
    assert cuda_alloc._format_size(0) == "0 bytes"
    assert cuda_alloc._format_size(1023) == "1023 bytes"
    assert cuda_alloc._format_size(1024) == "1.00 KiB"
    assert cuda_alloc._format_size(3 * MiB // 2) == "1.50 MiB"
    assert cuda_alloc._format_size(20 * GiB) == "20.00 GiB"
    assert cuda_alloc._format_size(4096 * GiB) == "4096.00 GiB"


def test_oom_message_numbers():
    msg = cuda_alloc._oom_message(2 * GiB, 1, 1 * GiB, 80 * GiB, 70 * GiB, 72 * GiB)
    assert msg.startswith("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 80.00 GiB "
                          "of which 1.00 GiB is free. Of the allocated memory 70.00 GiB is allocated by ember, and "
                          "2.00 GiB is reserved by ember but unallocated.")
    assert "smaller batch size" in msg
    assert "PYTORCH_CUDA_ALLOC_CONF" not in msg and "largest free block" not in msg
    assert "set_per_process_memory_fraction" not in msg  # no limit set: not the way out


def test_oom_message_limit_and_largest_block():
    msg = cuda_alloc._oom_message(513, 0, 5 * GiB, 16 * GiB, 3 * GiB, 3 * GiB + 512, limit=4 * GiB, largest_free=256)
    assert "Tried to allocate 513 bytes." in msg
    assert "512 bytes is reserved by ember but unallocated (largest free block: 256 bytes)." in msg
    assert "may reserve at most 4.00 GiB on this GPU (ember.cuda.set_per_process_memory_fraction)" in msg
    assert msg.endswith("or raise the limit with ember.cuda.set_per_process_memory_fraction.")


def test_oom_error_type():
    assert issubclass(ember.cuda.OutOfMemoryError, RuntimeError)
    assert ember.cuda.OutOfMemoryError is mem.OutOfMemoryError


def test_stats_dict_keys_and_values():
    st = cuda_alloc._Stats()
    st.allocated, st.peak, st.n_alloc, st.n_free, st.bytes_alloc = 3 * MiB, 5 * MiB, 10, 4, 9 * MiB
    st.reserved_peak, st.retries, st.ooms = 6 * MiB, 2, 1
    d = mem._stats_dict(st, 4 * MiB)
    assert isinstance(d, collections.OrderedDict) and list(d) == sorted(d)
    assert d["allocated_bytes.all.current"] == 3 * MiB
    assert d["allocated_bytes.all.peak"] == 5 * MiB
    assert d["allocated_bytes.all.allocated"] == 9 * MiB
    assert d["allocated_bytes.all.freed"] == 6 * MiB
    assert d["allocation.all.current"] == 6 and d["allocation.all.freed"] == 4 and d["allocation.all.allocated"] == 10
    assert d["reserved_bytes.all.current"] == 4 * MiB and d["reserved_bytes.all.peak"] == 6 * MiB
    assert d["num_alloc_retries"] == 2 and d["num_ooms"] == 1
    assert mem._stats_dict(st, 7 * MiB)["reserved_bytes.all.peak"] == 7 * MiB  # never below the current value


def test_summary_table():
    st = cuda_alloc._Stats()
    st.allocated, st.peak, st.n_alloc, st.bytes_alloc = 3 * MiB, 5 * GiB, 7, 3 * MiB
    text = mem._summary(mem._stats_dict(st, 8 * MiB), 1)
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1  # a rectangle
    assert "device ID 1" in lines[1]
    row = next(line for line in lines if line.startswith("| Allocated memory"))
    assert [c.strip() for c in row.split("|")[2:6]] == ["3 MiB", "5 GiB", "3 MiB", "0 B"]
    row = next(line for line in lines if line.startswith("| Reserved memory"))
    assert [c.strip() for c in row.split("|")[2:4]] == ["8 MiB", "8 MiB"]
    assert "Active memory" not in mem._summary({}, 0, abbreviated=True)
    assert "| Allocations             |          7 |" in text


@pytest.mark.skipif(GPU, reason="checks the answers without a GPU")
def test_without_gpu_like_torch():
    c = ember.cuda
    assert c.memory_allocated() == 0 and c.max_memory_allocated() == 0
    assert c.memory_reserved() == 0 and c.max_memory_reserved() == 0
    assert c.memory_stats() == collections.OrderedDict()
    c.empty_cache()
    c.reset_peak_memory_stats()
    c.reset_accumulated_memory_stats()
    assert "device ID 0" in c.memory_summary()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        c.mem_get_info()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        c.set_per_process_memory_fraction(0.5)


def test_fraction_argument_checks():
    with pytest.raises(TypeError, match="Invalid type for fraction argument, must be `float`"):
        ember.cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match=r"Invalid fraction value: 1.5. Allowed range: 0~1"):
        ember.cuda.set_per_process_memory_fraction(1.5)
    with pytest.raises(ValueError, match="Invalid fraction value: -0.1"):
        ember.cuda.set_per_process_memory_fraction(-0.1)


def test_deprecated_names_warn():
    for fn in (ember.cuda.reset_max_memory_allocated, ember.cuda.reset_max_memory_cached):
        with pytest.warns(FutureWarning, match="reset_peak_memory_stats"):
            fn()
    with pytest.warns(FutureWarning, match="memory_reserved"):
        ember.cuda.memory_cached()
    with pytest.warns(FutureWarning, match="max_memory_reserved"):
        ember.cuda.max_memory_cached()


# ------------------------------------------------------------------------ the allocator on the stand-in pool
def test_allocator_counts_and_peaks(fake):
    c = ember.cuda
    a = fake.malloc(1000)  # rounded to 1024
    b = fake.malloc(4096)
    assert a.mem.size == 1024 and b.mem.size == 4096
    assert c.memory_allocated() == c.memory_allocated(0) == 5120
    assert c.memory_reserved() == 5120
    del a
    assert c.memory_allocated() == 4096
    assert c.max_memory_allocated() == 5120
    assert c.memory_reserved() == 5120  # cached, as torch's allocator keeps it
    s = c.memory_stats()
    assert s["allocation.all.current"] == 1 and s["allocation.all.allocated"] == 2 and s["allocation.all.freed"] == 1
    assert s["allocated_bytes.all.freed"] == 1024
    c.reset_peak_memory_stats()
    assert c.max_memory_allocated() == 4096
    c.empty_cache()
    assert fake.pool.freed_calls == 1 and c.memory_reserved() == 4096
    assert c.max_memory_reserved() == 5120  # the peak survives emptying the cache
    c.reset_peak_memory_stats()
    assert c.max_memory_reserved() == 4096
    c.reset_accumulated_memory_stats()
    s = c.memory_stats()
    assert s["allocation.all.allocated"] == 1 and s["allocation.all.freed"] == 0
    del b
    assert c.memory_allocated() == 0


def test_allocator_zero_bytes(fake):
    p = fake.malloc(0)
    assert p.mem.size == 0 and ember.cuda.memory_allocated() == 0


def test_allocator_retries_after_emptying_cache(fake):
    a = fake.malloc(3 * MiB)
    del a  # 3 MiB stays cached
    b = fake.malloc(2 * MiB)  # served from the cache
    c = fake.malloc(2 * MiB)  # the 1 MiB left cached is too small and 3 + 2 MiB exceed the 4 MiB GPU
    assert fake.pool.freed_calls == 1  # freed once, then it fit
    s = ember.cuda.memory_stats()
    assert s["num_alloc_retries"] == 1 and s["num_ooms"] == 0
    del b, c


def test_allocator_raises_out_of_memory_error(fake):
    keep = fake.malloc(1 * MiB)
    with pytest.raises(ember.cuda.OutOfMemoryError) as info:
        fake.malloc(8 * MiB)
    msg = str(info.value)
    assert "Tried to allocate 8.00 MiB. GPU 0 has a total capacity of 4.00 MiB of which 3.00 MiB is free." in msg
    assert "1.00 MiB is allocated by ember" in msg
    assert isinstance(info.value, RuntimeError) and info.value.__cause__ is None
    s = ember.cuda.memory_stats()
    assert s["num_ooms"] == 1 and s["num_alloc_retries"] == 1
    assert ember.cuda.memory_allocated() == 1 * MiB
    del keep


def test_fraction_sets_pool_limit(fake):
    ember.cuda.set_per_process_memory_fraction(0.5)
    assert fake.pool.limit == 2 * MiB
    ember.cuda.set_per_process_memory_fraction(0.0)
    assert fake.pool.limit == 1  # CuPy reads 0 as "no limit"
    ember.cuda.set_per_process_memory_fraction(0.5)
    with pytest.raises(ember.cuda.OutOfMemoryError, match="may reserve at most 2.00 MiB"):
        fake.malloc(3 * MiB)
    assert ember.cuda.mem_get_info() == (3 * MiB, 4 * MiB)


# ---------------------------------------------------------------------------------------------- on a real GPU
def _sync():
    ember.cuda.synchronize()


@pytest.mark.cuda
@needs_gpu
def test_gpu_allocated_and_peak():
    c = ember.cuda
    c.init()
    c.empty_cache()
    c.reset_peak_memory_stats()
    base = c.memory_allocated()
    x = ember.empty(1024, 1024, device="cuda")  # 4 MiB
    assert c.memory_allocated() - base == 4 * MiB
    assert c.memory_reserved() >= c.memory_allocated()
    y = ember.empty(2 * 1024, 1024, device="cuda")  # 8 MiB
    peak = c.memory_allocated()
    del x, y
    assert c.memory_allocated() == base
    assert c.max_memory_allocated() >= peak
    s = c.memory_stats()
    assert s["allocated_bytes.all.current"] == base
    assert s["allocated_bytes.all.peak"] == c.max_memory_allocated()
    assert s["reserved_bytes.all.current"] == c.memory_reserved()
    c.reset_peak_memory_stats()
    assert c.max_memory_allocated() == base
    assert "Allocated memory" in c.memory_summary()


@pytest.mark.cuda
@needs_gpu
def test_gpu_empty_cache_releases_reserved():
    c = ember.cuda
    c.init()
    x = ember.empty(64 * 1024 * 1024, dtype=ember.uint8, device="cuda")
    del x
    held = c.memory_reserved()
    assert held >= 64 * MiB
    c.empty_cache()
    assert c.memory_reserved() <= held - 64 * MiB
    free, total = c.mem_get_info()
    assert 0 < free <= total == c.get_device_properties().total_memory


@pytest.mark.cuda
@needs_gpu
def test_gpu_out_of_memory():
    c = ember.cuda
    c.init()
    retries = c.memory_stats()["num_alloc_retries"]
    _, total = c.mem_get_info()
    with pytest.raises(c.OutOfMemoryError, match="CUDA out of memory. Tried to allocate") as info:
        ember.empty(2 * total, dtype=ember.uint8, device="cuda")
    assert f"GPU {c.current_device()} has a total capacity of" in str(info.value)
    s = c.memory_stats()
    assert s["num_ooms"] >= 1 and s["num_alloc_retries"] == retries + 1
    x = ember.ones(10, device="cuda")  # still usable
    assert x.sum().item() == 10


@pytest.mark.cuda
@needs_gpu
def test_gpu_per_process_memory_fraction():
    c = ember.cuda
    c.init()
    c.empty_cache()
    _, total = c.mem_get_info()
    try:
        c.set_per_process_memory_fraction(0.25)
        with pytest.raises(c.OutOfMemoryError, match="set_per_process_memory_fraction"):
            ember.empty(int(0.3 * total), dtype=ember.uint8, device="cuda")
        x = ember.empty(int(0.1 * total), dtype=ember.uint8, device="cuda")
        del x
    finally:
        c.set_per_process_memory_fraction(1.0)
        c.empty_cache()


def test_no_warning_leak():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.cuda.memory_stats()
