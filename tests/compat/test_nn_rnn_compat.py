"""nn.RNN / LSTM / GRU, the cells and nn.utils.rnn against PyTorch: values and gradients (float32 and float64),
packed sequences, reprs, parameter names and error messages."""
import numpy as np
import pytest

import ember
import ember.nn as enn
from ember.nn.utils import rnn as ernn

torch = pytest.importorskip("torch")
tnn = torch.nn
trnn = torch.nn.utils.rnn

# torch's own notice when it falls back from oneDNN for projected LSTMs
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")


def _pair(name, *args, dtype=np.float64, **kw):
    """The same module in both libraries with ember's weights copied into torch's."""
    em = getattr(enn, name)(*args, dtype=ember.float64 if dtype == np.float64 else ember.float32, **kw)
    tm = getattr(tnn, name)(*args, dtype=torch.float64 if dtype == np.float64 else torch.float32, **kw)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape), n
        q.data = torch.from_numpy(p.detach().numpy().copy())
    return em, tm


def _flat(out):
    y, h = out
    y = y.data if isinstance(y, (ernn.PackedSequence, trnn.PackedSequence)) else y
    return [y] + (list(h) if isinstance(h, tuple) else [h])


def _compare(em, tm, e_in, t_in, e_leaves, t_leaves, tol):
    eo, to = _flat(em(*e_in)), _flat(tm(*t_in))
    assert len(eo) == len(to)
    rng = np.random.default_rng(0)
    le = lt = 0
    for a, b in zip(eo, to):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=tol, rtol=tol)
        g = rng.standard_normal(tuple(b.shape))
        le = le + (a * ember.tensor(g.astype(a.detach().numpy().dtype))).sum()
        lt = lt + (b * torch.tensor(g, dtype=b.dtype)).sum()
    le.backward()
    lt.backward()
    for a, b in zip(e_leaves, t_leaves):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=tol * 10, rtol=tol * 10)
    for (n, p), (_, q) in zip(em.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=tol * 10, rtol=tol * 10, err_msg=n)


def _leaf(a, dtype):
    return ember.tensor(a.astype(dtype), requires_grad=True), torch.tensor(a.astype(dtype), requires_grad=True)


CONFIGS = [
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 3}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("GRU", {}), ("GRU", {"num_layers": 2, "bidirectional": True}), ("GRU", {"bias": False, "batch_first": True}),
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
    ("RNN", {"bias": False, "batch_first": True, "num_layers": 3}),
]


def _id(c):
    return c[0] + "-" + ",".join(f"{k}={v}" for k, v in c[1].items())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cfg", CONFIGS, ids=[_id(c) for c in CONFIGS])
def test_padded_values_and_grads(cfg, dtype):
    name, kw = cfg
    torch.manual_seed(0)
    em, tm = _pair(name, 5, 6, dtype=dtype, **kw)
    rng = np.random.default_rng(1)
    T, B = 7, 4
    shape = (B, T, 5) if kw.get("batch_first") else (T, B, 5)
    ex, tx = _leaf(rng.standard_normal(shape), dtype)
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    P = kw.get("proj_size") or 6
    eh, th = _leaf(rng.standard_normal((L * D, B, P)), dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    if name == "LSTM":
        ec, tc = _leaf(rng.standard_normal((L * D, B, 6)), dtype)
        _compare(em, tm, (ex, (eh, ec)), (tx, (th, tc)), [ex, eh, ec], [tx, th, tc], tol)
    else:
        _compare(em, tm, (ex, eh), (tx, th), [ex, eh], [tx, th], tol)


@pytest.mark.parametrize("cfg", CONFIGS, ids=[_id(c) for c in CONFIGS])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_values_and_grads(cfg, enforce_sorted):
    name, kw = cfg
    kw = {k: v for k, v in kw.items() if k != "batch_first"}
    em, tm = _pair(name, 3, 4, **kw)
    rng = np.random.default_rng(2)
    lengths = [6, 4, 4, 2, 1] if enforce_sorted else [2, 6, 1, 4, 4]
    ex, tx = _leaf(rng.standard_normal((6, 5, 3)), np.float64)
    ep = ernn.pack_padded_sequence(ex, lengths, enforce_sorted=enforce_sorted)
    tp = trnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    P = kw.get("proj_size") or 4
    eh, th = _leaf(rng.standard_normal((L * D, 5, P)), np.float64)
    if name == "LSTM":
        ec, tc = _leaf(rng.standard_normal((L * D, 5, 4)), np.float64)
        _compare(em, tm, (ep, (eh, ec)), (tp, (th, tc)), [ex, eh, ec], [tx, th, tc], 1e-10)
    else:
        _compare(em, tm, (ep, eh), (tp, th), [ex, eh], [tx, th], 1e-10)
    out_e, _ = em(ep)
    out_t, _ = tm(tp)
    assert out_e.batch_sizes.tolist() == out_t.batch_sizes.tolist()
    ye, le = ernn.pad_packed_sequence(out_e, batch_first=True)
    yt, lt = trnn.pad_packed_sequence(out_t, batch_first=True)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=1e-10)
    assert le.tolist() == lt.tolist()


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_unbatched_and_default_hidden(name):
    em, tm = _pair(name, 3, 4, num_layers=2, bidirectional=True)
    x = np.random.default_rng(3).standard_normal((5, 3))
    ex, tx = _leaf(x, np.float64)
    _compare(em, tm, (ex,), (tx,), [ex], [tx], 1e-10)


