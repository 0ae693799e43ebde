"""ember.utils.safetensors: save_file/load_file/save/load over the safetensors package."""
import sys

import numpy as np
import pytest

import ember

safetensors = pytest.importorskip("safetensors")
from ember.utils import safetensors as es

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64"]


def sample(name):
    x = ember.tensor(np.arange(6.0).reshape(2, 3) - 2)
    if name == "bool":
        return x > 0
    if name == "complex64":
        return ember.complex(x.float(), x.float() + 1)
    return (x + 2 if name == "uint8" else x).to(getattr(ember, name))


@pytest.mark.parametrize("name", DTYPES)
def test_file_round_trip_every_dtype(name, tmp_path):
    t = sample(name)
    es.save_file({"t": t, "view": t.t()}, tmp_path / "x.safetensors")
    out = es.load_file(tmp_path / "x.safetensors")
    assert out["t"].dtype is t.dtype and ember.equal(out["t"], t) and ember.equal(out["view"], t.t())
    out["t"][0, 0] = out["t"][1, 1]  # loaded tensors are writable


@pytest.mark.parametrize("name", DTYPES)
def test_bytes_round_trip_every_dtype(name):
    t = sample(name)
    data = es.save({"t": t, "row": t[1]})
    assert isinstance(data, bytes)
    out = es.load(data)
    assert out["t"].dtype is t.dtype and ember.equal(out["t"], t) and ember.equal(out["row"], t[1])


def test_strided_views_and_metadata(tmp_path):
    x = ember.arange(24.0).reshape(2, 3, 4)
    tensors = {"perm": x.permute(2, 0, 1), "step": x[:, ::2, 1::3], "flip": x.flip(0), "empty": ember.zeros(0, 2)}
    es.save_file(tensors, tmp_path / "v.safetensors", metadata={"format": "pt", "who": "ember"})
    out = es.load_file(tmp_path / "v.safetensors")
    for k, v in tensors.items():
        assert out[k].shape == v.shape and ember.equal(out[k], v), k
    with safetensors.safe_open(str(tmp_path / "v.safetensors"), framework="np") as f:
        assert f.metadata() == {"format": "pt", "who": "ember"}


def test_ember_load_dispatches_on_extension(tmp_path):
    es.save_file({"w": ember.ones(2, 2)}, tmp_path / "m.safetensors")
    assert ember.equal(ember.load(tmp_path / "m.safetensors")["w"], ember.ones(2, 2))
    assert ember.equal(ember.load(str(tmp_path / "m.safetensors"), map_location="cpu")["w"], ember.ones(2, 2))
    with pytest.raises(RuntimeError, match="dict map_location is not supported"):
        ember.load(tmp_path / "m.safetensors", map_location={"cpu": "cpu"})


def test_bad_input():
    with pytest.raises(ValueError, match="complex128"):
        es.save({"c": ember.ones(2, dtype=ember.complex128)})
    with pytest.raises(ValueError, match="Key `n` is invalid"):
        es.save({"n": 3})
    with pytest.raises(ValueError, match="dict"):
        es.save([ember.ones(1)])


def test_model_round_trip(tmp_path):
    m = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    es.save_model(m, tmp_path / "model.safetensors")
    m2 = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.BatchNorm1d(4))
    missing, unexpected = es.load_model(m2, tmp_path / "model.safetensors")
    assert list(missing) == [] and list(unexpected) == []
    for k, v in m.state_dict().items():
        assert ember.equal(m2.state_dict()[k], v), k


def test_missing_package_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match="pip install safetensors"):
        es.save({"a": ember.ones(1)})
