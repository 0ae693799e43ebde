"""ember's linear algebra against PyTorch: values, result dtypes, gradients, named-tuple fields, error text."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.linalg  # noqa: E402,F401


def _rng(seed=0):
    return np.random.default_rng(seed)


def _spd(rng, n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _pair(*arrays, requires_grad=False):
    e = [ember.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f") for a in arrays]
    t = [torch.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f") for a in arrays]
    return e, t


def _np(x):
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    return np.asarray(x.detach()._data)


def _same(e, t, atol=1e-5, rtol=1e-4):
    if isinstance(t, tuple):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            _same(a, b, atol, rtol)
        return
    assert str(e.dtype).replace("ember", "torch") == str(t.dtype), (e.dtype, t.dtype)
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    np.testing.assert_allclose(_np(e), _np(t), atol=atol, rtol=rtol)


def _quiet(fn):
    """fn with deprecation warnings silenced (torch and ember both warn for the old linalg API)."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(*args)
    return run


def _signs(v, axis):
    """+-1 per singular/eigen vector (along `axis`) making its largest entry positive: a fixed gauge."""
    d = _np(v)
    idx = np.expand_dims(np.argmax(np.abs(d), axis=axis), axis)
    return np.sign(np.take_along_axis(d, idx, axis=axis))


def _fix_eigh(m, res):
    w, v = res
    return w, v * m.tensor(_signs(v, -2))


def _fix_svd(m, res, old=False):
    # reduced or square SVDs: flip each singular pair (u_i, v_i) together
    u, s, v = res
    su = _signs(u, -2)
    return u * m.tensor(su), s, v * m.tensor(su if old else np.swapaxes(su, -1, -2))


def _grads_match(fe, ft, arrays, atol=1e-6, rtol=1e-5, seed=1):
    """Run fe on ember tensors and ft on torch tensors; compare outputs and the gradients of a random
    weighted sum of the (differentiable) outputs."""
    e, t = _pair(*arrays, requires_grad=True)
    ye, yt = fe(*e), ft(*t)
    ye = ye if isinstance(ye, tuple) else (ye,)
    yt = yt if isinstance(yt, tuple) else (yt,)
    rng = _rng(seed)
    le, lt = 0, 0
    for a, b in zip(ye, yt):
        if b.requires_grad:
            w = rng.standard_normal(tuple(b.shape))
            le = le + (a * ember.tensor(w)).sum()
            lt = lt + (b * torch.tensor(w)).sum()
    le.backward()
    lt.backward()
    for a, b in zip(e, t):
        if b.grad is not None:
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), atol=atol, rtol=rtol)


# ---------------------------------------------------------------- matmul family
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (4, 3, 2)), ((5, 2, 3), (3,)),
                 ((3,), (5, 3, 2)), ((2, 1, 4, 3), (1, 6, 3, 2))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_shapes_values_and_grads(sa, sb):
    rng = _rng()
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    (ea, eb), (ta, tb) = _pair(a, b)
    _same(ember.matmul(ea, eb), torch.matmul(ta, tb), atol=1e-10)
    _same(ea @ eb, ta @ tb, atol=1e-10)
    _grads_match(ember.matmul, torch.matmul, [a, b], atol=1e-10)


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_grad_fn_names(sa, sb):
    rng = _rng()
    (ea, eb), (ta, tb) = _pair(rng.standard_normal(sa), rng.standard_normal(sb), requires_grad=True)
    ne, nt = ember.matmul(ea, eb).grad_fn.name(), torch.matmul(ta, tb).grad_fn.name()
    if nt != "CloneBackward0":  # torch's own expand-and-clone path for matrix @ batch
        assert ne == nt


@pytest.mark.parametrize("dt", ["float32", "float64", "int64", "int32", "uint8", "float16", "bfloat16",
                                "complex64"])
def test_matmul_dtypes(dt):
    a = np.arange(6).reshape(2, 3) % 4
    b = np.arange(12).reshape(3, 4) % 3
    ta, tb = torch.tensor(a).to(getattr(torch, dt)), torch.tensor(b).to(getattr(torch, dt))
    ea, eb = ember.tensor(a).to(getattr(ember, dt)), ember.tensor(b).to(getattr(ember, dt))
    r, rt = ea @ eb, ta @ tb
    assert str(r.dtype) == str(rt.dtype).replace("torch", "ember")
    np.testing.assert_allclose(np.asarray(r.float()._data if dt == "bfloat16" else r._data, dtype=np.float64)
                               if dt != "complex64" else r._data, rt.float().numpy() if dt != "complex64"
                               else rt.numpy())


