"""ember.save/ember.load against torch.save/torch.load: each reads what the other writes."""
import collections
import io

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def torch_values(name):
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4) - 5
    if name == "bool":
        return x > 0
    if name.startswith("complex"):
        return (x + 1j * (x * 0.5)).to(getattr(torch, name))
    if name == "uint8":
        x = x + 5
    return x.to(getattr(torch, name))


def to_np(t):
    """A torch or ember tensor as a NumPy array (bfloat16 as float32)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    t = t.detach()
    return (t.float() if t.dtype is ember.bfloat16 else t).numpy()


def same(e, t):
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(to_np(e), to_np(t))


def torch_views(name):
    base = torch_values(name)
    return {"base": base, "col": base[:, 1], "t": base.t(), "step": base[::2, 1::2], "row": base[2]}


def to_torch_bytes(obj, legacy=False):
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    return buf.getvalue()


def to_ember_bytes(obj, legacy=False):
    buf = io.BytesIO()
    ember.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    return buf.getvalue()


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("name", DTYPES)
def test_torch_writes_ember_reads(name, legacy):
    src = torch_views(name)
    out = ember.load(io.BytesIO(to_torch_bytes(src, legacy)))
    for k, t in src.items():
        same(out[k], t)
        assert out[k].stride() == t.stride()
    assert np.shares_memory(out["base"]._data, out["t"]._data)
    assert np.shares_memory(out["base"]._data, out["step"]._data)


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("name", DTYPES)
def test_ember_writes_torch_reads(name, legacy):
    base = ember.tensor(to_np(torch_values(name))).to(getattr(ember, name))
    src = {"base": base, "col": base[:, 1], "t": base.t(), "step": base[::2, 1::2], "row": base[2],
           "flip": base.flip(1)}
    out = torch.load(io.BytesIO(to_ember_bytes(src, legacy)), weights_only=True)
    for k, e in src.items():
        same(e, out[k])
    for k in ("col", "t", "step", "row"):  # views share torch's storage too
        assert out[k].untyped_storage().data_ptr() == out["base"].untyped_storage().data_ptr(), k
    assert out["col"].stride() == (4,) and out["col"].storage_offset() == 1
    assert out["step"].stride() == (8, 2) and out["step"].storage_offset() == 1
    assert out["t"].stride() == (1, 4)


def test_sharing_is_live_in_torch():
    base = ember.arange(12.0).reshape(3, 4)
    out = torch.load(io.BytesIO(to_ember_bytes({"b": base, "c": base[:, 3]})), weights_only=True)
    out["b"][1, 3] = 99.0
    assert out["c"][1].item() == 99.0


def test_parameters_metadata_and_containers_ember_to_torch():
    m = ember.nn.Linear(3, 2)
    sd = m.state_dict()
    grad_t = ember.ones(2, requires_grad=True)
    obj = {"sd": sd, "p": ember.nn.Parameter(ember.ones(2)), "frozen": ember.nn.Parameter(ember.ones(1), False),
           "g": grad_t, "size": ember.Size([4, 5]), "dtype": ember.bfloat16, "dev": ember.device("cpu"),
           "misc": [1, "a", (2.5, None), {3}, b"xy", 1 + 2j], "scalar": ember.tensor(3),
           "empty": ember.zeros(0, 2)}
    out = torch.load(io.BytesIO(to_ember_bytes(obj)), weights_only=True)
    assert list(out["sd"]) == list(sd) and out["sd"]._metadata == sd._metadata
    for k, v in sd.items():
        same(v, out["sd"][k])
    assert isinstance(out["p"], torch.nn.Parameter) and out["p"].requires_grad
    assert isinstance(out["frozen"], torch.nn.Parameter) and not out["frozen"].requires_grad
    assert not isinstance(out["g"], torch.nn.Parameter) and out["g"].requires_grad
    assert out["size"] == torch.Size([4, 5]) and out["dtype"] == torch.bfloat16
    assert out["dev"] == torch.device("cpu")
    assert out["misc"] == [1, "a", (2.5, None), {3}, b"xy", 1 + 2j]
    assert out["scalar"].item() == 3 and out["scalar"].shape == () and out["empty"].shape == (0, 2)
    tm = torch.nn.Linear(3, 2)
    tm.load_state_dict(out["sd"])
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_allclose(tm(torch.from_numpy(x)).detach().numpy(), m(ember.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_tensor_attributes_ember_to_torch():
    t = ember.ones(2)
    t.tag = "kept"
    out = torch.load(io.BytesIO(to_ember_bytes([t])), weights_only=True)
    assert out[0].tag == "kept"


def test_parameters_metadata_and_containers_torch_to_ember():
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    sd = tm.state_dict()
    obj = {"sd": sd, "p": torch.nn.Parameter(torch.ones(2)), "g": torch.ones(2, requires_grad=True),
           "size": torch.Size([4]), "dtype": torch.complex64, "dev": torch.device("cpu"), "misc": [1, {2}, b"z"]}
    out = ember.load(io.BytesIO(to_torch_bytes(obj)))
    assert out["sd"]._metadata == sd._metadata
    em = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.BatchNorm1d(2))
    em.load_state_dict(out["sd"])
    for k, v in sd.items():
        same(em.state_dict()[k], v)
    assert type(out["p"]) is ember.nn.Parameter and out["p"].requires_grad and out["g"].requires_grad
    assert out["size"] == ember.Size([4]) and out["dtype"] is ember.complex64 and out["dev"] == ember.device("cpu")
    assert out["misc"] == [1, {2}, b"z"]


def test_torch_mmap_reads_ember_file(tmp_path):
    base = ember.arange(1000.0).reshape(10, 100)
    p = tmp_path / "m.pt"
    ember.save({"b": base, "r": base[3]}, p)
    out = torch.load(p, mmap=True, weights_only=True)
    np.testing.assert_array_equal(out["r"].numpy(), base[3].numpy())
    tp = tmp_path / "t.pt"
    torch.save({"b": torch.arange(1000.0).reshape(10, 100)}, tp)
    e = ember.load(tp, mmap=True)
    np.testing.assert_array_equal(e["b"].numpy(), np.arange(1000.0, dtype=np.float32).reshape(10, 100))


def test_torch_refused_globals_match_ember():
    class_path = collections.Counter("ab")  # allowed by both
    out_t = torch.load(io.BytesIO(to_ember_bytes(class_path)), weights_only=True)
    out_e = ember.load(io.BytesIO(to_torch_bytes(class_path)))
    assert out_t == out_e == class_path


def test_safetensors_cross(tmp_path):
    st = pytest.importorskip("safetensors.torch")
    from ember.utils import safetensors as es
    x = ember.arange(6.0).reshape(2, 3)
    es.save_file({"a": x.t(), "bf": ember.ones(3, dtype=ember.bfloat16), "i": ember.arange(4)}, tmp_path / "e.st")
    out = st.load_file(tmp_path / "e.st")
    same(x.t(), out["a"])
    assert out["bf"].dtype == torch.bfloat16 and out["i"].dtype == torch.int64
    st.save_file({"w": torch.arange(6.0).reshape(2, 3), "h": torch.ones(2, dtype=torch.float16)},
                 tmp_path / "t.safetensors")
    for back in (es.load_file(tmp_path / "t.safetensors"), ember.load(tmp_path / "t.safetensors")):
        same(back["w"], torch.arange(6.0).reshape(2, 3))
        assert back["h"].dtype is ember.float16


def test_torch_tensor_and_parameter_attributes_to_ember():
    t = torch.ones(2)
    t.tag = "t"
    p = torch.nn.Parameter(torch.zeros(1))
    p.note = 5
    out = ember.load(io.BytesIO(to_torch_bytes([t, p])))
    assert out[0].tag == "t" and ember.equal(out[0], ember.ones(2))
    assert type(out[1]) is ember.nn.Parameter and out[1].note == 5 and out[1].requires_grad


def test_torch_module_objects_are_refused_clearly():
    data = to_torch_bytes(torch.nn.Linear(2, 2))
    with pytest.raises(__import__("pickle").UnpicklingError, match="torch.nn.modules.linear.Linear"):
        ember.load(io.BytesIO(data))
    with pytest.raises(RuntimeError, match="ember cannot load the PyTorch object torch.nn.modules.linear.Linear"):
        ember.load(io.BytesIO(data), weights_only=False)
