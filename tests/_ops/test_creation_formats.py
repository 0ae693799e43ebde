"""Creation functions: memory formats of *_like and empty, requires_grad errors, DLPack capsules, and the
warning for a list of NumPy arrays."""
import warnings

import numpy as np
import pytest

import ember
from ember._ops import creation

_GRAD_MSG = "Only Tensors of floating point and complex dtype can require gradients"
_LIKES = [
    lambda x, **kw: ember.empty_like(x, **kw), lambda x, **kw: ember.zeros_like(x, **kw),
    lambda x, **kw: ember.ones_like(x, **kw), lambda x, **kw: ember.full_like(x, 2.5, **kw),
    lambda x, **kw: ember.rand_like(x, **kw), lambda x, **kw: ember.randn_like(x, **kw),
    lambda x, **kw: ember.randint_like(x, 5, **kw),
]


def _cl():
    return ember.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)


@pytest.mark.parametrize("make", [
    lambda: ember.arange(3, requires_grad=True), lambda: ember.zeros(2, dtype=ember.int64, requires_grad=True),
    lambda: ember.full((2,), 1, requires_grad=True), lambda: ember.tensor([1, 2], requires_grad=True),
    lambda: ember.eye(2, dtype=ember.int64, requires_grad=True), lambda: ember.randperm(3, requires_grad=True),
    lambda: ember.randint(0, 3, (2,), requires_grad=True),
    lambda: ember.zeros_like(ember.ones(2), dtype=ember.int64, requires_grad=True),
    lambda: ember.randint_like(ember.ones(2, dtype=ember.int64), 3, requires_grad=True),
    lambda: ember.empty(2, 3, 4, 5, dtype=ember.int64, memory_format=ember.channels_last, requires_grad=True),
    lambda: ember.zeros_like(_cl(), dtype=ember.int32, requires_grad=True),
])
def test_integer_factories_cannot_require_grad(make):
    with pytest.raises(RuntimeError) as e:
        make()
    assert str(e.value) == _GRAD_MSG


def test_float_factories_require_grad():
    assert ember.arange(3.0, requires_grad=True).requires_grad
    assert ember.randint_like(ember.ones(2), 3, requires_grad=True).requires_grad


@pytest.mark.parametrize("like", _LIKES)
def test_like_preserves_channels_last(like):
    x = _cl()
    assert x.stride() == (60, 1, 15, 3)
    r = like(x)
    assert r.shape == (2, 3, 4, 5) and r.stride() == (60, 1, 15, 3)
    assert r.is_contiguous(memory_format=ember.channels_last) and not r.is_contiguous()
    assert like(x, memory_format=ember.contiguous_format).stride() == (60, 20, 5, 1)
    assert like(x, memory_format=ember.preserve_format).stride() == (60, 1, 15, 3)
    c = like(ember.ones(2, 3, 4, 5), memory_format=ember.channels_last)
    assert c.stride() == (60, 1, 15, 3)


@pytest.mark.parametrize("like", _LIKES)
def test_like_preserves_permuted_and_sliced_layouts(like):
    # torch's infer_dense_strides: the input's dim order, made dense
    assert like(ember.ones(3, 4).t()).stride() == (1, 4)
    assert like(ember.ones(2, 3, 4).permute(2, 0, 1)).stride() == (1, 12, 4)
    assert like(ember.ones(2, 3, 4, 5)[:, :, ::2]).stride() == (30, 10, 5, 1)
    assert like(_cl()[:, :, ::2]).stride() == (30, 1, 15, 3)
    assert like(ember.ones(6, 4).t()[::2]).stride() == (1, 2)
    assert like(ember.ones(3, 1).expand(3, 4)).stride() == (4, 1)
    cl3d = ember.ones(2, 3, 4, 5, 6).contiguous(memory_format=ember.channels_last_3d)
    assert like(cl3d).stride() == (360, 1, 90, 18, 3)


