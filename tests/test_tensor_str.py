"""repr(tensor): torch's formatting rules, as literal expected strings."""
import numpy as np
import pytest

import ember
from ember._tensor_str import get_printoptions, legacy_type_name, printoptions

T = ember.tensor
nan, inf = float("nan"), float("inf")

CASES = [
    (lambda: T(1.5), "tensor(1.5000)"),
    (lambda: T(3), "tensor(3)"),
    (lambda: T(True), "tensor(True)"),
    (lambda: T(-0.0), "tensor(-0.)"),
    (lambda: T([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (lambda: T([1.0, 2.5, -3.0]), "tensor([ 1.0000,  2.5000, -3.0000])"),
    (lambda: T([[1, 2], [3, 4]]), "tensor([[1, 2],\n        [3, 4]])"),
    (lambda: T([[1, -20], [300, 4]]), "tensor([[  1, -20],\n        [300,   4]])"),
    (lambda: T([True, False]), "tensor([ True, False])"),
    (lambda: T([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: T([1e8, 1.0]), "tensor([1.0000e+08, 1.0000e+00])"),
    (lambda: T([1000.0, 1.0]), "tensor([1000.,    1.])"),
    (lambda: T([1001.5, 1.0]), "tensor([1.0015e+03, 1.0000e+00])"),
    (lambda: T([inf, -inf, nan, 0.0, 1.5]), "tensor([   inf,   -inf,    nan, 0.0000, 1.5000])"),
    (lambda: T([inf, nan, 2.0]), "tensor([inf, nan, 2.])"),
    (lambda: T([nan]), "tensor([nan])"),
    (lambda: T([0.0, -0.0]), "tensor([0., -0.])"),
    (lambda: T([1 + 2j, -0.5j]), "tensor([1.+2.0000j, -0.-0.5000j])"),  # real and imaginary formatted apart
    (lambda: T([1 + 2j, 3 - 1j]), "tensor([1.+2.j, 3.-1.j])"),
    (lambda: T([1.5, 2.0], dtype=ember.float64), "tensor([1.5000, 2.0000], dtype=ember.float64)"),
    (lambda: T([1, 2], dtype=ember.int32), "tensor([1, 2], dtype=ember.int32)"),
    (lambda: T([1, 2], dtype=ember.uint8), "tensor([1, 2], dtype=ember.uint8)"),
    (lambda: T([1.0, 2.0], dtype=ember.float16), "tensor([1., 2.], dtype=ember.float16)"),
    (lambda: T([0.1, 2.0], dtype=ember.bfloat16), "tensor([0.1001, 2.0000], dtype=ember.bfloat16)"),
    (lambda: T([1j], dtype=ember.complex128), "tensor([0.+1.j], dtype=ember.complex128)"),
    (lambda: ember.zeros(0), "tensor([])"),
    (lambda: ember.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: ember.zeros(0, dtype=ember.int64), "tensor([], dtype=ember.int64)"),
    (lambda: ember.zeros(2, 0, dtype=ember.bool), "tensor([], size=(2, 0), dtype=ember.bool)"),
    (lambda: ember.ones(2, requires_grad=True), "tensor([1., 1.], requires_grad=True)"),
    (lambda: ember.ones(2, requires_grad=True) * 2, "tensor([2., 2.], grad_fn=<MulBackward0>)"),
    (lambda: ember.ones(2, requires_grad=True) + 1, "tensor([2., 2.], grad_fn=<AddBackward0>)"),
    (lambda: ember.arange(8).reshape(2, 2, 2),
     "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])"),
    (lambda: ember.arange(2000),
     "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
    (lambda: ember.arange(2000).reshape(40, 50),
     ("tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
     "        [  50,   51,   52,  ...,   97,   98,   99],\n"
     "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
     "        ...,\n"
     "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
     "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
     "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])")),
    (lambda: T([[0.0, 1.0], [1999.0, 3.0]]),
     "tensor([[0.0000e+00, 1.0000e+00],\n        [1.9990e+03, 3.0000e+00]])"),  # max/min > 1000: scientific
    (lambda: ember.arange(30) * 1000,
     ("tensor([    0,  1000,  2000,  3000,  4000,  5000,  6000,  7000,  8000,  9000,\n"
     "        10000, 11000, 12000, 13000, 14000, 15000, 16000, 17000, 18000, 19000,\n"
     "        20000, 21000, 22000, 23000, 24000, 25000, 26000, 27000, 28000, 29000])")),
    (lambda: ember.arange(12.0, dtype=ember.float64) * 1.123456,
     ("tensor([ 0.0000,  1.1235,  2.2469,  3.3704,  4.4938,  5.6173,  6.7407,  7.8642,\n"
     "         8.9876, 10.1111, 11.2346, 12.3580], dtype=ember.float64)")),
]


@pytest.mark.parametrize("make,expected", CASES, ids=[c[1][:40] for c in CASES])
def test_repr(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_suffix_moves_to_next_line_when_too_long():
    t = ember.arange(10.0, dtype=ember.float64) * 1000.5 + 0.25
    t.requires_grad_(True)
    assert repr(t) == ("tensor([2.5000e-01, 1.0008e+03, 2.0012e+03, 3.0018e+03, 4.0022e+03, 5.0028e+03,\n"
                       "        6.0032e+03, 7.0038e+03, 8.0042e+03, 9.0048e+03], dtype=ember.float64,\n"
                       "       requires_grad=True)")


def test_default_dtype_changes_suffixes():
    ember.set_default_dtype(ember.float64)
    try:
        assert repr(T([1.5])) == "tensor([1.5000])"
        assert repr(T([1.5], dtype=ember.float32)) == "tensor([1.5000], dtype=ember.float32)"
        assert repr(T([1j])) == "tensor([0.+1.j])"
        assert repr(T([1j], dtype=ember.complex64)) == "tensor([0.+1.j], dtype=ember.complex64)"
    finally:
        ember.set_default_dtype(ember.float32)


def test_set_printoptions():
    x = T([1.123456789, 2.0])
    try:
        ember.set_printoptions(precision=2)
        assert repr(x) == "tensor([1.12, 2.00])"
        ember.set_printoptions(threshold=5)
        assert repr(ember.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
        ember.set_printoptions(profile="short")
        assert repr(ember.arange(2000)) == "tensor([   0,    1,  ..., 1998, 1999])"
        ember.set_printoptions(profile="full")
        assert "..." not in repr(ember.arange(2000))
        ember.set_printoptions(profile="default", sci_mode=True)
        assert repr(x) == "tensor([1.1235e+00, 2.0000e+00])"
        ember.set_printoptions(sci_mode=False)
        assert repr(T([1e-8, 1.0])) == "tensor([0.0000, 1.0000])"
        ember.set_printoptions(linewidth=30)
        assert repr(ember.arange(10) * 100) == ("tensor([  0, 100, 200, 300,\n        400, 500, 600, 700,\n"
                                                "        800, 900])")
        ember.set_printoptions(profile="default", edgeitems=0, threshold=3)
        assert repr(ember.arange(5)) == "tensor([...], size=(5,))"
    finally:
        ember.set_printoptions(profile="default")
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                  "sci_mode": None}
    with printoptions(precision=1):
        assert repr(x) == "tensor([1.1, 2.0])"
    assert repr(x) == "tensor([1.1235, 2.0000])"


def test_subclass_prefix_and_legacy_names():
    class MyTensor(ember.Tensor):
        pass

    t = T([1.0, 2.0]).as_subclass(MyTensor)
    assert repr(t) == "MyTensor([1., 2.])"
    assert legacy_type_name(T([1.0])) == "ember.FloatTensor"
    assert legacy_type_name(T([1], dtype=ember.int16)) == "ember.ShortTensor"


def test_repr_does_not_change_the_tensor_or_warn():
    a = np.array([1e-300, 1e300, nan, -inf])
    t = ember.from_numpy(a.copy())
    with np.errstate(all="raise"):
        s = repr(t)
    assert s == "tensor([1.0000e-300, 1.0000e+300,         nan,        -inf],\n       dtype=ember.float64)"
    np.testing.assert_array_equal(t.numpy(), a)
