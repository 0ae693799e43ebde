"""Fixtures for device tests: a real GPU through CuPy when there is one, else the NumPy-backed fake CuPy."""
import sys
import traceback

import pytest

from . import fake_cupy

_NAMES = ("cupy", "cupyx", "cupyx.scipy", "cupyx.scipy.special")


def _real_gpu():
    import ember
    return ember.cuda.is_available() and not getattr(sys.modules.get("cupy"), "IS_FAKE", False)


def _clear_device_state():
    """Forget everything ember cached about the (fake) GPU: array modules, special-function modules, generators."""
    from ember import _backend
    from ember._backend import deferred
    from ember._ops import random as _random
    deferred.discard()  # checks queued on arrays of the fake that is going away
    for cls in [c for c in _backend.XP if c.__module__ == fake_cupy.__name__]:
        del _backend.XP[cls]
    for key in [k for k in _backend._SCIPY if k[0].__module__ == fake_cupy.__name__]:
        del _backend._SCIPY[key]
    _random._cuda_generators.clear()


@pytest.fixture
def fake_gpu():
    """Install the fake CuPy as `cupy` (and cupyx) for one test; everything is restored afterwards."""
    saved = {n: sys.modules.get(n) for n in _NAMES}
    fake_cupy.reset()
    sys.modules.update(fake_cupy._make_module())
    _clear_device_state()
    try:
        yield sys.modules["cupy"]
    finally:
        _clear_device_state()
        for n, m in saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


@pytest.fixture
def gpu(request):
    """The CuPy module ember runs on: the real one on a machine with a GPU, the fake one elsewhere."""
    if _real_gpu():
        import cupy
        yield cupy
    else:
        yield request.getfixturevalue("fake_gpu")


# Everything through which the host reads a device array's values (and so waits for the GPU): CuPy's explicit
# copies, and the Python conversions CuPy implements by copying to the host.
_HOST_READS = ("get", "item", "tolist", "__bool__", "__int__", "__float__", "__complex__", "__index__", "__array__",
               "__format__", "__repr__", "__str__")


class HostReads:
    """Counts reads of device values by the host while `counting` is True (nested reads count once); `log` keeps,
    for each, the entry point and the innermost ember frames."""

    def __init__(self):
        self.counting = False
        self.log = []
        self._depth = 0

    @property
    def count(self):
        return len(self.log)

    def report(self):
        return "\n".join(f"{name} from {where}" for name, where in self.log)

    def _wrap(self, name, fn):
        def read(*args, **kwargs):
            if self.counting and not self._depth:
                frames = [f for f in traceback.extract_stack()[:-1] if "/ember/" in f.filename.replace("\\", "/")]
                where = " <- ".join(f"{f.filename.rsplit('/ember/', 1)[-1]}:{f.lineno}" for f in frames[::-1][:4])
                self.log.append((name, where))
            self._depth += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
        return read


@pytest.fixture
def host_reads(fake_gpu, monkeypatch):
    """A HostReads counter over the fake CuPy's device arrays (turn it on with `host_reads.counting = True`)."""
    reads = HostReads()
    cls = fake_gpu.ndarray
    for name in _HOST_READS:
        fn = getattr(cls, name, None)
        if fn is not None:
            monkeypatch.setattr(cls, name, reads._wrap(name, fn))
    monkeypatch.setattr(fake_gpu, "asnumpy", reads._wrap("cupy.asnumpy", fake_gpu.asnumpy))
    return reads
