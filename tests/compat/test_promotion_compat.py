"""Type promotion against PyTorch: every pair of the 12 dtypes, as dimensioned tensors, zero-dim tensors and
Python scalars, through add, mul, div and comparisons (result dtypes, values and errors)."""
import itertools
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "complex128"]
SCALARS = [True, 3, -2, 2.5, 1000, 1.5 + 2j]
VALUES = {"bool": [True, False, True]}


def _values(name):
    return VALUES.get(name, [1, 2, 3])


def _pair(name, zero_dim):
    vals = _values(name)
    v = vals[1] if zero_dim else vals
    return torch.tensor(v, dtype=getattr(torch, name)), ember.tensor(v, dtype=getattr(ember, name))


def _np(x):
    if isinstance(x, ember.Tensor):
        x = x.float() if x.dtype is ember.bfloat16 else x
        return np.asarray(x.detach()._data)
    x = x.float() if x.dtype is torch.bfloat16 else x
    return x.detach().numpy()


def same(tfn, efn, low_precision=False):
    """Run both; the same exception type or the same dtype and values (loosely for float16/bfloat16 operands,
    which torch may compute at their own precision)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = tfn()
    except Exception as e:  # torch raised: ember must raise the same type
        if "ComplexHalf" in str(e):
            return  # ember has no complex32
        with pytest.raises(type(e)):
            efn()
        return
    if isinstance(want, torch.Tensor) and want.dtype is torch.complex32:
        return  # ember has no complex32 (torch's float16 with a complex operand)
    got = efn()
    if isinstance(want, torch.Tensor):
        assert _same_dtype(got.dtype, want.dtype), (got.dtype, want.dtype)
        w, g = _np(want), _np(got)
        assert g.shape == w.shape
        tol = 1e-2 if low_precision or want.dtype in (torch.float16, torch.bfloat16) else 1e-6
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    else:
        assert got == want


def _same_dtype(got, want):
    """ember's dtype matches torch's (torch's complex32, which ember lacks, is complex64 in ember)."""
    w = str(want).split(".")[-1]
    return str(got).split(".")[-1] == ("complex64" if w == "complex32" else w)


def _low(*names):
    return any(n in ("float16", "bfloat16") for n in names)


OPS = {
    "add": (lambda a, b: a + b),
    "mul": (lambda a, b: a * b),
    "div": (lambda a, b: a / b),
    "eq": (lambda a, b: a == b),
    "lt": (lambda a, b: a < b),
}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("zero_a,zero_b", [(False, False), (False, True), (True, False), (True, True)])
def test_tensor_tensor_pairs(op, zero_a, zero_b):
    f = OPS[op]
    for na, nb in itertools.product(NAMES, NAMES):
        ta, ea = _pair(na, zero_a)
        tb, eb = _pair(nb, zero_b)
        same(lambda: f(ta, tb), lambda: f(ea, eb), _low(na, nb))


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("zero_dim", [False, True])
def test_tensor_scalar_both_sides(op, zero_dim):
    f = OPS[op]
    for name, s in itertools.product(NAMES, SCALARS):
        t, e = _pair(name, zero_dim)
        same(lambda: f(t, s), lambda: f(e, s), _low(name))
        same(lambda: f(s, t), lambda: f(s, e), _low(name))


@pytest.mark.parametrize("fn", ["result_type", "promote_types", "can_cast"])
def test_dtype_functions(fn):
    for na, nb in itertools.product(NAMES, NAMES):
        if fn == "result_type":
            for zero_a, zero_b in itertools.product([False, True], repeat=2):
                ta, ea = _pair(na, zero_a)
                tb, eb = _pair(nb, zero_b)
                assert _same_dtype(ember.result_type(ea, eb), torch.result_type(ta, tb)), (na, nb)
        else:
            want = getattr(torch, fn)(getattr(torch, na), getattr(torch, nb))
            got = getattr(ember, fn)(getattr(ember, na), getattr(ember, nb))
            assert _same_dtype(got, want), (na, nb)


def test_result_type_with_scalars():
    for name, s in itertools.product(NAMES, SCALARS):
        for zero_dim in (False, True):
            t, e = _pair(name, zero_dim)
            if name == "float16" and isinstance(s, complex):
                continue
            assert _same_dtype(ember.result_type(e, s), torch.result_type(t, s)), (name, s)
    for a, b in itertools.product(SCALARS, SCALARS):
        assert _same_dtype(ember.result_type(a, b), torch.result_type(a, b)), (a, b)


def test_default_dtype_float64_changes_scalar_promotion():
    old_t, old_e = torch.get_default_dtype(), ember.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        ember.set_default_dtype(ember.float64)
        for name in ("int32", "bool", "float16", "float32"):
            t, e = _pair(name, False)
            for s in (2.5, 1j):
                same(lambda: t + s, lambda: e + s)
            same(lambda: t / t, lambda: e / e)
    finally:
        torch.set_default_dtype(old_t)
        ember.set_default_dtype(old_e)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("s", [1000, -1, 300, 2 ** 40, 2 ** 63, -(2 ** 63)])
def test_out_of_range_python_ints_wrap_like_torch(name, s):
    t, e = _pair(name, False)
    for f in (lambda a, b: a + b, lambda a, b: a == b, lambda a, b: a < b, lambda a, b: a * b):
        same(lambda: f(t, s), lambda: f(e, s))


@pytest.mark.parametrize("op", ["add_", "mul_", "sub_", "div_"])
def test_inplace_result_casts(op):
    for na, nb in itertools.product(NAMES, NAMES):
        ta, ea = _pair(na, False)
        tb, eb = _pair(nb, False)
        same(lambda: getattr(ta.clone(), op)(tb), lambda: getattr(ea.clone(), op)(eb))
