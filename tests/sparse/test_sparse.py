"""ember.sparse (NOTE [ Sparse tensors ]): COO and CSR matrices, their products with dense ones and gradients."""
import numpy as np
import pytest

import ember

I = [[0, 1, 1, 2], [2, 0, 2, 1]]
V = [3.0, 4.0, 5.0, 6.0]
DENSE = np.array([[0, 0, 3], [4, 0, 5], [0, 6, 0]], dtype=np.float32)


def test_creation_and_parts():
    s = ember.sparse_coo_tensor(I, V, (3, 3))
    assert s.is_sparse and not s.is_sparse_csr and s.layout == ember.sparse_coo
    assert tuple(s.shape) == (3, 3) and s.dim() == 2 and s.dtype == ember.float32 and s._nnz() == 4
    assert isinstance(s, ember.Tensor)
    np.testing.assert_array_equal(s.to_dense().numpy(), DENSE)
    np.testing.assert_array_equal(s._indices().numpy(), I)
    inferred = ember.sparse_coo_tensor(I, V)
    assert tuple(inferred.shape) == (3, 3)
    with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 2 but found "
                                           "index 2"):
        ember.sparse_coo_tensor(I, V, (2, 3))
    with pytest.raises(RuntimeError, match="indices and values must have same nnz"):
        ember.sparse_coo_tensor(I, V[:3], (3, 3))


