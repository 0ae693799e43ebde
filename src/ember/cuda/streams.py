"""CUDA streams and events: thin wrappers of CuPy's, so that CuPy kernels (ember's ops) run on ember's streams."""
import threading

from .._backend import deferred as _deferred
from .._backend import raise_capturing
from .._device import device as _Device
from . import _state

__all__ = ["Event", "ExternalStream", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream",
           "stream"]


def _wrap(cs, index, cls=None):
    """An ember Stream for a CuPy stream of GPU `index` (no new CUDA stream is created)."""
    s = object.__new__(cls or Stream)
    s._cs = cs
    s.device = _Device("cuda", index)
    return s


class Stream:
    """Same as `torch.cuda.Stream`: a queue of GPU work (a non-blocking CuPy stream; priority as in torch, lower
    numbers run first)."""
    __slots__ = ("_cs", "device")

    def __init__(self, device=None, priority=0, **kwargs):
        cp = _state.cupy()
        if kwargs:
            raise TypeError(f"Stream() got an unexpected keyword argument '{next(iter(kwargs))}'")
        index = _state.device_index(device)
        with cp.cuda.Device(index):
            self._cs = cp.cuda.Stream(non_blocking=True, priority=int(priority))
        self.device = _Device("cuda", index)

    @property
    def cuda_stream(self):
        """The raw cudaStream_t, as an int (0 for the default stream)."""
        return self._cs.ptr

    @property
    def priority(self):
        return self._cs.priority

    def wait_event(self, event):
        """Work queued on this stream after this call waits for `event` (no-op for an unrecorded event)."""
        if event._ev is not None:
            self._cs.wait_event(event._ev)

    def wait_stream(self, stream):
        """Work queued on this stream after this call waits for the work queued on `stream` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records `event` (a new Event when None) on this stream and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def query(self):
        """True when all work queued on this stream has finished."""
        return bool(self._cs.done)

    def synchronize(self):
        """Waits for all work queued on this stream, then raises the first failed device-side check queued on it."""
        if _deferred.CAPTURING[0] is not None:
            raise_capturing("Stream.synchronize()")
        self._cs.synchronize()
        _deferred.synchronize(device=self.device.index, stream=self._cs.ptr)

    def __enter__(self):
        ctx = StreamContext(self)
        ctx.__enter__()
        _entered().append(ctx)
        return self

    def __exit__(self, *exc):
        _entered().pop().__exit__(*exc)

    def __eq__(self, other):
        return isinstance(other, Stream) and self._cs.ptr == other._cs.ptr and self.device == other.device

    def __hash__(self):
        return hash((self._cs.ptr, self.device))

    def __repr__(self):
        return f"<ember.cuda.Stream device={self.device} cuda_stream={self._cs.ptr:#x}>"


_LOCAL = threading.local()


def _entered():
    """This thread's StreamContexts opened by `with stream_object:`."""
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack


class ExternalStream(Stream):
    """Same as `torch.cuda.ExternalStream`: wraps a cudaStream_t created elsewhere (not destroyed by ember)."""
    __slots__ = ()

    def __init__(self, stream_ptr, device=None, **kwargs):
        cp = _state.cupy()
        index = _state.device_index(device)
        self._cs = cp.cuda.ExternalStream(int(stream_ptr), index)
        self.device = _Device("cuda", index)


def current_stream(device=None):
    """Same as `torch.cuda.current_stream`: the stream CuPy (hence ember) queues work on for that GPU."""
    cp = _state.cupy()
    index = _state.device_index(device)
    return _wrap(cp.cuda.get_current_stream(index), index)


def default_stream(device=None):
    """Same as `torch.cuda.default_stream`: the GPU's legacy default (null) stream."""
    cp = _state.cupy()
    return _wrap(cp.cuda.Stream.null, _state.device_index(device))


def set_stream(stream):
    """Same as `torch.cuda.set_stream`: makes `stream` current (and its GPU the current device)."""
    if stream is None:
        return
    cp = _state.cupy()
    index = stream.device.index
    if cp.cuda.runtime.getDevice() != index:
        cp.cuda.runtime.setDevice(index)
    stream._cs.use()


class StreamContext:
    """Same as `torch.cuda.StreamContext`: makes a stream current inside a `with` block (a no-op for None)."""
    __slots__ = ("dst_prev_stream", "src_prev_stream", "stream")

    def __init__(self, stream):
        self.stream = stream
        self.src_prev_stream = self.dst_prev_stream = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return
        self.src_prev_stream = current_stream(None)
        # the stream's own GPU gets its current stream back on exit too, when it is not the current GPU
        self.dst_prev_stream = None if self.src_prev_stream.device == s.device else current_stream(s.device)
        set_stream(s)

    def __exit__(self, *exc):
        if self.stream is None:
            return
        if self.dst_prev_stream is not None:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)


def stream(stream):
    """Same as `torch.cuda.stream`: `with ember.cuda.stream(s):` queues ember's (and CuPy's) kernels on s."""
    return StreamContext(stream)


class Event:
    """Same as `torch.cuda.Event`: a marker in a stream's queue, created on the stream's GPU when first recorded.

    Timing GPU work::

        start = ember.cuda.Event(enable_timing=True)
        end = ember.cuda.Event(enable_timing=True)
        start.record()
        y = x @ x
        end.record()
        end.synchronize()
        print(start.elapsed_time(end), "ms")
    """
    __slots__ = ("_ev", "blocking", "device", "enable_timing", "interprocess")

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, external=False):
        _state.cupy()
        self._ev = self.device = None
        self.enable_timing, self.blocking, self.interprocess = bool(enable_timing), bool(blocking), bool(interprocess)

    def _create(self, device):
        cp = _state.cupy()
        with cp.cuda.Device(device.index):
            self._ev = cp.cuda.Event(block=self.blocking, disable_timing=not self.enable_timing,
                                     interprocess=self.interprocess)
        self.device = device

    def record(self, stream=None):
        """Records the event on `stream` (the current stream when None)."""
        if stream is None:
            stream = current_stream()
        if self._ev is None:
            self._create(stream.device)
        elif stream.device != self.device:
            raise RuntimeError(f"Event device {self.device.index} does not match recording stream's device "
                               f"{stream.device.index}.")
        self._ev.record(stream._cs)

    def wait(self, stream=None):
        """Makes `stream` (the current stream when None) wait for this event."""
        if stream is None:
            stream = current_stream()
        stream.wait_event(self)

    def query(self):
        """True when the work recorded before the event has finished (True for an unrecorded event)."""
        return True if self._ev is None else bool(self._ev.done)

    def synchronize(self):
        """Waits until the event has completed."""
        if self._ev is not None:
            self._ev.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and `end_event` (both recorded, created with enable_timing=True)."""
        if self._ev is None or end_event._ev is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        return float(_state.cupy().cuda.get_elapsed_time(self._ev, end_event._ev))

    @property
    def cuda_event(self):
        """The raw cudaEvent_t as an int (0 before the first record)."""
        return 0 if self._ev is None else self._ev.ptr

    def ipc_handle(self):
        """Same as `torch.cuda.Event.ipc_handle`: the event's CUDA IPC handle (bytes)."""
        if not self.interprocess:
            raise RuntimeError("Event must be created with interprocess=True to get an IPC handle")
        if self._ev is None:
            self._create(current_stream().device)
        return _state.cupy().cuda.runtime.ipcGetEventHandle(self._ev.ptr)

    def __repr__(self):
        return "<ember.cuda.Event uninitialized>" if self._ev is None else f"<ember.cuda.Event {self._ev.ptr:#x}>"
