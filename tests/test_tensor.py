"""Tensor attributes, conversions and Python protocols."""
import copy
import pickle

import numpy as np
import pytest

import ember


def test_metadata_matches_torch_conventions():
    t = ember.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, ember.Size)
    assert t.size() == ember.Size([2, 3, 4]) and t.size(1) == 3 and t.size(-1) == 4
    assert t.dim() == t.ndim == 3 and t.numel() == 24 and ember.numel(t) == 24
    assert t.dtype is ember.float32 and t.device == ember.device("cpu")
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12
    assert t.element_size() == 4 and t.itemsize == 4 and t.nbytes == 96
    assert t.is_contiguous() and t.storage_offset() == 0
    assert repr(t.shape) == "ember.Size([2, 3, 4])"
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"):
        t.size(3)


def test_transposed_strides_and_contiguity():
    t = ember.zeros(2, 3).t()
    assert t.stride() == (1, 3) and not t.is_contiguous()
    c = t.contiguous()
    assert c.is_contiguous() and c.stride() == (2, 1)


def test_item_tolist_and_python_numbers():
    t = ember.tensor([[1.5, 2.0], [3.0, 4.0]])
    assert t.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    s = ember.tensor(2.5)
    assert s.item() == 2.5 and float(s) == 2.5 and int(s) == 2
    assert isinstance(ember.tensor(3).item(), int)
    with pytest.raises(RuntimeError, match="a Tensor with 4 elements cannot be converted to Scalar"):
        t.item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(t)
    assert bool(ember.tensor([0.0])) is False


def test_numpy_shares_memory_both_ways():
    a = np.zeros(3, dtype=np.float32)
    t = ember.from_numpy(a)
    a[0] = 5
    assert t[0].item() == 5 if hasattr(ember.Tensor, "__getitem__") else t.tolist()[0] == 5
    t.add_(1)
    np.testing.assert_array_equal(a, [6, 1, 1])
    assert t.numpy() is a or np.shares_memory(t.numpy(), a)


def test_numpy_refuses_tensor_that_requires_grad():
    t = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        t.numpy()
    np.testing.assert_array_equal(t.detach().numpy(), [1, 1])
    np.testing.assert_array_equal(np.asarray(t.detach()), [1, 1])


def test_to_dtype_device_and_copy():
    t = ember.tensor([1.5, 2.5])
    assert t.to(ember.float64).dtype is ember.float64
    assert t.to("cpu") is t and t.to(ember.float32) is t
    c = t.to(ember.float32, copy=True)
    assert c is not t and not np.shares_memory(c.numpy(), t.numpy())
    assert t.to(ember.zeros(1, dtype=ember.int32)).dtype is ember.int32
    assert t.double().dtype is ember.float64 and t.half().dtype is ember.float16
    assert t.bfloat16().dtype is ember.bfloat16 and t.long().dtype is ember.int64
    assert t.int().tolist() == [1, 2] and t.bool().dtype is ember.bool
    assert t.type() == "ember.FloatTensor" and t.type(ember.float64).dtype is ember.float64


def test_to_is_differentiable_and_casts_gradient_back():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x.to(ember.float64)
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_cuda_without_gpu_is_a_clear_error():
    if ember.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        ember.ones(2).cuda()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        ember.zeros(2, device="cuda")


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        ember.tensor([1, 2]).requires_grad_()
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    assert not y.is_leaf and x.is_leaf and y.requires_grad
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d._version == y._version


def test_detach_shares_memory_and_version_counter():
    x = ember.ones(3)
    d = x.detach()
    d.add_(1)
    assert x._version == 1
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])


def test_grad_setter_validates():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = ember.ones(3)
    x.grad = ember.ones(2)
    del x.grad
    assert x.grad is None


def test_hash_is_identity_and_tensors_work_as_dict_keys():
    a, b = ember.ones(1), ember.ones(1)
    d = {a: 1, b: 2}
    assert d[a] == 1 and d[b] == 2 and hash(a) == id(a)


def test_len_and_errors_for_zero_dim():
    assert len(ember.zeros(5, 2)) == 5
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ember.tensor(1.0))


def test_pickle_round_trip_keeps_values_dtype_and_requires_grad():
    x = ember.tensor([[1.0, 2.0]], dtype=ember.float64, requires_grad=True)
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype is ember.float64 and y.requires_grad and y.is_leaf
    np.testing.assert_array_equal(y.detach().numpy(), [[1.0, 2.0]])
    b = pickle.loads(pickle.dumps(ember.tensor([1.0], dtype=ember.bfloat16)))
    assert b.dtype is ember.bfloat16


def test_deepcopy_of_leaf_copies_memory_and_refuses_non_leaf():
    x = ember.ones(2, requires_grad=True)
    y = copy.deepcopy(x)
    assert y.requires_grad and not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(x * 2)


def test_dlpack_round_trip_shares_memory():
    x = ember.arange(4)
    a = np.from_dlpack(x)
    a[0] = 7
    assert x.tolist()[0] == 7


def test_legacy_constructors():
    t = ember.Tensor([1, 2])
    assert t.dtype is ember.float32 and t.tolist() == [1.0, 2.0]
    assert ember.Tensor(2, 3).shape == (2, 3)
    assert isinstance(ember.ones(1), ember.FloatTensor) and not isinstance(ember.ones(1), ember.LongTensor)
    assert ember.LongTensor([1, 2]).dtype is ember.int64


def test_set_num_threads_round_trip():
    n = ember.get_num_threads()
    ember.set_num_threads(1)
    assert ember.get_num_threads() == 1
    ember.set_num_threads(n)


def test_softmax_methods_need_no_nn_import():
    import subprocess
    import sys
    code = ("import sys, ember; t = ember.tensor([1.0, 2.0]); "
            "print(round(t.softmax(0).sum().item(), 6), round(ember.log_softmax(t, 0).exp().sum().item(), 6), "
            "'ember.nn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1.0", "1.0", "False"]
