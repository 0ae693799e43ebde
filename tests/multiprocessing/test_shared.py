"""Shared-memory storage: share_memory_, is_shared, empty_shared, the out-of-space error, no leaks."""
import errno
import gc
import io
import os
import pickle
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp
from ember._backend import shared_memory as _shared

from . import _workers as W

guard = pytest.fixture(autouse=True)(W.guard)


def test_empty_shared_is_shared_numpy():
    a = _shared.empty_shared((3, 4), np.float32)
    assert a.shape == (3, 4) and a.dtype == np.float32
    assert a.flags.c_contiguous and a.flags.writeable
    np.testing.assert_array_equal(a, np.zeros((3, 4), np.float32))
    assert _shared.storage_of(a) is not None
    t = ember.from_numpy(a)
    assert t.is_shared()
    a[1, 2] = 5.0
    assert t[1, 2].item() == 5.0  # from_numpy shares the shared memory itself


@pytest.mark.parametrize("shape", [(), (0,), 5, (2, 0, 3), (4, 5)])
def test_empty_shared_shapes(shape):
    a = _shared.empty_shared(shape, np.int64)
    assert a.shape == ((shape,) if isinstance(shape, int) else shape)
    assert _shared.storage_of(a) is not None


@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int16, ember.int64, ember.float16, ember.bfloat16,
                                   ember.float64, ember.complex128])
def test_empty_shared_dtypes(dtype):
    np_dtype = ember.empty(0, dtype=dtype).numpy().dtype
    a = _shared.empty_shared((2, 3), np_dtype)
    assert a.dtype == np_dtype and a.shape == (2, 3)
    t = ember.from_numpy(a)
    assert t.dtype == dtype and t.is_shared()


def test_share_memory_in_place():
    t = ember.arange(6.0)
    assert not t.is_shared()
    ptr = t.data_ptr()
    r = t.share_memory_()
    assert r is t and t.is_shared()
    assert t.data_ptr() != ptr
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    ptr = t.data_ptr()
    t.share_memory_()  # already shared: nothing moves
    assert t.data_ptr() == ptr


def test_share_memory_keeps_layout_and_dtype():
    for dt in (ember.float32, ember.float64, ember.int8, ember.bool, ember.bfloat16, ember.complex64):
        t = ember.ones(2, 3, dtype=dt)
        t.share_memory_()
        assert t.dtype == dt and t.shape == (2, 3) and t.is_shared()
    f = ember.from_numpy(np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    f.share_memory_()
    assert f.stride() == (1, 2)
    assert f.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_share_memory_of_a_view_moves_its_base():
    base = ember.zeros(3, 4)
    v = base[1]
    v.share_memory_()
    assert v.is_shared() and base.is_shared()
    v.fill_(2.0)
    assert base[1].tolist() == [2.0] * 4  # still a view of its base
    assert _shared.storage_of(base._data) is _shared.storage_of(v._data)


def test_share_memory_keeps_autograd_state():
    w = ember.ones(3, requires_grad=True)
    w.share_memory_()
    assert w.requires_grad and w.is_leaf
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_module_share_memory():
    m = ember.nn.Linear(3, 2)
    w = m.weight
    m.share_memory()
    assert m.weight is w and all(p.is_shared() for p in m.parameters())
    assert isinstance(m.weight, ember.nn.Parameter) and m.weight.requires_grad


def test_out_of_space_message(monkeypatch):
    def no_space(fd, offset, length):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "posix_fallocate", no_space)
    before = W.open_fds()
    with pytest.raises(RuntimeError) as info:
        _shared.empty_shared((1000, 1000), np.float64)
    msg = str(info.value)
    assert "8000000 bytes" in msg
    assert "bytes are free" in msg
    assert "num_workers" in msg and "batch_size" in msg
    assert "--memory=" in msg  # memfd memory is RAM, not the /dev/shm mount
    assert W.open_fds() == before  # the descriptor was closed
    with pytest.raises(RuntimeError, match="8 bytes"):
        ember.ones(2).share_memory_()


