"""optim.SparseAdam, and the sparse gradients of Embedding(sparse=True) in the other optimizers."""
import math

import numpy as np
import pytest

import ember


def _embedding():
    e = ember.nn.Embedding(6, 2, sparse=True, dtype=ember.float64)
    with ember.no_grad():
        e.weight.copy_(ember.tensor(np.arange(12.0).reshape(6, 2) / 10))
    return e


def test_first_step_moves_only_the_rows_looked_up_by_lr():
    e = _embedding()
    before = e.weight.detach().numpy().copy()
    opt = ember.optim.SparseAdam(e.parameters(), lr=0.1)
    (e(ember.tensor([1, 3, 1])) ** 2).sum().backward()
    opt.step()
    after = e.weight.detach().numpy()
    # step 1: m = 0.1 g, v = 0.001 g^2, update lr * sqrt(1 - 0.999) / 0.1 * m / (sqrt(v) + eps) = lr * sign(g)
    moved = before.copy()
    moved[[1, 3]] -= 0.1 * np.sign(before[[1, 3]])
    np.testing.assert_allclose(after, moved, rtol=1e-6)
    state = opt.state[e.weight]
    assert state["step"] == 1
    g = np.zeros_like(before)
    g[1], g[3] = 2 * 2 * before[1], 2 * before[3]  # row 1 looked up twice: its entries summed when coalesced
    np.testing.assert_allclose(state["exp_avg"].numpy(), 0.1 * g)
    np.testing.assert_allclose(state["exp_avg_sq"].numpy(), 0.001 * g * g)


def test_second_step_follows_adam_on_the_rows_present():
    e = _embedding()
    opt = ember.optim.SparseAdam(e.parameters(), lr=0.05, betas=(0.8, 0.9), eps=1e-6)
    for rows in ([0, 2], [2, 5]):
        w = e.weight.detach().numpy().copy()
        opt.zero_grad()
        e(ember.tensor(rows)).sum().backward()
        m_old = opt.state[e.weight]["exp_avg"].numpy().copy() if opt.state[e.weight] else np.zeros_like(w)
        v_old = opt.state[e.weight]["exp_avg_sq"].numpy().copy() if opt.state[e.weight] else np.zeros_like(w)
        opt.step()
    t = 2
    m = m_old[[2, 5]] + (1 - m_old[[2, 5]]) * 0.2
    v = v_old[[2, 5]] + (1 - v_old[[2, 5]]) * 0.1
    step = 0.05 * math.sqrt(1 - 0.9 ** t) / (1 - 0.8 ** t)
    want = w.copy()
    want[[2, 5]] -= step * m / (np.sqrt(v) + 1e-6)
    np.testing.assert_allclose(e.weight.detach().numpy(), want, rtol=1e-12)
    np.testing.assert_array_equal(opt.state[e.weight]["exp_avg"].numpy()[0], m_old[0])  # row 0 absent: kept


def test_maximize_climbs():
    e = _embedding()
    before = e.weight.detach().numpy().copy()
    opt = ember.optim.SparseAdam(e.parameters(), lr=0.1, maximize=True)
    e(ember.tensor([4])).sum().backward()
    opt.step()
    np.testing.assert_allclose(e.weight.detach().numpy()[4], before[4] + 0.1, rtol=1e-6)


def test_state_dict_round_trip():
    e = _embedding()
    opt = ember.optim.SparseAdam(e.parameters(), lr=0.01)
    e(ember.tensor([1, 2])).sum().backward()
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"] == [{"lr": 0.01, "betas": (0.9, 0.999), "eps": 1e-8, "maximize": False,
                                   "params": [0]}]
    other = ember.optim.SparseAdam(e.parameters())
    other.load_state_dict(sd)
    assert other.state[e.weight]["step"] == 1
    np.testing.assert_array_equal(other.state[e.weight]["exp_avg"].numpy(), opt.state[e.weight]["exp_avg"].numpy())


