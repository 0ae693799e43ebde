"""Top-level linear algebra ops: matmul family, products, einsum, determinants and decompositions."""
import math
import warnings

import numpy as np
import pytest

import ember
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _n(*shape):
    return lambda rng: [rng.standard_normal(s) for s in shape]


def _well(rng, n, batch=()):
    """A well-conditioned square matrix."""
    return rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)


def _np_outer(a, b):
    return np.multiply.outer(a, b)


def _np_kron(a, b):
    return np.kron(a, b)


def _np_cdist(a, b, p):
    d = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == math.inf:
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


def _quiet(fn):
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(*args)
    return run


MATMUL_CASES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)), ((5, 2, 3), (3,)),
                ((3,), (5, 3, 2)), ((2, 1, 4, 3), (1, 6, 3, 2))]

SPECS = [OpSpec(f"matmul_{sa}x{sb}", ember.matmul, np.matmul, _n(sa, sb), gradgrad=True)
         for sa, sb in MATMUL_CASES] + [
    OpSpec("matmul_operator", lambda a, b: a @ b, np.matmul, _n((2, 3), (3, 4))),
    OpSpec("rmatmul_method", lambda a, b: a.__rmatmul__(b), lambda a, b: b @ a, _n((3, 4), (2, 3))),
    OpSpec("mm", ember.mm, np.matmul, _n((2, 3), (3, 4)), gradgrad=True),
    OpSpec("mm_method", lambda a, b: a.mm(b), np.matmul, _n((2, 3), (3, 4))),
    OpSpec("bmm", ember.bmm, np.matmul, _n((2, 2, 3), (2, 3, 4)), gradgrad=True),
    OpSpec("mv", ember.mv, np.matmul, _n((2, 3), (3,)), gradgrad=True),
    OpSpec("dot", ember.dot, np.dot, _n((3,), (3,)), gradgrad=True),
    OpSpec("vdot", ember.vdot, np.vdot, _n((3,), (3,))),
    OpSpec("inner", ember.inner, np.inner, _n((2, 3), (4, 3))),
    OpSpec("inner_vec", ember.inner, np.inner, _n((3,), (3,))),
    OpSpec("outer", ember.outer, _np_outer, _n((3,), (4,))),
    OpSpec("ger", ember.ger, _np_outer, _n((3,), (4,))),
    OpSpec("addmm", lambda c, a, b: ember.addmm(c, a, b, beta=0.5, alpha=2.0),
           lambda c, a, b: 0.5 * c + 2 * a @ b, _n((4,), (2, 3), (3, 4)), gradgrad=True),
    OpSpec("addmm_beta0", lambda c, a, b: ember.addmm(c, a, b, beta=0), lambda c, a, b: a @ b,
           _n((2, 4), (2, 3), (3, 4))),
    OpSpec("addmv", lambda c, a, b: ember.addmv(c, a, b, beta=2, alpha=-1), lambda c, a, b: 2 * c - a @ b,
           _n((2,), (2, 3), (3,))),
    OpSpec("addr", lambda c, a, b: ember.addr(c, a, b, alpha=3), lambda c, a, b: c + 3 * np.outer(a, b),
           _n((2, 4), (2,), (4,))),
    OpSpec("addbmm", lambda c, a, b: ember.addbmm(c, a, b, beta=0.3), lambda c, a, b: 0.3 * c + (a @ b).sum(0),
           _n((2, 4), (5, 2, 3), (5, 3, 4))),
    OpSpec("baddbmm", lambda c, a, b: ember.baddbmm(c, a, b, alpha=0.7), lambda c, a, b: c + 0.7 * a @ b,
           _n((1, 4), (5, 2, 3), (5, 3, 4)), gradgrad=True),
    OpSpec("tensordot", ember.tensordot, np.tensordot, _n((2, 3, 4), (3, 4, 5))),
    OpSpec("tensordot_lists", lambda a, b: ember.tensordot(a, b, dims=([0, 2], [1, 0])),
           lambda a, b: np.tensordot(a, b, axes=([0, 2], [1, 0])), _n((2, 3, 4), (4, 2))),
    OpSpec("tensordot_0", lambda a, b: ember.tensordot(a, b, dims=0), lambda a, b: np.tensordot(a, b, 0),
           _n((2, 3), (4,))),
    OpSpec("kron", ember.kron, _np_kron, _n((2, 3), (3, 2))),
    OpSpec("kron_nd", ember.kron, _np_kron, _n((2,), (3, 2, 2))),
    OpSpec("cross", lambda a, b: ember.cross(a, b, dim=0), lambda a, b: np.cross(a, b, axis=0),
           _n((3, 4), (3, 4)), gradgrad=True),
    OpSpec("trace", ember.trace, np.trace, _n((3, 4))),
    OpSpec("cdist", ember.cdist, lambda a, b: _np_cdist(a, b, 2), _n((4, 3), (5, 3)), gradgrad=True),
    OpSpec("cdist_mm", ember.cdist, lambda a, b: _np_cdist(a, b, 2), _n((30, 3), (2, 3)), atol=1e-5),
    OpSpec("cdist_batch", ember.cdist, lambda a, b: _np_cdist(a, b, 2), _n((2, 4, 3), (1, 5, 3))),
    OpSpec("cdist_p1", lambda a, b: ember.cdist(a, b, p=1), lambda a, b: _np_cdist(a, b, 1), _n((4, 3), (5, 3))),
    OpSpec("cdist_p3", lambda a, b: ember.cdist(a, b, p=3), lambda a, b: _np_cdist(a, b, 3), _n((4, 3), (5, 3))),
    OpSpec("cdist_inf", lambda a, b: ember.cdist(a, b, p=math.inf), lambda a, b: _np_cdist(a, b, math.inf),
           _n((4, 3), (5, 3))),
    OpSpec("chain_matmul", _quiet(lambda a, b, c: ember.chain_matmul(a, b, c)), lambda a, b, c: a @ b @ c,
           _n((2, 5), (5, 3), (3, 4))),
    OpSpec("matrix_power", lambda a: ember.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3),
           _n((2, 3, 3))),
    OpSpec("matrix_power_neg", lambda a: ember.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2),
           lambda rng: [_well(rng, 3)]),
    OpSpec("matrix_exp", ember.matrix_exp, None, _n((2, 3, 3))),
    OpSpec("inverse", ember.inverse, np.linalg.inv, lambda rng: [_well(rng, 3, (2,))], gradgrad=True),
    OpSpec("det", ember.det, np.linalg.det, _n((2, 3, 3)), gradgrad=True),
    OpSpec("logdet", ember.logdet, lambda a: np.linalg.slogdet(a)[1],
           lambda rng: [(lambda m: m @ m.T + 3 * np.eye(3))(rng.standard_normal((3, 3)))]),
    OpSpec("slogdet", lambda a: ember.slogdet(a).logabsdet, lambda a: np.linalg.slogdet(a)[1], _n((2, 3, 3))),
    OpSpec("pinverse", ember.pinverse, np.linalg.pinv, _n((3, 4))),
    OpSpec("cholesky", _quiet(lambda a: ember.cholesky(a @ a.mT)), lambda a: np.linalg.cholesky(a @ a.T),
           lambda rng: [_well(rng, 3)], gradgrad=True),
    OpSpec("cholesky_solve", ember.cholesky_solve,
           lambda b, l: np.linalg.solve(l @ l.T, b), lambda rng: [rng.standard_normal((3, 2)),
                                                                   np.tril(_well(rng, 3))]),
    OpSpec("cholesky_inverse", ember.cholesky_inverse, lambda l: np.linalg.inv(l @ l.T),
           lambda rng: [np.tril(_well(rng, 3))]),
    OpSpec("triangular_solve", _quiet(lambda b, a: ember.triangular_solve(b, a).solution),
           lambda b, a: np.linalg.solve(np.triu(a), b), lambda rng: [rng.standard_normal((3, 2)), _well(rng, 3)]),
]