@pytest.mark.parametrize("name, kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
                                      ("LSTMCell", {}), ("GRUCell", {}), ("GRUCell", {"bias": False})])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cells(name, kw, dtype):
    em, tm = _pair(name, 3, 4, dtype=dtype, **kw)
    rng = np.random.default_rng(4)
    ex, tx = _leaf(rng.standard_normal((2, 3)), dtype)
    eh, th = _leaf(rng.standard_normal((2, 4)), dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    if name == "LSTMCell":
        ec, tc = _leaf(rng.standard_normal((2, 4)), dtype)
        eo, to = em(ex, (eh, ec)), tm(tx, (th, tc))
        leaves = ([ex, eh, ec], [tx, th, tc])
    else:
        eo, to = (em(ex, eh),), (tm(tx, th),)
        leaves = ([ex, eh], [tx, th])
    le = sum((a * (k + 1)).sum() for k, a in enumerate(eo))
    lt = sum((a * (k + 1)).sum() for k, a in enumerate(to))
    for a, b in zip(eo, to):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=tol, rtol=tol)
    le.backward()
    lt.backward()
    for a, b in zip(*leaves):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=tol * 10, rtol=tol * 10)


def test_benchmark_shape_float32():
    """The benchmark's shape (2 layers, hidden 256) in float32: values and weight gradients within 1e-5 (relative)."""
    em, tm = _pair("LSTM", 32, 64, dtype=np.float32, num_layers=2)
    ex, tx = _leaf(np.random.default_rng(5).standard_normal((16, 8, 32)), np.float32)
    _compare(em, tm, (ex,), (tx,), [ex], [tx], 2e-5)


REPRS = [
    ("LSTM", (3, 4, 2), {"bias": False, "batch_first": True, "dropout": 0.5, "bidirectional": True, "proj_size": 2}),
    ("LSTM", (3, 4), {}), ("GRU", (3, 4), {"dropout": 0.0}), ("RNN", (3, 4), {"nonlinearity": "relu"}),
    ("RNN", (3, 4, 3), {"dropout": 0.25}), ("RNNCell", (3, 4, False, "relu"), {}), ("LSTMCell", (3, 4), {}),
    ("GRUCell", (3, 4), {"bias": False}),
]


@pytest.mark.parametrize("name, args, kw", REPRS)
def test_repr_and_parameter_names(name, args, kw):
    em, tm = getattr(enn, name)(*args, **kw), getattr(tnn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]
    if hasattr(tm, "_flat_weights_names"):
        assert em._flat_weights_names == tm._flat_weights_names
        assert [[n for n in w] for w in em._all_weights] == tm._all_weights


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (any error: compared by type and text)
        return type(e).__name__, str(e).replace("ember.", "torch.")
    return None


