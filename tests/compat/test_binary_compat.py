"""Elementwise binary ops against PyTorch: values (special values included), dtypes, errors and gradients."""
import itertools
import math
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "complex128"]
INF, NAN = math.inf, math.nan
FLOATS = [-3.5, -1.0, -0.0, 0.0, 0.5, 2.0, 7.0, INF, -INF, NAN]
INTS = [-7, -2, -1, 0, 1, 3, 7]


def _grid(name):
    """Every pair of test values for dtype `name`, as two flat lists."""
    if name == "bool":
        vals = [False, True]
    elif name == "uint8":
        vals = [0, 1, 3, 7, 200]
    elif name.startswith("int"):
        vals = INTS
    elif name.startswith("complex"):
        # no infinities: torch's vectorized complex kernels give implementation-defined nan parts for them
        vals = [complex(a, b) for a, b in ((1, 2), (-0.5, 0), (0, 0), (3, -1), (0, -2))]
    else:
        vals = FLOATS
    a, b = zip(*itertools.product(vals, vals))
    return list(a), list(b)


def _both(vals, name):
    return torch.tensor(vals, dtype=getattr(torch, name)), ember.tensor(vals, dtype=getattr(ember, name))


def _np(x):
    if isinstance(x, ember.Tensor):
        x = x.detach()
        return np.asarray((x.float() if x.dtype is ember.bfloat16 else x)._data)
    x = x.detach()
    return (x.float() if x.dtype is torch.bfloat16 else x).numpy()


def _same_dtype(got, want):
    """ember's dtype matches torch's (torch's complex32, which ember lacks, is complex64 in ember)."""
    w = str(want).split(".")[-1]
    return str(got).split(".")[-1] == ("complex64" if w == "complex32" else w)


