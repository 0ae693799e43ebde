"""Fixtures for device tests: a real GPU through CuPy when there is one, else the NumPy-backed fake CuPy."""
import sys

import pytest

from . import fake_cupy

_NAMES = ("cupy", "cupyx", "cupyx.scipy", "cupyx.scipy.special")


def _real_gpu():
    import ember
    return ember.cuda.is_available() and not getattr(sys.modules.get("cupy"), "IS_FAKE", False)


def _clear_device_state():
    """Forget everything ember cached about the (fake) GPU: array modules, special-function modules, generators."""
    from ember import _backend
    from ember._ops import random as _random
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
