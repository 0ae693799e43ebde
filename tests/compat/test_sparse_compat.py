"""ember.sparse against torch.sparse: values of products, conversions and sums, and the gradients a graph
network's layer needs (dense features and edge weights)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks are implicitly disabled:UserWarning"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state:UserWarning")]


def _graph(lib, seed=0):
    rng = np.random.default_rng(seed)
    n, e = 7, 15
    edges = rng.integers(0, n, (2, e))
    w = lib.tensor(rng.random(e), requires_grad=True)
    x = lib.tensor(rng.standard_normal((n, 4)), requires_grad=True)
    lin = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    return lib.sparse_coo_tensor(lib.tensor(edges), w, (n, n)), w, x, lin


@pytest.mark.parametrize("form", ["sparse.mm", "mm", "matmul", "spmm", "@", "csr", "addmm"])
def test_gcn_layer_values_and_gradients(form):
    res = []
    for lib in (ember, torch):
        adj, w, x, lin = _graph(lib)
        h = x @ lin
        if form == "sparse.mm":
            y = lib.sparse.mm(adj, h)
        elif form == "mm":
            y = lib.mm(adj, h)
        elif form == "matmul":
            y = lib.matmul(adj, h)
        elif form == "spmm":
            y = lib.spmm(adj, h)
        elif form == "@":
            y = adj @ h
        elif form == "csr":
            y = adj.coalesce().to_sparse_csr() @ h
        else:
            y = lib.sparse.addmm(h, adj, h, beta=0.5, alpha=2.0)
        (y.tanh() * lib.arange(y.numel(), dtype=y.dtype).reshape(y.shape)).sum().backward()
        res.append([y.detach().numpy(), x.grad.numpy(), lin.grad.numpy()]
                   + ([] if form == "csr" else [w.grad.numpy()]))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_conversions_and_sums():
    rng = np.random.default_rng(1)
    d = rng.standard_normal((4, 5)) * (rng.random((4, 5)) > 0.6)
    for lib in (ember, torch):
        s = lib.tensor(d).to_sparse()
        assert s.is_sparse and s._nnz() == int((d != 0).sum())
    e, t = ember.tensor(d).to_sparse(), torch.tensor(d).to_sparse()
    np.testing.assert_array_equal(e.indices().numpy(), t.indices().numpy())
    np.testing.assert_array_equal(e.values().numpy(), t.values().numpy())
    ec, tc = ember.tensor(d).to_sparse_csr(), torch.tensor(d).to_sparse_csr()
    np.testing.assert_array_equal(ec.crow_indices().numpy(), tc.crow_indices().numpy())
    np.testing.assert_array_equal(ec.col_indices().numpy(), tc.col_indices().numpy())
    np.testing.assert_allclose(float(ember.sparse.sum(e)), float(torch.sparse.sum(t)))
    np.testing.assert_allclose(ember.sparse.sum(e, 1).to_dense().numpy(), torch.sparse.sum(t, 1).to_dense().numpy())
    dup_i, dup_v = [[1, 0, 1, 1], [0, 1, 0, 2]], [1.0, 2.0, 3.0, 4.0]
    ce = ember.sparse_coo_tensor(dup_i, dup_v, (2, 3)).coalesce()
    ct = torch.sparse_coo_tensor(dup_i, dup_v, (2, 3)).coalesce()
    np.testing.assert_array_equal(ce.indices().numpy(), ct.indices().numpy())
    np.testing.assert_array_equal(ce.values().numpy(), ct.values().numpy())


def test_sparse_leaf_gradient_matches_torch():
    res = []
    for lib in (ember, torch):
        s = lib.sparse_coo_tensor([[0, 1, 2], [2, 0, 1]], [1.0, 2.0, 3.0], (3, 3), requires_grad=True)
        lib.sparse.mm(s, lib.ones(3, 2)).pow(2).sum().backward()
        res.append(s.grad.coalesce().to_dense().numpy())
    np.testing.assert_allclose(*res)


@pytest.mark.parametrize("bag", [None, "sum", "mean"])
def test_sparse_embedding_gradients_and_sparse_adam_match_torch(bag):
    runs = []
    for lib in (ember, torch):
        rng = np.random.default_rng(1)
        if bag is None:
            layer = lib.nn.Embedding(12, 3, padding_idx=2, sparse=True, dtype=lib.float64)
        else:
            layer = lib.nn.EmbeddingBag(12, 3, mode=bag, padding_idx=2, sparse=True, dtype=lib.float64)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(rng.standard_normal((12, 3))))
        opt = lib.optim.SparseAdam(layer.parameters(), lr=0.05, betas=(0.8, 0.99))
        grads = []
        for _ in range(4):
            idx = lib.tensor(rng.integers(0, 12, (4, 5)))
            opt.zero_grad()
            (layer(idx) ** 2).sum().backward()
            g = layer.weight.grad
            grads.append((g.is_sparse, g._indices().numpy().copy(), g._values().detach().numpy().copy()))
            opt.step()
        runs.append((grads, layer.weight.detach().numpy().copy(), opt.state_dict()["state"][0]))
    (ge, we, se), (gt, wt, st) = runs
    for (sparse_e, ie, ve), (sparse_t, it, vt) in zip(ge, gt):
        assert sparse_e and sparse_t
        np.testing.assert_array_equal(ie, it)
        np.testing.assert_allclose(ve, vt, rtol=1e-12)
    np.testing.assert_allclose(we, wt, rtol=1e-12)
    assert se["step"] == st["step"] == 4
    np.testing.assert_allclose(se["exp_avg_sq"].numpy(), st["exp_avg_sq"].numpy(), rtol=1e-12)


def test_sampled_addmm_and_mm_reduce_match_torch():
    rng = np.random.default_rng(2)
    dense = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.5)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    m = rng.standard_normal((5, 2))
    out = []
    for lib in (ember, torch):
        csr = lib.tensor(dense).to_sparse_csr()
        r = lib.sparse.sampled_addmm(csr, lib.tensor(a), lib.tensor(b), beta=0.3, alpha=1.7)
        out.append([r.to_dense().numpy()] + [lib.sparse.mm(csr, lib.tensor(m), k).numpy()
                                             for k in ("sum", "mean", "amax", "amin")])
    for e, t in zip(*out):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name, kwargs", [("SGD", {}), ("SGD", {"momentum": 0.9, "nesterov": True}),
                                          ("SGD", {"momentum": 0.5, "dampening": 0.3, "maximize": True}),
                                          ("Adagrad", {"lr_decay": 0.1}), ("LBFGS", {})])
def test_optimizers_on_sparse_gradients_match_torch(name, kwargs):
    weights = []
    for lib in (ember, torch):
        rng = np.random.default_rng(0)
        e = lib.nn.Embedding(8, 3, sparse=True, dtype=lib.float64)
        with lib.no_grad():
            e.weight.copy_(lib.tensor(rng.standard_normal((8, 3))))
        opt = getattr(lib.optim, name)(e.parameters(), lr=0.1, **kwargs)
        for _ in range(4):
            idx = lib.tensor(rng.integers(0, 8, (2, 3)))
            opt.zero_grad()
            (e(idx) ** 2).sum().backward()
            if name == "LBFGS":
                opt.step(lambda: (e(idx) ** 2).sum())  # noqa: B023 - called within this iteration
            else:
                opt.step()
        weights.append(e.weight.detach().numpy())
    np.testing.assert_allclose(weights[0], weights[1], rtol=1e-12, atol=1e-14)


def test_sparse_tensors_load_across_libraries(tmp_path):
    d = np.array([[0.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    torch.save({"coo": torch.tensor(d).to_sparse(), "csr": torch.tensor(d).to_sparse_csr()}, tmp_path / "t.pt")
    got = ember.load(tmp_path / "t.pt")
    assert got["coo"].is_sparse and got["coo"].is_coalesced() and got["csr"].is_sparse_csr
    for v in got.values():
        np.testing.assert_array_equal(v.to_dense().numpy(), d)
    ember.save({"coo": ember.tensor(d).to_sparse(), "csr": ember.tensor(d).to_sparse_csr()}, tmp_path / "e.pt")
    back = torch.load(tmp_path / "e.pt")
    assert back["coo"].layout == torch.sparse_coo and back["csr"].layout == torch.sparse_csr
    for v in back.values():
        np.testing.assert_array_equal(v.to_dense().numpy(), d)