ERRORS = [
    ("LSTM", (3, 4), lambda L, m: m(L.randn(5, 2, 4))),
    ("LSTM", (3, 4), lambda L, m: m(L.randn(5, 2, 3), (L.randn(1, 3, 4), L.randn(1, 3, 4)))),
    ("LSTM", (3, 4), lambda L, m: m(L.randn(5, 2, 3), (L.randn(1, 2, 4), L.randn(1, 2, 5)))),
    ("LSTM", (3, 4), lambda L, m: m(L.randn(5, 2, 3, dtype=L.float64))),
    ("LSTM", (3, 4), lambda L, m: m(L.randn(3))),
    ("LSTM", (3, 4), lambda L, m: m(L.randn(5, 2, 3), (L.randn(2, 4), L.randn(2, 4)))),
    ("LSTM", (3, 4), lambda L, m: m(L.randn(5, 3), (L.randn(1, 1, 4), L.randn(1, 1, 4)))),
    ("LSTM", (3, 4), lambda L, m: m(L.randn(0, 2, 3))),
    ("GRU", (3, 4), lambda L, m: m(L.randn(5, 2, 3), L.randn(2, 4))),
    ("GRU", (3, 4), lambda L, m: m(L.randn(5, 2, 3, 1))),
    ("RNN", (3, 4), lambda L, m: m(L.randn(5, 2, 3), L.randn(1, 3, 4))),
    ("RNN", (3, 4), lambda L, m: m(L.randn(5, 2, 3, 1))),
    ("RNN", (3, 4), lambda L, m: m(L.randn(5, 3), L.randn(1, 1, 4))),
    ("LSTMCell", (3, 4), lambda L, m: m(L.randn(2, 5))),
    ("LSTMCell", (3, 4), lambda L, m: m(L.randn(2, 3), (L.randn(3, 4), L.randn(3, 4)))),
    ("GRUCell", (3, 4), lambda L, m: m(L.randn(2, 3), L.randn(2, 5))),
    ("RNNCell", (3, 4), lambda L, m: m(L.randn(2, 3, 1))),
    ("RNNCell", (3, 4), lambda L, m: m(L.randn(2, 3), L.randn(2, 3, 1))),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_error_messages(k):
    name, args, call = ERRORS[k]
    e = _err(lambda: call(ember, getattr(enn, name)(*args)))
    t = _err(lambda: call(torch, getattr(tnn, name)(*args)))
    assert e is not None and e == t


@pytest.mark.parametrize("kw", [{"dropout": 1.5}, {"proj_size": 4}, {"proj_size": -1}, {"num_layers": 0},
                                {"bias": 1}, {"batch_first": None}])
def test_constructor_errors(kw):
    assert _err(lambda: enn.LSTM(3, 4, **kw)) == _err(lambda: tnn.LSTM(3, 4, **kw))


def test_dropout_warning_text():
    with pytest.warns(UserWarning) as we:
        enn.GRU(3, 4, dropout=0.3)
    with pytest.warns(UserWarning) as wt:
        tnn.GRU(3, 4, dropout=0.3)
    assert str(we[0].message) == str(wt[0].message)


# ----- nn.utils.rnn -----

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 4, 3, 1, 1], True), ([2, 4, 2, 4, 3], False)])
def test_pack_pad_against_torch(batch_first, lengths, enforce_sorted):
    x = np.random.default_rng(6).standard_normal((5, 4, 3) if batch_first else (4, 5, 3))
    ex, tx = _leaf(x, np.float64)
    ep = ernn.pack_padded_sequence(ex, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    tp = trnn.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(ep.data.detach().numpy(), tp.data.detach().numpy())
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    for a, b in [(ep.sorted_indices, tp.sorted_indices), (ep.unsorted_indices, tp.unsorted_indices)]:
        assert (a is None and b is None) or a.tolist() == b.tolist()
    ey, el = ernn.pad_packed_sequence(ep, batch_first=batch_first, padding_value=-3.0, total_length=6)
    ty, tl = trnn.pad_packed_sequence(tp, batch_first=batch_first, padding_value=-3.0, total_length=6)
    np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
    assert el.tolist() == tl.tolist()
    g = np.random.default_rng(7).standard_normal(tuple(ty.shape))
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["left", "right"])
def test_pad_sequence_against_torch(batch_first, side):
    rng = np.random.default_rng(8)
    seqs = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    e = ernn.pad_sequence([ember.tensor(s) for s in seqs], batch_first, 5.0, side)
    t = trnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first, 5.0, side)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_pack_sequence_and_unpack_against_torch():
    rng = np.random.default_rng(9)
    seqs = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    ep = ernn.pack_sequence([ember.tensor(s) for s in seqs], enforce_sorted=False)
    tp = trnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(ep.data.numpy(), tp.data.numpy())
    for a, b in zip(ernn.unpack_sequence(ep), trnn.unpack_sequence(tp)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert ernn.invert_permutation(ember.tensor([2, 0, 1])).tolist() == \
        trnn.invert_permutation(torch.tensor([2, 0, 1])).tolist()


UTIL_ERRORS = [
    lambda R, L: R.pack_padded_sequence(L.zeros(4, 5, 2), [2, 4, 2, 4, 3]),
    lambda R, L: R.pack_padded_sequence(L.zeros(4, 5, 2), [4, 3, 0, 0, 0]),
    lambda R, L: R.pack_padded_sequence(L.zeros(4, 5, 2), [4, 3, 2]),
    lambda R, L: R.pad_packed_sequence(R.pack_padded_sequence(L.zeros(4, 2, 1), [4, 3]), total_length=2),
    lambda R, L: R.pad_sequence([L.zeros(2, 3), L.zeros(2, 4)]),
    lambda R, L: R.pad_sequence([L.zeros(2, 3)], padding_side="middle"),
    lambda R, L: R.pad_sequence([]),
    lambda R, L: R.pack_sequence([]),
    lambda R, L: R.pack_sequence([L.ones(2), L.ones(3)]),
]


@pytest.mark.parametrize("k", range(len(UTIL_ERRORS)))
def test_util_error_messages(k):
    e = _err(lambda: UTIL_ERRORS[k](ernn, ember))
    t = _err(lambda: UTIL_ERRORS[k](trnn, torch))
    assert e is not None and e == t
