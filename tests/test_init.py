"""The top-level namespace: build info, thread counts, determinism switches and the legacy tensor types."""
import numpy as np
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


# ---------------------------------------------------------------- legacy type constructors and exports
_OPTS = ("TensorOptions(dtype={}, device=cpu, layout=Strided, requires_grad=false (default), pinned_memory=false "
         "(default), memory_format=(nullopt))")


def test_legacy_constructor_forms():
    t = ember.FloatTensor()
    assert t.shape == (0,) and t.dtype is ember.float32
    assert ember.LongTensor().shape == (0,) and ember.LongTensor().dtype is ember.int64
    assert ember.FloatTensor(ember.Size([2, 3])).shape == (2, 3)
    assert ember.FloatTensor(2, 3).shape == (2, 3) and ember.FloatTensor(3).shape == (3,)
    assert ember.FloatTensor(np.int64(3)).shape == (3,)
    assert ember.FloatTensor(2, True).shape == (2, 1)
    lt = ember.LongTensor([1, 2])
    assert lt.dtype is ember.int64 and lt.tolist() == [1, 2]
    assert ember.LongTensor([1.5, 2]).tolist() == [1, 2]
    assert ember.FloatTensor((2, 3)).tolist() == [2.0, 3.0]
    assert ember.FloatTensor(range(3)).tolist() == [0.0, 1.0, 2.0]
    assert ember.BoolTensor([1, 0]).tolist() == [True, False]
    assert ember.FloatTensor(np.ones(2)).dtype is ember.float32
    assert ember.FloatTensor(device="cpu").shape == (0,)


def test_legacy_constructor_of_a_tensor_is_an_alias():
    x = ember.ones(2)
    a = ember.FloatTensor(x)
    assert a is not x
    a[0] = 5.0
    assert x.tolist() == [5.0, 1.0]
    w = ember.ones(2, requires_grad=True)
    b = ember.FloatTensor(w)
    assert b.requires_grad and b.grad_fn.name() == "AliasBackward0" and b._base is w


def test_legacy_constructor_of_a_tensor_of_another_type():
    with pytest.raises(TypeError) as e:
        ember.LongTensor(ember.ones(2))
    assert str(e.value) == f"expected {_OPTS.format('long int')} (got {_OPTS.format('float')})"
    with pytest.raises(TypeError) as e:
        ember.FloatTensor(ember.tensor(3))
    assert str(e.value) == f"expected {_OPTS.format('float')} (got {_OPTS.format('long int')})"
    with pytest.raises(TypeError, match=r"^expected TensorOptions\(dtype=c10::Half,"):
        ember.HalfTensor(ember.ones(1))
    with pytest.raises(RuntimeError, match=r"^Legacy tensor constructor of the form ember.Tensor\(tensor, "
                                           r"device=device\) is not supported."):
        ember.FloatTensor(ember.ones(1), device="cpu")


def test_legacy_constructor_rejects_scalars_and_mixed_arguments():
    for bad, name in ((2.5, "float"), (1 + 2j, "complex"), (None, "NoneType"), (True, "bool")):
        with pytest.raises(TypeError) as e:
            ember.FloatTensor(bad)
        assert str(e.value) == f"new(): data must be a sequence (got {name})"
    with pytest.raises(TypeError, match="^new\\(\\): invalid data type 'str'$"):
        ember.FloatTensor("a")
    with pytest.raises(TypeError) as e:
        ember.FloatTensor(ember.ones(2), 2)
    assert str(e.value).startswith("new() received an invalid combination of arguments - got (Tensor, int), but "
                                   "expected one of:\n * (*, ember.device device = None)\n")
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[2, -1\]$"):
        ember.FloatTensor(2, -1)


def test_strided_and_storages_exported():
    assert ember.strided is ember._dtype.strided and repr(ember.strided) == "ember.strided"
    assert ember.ones(2).layout is ember.strided and ember.strided == "strided"
    from ember._tensor import TypedStorage, UntypedStorage
    assert ember.TypedStorage is TypedStorage and ember.UntypedStorage is UntypedStorage
    assert issubclass(ember.TypedStorage, ember.UntypedStorage)
