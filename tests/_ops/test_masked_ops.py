"""masked_fill's checked conversion of the fill value, as torch's: overflow and complex-into-real raise."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("dtype, value, ctype", [
    (ember.int8, 300, "int8_t"), (ember.int16, 70000, "int16_t"), (ember.int32, 2 ** 40, "int"),
    (ember.int64, 1 + 2j, "int64_t"), (ember.uint8, 1000, "uint8_t"), (ember.float16, 1e6, "c10::Half"),
    (ember.float32, 1e300, "float"), (ember.bfloat16, 1e300, "c10::BFloat16"),
])
def test_values_that_do_not_fit_raise(dtype, value, ctype):
    x = ember.zeros(3, dtype=dtype)
    mask = ember.tensor([True, False, True])
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {ctype} without overflow"):
        x.masked_fill(mask, value)
    with pytest.raises(RuntimeError, match=f"value cannot be converted to type {ctype} without overflow"):
        x.masked_fill_(mask, ember.tensor(value, dtype=ember.float64) if isinstance(value, float) else
                       ember.tensor(value))
    assert (x.numpy() == 0).all()  # nothing half-written


def test_values_torch_accepts():
    mask = ember.tensor([True, False])
    np.testing.assert_array_equal(ember.zeros(2, dtype=ember.uint8).masked_fill(mask, -1).numpy(), [255, 0])
    np.testing.assert_array_equal(ember.zeros(2, dtype=ember.bool).masked_fill(mask, 5).numpy(), [True, False])
    np.testing.assert_array_equal(ember.zeros(2).masked_fill(mask, float("inf")).numpy(), [np.inf, 0])
    np.testing.assert_array_equal(ember.zeros(2, dtype=ember.int64).masked_fill(mask, 2.7).numpy(), [2, 0])
    np.testing.assert_array_equal(ember.zeros(2, dtype=ember.complex64).masked_fill(mask, 1 + 2j).numpy(),
                                  [1 + 2j, 0])


def test_complex_out_dtype_and_narrow_copy_dim():
    a = ember.randn(2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="Expected object of scalar type ComplexDouble but got scalar type "
                                           "ComplexFloat for argument 'out'"):
        ember.complex(a, a, out=ember.empty(2, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match=r"Expected dim < static_cast<int64_t>\(self_sizes.size\(\)\)"):
        ember.narrow_copy(ember.randn(2, 3), 2, 0, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        ember.narrow_copy(ember.randn(2, 3), -3, 0, 1)
