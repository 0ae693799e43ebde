"""ember.cuda streams, events, and pinned host memory with non_blocking copies.

The wrapper logic (current-stream switching, restoring, event creation and checks) runs here against a small
stand-in for CuPy's stream API; the tests marked cuda run on a real GPU (skipped without one).
"""
import itertools
import sys
import types

import numpy as np
import pytest

import ember
from ember._backend import pinned as pinned_memory
from ember.cuda import _state

GPU = ember.cuda.is_available() and not getattr(sys.modules.get("cupy"), "IS_FAKE", False)
needs_gpu = pytest.mark.skipif(not GPU, reason="needs CuPy and an NVIDIA GPU")


# ------------------------------------------------------------------------------ a stand-in for CuPy's streams
class _Fake:
    """cupy.cuda's stream, event and device calls on two pretend GPUs; records what was asked of it."""

    def __init__(self):
        ids = itertools.count(0x1000, 0x10)
        fake = self
        self.dev = 0
        self.current = {}  # device -> CuPy stream

        class Stream:
            def __init__(self, null=False, non_blocking=False, priority=None):
                self.ptr = 0 if null else next(ids)
                self.device_id = -1 if null else fake.dev
                self.non_blocking, self.priority = non_blocking, priority
                self.done, self.synced, self.waited = True, 0, []

            def use(self):
                fake.current[fake.dev] = self
                return self

            def wait_event(self, event):
                self.waited.append(event)

            def synchronize(self):
                self.synced += 1

        class Event:
            def __init__(self, block=False, disable_timing=False, interprocess=False):
                self.ptr, self.device_id, self.done = next(ids), fake.dev, False
                self.block, self.disable_timing, self.interprocess = block, disable_timing, interprocess
                self.streams = []

            def record(self, stream=None):
                self.streams.append(stream)

            def synchronize(self):
                self.done = True

        class Device:
            def __init__(self, i):
                self.id = i

            def __enter__(self):
                self.prev, fake.dev = fake.dev, self.id

            def __exit__(self, *exc):
                fake.dev = self.prev

        Stream.null = Stream(null=True)

        def get_current_stream(device_id=-1):
            return self.current.get(self.dev if device_id < 0 else device_id, Stream.null)

        def set_device(i):
            self.dev = i

        def elapsed(a, b):
            return 2.5

        self.cuda = types.SimpleNamespace(
            Stream=Stream, Event=Event, Device=Device, get_current_stream=get_current_stream,
            get_elapsed_time=elapsed,
            runtime=types.SimpleNamespace(getDevice=lambda: self.dev, setDevice=set_device,
                                          getDeviceCount=lambda: 2, deviceSynchronize=lambda: None))


@pytest.fixture
def fake(monkeypatch):
    f = _Fake()
    monkeypatch.setattr(_state, "cupy", lambda: f)
    monkeypatch.setattr(_state, "loaded", lambda: f)
    return f


# --------------------------------------------------------------------------------------- no GPU needed
@pytest.mark.skipif(GPU, reason="checks the errors without a GPU")
def test_without_gpu_clear_errors():
    c = ember.cuda
    for fn in (c.Stream, c.Event, c.current_stream, c.default_stream):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            fn()
    with c.stream(None):  # a no-op, as in torch
        pass
    c.set_stream(None)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        ember.ones(3).pin_memory()
    assert ember.ones(3).is_pinned() is False


def _wrap_same(s):
    from ember.cuda.streams import _wrap
    return _wrap(s._cs, s.device.index)


def test_stream_wraps_a_cupy_stream(fake):
    s = ember.cuda.Stream(priority=-1)
    assert s._cs.non_blocking is True and s._cs.priority == -1
    assert s.device == ember.device("cuda", 0) and s.cuda_stream == s._cs.ptr != 0
    assert repr(s) == f"<ember.cuda.Stream device=cuda:0 cuda_stream={s.cuda_stream:#x}>"
    s1 = ember.cuda.Stream(device=1)
    assert s1.device == ember.device("cuda:1") and s1._cs.device_id == 1 and fake.dev == 0
    assert ember.cuda.Stream("cuda:1").device.index == 1
    assert s != s1 and s == _wrap_same(s) and len({s, _wrap_same(s)}) == 1
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        ember.cuda.Stream("cpu")


