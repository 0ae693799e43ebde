import gc

import numpy as np
import pytest

import ember
from ember.utils.dlpack import DLDeviceType, from_dlpack, to_dlpack


def test_capsule_round_trip_shares_writable_memory():
    x = ember.arange(4.0)
    y = from_dlpack(to_dlpack(x))
    y[0] = 9.0
    assert x.tolist() == [9.0, 1.0, 2.0, 3.0]
    assert ember.to_dlpack(x) is not None


def test_capsule_is_consumed_once():
    c = to_dlpack(ember.ones(2))
    from_dlpack(c)
    with pytest.raises(RuntimeError, match="DLTensor capsules can be consumed only once"):
        from_dlpack(c)


def test_memory_outlives_the_producer():
    x = ember.arange(6.0).view(2, 3).t()
    y = from_dlpack(to_dlpack(x))
    del x
    gc.collect()
    assert y.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] and y.stride() == (1, 3)
    del y
    gc.collect()  # the producer's deleter runs without error


@pytest.mark.parametrize("dtype", [ember.bool, ember.uint8, ember.int32, ember.int64, ember.float16,
                                   ember.float64, ember.complex64])
def test_dtypes_survive(dtype):
    x = ember.tensor([1, 0, 1]).to(dtype)
    y = from_dlpack(to_dlpack(x))
    assert y.dtype is dtype and y.tolist() == x.tolist()


def test_producers_with_the_protocol_and_device_enum():
    assert from_dlpack(np.ones(2)).dtype is ember.float64
    assert DLDeviceType.kDLCPU == 1 and DLDeviceType.kDLCUDA == 2
