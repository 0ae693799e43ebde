"""Composite ops built from differentiable primitives: diff and the trapezoid rules (scan.py), cartesian_prod,
combinations, block_diag and vander (join.py), cov and corrcoef (stats.py), dist and renorm (norms.py)."""
import itertools

import numpy as np
import pytest

import ember
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _x(*shape):
    return lambda rng: [rng.standard_normal(shape)]


def _np_renorm(a, p, dim, maxnorm):
    axes = tuple(d for d in range(a.ndim) if d != dim)
    n = (np.abs(a) ** p).sum(axis=axes, keepdims=True) ** (1 / p)
    return a * np.where(n > maxnorm, maxnorm / (n + 1e-7), 1.0)


def _np_block_diag(*arrays):
    h, w = sum(a.shape[0] for a in arrays), sum(a.shape[1] for a in arrays)
    out, r, c = np.zeros((h, w)), 0, 0
    for a in arrays:
        out[r:r + a.shape[0], c:c + a.shape[1]] = a
        r, c = r + a.shape[0], c + a.shape[1]
    return out


SPECS = [
    OpSpec("diff", lambda x: ember.diff(x), lambda a: np.diff(a), _x(3, 5), gradgrad=True),
    OpSpec("diff_n2_dim0", lambda x: ember.diff(x, n=2, dim=0), lambda a: np.diff(a, n=2, axis=0), _x(4, 3)),
    OpSpec("diff_prepend_append", lambda x, p, q: ember.diff(x, prepend=p, append=q),
           lambda a, p, q: np.diff(a, prepend=p, append=q), lambda rng: [rng.standard_normal((2, 3)),
                                                                         rng.standard_normal((2, 1)),
                                                                         rng.standard_normal((2, 2))]),
    OpSpec("trapezoid", lambda y: ember.trapezoid(y), lambda a: np.trapezoid(a), _x(3, 5), gradgrad=True),
    OpSpec("trapezoid_dx", lambda y: ember.trapezoid(y, dx=0.5, dim=0), lambda a: np.trapezoid(a, dx=0.5, axis=0),
           _x(4, 3)),
    OpSpec("trapezoid_x", lambda y, x: ember.trapezoid(y, x), lambda a, x: np.trapezoid(a, x),
           lambda rng: [rng.standard_normal((2, 4)), np.sort(rng.standard_normal(4))]),
    OpSpec("trapz_x_dim0", lambda y, x: ember.trapz(y, x, dim=0), lambda a, x: np.trapezoid(a, x, axis=0),
           lambda rng: [rng.standard_normal((4, 2)), np.sort(rng.standard_normal(4))]),
    OpSpec("cumulative_trapezoid", lambda y: ember.cumulative_trapezoid(y, dx=2.0),
           lambda a: np.cumsum((a[..., 1:] + a[..., :-1]) / 2 * 2.0, axis=-1), _x(2, 5)),
    OpSpec("cartesian_prod", lambda a, b: ember.cartesian_prod(a, b),
           lambda a, b: np.array(list(itertools.product(a, b))), lambda rng: [rng.standard_normal(2),
                                                                              rng.standard_normal(3)]),
    OpSpec("combinations", lambda a: ember.combinations(a, 3),
           lambda a: np.array(list(itertools.combinations(a, 3))), _x(4)),
    OpSpec("combinations_with_replacement", lambda a: ember.combinations(a, with_replacement=True),
           lambda a: np.array(list(itertools.combinations_with_replacement(a, 2))), _x(3)),
    OpSpec("block_diag", lambda a, b: ember.block_diag(a, b), _np_block_diag,
           lambda rng: [rng.standard_normal((2, 3)), rng.standard_normal((1, 2))], gradgrad=True),
    OpSpec("vander", lambda x: ember.vander(x), lambda a: np.vander(a), _x(4), gradgrad=True),
    OpSpec("vander_increasing", lambda x: ember.vander(x, 3, increasing=True),
           lambda a: np.vander(a, 3, increasing=True), _x(4)),
    OpSpec("cov", lambda x: ember.cov(x), lambda a: np.cov(a), _x(3, 6), gradgrad=True),
    OpSpec("cov_correction0", lambda x: ember.cov(x, correction=0), lambda a: np.cov(a, ddof=0), _x(2, 5)),
    OpSpec("cov_1d", lambda x: ember.cov(x), lambda a: np.cov(a), _x(5)),
    OpSpec("cov_aweights", lambda x, w: ember.cov(x, aweights=w), lambda a, w: np.cov(a, aweights=w),
           lambda rng: [rng.standard_normal((2, 5)), rng.uniform(0.5, 2, 5)], nondiff=(1,)),
    OpSpec("corrcoef", lambda x: ember.corrcoef(x), lambda a: np.corrcoef(a), _x(3, 6)),
    OpSpec("dist", lambda a, b: ember.dist(a, b), lambda a, b: np.linalg.norm((a - b).ravel()),
           lambda rng: [rng.standard_normal((2, 3)), rng.standard_normal(3)], gradgrad=True),
    OpSpec("dist_p1", lambda a, b: ember.dist(a, b, 1), lambda a, b: np.abs(a - b).sum(),
           lambda rng: [rng.standard_normal(4), rng.standard_normal(4)]),
    OpSpec("renorm", lambda x: ember.renorm(x, 2, 0, 1.0), lambda a: _np_renorm(a, 2, 0, 1.0),
           lambda rng: [rng.standard_normal((3, 4)) * 2]),
    OpSpec("renorm_dim1_p1", lambda x: x.renorm(1, 1, 1.5), lambda a: _np_renorm(a, 1, 1, 1.5),
           lambda rng: [rng.standard_normal((3, 4)) * 2]),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_grad(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgrad(spec):
    check_gradgrad(spec)


def test_diff_dtypes_and_errors():
    assert ember.diff(ember.tensor([True, False, False])).tolist() == [True, False]  # xor, as in torch
    assert ember.diff(ember.tensor([1, 4, 9, 16]), n=2).tolist() == [2, 2]
    assert ember.diff(ember.tensor([1, 4]), n=5).shape == (0,)
    assert ember.tensor([1, 3]).diff().dtype is ember.int64
    with pytest.raises(RuntimeError, match="diff expects input to be at least one-dimensional"):
        ember.diff(ember.tensor(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        ember.diff(ember.ones(3), n=-1)
    with pytest.raises(RuntimeError, match="diff expects prepend or append to be the same dimension as input"):
        ember.diff(ember.ones(2, 3), append=ember.zeros(3))


def test_trapezoid_integer_input_and_empty():
    r = ember.trapz(ember.tensor([1, 2, 3]))
    assert r.dtype is ember.float32 and r.item() == 4.0
    assert ember.trapezoid(ember.tensor([])).item() == 0.0
    assert ember.trapezoid(ember.tensor([2.0])).item() == 0.0
    assert ember.cumulative_trapezoid(ember.tensor([1.0])).shape == (0,)
    with pytest.raises(RuntimeError, match="There must be one `x` value for each sample point"):
        ember.trapezoid(ember.ones(3), ember.ones(2))
    assert not hasattr(ember.Tensor, "trapezoid")  # functions only, as in torch


def test_join_composites_shapes_dtypes_and_errors():
    assert ember.cartesian_prod(ember.tensor([1, 2])).tolist() == [1, 2]
    assert ember.cartesian_prod(ember.tensor([1]), ember.tensor([2]), ember.tensor([3, 4])).tolist() == \
        [[1, 2, 3], [1, 2, 4]]
    with pytest.raises(RuntimeError, match="Expect a 1D vector"):
        ember.cartesian_prod(ember.ones(2, 2))
    assert ember.combinations(ember.tensor([1, 2]), r=0).shape == (0,)
    assert ember.combinations(ember.tensor([1, 2]), r=3).shape == (0, 3)
    b = ember.block_diag(ember.tensor(3), ember.ones(2, 1, dtype=ember.int32), ember.tensor([1.0, 2.0]))
    assert b.dtype is ember.float32 and b.tolist() == [[3, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 2]]
    assert ember.block_diag().shape == (1, 0)
    with pytest.raises(RuntimeError, match="Input 0 has 3 dimensions"):
        ember.block_diag(ember.ones(1, 1, 1))
    v = ember.vander(ember.tensor([1, 2, 3], dtype=ember.int32))
    assert v.dtype is ember.int64 and v.tolist() == [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    x = ember.tensor([0.0, 2.0], requires_grad=True)
    ember.vander(x, 3).sum().backward()  # finite at 0: x**k is built by cumprod
    assert x.grad.tolist() == [1.0, 5.0]
    assert [t.tolist() for t in ember.split_with_sizes(ember.arange(5), [2, 3])] == [[0, 1], [2, 3, 4]]
    assert [t.tolist() for t in ember.arange(4).unsafe_chunk(2)] == [[0, 1], [2, 3]]
    assert [t.tolist() for t in ember.unsafe_split(ember.arange(3), 2)] == [[0, 1], [2]]


def test_cov_weights_and_corrcoef_edge_cases():
    x = ember.tensor([[1.0, 2, 4], [0, 1, 1]])
    fw, aw = ember.tensor([1, 3, 2]), ember.tensor([0.2, 1.0, 0.7])
    expected = np.cov(x.numpy(), fweights=fw.numpy(), aweights=aw.numpy())
    assert_close(ember.cov(x, fweights=fw, aweights=aw), expected)
    assert ember.cov(ember.tensor([1, 2, 4])).dtype is ember.float32
    with pytest.raises(RuntimeError, match="expected fweights to have integral dtype"):
        ember.cov(x, fweights=ember.ones(3))
    with pytest.raises(RuntimeError, match="fweights cannot be negative"):
        ember.cov(x, fweights=ember.tensor([1, -1, 1]))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        assert ember.cov(ember.tensor([1.0])).isnan().item()
    assert ember.corrcoef(ember.tensor([1.0, 2, 3])).item() == 1.0
    c = ember.corrcoef(ember.tensor([[1.0, 2, 3], [3, 2, 1]]))
    assert c.tolist() == [[1.0, -1.0], [-1.0, 1.0]]


def test_dist_and_renorm_errors():
    assert ember.dist(ember.tensor([1.0, 5.0]), ember.tensor([0.0, 1.0]), float("inf")).item() == 4.0
    with pytest.raises(RuntimeError, match="renorm: input needs at least 2 dimensions, got 1 dimensions"):
        ember.renorm(ember.ones(3), 2, 0, 1.0)
    x = ember.tensor([[3.0, 4.0], [0.3, 0.4]])
    x.renorm_(2, 0, 1.0)
    assert_close(x, [[0.6, 0.8], [0.3, 0.4]], atol=1e-6)


def test_non_tensor_arguments_raise_type_error():
    for fn in (ember.block_diag, ember.cartesian_prod):
        with pytest.raises(TypeError, match="expected Tensor as element 0 in argument 0, but got list"):
            fn([ember.ones(1)])


def test_opdb_gaps_take_along_dim_diff_tensordot_imag():
    x = ember.arange(6.0).view(2, 3)
    assert ember.take_along_dim(x, ember.tensor([[-1], [0]]), 1).tolist() == [[2.0], [3.0]]
    assert ember.take_along_dim(x, ember.tensor([-1])).tolist() == [5.0]
    assert ember.diff(ember.arange(3.0), n=0, prepend=ember.tensor([9.0])).tolist() == [0.0, 1.0, 2.0]
    assert ember.tensordot(ember.ones(2, 1), ember.ones(3, 2), dims=([1], [0])).tolist() == [[3.0, 3.0]] * 2
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        ember.tensordot(ember.ones(2, 2), ember.ones(3, 2), dims=([1], [0]))
    z = ember.zeros(0, dtype=ember.complex128, requires_grad=True)
    z.imag.sum().backward()
    assert z.grad.shape == (0,) and z.grad.dtype == ember.complex128


def test_division_operator_aliases_memory_format_casts_empty_permuted_nonzero_static():
    t = ember.tensor([2.0])
    assert t.__rdiv__(4).tolist() == [2.0] and t.__div__(4).tolist() == [0.5]
    t.__idiv__(2)
    assert t.tolist() == [1.0]
    assert ember.ones(2, 3, 4, 5).float(memory_format=ember.channels_last).stride() == (60, 1, 15, 3)
    assert ember.ones(2).double(memory_format=ember.preserve_format).dtype == ember.float64
    e = ember.empty_permuted((2, 3, 4), (0, 2, 1), dtype=ember.float64, requires_grad=True)
    assert e.shape == (2, 3, 4) and e.stride() == (12, 1, 3) and e.is_leaf and e.requires_grad
    with pytest.raises(RuntimeError, match="len\\(size\\) = 3 is not equal to len\\(physical_layout\\) = 2"):
        ember.empty_permuted((2, 3, 4), (0, 1))
    assert ember.nonzero_static(ember.tensor([0, 1, 1]), size=3).tolist() == [[1], [2], [-1]]
    assert ember.tensor([[0, 1], [1, 1]]).nonzero_static(size=2).tolist() == [[0, 1], [1, 0]]
    assert ember.nonzero_static(ember.tensor([0, 1]), size=3, fill_value=7).tolist() == [[1], [7], [7]]
    assert ember.nonzero_static(ember.tensor(3), size=2).shape == (2, 0)


# ---------------- gradient ----------------

@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(edge_order):
    f = np.random.default_rng(4).standard_normal((5, 6))
    t = ember.tensor(f)
    for kw, args in (({}, {}), ({"spacing": 2.0}, {"varargs": (2.0, 2.0)}),
                     ({"spacing": [0.5, 3.0]}, {"varargs": (0.5, 3.0)})):
        got = ember.gradient(t, edge_order=edge_order, **kw)
        want = np.gradient(f, *args.get("varargs", ()), edge_order=edge_order)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-10, atol=1e-12)
    xs = np.array([0.0, 0.5, 2.0, 2.5, 4.0, 7.0])
    (got,) = ember.gradient(t, spacing=(ember.tensor(xs),), dim=1, edge_order=edge_order)
    np.testing.assert_allclose(got.numpy(), np.gradient(f, xs, axis=1, edge_order=edge_order), rtol=1e-10)
    tg = t.clone().requires_grad_()
    assert ember.autograd.gradcheck(lambda u: ember.gradient(u, spacing=(ember.tensor(xs),), dim=-1,
                                                             edge_order=edge_order), (tg,))


def test_gradient_errors_and_integers():
    (g,) = ember.gradient(ember.tensor([1, 4, 9, 16]))
    assert g.dtype == ember.float32
    np.testing.assert_array_equal(g.numpy(), [3.0, 4.0, 6.0, 7.0])
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        ember.gradient(ember.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        ember.gradient(ember.tensor([1.0, 2.0, 3.0]), edge_order=3)
