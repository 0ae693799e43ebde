"""ember.linalg: decompositions, solvers, inverses and norms against NumPy, with float64 gradchecks."""
import math
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.linalg as LA
from ember import return_types
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _well(rng, n, batch=()):
    return rng.standard_normal(batch + (n, n)) + 3 * np.eye(n)


def _n(*shape):
    return lambda rng: [rng.standard_normal(s) for s in shape]


def _sign_fix(v):
    """Constant +-1 per column making each column's largest entry positive (fixes the eigenvector gauge)."""
    d = v._data
    idx = np.expand_dims(np.argmax(np.abs(d), axis=-2), -2)
    return v * ember.tensor(np.sign(np.take_along_axis(d, idx, axis=-2)))


def _np_sign_fix(v):
    idx = np.expand_dims(np.argmax(np.abs(v), axis=-2), -2)
    return v * np.sign(np.take_along_axis(v, idx, axis=-2))


def _sym(a):
    return a + a.mT


def _np_sym(a):
    return a + np.swapaxes(a, -1, -2)


def _np_vnorm(x, ord=2, axis=None, keepdims=False):
    a = np.abs(x)
    if ord == math.inf:
        return a.max(axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return a.min(axis=axis, keepdims=keepdims)
    if ord == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdims).astype(x.dtype)
    return (a ** ord).sum(axis=axis, keepdims=keepdims) ** (1 / ord)


