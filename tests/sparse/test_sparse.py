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
