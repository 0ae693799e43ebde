"""The top-level namespace: build info, thread counts, determinism switches and the legacy tensor types."""
import pytest

import ember


def test_version_module_reports_a_build_of_neither_cuda_nor_rocm():
    import ember.version
    from ember.version import cuda
    assert cuda is None and ember.version.hip is None and ember.version.debug is False
    assert ember.version.__version__ == ember.__version__ and isinstance(ember.version.git_version, str)


@pytest.mark.parametrize("fn", ["set_num_threads", "set_num_interop_threads"])
def test_thread_counts_are_checked_as_torch_does(fn):
    with pytest.raises(RuntimeError, match=f"^{fn} expects a positive integer$"):
        getattr(ember, fn)(0)
    for bad, name in ((1.5, "float"), (True, "bool"), ("2", "str")):
        with pytest.raises(RuntimeError, match=f"^{fn} expects an int, but got {name}$"):
            getattr(ember, fn)(bad)


def test_interop_threads_are_kept():
    before = ember.get_num_interop_threads()
    assert isinstance(before, int) and before >= 1
    ember.set_num_interop_threads(3)
    try:
        assert ember.get_num_interop_threads() == 3
    finally:
        ember._interop_threads[0] = None


def test_deterministic_switches_and_debug_mode():
    assert not ember.are_deterministic_algorithms_enabled() and ember.get_deterministic_debug_mode() == 0
    try:
        ember.use_deterministic_algorithms(True, warn_only=True)
        assert ember.are_deterministic_algorithms_enabled() and ember.is_deterministic_algorithms_warn_only_enabled()
        assert ember.get_deterministic_debug_mode() == 1
        ember.set_deterministic_debug_mode("error")
        assert ember.get_deterministic_debug_mode() == 2 and not ember.is_deterministic_algorithms_warn_only_enabled()
        ember.set_deterministic_debug_mode(0)
        assert not ember.are_deterministic_algorithms_enabled()
        with pytest.raises(TypeError, match="argument 'mode' \\(position 1\\) must be bool, not int"):
            ember.use_deterministic_algorithms(1)
        with pytest.raises(TypeError, match="argument 'warn_only' must be bool, not int"):
            ember.use_deterministic_algorithms(True, warn_only=1)
        with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`, but got x"):
            ember.set_deterministic_debug_mode("x")
        with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 3"):
            ember.set_deterministic_debug_mode(3)
    finally:
        ember.use_deterministic_algorithms(False)


def test_legacy_tensor_types_have_torchs_names():
    assert ember.LongTensor.__name__ == "LongTensor" and ember.ByteTensor.__name__ == "ByteTensor"
    assert isinstance(ember.ones(2), ember.FloatTensor) and not isinstance(ember.ones(2), ember.DoubleTensor)
    assert ember.DoubleTensor([1.5]).dtype is ember.float64 and ember.LongTensor(2, 3).shape == (2, 3)


def test_set_default_tensor_type_sets_the_dtype_and_warns_once():
    old = ember.get_default_dtype()
    ember._legacy_warned[0] = False
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.tensor([1.0]).dtype is ember.float64
        ember.set_default_tensor_type("torch.FloatTensor")  # no second warning (the suite errors on warnings)
        assert ember.tensor([1.0]).dtype is ember.float32
        with pytest.raises(TypeError, match="^only floating-point types are supported as the default type$"):
            ember.set_default_tensor_type(ember.LongTensor)
        with pytest.raises(TypeError, match="^invalid type object: only floating-point"):
            ember.set_default_tensor_type(ember.float64)
    finally:
        ember.set_default_dtype(old)


def test_hasattr_on_lazy_submodules_never_raises(monkeypatch):
    import importlib
    real = importlib.import_module

    def missing(name, package=None):
        if name == ".nn":
            raise ModuleNotFoundError("No module named 'ember.nn'", name="ember.nn")
        return real(name, package)
    monkeypatch.setattr(importlib, "import_module", missing)
    monkeypatch.delattr(ember, "nn", raising=False)
    assert not hasattr(ember, "nn")  # a submodule not written yet reads as absent
    assert hasattr(ember, "linalg") and not hasattr(ember, "no_such_thing")


def test_accelerator_without_a_gpu_and_constants():
    import math

    import ember.accelerator
    if ember.cuda.is_available():
        pytest.skip("a GPU is present")
    assert not ember.accelerator.is_available() and ember.accelerator.current_accelerator() is None
    assert ember.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
        ember.accelerator.current_device_index()
    device = ember.accelerator.current_accelerator().type if ember.accelerator.is_available() else "cpu"
    assert ember.ones(1).to(device).device.type == "cpu"
    assert ember.pi == math.pi and ember.e == math.e and ember.inf == math.inf and math.isnan(ember.nan)
    assert ember.newaxis is None and ember.ones(2)[ember.newaxis].shape == (1, 2)


def test_typename_warn_always_and_flush_denormal():
    assert ember.typename(ember.ones(1)) == "ember.FloatTensor"
    assert ember.typename(ember.ones(1, dtype=ember.int64)) == "ember.LongTensor"
    assert ember.typename(1) == "int" and ember.typename(len) == "len"
    assert ember.typename(ember.nn.Linear(1, 1)) == "ember.nn.modules.linear.Linear"
    assert not ember.is_warn_always_enabled()
    ember.set_warn_always(True)
    try:
        assert ember.is_warn_always_enabled()
    finally:
        ember.set_warn_always(False)
    assert ember.set_flush_denormal(True) is False
