"""ember.save / ember.load: round trips, sharing, safety, corruption, atomic saves, map_location, mmap, fixtures."""
import collections
import io
import os
import pickle
import warnings
import struct
import zipfile

import numpy as np
import pytest

import ember
from ember import serialization
from tests.helpers import assert_close

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def values(name):
    """The 2x3 values tests/fixtures/make_fixtures.py stores for each dtype, as a NumPy float/complex array."""
    x = np.arange(6, dtype=np.float64).reshape(2, 3) - 2
    if name == "bool":
        return x > 0
    if name.startswith("complex"):
        return x + 1j * (x + 1)
    return x + 2 if name == "uint8" else x


def tensor_of(name):
    return ember.tensor(values(name)).to(getattr(ember, name))


def roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return ember.load(buf, **load_kw)


def shares_memory(a, b):
    return np.shares_memory(a._data, b._data)


# ----- round trips -----

@pytest.mark.parametrize("name", DTYPES)
def test_roundtrip_every_dtype(name, tmp_path):
    t = tensor_of(name)
    path = tmp_path / "t.pt"
    ember.save({"t": t, "view": t[1]}, path)
    out = ember.load(path)
    assert out["t"].dtype is t.dtype and out["t"].shape == (2, 3)
    assert ember.equal(out["t"], t) and ember.equal(out["view"], t[1])
    assert shares_memory(out["t"], out["view"])


def test_roundtrip_path_kinds(tmp_path):
    t = ember.arange(4.0)
    for p in (str(tmp_path / "a.pt"), tmp_path / "b.pt"):
        ember.save(t, p)
        assert ember.equal(ember.load(p), t)
        assert ember.equal(ember.load(str(p)), t)


def test_zero_dim_empty_and_same_object():
    t = ember.ones(3)
    out = roundtrip([ember.tensor(2.5), ember.zeros(0, 4), t, t, ember.ones(2, 0, 3, dtype=ember.int64)])
    assert out[0].shape == () and out[0].item() == 2.5
    assert out[1].shape == (0, 4) and out[4].shape == (2, 0, 3) and out[4].dtype is ember.int64
    assert out[2] is out[3]  # one object saved twice is one object loaded


def test_nested_containers_and_metadata_objects():
    obj = {"list": [1, 2.5, "s", None, True, ember.ones(2)], "tuple": (b"by", 3 + 4j, bytearray(b"x")),
           "set": {1, 2}, "size": ember.Size([2, 3]), "dtype": ember.bfloat16,
           "device": ember.device("cpu"), "od": collections.OrderedDict(a=1), "counter": collections.Counter("aab")}
    out = roundtrip(obj)
    assert out["list"][:5] == [1, 2.5, "s", None, True] and ember.equal(out["list"][5], ember.ones(2))
    assert out["tuple"] == (b"by", 3 + 4j, bytearray(b"x"))
    assert out["set"] == {1, 2}
    assert type(out["size"]) is ember.Size and out["size"] == (2, 3)
    assert out["dtype"] is ember.bfloat16 and out["device"] == ember.device("cpu")
    assert type(out["od"]) is collections.OrderedDict and out["counter"] == collections.Counter("aab")


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_protocols(protocol):
    buf = io.BytesIO()
    x = ember.arange(6.0).reshape(2, 3)
    ember.save({"x": x, "v": x[:, 1], "d": ember.float64}, buf, pickle_protocol=protocol)
    buf.seek(0)
    out = ember.load(buf)
    assert ember.equal(out["v"], x[:, 1]) and out["d"] is ember.float64 and shares_memory(out["x"], out["v"])


# ----- views and sharing -----

def test_views_share_one_storage():
    base = ember.arange(12.0).reshape(3, 4)
    out = roundtrip({"base": base, "col": base[:, 1], "t": base.t(), "step": base[:, ::2], "row": base[2]})
    for k in ("col", "t", "step", "row"):
        assert shares_memory(out["base"], out[k]), k
    out["base"][2, 1] = 100.0  # a write through one loaded tensor shows in the others
    assert out["col"][2].item() == 100.0 and out["t"][1, 2].item() == 100.0 and out["row"][1].item() == 100.0
    assert ember.equal(out["step"], ember.tensor([[0.0, 2.0], [4.0, 6.0], [8.0, 10.0]]))