def _np_svd_fixed(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    idx = np.expand_dims(np.argmax(np.abs(u), axis=-2), -2)
    sg = np.sign(np.take_along_axis(u, idx, axis=-2))
    return u * sg, s, vh * np.swapaxes(sg, -1, -2)


def _svd_fixed(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    d = u._data
    idx = np.expand_dims(np.argmax(np.abs(d), axis=-2), -2)
    sg = np.sign(np.take_along_axis(d, idx, axis=-2))
    return u * ember.tensor(sg), s, vh * ember.tensor(np.swapaxes(sg, -1, -2))


def _np_qr(a):
    return tuple(np.linalg.qr(a))


def _np_lstsq(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


SPECS = [
    OpSpec("inv", LA.inv, np.linalg.inv, lambda rng: [_well(rng, 3)], gradgrad=True),
    OpSpec("inv_batch", LA.inv, np.linalg.inv, lambda rng: [_well(rng, 3, (2,))]),
    OpSpec("inv_ex", lambda a: LA.inv_ex(a).inverse, np.linalg.inv, lambda rng: [_well(rng, 3)]),
    OpSpec("det", LA.det, np.linalg.det, _n((3, 3)), gradgrad=True),
    OpSpec("det_batch", LA.det, np.linalg.det, _n((2, 4, 4))),
    OpSpec("slogdet", lambda a: tuple(LA.slogdet(a)), lambda a: tuple(np.linalg.slogdet(a)), _n((2, 3, 3))),
    OpSpec("solve", LA.solve, np.linalg.solve, lambda rng: [_well(rng, 3), rng.standard_normal((3, 2))],
           gradgrad=True),
    OpSpec("solve_vector", LA.solve, np.linalg.solve, lambda rng: [_well(rng, 3), rng.standard_normal(3)]),
    OpSpec("solve_batch_of_vectors", LA.solve, lambda a, b: np.linalg.solve(a, b[..., None])[..., 0],
           lambda rng: [_well(rng, 3, (2,)), rng.standard_normal((2, 3))]),
    OpSpec("solve_broadcast", LA.solve, np.linalg.solve,
           lambda rng: [_well(rng, 3), rng.standard_normal((2, 3, 4))]),
    OpSpec("solve_left_false", lambda a, b: LA.solve(a, b, left=False), lambda a, b: b @ np.linalg.inv(a),
           lambda rng: [_well(rng, 3), rng.standard_normal((2, 3))]),
    OpSpec("solve_triangular_upper", lambda a, b: LA.solve_triangular(a, b, upper=True),
           lambda a, b: np.linalg.solve(np.triu(a), b), lambda rng: [_well(rng, 3), rng.standard_normal((3, 2))]),
    OpSpec("solve_triangular_lower_right_unit",
           lambda a, b: LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
           lambda a, b: b @ np.linalg.inv(np.tril(a, -1) + np.eye(3)),
           lambda rng: [rng.standard_normal((3, 3)), rng.standard_normal((2, 3))]),
    OpSpec("cholesky", lambda a: LA.cholesky(a @ a.mT), lambda a: np.linalg.cholesky(a @ a.T),
           lambda rng: [_well(rng, 3)], gradgrad=True),
    OpSpec("cholesky_upper", lambda a: LA.cholesky(a @ a.mT, upper=True),
           lambda a: np.swapaxes(np.linalg.cholesky(a @ np.swapaxes(a, -1, -2)), -1, -2),
           lambda rng: [_well(rng, 3, (2,))]),
    OpSpec("cholesky_ex", lambda a: LA.cholesky_ex(a @ a.mT).L, lambda a: np.linalg.cholesky(a @ a.T),
           lambda rng: [_well(rng, 3)]),
    OpSpec("qr", lambda a: tuple(LA.qr(a)), _np_qr, _n((4, 3))),
    OpSpec("qr_square_batch", lambda a: tuple(LA.qr(a)), _np_qr, _n((2, 3, 3))),
    OpSpec("qr_wide", lambda a: tuple(LA.qr(a)), _np_qr, _n((3, 5))),
    OpSpec("qr_complete_wide", lambda a: tuple(LA.qr(a, mode="complete")),
           lambda a: tuple(np.linalg.qr(a, mode="complete")), _n((3, 5))),
    OpSpec("qr_r", lambda a: LA.qr(a, mode="r").R, lambda a: np.linalg.qr(a, mode="r"), _n((4, 3)), grad=False),
    OpSpec("eigh", lambda a: (LA.eigh(_sym(a))[0], _sign_fix(LA.eigh(_sym(a))[1])),
           lambda a: (np.linalg.eigh(_np_sym(a))[0], _np_sign_fix(np.linalg.eigh(_np_sym(a))[1])), _n((3, 3))),
    OpSpec("eigh_upper", lambda a: LA.eigh(_sym(a), UPLO="U").eigenvalues,
           lambda a: np.linalg.eigh(_np_sym(a))[0], _n((2, 3, 3))),
    OpSpec("eigvalsh", lambda a: LA.eigvalsh(_sym(a)), lambda a: np.linalg.eigvalsh(_np_sym(a)), _n((4, 4))),
    OpSpec("svd", _svd_fixed, _np_svd_fixed, _n((4, 3))),
    OpSpec("svd_wide", _svd_fixed, _np_svd_fixed, _n((2, 3, 5))),
    OpSpec("svd_values_only_full", lambda a: LA.svd(a).S, lambda a: np.linalg.svd(a)[1], _n((4, 3))),
    OpSpec("svdvals", LA.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), _n((4, 3))),
    OpSpec("pinv", LA.pinv, np.linalg.pinv, _n((4, 3))),
    OpSpec("pinv_wide_batch", LA.pinv, np.linalg.pinv, _n((2, 3, 5))),
    OpSpec("pinv_hermitian", lambda a: LA.pinv(a @ a.mT, hermitian=True), lambda a: np.linalg.pinv(a @ a.T),
           lambda rng: [_well(rng, 3)]),
    OpSpec("lstsq", lambda a, b: LA.lstsq(a, b).solution, _np_lstsq, _n((5, 3), (5, 2))),
    OpSpec("lstsq_vector", lambda a, b: LA.lstsq(a, b).solution, _np_lstsq, _n((5, 3), (5,))),
    OpSpec("lstsq_residuals", lambda a, b: LA.lstsq(a, b, driver="gelsd").residuals,
           lambda a, b: np.linalg.lstsq(a, b, rcond=None)[1], _n((5, 3), (5, 2))),
    OpSpec("vector_norm", LA.vector_norm, lambda x: _np_vnorm(x), _n((3, 4))),
    OpSpec("vector_norm_1_dim", lambda x: LA.vector_norm(x, 1, dim=1), lambda x: _np_vnorm(x, 1, 1), _n((3, 4))),
    OpSpec("vector_norm_inf_keepdim", lambda x: LA.vector_norm(x, math.inf, dim=0, keepdim=True),
           lambda x: _np_vnorm(x, math.inf, 0, True), _n((3, 4))),
    OpSpec("vector_norm_ninf", lambda x: LA.vector_norm(x, -math.inf), lambda x: _np_vnorm(x, -math.inf),
           _n((3, 4))),
    OpSpec("vector_norm_3_dims", lambda x: LA.vector_norm(x, 3, dim=(0, 2)), lambda x: _np_vnorm(x, 3, (0, 2)),
           _n((2, 3, 4))),
    OpSpec("vector_norm_half", lambda x: LA.vector_norm(x, 0.5), lambda x: _np_vnorm(x, 0.5), _n((5,))),
    OpSpec("vector_norm_0", lambda x: LA.vector_norm(x, 0), lambda x: _np_vnorm(x, 0), _n((5,)), grad=False),
    OpSpec("matrix_norm_fro", LA.matrix_norm, lambda a: np.linalg.norm(a, "fro", axis=(-2, -1)), _n((2, 3, 4))),
    OpSpec("matrix_norm_nuc", lambda a: LA.matrix_norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc", (-2, -1)),
           _n((2, 3, 4))),
    OpSpec("matrix_norm_2", lambda a: LA.matrix_norm(a, 2), lambda a: np.linalg.norm(a, 2), _n((3, 4))),
    OpSpec("matrix_norm_m2", lambda a: LA.matrix_norm(a, -2), lambda a: np.linalg.norm(a, -2), _n((3, 4))),
    OpSpec("matrix_norm_1", lambda a: LA.matrix_norm(a, 1), lambda a: np.linalg.norm(a, 1, (-2, -1)),
           _n((2, 3, 4))),
    OpSpec("matrix_norm_m1", lambda a: LA.matrix_norm(a, -1), lambda a: np.linalg.norm(a, -1), _n((3, 4))),
    OpSpec("matrix_norm_inf_dims", lambda a: LA.matrix_norm(a, math.inf, dim=(0, 2)),
           lambda a: np.linalg.norm(a, math.inf, (0, 2)), _n((3, 2, 4))),
    OpSpec("matrix_norm_ninf_keepdim", lambda a: LA.matrix_norm(a, -math.inf, keepdim=True),
           lambda a: np.linalg.norm(a, -math.inf, keepdims=True), _n((3, 4))),
    OpSpec("norm_default", LA.norm, lambda a: np.linalg.norm(a.ravel()), _n((2, 3, 4))),
    OpSpec("norm_matrix_ord", lambda a: LA.norm(a, 2), lambda a: np.linalg.norm(a, 2), _n((3, 4))),
    OpSpec("norm_vector_ord", lambda a: LA.norm(a, 3), lambda a: np.linalg.norm(a, 3), _n((4,))),
    OpSpec("norm_dim", lambda a: LA.norm(a, dim=1), lambda a: np.linalg.norm(a, axis=1), _n((3, 4))),
    OpSpec("norm_nuc_dims", lambda a: LA.norm(a, "nuc", dim=(2, 0)), lambda a: np.linalg.norm(a, "nuc", (2, 0)),
           _n((3, 2, 4))),
    OpSpec("cond", LA.cond, np.linalg.cond, _n((3, 3))),
    OpSpec("matrix_power", lambda a: LA.matrix_power(a, 2), lambda a: a @ a, _n((3, 3))),
    OpSpec("matrix_exp_diag", lambda a: LA.matrix_exp(a * ember.tensor(np.eye(3))),
           lambda a: np.diag(np.exp(np.diag(a))), _n((3, 3))),
    OpSpec("multi_dot", lambda a, b, c: LA.multi_dot([a, b, c]), lambda a, b, c: a @ b @ c,
           _n((2, 5), (5, 3), (3, 4))),
    OpSpec("multi_dot_vectors", lambda a, b, c: LA.multi_dot([a, b, c]), lambda a, b, c: a @ b @ c,
           _n((5,), (5, 3), (3,))),
    OpSpec("cross", LA.cross, np.cross, _n((4, 3), (1, 3))),
    OpSpec("vecdot", LA.vecdot, lambda a, b: (a * b).sum(-1), _n((3, 4), (3, 4))),
    OpSpec("matmul", LA.matmul, np.matmul, _n((2, 3), (3, 4))),
    OpSpec("tensorinv", lambda a: LA.tensorinv(a, ind=1), lambda a: np.linalg.tensorinv(a, ind=1),
           lambda rng: [_well(rng, 4).reshape(4, 2, 2)]),
    OpSpec("tensorsolve", LA.tensorsolve, np.linalg.tensorsolve,
           lambda rng: [_well(rng, 6).reshape(6, 2, 3), rng.standard_normal(6)]),
]


@pytest.mark.parametrize("spec", [s for s in SPECS if s.ref is not None], ids=repr)
def test_forward(spec):
    check_forward(spec)
    check_forward(spec, np.float32)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


@pytest.mark.parametrize("name", ["eigh", "svd", "qr", "pinv", "lstsq"])
def test_gradgradcheck_decompositions(name):
    spec = next(s for s in SPECS if s.name == name)
    check_gradgrad(spec)


# ---------------------------------------------------------------- results and special cases
def test_namespace_loads_lazily_and_by_import():
    code = ("import sys, ember; assert 'ember.linalg' not in sys.modules; ember.linalg.inv(ember.ones(1, 1)); "
            "import ember.linalg; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_named_tuples():
    a = ember.tensor(np.random.default_rng(0).standard_normal((4, 3)))
    sq = ember.tensor(_well(np.random.default_rng(1), 3))
    assert isinstance(LA.svd(a), return_types.linalg_svd) and LA.svd(a)._fields == ("U", "S", "Vh")
    assert isinstance(ember.svd(a), return_types.svd) and ember.svd(a)._fields == ("U", "S", "V")
    assert isinstance(LA.qr(a), return_types.linalg_qr) and LA.qr(a)._fields == ("Q", "R")
    assert isinstance(LA.eigh(sq), return_types.linalg_eigh)
    assert isinstance(LA.slogdet(sq), return_types.linalg_slogdet)
    assert isinstance(ember.slogdet(sq), return_types.slogdet)
    r = LA.lstsq(a, a)
    assert isinstance(r, return_types.linalg_lstsq)
    assert r._fields == ("solution", "residuals", "rank", "singular_values")
    assert r.rank.dtype is ember.int64
    assert LA.inv_ex(sq).info.dtype is ember.int32


def test_svd_old_api_returns_v():
    a = np.random.default_rng(0).standard_normal((4, 3))
    u, s, v = ember.svd(ember.tensor(a))
    assert_close(u @ (s.unsqueeze(-1) * v.mT), a, atol=1e-12)
    u, s, v = ember.svd(ember.tensor(a), some=False)
    assert tuple(u.shape) == (4, 4) and tuple(v.shape) == (3, 3)
    u, s, v = ember.svd(ember.tensor(a), compute_uv=False)
    assert not u._data.any() and not v._data.any() and tuple(u.shape) == (4, 4)


def test_complex_inputs():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    t = ember.tensor(a)
    assert_close(LA.inv(t), np.linalg.inv(a), atol=1e-12)
    assert_close(LA.det(t), np.linalg.det(a), atol=1e-12)
    assert_close(LA.vector_norm(t), np.linalg.norm(a), atol=1e-12)
    assert LA.vector_norm(t).dtype is ember.float64
    w = LA.eigvals(ember.tensor(a.real))
    assert w.dtype is ember.complex128
    np.testing.assert_allclose(np.sort_complex(w._data), np.sort_complex(np.linalg.eigvals(a.real)), atol=1e-12)
    ws, vs = LA.eig(ember.tensor(a))
    assert_close(ember.tensor(a) @ vs, vs * ws.unsqueeze(0), atol=1e-10)


def test_complex_matmul_gradient_uses_conjugates():
    rng = np.random.default_rng(0)
    a = ember.tensor(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2)))
    g = ember.tensor(np.ones((2, 2), complex))
    (a @ b).backward(g)
    np.testing.assert_allclose(a.grad._data, np.ones((2, 2)) @ b._data.conj().T)


def test_norm_gradients_at_zero():
    for ord, want in ((2, 0.0), (1, 0.0), (math.inf, 0.0), (3, 0.0), (0.5, 0.0)):
        x = ember.zeros(3, dtype=ember.float64, requires_grad=True)
        LA.vector_norm(x, ord).backward()
        np.testing.assert_allclose(x.grad._data, np.full(3, want))


def test_inf_norm_gradient_splits_ties():
    x = ember.tensor([1.0, -3.0, 3.0, 2.0], requires_grad=True)
    LA.vector_norm(x, math.inf).backward()
    np.testing.assert_allclose(x.grad._data, [0.0, -0.5, 0.5, 0.0])


def test_vector_norm_dtype_argument_and_low_precision():
    x = ember.ones(4)
    assert LA.vector_norm(x, dtype=ember.float64).dtype is ember.float64
    assert LA.vector_norm(x.half()).dtype is ember.float16
    assert LA.vector_norm(x.half()).item() == 2.0


def test_matrix_rank_and_tolerances():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))
    t = ember.tensor(a)
    assert LA.matrix_rank(t).item() == 2
    assert LA.matrix_rank(t, hermitian=False, atol=1e3).item() == 0
    assert LA.matrix_rank(ember.tensor(a @ a.T), hermitian=True).item() == 2
    assert_close(LA.pinv(t), np.linalg.pinv(a), atol=1e-10)