ERROR_CASES = [
    (lambda m: m.matmul(m.ones(2, 3), m.ones(4, 5))),
    (lambda m: m.matmul(m.ones(3), m.ones(4))),
    (lambda m: m.matmul(m.ones(3, 3), m.ones(4))),
    (lambda m: m.matmul(m.ones(2, 3, 4), m.ones(5, 6))),
    (lambda m: m.matmul(m.ones(2, 3, 4), m.ones(3, 4, 6))),
    (lambda m: m.matmul(m.ones(2, 3, 4), m.ones(5))),
    (lambda m: m.matmul(m.ones(5), m.ones(2, 3, 4))),
    (lambda m: m.matmul(m.ones(2, 3, 4), m.ones(2, 5, 6))),
    (lambda m: m.matmul(m.ones(()), m.ones(3))),
    (lambda m: m.matmul(m.ones(2, 3), m.ones(3, 2, dtype=m.float64))),
    (lambda m: m.matmul(m.ones(3), m.ones(3, dtype=m.float64))),
    (lambda m: m.matmul(m.ones(2, 3, dtype=m.bool), m.ones(3, 2, dtype=m.bool))),
    (lambda m: m.mm(m.ones(3), m.ones(3, 2))),
    (lambda m: m.mm(m.ones(3, 3), m.ones(3))),
    (lambda m: m.mm(m.ones(2, 3), m.ones(4, 5))),
    (lambda m: m.bmm(m.ones(2, 3, 4), m.ones(3, 4, 5))),
    (lambda m: m.bmm(m.ones(2, 3, 4), m.ones(2, 5, 5))),
    (lambda m: m.bmm(m.ones(3, 4), m.ones(4, 5))),
    (lambda m: m.bmm(m.ones(2, 3, 4), m.ones(2, 4, 5, dtype=m.float64))),
    (lambda m: m.mv(m.ones(3, 3), m.ones(4))),
    (lambda m: m.mv(m.ones(3), m.ones(3))),
    (lambda m: m.dot(m.ones(3), m.ones(4))),
    (lambda m: m.dot(m.ones(3, 2), m.ones(3))),
    (lambda m: m.dot(m.ones(3), m.ones(3, dtype=m.float64))),
    (lambda m: m.outer(m.ones(3, 2), m.ones(4))),
    (lambda m: m.inner(m.ones(3, 2), m.ones(4, 3))),
    (lambda m: m.tensordot(m.ones(3, 2), m.ones(3, 3), dims=1)),
    (lambda m: m.linalg.cross(m.ones(2, 4), m.ones(2, 4))),
    (lambda m: m.trace(m.ones(3, 3, 3))),
    (lambda m: m.einsum("ij,jk", m.ones(2, 3), m.ones(4, 4))),
    (lambda m: m.einsum("ij,jk->ik", m.ones(2, 3))),
    (lambda m: m.einsum("ijk,jk->ik", m.ones(2, 3), m.ones(3, 4))),
    (lambda m: m.einsum("ij->k", m.ones(3, 3))),
    (lambda m: m.linalg.inv(m.zeros(3, 3))),
    (lambda m: m.linalg.inv(m.tensor([[1.0, 2.0], [2.0, 4.0]]))),
    (lambda m: m.inverse(m.tensor([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]))),
    (lambda m: m.linalg.inv(m.ones(2, 3))),
    (lambda m: m.linalg.inv(m.ones(3))),
    (lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.int64))),
    (lambda m: m.linalg.det(m.ones(2, 3))),
    (lambda m: m.linalg.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]]))),
    (lambda m: m.linalg.cholesky(m.tensor([[[1.0, 2.0], [2.0, 1.0]]] * 2))),
    (lambda m: m.linalg.solve(m.zeros(2, 2), m.ones(2))),
    (lambda m: m.linalg.solve(m.ones(2, 2), m.ones(3))),
    (lambda m: m.linalg.solve(m.ones(2, 2), m.ones(2, dtype=m.float64))),
    (lambda m: m.linalg.eigh(m.ones(2, 3))),
    (lambda m: m.linalg.matrix_norm(m.ones(3))),
    (lambda m: m.linalg.vector_norm(m.ones(3, dtype=m.int64))),
    (lambda m: m.linalg.vector_norm(m.ones(0), ord=math.inf)),
    (lambda m: m.linalg.matrix_norm(m.ones(3, 3), ord=3)),
    (lambda m: m.linalg.norm(m.ones(3, 3, 3), ord=2)),
    (lambda m: m.linalg.multi_dot([m.ones(3)])),
    (lambda m: m.linalg.vecdot(m.ones(3), m.ones(3, dtype=m.float64))),
    (lambda m: m.matrix_power(m.ones(2, 3), 2)),
    (lambda m: m.addmm(m.ones(3), m.ones(2, 3), m.ones(3, 4))),
    (lambda m: m.linalg.solve(m.ones(2, 2, 2), m.ones(3, 2, 1))),
    (lambda m: m.cdist(m.ones(3, 2), m.ones(3, 3))),
    (lambda m: m.cdist(m.ones(3, 2), m.ones(3, 2), p=-1)),
    (lambda m: m.cdist(m.ones(3, 2, dtype=m.int64), m.ones(3, 2, dtype=m.int64))),
    (lambda m: m.einsum("ii->ii", m.ones(3, 3))),
    (lambda m: m.einsum("i", m.ones(3), m.ones(3))),
    (lambda m: m.linalg.qr(m.ones(2, 2), mode="full")),
    (lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(3, 2, dtype=m.float64))),
    (lambda m: m.linalg.eigh(m.ones(2, 2), UPLO="X")),
    (lambda m: m.linalg.solve_triangular(m.ones(2, 2), m.ones(3, 1), upper=True)),
    (lambda m: m.cholesky_solve(m.ones(3, 2), m.ones(2, 2))),
    (lambda m: m.linalg.multi_dot([m.ones(2, 3), m.ones(4, 2)])),
    (lambda m: m.linalg.multi_dot([m.ones(2, 3), m.ones(3, 2, dtype=m.float64)])),
    (lambda m: m.addmv(m.ones(3), m.ones(2, 3), m.ones(3))),
    (lambda m: m.addr(m.ones(3, 3), m.ones(2), m.ones(3))),
    (lambda m: m.addmm(m.ones(2, 4), m.ones(2, 3), m.ones(3, 4, dtype=m.float64))),
    (lambda m: m.addmm(m.ones(2, 4, dtype=m.float64), m.ones(2, 3), m.ones(3, 4))),
    (lambda m: m.linalg.matrix_norm(m.ones(3, 3), dim=(0, 0))),
    (lambda m: m.linalg.tensorinv(m.ones(4, 2, 3), ind=1)),
    (lambda m: m.linalg.inv_ex(m.ones(2, 2, dtype=m.int64))),
    (lambda m: m.linalg.pinv(m.ones(3, dtype=m.float64))),
    (lambda m: m.linalg.vecdot(m.ones(3, dtype=m.int64), m.ones(3, dtype=m.int64))),
    (lambda m: m.tensordot(m.ones(3, 2), m.ones(2, 3), dims=3)),
    (lambda m: m.linalg.vector_norm(m.ones(0, 3), math.inf, dim=0)),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_error_types_and_messages(case):
    fn = ERROR_CASES[case]
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as ee:
        fn(ember)
    assert isinstance(ee.value, RuntimeError) == isinstance(te.value, RuntimeError)
    assert isinstance(ee.value, NotImplementedError) == isinstance(te.value, NotImplementedError)
    assert str(ee.value).split("\n")[0] == str(te.value).split("\n")[0]