def test_current_and_default_stream(fake):
    c = ember.cuda
    assert c.current_stream() == c.default_stream() and c.current_stream().cuda_stream == 0
    assert c.default_stream(1) != c.default_stream(0)  # same null handle, other device
    assert c.current_stream(1).device.index == 1
    s = c.Stream()
    c.set_stream(s)
    assert c.current_stream() == s and fake.cuda.get_current_stream() is s._cs


def test_stream_context_switches_cupy_current_stream(fake):
    c = ember.cuda
    s = c.Stream()
    with c.stream(s) as entered:
        assert entered is None
        assert fake.cuda.get_current_stream() is s._cs  # what CuPy kernels run on
        assert c.current_stream() == s
    assert c.current_stream() == c.default_stream()
    with s:
        assert c.current_stream() == s
    assert c.current_stream().cuda_stream == 0
    assert isinstance(c.stream(s), c.StreamContext)


def test_stream_context_on_another_device_restores_both(fake):
    c = ember.cuda
    other = c.Stream()  # current stream of device 1 before the block
    with c.device(1):
        c.set_stream(c.Stream())
        before1 = c.current_stream()
    s = c.Stream(device=1)
    with c.stream(s):
        assert fake.dev == 1 and c.current_stream() == s
    assert fake.dev == 0
    assert c.current_stream(1) == before1 and c.current_stream(0) == c.default_stream(0)
    assert other != s


def test_nested_stream_contexts(fake):
    c = ember.cuda
    a, b = c.Stream(), c.Stream()
    with c.stream(a):
        with c.stream(b):
            assert c.current_stream() == b
        assert c.current_stream() == a
    assert c.current_stream() == c.default_stream()


def test_event_created_on_first_record(fake):
    c = ember.cuda
    e = c.Event(enable_timing=True, blocking=True)
    assert e.query() is True and e.cuda_event == 0 and repr(e) == "<ember.cuda.Event uninitialized>"
    e.synchronize()  # no-op before recording
    s = c.Stream(device=1)
    e.record(s)
    assert e.device.index == 1 and e._ev.device_id == 1
    assert e._ev.block is True and e._ev.disable_timing is False and e._ev.streams == [s._cs]
    assert e.query() is False
    e.synchronize()
    assert e.query() is True
    with pytest.raises(RuntimeError, match="Event device 1 does not match recording stream's device 0."):
        e.record(c.Stream())


def test_event_record_wait_defaults_to_current_stream(fake):
    c = ember.cuda
    s = c.Stream()
    e = c.Event()
    with c.stream(s):
        e.record()
        t = c.Stream()
        with c.stream(t):
            e.wait()
    assert e._ev.streams == [s._cs] and t._cs.waited == [e._ev]
    unrecorded = c.Event()
    t.wait_event(unrecorded)  # nothing to wait for
    assert t._cs.waited == [e._ev]


def test_wait_stream_and_record_event(fake):
    c = ember.cuda
    a, b = c.Stream(), c.Stream()
    ev = a.record_event()
    assert isinstance(ev, c.Event) and ev._ev.streams == [a._cs]
    b.wait_stream(a)
    assert len(b._cs.waited) == 1 and b._cs.waited[0].streams == [a._cs]
    mine = c.Event()
    assert a.record_event(mine) is mine
    assert a.query() is True
    a.synchronize()
    assert a._cs.synced == 1


def test_elapsed_time_checks(fake):
    c = ember.cuda
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="Both events must be recorded before calculating elapsed time."):
        start.elapsed_time(end)
    start.record()
    end.record()
    assert start.elapsed_time(end) == 2.5
    plain = c.Event()
    plain.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(plain)
    with pytest.raises(RuntimeError, match="interprocess=True"):
        plain.ipc_handle()


class _PinnedBuffer(bytearray):
    """Stands for CuPy's PinnedMemoryPointer (which NumPy reads through the buffer protocol)."""


@pytest.fixture
def fake_pinned(monkeypatch):
    allocs = []

    def alloc(n):
        allocs.append(n)
        return _PinnedBuffer(n)

    pinned = types.SimpleNamespace(PinnedMemoryPointer=_PinnedBuffer, PinnedMemory=type(None))
    cp = types.SimpleNamespace(cuda=types.SimpleNamespace(pinned_memory=pinned, alloc_pinned_memory=alloc))
    monkeypatch.setitem(sys.modules, "cupy", cp)
    monkeypatch.setattr(_state, "cupy", lambda: cp)
    monkeypatch.setattr(pinned_memory, "require_gpu", lambda: None)  # as if there were a GPU
    return allocs