def test_other_allocation_errors_pass_through(monkeypatch):
    def bad(fd, offset, length):
        raise OSError(errno.EIO, "I/O error")
    monkeypatch.setattr(os, "posix_fallocate", bad)
    with pytest.raises(OSError):
        _shared.empty_shared(4, np.float32)


def test_memory_freed_and_nothing_named():
    shm = W.shm_entries()
    gc.collect()
    before = W.open_fds()
    ts = [ember.ones(100).share_memory_() for _ in range(20)]
    arrs = [_shared.empty_shared(10, np.uint8) for _ in range(5)]
    assert W.open_fds() == before + 25  # one descriptor per storage
    assert W.shm_entries() == shm
    del ts, arrs
    gc.collect()
    assert W.open_fds() == before


def test_storage_lives_as_long_as_a_view():
    t = ember.arange(10.0).share_memory_()
    v = t[3:5]
    del t
    gc.collect()
    assert v.tolist() == [3.0, 4.0]


def test_non_leaf_refuses_to_pickle():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor which requires_grad"):
        ForkingPickler.dumps(x * 2)
    ForkingPickler.dumps((x * 2).detach())  # detached data is fine


def test_ordinary_pickle_is_unchanged():
    t = ember.arange(3.0)
    r = pickle.loads(pickle.dumps(t))
    assert r.tolist() == [0.0, 1.0, 2.0] and not r.is_shared() and not t.is_shared()


def test_same_process_round_trip_maps_once():
    t = ember.arange(4.0)
    r = ForkingPickler.loads(ForkingPickler.dumps(t))
    assert t.is_shared()  # moved into shared memory when sent, as in torch
    assert r.data_ptr() == t.data_ptr()
    r.add_(1)
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0]


def test_sharing_strategies():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    mp.set_sharing_strategy("file_system")
    try:
        assert mp.get_sharing_strategy() == "file_system"
    finally:
        mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError, match="invalid sharing strategy 'nope', expected one of"):
        mp.set_sharing_strategy("nope")


def test_reexports_multiprocessing():
    import multiprocessing
    for name in multiprocessing.__all__:
        assert hasattr(mp, name), name
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException",
                 "get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies"):
        assert hasattr(mp, name), name
    assert {"get_sharing_strategy", "set_sharing_strategy", "get_all_sharing_strategies"} <= set(mp.__all__)


def test_out_of_descriptors_on_allocation(monkeypatch):
    def no_fds(name, flags=0):
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))
    monkeypatch.setattr(os, "memfd_create", no_fds)
    with pytest.raises(RuntimeError, match="too many open files.*ulimit -n"):
        ember.ones(3).share_memory_()


def test_out_of_space_message_without_memfd(monkeypatch):
    def no_space(fd, offset, length):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(_shared, "_HAVE_MEMFD", False)
    monkeypatch.setattr(os, "posix_fallocate", no_space)
    shm = W.shm_entries()
    with pytest.raises(RuntimeError, match=r"could not allocate 4000 bytes of shared memory \(No space left on "
                                           r"device\); only \d+ bytes are free in /dev/shm.*--shm-size="):
        _shared.empty_shared(1000, np.float32)
    assert W.shm_entries() == shm


def test_views_moved_later_join_their_base():
    base = ember.zeros(3, 4)
    a, b = base[0], base[:, 1]
    a.share_memory_()
    b.share_memory_()  # moved after its base: lands in the same storage
    assert _shared.storage_of(a._data) is _shared.storage_of(b._data) is _shared.storage_of(base._data)
    base.fill_(1.0)
    assert a.tolist() == [1.0] * 4 and b.tolist() == [1.0] * 3


def test_no_stale_snapshot_from_numpy():
    # two tensors made separately from one NumPy array each get the array's current contents
    data = np.zeros(6)
    x = ember.from_numpy(data)[1:3]
    x.share_memory_()
    data[4] = 9.0
    y = ember.from_numpy(data)[4:]
    y.share_memory_()
    assert y.tolist() == [9.0, 0.0]