def test_linalg_error_class():
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.zeros(2, 2))
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)


def _products():
    r = _rng()
    n = r.standard_normal
    return [
        ("mm", lambda m, a, b: m.mm(a, b), [n((2, 3)), n((3, 4))]),
        ("bmm", lambda m, a, b: m.bmm(a, b), [n((2, 2, 3)), n((2, 3, 4))]),
        ("mv", lambda m, a, b: m.mv(a, b), [n((2, 3)), n(3)]),
        ("dot", lambda m, a, b: m.dot(a, b), [n(3), n(3)]),
        ("vdot", lambda m, a, b: m.vdot(a, b), [n(3), n(3)]),
        ("inner1", lambda m, a, b: m.inner(a, b), [n(3), n(3)]),
        ("inner", lambda m, a, b: m.inner(a, b), [n((2, 3)), n((4, 3))]),
        ("outer", lambda m, a, b: m.outer(a, b), [n(3), n(4)]),
        ("ger", lambda m, a, b: m.ger(a, b), [n(3), n(4)]),
        ("addmm", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2.0), [n(4), n((2, 3)), n((3, 4))]),
        ("addmm_b0", lambda m, c, a, b: m.addmm(c, a, b, beta=0), [n((2, 4)), n((2, 3)), n((3, 4))]),
        ("addmv", lambda m, c, a, b: m.addmv(c, a, b, beta=2, alpha=-1), [n(2), n((2, 3)), n(3)]),
        ("addr", lambda m, c, a, b: m.addr(c, a, b, alpha=3), [n((2, 4)), n(2), n(4)]),
        ("addbmm", lambda m, c, a, b: m.addbmm(c, a, b, beta=0.3), [n((2, 4)), n((5, 2, 3)), n((5, 3, 4))]),
        ("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b, alpha=0.7), [n((1, 4)), n((5, 2, 3)), n((5, 3, 4))]),
        ("tensordot2", lambda m, a, b: m.tensordot(a, b), [n((2, 3, 4)), n((3, 4, 5))]),
        ("tensordot_lists", lambda m, a, b: m.tensordot(a, b, dims=([0, 2], [1, 0])), [n((2, 3, 4)), n((4, 2))]),
        ("tensordot0", lambda m, a, b: m.tensordot(a, b, dims=0), [n((2, 3)), n(4)]),
        ("kron", lambda m, a, b: m.kron(a, b), [n((2, 3)), n((3, 2))]),
        ("kron_nd", lambda m, a, b: m.kron(a, b), [n(2), n((3, 2, 2))]),
        ("cross", lambda m, a, b: m.cross(a, b, dim=0), [n((3, 4)), n((3, 4))]),
        ("linalg_cross", lambda m, a, b: m.linalg.cross(a, b), [n((4, 3)), n((1, 3))]),
        ("trace", lambda m, a: m.trace(a), [n((3, 4))]),
        ("cdist2", lambda m, a, b: m.cdist(a, b), [n((4, 3)), n((5, 3))]),
        ("cdist2_mm", lambda m, a, b: m.cdist(a, b), [n((30, 3)), n((2, 3))]),
        ("cdist2_batch", lambda m, a, b: m.cdist(a, b), [n((2, 4, 3)), n((1, 5, 3))]),
        ("cdist1", lambda m, a, b: m.cdist(a, b, p=1), [n((4, 3)), n((5, 3))]),
        ("cdist3", lambda m, a, b: m.cdist(a, b, p=3), [n((4, 3)), n((5, 3))]),
        ("cdist_inf", lambda m, a, b: m.cdist(a, b, p=math.inf), [n((4, 3)), n((5, 3))]),
        ("chain", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [n((2, 5)), n((5, 3)), n((3, 4))]),
        ("multi_dot_vec", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [n(5), n((5, 3)), n(3)]),
        ("matrix_power3", lambda m, a: m.matrix_power(a, 3), [n((2, 3, 3))]),
        ("matrix_power_neg", lambda m, a: m.linalg.matrix_power(a, -2), [n((3, 3)) + 3 * np.eye(3)]),
        ("matrix_exp", lambda m, a: m.linalg.matrix_exp(a), [n((2, 3, 3))]),
        ("matrix_exp_big", lambda m, a: m.matrix_exp(a), [4 * n((4, 4))]),
        ("vecdot", lambda m, a, b: m.linalg.vecdot(a, b, dim=0), [n((3, 4)), n((3, 4))]),
    ]


