"""linalg.ldl_factor(_ex) and linalg.ldl_solve: A rebuilt from LAPACK's compact LD and pivots, solves against
numpy.linalg.solve, batches, empty inputs, errors and the missing derivative."""
import numpy as np
import pytest

import ember
import ember.linalg as LA
from ember import return_types

_DTYPES = ["float32", "float64", "complex64", "complex128"]
_TOL = {"float32": 1e-4, "float64": 1e-10, "complex64": 1e-4, "complex128": 1e-10}


def _np_ldl_unpack(ld, piv, hermitian):
    """(L, D) with A = L D L^T (L^H when hermitian) from sytrf's lower compact format, read step by step:
    L = P(1) L(1) P(2) L(2) ..., each P(k) a row swap and each L(k) unit lower with the multipliers of step k."""
    n = ld.shape[-1]
    L, D = np.eye(n, dtype=ld.dtype), np.zeros_like(ld)
    k = 0
    while k < n:
        s = 1 if piv[k] > 0 else 2
        swap = piv[k] - 1 if s == 1 else -piv[k] - 1
        P = np.eye(n, dtype=ld.dtype)
        P[[k + s - 1, swap]] = P[[swap, k + s - 1]]
        Lk = np.eye(n, dtype=ld.dtype)
        Lk[k + s:, k:k + s] = ld[k + s:, k:k + s]
        L = L @ P @ Lk
        block = np.tril(ld[k:k + s, k:k + s])
        D[k:k + s, k:k + s] = block + np.tril(block, -1).T.conj() if hermitian else block + np.tril(block, -1).T
        k += s
    return L, D


def _np_rebuild(ld, piv, hermitian):
    L, D = _np_ldl_unpack(ld, piv, hermitian)
    return L @ D @ (L.conj().T if hermitian else L.T)


def _sym(rng, shape, dtype, hermitian):
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (9, 9), (2, 3, 6, 6)])
def test_factor_rebuilds_a(dtype, hermitian, shape):
    a = _sym(np.random.default_rng(0), shape, dtype, hermitian)
    LD, piv, info = LA.ldl_factor_ex(ember.tensor(a), hermitian=hermitian)
    assert (LD.dtype, piv.dtype, info.dtype) == (ember.tensor(a).dtype, ember.int32, ember.int32)
    assert (LD.shape, piv.shape, info.shape) == (shape, shape[:-1], shape[:-2])
    assert not info.numpy().any()
    ld, p = LD.numpy(), piv.numpy()
    assert not np.triu(ld, 1).any()
    n = shape[-1]
    for i in np.ndindex(shape[:-2]):
        np.testing.assert_allclose(_np_rebuild(ld[i], p[i], hermitian), a[i], atol=_TOL[dtype] * n * 10)


def test_factor_reads_only_the_lower_triangle():
    rng = np.random.default_rng(1)
    a = _sym(rng, (5, 5), "float64", False)
    junk = a + np.triu(rng.standard_normal((5, 5)), 1)
    for x, y in zip(LA.ldl_factor(ember.tensor(a)), LA.ldl_factor(ember.tensor(junk))):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_two_by_two_pivot():
    LD, piv = LA.ldl_factor(ember.tensor([[0., 1.], [1., 0.]]))
    np.testing.assert_array_equal(LD.numpy(), [[0., 0.], [1., 0.]])
    np.testing.assert_array_equal(piv.numpy(), [-2, -2])


def test_hermitian_flag_matters_for_complex():
    a = _sym(np.random.default_rng(2), (4, 4), "complex128", True)
    LD_h, piv_h = LA.ldl_factor(ember.tensor(a), hermitian=True)
    assert not LD_h.numpy().diagonal().imag.any()
    np.testing.assert_allclose(_np_rebuild(LD_h.numpy(), piv_h.numpy(), True), a, atol=1e-10)
    sym = np.tril(a) + np.tril(a, -1).T  # what hermitian=False factors: the symmetric matrix of A's lower triangle
    LD_s, piv_s = LA.ldl_factor(ember.tensor(a))
    np.testing.assert_allclose(_np_rebuild(LD_s.numpy(), piv_s.numpy(), False), sym, atol=1e-10)


def test_return_types():
    a = ember.tensor(_sym(np.random.default_rng(3), (3, 3), "float64", False))
    r = LA.ldl_factor(a)
    assert type(r) is return_types.linalg_ldl_factor and r._fields == ("LD", "pivots")
    r = LA.ldl_factor_ex(a)
    assert type(r) is return_types.linalg_ldl_factor_ex and r._fields == ("LD", "pivots", "info")


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("ld_batch,b_batch", [((), ()), ((), (3,)), ((3,), ()), ((3,), (3,)), ((2, 1), (3,)),
                                              ((1,), (2,))])