def test_bad_input():
    e = _embedding()
    with pytest.raises(ValueError, match="Invalid learning rate: 0.0"):
        ember.optim.SparseAdam(e.parameters(), lr=0.0)
    with pytest.raises(ValueError, match="Invalid epsilon value: 0.0"):
        ember.optim.SparseAdam(e.parameters(), eps=0.0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        ember.optim.SparseAdam(e.parameters(), betas=(0.9, 1.0))
    with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 0\]\]: SparseAdam does not support "
                                         "complex parameters"):
        ember.optim.SparseAdam([ember.zeros(2, dtype=ember.complex64, requires_grad=True)])
    dense = ember.nn.Embedding(3, 2)
    opt = ember.optim.SparseAdam(dense.parameters())
    dense(ember.tensor([0])).sum().backward()
    before = dense.weight.detach().numpy().copy()
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam "
                                           "instead"):
        opt.step()
    np.testing.assert_array_equal(dense.weight.detach().numpy(), before)


# ----- sparse gradients in the other optimizers (as torch: SGD, Adagrad and LBFGS take them) -----

def test_sgd_with_a_sparse_gradient_updates_the_rows_looked_up():
    e = _embedding()
    before = e.weight.detach().numpy().copy()
    opt = ember.optim.SGD(e.parameters(), lr=0.5, momentum=0.9)
    e(ember.tensor([1, 1, 4])).sum().backward()
    opt.step()
    want = before.copy()
    want[1] -= 0.5 * 2  # row 1 looked up twice
    want[4] -= 0.5
    np.testing.assert_allclose(e.weight.detach().numpy(), want)
    buf = opt.state[e.weight]["momentum_buffer"]
    assert buf.is_sparse and buf._nnz() == 3
    opt.zero_grad(set_to_none=False)  # a sparse .grad is emptied
    assert e.weight.grad._nnz() == 0
    e(ember.tensor([0])).sum().backward()
    opt.step()  # buffer = 0.9 * buffer + g: rows 1 and 4 keep moving, row 0 starts
    want[1] -= 0.5 * 0.9 * 2
    want[4] -= 0.5 * 0.9
    want[0] -= 0.5
    np.testing.assert_allclose(e.weight.detach().numpy(), want)


def test_adagrad_with_a_sparse_gradient():
    e = _embedding()
    before = e.weight.detach().numpy().copy()
    opt = ember.optim.Adagrad(e.parameters(), lr=0.1)
    (e(ember.tensor([2, 2])) * 3).sum().backward()  # gradient of row 2: 6
    opt.step()
    want = before.copy()
    want[2] -= 0.1 * 6 / (6 + 1e-10)
    np.testing.assert_allclose(e.weight.detach().numpy(), want)
    np.testing.assert_allclose(opt.state[e.weight]["sum"].numpy()[2], [36, 36])


@pytest.mark.parametrize("name, kwargs, message", [
    ("Adam", {}, "Adam does not support sparse gradients, please consider SparseAdam instead"),
    ("AdamW", {}, "Adam does not support sparse gradients, please consider SparseAdam instead"),
    ("RMSprop", {}, "RMSprop does not support sparse gradients"),
    ("Adafactor", {}, "Adafactor does not support sparse gradients"),
    ("SGD", {"weight_decay": 0.1}, r"add\(sparse, dense\) is not supported. Use add\(dense, sparse\) instead."),
    ("Adagrad", {"weight_decay": 0.1}, "weight_decay option is not compatible with sparse gradients"),
])
def test_optimizers_refuse_sparse_gradients_as_torch(name, kwargs, message):
    e = _embedding()
    opt = getattr(ember.optim, name)(e.parameters(), lr=0.1, **kwargs)
    e(ember.tensor([1])).sum().backward()
    with pytest.raises(RuntimeError, match=message):
        opt.step()


def test_sparse_tensors_save_and_load():
    import io
    e = _embedding()
    opt = ember.optim.SGD(e.parameters(), lr=0.1, momentum=0.9)
    e(ember.tensor([1, 3, 1])).sum().backward()
    opt.step()
    csr = ember.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr()
    buf = io.BytesIO()
    ember.save({"opt": opt.state_dict(), "csr": csr}, buf)
    back = ember.load(io.BytesIO(buf.getvalue()))
    m = back["opt"]["state"][0]["momentum_buffer"]
    assert m.is_sparse and m._nnz() == 3 and not m.is_coalesced()
    np.testing.assert_array_equal(m.to_dense().numpy(), opt.state[e.weight]["momentum_buffer"].to_dense().numpy())
    assert back["csr"].is_sparse_csr
    np.testing.assert_array_equal(back["csr"].to_dense().numpy(), [[0, 1], [2, 0]])