def test_coalesce_sums_duplicates_and_sorts():
    s = ember.sparse_coo_tensor([[1, 0, 1], [0, 1, 0]], [1.0, 2.0, 3.0], (2, 2))
    assert not s.is_coalesced()
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
        s.indices()
    c = s.coalesce()
    assert c.is_coalesced()
    np.testing.assert_array_equal(c.indices().numpy(), [[0, 1], [1, 0]])
    np.testing.assert_array_equal(c.values().numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(s.to_dense().numpy(), [[0, 2], [4, 0]])


def test_products_and_their_gradients():
    v = ember.tensor(V, requires_grad=True)
    s = ember.sparse_coo_tensor(I, v, (3, 3))
    d = ember.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    out = ember.sparse.mm(s, d)
    np.testing.assert_allclose(out.detach().numpy(), DENSE @ np.arange(6.0).reshape(3, 2))
    (out * ember.tensor([[1.0, 2.0]])).sum().backward()
    # d(out)/d(v_k) for entry (r, c): sum_j w_j * d[c, j]; d(out)/d(d) = S^T @ w
    dn = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(v.grad.numpy(), [dn[c] @ [1, 2] for c in I[1]])
    np.testing.assert_allclose(d.grad.numpy(), DENSE.T @ np.ones((3, 1)) @ [[1.0, 2.0]])
    for product in (lambda a, b: a @ b, ember.mm, ember.matmul, ember.spmm, lambda a, b: a.mm(b)):
        np.testing.assert_allclose(product(s, d).detach().numpy(), DENSE @ dn)
    np.testing.assert_allclose((d.t() @ s).detach().numpy(), dn.T @ DENSE)  # dense @ sparse
    np.testing.assert_allclose(ember.sparse.addmm(ember.ones(3, 2), s, d, beta=2.0, alpha=0.5).detach().numpy(),
                               2 + 0.5 * DENSE @ dn)
    ss = ember.sparse.mm(s, s)
    assert ss.is_sparse
    np.testing.assert_allclose(ss.to_dense().detach().numpy(), DENSE @ DENSE)


def test_sparse_leaf_gets_a_sparse_gradient():
    s = ember.sparse_coo_tensor(I, V, (3, 3), requires_grad=True)
    assert s.requires_grad and s.is_leaf
    ember.sparse.mm(s, ember.ones(3, 1)).sum().backward()
    assert s.grad.is_sparse
    np.testing.assert_array_equal(s.grad.to_dense().numpy(), (DENSE != 0).astype(np.float32))


def test_dense_to_sparse_and_back_is_differentiable():
    x = ember.tensor(DENSE, requires_grad=True)
    s = x.to_sparse()
    assert s._nnz() == 4 and s.is_coalesced()
    (s.to_dense() * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * (DENSE != 0))
    csr = x.detach().to_sparse_csr()
    assert csr.layout == ember.sparse_csr and csr.is_sparse_csr and not csr.is_sparse
    np.testing.assert_array_equal(csr.crow_indices().numpy(), [0, 1, 3, 4])
    np.testing.assert_array_equal(csr.col_indices().numpy(), [2, 0, 2, 1])
    np.testing.assert_array_equal(csr.to_dense().numpy(), DENSE)
    built = ember.sparse_csr_tensor([0, 1, 3, 4], [2, 0, 2, 1], V, (3, 3))
    np.testing.assert_allclose((built @ ember.eye(3)).numpy(), DENSE)


def test_sums_scaling_and_adding():
    s = ember.sparse_coo_tensor(I, V, (3, 3))
    assert float(ember.sparse.sum(s)) == 18.0
    np.testing.assert_array_equal(ember.sparse.sum(s, 0).to_dense().numpy(), DENSE.sum(0))
    np.testing.assert_array_equal((s * 2).to_dense().numpy(), 2 * DENSE)
    np.testing.assert_array_equal((s + s).to_dense().numpy(), 2 * DENSE)
    np.testing.assert_array_equal((s + ember.ones(3, 3)).numpy(), DENSE + 1)
    np.testing.assert_array_equal(s.t().to_dense().numpy(), DENSE.T)


def test_dense_ops_on_a_sparse_tensor_raise_instead_of_guessing():
    s = ember.sparse_coo_tensor(I, V, (3, 3))
    with pytest.raises(NotImplementedError, match="no sparse_coo implementation in ember.*to_dense"):
        s.exp()
    with pytest.raises(NotImplementedError, match="to_dense"):
        s + 1
    with pytest.raises(NotImplementedError, match="to_dense"):
        ember.relu(s)


def test_hybrid_tensors_keep_dense_trailing_dims():
    x = ember.tensor([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [[2.0, 3.0], [0.0, 0.0]]])
    s = x.to_sparse(1)
    assert s.sparse_dim() == 1 and s.dense_dim() == 2 and s._nnz() == 2
    np.testing.assert_array_equal(s.indices().numpy(), [[0, 2]])
    np.testing.assert_array_equal(s.to_dense().numpy(), x.numpy())
    h = ember.sparse_coo_tensor([[0, 2, 0]], ember.ones(3, 2), (3, 2))
    np.testing.assert_array_equal(h.coalesce().values().numpy(), [[2, 2], [1, 1]])
    with pytest.raises(NotImplementedError, match="hybrid"):
        ember.sparse.mm(h, ember.ones(2, 2))


# ----- sparse gradients: Embedding(sparse=True) -----

def _lookup():
    w = ember.tensor(np.arange(15.0).reshape(5, 3), requires_grad=True)
    idx = ember.tensor([[1, 2, 1], [4, 0, 1]])
    return w, idx


def test_embedding_sparse_gradient_holds_one_entry_per_lookup():
    w, idx = _lookup()
    (ember.nn.functional.embedding(idx, w, sparse=True) * 2).sum().backward()
    g = w.grad
    assert g.is_sparse and tuple(g.shape) == (5, 3) and not g.is_coalesced()
    np.testing.assert_array_equal(g._indices().numpy(), [[1, 2, 1, 4, 0, 1]])
    np.testing.assert_array_equal(g._values().numpy(), np.full((6, 3), 2.0))
    dense = np.zeros((5, 3))
    np.add.at(dense, [1, 2, 1, 4, 0, 1], 2.0)
    np.testing.assert_array_equal(g.to_dense().numpy(), dense)
    np.testing.assert_array_equal(g.coalesce().indices().numpy(), [[0, 1, 2, 4]])


def test_embedding_sparse_gradient_leaves_out_padding_and_accumulates():
    w, idx = _lookup()
    emb = ember.nn.Embedding(5, 3, padding_idx=0, sparse=True)
    emb(idx).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad._indices().numpy(), [[1, 2, 1, 4, 1]])
    emb(idx).sum().backward()  # sparse + sparse: the entries concatenated, as torch
    assert emb.weight.grad._nnz() == 10 and not emb.weight.grad.is_coalesced()
    np.testing.assert_array_equal(emb.weight.grad.to_dense().numpy()[:, 0], [0, 6, 2, 0, 2])
    w.grad = ember.zeros(5, 3, dtype=ember.float64)  # a dense .grad takes the sparse gradient in: stays dense
    ember.nn.functional.embedding(idx, w, sparse=True).sum().backward()
    assert w.grad.layout == ember.strided
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [1, 3, 1, 0, 1])