def _grad_ok(spec):
    return spec.grad and spec.name not in ("cholesky_solve", "cholesky_inverse")


@pytest.mark.parametrize("spec", [s for s in SPECS if s.ref is not None], ids=repr)
def test_forward(spec):
    check_forward(spec)
    check_forward(spec, np.float32)


@pytest.mark.parametrize("spec", [s for s in SPECS if _grad_ok(s)], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_cholesky_solve_gradients_treat_the_factor_as_a_full_matrix():
    # as in torch: X = (L L^T)^-1 B differentiated in every entry of L, checked on a lower-triangular input
    rng = np.random.default_rng(0)
    b = ember.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    l = ember.tensor(np.tril(_well(rng, 3)), requires_grad=True)
    mask = ember.tensor(np.tri(3))
    assert ember.autograd.gradcheck(lambda b, l: ember.cholesky_solve(b, l * mask), [b, l])


def test_matrix_exp_matches_series():
    rng = np.random.default_rng(0)
    for scale in (0.1, 1.0, 6.0):
        a = rng.standard_normal((3, 3)) * scale
        s = np.linalg.matrix_power(a / 64, 0) * 0
        term = np.eye(3)
        for k in range(1, 40):  # exp(a / 64) by its series, then squared 6 times
            s = s + term
            term = term @ (a / 64) / k
        for _ in range(6):
            s = s @ s
        assert_close(ember.matrix_exp(ember.tensor(a)), s, atol=1e-9 * max(1, np.abs(s).max()), rtol=1e-8)


def test_matrix_exp_gradcheck():
    rng = np.random.default_rng(1)
    a = ember.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(ember.matrix_exp, [a])


# ---------------------------------------------------------------- matmul cases, dtypes and errors
@pytest.mark.parametrize("sa,sb", MATMUL_CASES)
def test_matmul_result_shapes(sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    r = ember.matmul(ember.tensor(a), ember.tensor(b))
    assert tuple(r.shape) == np.matmul(a, b).shape


def test_matmul_grad_fn_names():
    a = ember.ones(2, 3, requires_grad=True)
    assert (a @ ember.ones(3, 4)).grad_fn.name() == "MmBackward0"
    assert (a @ ember.ones(3)).grad_fn.name() == "MvBackward0"
    assert ember.dot(ember.ones(3, requires_grad=True), ember.ones(3)).grad_fn.name() == "DotBackward0"
    assert ember.bmm(ember.ones(2, 2, 3, requires_grad=True), ember.ones(2, 3, 1)).grad_fn.name() == "BmmBackward0"
    assert ember.addmm(ember.ones(4), a, ember.ones(3, 4)).grad_fn.name() == "AddmmBackward0"


def test_matmul_integer_and_half_dtypes():
    a = np.arange(6).reshape(2, 3)
    b = np.arange(12).reshape(3, 4)
    for dt in (ember.int64, ember.int32, ember.uint8, ember.float16, ember.bfloat16):
        r = ember.tensor(a).to(dt) @ ember.tensor(b).to(dt)
        assert r.dtype is dt
        np.testing.assert_array_equal(np.asarray(r.float()._data), (a @ b).astype(np.float32))


def test_matmul_large_goes_straight_to_blas():
    a = ember.tensor(np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32))
    r = a @ a
    assert r.dtype is ember.float32 and r._data.flags.c_contiguous
    np.testing.assert_allclose(r._data, a._data @ a._data, rtol=1e-6)


def test_no_imatmul_rebinds_like_torch():
    a = ember.ones(2, 3)
    b = a
    a @= ember.ones(3, 4)
    assert tuple(a.shape) == (2, 4) and tuple(b.shape) == (2, 3)


def test_matmul_operator_with_non_tensor():
    with pytest.raises(TypeError):
        ember.ones(2, 2) @ 3
    with pytest.raises(TypeError):
        3 @ ember.ones(2, 2)


def test_out_and_inplace_variants():
    a, b = ember.ones(2, 3), ember.ones(3, 4)
    out = ember.zeros(2, 4)
    assert ember.matmul(a, b, out=out) is out
    np.testing.assert_array_equal(out._data, np.full((2, 4), 3.0))
    c = ember.ones(2, 4)
    c.addmm_(a, b, beta=2, alpha=0.5)
    np.testing.assert_array_equal(c._data, np.full((2, 4), 3.5))
    with pytest.raises(RuntimeError):
        ember.ones(4).addmm_(a, b)
    d = ember.zeros(1, 2, 4)
    d.baddbmm_(ember.ones(1, 2, 3), ember.ones(1, 3, 4))
    np.testing.assert_array_equal(d._data, np.full((1, 2, 4), 3.0))


ERRORS = [
    (lambda: ember.matmul(ember.ones(2, 3), ember.ones(4, 5)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda: ember.mm(ember.ones(2, 3), ember.ones(4, 5)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda: ember.matmul(ember.ones(3), ember.ones(4)), RuntimeError,
     "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, but got 3 "
     "and 4 elements respectively"),
    (lambda: ember.dot(ember.ones(3), ember.ones(4)), RuntimeError, "inconsistent tensor size"),
    (lambda: ember.dot(ember.ones(3, 2), ember.ones(3)), RuntimeError,
     "1D tensors expected, but got 2D and 1D tensors"),
    (lambda: ember.bmm(ember.ones(2, 3, 4), ember.ones(3, 4, 5)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4]."),
    (lambda: ember.matmul(ember.ones(2, 3, 4), ember.ones(2, 5, 6)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5]."),
    (lambda: ember.matmul(ember.ones(2, 3, 4), ember.ones(3, 4, 6)), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    (lambda: ember.matmul(ember.ones(2, 3), ember.ones(3, 2, dtype=ember.float64)), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda: ember.matmul(ember.ones(()), ember.ones(3)), RuntimeError,
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (lambda: ember.matmul(ember.ones(2, 2, dtype=ember.bool), ember.ones(2, 2, dtype=ember.bool)),
     NotImplementedError, "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
    (lambda: ember.mv(ember.ones(3, 3), ember.ones(4)), RuntimeError,
     "size mismatch, got input (3), mat (3x3), vec (4)"),
    (lambda: ember.bmm(ember.ones(3, 4), ember.ones(4, 5)), RuntimeError, "batch1 must be a 3D tensor"),
    (lambda: ember.trace(ember.ones(2, 2, 2)), RuntimeError, "trace: expected a matrix, but got tensor with dim 3"),
    (lambda: ember.einsum("ij,jk", ember.ones(2, 3), ember.ones(4, 4)), RuntimeError,
     "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    (lambda: ember.einsum("ij->k", ember.ones(3, 3)), RuntimeError,
     "einsum(): output subscript k does not appear in the equation for any input operand"),
    (lambda: ember.einsum("ij,jk->ik", ember.ones(2, 3)), RuntimeError,
     "einsum(): fewer operands were provided than specified in the equation"),
    (lambda: ember.inverse(ember.tensor([[1.0, 2.0], [2.0, 4.0]])), RuntimeError,
     "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed because the input matrix is "
     "singular."),
    (lambda: ember.det(ember.ones(3, 3, dtype=ember.int64)), RuntimeError,
     "linalg.det: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: ember.det(ember.ones(2, 3)), RuntimeError,
     "linalg.det: A must be batches of square matrices, but they are 2 by 3 matrices"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[e[2][:40] for e in ERRORS])
def test_errors(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn()
    assert msg in str(info.value)


# ---------------------------------------------------------------- einsum
EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
           ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
           ("...ij,...jk", [(5, 2, 3), (1, 3, 4)]), ("bi,bi->b", [(5, 3), (1, 3)]), ("i,j->ij", [(3,), (4,)]),
           ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 2)]), ("iij->ij", [(3, 3, 2)]), ("iji->j", [(2, 3, 2)]),
           ("...i,...i->...", [(2, 3, 4), (4,)]), ("i j -> i", [(3, 3)])]


@pytest.mark.parametrize("eq,shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum(eq, shapes):
    spec = OpSpec(eq, lambda *x: ember.einsum(eq, *x), lambda *x: np.einsum(eq.replace(" ", ""), *x),
                  lambda rng: [rng.standard_normal(s) for s in shapes])
    check_forward(spec)
    check_grad(spec)


@pytest.mark.parametrize("eq,shapes", [EINSUMS[0], EINSUMS[2], EINSUMS[7], EINSUMS[10]])
def test_einsum_gradgrad(eq, shapes):
    spec = OpSpec(eq, lambda *x: ember.einsum(eq, *x), None, lambda rng: [rng.standard_normal(s) for s in shapes])
    check_gradgrad(spec)


def test_einsum_list_form_and_result_owns_memory():
    a = ember.tensor(np.arange(9.0).reshape(3, 3))
    d = ember.einsum("ii->i", [a])
    assert_close(d, [0.0, 4.0, 8.0])
    d._data[0] = 100
    assert a._data[0, 0] == 0


def test_deprecated_functions_warn_once():
    import ember._ops._linalg_util as la
    la._WARNED.discard("chain_matmul")
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        ember.chain_matmul(ember.ones(2, 2), ember.ones(2, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.chain_matmul(ember.ones(2, 2), ember.ones(2, 2))


def test_vector_matrix_shape_error_names_the_one_row_matrix():
    with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied \\(1x3 and 2x3\\)"):
        ember.ones(3) @ ember.ones(2, 3)


def test_einsum_sublist_form():
    a, b = ember.arange(6.0).reshape(2, 3), ember.arange(12.0).reshape(3, 4)
    assert_close(ember.einsum(a, [0, 1], b, [1, 2], [0, 2]), a.numpy() @ b.numpy())
    assert_close(ember.einsum(a, [0, 1], b, [1, 2]), a.numpy() @ b.numpy())  # implicit output, as "ab,bc"
    assert ember.einsum(a, [Ellipsis, 1], [Ellipsis]).tolist() == [3.0, 12.0]
    assert ember.einsum(a, [0, 27], [27]).tolist() == [3.0, 5.0, 7.0]  # 26+ are upper-case letters
    with pytest.raises(ValueError, match="subscript in subscript list is not within the valid range \\[0, 52\\)"):
        ember.einsum(a, [0, 60])
    x = ember.ones(2, 3, dtype=ember.float64, requires_grad=True)
    ember.einsum(x, [0, 1], [1]).sum().backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2
    with pytest.raises(TypeError, match="einsum\\(\\): argument 'equation' \\(position 1\\) must be str, not int"):
        ember.einsum(3, a)
