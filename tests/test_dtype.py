"""dtype objects, promote_types/can_cast tables, the default dtype, finfo and iinfo."""
import pickle

import ml_dtypes
import numpy as np
import pytest

import ember

ALL = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64, ember.float16, ember.bfloat16,
       ember.float32, ember.float64, ember.complex64, ember.complex128]


def test_aliases_are_the_same_objects():
    assert ember.float is ember.float32 and ember.double is ember.float64 and ember.half is ember.float16
    assert ember.int is ember.int32 and ember.long is ember.int64 and ember.short is ember.int16
    assert ember.cfloat is ember.complex64 and ember.cdouble is ember.complex128


@pytest.mark.parametrize("dt", ALL, ids=str)
def test_attributes(dt):
    assert repr(dt) == "ember." + dt.name
    assert dt.is_floating_point == (dt in (ember.float16, ember.bfloat16, ember.float32, ember.float64))
    assert dt.is_complex == (dt in (ember.complex64, ember.complex128))
    assert dt.is_signed == (dt not in (ember.bool, ember.uint8))
    assert dt.itemsize == {ember.bool: 1, ember.uint8: 1, ember.int8: 1, ember.int16: 2, ember.int32: 4,
                           ember.int64: 8, ember.float16: 2, ember.bfloat16: 2, ember.float32: 4, ember.float64: 8,
                           ember.complex64: 8, ember.complex128: 16}[dt]
    assert pickle.loads(pickle.dumps(dt)) is dt


def test_to_real_and_to_complex():
    assert ember.complex64.to_real() is ember.float32 and ember.complex128.to_real() is ember.float64
    assert ember.int32.to_real() is ember.int32
    assert ember.float64.to_complex() is ember.complex128 and ember.bfloat16.to_complex() is ember.complex64
    assert ember.complex64.to_complex() is ember.complex64
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Int"):
        ember.int32.to_complex()


# torch's promotion rules, written out for the cases NumPy gets differently
@pytest.mark.parametrize("a,b,want", [
    (ember.bool, ember.bool, ember.bool), (ember.bool, ember.uint8, ember.uint8),
    (ember.uint8, ember.int8, ember.int16), (ember.int8, ember.int64, ember.int64),
    (ember.int64, ember.float16, ember.float16), (ember.int64, ember.bfloat16, ember.bfloat16),
    (ember.float16, ember.bfloat16, ember.float32), (ember.bfloat16, ember.float64, ember.float64),
    (ember.int32, ember.float32, ember.float32), (ember.float64, ember.complex64, ember.complex128),
    (ember.float16, ember.complex64, ember.complex64), (ember.uint8, ember.complex128, ember.complex128),
])
def test_promote_types(a, b, want):
    assert ember.promote_types(a, b) is want
    assert ember.promote_types(b, a) is want


def test_promote_types_is_symmetric_and_idempotent():
    for a in ALL:
        assert ember.promote_types(a, a) is a
        for b in ALL:
            assert ember.promote_types(a, b) is ember.promote_types(b, a)


@pytest.mark.parametrize("a,b,want", [
    (ember.float32, ember.int32, False), (ember.int32, ember.float32, True), (ember.complex64, ember.float64, False),
    (ember.float64, ember.float16, True), (ember.int64, ember.bool, False), (ember.bool, ember.int8, True),
    (ember.int64, ember.uint8, True), (ember.float32, ember.complex64, True),
])
def test_can_cast(a, b, want):
    assert ember.can_cast(a, b) is want


def test_set_default_dtype():
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.get_default_dtype() is ember.float64
        assert ember.tensor([1.5]).dtype is ember.float64
        assert ember.tensor([1j]).dtype is ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(TypeError, match="^only floating-point types are supported as the default type$"):
        ember.set_default_dtype(ember.int64)
    assert ember.get_default_dtype() is ember.float32


@pytest.mark.parametrize("dt,np_dt", [(ember.float16, np.float16), (ember.bfloat16, ml_dtypes.bfloat16),
                                      (ember.float32, np.float32), (ember.float64, np.float64),
                                      (ember.complex64, np.float32)])
def test_finfo(dt, np_dt):
    info, ref = ember.finfo(dt), ml_dtypes.finfo(np_dt)
    assert info.bits == ref.bits
    assert info.eps == float(ref.eps) and info.max == float(ref.max) and info.min == float(ref.min)
    assert info.tiny == info.smallest_normal == float(ref.smallest_normal)
    assert info.resolution == 10.0 ** -ref.precision
    assert info.dtype == np.dtype(np_dt).name
    assert info == ember.finfo(dt.to_real())


def test_finfo_defaults_and_repr():
    assert ember.finfo().dtype == "float32"
    assert repr(ember.finfo(ember.float32)) == (
        "finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, smallest_normal=1.17549e-38, "
        "tiny=1.17549e-38, dtype=float32)")
    with pytest.raises(TypeError, match="requires a floating point input type"):
        ember.finfo(ember.int32)


@pytest.mark.parametrize("dt", [ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64], ids=str)
def test_iinfo(dt):
    info, ref = ember.iinfo(dt), np.iinfo(dt.np)
    assert (info.bits, info.min, info.max, info.dtype) == (ref.bits, int(ref.min), int(ref.max), dt.name)


def test_iinfo_errors_and_repr():
    assert repr(ember.iinfo(ember.uint8)) == "iinfo(min=0, max=255, dtype=uint8)"
    with pytest.raises(TypeError, match="requires an integer input type"):
        ember.iinfo(ember.float32)
    with pytest.raises(TypeError, match="ember.bool is not supported by ember.iinfo"):
        ember.iinfo(ember.bool)


def test_tensor_dtype_is_the_shared_object():
    for dt in ALL:
        assert ember.zeros(1, dtype=dt).dtype is dt
