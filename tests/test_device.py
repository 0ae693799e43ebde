import pickle

import pytest

import ember


def test_device_parsing_printing_and_equality():
    assert str(ember.device("cpu")) == "cpu" and repr(ember.device("cpu")) == "device(type='cpu')"
    d = ember.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and str(d) == "cuda:1"
    assert repr(d) == "device(type='cuda', index=1)"
    assert ember.device("cuda", 1) == d and ember.device(1) == d
    assert ember.device("cpu") == "cpu" and hash(ember.device("cuda:0")) == hash(ember.device("cuda", 0))
    assert pickle.loads(pickle.dumps(d)) == d


def test_bad_device_strings_raise():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, ipu, xpu, .*privateuseone device type at "
                                           "start of device string: tpu"):
        ember.device("tpu")
    # a device type torch knows but ember does not run on names the types ember supports
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type at start of device string: mps"):
        ember.device("mps")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        ember.device("cuda:x")


def test_tensor_device_and_get_device():
    t = ember.ones(1)
    assert t.device == ember.device("cpu") and t.get_device() == -1 and t.is_cpu and not t.is_cuda


def test_import_is_lazy_about_heavy_modules():
    import subprocess
    import sys
    code = "import sys, ember; print(any(m in sys.modules for m in ('cupy', 'scipy', 'torch')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