def test_view_saved_alone_keeps_geometry():
    base = ember.arange(12.0).reshape(3, 4)
    out = roundtrip(base[1:, 1:3])
    assert ember.equal(out, base[1:, 1:3]) and out.stride() == (4, 1)


def test_negative_strides_are_saved_as_copies():
    x = ember.arange(5.0)
    out = roundtrip({"x": x, "flip": x.flip(0)})
    assert ember.equal(out["flip"], ember.tensor([4.0, 3.0, 2.0, 1.0, 0.0]))
    assert ember.equal(out["x"], x)


def test_non_c_order_owner_and_broadcast():
    # an array that owns its memory in a permuted axis order, as ufuncs return for permuted inputs
    arr = np.add(np.arange(24.0).reshape(2, 3, 4).transpose(1, 0, 2), 1)
    assert not arr.flags.c_contiguous and not arr.flags.f_contiguous
    t = ember.Tensor._make(arr)
    fort = ember.Tensor._make(np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    out = roundtrip({"t": t, "v": t[1], "f": fort, "b": ember.arange(3.0).expand(4, 3)})
    assert ember.equal(out["t"], t) and ember.equal(out["v"], t[1]) and shares_memory(out["t"], out["v"])
    assert ember.equal(out["f"], fort) and ember.equal(out["b"], ember.arange(3.0).expand(4, 3))


def test_views_with_different_dtypes():
    x = ember.arange(4.0)
    out = roundtrip({"x": x, "i": x.view(ember.int32)})
    assert ember.equal(out["x"], x) and ember.equal(out["i"], x.view(ember.int32))


# ----- Parameters, requires_grad, modules -----

def test_parameters_and_requires_grad():
    p = ember.nn.Parameter(ember.ones(2, 2))
    frozen = ember.nn.Parameter(ember.zeros(3), requires_grad=False)
    g = ember.full((2,), 0.5, requires_grad=True)
    (g * 2).sum().backward()
    out = roundtrip({"p": p, "frozen": frozen, "g": g, "plain": ember.ones(1)})
    assert type(out["p"]) is ember.nn.Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is ember.nn.Parameter and not out["frozen"].requires_grad
    assert type(out["g"]) is ember.Tensor and out["g"].requires_grad and out["g"].grad is None
    assert not out["plain"].requires_grad


def test_tensor_attributes_round_trip():
    t = ember.ones(2)
    t.tag = "kept"
    p = ember.nn.Parameter(ember.ones(1))
    p.note = 3
    out = roundtrip([t, p])
    assert out[0].tag == "kept" and ember.equal(out[0], t)
    assert type(out[1]) is ember.nn.Parameter and out[1].note == 3


def test_state_dict_round_trip_with_metadata():
    m = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.BatchNorm1d(2))
    sd = m.state_dict()
    out = roundtrip(sd)
    assert type(out) is collections.OrderedDict and list(out) == list(sd)
    assert out._metadata == sd._metadata
    m2 = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.BatchNorm1d(2))
    m2.load_state_dict(out)
    for k, v in m2.state_dict().items():
        assert ember.equal(v, sd[k]), k


def test_whole_module_needs_weights_only_false():
    m = ember.nn.Linear(3, 2)
    buf = io.BytesIO()
    ember.save(m, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="ember.nn.modules.linear.Linear"):
        ember.load(buf)
    buf.seek(0)
    m2 = ember.load(buf, weights_only=False)
    x = ember.randn(4, 3)
    assert type(m2) is ember.nn.Linear and ember.equal(m2(x), m(x))
    assert type(m2.weight) is ember.nn.Parameter and m2.weight.requires_grad


# ----- weights_only safety -----

class Custom:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, Custom) and other.v == self.v


class Boom:
    def __reduce__(self):
        return (os.system, ("echo unsafe",))