def test_like_values_and_leaf():
    x = _cl()
    z = ember.full_like(x, 7, requires_grad=True)
    assert z.is_leaf and z.requires_grad and z.grad_fn is None
    assert z.tolist() == np.full((2, 3, 4, 5), 7.0).tolist()
    (z * ember.arange(5.0)).sum().backward()
    assert z.grad.tolist() == np.broadcast_to(np.arange(5.0), (2, 3, 4, 5)).tolist()
    r = ember.randint_like(x, 2, 4)
    assert r.dtype == ember.float32 and 2 <= r.min().item() and r.max().item() < 4
    assert ember.ones_like(ember.ones(3, 4).t(), dtype=ember.int64).dtype == ember.int64


def test_like_memory_format_errors():
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        ember.empty_like(ember.ones(2, 3), memory_format=ember.channels_last)
    with pytest.raises(RuntimeError, match="^required rank 5 tensor to use channels_last_3d format$"):
        ember.zeros_like(ember.ones(2, 3, 4, 5), memory_format=ember.channels_last_3d)
    with pytest.raises(TypeError) as e:
        ember.empty_like(ember.ones(2), memory_format="x")
    assert str(e.value) == "empty_like(): argument 'memory_format' must be ember.memory_format, not str"


def test_empty_with_memory_format():
    t = ember.empty(2, 3, 4, 5, memory_format=ember.channels_last)
    assert t.shape == (2, 3, 4, 5) and t.stride() == (60, 1, 15, 3)
    assert ember.empty((2, 3, 4, 5), memory_format=ember.contiguous_format).stride() == (60, 20, 5, 1)
    assert ember.empty(2, 3, 4, 5, memory_format=ember.channels_last, requires_grad=True).is_leaf
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        ember.empty(2, 3, memory_format=ember.channels_last)
    with pytest.raises(RuntimeError, match="^unsupported memory format Preserve$"):
        ember.empty(2, 3, memory_format=ember.preserve_format)


def test_from_dlpack_accepts_a_capsule():
    a = np.arange(3.0)
    cap = a.__dlpack__()
    t = ember.from_dlpack(cap)
    assert t.dtype == ember.float64 and t.tolist() == [0.0, 1.0, 2.0]
    t[0] = 5.0
    assert a[0] == 5.0  # memory is shared
    with pytest.raises(RuntimeError, match="DLTensor capsules can be consumed only once"):
        ember.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="from_dlpack received an invalid capsule"):
        ember.from_dlpack([1])
    u = ember.from_dlpack(ember.utils.dlpack.to_dlpack(ember.ones(2)))
    assert u.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("make", [
    lambda a: ember.tensor([a, a]), lambda a: ember.tensor((a,)), lambda a: ember.tensor([[a, a]]),
    lambda a: ember.tensor([a, [1.0, 2.0]]), lambda a: ember.tensor([a, a], dtype=ember.float32),
    lambda a: ember.as_tensor([a, a]),
])
def test_list_of_arrays_warns_once(make):
    creation._LIST_OF_ARRAYS_WARNED[0] = False
    a = np.ones(2)
    with pytest.warns(UserWarning, match="^Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                                         "consider converting the list to a single numpy.ndarray with numpy.array"
                                         r"\(\) before converting to a tensor.$"):
        t = make(a)
    assert t.tolist()[0] == [1.0, 1.0] or t.tolist()[0] == [[1.0, 1.0], [1.0, 1.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make(a)  # once per process, as torch


def test_no_list_of_arrays_warning_without_arrays_or_elements():
    creation._LIST_OF_ARRAYS_WARNED[0] = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.tensor([np.ones(0), np.ones(0)]).shape == (2, 0)
        assert ember.tensor([np.float64(1), np.float64(2)]).dtype == ember.float64
        assert ember.tensor(np.ones(2)).shape == (2,)
    assert not creation._LIST_OF_ARRAYS_WARNED[0]
    creation._LIST_OF_ARRAYS_WARNED[0] = True
    t = ember.tensor([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert t.dtype == ember.float64 and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
