"""Reductions and scans against PyTorch: result dtypes for every input dtype, values, errors, gradients."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]

# expressions of `x` (a 2x3 tensor of the dtype under test), run under both libraries as `L`
DTYPE_OPS = [
    "x.sum()", "x.sum(1)", "x.sum(dtype=L.float64)", "x.prod()", "x.prod(0)", "x.mean()", "x.mean(dtype=L.float32)",
    "x.nansum()", "x.nanmean()", "x.max()", "x.max(1)", "x.min(0, True)", "x.amax()", "x.amin(1)", "x.argmax()",
    "x.argmin(1)", "L.aminmax(x)", "x.std()", "x.var(1)", "L.std_mean(x)", "x.logsumexp(0)", "x.norm()",
    "x.norm(p=1, dim=1)", "x.all()", "x.any(1)", "x.count_nonzero()", "x.cumsum(0)", "x.cumprod(1)",
    "x.cumsum(0, dtype=L.float32)", "x.cummax(0)", "x.cummin(1)", "x.logcumsumexp(0)", "x.median()", "x.median(1)",
    "x.nanmedian()", "x.mode()", "x.quantile(0.5)", "x.nanquantile(0.5, 1)",
]

VALUES = [[1, 0, 3], [2, 2, 1]]


def _inputs(dt):
    tt = torch.tensor(VALUES).to(getattr(torch, dt))
    et = ember.tensor(VALUES).to(getattr(ember, dt))
    return tt, et


def _np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.resolve_conj().numpy()
    t = t.detach()
    if t.dtype is ember.bfloat16:
        t = t.float()
    return np.asarray(t.numpy())


def _run(lib, expr, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            return eval(expr, {"L": lib, "x": x, "inf": float("inf"), "nan": float("nan")})
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            return e


def _assert_same(rt, re, expr, rtol=1e-5, atol=1e-6, messages=True):
    if isinstance(rt, Exception):
        assert isinstance(re, Exception), f"{expr}: torch raised {rt!r}, ember returned {re!r}"
        assert type(re).__name__ == type(rt).__name__, f"{expr}: {re!r} vs torch {rt!r}"
        if messages:
            assert str(re).split("\n")[0] == str(rt).split("\n")[0], f"{expr}: {re} vs torch {rt}"
        return
    assert not isinstance(re, Exception), f"{expr}: ember raised {re!r}, torch returned {rt!r}"
    if isinstance(rt, tuple):
        assert isinstance(re, tuple) and len(re) == len(rt), expr
        if hasattr(rt, "_fields"):
            assert type(re).__name__ == type(rt).__name__ and re._fields == rt._fields, expr
        for a, b in zip(rt, re):
            _assert_same(a, b, expr, rtol, atol, messages)
        return
    assert str(re.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1], f"{expr}: {re.dtype} vs torch {rt.dtype}"
    assert tuple(re.shape) == tuple(rt.shape), f"{expr}: shape {tuple(re.shape)} vs torch {tuple(rt.shape)}"
    a, b = _np(rt), _np(re)
    if a.dtype.kind in "biu":
        np.testing.assert_array_equal(b, a, err_msg=expr)
    else:
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True, err_msg=expr)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("expr", DTYPE_OPS)
def test_result_dtypes_values_and_errors(expr, dt):
    tt, et = _inputs(dt)
    low = dt in ("float16", "bfloat16")
    # torch's unsupported-dtype messages name internal kernels; the exception type is what callers catch
    _assert_same(_run(torch, expr, tt), _run(ember, expr, et), f"{expr} [{dt}]", rtol=1e-2 if low else 1e-5,
                 atol=1e-2 if low else 1e-6, messages=False)


# expressions of a float64 3x4x5 tensor `x`
VALUE_CASES = [
    "x.sum((0, 2), True)", "x.mean(-1)", "x.nansum(1)", "L.nanmean(x, (0, 1), True)", "x.prod(2)", "x.prod(-1, True)",
    "x.max(1)", "x.min(2, keepdim=True)", "x.amax((0, 2))", "x.amin(-1, True)", "x.argmax(1)", "x.argmin(keepdim=True)",
    "L.aminmax(x, dim=0)", "L.aminmax(x, dim=-1, keepdim=True)", "x.std(1)", "x.var((0, 2), keepdim=True)",
    "x.var(1, False)", "x.var(correction=2)", "x.std(0, True, True)", "L.std_mean(x, 1)",
    "L.var_mean(x, (0, 1), correction=0, keepdim=True)", "x.logsumexp(1)", "L.logsumexp(x, (0, 2), True)",
    "x.norm()", "x.norm(1)", "x.norm(inf, 1)", "x.norm(-inf, (0, 2))", "x.norm(0, 1)", "x.norm(3, 1, True)",
    "x.norm(0.5)", "x.norm(-1, 2)", "x.norm('fro', (1, 2))", "L.norm(x, dim=2, dtype=L.float64)", "x.all(1)",
    "L.norm(x, 'nuc', (1, 2))", "x.norm('nuc', (2, 0), True)",
    "x.any((0, 1), True)", "L.count_nonzero(x, (0, 2))", "x.cumsum(1)", "x.cumprod(-1)", "x.cummax(2)",
    "x.cummin(0)", "x.logcumsumexp(1)", "x.median()", "x.median(1)", "x.median(0, True)", "x.nanmedian(2)",
    "x.round().mode(1)", "x.round().mode(0, True)", "x.quantile(0.3)", "x.quantile(0.3, 1)",
    "x.quantile(L.tensor([0.1, 0.5, 0.9], dtype=L.float64), 1, True)",
    "x.quantile(L.tensor([0.1, 0.5, 0.9], dtype=L.float64), keepdim=True)",
    "x.quantile(0.25, 2, interpolation='lower')", "x.quantile(0.25, 2, interpolation='higher')",
    "x.quantile(0.25, 2, interpolation='nearest')", "x.quantile(0.25, 2, interpolation='midpoint')",
    "x.nanquantile(0.6, 0)", "L.max(x, x.flip(0))", "L.min(x, 0.5 * x)",
    # edge values
    "L.tensor([1., nan, 3.]).max()", "L.tensor([1., nan, 3.]).max(0)", "L.tensor([1., nan, 3.]).argmin()",
    "L.tensor([1., nan, 3.]).median(0)", "L.tensor([1., nan, 3.]).nanmedian(0)", "L.tensor([nan, nan]).nanmedian(0)",
    "L.tensor([1., nan, 3.]).cummax(0)", "L.tensor([1., nan, 3.]).cummin(0)", "L.tensor([1., nan, 3.]).quantile(0.5)",
    "L.tensor([1., nan, 3.]).nanquantile(0.5)", "L.tensor([1., nan, 3.]).aminmax()", "L.tensor([1., nan]).nanmean()",
    "L.tensor([nan]).nanmean()", "L.tensor([nan]).nansum()", "L.tensor([2., 1., 2., 1., 3.]).mode()",
    "L.tensor([[1., 1, 2], [2, 3, 3]]).mode()", "L.tensor([1., 3., 3., 1., 3., 1.]).cummax(0)",
    "L.tensor([3., 1., 1., 3., 1., 3.]).cummin(0)", "L.tensor([1., 2., 2., 2., 3.]).median(0)",
    "L.tensor([2., 2., 1., 2., 3.]).median(0)", "L.tensor([-inf, -inf]).logsumexp(0)",
    "L.tensor([inf, 1.]).logsumexp(0)", "L.tensor([-inf, -inf]).logcumsumexp(0)",
    "L.tensor([1., 2.]).var(correction=3)",
    "L.tensor([1., 1.]).var(correction=3)",
    "L.tensor([0., 1, 2, 3]).quantile(L.tensor([1/6, 0.5, 5/6]), interpolation='nearest')",
    "L.tensor([0.5, 0.5]).prod(dtype=L.int64)", "L.ones(20_000_000).cumsum(0)[-1]",
    "L.full((5000,), 0.1, dtype=L.float16).cumsum(0)[-1]", "L.full((5000,), 0.1, dtype=L.bfloat16).sum()",
    "L.tensor([1+1j, 2-1j, -1+0.5j]).var()", "L.tensor([1+1j, 2-1j, -1+0.5j]).norm()",
    "L.tensor([1+1j, 2-1j]).cumsum(0)", "L.tensor([1+1j, 2-1j]).prod()",
    # empty and zero-dim tensors
    "L.empty(0).sum()", "L.empty(0).prod()", "L.empty(0).mean()", "L.empty(0).median()", "L.empty(0).norm()",
    "L.empty(0).all()", "L.empty(0).any()", "L.empty(0).count_nonzero()", "L.empty(0).nanmedian()",
    "L.empty(0).logsumexp(0)", "L.empty(0).cummax(0)", "L.empty(0).logcumsumexp(0)", "L.empty(0).nanmean()",
    "L.empty(0, 3).max(1)", "L.empty(0, 3).amax(1)", "L.empty(2, 0, 3).amax((0, 2))", "L.empty(3, 0).prod(1)",
    "L.empty(0, 3).std(0)", "L.empty(0, 3).argmax(1)", "L.empty(0, 3).median(1)", "L.empty(0, 3).mode(1)",
    "L.empty(0, 3).aminmax(dim=1)", "L.empty(0, 3).norm(inf, 1)", "L.empty(0, 3).cummax(0)",
    "L.tensor(5.).sum(0)", "L.tensor(5.).max(0)", "L.tensor(5.).argmax(0, True)", "L.tensor(5.).amax(0, True)",
    "L.tensor(5.).aminmax(dim=0)", "L.tensor(5.).median(0, True)", "L.tensor(5.).mode()", "L.tensor(5.).cummax(0)",
    "L.tensor(5.).logcumsumexp(0)", "L.tensor(5.).cumprod(-1)", "L.tensor(5.).prod(0)", "L.tensor(5.).std(0)",
    "L.tensor(5.).all(0)", "L.tensor(5.).count_nonzero(0)", "L.tensor(5.).norm(dim=0)", "L.tensor(5.).logsumexp(0)",
    "L.tensor(5.).quantile(0.5, 0)", "L.tensor(5.).quantile(L.tensor([0.5]))",
    "L.tensor([[1, 0], [3, 0]], dtype=L.uint8).all(())", "x.all(())",
]

ERROR_CASES = [
    "L.empty(0).max()", "L.empty(0).min()", "L.empty(0).amax()", "L.empty(0).argmax()", "L.empty(0, 3).max(0)",
    "L.empty(0, 3).min(0, True)", "L.empty(0, 3).amax((0, 1))", "L.empty(2, 0, 3).amax((2, 1))",
    "L.empty(0, 3).argmin(0)", "L.empty(0).aminmax()", "L.empty(0, 3).aminmax(dim=0)", "L.empty(0, 3).median(0)",
    "L.empty(0, 3).nanmedian(0)", "L.empty(0).mode()", "L.empty(0, 3).mode(0)", "L.empty(0).quantile(0.5)",
    "L.empty(0).norm(inf)", "L.empty(0).norm(-inf)", "L.empty(0, 3).norm(inf, 0)", "L.empty(0, 3).norm(-1)",
    "L.empty(0, 3).norm(-1, 0)", "x.sum((0, 0))", "x.sum((0, -3))", "x.amax((0, -3))", "x.sum(3)", "x.max(3)",
    "x.cumsum(-4)", "L.tensor(5.).sum(1)", "L.tensor(5.).max(1)", "x.mean(dtype=L.int32)", "x.long().mean()",
    "x.bool().mean()", "x.long().nanmean()", "x.long().std()", "x.bool().argmax()", "x.cfloat().argmax()",
    "x.long().norm()", "x.norm(dtype=L.int32)", "x.norm(dim=2, dtype=L.float32)", "x.norm(p='abc')",
    "x.norm(p='nuc', dim=1)", "x.norm(p='fro', dim=(0, 1, 1))", "L.tensor(2.).norm(p='nuc')", "x.quantile(1.5)",
    "x.quantile(L.tensor([-0.5], dtype=L.float64))", "x.quantile(L.tensor([[0.5]], dtype=L.float64))",
    "x.quantile(L.tensor([0.5]))", "x.float().quantile(0.5)".replace("float", "half"),
    "x.quantile(0.5, interpolation='foo')", "x.long().quantile(0.5)", "x.long().logcumsumexp(0)",
]


@pytest.mark.parametrize("expr", VALUE_CASES)
def test_values_match_torch(expr):
    a = np.random.default_rng(0).standard_normal((3, 4, 5))
    _assert_same(_run(torch, expr, torch.tensor(a)), _run(ember, expr, ember.tensor(a)), expr)


@pytest.mark.parametrize("expr", ERROR_CASES)
def test_errors_match_torch(expr):
    a = np.random.default_rng(0).standard_normal((3, 4, 5))
    rt = _run(torch, expr, torch.tensor(a))
    assert isinstance(rt, Exception), expr
    _assert_same(rt, _run(ember, expr, ember.tensor(a)), expr)


def test_degrees_of_freedom_warning_matches_torch():
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match=r"std\(\): degrees of freedom is <= 0. Correction should be strictly "
                                             r"less than the reduction factor"):
            lib.tensor([1.0]).std()


NAN = float("nan")
A = np.random.default_rng(1).standard_normal((3, 4, 5))
A_NAN = np.where(A > 1, NAN, A)
ZEROS = np.array([[2.0, 0.0, 3.0], [1.0, 2.0, 3.0], [0.0, 0.0, 1.0], [0.0, 4.0, 5.0]])

# (expression of x, input); the gradient of sum(f(x) * weights) is compared
GRAD_CASES = [
    ("x.sum()", A), ("x.sum((0, 2))", A), ("x.sum(1, True)", A), ("x.mean()", A), ("x.mean((1, 2), True)", A),
    ("L.nansum(x, 1)", A_NAN), ("L.nanmean(x, 1)", A_NAN), ("L.nanmean(x)", A_NAN),
    ("x.prod()", A[0]), ("x.prod(1)", A), ("x.prod(2, True)", A), ("x.prod()", np.array([2.0, 0.0, 3.0])),
    ("x.prod()", np.array([2.0, 0.0, 0.0])), ("x.prod(1)", ZEROS), ("x.prod(0)", ZEROS),
    ("x.max()", A), ("x.max()", np.array([1.0, 3.0, 3.0])), ("x.max(1).values", A), ("x.min(2, True)[0]", A),
    ("x.amax((0, 2))", A), ("x.amin(1, True)", A), ("x.amax()", np.array([[1.0, 3.0, 3.0], [3.0, 0.0, 1.0]])),
    ("x.amax(1)", np.array([[1.0, 3.0, 3.0], [3.0, 0.0, 1.0]])), ("x.amax()", np.array([NAN, 2.0, NAN])),
    ("x.max()", np.array([NAN, 2.0, NAN, NAN])), ("L.aminmax(x, dim=1)[0] + 2 * L.aminmax(x, dim=1)[1]", A),
    ("L.aminmax(x).max", np.array([1.0, 3.0, 3.0])),
    ("x.std()", A), ("x.std(1)", A), ("x.var((0, 2), keepdim=True)", A), ("x.var(1, correction=0)", A),
    ("x.std()", np.array([1.0, 1.0])), ("x.var()", np.array([3.0])), ("x.std(0)", np.array([[1.0, 2.0], [1.0, 4.0]])),
    ("L.std_mean(x, 1)[0] + L.std_mean(x, 1)[1]", A), ("L.var_mean(x)[1]", A), ("L.var_mean(x, 0, keepdim=True)[0]", A),
    ("x.logsumexp(1)", A), ("x.logsumexp((0, 1), True)", A), ("x.logsumexp(0)", np.array([-np.inf, -np.inf])),
    ("x.logsumexp(0)", np.array([np.inf, 1.0])),
    ("x.norm()", A), ("x.norm(dim=1)", A), ("x.norm(p=1, dim=2)", A), ("x.norm(p=inf, dim=1)", A),
    ("x.norm(p=-inf)", A), ("x.norm(p=3, dim=(0, 1))", A), ("x.norm(p=0.5)", A), ("x.norm()", np.zeros(3)),
    ("x.norm(p=1)", np.zeros(3)), ("x.norm(p=inf)", np.zeros(3)), ("x.norm(p=3)", np.zeros(3)),
    ("x.norm(p=0.5)", np.array([0.0, 1.0, 2.0])), ("x.norm(p=3)", np.array([0.0, -1.0, 2.0])),
    ("x.norm(p=-1)", np.array([0.0, -1.0, 2.0])), ("x.norm(p=inf)", np.array([2.0, -1.0, -2.0])),
    ("x.cumsum(1)", A), ("x.cumsum(-1)", A), ("x.cumprod(1)", A), ("x.cumprod(0)", np.array([2.0, 0.0, 3.0, 0.0, 5.0])),
    ("x.cumprod(1)", ZEROS), ("x.cummax(1).values", A), ("x.cummin(2)[0]", A),
    ("x.cummax(0).values", np.array([1.0, 3.0, 3.0, 2.0])), ("x.logcumsumexp(1)", A),
    ("x.logcumsumexp(0)", np.array([-np.inf, -np.inf])),
    ("x.median()", A), ("x.median(1).values", A), ("x.median()", np.array([1.0, 2.0, 2.0, 3.0])),
    ("x.nanmedian()", np.array([1.0, NAN, 1.0, 3.0])), ("x.nanmedian(1)[0]", A_NAN),
    ("x.median()", np.array([NAN, 2.0, NAN, NAN])), ("x.mode(1).values", np.round(A)),
    ("x.quantile(0.3)", A), ("x.quantile(L.tensor([0.1, 0.5, 0.9], dtype=L.float64), 1)", A),
    ("x.quantile(0.5)", np.array([1.0, 2.0, 2.0, 3.0])), ("x.quantile(0.3, 2, interpolation='midpoint')", A),
    ("x.quantile(0.3, 2, True, interpolation='nearest')", A), ("x.nanquantile(0.4, 1)", A_NAN),
    ("L.max(x, x.flip(-1))", A),
]


def _grads(lib, expr, a, create_graph=False):
    x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # var() of one element warns in both
        y = eval(expr, {"L": lib, "x": x, "inf": float("inf")})
    w = lib.tensor(np.linspace(-1, 2, max(y.numel(), 1)).reshape(tuple(y.shape)), dtype=lib.float64)
    (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=create_graph, allow_unused=True)
    return g


@pytest.mark.parametrize("expr, a", GRAD_CASES, ids=[f"{e}-{i}" for i, (e, _) in enumerate(GRAD_CASES)])
def test_gradients_match_torch(expr, a):
    gt, ge = _grads(torch, expr, a), _grads(ember, expr, a)
    assert (gt is None) == (ge is None), expr
    if gt is not None:
        np.testing.assert_allclose(_np(ge), _np(gt), rtol=1e-6, atol=1e-8, equal_nan=True, err_msg=expr)


SECOND_ORDER = [
    ("x.prod()", np.array([2.0, 0.0, 3.0, -1.5])), ("x.prod(1)", ZEROS), ("x.cumprod(1)", ZEROS),
    ("x.cumprod(0)", np.array([2.0, 0.0, 3.0, 0.0, 5.0, -1.5])), ("x.var(1)", A[0]), ("x.std()", A[0]),
    ("x.logsumexp(1)", A[0]), ("x.norm(dim=1)", A[0]), ("x.norm(p=3)", A[0]), ("x.logcumsumexp(1)", A[0]),
    ("x.cumsum(1) ** 2", A[0]), ("x.max(1).values ** 2", A[0]), ("x.median(0).values ** 3", A[0]),
]


@pytest.mark.parametrize("expr, a", SECOND_ORDER, ids=[e for e, _ in SECOND_ORDER])
def test_second_derivatives_match_torch(expr, a):
    def hess(lib):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = eval(expr, {"L": lib, "x": x})
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        w = lib.tensor(np.linspace(-1, 1, g.numel()).reshape(tuple(g.shape)), dtype=lib.float64)
        (h,) = lib.autograd.grad((g * w).sum(), x, allow_unused=True)
        return h
    ht, he = hess(torch), hess(ember)
    np.testing.assert_allclose(_np(he), _np(ht), rtol=1e-6, atol=1e-8, equal_nan=True, err_msg=expr)
