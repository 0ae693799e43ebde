"""Elementwise binary ops: forward against NumPy, gradients, promotion, operators, in-place variants and errors."""
import pickle

import numpy as np
import pytest

import ember
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _u(lo, hi, *shapes):
    return lambda rng: [rng.uniform(lo, hi, s) for s in shapes]


def _np_lerp(a, b, w):
    return a + w * (b - a)


def _np_xlogy(x, y):
    return np.where(x == 0, 0.0, x * np.log(y))


SPECS = [
    OpSpec("add", lambda a, b: a + b, np.add, _u(-2, 2, (3, 4), (3, 4))),
    OpSpec("add_broadcast", lambda a, b: ember.add(a, b), np.add, _u(-2, 2, (3, 4), (4,))),
    OpSpec("add_alpha", lambda a, b: ember.add(a, b, alpha=-1.5), lambda a, b: a - 1.5 * b, _u(-2, 2, (2, 3), (3,))),
    OpSpec("add_scalar", lambda a: a + 2.5, lambda a: a + 2.5, _u(-2, 2, (5,))),
    OpSpec("radd_scalar", lambda a: 2.5 + a, lambda a: a + 2.5, _u(-2, 2, (5,))),
    OpSpec("sub", lambda a, b: a - b, np.subtract, _u(-2, 2, (3, 1), (1, 4))),
    OpSpec("sub_alpha", lambda a, b: ember.sub(a, b, alpha=2), lambda a, b: a - 2 * b, _u(-2, 2, (3,), (3,))),
    OpSpec("rsub_scalar", lambda a: 3 - a, lambda a: 3 - a, _u(-2, 2, (4,))),
    OpSpec("rsub", lambda a, b: ember.rsub(a, b, alpha=2), lambda a, b: b - 2 * a, _u(-2, 2, (3,), (3,))),
    OpSpec("mul", lambda a, b: a * b, np.multiply, _u(-2, 2, (2, 3), (2, 3)), gradgrad=True),
    OpSpec("mul_broadcast", lambda a, b: ember.multiply(a, b), np.multiply, _u(-2, 2, (2, 1, 3), (4, 1)),
           gradgrad=True),
    OpSpec("mul_scalar", lambda a: a * -3, lambda a: a * -3, _u(-2, 2, (4,)), gradgrad=True),
    OpSpec("div", lambda a, b: a / b, np.divide, lambda r: [r.uniform(-2, 2, (3, 4)), r.uniform(0.5, 2, (3, 4))],
           gradgrad=True),
    OpSpec("div_scalar", lambda a: a / 4, lambda a: a / 4, _u(-2, 2, (4,))),
    OpSpec("rdiv", lambda a: 2 / a, lambda a: 2 / a, _u(0.5, 2, (4,)), gradgrad=True),
    OpSpec("true_divide", lambda a, b: ember.true_divide(a, b), np.divide, _u(0.5, 2, (3,), (3,))),
    OpSpec("div_trunc", lambda a, b: ember.div(a, b, rounding_mode="trunc"), lambda a, b: np.trunc(a / b),
           lambda r: [r.uniform(-5, 5, 8), r.uniform(0.3, 2, 8)], grad=False),
    OpSpec("div_floor", lambda a, b: ember.div(a, b, rounding_mode="floor"), np.floor_divide,
           lambda r: [r.uniform(-5, 5, 8), r.uniform(-2, -0.3, 8)], grad=False),
    OpSpec("floor_divide", lambda a, b: a // b, np.floor_divide, _u(-5, 5, (8,), (8,)), grad=False),
    OpSpec("remainder", lambda a, b: a % b, np.remainder,
           lambda r: [r.uniform(0.1, 0.9, 6) + np.arange(-3, 3), np.full(6, 1.5) * np.sign(r.uniform(-1, 1, 6))]),
    OpSpec("remainder_scalar", lambda a: a % -1.5, lambda a: np.remainder(a, -1.5), _u(0.1, 1.4, (5,))),
    OpSpec("fmod", lambda a, b: ember.fmod(a, b), np.fmod,
           lambda r: [r.uniform(0.1, 0.9, 6) + np.arange(-3, 3), np.full(6, 1.5)]),
    OpSpec("pow", lambda a, b: a ** b, np.power, lambda r: [r.uniform(0.5, 2, (3, 2)), r.uniform(-2, 2, (3, 2))],
           gradgrad=True),
    OpSpec("pow_scalar", lambda a: a ** 3, lambda a: a ** 3, _u(-2, 2, (5,)), gradgrad=True),
    OpSpec("pow_fractional", lambda a: ember.pow(a, 0.5), np.sqrt, _u(0.5, 2, (5,)), gradgrad=True),
    OpSpec("rpow", lambda a: 2.5 ** a, lambda a: 2.5 ** a, _u(-2, 2, (5,)), gradgrad=True),
    OpSpec("float_power", lambda a, b: ember.float_power(a, b), np.float_power, _u(0.5, 2, (4,), (4,))),
    OpSpec("atan2", lambda a, b: ember.atan2(a, b), np.arctan2, _u(-2, 2, (3, 3), (3, 3)), gradgrad=True),
    OpSpec("arctan2", lambda a, b: ember.arctan2(a, b), np.arctan2, _u(-2, 2, (3,), (3,))),
    OpSpec("maximum", lambda a, b: ember.maximum(a, b), np.maximum, _u(-2, 2, (4, 3), (3,))),
    OpSpec("minimum", lambda a, b: ember.minimum(a, b), np.minimum, _u(-2, 2, (4, 3), (4, 3))),
    OpSpec("fmax", lambda a, b: ember.fmax(a, b), np.fmax, _u(-2, 2, (4,), (4,))),
    OpSpec("fmin", lambda a, b: ember.fmin(a, b), np.fmin, _u(-2, 2, (4,), (4,))),
    OpSpec("hypot", lambda a, b: ember.hypot(a, b), np.hypot, _u(0.5, 2, (3, 2), (2,)), gradgrad=True),
    OpSpec("logaddexp", lambda a, b: ember.logaddexp(a, b), np.logaddexp, _u(-3, 3, (5,), (5,)), gradgrad=True),
    OpSpec("logaddexp2", lambda a, b: ember.logaddexp2(a, b), np.logaddexp2, _u(-3, 3, (5,), (5,))),
    OpSpec("copysign", lambda a, b: ember.copysign(a, b), np.copysign, _u(-2, 2, (6,), (6,))),
    OpSpec("copysign_scalar", lambda a: ember.copysign(a, -1.0), lambda a: -np.abs(a), _u(-2, 2, (6,))),
    OpSpec("nextafter", lambda a, b: ember.nextafter(a, b), np.nextafter, _u(-2, 2, (6,), (6,))),
    OpSpec("xlogy", lambda a, b: ember.xlogy(a, b), _np_xlogy, _u(0.5, 2, (4,), (4,)), gradgrad=True),
    OpSpec("xlogy_scalar", lambda a: ember.xlogy(a, 3.0), lambda a: a * np.log(3.0), _u(-2, 2, (4,))),
    OpSpec("xlogy_scalar_self", lambda b: ember.xlogy(2.0, b), lambda b: 2 * np.log(b), _u(0.5, 2, (4,))),
    OpSpec("lerp_scalar", lambda a, b: ember.lerp(a, b, 0.3), lambda a, b: _np_lerp(a, b, 0.3),
           _u(-2, 2, (3,), (3,))),
    OpSpec("lerp_large_weight", lambda a, b: ember.lerp(a, b, 0.8), lambda a, b: _np_lerp(a, b, 0.8),
           _u(-2, 2, (3,), (3,))),
    OpSpec("lerp_tensor", lambda a, b, w: ember.lerp(a, b, w), _np_lerp, _u(-1, 1, (2, 3), (3,), (2, 1)),
           gradgrad=True),
    OpSpec("addcmul", lambda a, b, c: ember.addcmul(a, b, c, value=0.5), lambda a, b, c: a + 0.5 * b * c,
           _u(-2, 2, (2, 3), (3,), (2, 1)), gradgrad=True),
    OpSpec("addcdiv", lambda a, b, c: ember.addcdiv(a, b, c, value=-2), lambda a, b, c: a - 2 * b / c,
           lambda r: [r.uniform(-2, 2, 3), r.uniform(-2, 2, 3), r.uniform(0.5, 2, 3)], gradgrad=True),
    OpSpec("ldexp", lambda a, e: ember.ldexp(a, e), lambda a, e: a * 2.0 ** e,
           lambda r: [r.uniform(-2, 2, 4), np.array([0, 1, -2, 3])], nondiff=(1,)),
    OpSpec("where", lambda c, a, b: ember.where(c, a, b), np.where,
           lambda r: [r.uniform(-1, 1, (3, 4)) > 0, r.uniform(-2, 2, (3, 4)), r.uniform(-2, 2, (4,))],
           nondiff=(0,), gradgrad=True),
    OpSpec("where_scalar", lambda c, a: ember.where(c, a, 0.0), lambda c, a: np.where(c, a, 0.0),
           lambda r: [r.uniform(-1, 1, 5) > 0, r.uniform(-2, 2, 5)], nondiff=(0,)),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_matches_numpy(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


# ---------------- promotion ----------------
def _t(vals, dtype):
    return ember.tensor(vals, dtype=dtype)


@pytest.mark.parametrize("make,dtype", [
    (lambda: _t([1, 2], ember.int64) + 2.5, ember.float32),
    (lambda: _t([1, 2], ember.int32) * 2, ember.int32),
    (lambda: _t([1, 2], ember.float16) * 2.5, ember.float16),
    (lambda: _t([1, 2], ember.bfloat16) + 2.5, ember.bfloat16),
    (lambda: _t([1, 2], ember.bfloat16) + _t([1, 2], ember.float16), ember.float32),
    (lambda: _t([1, 2], ember.int8) + _t([1, 2], ember.uint8), ember.int16),
    (lambda: _t([1, 2], ember.int32) / _t([1, 2], ember.int32), ember.float32),
    (lambda: _t([1, 2], ember.int8) + _t(5, ember.int64), ember.int8),
    (lambda: _t([1, 2], ember.int8) + _t(5.0, ember.float64), ember.float64),
    (lambda: _t([1, 2], ember.float16) + _t(5.0, ember.float64), ember.float16),
    (lambda: _t(1, ember.int32) + _t(5, ember.int64), ember.int64),
    (lambda: _t([1, 2], ember.float32) + 1j, ember.complex64),
    (lambda: _t([1, 2], ember.float64) * 1j, ember.complex128),
    (lambda: _t([1, 2], ember.int64) + 1j, ember.complex64),
    (lambda: _t([True, False], ember.bool) + True, ember.bool),
    (lambda: _t([True, False], ember.bool) + 1, ember.int64),
    (lambda: _t([True, False], ember.bool) * 1.5, ember.float32),
    (lambda: _t([True, False], ember.bool) / _t([True, True], ember.bool), ember.float32),
    (lambda: 2 ** _t([1, 2], ember.int8), ember.int8),
    (lambda: 2.0 ** _t([1, 2], ember.int8), ember.float32),
    (lambda: _t([1, 2], ember.uint8) ** 2, ember.uint8),
    (lambda: ember.float_power(_t([1, 2], ember.int32), 2), ember.float64),
    (lambda: ember.atan2(_t([1, 2], ember.int32), _t([1, 2], ember.int32)), ember.float32),
    (lambda: _t([1, 2], ember.complex64) + _t([1.0], ember.float64), ember.complex128),
])
def test_result_dtypes(make, dtype):
    assert make().dtype is dtype


def test_int_scalars_out_of_range_wrap_like_a_c_cast():
    assert_close(_t([1, 2], ember.int8) + 1000, np.array([-23, -22], np.int8))
    assert_close(_t([1, 2], ember.uint8) - 1, np.array([0, 1], np.uint8))
    assert_close(_t([1, 2], ember.uint8) < -1, np.array([True, True]))
    assert (_t([1, 2], ember.int8) / 1000).dtype is ember.float32
    assert_close(_t([1, 2], ember.int8) / 1000, np.array([0.001, 0.002]))


def test_bfloat16_with_int_scalars_stays_bfloat16():
    x = _t([1.5, -2.0], ember.bfloat16)
    for y, want in [(x + 1, [2.5, -1.0]), (3 * x, [4.5, -6.0]), (x - 2, [-0.5, -4.0]), (x + 2**70, [2.0**70] * 2)]:
        assert y.dtype is ember.bfloat16
        assert y.float().tolist() == want


def test_default_dtype_float64_applies_to_scalars_and_true_division():
    ember.set_default_dtype(ember.float64)
    try:
        assert (_t([1, 2], ember.int32) + 2.5).dtype is ember.float64
        assert (_t([1, 2], ember.int32) / 2).dtype is ember.float64
        assert (_t([1, 2], ember.float32) + 2.5).dtype is ember.float32
        assert (_t([1, 2], ember.int32) + 1j).dtype is ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)


def test_numpy_scalars_act_as_python_numbers():
    h = _t([1, 2], ember.float16)
    assert (h * np.float32(2.5)).dtype is ember.float16
    assert (_t([1, 2], ember.int8) * np.int64(3)).dtype is ember.int8
    assert (_t([1, 2], ember.int8) * np.float64(0.5)).dtype is ember.float32


def test_result_type_can_cast_promote_types():
    assert ember.result_type(_t([1], ember.int32), 2.5) is ember.float32
    assert ember.result_type(2, 3.0) is ember.float32
    assert ember.result_type(_t([1], ember.int8), _t(1, ember.int64)) is ember.int8
    assert ember.can_cast(ember.float32, ember.int32) is False
    assert ember.can_cast(ember.int32, ember.float16) is True
    assert ember.promote_types(ember.bfloat16, ember.float16) is ember.float32


# ---------------- values and semantics ----------------
def test_integer_division_semantics():
    a, b = _t([7, -7, 7, -7], ember.int64), _t([2, 2, -2, -2], ember.int64)
    assert_close(a // b, np.array([3, -4, -4, 3]))
    assert_close(ember.div(a, b, rounding_mode="trunc"), np.array([3, -3, -3, 3]))
    assert_close(ember.div(a, b, rounding_mode="floor"), np.array([3, -4, -4, 3]))
    assert_close(a % b, np.array([1, 1, -1, -1]))
    assert_close(ember.fmod(a, b), np.array([1, -1, 1, -1]))
    assert_close(a / b, np.array([3.5, -3.5, -3.5, 3.5]))
    assert (a // b).dtype is ember.int64


def test_float_division_by_zero_gives_inf_and_nan_silently():
    a = ember.tensor([-7.0, 0.0, 7.0])
    assert_close(a / 0, np.array([-np.inf, np.nan, np.inf]))
    assert_close(a // 0.0, np.array([-np.inf, np.nan, np.inf]))
    assert_close(a % 0.0, np.array([np.nan, np.nan, np.nan]))


@pytest.mark.parametrize("expr", ["a // 0", "a % 0", "ember.fmod(a, 0)", "a // ember.tensor([1, 0])",
                                  "ember.div(a, 0, rounding_mode='trunc')", "5 // ember.tensor([1, 0])"])
def test_integer_division_by_zero_raises(expr):
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        eval(expr, {"ember": ember, "a": ember.tensor([1, 2])})


def test_integer_powers():
    a = _t([2, -1, 1, 0, 3], ember.int64)
    assert_close(a ** _t([-1, -3, -2, -1, 2], ember.int64), np.array([0, -1, 1, 0, 9]))
    assert_close(a ** 2, np.array([4, 1, 1, 0, 9]))
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        a ** -1
    assert_close(2 ** _t([3, -1], ember.int64), np.array([8, 0]))


def test_pow_zero_handling_in_gradients():
    x = ember.tensor([0.0, 0.0, 2.0], dtype=ember.float64, requires_grad=True)
    e = ember.tensor([0.0, 2.0, 0.0], dtype=ember.float64, requires_grad=True)
    (x ** e).sum().backward()
    assert_close(x.grad, np.array([0.0, 0.0, 0.0]))
    assert_close(e.grad, np.array([0.0, 0.0, np.log(2.0)]))
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    (x ** 0).sum().backward()
    assert_close(x.grad, np.array([0.0, 0.0]))
    e = ember.tensor([0.0, 2.0, -1.0], dtype=ember.float64, requires_grad=True)
    (0 ** e).sum().backward()
    assert_close(e.grad, np.array([0.0, 0.0, -np.inf]))


def test_maximum_minimum_split_ties():
    a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = ember.tensor([1.0, 1.0, 4.0], requires_grad=True)
    ember.maximum(a, b).sum().backward()
    assert_close(a.grad, np.array([0.5, 1.0, 0.0]))
    assert_close(b.grad, np.array([0.5, 0.0, 1.0]))
    a.grad = b.grad = None
    ember.minimum(a, b).sum().backward()
    assert_close(a.grad, np.array([0.5, 0.0, 1.0]))
    assert_close(b.grad, np.array([0.5, 1.0, 0.0]))


def test_nan_handling_of_extrema():
    a, b = ember.tensor([1.0, np.nan, np.nan]), ember.tensor([np.nan, 2.0, np.nan])
    assert_close(ember.maximum(a, b), np.array([np.nan, np.nan, np.nan]))
    assert_close(ember.fmax(a, b), np.array([1.0, 2.0, np.nan]))
    assert_close(ember.fmin(a, b), np.array([1.0, 2.0, np.nan]))


def test_xlogy_zero_and_nan():
    x = ember.tensor([0.0, 0.0, 2.0, 0.0])
    y = ember.tensor([0.0, np.inf, 3.0, np.nan])
    assert_close(ember.xlogy(x, y), np.array([0.0, 0.0, 2 * np.log(3.0), np.nan]))


def test_lerp_is_exact_at_the_ends():
    a, b = ember.tensor([0.1, 1e8]), ember.tensor([0.3, -1e-8])
    assert_close(ember.lerp(a, b, 1.0), b.numpy(), atol=0, rtol=0)
    assert_close(ember.lerp(a, b, 0.0), a.numpy(), atol=0, rtol=0)


def test_bitwise_and_shifts():
    a, b = _t([12, -5, 7], ember.int32), _t([10, 3, 1], ember.int32)
    assert_close(a & b, np.array([8, 3, 1], np.int32))
    assert_close(a | b, np.array([14, -5, 7], np.int32))
    assert_close(a ^ b, np.array([6, -8, 6], np.int32))
    assert_close(a & 6, np.array([4, 2, 6], np.int32))
    assert_close(6 | a, np.array([14, -1, 7], np.int32))
    assert_close(a << 2, np.array([48, -20, 28], np.int32))
    assert_close(a >> 1, np.array([6, -3, 3], np.int32))
    assert_close(1 << b, np.array([1024, 8, 2], np.int32))
    assert_close(_t([5, -8], ember.int64) << 64, np.array([0, 0]))
    assert_close(_t([5, -8], ember.int64) >> 70, np.array([0, -1]))
    m = ember.tensor([True, False, True])
    assert_close(m & ember.tensor([True, True, False]), np.array([True, False, False]))
    assert_close(m | False, np.array([True, False, True]))
    assert_close(m ^ True, np.array([False, True, False]))
    assert (m & 1).dtype is ember.int64


def test_bitwise_rejects_floats():
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        ember.ones(2) & ember.ones(2)
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        ember.ones(2) << 1


def test_addcmul_addcdiv_with_integers():
    i = ember.tensor([1, 2])
    assert_close(ember.addcmul(i, i, i, value=2), np.array([3, 10]))
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported"):
        ember.addcdiv(i, i, i)


# ---------------- operators ----------------
OPS = [
    ("+", np.add), ("-", np.subtract), ("*", np.multiply), ("/", np.divide), ("//", np.floor_divide),
    ("%", np.remainder), ("**", np.power),
]


@pytest.mark.parametrize("sym,ref", OPS, ids=[o[0] for o in OPS])
def test_operators_with_numbers_on_both_sides(sym, ref):
    a = np.array([1.5, 2.0, 3.0], np.float32)
    for s in (2, 2.5):
        env = {"t": ember.tensor(a), "s": s}
        got = eval(f"t {sym} s", env)
        assert got.dtype is ember.float32
        assert_close(got, ref(a, np.float32(s)))
        got = eval(f"s {sym} t", env)
        assert got.dtype is ember.float32
        assert_close(got, ref(np.float32(s), a))


def test_operator_with_unsupported_type_raises_pythons_type_error():
    t = ember.ones(2)
    with pytest.raises(TypeError, match="unsupported operand type\\(s\\) for \\+: 'Tensor' and 'str'"):
        t + "a"
    with pytest.raises(TypeError, match="unsupported operand type\\(s\\) for \\*: 'NoneType' and 'Tensor'"):
        None * t
    with pytest.raises(TypeError):
        t += "a"


def test_operators_take_numpy_arrays():
    t = ember.tensor([1.0, 2.0])
    assert_close(t + np.array([1.0, 1.0]), np.array([2.0, 3.0]))
    assert_close(np.array([1.0, 1.0]) + t, np.array([2.0, 3.0]))


def test_zero_dim_results_and_scalar_values():
    r = ember.tensor(2.0) * 3
    assert r.shape == () and r.item() == 6.0
    assert (ember.tensor(7) // 2).item() == 3


# ---------------- in-place and out= ----------------
def test_inplace_updates_memory_version_and_returns_self():
    t = ember.ones(3)
    d = t._data
    v = t._version
    r = t.add_(ember.ones(3), alpha=2)
    assert r is t and t._data is d and t._version == v + 1
    assert_close(t, np.full(3, 3.0))
    t -= 1
    t *= ember.tensor([1.0, 2.0, 3.0])
    t /= 2
    assert_close(t, np.array([1.0, 2.0, 3.0]))
    t **= 2
    t %= 5
    t //= 2
    assert_close(t, np.array([0.0, 2.0, 2.0]))
    assert t._data is d


def test_inplace_on_a_view_writes_through():
    base = ember.zeros(2, 3)
    row = base[1]
    row += 5
    row.mul_(2)
    assert_close(base, np.array([[0.0, 0, 0], [10, 10, 10]]))


@pytest.mark.parametrize("expr,msg", [
    ("i.add_(1.5)", "result type Float can't be cast to the desired output type Long"),
    ("i.div_(2)", "result type Float can't be cast to the desired output type Long"),
    ("i.mul_(ember.ones(2))", "result type Float can't be cast to the desired output type Long"),
    ("b.add_(2)", "result type Long can't be cast to the desired output type Bool"),
    ("f.add_(1j)", "result type ComplexFloat can't be cast to the desired output type Float"),
    ("i.bitwise_and_(1.5)", "result type Float can't be cast to the desired output type Long"),
    ("i.atan2_(i)", "result type Float can't be cast to the desired output type Long"),
    ("f.add_(ember.ones(2, 2))", "output with shape \\[2\\] doesn't match the broadcast shape \\[2, 2\\]"),
    ("b.sub_(b)", "Subtraction, the `-` operator, with two bool tensors is not supported"),
    ("f.sub_(True)", "Subtraction, the `-` operator, with a bool tensor is not supported"),
])
def test_inplace_errors(expr, msg):
    env = {"ember": ember, "i": ember.tensor([1, 2]), "f": ember.ones(2), "b": ember.tensor([True, False])}
    with pytest.raises(RuntimeError, match=msg):
        eval(expr, env)


def test_inplace_keeps_self_dtype():
    h = ember.ones(2, dtype=ember.float16)
    h.add_(ember.ones(2, dtype=ember.float64))
    assert h.dtype is ember.float16
    i = ember.tensor([1, 2])
    i.floor_divide_(2)
    assert i.dtype is ember.int64
    f = ember.ones(2)
    f.lt_(2)
    assert f.dtype is ember.float32
    assert_close(f, np.array([1.0, 1.0]))


def test_inplace_with_grad_builds_graph():
    w = ember.ones(3, requires_grad=True)
    y = w * 1
    y.mul_(ember.tensor([1.0, 2.0, 3.0]))
    y.add_(1, alpha=2)
    y.sum().backward()
    assert_close(w.grad, np.array([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.add_(1)
    with ember.no_grad():
        w.add_(1)
    assert_close(w.detach(), np.full(3, 2.0))


def test_out_argument():
    out = ember.empty(3)
    r = ember.add(ember.ones(3), 2, out=out)
    assert r is out
    assert_close(out, np.full(3, 3.0))
    out = ember.empty(0)
    ember.mul(ember.ones(2, 2), 3, out=out)
    assert out.shape == (2, 2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ember.add(ember.ones(2), 1, out=ember.empty(2, dtype=ember.int64))
    out = ember.empty(2, dtype=ember.float64)
    ember.float_power(ember.tensor([2.0, 3.0]), 2, out=out)
    assert_close(out, np.array([4.0, 9.0]))


# ---------------- errors ----------------
@pytest.mark.parametrize("expr,exc,msg", [
    ("ember.ones(2, 3) + ember.ones(2, 4)", RuntimeError,
     "The size of tensor a \\(3\\) must match the size of tensor b \\(4\\) at non-singleton dimension 1"),
    ("ember.tensor([True]) - ember.tensor([True])", RuntimeError, "with two bool tensors is not supported"),
    ("ember.ones(2) - ember.tensor([True, False])", RuntimeError, "with a bool tensor is not supported"),
    ("ember.div(ember.ones(2), 1, rounding_mode='round')", RuntimeError,
     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"),
    ("ember.maximum(ember.ones(2), 1)", TypeError, "must be Tensor, not int"),
    ("ember.maximum(ember.ones(2, dtype=ember.complex64), ember.ones(2, dtype=ember.complex64))", RuntimeError,
     "maximum not implemented for complex tensors."),
    ("ember.hypot(ember.tensor([1]), ember.tensor([1]))", NotImplementedError,
     "\"hypot_cpu\" not implemented for 'Long'"),
    ("ember.add(ember.tensor([1]), ember.tensor([1]), alpha=0.5)", RuntimeError,
     "For integral input tensors, argument alpha must not be a floating point number."),
    ("ember.lerp(ember.ones(2), ember.ones(2, dtype=ember.float64), 0.5)", RuntimeError,
     "expected dtype float for `end` but got dtype double"),
    ("ember.float_power(ember.ones(2), 2, out=ember.empty(2))", RuntimeError,
     "the output given to float_power has dtype Float but the operation's result requires dtype Double"),
    ("ember.ones(2).float_power_(2)", RuntimeError,
     "the base given to float_power_ has dtype Float but the operation's result requires dtype Double"),
    ("ember.tensor([True]) ** ember.tensor([True])", NotImplementedError, "\"pow\" not implemented for 'Bool'"),
    ("ember.ones(2) % ember.ones(2, dtype=ember.complex64)", NotImplementedError,
     "\"remainder_cpu\" not implemented for 'ComplexFloat'"),
])
def test_error_messages(expr, exc, msg):
    with pytest.raises(exc, match=msg):
        eval(expr)


# ---------------- autograd details ----------------
@pytest.mark.parametrize("expr,name", [
    ("a + b", "AddBackward0"), ("a + 2", "AddBackward0"), ("2 - a", "RsubBackward1"), ("a - b", "SubBackward0"),
    ("a * 2", "MulBackward0"), ("a / b", "DivBackward0"), ("2 / a", "MulBackward0"), ("a ** 2", "PowBackward0"),
    ("a ** b", "PowBackward1"), ("2 ** a", "PowBackward2"), ("a % b", "RemainderBackward1"),
    ("a % 2", "RemainderBackward0"), ("ember.fmod(a, 2)", "FmodBackward0"),
    ("a // b", "torch::autograd::NotImplemented"),
    ("ember.div(a, b, rounding_mode='floor')", "DivBackward2"), ("ember.lerp(a, b, 0.5)", "LerpBackward0"),
    ("ember.lerp(a, b, b)", "LerpBackward1"), ("ember.xlogy(a, 2)", "XlogyBackward2"),
    ("ember.where(a > 0, a, b)", "WhereBackward0"), ("ember.maximum(a, b)", "MaximumBackward0"),
])
def test_grad_fn_names(expr, name):
    env = {"ember": ember, "a": ember.tensor([1.0, 2.0], requires_grad=True),
           "b": ember.tensor([3.0, 0.5], requires_grad=True)}
    assert eval(expr, env).grad_fn.name() == name


def test_floor_divide_backward_is_not_implemented():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        (a // 2).sum().backward()


def test_promoted_operand_gets_gradient_in_its_own_dtype():
    a = ember.ones(2, dtype=ember.float16, requires_grad=True)
    b = ember.ones(2, dtype=ember.float32, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is ember.float16 and b.grad.dtype is ember.float32


def test_rounding_division_has_zero_gradient():
    a = ember.tensor([1.5, -2.5], requires_grad=True)
    ember.div(a, 2.0, rounding_mode="trunc").sum().backward()
    assert_close(a.grad, np.zeros(2))


def test_saved_operands_are_version_checked():
    a = ember.ones(2, requires_grad=True)
    b = a * 1
    y = b * b
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_dtype_objects_pickle_through_binary_results():
    r = ember.ones(2, dtype=ember.int8) + 1
    assert pickle.loads(pickle.dumps(r.dtype)) is ember.int8


def test_gcd_lcm():
    assert ember.gcd(ember.tensor([12, -8, 0]), ember.tensor([8, 12, 0])).tolist() == [4, 4, 0]
    assert ember.lcm(ember.tensor([4, 0, -4]), ember.tensor([6, 5, 6])).tolist() == [12, 0, 12]
    r = ember.gcd(ember.tensor([4], dtype=ember.int32), ember.tensor([6]))
    assert r.dtype is ember.int64 and r.tolist() == [2]
    x = ember.tensor([4, 9])
    assert x.gcd_(ember.tensor([6, 6])) is x and x.tolist() == [2, 3]
    with pytest.raises(NotImplementedError, match="\"gcd_cpu\" not implemented for 'Float'"):
        ember.gcd(ember.tensor([4.0]), ember.tensor([2.0]))
    with pytest.raises(NotImplementedError, match="\"lcm_cpu\" not implemented for 'Bool'"):
        ember.lcm(ember.tensor([True]), ember.tensor([True]))
    with pytest.raises(TypeError, match="gcd\\(\\): argument 'other' \\(position 2\\) must be Tensor, not int"):
        ember.gcd(ember.tensor([4]), 2)
