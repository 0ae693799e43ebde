"""Comparisons, logical ops, isclose/allclose/equal and where."""
import numpy as np
import pytest

import ember
from tests.helpers import assert_close

CMP = [("eq", "==", np.equal), ("ne", "!=", np.not_equal), ("lt", "<", np.less), ("le", "<=", np.less_equal),
       ("gt", ">", np.greater), ("ge", ">=", np.greater_equal)]
ALIASES = {"ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


@pytest.mark.parametrize("name,sym,ref", CMP, ids=[c[0] for c in CMP])
@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int32, ember.int64, ember.float16, ember.bfloat16,
                                   ember.float32, ember.float64])
def test_comparisons_match_numpy(name, sym, ref, dtype):
    a = np.array([[0, 1, 2], [3, 1, 0]])
    b = np.array([1, 1, 0])
    if dtype is ember.bool:
        a, b = a > 0, b > 0
    ta, tb = ember.tensor(a, dtype=dtype), ember.tensor(b, dtype=dtype)
    for got in (getattr(ember, name)(ta, tb), getattr(ta, name)(tb), eval(f"ta {sym} tb"),
                getattr(ember, ALIASES.get(name, name))(ta, tb)):
        assert got.dtype is ember.bool
        assert_close(got, ref(a, b))


@pytest.mark.parametrize("name,sym,ref", CMP, ids=[c[0] for c in CMP])
def test_comparisons_with_numbers_on_both_sides(name, sym, ref):
    a = np.array([1.0, 2.0, np.nan, 3.0], np.float32)
    for s in (2, 2.0, True):
        env = {"t": ember.tensor(a), "s": s}
        assert_close(eval(f"t {sym} s", env), ref(a, s))
        assert_close(eval(f"s {sym} t", env), ref(s, a))


def test_comparison_promotes_before_comparing():
    # float32 cannot hold 2**24 + 1: torch compares in the promoted dtype (float32), not in float64
    t = ember.tensor([2 ** 24 + 1])
    assert (t == 16777216.0).item() is True
    assert (ember.tensor([1, 2], dtype=ember.int8) == ember.tensor([1.0, 2.5])).tolist() == [True, False]
    assert (ember.tensor([1], dtype=ember.uint8) < -1).item() is True  # -1 wraps to 255, as in torch


def test_eq_with_non_numbers_is_false_and_tensors_hash_by_identity():
    t = ember.ones(2)
    assert (t == None) is False  # noqa: E711 (the operator itself is under test)
    assert (t != "a") is True
    assert hash(t) == id(t)
    d = {t: 1}
    assert d[t] == 1
    assert t in [t] and t in {t}


def test_order_comparison_of_complex_raises():
    c, d = ember.tensor([1 + 1j]), ember.tensor([1 + 1j])
    with pytest.raises(NotImplementedError, match="\"lt_cpu\" not implemented for 'ComplexFloat'"):
        ember.lt(c, d)
    with pytest.raises(NotImplementedError, match="\"ge_cpu\" not implemented for 'ComplexFloat'"):
        ember.ones(1).ge(1j)
    assert (c == d).item() is True


def test_comparison_results_carry_no_graph():
    a = ember.ones(2, requires_grad=True)
    r = a > 0
    assert r.grad_fn is None and not r.requires_grad


def test_inplace_comparison_keeps_dtype_and_out():
    t = ember.tensor([1.0, 5.0])
    t.gt_(2)
    assert t.dtype is ember.float32
    assert_close(t, np.array([0.0, 1.0]))
    out = ember.empty(2, dtype=ember.bool)
    r = ember.eq(ember.tensor([1, 2]), 2, out=out)
    assert r is out
    assert_close(out, np.array([False, True]))


def test_broadcast_error():
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match the size of tensor b \\(3\\)"):
        ember.lt(ember.ones(2), ember.ones(3))


# ---------------- logical ----------------
@pytest.mark.parametrize("name,ref", [("logical_and", np.logical_and), ("logical_or", np.logical_or),
                                      ("logical_xor", np.logical_xor)])
def test_logical_ops(name, ref):
    a = np.array([0.0, 1.5, np.nan, 0.0])
    b = np.array([0, 0, 3, 2])
    ta, tb = ember.tensor(a), ember.tensor(b)
    got = getattr(ember, name)(ta, tb)
    assert got.dtype is ember.bool
    assert_close(got, ref(a, b))
    assert_close(getattr(ta, name)(tb), ref(a, b))
    out = ember.empty(4)
    getattr(ember, name)(ta, tb, out=out)
    assert_close(out, ref(a, b).astype(np.float32))
    t = ember.tensor(a)
    getattr(t, name + "_")(tb)
    assert t.dtype is ember.float64
    assert_close(t, ref(a, b).astype(np.float64))
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'other' \\(position 2\\) must be Tensor, not int"):
        getattr(ember, name)(ta, 1)