def test_pin_memory_copies_into_pinned_buffer(fake_pinned):
    x = ember.arange(12, dtype=ember.float64).reshape(3, 4).t()  # not contiguous
    p = x.pin_memory()
    assert fake_pinned == [96]
    assert p.is_pinned() and not x.is_pinned()
    assert p.shape == x.shape and p.dtype == x.dtype and np.array_equal(p.numpy(), x.numpy())
    assert p[1:].is_pinned() and p.t().is_pinned()  # views of pinned memory are pinned
    assert p.pin_memory() is p and fake_pinned == [96]
    p[0, 0] = 100.0  # writable, and a copy
    assert x[0, 0].item() == 0.0
    assert ember.zeros(0, 3).pin_memory().shape == (0, 3)
    assert ember.tensor(np.frombuffer(bytearray(8), np.float32)).is_pinned() is False


def test_pin_memory_autograd(fake_pinned):
    x = ember.ones(3, requires_grad=True)
    p = x.pin_memory()
    assert p.requires_grad and p.grad_fn.name() == "PinMemoryBackward0"
    (p * 2).sum().backward()
    assert np.array_equal(x.grad.numpy(), np.full(3, 2, np.float32))
    with ember.no_grad():
        assert x.pin_memory().grad_fn is None


# ---------------------------------------------------------------------------------------------- on a real GPU
@pytest.mark.cuda
@needs_gpu
def test_gpu_stream_context_is_cupys_current_stream():
    import cupy
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        assert cupy.cuda.get_current_stream().ptr == s.cuda_stream
        assert ember.cuda.current_stream() == s
    assert ember.cuda.current_stream() == ember.cuda.default_stream()
    assert cupy.cuda.get_current_stream().ptr == 0


@pytest.mark.cuda
@needs_gpu
def test_gpu_stream_ordering_and_timing():
    c = ember.cuda
    x = ember.randint(-3, 4, (1024, 1024), device="cuda").float()  # small integers: the products are exact
    side = c.Stream()
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    side.wait_stream(c.current_stream())  # x is ready before the side stream reads it
    with c.stream(side):
        start.record()
        y = x @ x
        for _ in range(5):
            y = y * 0.5
        end.record()
    c.current_stream().wait_stream(side)
    z = y.cpu()
    end.synchronize()
    assert end.query() and side.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms > 0
    xn = x.cpu().numpy().astype(np.float64)
    assert np.array_equal(z.numpy(), ((xn @ xn) * 0.5 ** 5).astype(np.float32))


@pytest.mark.cuda
@needs_gpu
def test_gpu_event_wait_blocks_other_stream():
    c = ember.cuda
    a, b = c.Stream(), c.Stream()
    x = ember.zeros(1 << 20, device="cuda")
    a.wait_stream(c.current_stream())
    with c.stream(a):
        x.add_(1)
        ev = a.record_event()
    with c.stream(b):
        ev.wait()
        y = x * 2
    b.synchronize()
    assert y.sum().item() == 2 * (1 << 20)


@pytest.mark.cuda
@needs_gpu
def test_gpu_pinned_copies_and_non_blocking_transfers():
    x = ember.arange(1 << 16, dtype=ember.float32)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p[10:].is_pinned() and p.pin_memory() is p
    assert np.array_equal(p.numpy(), x.numpy()) and p.numpy().ctypes.data != x.numpy().ctypes.data
    s = ember.cuda.Stream()
    with ember.cuda.stream(s):
        d = p.to("cuda", non_blocking=True)
        back = d.to("cpu", non_blocking=True)
    s.synchronize()
    assert d.is_cuda and np.array_equal(back.numpy(), x.numpy())
    g = ember.ones(4, requires_grad=True)
    pg = g.pin_memory()
    assert pg.grad_fn is not None and pg.grad_fn.name() == "PinMemoryBackward0"
    pg.sum().backward()
    assert np.array_equal(g.grad.numpy(), np.ones(4, np.float32))
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        d.pin_memory()