def test_refused_global_names_it_and_explains():
    buf = io.BytesIO()
    ember.save({"c": Custom(1)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as e:
        ember.load(buf)
    msg = str(e.value)
    assert "tests.test_serialization.Custom" in msg and "add_safe_globals" in msg and "weights_only" in msg
    buf.seek(0)
    assert ember.load(buf, weights_only=False)["c"] == Custom(1)


@pytest.mark.parametrize("obj, name", [(slice(1, 2), "slice"), (frozenset({3}), "frozenset"),
                                       (range(3), "range")])
def test_builtins_outside_torchs_allowlist_are_refused(obj, name):
    # torch 2.x's weights_only allowlist has set, complex, bytearray, but not these; the message names them bare
    buf = io.BytesIO()
    ember.save({"x": obj}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as e:
        ember.load(buf)
    assert f"GLOBAL {name} was not an allowed global" in str(e.value)
    assert f"add_safe_globals([{name}])" in str(e.value)
    buf.seek(0)
    assert ember.load(buf, weights_only=False)["x"] == obj
    with serialization.safe_globals([type(obj)]):
        buf.seek(0)
        assert ember.load(buf)["x"] == obj


def test_code_execution_is_refused():
    buf = io.BytesIO()
    ember.save(Boom(), buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system|nt.system"):
        ember.load(buf)


def test_add_safe_globals_and_context_manager():
    buf = io.BytesIO()
    ember.save([Custom(2)], buf)
    serialization.clear_safe_globals()
    try:
        with serialization.safe_globals([Custom]):
            buf.seek(0)
            assert ember.load(buf) == [Custom(2)]
            assert serialization.get_safe_globals() == [Custom]
        assert serialization.get_safe_globals() == []
        serialization.add_safe_globals([(Custom, "tests.test_serialization.Custom")])
        buf.seek(0)
        assert ember.load(buf) == [Custom(2)]
    finally:
        serialization.clear_safe_globals()
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(buf)


def test_torchs_environment_switches_for_weights_only(monkeypatch):
    m = ember.nn.Linear(3, 2)
    buf = io.BytesIO()
    ember.save(m, buf)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    buf.seek(0)
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert type(ember.load(buf)) is ember.nn.Linear
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True still wins
        ember.load(buf, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(RuntimeError, match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD`"):
        ember.load(buf)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        ember.load(buf, weights_only=False)


def test_pickle_module_with_weights_only():
    buf = io.BytesIO()
    ember.save(ember.ones(1), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        ember.load(buf, pickle_module=pickle, weights_only=True)
    buf.seek(0)
    assert ember.equal(ember.load(buf, pickle_module=pickle), ember.ones(1))  # implies weights_only=False


# ----- corrupted and truncated files -----

def _checkpoint_bytes():
    buf = io.BytesIO()
    ember.save({"a": ember.arange(64.0), "b": [1, 2, 3]}, buf)
    return bytearray(buf.getvalue())


def _expect_invalid(data, match="is not a valid ember/PyTorch checkpoint"):
    with pytest.raises(RuntimeError, match=match):
        ember.load(io.BytesIO(bytes(data)))


def test_truncated_files_raise_clear_errors():
    data = _checkpoint_bytes()
    for n in (0, 3, 10, 100, len(data) // 2, len(data) - 30, len(data) - 1):
        _expect_invalid(data[:n])


def test_corrupted_storage_bytes_fail_the_crc():
    data = _checkpoint_bytes()
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("archive/data/0")
    start = info.header_offset + 30 + sum(struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30]))
    data[start + 10] ^= 0xFF
    _expect_invalid(data, "CRC-32")


def test_corrupted_pickle_and_garbage():
    data = _checkpoint_bytes()
    data[70] ^= 0xFF  # inside data.pkl
    _expect_invalid(data)
    _expect_invalid(b"this is not a checkpoint at all")
    _expect_invalid(pickle.dumps({"plain": "pickle"}), "invalid magic number")


def test_corrupted_file_on_disk_names_the_path(tmp_path):
    p = tmp_path / "bad.pt"
    p.write_bytes(bytes(_checkpoint_bytes()[:200]))
    with pytest.raises(RuntimeError, match="bad.pt is not a valid ember/PyTorch checkpoint"):
        ember.load(p)


# ----- atomic saves -----

def test_failure_mid_save_leaves_old_file(tmp_path, monkeypatch):
    p = tmp_path / "ckpt.pt"
    ember.save({"v": ember.ones(3)}, p)
    before = p.read_bytes()
    calls = []

    def failing(flat):
        calls.append(1)
        raise OSError("disk full")
    monkeypatch.setattr(serialization, "_host_bytes", failing)
    with pytest.raises(OSError, match="disk full"):
        ember.save({"v": ember.zeros(3)}, p)
    assert calls and p.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temp file left behind


def test_unpicklable_object_touches_nothing(tmp_path):
    p = tmp_path / "ckpt.pt"
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ember.save({"f": lambda: 1}, p)
    assert os.listdir(tmp_path) == []


def test_save_errors(tmp_path):
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        ember.save(ember.ones(1), tmp_path / "missing" / "x.pt")
    with pytest.raises(AttributeError, match="file-like object with a 'write' attribute"):
        ember.save(ember.ones(1), 123)


# ----- the file layout -----

def test_layout_matches_torch(tmp_path):
    p = tmp_path / "model.pt"
    ember.save({"x": ember.arange(3.0), "y": ember.arange(2)}, p)
    z = zipfile.ZipFile(p)
    names = z.namelist()
    assert names == ["model/data.pkl", "model/.format_version", "model/.storage_alignment", "model/byteorder",
                     "model/data/0", "model/data/1", "model/version", "model/.data/serialization_id"]
    assert z.read("model/version") == b"3\n" and z.read("model/byteorder") == b"little"
    assert z.read("model/.storage_alignment") == b"64" and len(z.read("model/.data/serialization_id")) == 40
    raw = p.read_bytes()
    for info in z.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        n, m = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
        assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename
    pkl = z.read("model/data.pkl")
    assert b"ctorch._utils\n_rebuild_tensor_v2\n" in pkl and b"ctorch\nFloatStorage\n" in pkl
    assert b"ember" not in pkl  # no ember names: torch can read it


def test_file_objects_use_archive_prefix_and_non_seekable_streams():
    buf = io.BytesIO()
    ember.save(ember.ones(2), buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()[0] == "archive/data.pkl"

    class Stream(io.RawIOBase):
        def __init__(self, data):
            self.inner = io.BytesIO(data)

        def readable(self):
            return True

        def seekable(self):
            return False

        def readinto(self, b):
            return self.inner.readinto(b)
    assert ember.equal(ember.load(Stream(buf.getvalue())), ember.ones(2))


# ----- map_location and mmap -----

def _cuda_checkpoint(monkeypatch):
    buf = io.BytesIO()
    with monkeypatch.context() as m:
        m.setattr(serialization, "_location", lambda arr: "cuda:0")
        ember.save({"w": ember.arange(3.0), "v": ember.ones(2)}, buf)
    return buf.getvalue()


def test_map_location_forms(monkeypatch):
    data = _cuda_checkpoint(monkeypatch)
    expected = ember.arange(3.0)
    for ml in ("cpu", b"cpu", ember.device("cpu"), {"cuda:0": "cpu"}, lambda s, loc: s,
               lambda s, loc: s.cpu()):
        out = ember.load(io.BytesIO(data), map_location=ml)
        assert ember.equal(out["w"], expected) and out["w"].device == ember.device("cpu")
    seen = []
    ember.load(io.BytesIO(data), map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cuda:0", "cuda:0"]


@pytest.mark.skipif(ember.cuda.is_available(), reason="needs a machine without a GPU")
def test_cuda_location_without_gpu_is_a_clear_error(monkeypatch):
    data = _cuda_checkpoint(monkeypatch)
    for ml in (None, "cuda", {"cpu": "cuda:0"}, lambda s, loc: None):
        with pytest.raises(RuntimeError, match="ember.cuda.is_available\\(\\) is False"):
            ember.load(io.BytesIO(data), map_location=ml)
    buf = io.BytesIO()
    ember.save(ember.ones(1), buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="CUDA"):
        ember.load(buf, map_location="cuda:0")


def test_map_location_callable_errors_pass_through():
    buf = io.BytesIO()
    ember.save(ember.ones(1), buf)

    def bad(s, loc):
        raise KeyError("mine")
    buf.seek(0)
    with pytest.raises(KeyError, match="mine"):
        ember.load(buf, map_location=bad)
    buf.seek(0)
    with pytest.raises(TypeError, match="map_location"):
        ember.load(buf, map_location=3)


def test_mmap(tmp_path):
    p = tmp_path / "m.pt"
    base = ember.arange(20.0).reshape(4, 5)
    ember.save({"base": base, "row": base[1]}, p)
    out = ember.load(p, mmap=True)
    assert ember.equal(out["base"], base) and shares_memory(out["base"], out["row"])
    out["base"][1, 0] = -1.0  # copy-on-write: visible to the view, not written to the file
    assert out["row"][0].item() == -1.0
    assert ember.load(p)["base"][1, 0].item() == 5.0
    with pytest.raises(ValueError, match="file path"):
        ember.load(io.BytesIO(p.read_bytes()), mmap=True)
    ember.save(base, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        ember.load(tmp_path / "legacy.pt", mmap=True)


# ----- the legacy format -----

def test_legacy_round_trip(tmp_path):
    base = ember.arange(12.0).reshape(3, 4)
    obj = {"base": base, "col": base[:, 2], "p": ember.nn.Parameter(ember.ones(2)), "i": ember.arange(3),
           "bf": ember.ones(2, dtype=ember.bfloat16)}
    p = tmp_path / "legacy.pt"
    ember.save(obj, p, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(p)
    out = ember.load(p)
    assert ember.equal(out["col"], base[:, 2]) and shares_memory(out["base"], out["col"])
    assert type(out["p"]) is ember.nn.Parameter and out["bf"].dtype is ember.bfloat16
    out = ember.load(p, map_location=lambda s, loc: s.cpu())
    assert ember.equal(out["base"], base)
    # a map_location that moves storages: the objects are rebuilt over the moved storages
    moved = ember.load(p, map_location=lambda s, loc: serialization._Storage(s.raw.copy(), s.dtype))
    assert ember.equal(moved["col"], base[:, 2]) and shares_memory(moved["base"], moved["col"])
    assert type(moved["p"]) is ember.nn.Parameter and ember.equal(moved["bf"], obj["bf"])


def test_legacy_truncated():
    buf = io.BytesIO()
    ember.save({"a": ember.arange(10.0)}, buf, _use_new_zipfile_serialization=False)
    data = buf.getvalue()
    for n in (10, len(data) // 2, len(data) - 5):
        _expect_invalid(data[:n])


# ----- checkpoints written by PyTorch (tests/fixtures, no torch needed) -----

@pytest.mark.parametrize("fname", ["torch_zip.pt", "torch_legacy.pt"])
def test_torch_written_fixtures(fname):
    out = ember.load(os.path.join(FIXTURES, fname))
    for name in DTYPES:
        if name in out:
            t = out[name]
            assert t.dtype is getattr(ember, name) and t.shape == (2, 3)
            expected = values(name)
            got = t.float() if name in ("float16", "bfloat16") else t
            assert_close(got, expected.astype(got._data.dtype), atol=0, rtol=0)
    base = ember.arange(12.0).reshape(3, 4)
    assert ember.equal(out["base"], base) and ember.equal(out["col"], base[:, 1]) and ember.equal(out["t"], base.t())
    assert shares_memory(out["base"], out["col"]) and shares_memory(out["base"], out["t"])
    assert type(out["param"]) is ember.nn.Parameter and out["param"].requires_grad
    assert type(out) is collections.OrderedDict


def test_torch_zip_fixture_details():
    out = ember.load(os.path.join(FIXTURES, "torch_zip.pt"))
    assert len(DTYPES) == sum(name in out for name in DTYPES)
    assert out._metadata == {"": {"version": 1}}
    assert type(out["frozen"]) is ember.nn.Parameter and not out["frozen"].requires_grad
    assert out["grad"].requires_grad and type(out["grad"]) is ember.Tensor
    assert out["scalar"].shape == () and out["scalar"].item() == 7 and out["empty"].shape == (0, 3)
    n = out["nested"]
    assert n["list"] == [1, 2.5, "s", None, True] and n["tuple"] == (b"by", 3 + 4j) and n["set"] == {1, 2}
    assert type(n["size"]) is ember.Size and n["dtype"] is ember.float16 and n["device"] == ember.device("cpu")


def test_torch_fixture_resave_round_trip(tmp_path):
    out = ember.load(os.path.join(FIXTURES, "torch_zip.pt"), mmap=True)
    ember.save(out, tmp_path / "again.pt")
    again = ember.load(tmp_path / "again.pt")
    assert shares_memory(again["base"], again["col"])
    for k in DTYPES:
        assert ember.equal(again[k], out[k])


def test_large_records_are_checked_in_the_background():
    big = ember.arange(float(3 << 20))  # 24 MB of float64: several chunks checksummed off the main thread
    buf = io.BytesIO()
    ember.save({"big": big, "small": ember.ones(3)}, buf)
    assert ember.equal(ember.load(io.BytesIO(buf.getvalue()))["big"], big)
    data = bytearray(buf.getvalue())
    data[len(data) // 2] ^= 0x01
    _expect_invalid(data, "CRC-32")


def test_ember_never_imports_torch(tmp_path):
    import subprocess
    import sys
    code = ("import sys, ember; p = sys.argv[1]; ember.save({'w': ember.nn.Parameter(ember.ones(2))}, p); "
            "ember.load(p); ember.load(p, weights_only=False); ember.load(p, mmap=True); "
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "x.pt")], check=True)


class _WriteOnly(io.RawIOBase):
    """A stream that cannot seek or tell (a pipe or socket)."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += bytes(b)
        return len(b)


@pytest.mark.parametrize("stream", [False, True])
def test_records_carry_correct_crcs(stream, tmp_path):
    big = ember.arange(300_000, dtype=ember.float32)  # checksummed in a background thread while others are written
    obj = {"big": big, "big2": big[::2].clone(), "small": ember.tensor([1, 2, 3])}
    if stream:
        f = _WriteOnly()
        ember.save(obj, f)
        data = bytes(f.buf)
    else:
        ember.save(obj, tmp_path / "c.pt")
        data = (tmp_path / "c.pt").read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        for info in zf.infolist():
            if "/data/" in info.filename:
                start = info.header_offset + 30 + len(info.filename) + len(info.extra)
                assert start % 64 == 0
    back = ember.load(io.BytesIO(data))
    assert back["big"].tolist() == big.tolist() and back["small"].tolist() == [1, 2, 3]


def test_saving_a_tensor_with_a_backward_hook_warns_once_per_tensor():
    x = ember.ones(2, requires_grad=True)

    def myhook(g):
        return g
    x.register_hook(myhook)
    with pytest.warns(UserWarning, match="backward hook <function .*myhook.* on tensor will not be serialized") as w:
        ember.save([x, x], io.BytesIO())
    assert len(w) == 1
    y = ember.ones(2, requires_grad=True) * 2
    y.retain_grad()  # retain_grad is not a user hook
    z = ember.ones(2, requires_grad=True)
    z.register_hook(ember.utils.hooks.unserializable_hook(lambda g: g))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.save([y, z], io.BytesIO())
    with pytest.warns(UserWarning, match="will not be serialized"):
        assert roundtrip(x).requires_grad


@pytest.mark.parametrize("location", ["bogus", "mps"])
def test_unknown_map_location_names_the_location(location):
    buf = io.BytesIO()
    ember.save({"w": ember.ones(2)}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match=f"don't know how to restore data location of .*UntypedStorage "
                                           f"\\(tagged with {location}\\)"):
        ember.load(buf, map_location=location)