def test_singular_matrix_gradient_of_det_is_the_cofactor_matrix():
    a = ember.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]], dtype=ember.float64, requires_grad=True)
    LA.det(a).backward()
    np.testing.assert_allclose(a.grad._data, [[14, -10, 2], [-7, 5, -1], [0, 0, 0]], atol=1e-10)


def test_inv_ex_and_cholesky_ex_report_instead_of_raising():
    bad = ember.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]])
    np.testing.assert_array_equal(LA.inv_ex(bad).info._data, [0, 2])
    npd = ember.tensor([[[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]]])
    np.testing.assert_array_equal(LA.cholesky_ex(npd).info._data, [2, 0])
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(bad, check_errors=True)


def test_singular_triangular_solve_gives_inf_not_an_error():
    a = ember.tensor([[1.0, 0.0], [1.0, 0.0]])
    r = LA.solve_triangular(a, ember.ones(2, 1), upper=False)
    assert not np.isfinite(r._data).all()


def test_qr_backward_errors():
    a = ember.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="mode='complete' and nrows > ncols"):
        LA.qr(a, mode="complete").Q.sum().backward()


ERRORS = [
    (lambda: LA.inv(ember.zeros(3, 3)), LA.LinAlgError,
     "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix is "
     "singular."),
    (lambda: LA.inv(ember.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]])), LA.LinAlgError,
     "linalg.inv: (Batch element 1): The diagonal element 2 is zero"),
    (lambda: LA.inv(ember.ones(2, 3)), RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: LA.inv(ember.ones(3)), RuntimeError, "linalg.inv: The input tensor A must have at least 2 dimensions."),
    (lambda: LA.inv(ember.ones(2, 2).half()), RuntimeError, "linalg.inv: Low precision dtypes not supported. Got Half"),
    (lambda: LA.cholesky(ember.tensor([[1.0, 2.0], [2.0, 1.0]])), LA.LinAlgError,
     "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the "
     "leading minor of order 2 is not positive-definite)."),
    (lambda: LA.solve(ember.zeros(2, 2), ember.ones(2)), LA.LinAlgError,
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    (lambda: LA.solve(ember.ones(2, 2), ember.ones(3)), RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (2x2 and 3x1)"),
    (lambda: LA.solve(ember.ones(2, 2), ember.ones(2, dtype=ember.float64)), RuntimeError,
     "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type Double instead"),
    (lambda: LA.vector_norm(ember.ones(3, dtype=ember.int64)), RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: LA.vector_norm(ember.ones(0), math.inf), RuntimeError,
     "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation does not have an "
     "identity"),
    (lambda: LA.matrix_norm(ember.ones(3, 3), ord=3), RuntimeError, "linalg.matrix_norm: Order 3 not supported."),
    (lambda: LA.matrix_norm(ember.ones(3)), RuntimeError,
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    (lambda: LA.norm(ember.ones(3, 3, 3), 2), RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    (lambda: LA.multi_dot([ember.ones(3)]), RuntimeError, "multi_dot(): expected at least 2 tensors but got 1"),
    (lambda: LA.cross(ember.ones(2, 4), ember.ones(2, 4)), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4"),
    (lambda: LA.eigh(ember.ones(2, 3)), RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 2 by 3 matrices"),
    (lambda: LA.qr(ember.ones(2, 2), mode="full"), RuntimeError, "qr received unrecognized mode 'full'"),
    (lambda: LA.matrix_power(ember.ones(2, 3), 2), RuntimeError,
     "linalg.matrix_power: A must be batches of square matrices, but they are 2 by 3 matrices"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[e[2][:50] for e in ERRORS])
def test_errors(fn, exc, msg):
    with pytest.raises(exc) as info:
        fn()
    assert msg in str(info.value)


def test_vander():
    x = ember.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]], dtype=ember.float64)
    got = LA.vander(x, N=4)
    want = np.stack([np.vander(r, 4, increasing=True) for r in x.numpy()])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    assert LA.vander(ember.tensor([1, 2, 3], dtype=ember.int32)).dtype == ember.int64
    np.testing.assert_array_equal(LA.vander(ember.tensor(3.0), N=3).numpy(), [[1.0, 3.0, 9.0]])
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        LA.vander(ember.tensor([1.0]), N=1)
    with pytest.raises(RuntimeError, match="but got Bool"):
        LA.vander(ember.tensor([True]))
    xg = x.clone().requires_grad_()
    assert ember.autograd.gradcheck(lambda t: LA.vander(t, N=4), (xg,))


# ---------------- LU (ember/_ops/lu.py, NOTE [ LU gradients ]) ----------------

def _lu_input(shape, seed=0):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=ember.float64)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3), (2, 3, 3)], ids=str)
def test_lu_reconstructs_and_matches_scipy(shape):
    import scipy.linalg
    a = _lu_input(shape)
    P, L, U = LA.lu(a)
    np.testing.assert_allclose((P @ L @ U).numpy(), a.numpy(), atol=1e-12)
    LU, piv = LA.lu_factor(a)
    for i, m in enumerate(a.numpy().reshape(-1, *shape[-2:])):
        want_lu, want_piv = scipy.linalg.lu_factor(m)
        np.testing.assert_allclose(LU.numpy().reshape(-1, *shape[-2:])[i], want_lu, atol=1e-12)
        k = min(shape[-2:])
        np.testing.assert_array_equal(piv.numpy().reshape(-1, k)[i], want_piv[:k] + 1)  # 1-based, as LAPACK
    assert piv.dtype == ember.int32
    P2, L2, U2 = ember.lu_unpack(LU, piv)
    for x, y in zip((P, L, U), (P2, L2, U2)):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)], ids=str)