def same(tfn, efn, low=False, check_message=False):
    """Run both: torch's exception type (and message) or its dtype and values, nan for nan."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = tfn()
    except Exception as e:
        if "ComplexHalf" in str(e):
            return  # ember has no complex32
        with pytest.raises(type(e)) as info:
            efn()
        if check_message:
            assert str(info.value) == str(e)
        return
    got = efn()
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want):
            _compare(g, w, low)
        return
    _compare(got, want, low)


def _compare(got, want, low):
    if not isinstance(want, torch.Tensor):
        assert got == want
        return
    assert isinstance(got, ember.Tensor)
    if want.dtype is torch.complex32:
        assert got.dtype is ember.complex64  # ember has no complex32
        return
    assert _same_dtype(got.dtype, want.dtype), (got.dtype, want.dtype)
    w, g = _np(want), _np(got)
    assert g.shape == w.shape
    if w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
    else:
        tol = 1e-2 if low or want.dtype in (torch.float16, torch.bfloat16) else 1e-5
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _op(name, **kw):
    return (lambda a, b: getattr(torch, name)(a, b, **kw)), (lambda a, b: getattr(ember, name)(a, b, **kw))


BINARY = {
    "add": _op("add"), "add_alpha": _op("add", alpha=2), "sub": _op("sub"), "sub_alpha": _op("sub", alpha=3),
    "rsub": _op("rsub"), "mul": _op("mul"), "div": _op("div"), "true_divide": _op("true_divide"),
    "div_trunc": _op("div", rounding_mode="trunc"), "div_floor": _op("div", rounding_mode="floor"),
    "floor_divide": _op("floor_divide"), "remainder": _op("remainder"), "fmod": _op("fmod"), "pow": _op("pow"),
    "float_power": _op("float_power"), "atan2": _op("atan2"), "arctan2": _op("arctan2"),
    "maximum": _op("maximum"), "minimum": _op("minimum"), "fmax": _op("fmax"), "fmin": _op("fmin"),
    "hypot": _op("hypot"), "logaddexp": _op("logaddexp"), "logaddexp2": _op("logaddexp2"),
    "copysign": _op("copysign"), "nextafter": _op("nextafter"), "xlogy": _op("xlogy"),
    "bitwise_and": _op("bitwise_and"), "bitwise_or": _op("bitwise_or"), "bitwise_xor": _op("bitwise_xor"),
    "bitwise_left_shift": _op("bitwise_left_shift"), "bitwise_right_shift": _op("bitwise_right_shift"),
    "logical_and": _op("logical_and"), "logical_or": _op("logical_or"), "logical_xor": _op("logical_xor"),
    "eq": _op("eq"), "ne": _op("ne"), "lt": _op("lt"), "le": _op("le"), "gt": _op("gt"), "ge": _op("ge"),
    "greater": _op("greater"), "less_equal": _op("less_equal"), "not_equal": _op("not_equal"),
    "isclose": _op("isclose"), "isclose_nan": _op("isclose", equal_nan=True),
    "isclose_tol": _op("isclose", rtol=0.5, atol=1.0), "equal": _op("equal"), "allclose": _op("allclose"),
}
# NumPy and torch's CPU kernels differ in the last bits of these transcendental results for float16/bfloat16
_LOW = {"pow", "float_power", "atan2", "arctan2", "hypot", "logaddexp", "logaddexp2", "xlogy"}


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("name", NAMES)
def test_same_dtype_special_values(op, name):
    tf, ef = BINARY[op]
    va, vb = _grid(name)
    ta, ea = _both(va, name)
    tb, eb = _both(vb, name)
    same(lambda: tf(ta, tb), lambda: ef(ea, eb), low=op in _LOW)


MIXED = [("int64", "float32"), ("int32", "float64"), ("uint8", "int8"), ("bool", "int16"), ("float16", "bfloat16"),
         ("float16", "float32"), ("bfloat16", "float64"), ("float32", "complex64"), ("int64", "complex128"),
         ("bool", "float32"), ("int8", "float16")]


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("names", MIXED, ids=lambda n: f"{n[0]}-{n[1]}")
def test_mixed_dtypes(op, names):
    tf, ef = BINARY[op]
    va = _grid("int8")[0][:12]
    vb = [2, 1, 3, 1, 2, 5, 7, 1, 3, 1, 2, 2]
    if names[0] == "bool":
        va = [v > 0 for v in va]
    ta, ea = _both(va, names[0])
    tb, eb = _both(vb, names[1])
    same(lambda: tf(ta, tb), lambda: ef(ea, eb), low=True)
    same(lambda: tf(tb, ta), lambda: ef(eb, ea), low=True)


SCALAR_OPS = ["add", "sub", "mul", "div", "div_trunc", "div_floor", "floor_divide", "remainder", "fmod", "pow",
              "float_power", "copysign", "xlogy", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
              "bitwise_right_shift", "eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("op", SCALAR_OPS)
@pytest.mark.parametrize("name", ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                                  "complex64"])
def test_tensor_and_python_scalar(op, name):
    tf, ef = BINARY[op]
    va, _ = _grid(name)
    t, e = _both(va[:20], name)
    for s in (True, False, 0, 2, -3, 2.5, -0.5, 0.0, 1 + 1j):
        same(lambda: tf(t, s), lambda: ef(e, s), low=op in _LOW)


REVERSED_FUNCTION_OPS = ["add", "sub", "mul", "div", "floor_divide", "remainder", "pow", "float_power", "xlogy",
                         "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift",
                         "atan2", "maximum", "fmod", "eq", "logical_and", "hypot", "copysign"]


@pytest.mark.parametrize("op", REVERSED_FUNCTION_OPS)
def test_scalar_first_argument(op):
    tf, ef = BINARY[op]
    for name in ("int64", "float32", "bool"):
        t, e = _both([1, 2, 0, 5] if name != "bool" else [True, False], name)
        for s in (3, 2.5, True):
            same(lambda: tf(s, t), lambda: ef(s, e))


OPERATORS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a ** b, "&": lambda a, b: a & b,
    "|": lambda a, b: a | b, "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


@pytest.mark.parametrize("sym", list(OPERATORS))
@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int64", "float16", "float32", "float64", "complex64"])
def test_operators_with_numbers_on_both_sides(sym, name):
    f = OPERATORS[sym]
    vals = [True, False, True] if name == "bool" else [1, 2, 3]
    t, e = _both(vals, name)
    for s in (True, 2, -1, 3.5, 0.5j):
        same(lambda: f(t, s), lambda: f(e, s))
        same(lambda: f(s, t), lambda: f(s, e))


INPLACE = {
    "+=": lambda a, b: a.__iadd__(b), "-=": lambda a, b: a.__isub__(b), "*=": lambda a, b: a.__imul__(b),
    "/=": lambda a, b: a.__itruediv__(b), "//=": lambda a, b: a.__ifloordiv__(b), "%=": lambda a, b: a.__imod__(b),
    "**=": lambda a, b: a.__ipow__(b), "&=": lambda a, b: a.__iand__(b), "|=": lambda a, b: a.__ior__(b),
    "^=": lambda a, b: a.__ixor__(b), "<<=": lambda a, b: a.__ilshift__(b), ">>=": lambda a, b: a.__irshift__(b),
}


@pytest.mark.parametrize("sym", list(INPLACE))
@pytest.mark.parametrize("name", ["bool", "uint8", "int32", "int64", "float16", "float32", "complex64"])
def test_inplace_operators_and_cast_errors(sym, name):
    f = INPLACE[sym]
    vals = [True, False, True] if name == "bool" else [1, 2, 3]
    for other in (2, 2.5, True, 1j, ("int64", [1, 2, 1]), ("float32", [1.0, 2.0, 4.0]), ("bool", [True] * 3)):
        t, e = _both(vals, name)
        if isinstance(other, tuple):
            ot, oe = _both(other[1], other[0])
        else:
            ot = oe = other
        same(lambda: f(t, ot), lambda: f(e, oe), check_message=True)


METHODS_INPLACE = ["add_", "sub_", "mul_", "div_", "true_divide_", "floor_divide_", "remainder_", "fmod_", "pow_",
                   "atan2_", "hypot_", "copysign_", "xlogy_", "bitwise_and_", "logical_and_", "logical_or_", "eq_",
                   "lt_", "ge_", "not_equal_", "nextafter_"]


@pytest.mark.parametrize("method", METHODS_INPLACE)
@pytest.mark.parametrize("name", ["int64", "float32", "bool"])
def test_inplace_methods(method, name):
    vals = [True, False, True] if name == "bool" else [1, 2, 3]
    for other_name in ("int64", "float32", "bool", "float64"):
        ovals = [True, True, False] if other_name == "bool" else [2, 1, 3]
        t, e = _both(vals, name)
        ot, oe = _both(ovals, other_name)
        same(lambda: getattr(t, method)(ot), lambda: getattr(e, method)(oe), check_message=True)


def test_broadcast_error_message():
    same(lambda: torch.ones(2, 3) + torch.ones(2, 4), lambda: ember.ones(2, 3) + ember.ones(2, 4),
         check_message=True)
    same(lambda: torch.ones(5, 1, 3) * torch.ones(4, 2), lambda: ember.ones(5, 1, 3) * ember.ones(4, 2),
         check_message=True)
    same(lambda: torch.ones(3).add_(torch.ones(2, 3)), lambda: ember.ones(3).add_(ember.ones(2, 3)),
         check_message=True)


@pytest.mark.parametrize("case", [
    "t < 1j", "torch.maximum(c, c)", "c % c", "torch.div(f, f, rounding_mode='x')", "i // 0", "i % 0",
    "torch.fmod(i, 0)", "i ** -1", "torch.tensor([True]) - torch.tensor([True])", "f - torch.tensor([True])",
    "f & f", "torch.lerp(f, f.double(), 0.5)", "torch.lerp(i, i, 0.5)", "torch.addcdiv(i, i, i)",
    "torch.isclose(f, i)", "torch.isclose(f, f, rtol=-1)", "torch.where(f, f, f)", "torch.add(i, i, alpha=2.5)",
    "torch.add(f, f, alpha=2j)", "torch.hypot(i, i)", "torch.logaddexp(i, i)", "torch.nextafter(i, i)",
    "torch.float_power(f, 2, out=torch.empty(3))", "f.float_power_(2)", "torch.where(f > 1, i.to(torch.int8), 1000)",
    "torch.maximum(f, 2)", "torch.eq(f, 'a')", "torch.addcmul(f, f, f, value=1j)",
])
def test_error_messages(case):
    env_t = {"torch": torch, "f": torch.tensor([1.0, 2.0, 3.0]), "i": torch.tensor([1, 2, 3]),
             "c": torch.tensor([1 + 1j, 2, 3]), "t": torch.tensor([1.0, 2.0, 3.0])}
    env_e = {"torch": ember, "f": ember.tensor([1.0, 2.0, 3.0]), "i": ember.tensor([1, 2, 3]),
             "c": ember.tensor([1 + 1j, 2, 3]), "t": ember.tensor([1.0, 2.0, 3.0])}
    same(lambda: eval(case, env_t), lambda: eval(case, env_e),
         check_message="rtol" in case or "Subtraction" in case or "//" in case or "cast" in case)


# ---------------- where, lerp, addcmul, addcdiv ----------------
@pytest.mark.parametrize("names", [("float32", "float32"), ("int64", "float32"), ("float16", "float64"),
                                   ("bool", "int8"), ("int8", "uint8"), ("complex64", "float64")])
def test_where_promotion(names):
    cond_t = torch.tensor([True, False, True])
    cond_e = ember.tensor([True, False, True])
    ta, ea = _both([1, 2, 3], names[0])
    tb, eb = _both([4, 5, 6], names[1])
    same(lambda: torch.where(cond_t, ta, tb), lambda: ember.where(cond_e, ea, eb))
    same(lambda: torch.where(cond_t, ta[0], tb), lambda: ember.where(cond_e, ea[0], eb))
    for s in (0, 2.5, True):
        same(lambda: torch.where(cond_t, ta, s), lambda: ember.where(cond_e, ea, s))
        same(lambda: torch.where(cond_t, s, tb), lambda: ember.where(cond_e, s, eb))
    same(lambda: torch.where(cond_t, 1, 0), lambda: ember.where(cond_e, 1, 0))
    same(lambda: torch.where(cond_t, 1.0, 0), lambda: ember.where(cond_e, 1.0, 0))
    same(lambda: torch.where(cond_t), lambda: ember.where(cond_e))


def test_where_broadcasts_three_ways():
    c = np.array([[True], [False]])
    same(lambda: torch.where(torch.tensor(c), torch.ones(3), torch.zeros(2, 1)),
         lambda: ember.where(ember.tensor(c), ember.ones(3), ember.zeros(2, 1)))
    same(lambda: torch.where(torch.tensor(c), torch.ones(3), torch.zeros(4)),
         lambda: ember.where(ember.tensor(c), ember.ones(3), ember.zeros(4)), check_message=True)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64"])
def test_lerp_addcmul_addcdiv(name):
    rng = np.random.default_rng(0)
    a, b, w = (rng.standard_normal((2, 3)) for _ in range(3))
    ta, ea = _both(a.tolist(), name)
    tb, eb = _both(b.tolist(), name)
    tw, ew = _both(w.tolist(), name)
    for s in (0.0, 0.3, 0.5, 1.0, 1.7):
        same(lambda: torch.lerp(ta, tb, s), lambda: ember.lerp(ea, eb, s))
    same(lambda: torch.lerp(ta, tb, tw), lambda: ember.lerp(ea, eb, ew))
    same(lambda: torch.lerp(ta, tb[0], 0.25), lambda: ember.lerp(ea, eb[0], 0.25))
    for v in (1, 0.5, -2):
        same(lambda: torch.addcmul(ta, tb, tw, value=v), lambda: ember.addcmul(ea, eb, ew, value=v))
        same(lambda: torch.addcdiv(ta, tb, tw, value=v), lambda: ember.addcdiv(ea, eb, ew, value=v))
    ti, ei = _both([[1, 2, 3], [4, 5, 6]], "int64")
    same(lambda: torch.addcmul(ti, ti, ti, value=2), lambda: ember.addcmul(ei, ei, ei, value=2))
    same(lambda: torch.addcmul(ti, ta, ti), lambda: ember.addcmul(ei, ea, ei))
    same(lambda: torch.addcdiv(ta, ti, ti), lambda: ember.addcdiv(ea, ei, ei))


def test_ldexp():
    for na, nb in (("float32", "int64"), ("int64", "int64"), ("float16", "int32"), ("float32", "float32"),
                   ("complex64", "int64"), ("float64", "int8")):
        ta, ea = _both([1, 2, -3, 0], na)
        tb, eb = _both([1, 2, 3, -2], nb)
        same(lambda: torch.ldexp(ta, tb), lambda: ember.ldexp(ea, eb))


def test_result_type_can_cast_promote_types():
    for a, b in itertools.product(NAMES, NAMES):
        ta, tb = getattr(torch, a), getattr(torch, b)
        ea, eb = getattr(ember, a), getattr(ember, b)
        assert ember.can_cast(ea, eb) == torch.can_cast(ta, tb)
        assert _same_dtype(ember.promote_types(ea, eb), torch.promote_types(ta, tb))


# ---------------- gradients ----------------
def _grads(lib, fn, arrays, scalar_first=None):
    ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    out.backward(lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64))
    return out, [t.grad for t in ts]


GRAD_CASES = {
    "add_alpha": (lambda L, a, b: L.add(a, b, alpha=-2.5), 2),
    "sub_alpha": (lambda L, a, b: L.sub(a, b, alpha=2), 2),
    "rsub": (lambda L, a, b: L.rsub(a, b, alpha=3), 2),
    "mul": (lambda L, a, b: a * b, 2), "div": (lambda L, a, b: a / b, 2), "rdiv": (lambda L, a: 2 / a, 1),
    "rsub_scalar": (lambda L, a: 2 - a, 1),
    "pow": (lambda L, a, b: a ** b, 2), "pow_scalar": (lambda L, a: a ** 3, 1),
    "pow_zero": (lambda L, a: a ** 0, 1), "pow_half": (lambda L, a: a.abs() ** 0.5, 1),
    "rpow": (lambda L, a: 2.5 ** a, 1), "rpow_zero_base": (lambda L, a: 0 ** a, 1),
    "float_power": (lambda L, a, b: L.float_power(a.abs(), b), 2),
    "atan2": (lambda L, a, b: L.atan2(a, b), 2), "hypot": (lambda L, a, b: L.hypot(a, b), 2),
    "maximum": (lambda L, a, b: L.maximum(a, b), 2), "minimum": (lambda L, a, b: L.minimum(a, b), 2),
    "fmax": (lambda L, a, b: L.fmax(a, b), 2), "fmin": (lambda L, a, b: L.fmin(a, b), 2),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), 2), "logaddexp2": (lambda L, a, b: L.logaddexp2(a, b), 2),
    "copysign": (lambda L, a, b: L.copysign(a, b), 2), "copysign_scalar": (lambda L, a: L.copysign(a, -1.0), 1),
    "nextafter": (lambda L, a, b: L.nextafter(a, b), 2),
    "xlogy": (lambda L, a, b: L.xlogy(a, b), 2), "xlogy_scalar_self": (lambda L, b: L.xlogy(3.0, b), 1),
    "xlogy_scalar_other": (lambda L, a: L.xlogy(a, 2.0), 1),
    "remainder": (lambda L, a, b: L.remainder(a, b), 2), "fmod": (lambda L, a, b: L.fmod(a, b), 2),
    "remainder_scalar": (lambda L, a: a % 1.5, 1), "fmod_scalar": (lambda L, a: L.fmod(a, -1.5), 1),
    "div_trunc": (lambda L, a, b: L.div(a, b, rounding_mode="trunc"), 2),
    "lerp_scalar": (lambda L, a, b: L.lerp(a, b, 0.3), 2), "lerp_tensor": (lambda L, a, b, w: L.lerp(a, b, w), 3),
    "addcmul": (lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), 3),
    "addcdiv": (lambda L, a, b, c: L.addcdiv(a, b, c, value=-2), 3),
    "where": (lambda L, a, b: L.where(a > b, a, b), 2), "where_scalar": (lambda L, a: L.where(a > 0, a, 0.0), 1),
    # (negative exponents: torch's ldexp backward computes 2 ** other in integers and gives 0 there)
    "ldexp": (lambda L, a: L.ldexp(a, L.tensor([1, 2, 4, 0, 3, 1])), 1),
}
SPECIAL = {"maximum", "minimum", "fmax", "fmin", "pow", "pow_zero", "pow_scalar", "rpow_zero_base", "xlogy",
           "copysign", "where"}


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_gradients_match_torch(case):
    fn, n = GRAD_CASES[case]
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(-2, 2, 6) for _ in range(n)]
    if case in SPECIAL and n >= 1:
        arrays[0][:3] = [0.0, 1.0, -1.0]  # zeros and ties
        if n > 1:
            arrays[1][:3] = [0.0, 1.0, 2.0]
    if case == "fmax" or case == "fmin":
        arrays[1][4] = np.nan
    tout, tgrads = _grads(torch, fn, arrays)
    eout, egrads = _grads(ember, fn, arrays)
    _compare(eout, tout, False)
    assert eout.grad_fn.name() == tout.grad_fn.name()
    for g, w in zip(egrads, tgrads):
        if w is None:
            assert g is None
        else:
            _compare(g, w, False)


def test_not_implemented_gradients():
    for expr in ("a // b", "2 % a"):
        ta = torch.tensor([1.0, 2.0], requires_grad=True)
        ea = ember.tensor([1.0, 2.0], requires_grad=True)
        tb, eb = torch.tensor([3.0, 0.5]), ember.tensor([3.0, 0.5])
        tr, er = eval(expr, {"a": ta, "b": tb}), eval(expr, {"a": ea, "b": eb})
        assert er.grad_fn.name() == tr.grad_fn.name()
        same(lambda: tr.sum().backward(), lambda: er.sum().backward(), check_message=True)


@pytest.mark.parametrize("case", ["mul", "div", "pow", "rpow", "atan2", "hypot", "lerp_tensor", "addcdiv", "xlogy"])
def test_double_backward_matches_torch(case):
    fn, n = GRAD_CASES[case]
    rng = np.random.default_rng(2)
    arrays = [rng.uniform(0.5, 2, 4) for _ in range(n)]
    results = []
    for lib in (torch, ember):
        ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *ts).sum()
        grads = lib.autograd.grad(out, ts, create_graph=True)
        total = sum((g * g).sum() for g in grads)
        results.append(lib.autograd.grad(total, ts, allow_unused=True))
    for g, w in zip(results[1], results[0]):
        if w is None or g is None:  # unused: torch and ember may differ in reporting None or zeros
            assert (w is None or not w.any()) and (g is None or not g._data.any())
        else:
            _compare(g, w, False)
