"""Creation functions against PyTorch: values, dtypes, shapes and errors of the same expressions."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(mod, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(expr, {"torch": mod, "np": np, "inf": float("inf"), "nan": float("nan")}), None
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            return None, e


def _as_numpy(x):
    if isinstance(x, torch.Tensor):
        x = x.detach()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    d = x.detach().numpy()
    return d.astype(np.float32) if d.dtype.kind == "V" else d


def _same_dtype(t, e):
    return str(t.dtype).replace("torch.", "") == e.dtype.name


def check_same(expr, rtol=0.0, atol=0.0, message=True):
    t, te = _run(torch, expr)
    e, ee = _run(ember, expr)
    if te is not None:
        assert ee is not None, f"{expr}: torch raised {te!r}, ember returned {e!r}"
        assert type(ee) is type(te) or isinstance(ee, type(te)), f"{expr}: {te!r} vs {ee!r}"
        if message:
            assert str(ee).replace("ember", "torch") == str(te), f"{expr}: {te} vs {ee}"
        return
    assert ee is None, f"{expr}: ember raised {ee!r}, torch returned {t!r}"
    assert isinstance(e, ember.Tensor)
    assert _same_dtype(t, e), f"{expr}: {t.dtype} vs {e.dtype}"
    assert tuple(t.shape) == tuple(e.shape), f"{expr}: {tuple(t.shape)} vs {tuple(e.shape)}"
    assert t.requires_grad == e.requires_grad
    np.testing.assert_allclose(_as_numpy(e), _as_numpy(t), rtol=rtol, atol=atol, equal_nan=True, err_msg=expr)


DATA_CASES = [
    "torch.tensor(1.5)", "torch.tensor(3)", "torch.tensor(True)", "torch.tensor(1+2j)", "torch.tensor([])",
    "torch.tensor([[]])", "torch.tensor([[1, 2], [3, 4]])", "torch.tensor([1, 2.5])", "torch.tensor([True, 2])",
    "torch.tensor([1.5, True])", "torch.tensor([1, 2j])", "torch.tensor(((1, 2), [3, 4]))",
    "torch.tensor(range(5))", "torch.tensor([np.float64(1.0)])", "torch.tensor(np.float64(1.5))",
    "torch.tensor(np.float32(1.5))", "torch.tensor([np.int32(1)])", "torch.tensor([np.int32(1), 2.5])",
    "torch.tensor([np.float16(1), 1.5])", "torch.tensor([np.float16(1), np.float16(1.5)])",
    "torch.tensor([np.float64(1), 1+1j])", "torch.tensor([np.float32(1), 1+1j])", "torch.tensor([np.int8(1), True])",
    "torch.tensor([np.uint8(1), np.int8(1)])", "torch.tensor([torch.tensor(1, dtype=torch.int32), 2])",
    "torch.tensor([torch.tensor(1, dtype=torch.int32)] * 2)", "torch.tensor([torch.tensor(1., dtype=torch.float64), 2])",
    "torch.tensor([torch.tensor([1.])])", "torch.tensor([[torch.tensor(1.)], [2]])",
    "torch.tensor([torch.tensor(1+1j), 2.])", "torch.tensor(np.arange(6.).reshape(2, 3))",
    "torch.tensor(np.arange(6, dtype=np.int16))", "torch.tensor(np.array([True, False]))",
    "torch.tensor([np.array([1., 2.]), np.array([3., 4.])])", "torch.tensor(np.array(3.))",
    "torch.tensor(np.array([1, 2]), dtype=torch.float16)", "torch.tensor(np.array([1.7, -2.7]), dtype=torch.int32)",
    "torch.tensor([1.5], dtype=torch.int64)", "torch.tensor([-1.5, 2.5], dtype=torch.int8)",
    "torch.tensor([-1], dtype=torch.uint8)", "torch.tensor([-129], dtype=torch.uint8)",
    "torch.tensor([1e40], dtype=torch.float32)", "torch.tensor([2 ** 70 * 1.0])", "torch.tensor(2 ** 40)",
    "torch.tensor([0.5, 0.], dtype=torch.bool)", "torch.tensor([[1, 2], [3, 4]], dtype=torch.float64)",
    "torch.tensor(5, dtype=torch.complex64)", "torch.tensor([1, 2], dtype=torch.bfloat16)",
    "torch.tensor([[1., 2.]], requires_grad=True)", "torch.tensor(3, dtype=torch.int16)",
    "torch.tensor(torch.ones(2, 3))", "torch.tensor(torch.ones(2), dtype=torch.int64)",
    "torch.tensor(np.array([1 + 1j]), dtype=torch.float32)",
    # errors
    "torch.tensor([[1, 2], [3]])", "torch.tensor([[[1], [2]], [[3], [4, 5]]])", "torch.tensor([None])",
    "torch.tensor(None)", "torch.tensor('abc')", "torch.tensor([1, 'a'])", "torch.tensor([[1, 2], [3, 'a']])",
    "torch.tensor({1: 2})", "torch.tensor(object())", "torch.tensor([torch.tensor([1., 2.]), torch.tensor([3., 4.])])",
    "torch.tensor(2 ** 63)", "torch.tensor([2 ** 64])", "torch.tensor([128], dtype=torch.int8)",
    "torch.tensor([300], dtype=torch.uint8)", "torch.tensor([1e10], dtype=torch.int32)",
    "torch.tensor([nan], dtype=torch.int32)", "torch.tensor([1 + 1j], dtype=torch.float32)",
    "torch.tensor([1, 2], requires_grad=True)", "torch.tensor(np.array(['a']))",
    "torch.tensor(np.array([1, 2], dtype=object))", "torch.tensor(np.zeros(3, dtype='>f4'))",
    "torch.tensor([1, 2], dtype=np.float32)", "torch.tensor([1, 2], dtype='float32')",
    "torch.tensor([1.5], dtype=torch.int64, requires_grad=True)",
]

FILLED_CASES = [
    "torch.zeros(2, 3)", "torch.zeros((2, 3))", "torch.zeros([2, 3])", "torch.zeros(torch.Size([2, 3]))",
    "torch.zeros(())", "torch.zeros([])", "torch.zeros(0, 3)", "torch.zeros(np.int64(3))",
    "torch.zeros(torch.tensor(3))", "torch.ones(2, dtype=torch.int32)", "torch.ones(2, 2, dtype=torch.bool)",
    "torch.ones(3, dtype=torch.complex128)", "torch.ones(2, requires_grad=True)", "torch.zeros(2, 3)", "torch.full((2,), 1)", "torch.full((2,), True)", "torch.full((2,), 1 + 1j)",
    "torch.full([2], torch.tensor(1.5))", "torch.full((2, 3), 7, dtype=torch.float16)", "torch.full((2,), 2.5)",
    "torch.full((2,), 2.5, dtype=torch.int64)", "torch.full((), -1, dtype=torch.uint8)",
    "torch.zeros_like(torch.ones(2, 3, dtype=torch.int8))", "torch.ones_like(torch.ones(2), dtype=torch.float64)",
    "torch.full_like(torch.ones(2, dtype=torch.int64), 2.7)",
    "torch.full_like(torch.ones(2, dtype=torch.int64), 2.7, dtype=torch.float32)",
    "torch.zeros_like(torch.ones(2, requires_grad=True))", "torch.ones_like(torch.ones(2), requires_grad=True)",
    "torch.empty_like(torch.ones(2, 3, dtype=torch.int16)).shape and torch.zeros(1)",
    "torch.zeros(2, 3, out=torch.empty(6))", "torch.ones(2, out=torch.empty(2, dtype=torch.int64))",
    "torch.ones(2).new_tensor([1, 2])", "torch.ones(2).new_zeros(3)", "torch.ones(2).new_zeros((3, 4))",
    "torch.ones(2).new_zeros(3, 4)", "torch.ones(2).new_ones(2, dtype=torch.int64)", "torch.ones(2).new_full((3,), 2)",
    "torch.ones(2, dtype=torch.int32).new_tensor([1.5])", "torch.ones(2, requires_grad=True).new_zeros(2)",
    "torch.ones(2, dtype=torch.float64).new_full((2, 2), 1 + 0j, dtype=torch.complex128)",
    "torch.scalar_tensor(3)", "torch.scalar_tensor(True)", "torch.scalar_tensor(3, dtype=torch.int64)",
    "torch.empty_strided((2, 3), (1, 2)).zero_()", "torch.ones(3).fill_(2)", "torch.ones(3).fill_(torch.tensor(2.5))",
    "torch.ones(2, dtype=torch.int64).fill_(2.7)", "torch.ones(2, dtype=torch.uint8).fill_(-1)",
    "torch.ones(2, dtype=torch.bool).fill_(5)", "torch.ones(2).fill_(nan)", "torch.ones(2, 2).zero_()",
    # errors
    "torch.zeros(2, -1)", "torch.ones(2, -1)", "torch.empty(2, -1)", "torch.full((2, -1), 1.)", "torch.zeros(-2)",
    "torch.zeros(2.5)", "torch.zeros([2, 1.5])", "torch.full(2, 1.)", "torch.full((2,), 300, dtype=torch.uint8)",
    "torch.full((2,), 1 + 1j, dtype=torch.float32)", "torch.zeros(2, dtype=torch.int64, requires_grad=True)",
    "torch.ones(2).new_zeros(2, -1)", "torch.empty_strided((2, 3), (3,))", "torch.ones(2).fill_(torch.ones(2))",
    "torch.ones(2).fill_(1 + 1j)", "torch.ones(2, dtype=torch.uint8).fill_(300)", "torch.ones(2).fill_(1e300)",
    "torch.ones(2, dtype=torch.float16).fill_(1e6)", "torch.ones(2, dtype=torch.int64).fill_(2 ** 63)",
    "torch.ones(2, requires_grad=True).fill_(1.)", "torch.ones(2, requires_grad=True).zero_()",
]

RANGE_CASES = [
    "torch.arange(5)", "torch.arange(1, 4)", "torch.arange(0, 1, 0.1)", "torch.arange(0.5, 5)",
    "torch.arange(-1, -5, -1)", "torch.arange(5, dtype=torch.float64)", "torch.arange(0, 5, 1.5, dtype=torch.int64)",
    "torch.arange(0.5, 5, 1, dtype=torch.int64)", "torch.arange(0, 5, 1.5, dtype=torch.int32)",
    "torch.arange(torch.tensor(5))", "torch.arange(torch.tensor(5.0, dtype=torch.float64))", "torch.arange(True)",
    "torch.arange(np.int32(4))", "torch.arange(np.float64(4))", "torch.arange(5, dtype=torch.uint8)",
    "torch.arange(0.5, 2.7, 0.3, dtype=torch.float16)", "torch.arange(0.5, 2.7, 0.3, dtype=torch.bfloat16)",
    "torch.arange(1e20, 1e20 + 1)", "torch.arange(10, 0, -3)", "torch.arange(-3.3, 7.1, 0.7)",
    "torch.arange(0, -1, -0.01)", "torch.arange(5, requires_grad=True, dtype=torch.float32)",
    "torch.arange(4, out=torch.empty(1))",
    "torch.range(0, 3)", "torch.range(0, 3, dtype=torch.int64)", "torch.range(0, 1, 0.3)", "torch.range(5, 1, -2)",
    "torch.linspace(0, 1, 5)", "torch.linspace(0, 1, 1)", "torch.linspace(0, 1, 0)", "torch.linspace(-3, 7.5, 11)",
    "torch.linspace(0, 10, 5, dtype=torch.int64)", "torch.linspace(torch.tensor(0.), 1, 3)",
    "torch.linspace(0, 1 + 1j, 3)", "torch.linspace(0, 5, 3, dtype=torch.int32)", "torch.linspace(1, 0, 4, dtype=torch.uint8)",
    "torch.linspace(0, -1, 5)", "torch.linspace(2, 3, 7, dtype=torch.float64)", "torch.linspace(0, 1, 3, requires_grad=True)",
    "torch.linspace(-1, 1, 9, dtype=torch.float16)",
    "torch.logspace(0, 2, 3)", "torch.logspace(0, 2, 3, base=2)", "torch.logspace(0, 2, 3, dtype=torch.int64)",
    "torch.logspace(0, 1, 3, base=-2)", "torch.logspace(0, 1, 3, dtype=torch.complex64)", "torch.logspace(-2, 2, 9)",
    "torch.logspace(0, 1, 5, dtype=torch.float64, base=3)",
    "torch.eye(3)", "torch.eye(2, 3, dtype=torch.int64)", "torch.eye(3, dtype=torch.bool)", "torch.eye(0)",
    "torch.eye(3, 1)", "torch.eye(3, requires_grad=True)",
    "torch.tril_indices(3, 3)", "torch.tril_indices(3, 4, 1)", "torch.triu_indices(3, 4, -1)",
    "torch.tril_indices(0, 3)", "torch.tril_indices(3, 3, -5)", "torch.triu_indices(3, 3, 5)",
    "torch.triu_indices(4, 2, dtype=torch.int32)", "torch.triu_indices(5, 6, 2)",
    # errors
    "torch.arange(1, 0, 0.1)", "torch.arange(0, nan)", "torch.arange(0, inf)", "torch.arange(0, 5, 0)",
    "torch.arange(5, dtype=torch.bool)", "torch.linspace(0, 1, -1)", "torch.eye(-1)", "torch.eye(2, -1)",
    "torch.tril_indices(-1, 3)", "torch.tril_indices(3, 3, dtype=torch.float32)",
]

COMPLEX_CASES = [
    "torch.complex(torch.tensor([1., -2.]), torch.tensor([2., 0.5]))",
    "torch.complex(torch.tensor([1.], dtype=torch.float64), torch.tensor([[2.], [3.]], dtype=torch.float64))",
    "torch.polar(torch.tensor([1., 2.]), torch.tensor([0.3, -2.]))",
    "torch.polar(torch.tensor([1., 2.], dtype=torch.float64), torch.tensor([0.3, -2.], dtype=torch.float64))",
    "torch.heaviside(torch.tensor([-1., 0., 2.]), torch.tensor([0.5]))",
    "torch.heaviside(torch.tensor([-1, 0, 2]), torch.tensor([5]))",
    "torch.complex(torch.tensor([1.]), torch.tensor([2.], dtype=torch.float64))",
    "torch.complex(torch.tensor([1]), torch.tensor([2]))", "torch.polar(torch.tensor([1.]), torch.tensor([1]))",
    "torch.heaviside(torch.tensor([-1, 0, 2]), torch.tensor([5.]))",
]


@pytest.mark.parametrize("expr", DATA_CASES)
def test_tensor_from_data(expr):
    # torch also lists uint16/32/64 among the NumPy dtypes it accepts; ember has no such dtypes
    check_same(expr, message="np.array(['a'])" not in expr and "object" not in expr)


@pytest.mark.parametrize("expr", FILLED_CASES)
def test_filled(expr):
    check_same(expr)


@pytest.mark.parametrize("expr", RANGE_CASES)
def test_ranges(expr):
    check_same(expr, rtol=1e-6, atol=1e-6 if "float16" not in expr else 1e-3)


@pytest.mark.parametrize("expr", COMPLEX_CASES)
def test_complex_construction(expr):
    check_same(expr, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("seed", range(20))
def test_random_float_ranges(seed):
    rng = np.random.default_rng(seed)
    start = float(np.round(rng.uniform(-10, 10), 3))
    end = float(np.round(start + rng.uniform(0.1, 20) * rng.choice([-1, 1]), 3))
    step = float(np.round(rng.uniform(0.01, 3), 3)) * (1 if end > start else -1)
    steps = int(rng.integers(0, 50))
    for dt in ("torch.float32", "torch.float64", "torch.int64", "torch.int32"):
        check_same(f"torch.arange({start}, {end}, {step}, dtype={dt})", rtol=1e-6, atol=1e-6)
        check_same(f"torch.linspace({start}, {end}, {steps}, dtype={dt})", rtol=1e-6, atol=1e-5)
    check_same(f"torch.arange({start}, {end}, {step})", rtol=1e-6, atol=1e-6)
    check_same(f"torch.logspace({start / 5}, {end / 5}, {steps})", rtol=1e-5, atol=0)


def test_gradients_of_complex_and_polar():
    a = np.array([0.7, -1.3, 2.0])
    b = np.array([0.3, 1.1, -2.5])
    for name in ("complex", "polar"):
        tt = [torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)]
        et = [ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)]
        w = np.array([1 + 2j, -0.5 + 1j, 3 - 1j])
        (getattr(torch, name)(*tt) * torch.tensor(w)).real.sum().backward()
        y = getattr(ember, name)(*et)
        assert y.grad_fn.name() == ("ComplexBackward0" if name == "complex" else "PolarBackward0")
        y.backward(ember.tensor(np.conj(w)))
        for t, e in zip(tt, et):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_fill_grad_fn_names():
    for expr in ("torch.ones(2, requires_grad=True).clone().fill_(1.)",
                 "torch.ones(2, requires_grad=True).clone().fill_(torch.tensor(3., requires_grad=True))",
                 "torch.ones(2, requires_grad=True).clone().zero_()"):
        t, _ = _run(torch, expr)
        e, _ = _run(ember, expr)
        assert type(t.grad_fn).__name__ == e.grad_fn.name()