def test_lu_gradients(shape):
    a = _lu_input(shape, 1).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: LA.lu(t)[1:], (a,))
    assert ember.autograd.gradcheck(lambda t: LA.lu_factor(t).LU, (a,))
    assert ember.autograd.gradgradcheck(lambda t: LA.lu(t)[1:], (a,))


@pytest.mark.parametrize("left, adjoint", [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve(left, adjoint):
    a = _lu_input((2, 4, 4), 2)
    b = _lu_input((2, 4, 3) if left else (2, 3, 4), 3)
    LU, piv = LA.lu_factor(a)
    x = LA.lu_solve(LU, piv, b, left=left, adjoint=adjoint)
    am = np.conj(np.swapaxes(a.numpy(), -1, -2)) if adjoint else a.numpy()
    res = am @ x.numpy() if left else x.numpy() @ am
    np.testing.assert_allclose(res, b.numpy(), atol=1e-10)
    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
    assert ember.autograd.gradcheck(
        lambda s, t: LA.lu_solve(*LA.lu_factor(s), t, left=left, adjoint=adjoint), (ag, bg))
    if left and not adjoint:
        np.testing.assert_allclose(ember.lu_solve(b, LU, piv).numpy(), x.numpy(), rtol=1e-12)


def test_lu_errors_and_infos():
    singular = ember.zeros(3, 3, dtype=ember.float64)
    with pytest.raises(LA.LinAlgError, match=r"U\[1,1\] is zero"):
        LA.lu_factor(singular)
    assert LA.lu_factor_ex(singular).info.item() == 1
    with pytest.raises(RuntimeError, match="LU without pivoting is not implemented on the CPU"):
        LA.lu_factor(_lu_input((3, 3)), pivot=False)
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        LA.lu_factor(ember.ones(3))
    lu_, piv, infos = ember.lu(_lu_input((2, 3, 3)), get_infos=True)
    assert infos.tolist() == [0, 0] and lu_.shape == (2, 3, 3)
    with pytest.raises(RuntimeError, match="int32"):
        ember.lu_unpack(lu_, piv.long())


# ---------------- eig / eigvals gradients, slogdet's sign ----------------

def test_eig_gradients():
    a = _lu_input((4, 4), 5).requires_grad_()
    f = (lambda t: (LA.eigvals(t).real, LA.eigvals(t).imag, LA.eig(t)[1].abs()))
    assert ember.autograd.gradcheck(f, (a,))
    c = (_lu_input((3, 3), 6) + 1j * _lu_input((3, 3), 7)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: (LA.eigvals(t).real, LA.eig(t)[1].abs()), (c,))
    assert not LA.eigvals(_lu_input((3, 3))).requires_grad


def test_slogdet_sign_requires_grad_as_torch():
    a = _lu_input((3, 3), 8).requires_grad_()
    sign, logabsdet = LA.slogdet(a)
    assert sign.requires_grad and logabsdet.requires_grad
    (g,) = ember.autograd.grad(sign.sum(), a)
    np.testing.assert_array_equal(g.numpy(), np.zeros((3, 3)))  # a real sign is piecewise constant
    c = (_lu_input((3, 3), 9) + 1j * _lu_input((3, 3), 10)).requires_grad_()
    assert ember.autograd.gradcheck(lambda t: (LA.slogdet(t)[0].real, LA.slogdet(t)[0].imag,
                                               LA.slogdet(t)[1]), (c,))
