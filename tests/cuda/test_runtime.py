"""ember.cuda devices: availability, lazy import of CuPy, device selection, properties, random-number state.

Device plumbing runs here against a small stand-in for CuPy's runtime; the tests marked cuda run on a real GPU
(skipped without one).
"""
import subprocess
import sys
import types

import pytest

import ember
from ember.cuda import _state

GPU = ember.cuda.is_available() and not getattr(sys.modules.get("cupy"), "IS_FAKE", False)
needs_gpu = pytest.mark.skipif(not GPU, reason="needs CuPy and an NVIDIA GPU")

H100 = {"name": b"NVIDIA H100 80GB HBM3", "totalGlobalMem": 85_029_158_912, "major": 9, "minor": 0,
        "multiProcessorCount": 132, "l2CacheSize": 52_428_800, "integrated": 0, "isMultiGpuBoard": 0,
        "maxThreadsPerMultiProcessor": 2048, "warpSize": 32, "regsPerMultiprocessor": 65536}
T4 = {"name": b"Tesla T4", "totalGlobalMem": 15 << 30, "major": 7, "minor": 5, "multiProcessorCount": 40}


class _Fake:
    """cupy.cuda's device calls on two pretend GPUs (an H100 and a T4)."""

    def __init__(self):
        self.dev, self.synced = 0, []
        fake = self

        class Device:
            def __init__(self, i):
                self.id = i

            def __enter__(self):
                self.prev, fake.dev = fake.dev, self.id

            def __exit__(self, *exc):
                fake.dev = self.prev

        def set_device(i):
            self.dev = i

        self.cuda = types.SimpleNamespace(
            Device=Device,
            runtime=types.SimpleNamespace(
                getDevice=lambda: self.dev, setDevice=set_device, getDeviceCount=lambda: 2,
                deviceSynchronize=lambda: self.synced.append(self.dev),
                getDeviceProperties=lambda i: (H100, T4)[i]),
            nvrtc=types.SimpleNamespace(getSupportedArchs=lambda: [75, 80, 90]))


@pytest.fixture
def fake(monkeypatch):
    f = _Fake()
    monkeypatch.setattr(_state, "cupy", lambda: f)
    monkeypatch.setattr(_state, "loaded", lambda: f)
    monkeypatch.setattr(ember.cuda, "is_available", lambda: True)
    monkeypatch.setattr(ember.cuda, "device_count", lambda: 2)
    return f


# ----------------------------------------------------------------------------------------------- no GPU needed
def _run(code):
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)