@pytest.mark.parametrize("name,fn,arrays", _products(), ids=[p[0] for p in _products()])
def test_products_against_torch(name, fn, arrays):
    e, t = _pair(*arrays)
    _same(fn(ember, *e), fn(torch, *t), atol=1e-8)
    _grads_match(lambda *x: fn(ember, *x), lambda *x: fn(torch, *x), arrays, atol=1e-7)


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(5, 2, 3), (1, 3, 4)]), ("bi,bi->b", [(5, 3), (1, 3)]), ("i,j->ij", [(3,), (4,)]),
    ("i,i", [(3,), (3,)]), ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 2)]), ("iij->ij", [(3, 3, 2)]),
    ("i j -> i", [(3, 3)]), ("...i,...i->...", [(2, 3, 4), (4,)]), ("ab,cd->abcd", [(2, 3), (1, 2)]),
    ("iji->j", [(2, 3, 2)]), ("ba", [(2, 3)]), ("Ab,bC->AC", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_against_torch(eq, shapes):
    rng = _rng()
    arrays = [rng.standard_normal(s) for s in shapes]
    e, t = _pair(*arrays)
    _same(ember.einsum(eq, *e), torch.einsum(eq, *t), atol=1e-10)
    _same(ember.einsum(eq, e), torch.einsum(eq, t), atol=1e-10)
    _grads_match(lambda *x: ember.einsum(eq, *x), lambda *x: torch.einsum(eq, *x), arrays, atol=1e-10)


def test_einsum_integer_dtype():
    a = np.arange(6).reshape(2, 3)
    _same(ember.einsum("ij,kj->ik", ember.tensor(a), ember.tensor(a)), torch.einsum("ij,kj->ik", torch.tensor(a),
                                                                                   torch.tensor(a)))


# ---------------------------------------------------------------- ember.linalg
def _decomps():
    r = _rng(3)
    n = r.standard_normal
    return [
        ("inv", lambda m, a: m.linalg.inv(a), [n((3, 3)) + 3 * np.eye(3)]),
        ("inverse_batch", lambda m, a: m.inverse(a), [n((2, 3, 3)) + 3 * np.eye(3)]),
        ("inv_ex", lambda m, a: m.linalg.inv_ex(a).inverse, [n((3, 3)) + 3 * np.eye(3)]),
        ("det", lambda m, a: m.linalg.det(a), [n((2, 3, 3))]),
        ("det_top", lambda m, a: m.det(a), [n((4, 4))]),
        ("slogdet", lambda m, a: tuple(m.linalg.slogdet(a)), [n((2, 3, 3))]),
        ("logdet", lambda m, a: m.logdet(a), [_spd(r, 3)]),
        ("solve", lambda m, a, b: m.linalg.solve(a, b), [n((3, 3)) + 3 * np.eye(3), n((3, 2))]),
        ("solve_vec", lambda m, a, b: m.linalg.solve(a, b), [n((3, 3)) + 3 * np.eye(3), n(3)]),
        ("solve_batchvec", lambda m, a, b: m.linalg.solve(a, b), [n((2, 3, 3)) + 3 * np.eye(3), n((2, 3))]),
        ("solve_bcast", lambda m, a, b: m.linalg.solve(a, b), [n((3, 3)) + 3 * np.eye(3), n((2, 3, 4))]),
        ("solve_right", lambda m, a, b: m.linalg.solve(a, b, left=False), [n((3, 3)) + 3 * np.eye(3), n((2, 3))]),
        ("solve_tri_u", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
         [n((3, 3)) + 3 * np.eye(3), n((3, 2))]),
        ("solve_tri_l_right_unit", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                             unitriangular=True),
         [n((3, 3)), n((2, 3))]),
        ("triangular_solve", _quiet(lambda m, b, a: tuple(m.triangular_solve(b, a, upper=False, transpose=True))),
         [n((3, 2)), n((3, 3)) + 3 * np.eye(3)]),
        ("cholesky", lambda m, a: m.linalg.cholesky(a @ a.mT), [n((3, 3)) + 3 * np.eye(3)]),
        ("cholesky_upper", lambda m, a: m.linalg.cholesky(a @ a.mT, upper=True), [n((2, 3, 3)) + 3 * np.eye(3)]),
        ("cholesky_ex", lambda m, a: m.linalg.cholesky_ex(a @ a.mT).L, [n((3, 3)) + 3 * np.eye(3)]),
        ("cholesky_solve", lambda m, b, a: m.cholesky_solve(b, a), [n((3, 2)), np.tril(n((3, 3))) + 3 * np.eye(3)]),
        ("cholesky_inverse", lambda m, a: m.cholesky_inverse(a, upper=True), [np.triu(n((3, 3))) + 3 * np.eye(3)]),
        ("qr", lambda m, a: tuple(m.linalg.qr(a)), [n((4, 3))]),
        ("qr_square_batch", lambda m, a: tuple(m.linalg.qr(a)), [n((2, 3, 3))]),
        ("qr_wide", lambda m, a: tuple(m.linalg.qr(a)), [n((3, 5))]),
        ("qr_complete_wide", lambda m, a: tuple(m.linalg.qr(a, mode="complete")), [n((3, 5))]),
        ("qr_old", _quiet(lambda m, a: tuple(m.qr(a))), [n((4, 3))]),
        ("eigh", lambda m, a: _fix_eigh(m, m.linalg.eigh(a + a.mT)), [n((3, 3))]),
        ("eigh_U", lambda m, a: _fix_eigh(m, m.linalg.eigh(a + a.mT, UPLO="U")), [n((2, 3, 3))]),
        ("eigvalsh", lambda m, a: m.linalg.eigvalsh(a + a.mT), [n((4, 4))]),
        ("svd", lambda m, a: _fix_svd(m, m.linalg.svd(a, full_matrices=False)), [n((4, 3))]),
        ("svd_wide", lambda m, a: _fix_svd(m, m.linalg.svd(a, full_matrices=False)), [n((3, 5))]),
        ("svd_square", lambda m, a: _fix_svd(m, m.linalg.svd(a)), [n((2, 3, 3))]),
        ("svd_old", lambda m, a: _fix_svd(m, m.svd(a), old=True), [n((4, 3))]),
        ("svdvals", lambda m, a: m.linalg.svdvals(a), [n((4, 3))]),
        ("pinv", lambda m, a: m.linalg.pinv(a), [n((4, 3))]),
        ("pinv_wide", lambda m, a: m.linalg.pinv(a), [n((2, 3, 5))]),
        ("pinv_herm", lambda m, a: m.linalg.pinv(a @ a.mT, hermitian=True), [n((3, 3))]),
        ("pinverse", lambda m, a: m.pinverse(a), [n((3, 4))]),
        ("lstsq", lambda m, a, b: m.linalg.lstsq(a, b).solution, [n((5, 3)), n((5, 2))]),
        ("lstsq_batch", lambda m, a, b: m.linalg.lstsq(a, b).solution, [n((2, 5, 3)), n((2, 5, 2))]),
        ("vector_norm", lambda m, a: m.linalg.vector_norm(a), [n((3, 4))]),
        ("vector_norm1", lambda m, a: m.linalg.vector_norm(a, 1, dim=1), [n((3, 4))]),
        ("vector_norm_inf", lambda m, a: m.linalg.vector_norm(a, math.inf, dim=0, keepdim=True), [n((3, 4))]),
        ("vector_norm_ninf", lambda m, a: m.linalg.vector_norm(a, -math.inf), [n((3, 4))]),
        ("vector_norm3", lambda m, a: m.linalg.vector_norm(a, 3, dim=(0, 2)), [n((2, 3, 4))]),
        ("vector_norm_half", lambda m, a: m.linalg.vector_norm(a, 0.5), [n(5)]),
        ("vector_norm0", lambda m, a: m.linalg.vector_norm(a, 0), [n(5)]),
        ("matrix_norm_fro", lambda m, a: m.linalg.matrix_norm(a), [n((2, 3, 4))]),
        ("matrix_norm_nuc", lambda m, a: m.linalg.matrix_norm(a, "nuc"), [n((2, 3, 4))]),
        ("matrix_norm_2", lambda m, a: m.linalg.matrix_norm(a, 2), [n((3, 4))]),
        ("matrix_norm_m2", lambda m, a: m.linalg.matrix_norm(a, -2, keepdim=True), [n((3, 4))]),
        ("matrix_norm_1", lambda m, a: m.linalg.matrix_norm(a, 1), [n((2, 3, 4))]),
        ("matrix_norm_m1", lambda m, a: m.linalg.matrix_norm(a, -1), [n((3, 4))]),
        ("matrix_norm_inf", lambda m, a: m.linalg.matrix_norm(a, math.inf, dim=(0, 2)), [n((3, 2, 4))]),
        ("matrix_norm_ninf", lambda m, a: m.linalg.matrix_norm(a, -math.inf, keepdim=True), [n((3, 4))]),
        ("norm", lambda m, a: m.linalg.norm(a), [n((3, 4))]),
        ("norm_ord", lambda m, a: m.linalg.norm(a, 2), [n((3, 4))]),
        ("norm_vec", lambda m, a: m.linalg.norm(a, 3), [n(4)]),
        ("norm_dim", lambda m, a: m.linalg.norm(a, dim=1), [n((3, 4))]),
        ("norm_dims", lambda m, a: m.linalg.norm(a, "nuc", dim=(2, 0)), [n((3, 2, 4))]),
        ("cond", lambda m, a: m.linalg.cond(a), [n((3, 3))]),
        ("tensorinv", lambda m, a: m.linalg.tensorinv(a, ind=1), [n((4, 2, 2)).reshape(4, 2, 2) + 0]),
        ("tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b), [n((6, 2, 3)), n(6)]),
    ]


@pytest.mark.parametrize("name,fn,arrays", _decomps(), ids=[p[0] for p in _decomps()])
def test_linalg_against_torch(name, fn, arrays):
    e, t = _pair(*arrays)
    _same(fn(ember, *e), fn(torch, *t), atol=1e-7, rtol=1e-6)
    _grads_match(lambda *x: fn(ember, *x), lambda *x: fn(torch, *x), arrays, atol=1e-6, rtol=1e-5)


def test_float32_results_and_dtypes():
    rng = _rng()
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    e, t = ember.tensor(a), torch.tensor(a)
    for f in (lambda m, x: m.linalg.inv(x), lambda m, x: m.linalg.det(x), lambda m, x: m.linalg.norm(x),
              lambda m, x: m.linalg.svdvals(x), lambda m, x: m.linalg.eigvalsh(x + x.mT),
              lambda m, x: m.linalg.matrix_rank(x), lambda m, x: m.linalg.slogdet(x)[1],
              lambda m, x: m.linalg.vector_norm(x, dtype=m.float64), lambda m, x: m.trace(x.long()),
              lambda m, x: m.linalg.inv_ex(x).info, lambda m, x: m.linalg.cholesky_ex(x @ x.mT).info,
              lambda m, x: m.linalg.lstsq(x, x).rank):
        _same(f(ember, e), f(torch, t), atol=1e-4)


def test_complex_results():
    rng = _rng()
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    e, t = ember.tensor(a), torch.tensor(a)
    _same(ember.linalg.inv(e), torch.linalg.inv(t), atol=1e-10)
    _same(ember.linalg.det(e), torch.linalg.det(t), atol=1e-10)
    _same(ember.linalg.vector_norm(e), torch.linalg.vector_norm(t), atol=1e-10)
    _same(ember.linalg.svdvals(e), torch.linalg.svdvals(t), atol=1e-10)
    _same(ember.vdot(e.reshape(9), e.reshape(9)),
          torch.vdot(t.reshape(9), t.reshape(9)), atol=1e-10)
    w_e = np.sort_complex(ember.linalg.eigvals(e)._data)
    w_t = np.sort_complex(torch.linalg.eigvals(t).numpy())
    np.testing.assert_allclose(w_e, w_t, atol=1e-10)
    assert ember.linalg.eig(ember.tensor(a.real)).eigenvalues.dtype == ember.complex128
    assert ember.linalg.eigvals(ember.tensor(a.real.astype(np.float32))).dtype == ember.complex64


def test_named_tuple_fields():
    rng = _rng()
    a = rng.standard_normal((4, 3))
    sq = a[:3] + 3 * np.eye(3)
    e, t = ember.tensor(a), torch.tensor(a)
    es, ts = ember.tensor(sq), torch.tensor(sq)
    pairs = [
        (ember.linalg.svd(e), torch.linalg.svd(t)), (ember.svd(e), torch.svd(t)),
        (ember.linalg.qr(e), torch.linalg.qr(t)), 
        (ember.linalg.eigh(es), torch.linalg.eigh(ts)), (ember.linalg.slogdet(es), torch.linalg.slogdet(ts)),
        (ember.slogdet(es), torch.slogdet(ts)), (ember.linalg.lstsq(e, e), torch.linalg.lstsq(t, t)),
        (ember.linalg.inv_ex(es), torch.linalg.inv_ex(ts)),
        (ember.linalg.cholesky_ex(es @ es.mT), torch.linalg.cholesky_ex(ts @ ts.mT)),
        (ember.linalg.eig(es), torch.linalg.eig(ts)), (ember.linalg.solve_ex(es, es), torch.linalg.solve_ex(ts, ts)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        pairs += [(ember.triangular_solve(es, es), torch.triangular_solve(ts, ts)), (ember.qr(e), torch.qr(t))]
    for got, want in pairs:
        assert type(got).__name__ == type(want).__name__
        assert got._fields == tuple(f for f in dir(want) if not f.startswith("_") and f not in ("count", "index",
                                                                                                "n_fields",
                                                                                                "n_sequence_fields",
                                                                                                "n_unnamed_fields")
                                    ) or len(got) == len(want)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape)
            assert str(g.dtype).replace("ember", "torch") == str(w.dtype)


def test_lstsq_drivers_report_like_torch():
    rng = _rng()
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    for driver in (None, "gelsy", "gelsd", "gelss"):
        got = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
        want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        for g, w in zip(got, want):
            _same(g, w, atol=1e-8)


def test_gauge_invariant_decomposition_values():
    rng = _rng()
    a = rng.standard_normal((3, 5, 4))
    u, s, vh = ember.linalg.svd(ember.tensor(a), full_matrices=True)
    tu, ts, tvh = torch.linalg.svd(torch.tensor(a), full_matrices=True)
    assert tuple(u.shape) == tuple(tu.shape) and tuple(vh.shape) == tuple(tvh.shape)
    np.testing.assert_allclose(s._data, ts.numpy(), atol=1e-10)
    np.testing.assert_allclose(np.abs(u._data[..., :4]), np.abs(tu.numpy()[..., :4]), atol=1e-8)
    q, r = ember.linalg.qr(ember.tensor(a), mode="complete")
    tq, tr = torch.linalg.qr(torch.tensor(a), mode="complete")
    np.testing.assert_allclose(np.abs(r._data), np.abs(tr.numpy()), atol=1e-10)
    q, r = ember.linalg.qr(ember.tensor(a), mode="r")
    tq, tr = torch.linalg.qr(torch.tensor(a), mode="r")
    assert tuple(q.shape) == tuple(tq.shape)
    np.testing.assert_allclose(np.abs(r._data), np.abs(tr.numpy()), atol=1e-10)


def test_svd_full_matrices_gradient_uses_the_first_k_vectors_like_torch():
    a = _rng().standard_normal((4, 3))
    (e,), (t,) = _pair(a, requires_grad=True)
    ue, se, _ = ember.linalg.svd(e)
    ut, st, _ = torch.linalg.svd(t)
    w = _rng(2).standard_normal((4, 4))
    w[:, 3] = 0  # the fourth column of U is not unique, so only its zero weight is comparable
    sg = _signs(ut[:, :3], -2)
    wt = torch.tensor(w * np.concatenate([sg, [[1.0]]], -1))
    we = ember.tensor(w * np.concatenate([_signs(ue._data[:, :3], -2), [[1.0]]], -1))
    ((ue * we).sum() + se.sum()).backward()
    ((ut * wt).sum() + st.sum()).backward()
    np.testing.assert_allclose(_np(e.grad), _np(t.grad), atol=1e-8)


def test_svd_compute_uv_false_and_some_false():
    a = _rng().standard_normal((4, 3))
    for kw in ({"compute_uv": False}, {"some": False}):
        got, want = ember.svd(ember.tensor(a), **kw), torch.svd(torch.tensor(a), **kw)
        for g, w in zip(got, want):
            assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(got.S._data, want.S.numpy(), atol=1e-10)


def test_matrix_rank_and_pinv_tolerances():
    rng = _rng()
    a = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 4))
    e, t = ember.tensor(a), torch.tensor(a)
    for kw in ({}, {"atol": 1.0}, {"rtol": 0.5}, {"hermitian": False}):
        assert ember.linalg.matrix_rank(e, **kw).item() == torch.linalg.matrix_rank(t, **kw).item()
        _same(ember.linalg.pinv(e, **kw), torch.linalg.pinv(t, **kw), atol=1e-8)
    h = a @ a.T
    assert ember.linalg.matrix_rank(ember.tensor(h), hermitian=True).item() == \
        torch.linalg.matrix_rank(torch.tensor(h), hermitian=True).item()