def test_solve(solve_path, dtype, hermitian, ld_batch, b_batch):
    rng = np.random.default_rng(4)
    a = _sym(rng, ld_batch + (5, 5), dtype, hermitian)
    b = rng.standard_normal(b_batch + (5, 3)).astype(dtype)
    LD, piv = LA.ldl_factor(ember.tensor(a), hermitian=hermitian)
    x = LA.ldl_solve(LD, piv, ember.tensor(b), hermitian=hermitian)
    want = np.linalg.solve(a, b)
    assert x.shape == want.shape and x.dtype == LD.dtype
    np.testing.assert_allclose(x.numpy(), want, rtol=_TOL[dtype] * 100, atol=_TOL[dtype] * 100)


@pytest.fixture(params=["lapack", "numpy"])
def solve_path(request, monkeypatch):
    """ldl_solve through SciPy's ?sytrs/?hetrs, and through the NumPy routine used where SciPy has none (< 1.15)."""
    if request.param == "numpy":
        from ember._ops import ldl
        real = ldl._lapack

        def without_trs(names, dtype, hermitian):
            if names == ("trs",):
                raise AttributeError("no ?sytrs in this SciPy")
            return real(names, dtype, hermitian)
        monkeypatch.setattr(ldl, "_lapack", without_trs)
    return request.param


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_solve_with_two_by_two_pivots(solve_path, dtype, hermitian):
    rng = np.random.default_rng(7)
    a = _sym(rng, (2, 6, 6), dtype, hermitian)
    a[0][np.diag_indices(6)] = 0  # a zero diagonal forces 2x2 pivots
    b = rng.standard_normal((2, 6, 3)).astype(dtype)
    LD, piv = LA.ldl_factor(ember.tensor(a), hermitian=hermitian)
    assert (piv.numpy()[0] < 0).any()
    x = LA.ldl_solve(LD, piv, ember.tensor(b), hermitian=hermitian)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=_TOL[dtype] * 100, atol=_TOL[dtype] * 100)


def test_solve_takes_any_integer_pivots():
    rng = np.random.default_rng(5)
    a, b = _sym(rng, (4, 4), "float64", False), rng.standard_normal((4, 2))
    LD, piv = LA.ldl_factor(ember.tensor(a))
    for dt in (ember.int64, ember.int16):
        x = LA.ldl_solve(LD, piv.to(dt), ember.tensor(b))
        np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), atol=1e-10)


def test_out():
    rng = np.random.default_rng(6)
    a, b = _sym(rng, (4, 4), "float64", False), rng.standard_normal((4, 2))
    outs = (ember.empty(0, dtype=ember.float64), ember.empty(0, dtype=ember.int32), ember.empty(0, dtype=ember.int32))
    r = LA.ldl_factor_ex(ember.tensor(a), out=outs)
    assert r.LD is outs[0] and outs[1].shape == (4,) and outs[2].shape == ()
    x = ember.empty(0, dtype=ember.float64)
    assert LA.ldl_solve(r.LD, r.pivots, ember.tensor(b), out=x) is x
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), atol=1e-10)


@pytest.mark.parametrize("shape", [(0, 0), (0, 3, 3), (2, 0, 0)])
def test_empty_factor(shape):
    LD, piv, info = LA.ldl_factor_ex(ember.zeros(shape))
    assert (LD.shape, piv.shape, info.shape) == (shape, shape[:-1], shape[:-2])
    assert piv.dtype == ember.int32 and info.dtype == ember.int32 and not info.numpy().any()


@pytest.mark.parametrize("ld_shape,b_shape,out_shape", [((0, 0), (0, 3), (0, 3)), ((0, 4, 4), (4, 2), (0, 4, 2)),
                                                        ((4, 4), (4, 0), (4, 0)), ((0, 4, 4), (2, 1, 4, 2),
                                                                                   (2, 0, 4, 2))])
def test_empty_solve(ld_shape, b_shape, out_shape):
    n = ld_shape[-1]
    piv = ember.arange(1, n + 1, dtype=ember.int32).expand(ld_shape[:-1])
    LD = ember.eye(n).expand(ld_shape)
    assert LA.ldl_solve(LD, piv, ember.zeros(b_shape)).shape == out_shape