def test_import_does_not_load_cupy():
    code = ("import sys, ember, ember.cuda as c\n"
            "assert 'cupy' not in sys.modules\n"
            "c.memory_allocated(); c.memory_stats(); c.empty_cache(); c.is_initialized(); c.memory_summary()\n"
            "c.reset_peak_memory_stats(); c.stream(None)\n"
            "assert 'cupy' not in sys.modules, 'a statistics call imported cupy'\n"
            "import importlib.util\n"
            "absent = importlib.util.find_spec('cupy') is None\n"
            "c.is_available(); c.device_count(); c.get_arch_list(); c.is_bf16_supported(); c.seed()\n"
            "assert not absent or 'cupy' not in sys.modules\n"
            "print('ok')\n")
    r = _run(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


@pytest.mark.skipif(GPU, reason="checks the answers without a GPU")
def test_without_gpu_like_torch():
    c = ember.cuda
    assert c.is_available() is False and c.device_count() == 0
    assert c.is_initialized() is False
    assert c.get_arch_list() == [] and c.is_bf16_supported() is False
    c.manual_seed(1)
    c.manual_seed_all(1)
    c.seed()
    c.seed_all()
    with c.device(None):
        pass
    with c.device(-1):
        pass
    with c.device_of(ember.ones(2)):  # a CPU tensor: no-op
        pass
    for call in (c.init, c.current_device, c.synchronize, c.get_device_name, c.get_device_properties,
                 c.get_device_capability, c.initial_seed, c.get_rng_state, lambda: c.set_device(0),
                 lambda: c.device(0).__enter__()):
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            call()


def test_device_argument_errors():
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        ember.cuda.set_device("cpu")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        ember.cuda.device(ember.device("cpu"))
    with pytest.raises(ValueError, match="Expected a ember.device with a specified index or an integer, but got:1.5"):
        ember.cuda.device(1.5)


def test_out_of_memory_error_is_runtime_error():
    assert issubclass(ember.cuda.OutOfMemoryError, RuntimeError)


def test_public_names():
    for name in ember.cuda.__all__:
        assert getattr(ember.cuda, name) is not None
    assert ember.cuda.amp is not None


def test_device_properties_from_cupy_dict():
    p = ember.cuda._CudaDeviceProperties(H100)
    assert p.name == "NVIDIA H100 80GB HBM3" and (p.major, p.minor) == (9, 0)
    assert p.total_memory == 85_029_158_912 and p.multi_processor_count == 132
    assert p.L2_cache_size == 52_428_800 and p.warp_size == 32 and p.max_threads_per_multi_processor == 2048
    assert repr(p) == ("_CudaDeviceProperties(name='NVIDIA H100 80GB HBM3', major=9, minor=0, total_memory=81090MB, "
                       "multi_processor_count=132, L2_cache_size=50MB)")
    q = ember.cuda._CudaDeviceProperties({"name": "str name"})
    assert q.name == "str name" and q.major == 0 and q.warp_size == 32


# -------------------------------------------------------------------------- device plumbing on a stand-in
def test_device_queries(fake):
    c = ember.cuda
    assert c.current_device() == 0
    assert c.get_device_name() == "NVIDIA H100 80GB HBM3"
    assert c.get_device_name(1) == c.get_device_name("cuda:1") == "Tesla T4"
    assert c.get_device_capability(ember.device("cuda", 1)) == (7, 5)
    assert c.get_device_properties(0).total_memory == H100["totalGlobalMem"]
    with pytest.raises(AssertionError, match="Invalid device id"):
        c.get_device_properties(2)
    assert c.get_arch_list() == ["sm_75", "sm_80", "sm_90"]
    c.set_device(1)
    c.set_device(-1)  # ignored, as in torch
    assert c.current_device() == 1
    c.set_device("cuda:0")
    assert c.current_device() == 0
    assert c.is_initialized() is True


def test_bf16_support_follows_compute_capability_and_cupy(fake, monkeypatch):
    c = ember.cuda
    monkeypatch.setattr(c, "cupy_bf16_missing", lambda cp: None)  # a CuPy that holds bfloat16
    assert c.is_bf16_supported() is True and c.is_bf16_supported(including_emulation=False) is True  # the H100
    c.set_device(1)  # the T4 (compute capability 7.5): emulated
    assert c.is_bf16_supported() is True and c.is_bf16_supported(including_emulation=False) is False
    monkeypatch.setattr(c, "cupy_bf16_missing", lambda cp: "CuPy 13.6.0 has no bfloat16 (CuPy 14 or newer has)")
    assert c.is_bf16_supported() is False and c.is_bf16_supported(including_emulation=False) is False


def test_device_context_manager(fake):
    c = ember.cuda
    with c.device(1) as d:
        assert d is None and c.current_device() == 1
        with c.device("cuda:0"):
            assert c.current_device() == 0
        assert c.current_device() == 1
    assert c.current_device() == 0
    with c.device(None):
        assert c.current_device() == 0
    ctx = c.device(1)
    assert ctx.idx == 1
    with c.device(ctx):  # a device context is accepted where an index is
        assert c.current_device() == 1
    gpu_tensor = types.SimpleNamespace(is_cuda=True, get_device=lambda: 1)
    with c.device_of(gpu_tensor):
        assert c.current_device() == 1
    assert c.current_device() == 0


def test_synchronize_picks_the_device(fake):
    ember.cuda.synchronize()
    ember.cuda.synchronize(1)
    ember.cuda.synchronize("cuda:1")
    assert fake.synced == [0, 1, 1] and fake.dev == 0


def test_rng_delegates_to_the_cuda_generator(fake, monkeypatch):
    from ember._ops import random as rnd

    class Gen:
        def __init__(self, index):
            self.index, self.seeds = index, []

        def manual_seed(self, s):
            self.seeds.append(s)

        def seed(self):
            self.seeds.append("fresh")
            return 1234

        def initial_seed(self):
            return 42 + self.index

        def get_state(self):
            return f"state{self.index}"

        def set_state(self, st):
            self.seeds.append(st)

    gens = {0: Gen(0), 1: Gen(1)}
    monkeypatch.setattr(rnd, "default_cuda_generator", lambda index=None: gens[fake.dev if index is None else index])
    c = ember.cuda
    assert c.initial_seed() == 42
    c.seed()
    assert gens[0].seeds == ["fresh"]
    c.seed_all()
    assert gens[0].seeds == ["fresh", "fresh"] and gens[1].seeds == [1234]
    assert c.get_rng_state() == "state0" and c.get_rng_state(1) == c.get_rng_state("cuda:1") == "state1"
    assert c.get_rng_state_all() == ["state0", "state1"]
    c.set_rng_state("s", 1)
    c.set_rng_state_all(["a", "b"])
    assert gens[1].seeds[-2:] == ["s", "b"] and gens[0].seeds[-1] == "a"


# ---------------------------------------------------------------------------------------------- on a real GPU
@pytest.mark.cuda
@needs_gpu
def test_gpu_devices():
    c = ember.cuda
    c.init()
    assert c.is_initialized() and c.device_count() >= 1
    p = c.get_device_properties(0)
    assert p.name and p.total_memory > 0 and p.multi_processor_count > 0
    assert c.get_device_capability(0) == (p.major, p.minor) and p.major >= 3
    assert c.get_device_name() == p.name
    assert c.get_arch_list() and all(a.startswith("sm_") for a in c.get_arch_list())
    assert c.is_bf16_supported() is (ember._backend.cupy_bf16_missing(_state.cupy()) is None)  # CuPy 14+
    assert c.current_device() == 0
    c.synchronize()
    with c.device(0):
        x = ember.ones(3, device="cuda")
    with c.device_of(x):
        assert c.current_device() == 0
    if c.device_count() > 1:
        with c.device(1):
            assert c.current_device() == 1
            assert ember.ones(1, device="cuda").get_device() == 1
        assert c.current_device() == 0


@pytest.mark.cuda
@needs_gpu
def test_gpu_seeds():
    c = ember.cuda
    c.manual_seed(7)
    a = ember.rand(4, device="cuda").cpu()
    c.manual_seed(7)
    b = ember.rand(4, device="cuda").cpu()
    assert ember.equal(a, b)
    assert c.initial_seed() == 7
    c.seed()
    assert isinstance(c.initial_seed(), int)
