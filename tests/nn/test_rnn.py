"""nn.RNN / nn.LSTM / nn.GRU and the cells: values against a NumPy reference, gradcheck, packed input, module
behaviour, errors."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.utils.rnn import PackedSequence, pack_padded_sequence, pack_sequence, pad_packed_sequence

# ----- NumPy reference (torch's documented equations) -----

def _sig(a):
    return 1 / (1 + np.exp(-a))


def _cell_ref(mode, x, h, c, w):
    """One step for a batch: x (B, I), h (B, P), c (B, H); w = dict of weight arrays."""
    gi = x @ w["ih"].T + (w.get("bih", 0))
    gh = h @ w["hh"].T + (w.get("bhh", 0))
    if mode == "LSTM":
        i, f, g, o = np.split(gi + gh, 4, axis=1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        if "hr" in w:
            h = h @ w["hr"].T
        return h, c
    if mode == "GRU":
        ir, iz, in_ = np.split(gi, 3, axis=1)
        hr, hz, hn = np.split(gh, 3, axis=1)
        r, z = _sig(ir + hr), _sig(iz + hz)
        n = np.tanh(in_ + r * hn)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0)), None


def _weights(m, layer, suffix):
    d = {"ih": f"weight_ih_l{layer}{suffix}", "hh": f"weight_hh_l{layer}{suffix}", "bih": f"bias_ih_l{layer}{suffix}",
         "bhh": f"bias_hh_l{layer}{suffix}", "hr": f"weight_hr_l{layer}{suffix}"}
    return {k: getattr(m, n).detach().numpy() for k, n in d.items() if hasattr(m, n) and getattr(m, n) is not None}


def rnn_ref(m, x, h0=None, c0=None):
    """Reference forward of module m on a (T, B, I) (or batch_first) NumPy input: (output, h_n, c_n)."""
    if m.batch_first:
        x = x.transpose(1, 0, 2)
    T, B, _ = x.shape
    D = 2 if m.bidirectional else 1
    P = m.proj_size or m.hidden_size
    h0 = np.zeros((m.num_layers * D, B, P)) if h0 is None else h0
    c0 = np.zeros((m.num_layers * D, B, m.hidden_size)) if c0 is None else c0
    inp, hn, cn = x, [], []
    for layer in range(m.num_layers):
        outs = []
        for d in range(D):
            w = _weights(m, layer, "_reverse" if d else "")
            h, c = h0[layer * D + d], c0[layer * D + d]
            ys = [None] * T
            for t in (range(T - 1, -1, -1) if d else range(T)):
                h, c = _cell_ref(m.mode, inp[t], h, c, w)
                ys[t] = h
            outs.append(np.stack(ys))
            hn.append(h)
            cn.append(c)
        inp = np.concatenate(outs, axis=2)
    y = inp.transpose(1, 0, 2) if m.batch_first else inp
    return y, np.stack(hn), (np.stack(cn) if m.mode == "LSTM" else None)


def _make(cls, *args, **kw):
    ember.manual_seed(0)
    return cls(*args, dtype=ember.float64, **kw)


CONFIGS = [
    {},
    {"num_layers": 2},
    {"bidirectional": True},
    {"num_layers": 2, "bidirectional": True},
    {"batch_first": True},
    {"bias": False},
    {"num_layers": 2, "bidirectional": True, "batch_first": True, "bias": False},
]
MODULES = [(nn.LSTM, {}), (nn.GRU, {}), (nn.RNN, {}), (nn.RNN, {"nonlinearity": "relu"})]
LSTM_PROJ = [{"proj_size": 2}, {"proj_size": 2, "num_layers": 2, "bidirectional": True}]


def _cases():
    for cls, extra in MODULES:
        for cfg in CONFIGS:
            yield cls, {**extra, **cfg}
    for cfg in LSTM_PROJ:
        yield nn.LSTM, cfg


CASES = list(_cases())


def _ids(c):
    return c[0].__name__ + "-" + ",".join(f"{k}={v}" for k, v in c[1].items())


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_forward_matches_reference(case):
    cls, kw = case
    m = _make(cls, 3, 4, **kw)
    rng = np.random.default_rng(1)
    T, B = 5, 3
    x = rng.standard_normal((B, T, 3) if m.batch_first else (T, B, 3))
    D = 2 if m.bidirectional else 1
    P = m.proj_size or m.hidden_size
    h0 = rng.standard_normal((m.num_layers * D, B, P))
    c0 = rng.standard_normal((m.num_layers * D, B, 4))
    hx = (ember.tensor(h0), ember.tensor(c0)) if cls is nn.LSTM else ember.tensor(h0)
    y, h = m(ember.tensor(x), hx)
    ry, rh, rc = rnn_ref(m, x, h0, c0)
    np.testing.assert_allclose(y.detach().numpy(), ry, atol=1e-12)
    if cls is nn.LSTM:
        np.testing.assert_allclose(h[0].detach().numpy(), rh, atol=1e-12)
        np.testing.assert_allclose(h[1].detach().numpy(), rc, atol=1e-12)
    else:
        np.testing.assert_allclose(h.detach().numpy(), rh, atol=1e-12)
    # no h0: zeros
    y0, _ = m(ember.tensor(x))
    np.testing.assert_allclose(y0.detach().numpy(), rnn_ref(m, x)[0], atol=1e-12)


def _flat_out(out):
    y, h = out
    y = y.data if isinstance(y, PackedSequence) else y
    return (y,) + (tuple(h) if isinstance(h, tuple) else (h,))


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_gradcheck(case):
    cls, kw = case
    m = _make(cls, 2, 3, **kw)
    rng = np.random.default_rng(2)
    T, B = 3, 2
    x = ember.tensor(rng.standard_normal((B, T, 2) if m.batch_first else (T, B, 2)), requires_grad=True)
    D = 2 if m.bidirectional else 1
    P = m.proj_size or m.hidden_size
    h0 = ember.tensor(rng.standard_normal((m.num_layers * D, B, P)), requires_grad=True)
    params = list(m.parameters())
    if cls is nn.LSTM:
        c0 = ember.tensor(rng.standard_normal((m.num_layers * D, B, 3)), requires_grad=True)
        fn = lambda x, h0, c0, *ws: _flat_out(m(x, (h0, c0)))
        inputs = [x, h0, c0] + params
    else:
        fn = lambda x, h0, *ws: _flat_out(m(x, h0))
        inputs = [x, h0] + params
    assert gradcheck(fn, inputs, fast_mode=True)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_gradcheck_slow_mode(cls):
    m = _make(cls, 2, 2, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    assert gradcheck(lambda x, *ws: _flat_out(m(x)), [x] + list(m.parameters()))


def _packed_input(rng, lengths, size, enforce_sorted):
    seqs = [ember.tensor(rng.standard_normal((n, size)), requires_grad=True) for n in lengths]
    return seqs, pack_sequence(seqs, enforce_sorted=enforce_sorted)


@pytest.mark.parametrize("case", [c for c in CASES if not c[1].get("batch_first")], ids=_ids)
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_equals_per_sequence(case, enforce_sorted):
    cls, kw = case
    m = _make(cls, 3, 4, **kw)
    rng = np.random.default_rng(4)
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    seqs, packed = _packed_input(rng, lengths, 3, enforce_sorted)
    out, hidden = m(packed)
    assert isinstance(out, PackedSequence)
    padded, lens = pad_packed_sequence(out)
    assert lens.tolist() == lengths
    for b, s in enumerate(seqs):
        yb, hb = m(s)   # unbatched run of one sequence
        np.testing.assert_allclose(padded[:lengths[b], b].detach().numpy(), yb.detach().numpy(), atol=1e-12)
        np.testing.assert_allclose(padded[lengths[b]:, b].detach().numpy(), 0)
        if cls is nn.LSTM:
            np.testing.assert_allclose(hidden[0][:, b].detach().numpy(), hb[0].detach().numpy(), atol=1e-12)
            np.testing.assert_allclose(hidden[1][:, b].detach().numpy(), hb[1].detach().numpy(), atol=1e-12)
        else:
            np.testing.assert_allclose(hidden[:, b].detach().numpy(), hb.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_packed_gradcheck_with_h0(cls):
    m = _make(cls, 2, 3, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(5)
    x = ember.tensor(rng.standard_normal((4, 3, 2)), requires_grad=True)
    h0 = ember.tensor(rng.standard_normal((4, 3, 3)), requires_grad=True)
    c0 = ember.tensor(rng.standard_normal((4, 3, 3)), requires_grad=True)
    lengths = [2, 4, 1]

    def fn(x, h0, c0):
        p = pack_padded_sequence(x, lengths, enforce_sorted=False)
        return _flat_out(m(p, (h0, c0) if cls is nn.LSTM else h0))
    assert gradcheck(fn, [x, h0, c0])


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_unbatched(cls):
    m = _make(cls, 3, 4, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((5, 3))
    y, h = m(ember.tensor(x))
    yb, _hb = m(ember.tensor(x[:, None]))
    assert tuple(y.shape) == (5, 8)
    np.testing.assert_allclose(y.detach().numpy(), yb[:, 0].detach().numpy())
    if cls is nn.LSTM:
        assert tuple(h[0].shape) == (4, 4) and tuple(h[1].shape) == (4, 4)
        hx = (ember.zeros(4, 4, dtype=ember.float64), ember.zeros(4, 4, dtype=ember.float64))
    else:
        assert tuple(h.shape) == (4, 4)
        hx = ember.zeros(4, 4, dtype=ember.float64)
    y2, _ = m(ember.tensor(x), hx)
    np.testing.assert_allclose(y2.detach().numpy(), y.detach().numpy())
    x = ember.tensor(x, requires_grad=True)
    assert gradcheck(lambda x: _flat_out(m(x)), [x], fast_mode=True)


def test_float32_matches_float64():
    ember.manual_seed(0)
    m = nn.LSTM(8, 16, num_layers=2, bidirectional=True, proj_size=4)
    m64 = nn.LSTM(8, 16, num_layers=2, bidirectional=True, proj_size=4, dtype=ember.float64)
    m64.load_state_dict({k: v.double() for k, v in m.state_dict().items()})
    x = np.random.default_rng(7).standard_normal((20, 4, 8))
    y32, _ = m(ember.tensor(x.astype(np.float32)))
    y64, _ = m64(ember.tensor(x))
    assert y32.dtype == ember.float32
    np.testing.assert_allclose(y32.detach().numpy(), y64.detach().numpy(), atol=1e-5)


def test_saturated_gates_are_finite():
    m = _make(nn.LSTM, 2, 3)
    with ember.no_grad():
        for p in m.parameters():
            p.mul_(1000)
    x = ember.tensor(np.random.default_rng(8).standard_normal((4, 2, 2)) * 100, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y, (_h, _c) = m(x)
        y.sum().backward()
    assert np.isfinite(y.detach().numpy()).all() and np.isfinite(x.grad.numpy()).all()
    np.testing.assert_allclose(y.detach().numpy(), rnn_ref(m, x.detach().numpy())[0], atol=1e-12)


# ----- module behaviour -----

def test_parameter_names_and_shapes():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    names = [n for n, _ in m.named_parameters()]
    expected = []
    for layer in range(2):
        for sfx in ("", "_reverse"):
            expected += [f"{b}_l{layer}{sfx}" for b in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")]
    assert names == expected == m._flat_weights_names
    assert tuple(m.weight_ih_l0.shape) == (20, 3)
    assert tuple(m.weight_hh_l0.shape) == (20, 2)
    assert tuple(m.weight_hr_l0.shape) == (2, 5)
    assert tuple(m.weight_ih_l1.shape) == (20, 4)
    assert len(m.all_weights) == 4 and m.all_weights[1][0] is m.weight_ih_l0_reverse
    assert m._flat_weights[0] is m.weight_ih_l0
    assert m.flatten_parameters() is None
    g = nn.GRU(3, 5, bias=False)
    assert [n for n, _ in g.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    assert tuple(g.weight_ih_l0.shape) == (15, 3)


def test_default_init_bound():
    ember.manual_seed(0)
    for m in (nn.LSTM(3, 16, 2), nn.GRU(3, 16), nn.RNN(3, 16), nn.LSTMCell(3, 16), nn.GRUCell(3, 16)):
        bound = 1 / math.sqrt(16)
        for p in m.parameters():
            a = p.detach().numpy()
            assert a.min() >= -bound and a.max() <= bound and a.std() > bound / 3


def test_dtype_and_device_kwargs():
    m = nn.GRU(3, 4, dtype=ember.float64)
    assert all(p.dtype == ember.float64 for p in m.parameters())
    y, _h = m(ember.randn(2, 1, 3, dtype=ember.float64))
    assert y.dtype == ember.float64


def test_dropout_warning_and_train_eval():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.5)
    m = _make(nn.LSTM, 3, 4, num_layers=2, dropout=0.5)
    x = ember.tensor(np.random.default_rng(9).standard_normal((6, 2, 3)))
    m.eval()
    np.testing.assert_allclose(m(x)[0].detach().numpy(), rnn_ref(m, x.numpy())[0], atol=1e-12)
    m.train()
    outs = [m(x)[0].detach().numpy() for _ in range(3)]
    assert not np.allclose(outs[0], rnn_ref(m, x.numpy())[0])
    assert not np.allclose(outs[0], outs[1])


@pytest.mark.parametrize("kw, exc, msg", [
    ({"dropout": 1.5}, ValueError, "dropout should be a number in range"),
    ({"proj_size": 4}, ValueError, "proj_size has to be smaller than hidden_size"),
    ({"proj_size": -1}, ValueError, "proj_size should be a positive integer"),
    ({"num_layers": 0}, ValueError, "num_layers must be greater than zero"),
    ({"bias": 1}, TypeError, "bias should be of type bool, got: int"),
    ({"batch_first": None}, TypeError, "batch_first should be of type bool"),
])
def test_constructor_errors(kw, exc, msg):
    with pytest.raises(exc, match=msg):
        nn.LSTM(3, 4, **kw)


def test_constructor_errors_rnn_gru():
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(3, 4, proj_size=2)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.RNN(3, 0)
    assert nn.RNN(3, 4, 2, "relu").nonlinearity == "relu"


def test_forward_errors():
    m = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 3, got 4"):
        m(ember.randn(5, 2, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\), got \[1, 3, 4\]"):
        m(ember.randn(5, 2, 3), (ember.randn(1, 3, 4), ember.randn(1, 3, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 5\]"):
        m(ember.randn(5, 2, 3), (ember.randn(1, 2, 4), ember.randn(1, 2, 5)))
    with pytest.raises(ValueError, match=r"RNN input dtype \(ember.float64\) does not match weight dtype"):
        m(ember.randn(5, 2, 3, dtype=ember.float64))
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 1D instead"):
        m(ember.randn(3))
    with pytest.raises(RuntimeError, match=r"For batched 3-D input, hx and cx should also be 3-D but got \(2-D, 2-D\)"):
        m(ember.randn(5, 2, 3), (ember.randn(2, 4), ember.randn(2, 4)))
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        m(ember.randn(0, 2, 3))
    g = nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D tensor"):
        g(ember.randn(5, 2, 3), ember.randn(2, 4))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but got 3-D tensor"):
        g(ember.randn(5, 3), ember.randn(1, 1, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        nn.RNN(3, 4)(ember.randn(5, 2, 3), ember.randn(1, 3, 4))
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D tensor instead"):
        nn.RNN(3, 4)(ember.randn(5, 2, 3, 1))


def test_repr():
    assert repr(nn.LSTM(3, 4, 2, bias=False, batch_first=True, dropout=0.5, bidirectional=True, proj_size=2)) == (
        "LSTM(3, 4, proj_size=2, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)")
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4)"
    assert repr(nn.GRU(3, 4)) == "GRU(3, 4)"
    assert repr(nn.RNNCell(3, 4, False, "relu")) == "RNNCell(3, 4, bias=False, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4)) == "LSTMCell(3, 4)"


def test_state_dict_round_trip():
    a, b = nn.GRU(3, 4, 2), nn.GRU(3, 4, 2)
    b.load_state_dict(a.state_dict())
    x = ember.randn(5, 2, 3)
    np.testing.assert_array_equal(a(x)[0].detach().numpy(), b(x)[0].detach().numpy())


def test_replaced_weight_is_used():
    m = _make(nn.RNN, 2, 3)
    x = ember.randn(4, 1, 2, dtype=ember.float64)
    m.weight_hh_l0 = nn.Parameter(ember.zeros(3, 3, dtype=ember.float64))
    assert m._flat_weights[1] is m.weight_hh_l0
    np.testing.assert_allclose(m(x)[0].detach().numpy(), rnn_ref(m, x.numpy())[0], atol=1e-12)


# ----- autograd behaviour -----

def test_double_backward_raises():
    m = _make(nn.LSTM, 2, 3)
    x = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)
    y, _ = m(x)
    (gx,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    assert gx.requires_grad
    with pytest.raises(RuntimeError, match="double backward through ember's fused RNN"):
        gx.sum().backward()


def test_grad_matches_without_create_graph():
    m = _make(nn.GRU, 2, 3)
    x = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)
    (g1,) = ember.autograd.grad(m(x)[0].sum(), x, create_graph=True)
    (g2,) = ember.autograd.grad(m(x)[0].sum(), x)
    np.testing.assert_allclose(g1.detach().numpy(), g2.numpy())


def test_inplace_change_of_output_is_detected():
    m = _make(nn.RNN, 2, 3)
    x = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)
    y, _ = m(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_backward_twice_needs_retain_graph():
    m = _make(nn.LSTM, 2, 3)
    x = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)
    y, _ = m(x)
    y.sum().backward(retain_graph=True)
    g = x.grad.clone()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g.numpy())
    y2, _ = m(x)
    s = y2.sum()
    s.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        s.backward()


def test_only_hidden_used():
    m = _make(nn.LSTM, 2, 3, num_layers=2)
    x = ember.randn(4, 2, 2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x, *ws: m(x)[1][1], [x] + list(m.parameters()), fast_mode=True)


def test_no_grad_forward():
    m = _make(nn.LSTM, 2, 3)
    with ember.no_grad():
        y, (_h, _c) = m(ember.randn(4, 2, 2, dtype=ember.float64))
    assert not y.requires_grad and y.grad_fn is None


# ----- cells -----

CELLS = [(nn.RNNCell, "RNN_TANH", {}), (nn.RNNCell, "RNN_RELU", {"nonlinearity": "relu"}), (nn.LSTMCell, "LSTM", {}),
         (nn.GRUCell, "GRU", {}), (nn.GRUCell, "GRU", {"bias": False})]


@pytest.mark.parametrize("cls, mode, kw", CELLS)
def test_cell_forward_and_grads(cls, mode, kw):
    m = _make(cls, 3, 4, **kw)
    rng = np.random.default_rng(10)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    w = {"ih": m.weight_ih.detach().numpy(), "hh": m.weight_hh.detach().numpy()}
    if m.bias_ih is not None:
        w.update(bih=m.bias_ih.detach().numpy(), bhh=m.bias_hh.detach().numpy())
    rh, rc = _cell_ref(mode, x, h, c, w)
    xt, ht, ct = (ember.tensor(a, requires_grad=True) for a in (x, h, c))
    if cls is nn.LSTMCell:
        out = m(xt, (ht, ct))
        np.testing.assert_allclose(out[0].detach().numpy(), rh, atol=1e-12)
        np.testing.assert_allclose(out[1].detach().numpy(), rc, atol=1e-12)
        fn = lambda x, h, c, *ws: m(x, (h, c))
        ins = [xt, ht, ct] + list(m.parameters())
    else:
        np.testing.assert_allclose(m(xt, ht).detach().numpy(), rh, atol=1e-12)
        fn = lambda x, h, *ws: m(x, h)
        ins = [xt, ht] + list(m.parameters())
    assert gradcheck(fn, ins)
    assert gradgradcheck(fn, ins)


@pytest.mark.parametrize("cls", [nn.RNNCell, nn.LSTMCell, nn.GRUCell])
def test_cell_unbatched_and_default_hidden(cls):
    m = _make(cls, 3, 4)
    x = ember.randn(3, dtype=ember.float64)
    out = m(x)
    ref = m(x[None], None)
    if cls is nn.LSTMCell:
        assert tuple(out[0].shape) == (4,)
        np.testing.assert_allclose(out[0].detach().numpy(), ref[0][0].detach().numpy())
    else:
        assert tuple(out.shape) == (4,)
        np.testing.assert_allclose(out.detach().numpy(), ref[0].detach().numpy())


def test_cell_errors():
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        nn.LSTMCell(3, 4)(ember.randn(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        nn.LSTMCell(3, 4)(ember.randn(2, 3), (ember.randn(3, 4), ember.randn(3, 4)))
    with pytest.raises(RuntimeError, match="hidden0 has inconsistent hidden_size: got 5, expected 4"):
        nn.GRUCell(3, 4)(ember.randn(2, 3), ember.randn(2, 5))
    with pytest.raises(ValueError, match="RNNCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.RNNCell(3, 4)(ember.randn(2, 3, 1))
    with pytest.raises(ValueError, match=r"LSTMCell: Expected hx\[1\] to be 1D or 2D, got 3D instead"):
        nn.LSTMCell(3, 4)(ember.randn(2, 3), (ember.randn(2, 4), ember.randn(1, 2, 4)))