def test_singular():
    zeros = ember.zeros(2, 3, 3)
    zeros[0] = ember.eye(3)
    _, piv, info = LA.ldl_factor_ex(zeros)
    np.testing.assert_array_equal(info.numpy(), [0, 1])
    np.testing.assert_array_equal(piv.numpy(), [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(RuntimeError, match=r"^torch.linalg.ldl_factor: Unknown error code: 1\.$"):
        LA.ldl_factor(zeros)
    with pytest.raises(RuntimeError, match=r"^torch.linalg.ldl_factor_ex: Unknown error code: 1\.$"):
        LA.ldl_factor_ex(zeros, check_errors=True)


_A = ember.tensor([[2., 1.], [1., 3.]], dtype=ember.float64)
_LD, _PIV = LA.ldl_factor(_A)
_B = ember.ones(2, 1, dtype=ember.float64)
_BAD = [
    (lambda: LA.ldl_factor(ember.ones(3)), RuntimeError,
     "torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 dimensions."),
    (lambda: LA.ldl_factor_ex(ember.ones(3, 4)), RuntimeError,
     "torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are 3 by 4 matrices"),
    (lambda: LA.ldl_factor(ember.ones(3, 3, dtype=ember.int32)), RuntimeError,
     "torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got Int"),
    (lambda: LA.ldl_factor(ember.ones(3, 3, dtype=ember.float16)), NotImplementedError,
     "\"ldl_factor_kernel_cpu\" not implemented for 'Half'"),
    (lambda: LA.ldl_solve(_LD[0], _PIV, _B), RuntimeError,
     "torch.linalg.ldl_solve: The input tensor A must have at least 2 dimensions."),
    (lambda: LA.ldl_solve(_LD.long(), _PIV, _B), RuntimeError,
     "torch.linalg.ldl_solve: Expected a floating point or complex tensor as input. Got Long"),
    (lambda: LA.ldl_solve(_LD, _PIV, _B.float()), RuntimeError,
     "Expected b and A to have the same dtype, but found b of type Float and A of type Double instead."),
    (lambda: LA.ldl_solve(_LD, _PIV, _B[:, 0]), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got -2)"),
    (lambda: LA.ldl_solve(_LD, _PIV, ember.ones(3, 1, dtype=ember.float64)), RuntimeError,
     "Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is 2 by 2 but each b matrix is 3 by 1"),
    (lambda: LA.ldl_solve(_LD, _PIV[:1], _B), RuntimeError,
     ("torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape "
      "[1] instead")),
    (lambda: LA.ldl_solve(_LD, _PIV.float(), _B), RuntimeError,
     "torch.linalg.ldl_solve: Expected pivots to be integers. Got Float"),
    (lambda: LA.ldl_solve(_LD.expand(3, 2, 2), _PIV.expand(3, 2), _B.expand(2, 2, 1)), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    (lambda: LA.ldl_solve(_LD, ember.zeros(2, dtype=ember.int32), _B), RuntimeError,
     "Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass the result of ldl_factor?"),
    (lambda: LA.ldl_solve(_LD, ember.full((2,), 3, dtype=ember.int32), _B), RuntimeError,
     ("Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you properly pass the result of "
      "ldl_factor?")),
    (lambda: LA.ldl_solve(_LD.half(), _PIV, _B.half()), NotImplementedError,
     "\"ldl_solve_kernel_cpu\" not implemented for 'Half'"),
]


@pytest.mark.parametrize("i", range(len(_BAD)))
def test_errors(i):
    fn, exc, msg = _BAD[i]
    with pytest.raises(exc) as e:
        fn()
    assert type(e.value) is exc and str(e.value) == msg


def test_no_derivative():
    a = ember.tensor([[2., 1.], [1., 3.]], requires_grad=True)
    LD, piv, info = LA.ldl_factor_ex(a)
    assert (LD.requires_grad, piv.requires_grad, info.requires_grad) == (True, False, False)
    with pytest.raises(RuntimeError, match="^derivative for aten::linalg_ldl_factor_ex is not implemented$"):
        LD.sum().backward()
    LD, piv = LA.ldl_factor(a.detach())
    b = ember.ones(2, 1, requires_grad=True)
    x = LA.ldl_solve(LD, piv, b)
    assert x.requires_grad
    with pytest.raises(RuntimeError, match="^derivative for aten::linalg_ldl_solve is not implemented$"):
        x.sum().backward()
    with ember.no_grad():
        assert not LA.ldl_factor(a).LD.requires_grad
    out = (ember.empty(0), ember.empty(0, dtype=ember.int32))
    LA.ldl_factor(a, out=out)  # inputs that require grad are allowed with out=, as in torch
    np.testing.assert_array_equal(out[0].numpy(), LD.numpy())
