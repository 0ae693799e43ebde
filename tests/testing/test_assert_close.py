import pytest

import ember
from ember.testing import assert_close, make_tensor


def test_close_values_pass_and_far_values_report_mismatch():
    assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-7]))
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 2 \(50.0%\)"):
        assert_close(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.5]))


def test_dtype_and_shape_are_checked():
    with pytest.raises(AssertionError, match="dtype"):
        assert_close(ember.tensor([1.0]), ember.tensor([1.0], dtype=ember.float64))
    assert_close(ember.tensor([1.0]), ember.tensor([1.0], dtype=ember.float64), check_dtype=False)
    with pytest.raises(AssertionError, match="shape"):
        assert_close(ember.zeros(2), ember.zeros(3))


def test_nested_containers_and_nan():
    assert_close({"a": [ember.tensor(1.0)]}, {"a": [ember.tensor(1.0)]})
    nan = float("nan")
    with pytest.raises(AssertionError):
        assert_close(ember.tensor([nan]), ember.tensor([nan]))
    assert_close(ember.tensor([nan]), ember.tensor([nan]), equal_nan=True)


def test_make_tensor_respects_bounds_and_dtype():
    t = make_tensor(100, dtype=ember.int64, low=0, high=5)
    assert t.dtype is ember.int64 and t.shape == (100,)
    assert min(t.tolist()) >= 0 and max(t.tolist()) < 5