# ---------------- isclose / allclose / equal ----------------
def test_isclose():
    a = ember.tensor([1.0, 1.0, np.nan, np.inf, np.inf, 0.0])
    b = ember.tensor([1.0 + 1e-6, 1.1, np.nan, np.inf, -np.inf, 1e-9])
    assert_close(ember.isclose(a, b), np.array([True, False, False, True, False, True]))
    assert_close(ember.isclose(a, b, equal_nan=True), np.array([True, False, True, True, False, True]))
    assert_close(a.isclose(b, rtol=0.2), np.array([True, True, False, True, False, True]))
    assert_close(ember.isclose(a, b, rtol=0, atol=0), np.array([False, False, False, True, False, False]))
    i = ember.tensor([1, 2, 3])
    assert_close(ember.isclose(i, ember.tensor([1, 3, 5]), atol=1), np.array([True, True, False]))
    assert_close(ember.isclose(ember.tensor([True]), ember.tensor([False])), np.array([False]))


def test_isclose_errors():
    with pytest.raises(RuntimeError, match="^Float did not match Long$"):
        ember.isclose(ember.ones(2), ember.ones(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="rtol must be greater than or equal to zero, but got -1"):
        ember.isclose(ember.ones(2), ember.ones(2), rtol=-1)
    with pytest.raises(RuntimeError, match="atol must be greater than or equal to zero, but got -0.5"):
        ember.isclose(ember.ones(2), ember.ones(2), atol=-0.5)
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match"):
        ember.allclose(ember.ones(2), ember.ones(3))


def test_allclose_and_equal_return_python_bools():
    a = ember.tensor([1.0, 2.0])
    assert ember.allclose(a, a + 1e-7) is True
    assert a.allclose(a + 1) is False
    assert ember.equal(a, ember.tensor([1.0, 2.0])) is True
    assert ember.equal(a, ember.tensor([1, 2])) is True  # dtypes may differ
    assert ember.equal(a, ember.tensor([1.0, 2.0, 3.0])) is False
    assert a.equal(ember.tensor([[1.0, 2.0]])) is False
    assert ember.equal(ember.tensor([np.nan]), ember.tensor([np.nan])) is False


# ---------------- where ----------------
def test_where_values_and_dtypes():
    c = ember.tensor([True, False, True])
    x = ember.tensor([1.0, 2.0, 3.0])
    y = ember.tensor([10, 20, 30])
    r = ember.where(c, x, y)
    assert r.dtype is ember.float32
    assert_close(r, np.array([1.0, 20.0, 3.0]))
    assert ember.where(c, 1, 0).dtype is ember.int64
    assert ember.where(c, 1.0, 0).dtype is ember.float32
    assert ember.where(c, y.to(ember.int8), 5).dtype is ember.int8
    assert ember.where(c, x.half(), 2.5).dtype is ember.float16
    assert_close(x.where(c, -1.0), np.array([1.0, -1.0, 3.0]))
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        ember.where(c, y.to(ember.int8), 1000)


def test_where_errors():
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor with "
                                           "dtype Float"):
        ember.where(ember.ones(2), ember.ones(2), ember.ones(2))
    with pytest.raises(RuntimeError, match="The size of tensor a \\(3\\) must match the size of tensor b \\(2\\)"):
        ember.where(ember.tensor([True, False, True]), ember.ones(3), ember.ones(2))


def test_where_single_argument_is_nonzero_as_tuple():
    c = ember.tensor([[True, False], [False, True]])
    rows, cols = ember.where(c)
    assert rows.dtype is ember.int64
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]


def test_where_gradient_and_version_checks():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = ember.tensor([4.0, 5.0, 6.0], requires_grad=True)
    c = ember.tensor([True, False, True])
    ember.where(c, x * 1, y).sum().backward()
    assert_close(x.grad, np.array([1.0, 0.0, 1.0]))
    assert_close(y.grad, np.array([0.0, 1.0, 0.0]))
    xs = x * 1
    r = ember.where(c, xs, y)
    xs.add_(1)  # the values are not needed for the gradient: no error
    r.sum().backward()
    r = ember.where(c, x, y)
    c[0] = False  # the condition is
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.sum().backward()


def test_isin():
    a = ember.tensor([[1, 2], [3, 4]])
    assert ember.isin(a, ember.tensor([2, 3])).tolist() == [[False, True], [True, False]]
    assert ember.isin(a, ember.tensor([2, 3]), invert=True).tolist() == [[True, False], [False, True]]
    assert ember.isin(ember.tensor([1, 2]), 2).tolist() == [False, True]
    r = ember.isin(2, ember.tensor([1, 2]))
    assert r.shape == () and r.item() is True
    assert ember.isin(ember.tensor([1.5, 2.0]), ember.tensor([2])).tolist() == [False, True]
    with pytest.raises(RuntimeError, match="Unsupported input type encountered for isin\\(\\): ComplexFloat"):
        ember.isin(ember.tensor([1j]), ember.tensor([1j]))
