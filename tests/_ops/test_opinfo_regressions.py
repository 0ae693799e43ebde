"""Behaviours that PyTorch's OpInfo database (tests/compat/test_opinfo_compat.py) found missing, pinned here so that
they are tested without torch too: empty tensors, empty indices of any dtype, graphs through degenerate cases, and
reflected operators called with a tensor."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("shape, dim", [((0,), 0), ((2, 0), 1), ((0, 3), 0), ((3, 0, 2), 1)])
@pytest.mark.parametrize("fn", [ember.softmax, ember.log_softmax, ember.nn.functional.softmin])
def test_softmax_family_on_empty_tensors(fn, shape, dim):
    x = ember.zeros(shape, dtype=ember.float64, requires_grad=True)
    y = fn(x, dim)
    assert y.shape == shape
    y.sum().backward()
    assert x.grad.shape == shape


def test_unique_consecutive_along_a_dim_with_an_empty_size():
    x = ember.zeros(5, 0, 5)
    assert ember.unique_consecutive(x, dim=1).shape == (5, 0, 5)
    out, counts = ember.unique_consecutive(x, dim=0, return_counts=True)
    assert out.shape == (1, 0, 5) and counts.tolist() == [5]  # empty rows are all equal


def test_searchsorted_on_empty_batches_with_a_sorter():
    seq = ember.zeros(0, 0)
    r = ember.searchsorted(seq, ember.zeros(0, 0), sorter=ember.zeros(0, 0, dtype=ember.int64))
    assert r.shape == (0, 0) and r.dtype is ember.int64
    r = ember.searchsorted(ember.zeros(0, 3), ember.zeros(0, 2))
    assert r.shape == (0, 2)


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 3)])
@pytest.mark.parametrize("ord", [1, float("inf"), 2, "fro", "nuc"])
def test_matrix_norms_of_empty_matrices_are_zero(shape, ord):
    x = ember.zeros(shape, dtype=ember.float64, requires_grad=True)
    r = ember.linalg.matrix_norm(x, ord)
    np.testing.assert_array_equal(r.detach().numpy(), np.zeros(shape[:-2]))
    r.sum().backward()
    assert x.grad.shape == shape


def test_empty_gather_and_scatter_indices_of_any_dtype():
    x = ember.arange(5.0)
    empty = ember.zeros(0, dtype=ember.uint8)
    assert ember.gather(x, 0, empty).shape == (0,)
    np.testing.assert_array_equal(ember.scatter(x, 0, empty, ember.zeros(0)).numpy(), x.numpy())
    np.testing.assert_array_equal(ember.scatter_add(x, 0, empty, ember.zeros(0)).numpy(), x.numpy())
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int32/int64 for index"):
        ember.gather(x, 0, ember.zeros(1, dtype=ember.uint8))
    with pytest.raises(RuntimeError, match=r"index_add_\(\): Expected dtype int32/int64 for index"):
        x.index_add(0, empty, ember.zeros(0))  # torch checks index_* dtypes even when empty


def test_cat_of_empty_tensors_stays_in_the_graph():
    a = ember.tensor([], dtype=ember.float64, requires_grad=True)
    r = ember.cat([a, a])
    assert r.shape == (0,) and r.requires_grad and r is not a
    r.sum().backward()
    assert a.grad.shape == (0,)
    assert ember.cat([a, ember.tensor([], dtype=ember.float32)]).dtype is ember.float64


def test_matrix_power_zero_is_an_exact_identity_in_the_graph():
    x = ember.tensor([[np.inf, 2.0], [3.0, np.nan]], dtype=ember.float64, requires_grad=True)
    r = ember.linalg.matrix_power(x, 0)
    np.testing.assert_array_equal(r.detach().numpy(), np.eye(2))  # not inf * 0
    assert r.requires_grad
    r.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 2)))
    assert not ember.linalg.matrix_power(ember.eye(2), 0).requires_grad


def test_reflected_operators_take_a_tensor_on_the_other_side():
    a, b = ember.tensor([5.0, 7.0]), ember.tensor([2.0, 3.0])
    np.testing.assert_array_equal(a.__rsub__(b).numpy(), [-3.0, -4.0])
    np.testing.assert_allclose(a.__rdiv__(b).numpy(), [0.4, 3 / 7])
    np.testing.assert_allclose(a.__rtruediv__(b).numpy(), [0.4, 3 / 7])
    np.testing.assert_array_equal(a.__rmod__(b).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(a.__rpow__(b).numpy(), [32.0, 2187.0])
    np.testing.assert_array_equal(a.__rfloordiv__(b).numpy(), [0.0, 0.0])
    np.testing.assert_array_equal((2 - a).numpy(), [-3.0, -5.0])  # the scalar forms as before
    np.testing.assert_array_equal((2 % a).numpy(), [2.0, 2.0])


def test_frexp_mantissa_is_differentiable():
    x = ember.tensor([3.0, -0.3, 0.0, 8.0], dtype=ember.float64, requires_grad=True)
    m, e = ember.frexp(x)
    np.testing.assert_array_equal(m.detach().numpy(), [0.75, -0.6, 0.0, 0.5])
    assert e.dtype is ember.int32 and not e.requires_grad
    m.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.25, 2.0, 1.0, 0.0625])  # 2**-exponent
    assert ember.autograd.gradcheck(lambda t: ember.frexp(t)[0],
                                    (ember.tensor([3.0, -0.3, 5.5], dtype=ember.float64, requires_grad=True),))
    m0, e0 = ember.frexp(ember.tensor(12.0, dtype=ember.float64, requires_grad=True))
    assert m0.shape == () and m0.item() == 0.75 and e0.item() == 4
    m0.backward()


@pytest.mark.parametrize("n", [0, 1])
def test_pdist_of_fewer_than_two_rows_is_empty_and_in_the_graph(n):
    x = ember.randn(n, 3, dtype=ember.float64, requires_grad=True)
    r = ember.nn.functional.pdist(x)
    assert r.shape == (0,) and r.requires_grad
    r.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((n, 3)))


def test_gather_with_an_empty_index_of_another_rank():
    x = ember.arange(5.0, requires_grad=True)
    r = ember.gather(x, 0, ember.zeros(2, 0, dtype=ember.uint8))
    assert r.shape == (2, 0) and r.requires_grad
    r.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(5))
    with pytest.raises(RuntimeError, match="Index tensor must have the same number of dimensions"):
        ember.gather(x, 0, ember.zeros(2, 1, dtype=ember.int64))


@pytest.mark.parametrize("driver, rank_shape, sv_shape", [("gels", (0,), (0,)), ("gelsy", (), (0,)),
                                                          ("gelsd", (), (2,)), ("gelss", (), (2,))])
def test_lstsq_reports_what_each_driver_computes(driver, rank_shape, sv_shape):
    A, B = ember.randn(2, 3, dtype=ember.float64), ember.randn(2, 3, dtype=ember.float64)
    r = ember.linalg.lstsq(A, B, driver=driver)
    assert r.rank.shape == rank_shape and r.rank.dtype is ember.int64
    assert r.singular_values.shape == sv_shape and r.residuals.shape == (0,)
    np.testing.assert_allclose((A @ r.solution).numpy(), B.numpy(), atol=1e-10)  # underdetermined: exact fit


def test_bad_inputs_raise_torchs_exception_types():
    """Cases of PyTorch's error_inputs ember once answered with another exception type or not at all."""
    F = ember.nn.functional
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        F.adaptive_avg_pool2d(ember.ones(2, 2), (2, 2))  # a sequence output_size: torch's Python check
    with pytest.raises(ValueError, match="Input dimension should be at least 4"):
        F.adaptive_max_pool3d(ember.ones(2, 2, 2), (2, 2, 2))
    with pytest.raises(RuntimeError, match="Expected 3D or 4D tensor"):
        F.adaptive_avg_pool2d(ember.ones(2, 2), 2)
    with pytest.raises(RuntimeError, match="Expected bias to be of same shape as normalized_shape"):
        F.layer_norm(ember.ones(1, 2, 3), (1, 2, 3), None, ember.ones(1, 2))
    with pytest.raises(RuntimeError, match="start must be an 0-dim integral Tensor"):
        ember.narrow(ember.ones(4, 5), 1, ember.tensor([1, 2]), 2)
    assert ember.narrow(ember.ones(4, 5), 1, ember.tensor(1), 2).shape == (4, 2)
    with pytest.raises(ValueError, match="weight must be one-dimensional"):
        F.multi_margin_loss(ember.ones(5, 4), ember.zeros(5, dtype=ember.int64), weight=ember.tensor(4.0))
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times"):
        ember.gradient(ember.ones(3, 3), dim=(1, 1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.gradient(ember.ones(3, 3), dim=2)


def test_out_arguments_rejected_as_torch_rejects_them():
    x = ember.arange(6.0)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        ember.gather(x, 0, ember.tensor([0, 1]), out=ember.empty(2, dtype=ember.float64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        ember.aminmax(x, out=(ember.empty((), dtype=ember.float64), ember.empty((), dtype=ember.float64)))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ember.masked_select(x, x > 2, out=ember.zeros(1).expand(3))
    r = ember.take(x, ember.tensor([5, 0]), out=ember.empty(2))
    np.testing.assert_array_equal(r.numpy(), [5.0, 0.0])
    with pytest.raises(RuntimeError, match="unsupported operation"):
        ember.take(x, ember.tensor([1, 2]), out=x[:2])


def test_spectral_norm_shares_its_gradient_among_equal_singular_values():
    x = ember.zeros(4, 4, dtype=ember.float64, requires_grad=True)  # four singular values, all 0: a tie
    ember.linalg.matrix_norm(x, 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(4) / 4)  # torch's amax rule: each gets 1/4
    y = ember.tensor(np.diag([3.0, 1.0, 1.0]), requires_grad=True)
    ember.linalg.matrix_norm(y, -2).backward()
    np.testing.assert_allclose(y.grad.numpy(), np.diag([0.0, 0.5, 0.5]))


def test_cdist_by_products_matches_the_direct_distances():
    # torch's route: one product of padded rows [-2a, |a|^2, 1] . [b, 1, |b|^2]; near-equal rows cancel, so
    # float32 is within sqrt(eps) * |a| of the exact distance
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 3)) * 4
    b = a[[0, 2, 2, 4]] + rng.standard_normal((4, 3)) * 0.05
    exact = np.sqrt(((a[:, None] - b[None]) ** 2).sum(-1))
    for dt, tol in ((ember.float64, 1e-6), (ember.float32, 4e-3 * 4)):
        d = ember.cdist(ember.tensor(a, dtype=dt), ember.tensor(b, dtype=dt), compute_mode="use_mm_for_euclid_dist")
        np.testing.assert_allclose(d.double().numpy(), exact, atol=tol)


def test_gradcheck_takes_empty_inputs():
    x = ember.zeros(0, 2, dtype=ember.float64, requires_grad=True)  # NumPy's strides of an empty array are 0
    assert ember.autograd.gradcheck(lambda t: t * 2, (x,))