def test_norm_gradient_at_zero_like_torch():
    for ord in (2, 1, math.inf, 3, 0.5):
        e = ember.zeros(3, requires_grad=True)
        t = torch.zeros(3, requires_grad=True)
        ember.linalg.vector_norm(e, ord).backward()
        torch.linalg.vector_norm(t, ord).backward()
        np.testing.assert_allclose(_np(e.grad), _np(t.grad))


def test_det_gradient_of_singular_matrix():
    # ember returns the cofactor matrix (the true derivative); torch 2.x returns zeros for an exactly singular A
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])
    e = ember.tensor(a, requires_grad=True)
    ember.linalg.det(e).backward()
    np.testing.assert_allclose(e.grad._data, [[14, -10, 2], [-7, 5, -1], [0, 0, 0]], atol=1e-10)
    t = torch.tensor(a, requires_grad=True)
    torch.linalg.det(t).backward()
    assert torch.linalg.det(t).item() == ember.linalg.det(e).item() == 0


def test_cross_without_dim_warns_like_torch():
    a = _rng().standard_normal((3, 3))
    import ember._ops._linalg_util as la
    la._WARNED.discard("cross")
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        r = ember.cross(ember.tensor(a), ember.tensor(a[::-1].copy()))
    with warnings.catch_warnings():  # torch warns once per process: another test may have seen it already
        warnings.simplefilter("ignore")
        want = torch.cross(torch.tensor(a), torch.tensor(a[::-1].copy()))
    _same(r, want, atol=1e-12)