def test_embedding_sparse_gradient_through_autograd_grad_and_errors():
    w, idx = _lookup()
    out = ember.nn.functional.embedding(idx, w, sparse=True)
    g, = ember.autograd.grad((out ** 2).sum(), w)
    assert g.is_sparse
    np.testing.assert_allclose(g.to_dense().numpy(), ember.autograd.grad(
        (ember.nn.functional.embedding(idx, w) ** 2).sum(), w)[0].numpy())
    with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
        ember.nn.functional.embedding(idx, w, sparse=True, scale_grad_by_freq=True)


def test_grad_with_respect_to_a_sparse_tensor_is_sparse():
    s = ember.sparse_coo_tensor(I, V, (3, 3), requires_grad=True)
    m = ember.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    g, = ember.autograd.grad(ember.sparse.mm(s, m).sum(), s)
    assert g.is_sparse and tuple(g.shape) == (3, 3)
    np.testing.assert_array_equal(g._indices().numpy(), I)
    np.testing.assert_array_equal(g._values().numpy(), m.numpy().sum(1)[I[1]])  # d(sum A m)/dA_ij = sum_k m_jk


def test_sparse_zero_and_sums():
    s = ember.sparse_coo_tensor(I, V, (3, 3)).coalesce()
    both = s + s
    assert both.is_coalesced() and both._nnz() == 4  # coalesced + coalesced stays coalesced, as torch
    loose = ember.sparse_coo_tensor([[0, 0], [1, 1]], [1.0, 2.0], (3, 3))
    assert (loose + s)._nnz() == 6 and not (loose + s).is_coalesced()
    s.zero_()
    assert s._nnz() == 0
    np.testing.assert_array_equal(s.to_dense().numpy(), np.zeros((3, 3)))


# ----- sampled_addmm and mm with reduce -----

def test_sampled_addmm_values_and_gradients():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    csr = ember.tensor(DENSE.astype(np.float64)).to_sparse_csr().requires_grad_()
    m1, m2 = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    r = ember.sparse.sampled_addmm(csr, m1, m2, beta=0.5, alpha=2.0)
    assert r.is_sparse_csr
    want = (2.0 * (a @ b) + 0.5 * DENSE) * (DENSE != 0)
    np.testing.assert_allclose(r.to_dense().detach().numpy(), want)
    w = rng.standard_normal((3, 3))
    ember.autograd.gradcheck(lambda x, y: ember.sparse.sampled_addmm(csr.detach(), x, y).to_dense() *
                             ember.tensor(w), (m1, m2))
    g, = ember.autograd.grad((r.to_dense() * ember.tensor(w)).sum(), csr)
    np.testing.assert_allclose(g.to_dense().numpy(), 0.5 * w * (DENSE != 0))
    with pytest.raises(RuntimeError, match="Expected input to be a sparse CSR tensor"):
        ember.sparse.sampled_addmm(ember.tensor(DENSE), m1, m2)
    with pytest.raises(RuntimeError, match=r"cannot hold mat1 @ mat2 of sizes \[3, 4\] and \[3, 4\]"):
        ember.sparse.sampled_addmm(csr, m1, m1)


@pytest.mark.parametrize("reduce, combine", [("mean", np.mean), ("amax", np.max), ("amin", np.min)])
def test_mm_reduce_combines_each_rows_products(reduce, combine):
    csr = ember.tensor(DENSE).to_sparse_csr()
    m = np.arange(6.0, dtype=np.float32).reshape(3, 2) - 2
    got = ember.sparse.mm(csr, ember.tensor(m), reduce).numpy()
    for r in range(3):
        cols = np.nonzero(DENSE[r])[0]
        np.testing.assert_allclose(got[r], combine(DENSE[r, cols, None] * m[cols], 0))
    with pytest.raises(RuntimeError, match="reduce argument must be either sum, mean, amax or amin, got prod"):
        ember.sparse.mm(csr, ember.tensor(m), "prod")