def test_odd_layouts_round_trip():
    e = ember.ones(3).expand(4, 3)
    r = ForkingPickler.loads(ForkingPickler.dumps(e))
    assert r.stride() == (0, 1) and r.tolist() == [[1.0] * 3] * 4
    s = ember.from_numpy(np.lib.stride_tricks.as_strided(np.arange(6.0), (2, 2), (24, 8)))
    r = ForkingPickler.loads(ForkingPickler.dumps(s))
    assert r.tolist() == [[0.0, 1.0], [3.0, 4.0]] and r.is_shared()
    assert ForkingPickler.loads(ForkingPickler.dumps(ember.tensor(True))).item() is True


def test_device_tensors_refused_clearly():
    class FakeDeviceArray:  # stands in for a CuPy array
        pass
    t = ember.ones(2)
    t._data = FakeDeviceArray()
    assert t.is_shared()  # as in torch, device memory counts as shared
    assert t.share_memory_() is t
    with pytest.raises(RuntimeError, match=r"cannot send CUDA tensors.*\.cpu\(\)"):
        ForkingPickler.dumps(t)


def test_subclass_defined_after_import_is_registered():
    class Late(ember.Tensor):
        pass
    class LateParameter(ember.nn.Parameter):
        pass
    from ember.multiprocessing.reductions import reduce_tensor
    assert ForkingPickler._extra_reducers[Late] is reduce_tensor
    assert ForkingPickler._extra_reducers[LateParameter] is reduce_tensor


def test_batch_arena_one_storage_per_batch():
    arena = _shared.BatchArena()
    arena.begin()
    a = arena.alloc((4, 3), np.float32)
    b = arena.alloc(5, np.int64)
    c = arena.alloc(1000, np.int64)  # the first batch: a page more than its first tensor, then a storage of its own
    arena.end()
    assert _shared.storage_of(a) is _shared.storage_of(b) is not _shared.storage_of(c)
    assert arena.predict == 64 + 64 + 8000  # each tensor starts at a 64-byte boundary
    arena.predict = 64 + 40
    arena.begin()
    a = arena.alloc((4, 3), np.float32)
    b = arena.alloc(5, np.int64)
    big = arena.alloc(100, np.float64)  # more than the largest batch so far: a storage of its own
    arena.end()
    assert _shared.storage_of(a) is _shared.storage_of(b) is not _shared.storage_of(big)
    assert b.__array_interface__["data"][0] % 64 == 0
    assert arena.predict == 128 + 800
    a[...] = 1.5
    b[...] = 7
    np.testing.assert_array_equal(a, np.full((4, 3), 1.5, np.float32))
    np.testing.assert_array_equal(b, np.full(5, 7))


def test_region_is_a_storage_of_its_own():
    arena = _shared.BatchArena()
    arena.predict = 4096
    arena.begin()
    a = arena.alloc((2, 8), np.float32)
    b = arena.alloc(3, np.int64)
    arena.end()
    x, y = ember.from_numpy(a), ember.from_numpy(b)
    assert x.is_shared() and y.is_shared()
    assert _shared.storage_of(a) is _shared.storage_of(b)
    assert isinstance(_shared.holder_of(b), _shared.SharedRegion)
    assert x.storage_offset() == 0 and y.storage_offset() == 0
    y.copy_(ember.tensor([1, 2, 3]))
    buf = io.BytesIO()
    ember.save(y, buf)
    assert len(buf.getvalue()) < 2048  # only the region's 24 bytes, not the whole memory file
    assert ember.load(io.BytesIO(buf.getvalue())).tolist() == [1, 2, 3]
    assert y.share_memory_() is y and _shared.holder_of(y._data) is _shared.holder_of(b)


def test_region_storage_freed_with_its_last_tensor():
    arena = _shared.BatchArena()
    arena.predict = 4096
    arena.begin()
    a = arena.alloc(4, np.float32)
    b = arena.alloc(4, np.float32)
    arena.end()
    key = _shared.storage_of(a).key
    del a
    gc.collect()
    assert key in _shared._by_key  # b still holds the storage
    del b
    gc.collect()
    assert key not in _shared._by_key
