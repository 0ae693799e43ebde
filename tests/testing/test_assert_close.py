import numpy as np
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
    t = make_tensor(100, dtype=ember.int64, device="cpu", low=0, high=5)
    assert t.dtype is ember.int64 and t.shape == (100,)
    assert min(t.tolist()) >= 0 and max(t.tolist()) < 5


def _message(actual, expected, **kw):
    with pytest.raises(Exception) as e:
        assert_close(actual, expected, **kw)
    return type(e.value), str(e.value)


def test_tensor_report_gives_both_indices_in_the_tensor_dtype():
    kind, msg = _message(ember.arange(6.0).view(2, 3), ember.arange(6.0).view(2, 3) * 1.1)
    assert kind is AssertionError
    assert msg == ("Tensor-likes are not close!\n\nMismatched elements: 5 / 6 (83.3%)\n"
                   "Greatest absolute difference: 0.5 at index (1, 2) (up to 1e-05 allowed)\n"
                   "Greatest relative difference: 0.09090914577245712 at index (1, 0) (up to 1.3e-06 allowed)")


def test_integer_and_bool_tensors_report_equality():
    _, msg = _message(ember.tensor([1, 2]), ember.tensor([1, 3]))
    assert msg == ("Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
                   "Greatest absolute difference: 1 at index (1,)\n"
                   "Greatest relative difference: 0.3333333432674408 at index (1,)")
    _, msg = _message(ember.tensor([True, False]), ember.tensor([True, True]))
    assert "Greatest absolute difference: 1 at index (1,)" in msg and "not equal" in msg


def test_python_scalars_and_zero_dim_tensors_use_the_scalar_report():
    assert _message(1, 2) == (AssertionError, "Scalars are not equal!\n\nExpected 2 but got 1.\n"
                                              "Absolute difference: 1\nRelative difference: 0.5")
    kind, msg = _message(ember.tensor(1.0), ember.tensor(2.0))
    assert msg == ("Scalars are not close!\n\nExpected 2.0 but got 1.0.\n"
                   "Absolute difference: 1.0 (up to 1e-05 allowed)\nRelative difference: 0.5 (up to 1.3e-06 allowed)")
    assert _message(1, 1.0) == (AssertionError, "The (d)types do not match: <class 'int'> != <class 'float'>.")
    assert _message(True, False) == (AssertionError, "Booleans mismatch: True is not False")
    assert _message(None, 1) == (AssertionError, "None mismatch: None is not 1")
    assert_close(1.0, 1.0 + 1e-9)


def test_unrelated_types_are_a_type_error():
    kind, msg = _message(ember.tensor(1.0), 1.0)
    assert kind is TypeError and msg.startswith("No comparison pair was able to handle inputs of type")
    kind, _ = _message(ember.ones(1), np.ones(1))
    assert kind is TypeError
    kind, _ = _message(ember.nn.Parameter(ember.ones(1)), ember.ones(1), allow_subclasses=False)
    assert kind is TypeError
    assert_close(np.ones(2), np.ones(2))  # two arrays compare as tensors


def test_nested_failures_name_the_item_and_msg_replaces_or_wraps():
    _, msg = _message({"a": ember.ones(1)}, {"a": ember.zeros(1)})
    assert msg.endswith("Greatest relative difference: inf at index (0,) (up to 1.3e-06 allowed)\n\n"
                        "The failure occurred for item ['a']")
    _, msg = _message({"x": [1, ember.ones(2)]}, {"x": [1, ember.ones(3)]}, msg=lambda m: "<" + m + ">")
    assert msg == ("<The values for attribute 'shape' do not match: ember.Size([2]) != ember.Size([3]).\n\n"
                   "The failure occurred for item ['x'][1]>")
    assert _message(ember.ones(1), ember.zeros(1), msg="custom") == (AssertionError, "custom")
    assert _message({"a": 1}, {"b": 1}) == (AssertionError, "The keys of the mappings do not match:\n"
                                                            "Missing keys in the actual mapping: ['b']\n"
                                                            "Additional keys in the actual mapping: ['a']")
    assert _message([1, 2], [1]) == (AssertionError, "The length of the sequences mismatch: 2 != 1")
    assert _message([ember.ones(1)], [ember.ones(1)], rtol=1) == (
        ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no atol.\n\n"
                    "The failure occurred for item [0]")


def test_stride_dtype_promotion_and_infinities():
    _, msg = _message(ember.ones(2, 3).t(), ember.ones(3, 2), check_stride=True)
    assert msg == "The values for attribute 'stride()' do not match: (1, 3) != (2, 1)."
    assert_close(ember.tensor([1, 2]), ember.tensor([1.0, 2.0]), check_dtype=False)
    assert_close(ember.tensor([float("inf")]), ember.tensor([float("inf")]))
    _, msg = _message(ember.tensor([float("inf")]), ember.tensor([-float("inf")]))
    assert "Greatest absolute difference: inf at index (0,)" in msg and "relative difference: nan" in msg


def test_assert_allclose_is_deprecated_and_looser():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        ember.testing.assert_allclose(ember.tensor([1.0]), [1.00005])
    with pytest.warns(FutureWarning), pytest.raises(AssertionError):
        ember.testing.assert_allclose(ember.tensor([1.0]), [1.1])


def test_make_tensor_needs_device_and_checks_bounds():
    with pytest.raises(TypeError):
        make_tensor(3, dtype=ember.float32)
    with pytest.raises(ValueError, match="`low` must be less than `high`, but got 3 >= 2"):
        make_tensor(3, dtype=ember.float32, device="cpu", low=3, high=2)
    t = make_tensor((3, 4), dtype=ember.float32, device="cpu", noncontiguous=True)
    assert t.shape == (3, 4) and not t.is_contiguous()
