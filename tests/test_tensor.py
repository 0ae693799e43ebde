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
    # torch words the method's error and the attribute's error differently
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        ember.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        ember.tensor([1, 2]).requires_grad = True
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
    with pytest.raises(RuntimeError) as e:
        x.grad = ember.ones(3)
    assert str(e.value) == ("attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please ensure "
                            "that the gradient and the tensor are the same size")
    with pytest.raises(RuntimeError) as e:  # the dtype is checked first, as in torch
        x.grad = ember.ones(3, dtype=ember.float64)
    assert str(e.value) == (
        "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'. The gradient must "
        "match the tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
        "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the "
        "dtypes of a tensor and its gradient may break downstream systems that assume they match.")
    for dt, name in [(ember.int64, "long int"), (ember.float16, "c10::Half"), (ember.complex64, "c10::complex<float>"),
                     (ember.bool, "bool"), (ember.uint8, "unsigned char")]:
        with pytest.raises(RuntimeError, match=f"^attempting to assign a gradient with dtype '{name}' to a tensor with "
                                               f"grad_dtype 'Float'"):
            x.grad = ember.ones(2, dtype=dt)
    h = ember.ones((), dtype=ember.bfloat16, requires_grad=True)
    with pytest.raises(RuntimeError, match="^attempting to assign a gradient with dtype 'float' to a tensor with "
                                           "grad_dtype 'BFloat16'"):
        h.grad = ember.ones(())
    with pytest.raises(RuntimeError, match=r"of size '\[1\]' to a tensor of size '\[\]'"):
        h.grad = ember.ones(1, dtype=ember.bfloat16)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type int"):
        x.grad = 3
    x.grad = ember.ones(2)
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1])
    del x.grad
    assert x.grad is None


def test_numpy_conversion_of_a_tensor_that_requires_grad():
    msg = "^Can't call numpy\\(\\) on Tensor that requires grad. Use tensor.detach\\(\\).numpy\\(\\) instead.$"
    x = ember.ones(2, requires_grad=True)
    for conv in (np.asarray, np.array, lambda t: np.asarray(t, dtype=np.float64), lambda t: np.array([t, t]),
                 np.exp, lambda t: t.numpy()):
        with pytest.raises(RuntimeError, match=msg):
            conv(x)
    with pytest.raises(RuntimeError, match=msg):
        np.asarray(x * 2)  # a non-leaf too
    with ember.no_grad():  # torch only refuses in grad mode
        np.testing.assert_array_equal(np.asarray(x), [1, 1])
        np.testing.assert_array_equal(x.numpy(), [1, 1])
    np.testing.assert_array_equal(np.asarray(x.detach()), [1, 1])
    np.testing.assert_array_equal(x.numpy(force=True), [1, 1])
    r = np.float32(2) + x  # a NumPy scalar on the left defers to the tensor
    assert isinstance(r, ember.Tensor) and r.requires_grad and r.tolist() == [3.0, 3.0]


_SCALAR_WARNING = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                   "Consider using tensor.detach() first.")


def test_float_and_complex_of_a_tensor_that_requires_grad_warn():
    import warnings
    x = ember.tensor([2.5], requires_grad=True)
    for conv, expected in ((float, 2.5), (complex, 2.5 + 0j)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert conv(x) == expected
            assert conv(x * 2) == 2 * expected  # non-leaf too
        assert [(r.category, str(r.message)) for r in w] == [(UserWarning, _SCALAR_WARNING)] * 2
        assert w[0].filename == __file__  # reported at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch does not warn for these
        assert int(x) == 2 and bool(x) is True and x.item() == 2.5 and x.tolist() == [2.5]
        assert float(x.detach()) == 2.5 and float(ember.tensor(1.5)) == 1.5
        with ember.no_grad():
            assert float(x) == 2.5 and complex(x) == 2.5 + 0j


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
    assert np.shares_memory(a, x.numpy())
    if a.flags.writeable:  # NumPy 2.0 marks every DLPack import read-only
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


def test_legacy_constructor_forms():
    assert ember.Tensor().shape == (0,) and ember.Tensor().dtype is ember.float32
    assert ember.Tensor(ember.Size([2, 3])).shape == (2, 3)
    t = ember.tensor([1, 2])
    assert ember.Tensor(t) is t  # torch returns the given tensor itself
    assert ember.Tensor([1, 2]).dtype is ember.float32 and ember.Tensor(2, 3).shape == (2, 3)
    with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
        ember.Tensor(2.5)
    with pytest.raises(TypeError, match=r"new\(\): invalid data type 'str'"):
        ember.Tensor("ab")


def test_tensor_new_uses_own_dtype_and_device():
    x = ember.ones(2)
    assert x.new().shape == (0,) and x.new().dtype is ember.float32
    assert x.new(2, 3).shape == (2, 3) and x.new(ember.Size([4])).shape == (4,)
    assert x.new([1, 2]).dtype is ember.float32 and x.new([1, 2]).tolist() == [1.0, 2.0]
    assert ember.ones(1, dtype=ember.int64).new([1.5]).dtype is ember.int64
    with pytest.raises(TypeError, match="expected ember.float32"):
        x.new(ember.tensor([1, 2]))
    with pytest.raises(TypeError, match="data must be a sequence"):
        x.new(2.5)


def test_python_scalar_conversion_of_many_elements_is_a_value_error():
    for convert in (float, int, complex):
        with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
            convert(ember.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        ember.tensor([1.0, 2.0]).item()


def test_grad_of_non_leaf_warns():
    w = ember.ones(2, requires_grad=True)
    assert w.grad is None  # a leaf: no warning
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
        assert (w * 2).grad is None
    y = w * 2
    y.retain_grad()
    assert y.grad is None  # retained: no warning


def test_layout_is_an_object_equal_to_its_name():
    t = ember.ones(2)
    assert repr(t.layout) == "ember.strided" and str(t.layout) == "ember.strided"
    assert t.layout == ember.strided and t.layout == "strided"
    assert pickle.loads(pickle.dumps(t.layout)) == t.layout


def test_is_signed_is_same_size_is_nonzero():
    assert ember.ones(1).is_signed() and ember.ones(1, dtype=ember.int8).is_signed()
    assert not ember.ones(1, dtype=ember.uint8).is_signed() and not ember.is_signed(ember.ones(1, dtype=ember.bool))
    assert ember.ones(2, 3).is_same_size(ember.zeros(2, 3)) and not ember.is_same_size(ember.ones(2, 3), ember.ones(3, 2))
    assert ember.tensor([1]).is_nonzero() and not ember.tensor(0.0).is_nonzero()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        ember.tensor([]).is_nonzero()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        ember.tensor([1, 2]).is_nonzero()


def test_sum_to_size():
    x = ember.arange(24.0).reshape(2, 3, 4)
    assert x.sum_to_size(3, 1).tolist() == [[60.0], [92.0], [124.0]]
    assert x.sum_to_size((1, 1, 4)).shape == (1, 1, 4)
    assert x.sum_to_size(2, 3, 4) is x
    with pytest.raises(RuntimeError, match=r"size \{\[3, 3\]\} is not expandable to size \{\[2, 3, 4\]\}\."):
        x.sum_to_size(3, 3)


def test_complex_to_real_casts_warn_like_torch():
    x = ember.tensor([1 + 2j, 3j])
    for convert in (lambda: x.to(ember.float32), lambda: x.float(), lambda: x.long(), lambda: x.type(ember.float64),
                    lambda: ember.zeros(2).copy_(x)):
        with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
            r = convert()
        assert r.tolist() == [1, 0]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.to(ember.bool).tolist() == [True, True]  # nonzero, no warning


def test_memory_format_names():
    x = ember.ones(1, 2, 3, 3)
    assert repr(ember.channels_last) == "ember.channels_last" and isinstance(ember.preserve_format, ember.memory_format)
    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last
    assert x.contiguous(memory_format=ember.contiguous_format) is x
    assert ember.empty_like(x, memory_format=ember.preserve_format).shape == (1, 2, 3, 3)


def test_channels_last_layout():
    x = ember.arange(120.0).reshape(2, 3, 4, 5)
    assert x.is_contiguous() and not x.is_contiguous(memory_format=ember.channels_last)
    y = x.to(memory_format=ember.channels_last)
    assert y.stride() == (60, 1, 15, 3) and ember.equal(x, y)
    assert not y.is_contiguous() and y.is_contiguous(memory_format=ember.channels_last)
    assert y.contiguous(memory_format=ember.channels_last) is y and y.contiguous().stride() == (60, 20, 5, 1)
    assert x.clone(memory_format=ember.channels_last).stride() == (60, 1, 15, 3)
    assert ember.ones(1, 1, 3, 3).is_contiguous(memory_format=ember.channels_last)  # size-1 dims: any stride
    z = ember.arange(120.0).reshape(1, 2, 3, 4, 5).contiguous(memory_format=ember.channels_last_3d)
    assert z.stride() == (120, 1, 40, 10, 2)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        ember.ones(2, 3).contiguous(memory_format=ember.channels_last)
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        y.view(2, -1)
    w = ember.ones(1, 2, 2, 2, requires_grad=True)
    (w.to(memory_format=ember.channels_last) * 3).sum().backward()
    assert w.grad.tolist() == [[[[3.0, 3.0], [3.0, 3.0]], [[3.0, 3.0], [3.0, 3.0]]]]


def test_apply_and_map_call_python_per_element():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert x.apply_(lambda v: v * 2) is x and x.tolist() == [2.0, 4.0, 6.0] and x._version == 1
    assert ember.tensor([1, 2]).apply_(lambda v: v + 0.7).tolist() == [1, 2]  # cast back to int64
    t = ember.arange(6.0).reshape(2, 3).t()
    assert t.apply_(lambda v: v + 1).tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    y = ember.tensor([[1.0], [2.0]]).expand(2, 2).clone()
    assert y.map_(ember.tensor([10.0, 20.0]), lambda a, b: a * b).tolist() == [[10.0, 20.0], [20.0, 40.0]]
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires grad"):
        ember.ones(2, requires_grad=True).apply_(lambda v: v)


def test_size_arithmetic_and_construction():
    s = ember.Size([2, 3])
    for r in ((1,) + s, s + (4,), s * 2, 2 * s, s[1:]):
        assert type(r) is ember.Size
    assert (1,) + s == (1, 2, 3) and s * 2 == (2, 3, 2, 3)
    assert ember.Size(ember.tensor([2, 3])) == (2, 3) and type(ember.Size(ember.tensor([2]))[0]) is int
    assert ember.Size([np.int64(4)]) == (4,) and ember.Size() == ()
    with pytest.raises(TypeError, match="ember.Size\\(\\) takes an iterable of 'int' \\(item 0 is 'float'\\)"):
        ember.Size([2.5])
    with pytest.raises(TypeError, match="can only concatenate tuple \\(not list\\) to ember.Size"):
        s + [1]


def test_storages_share_memory_with_the_tensor():
    from ember import _tensor
    _tensor._STORAGE_WARNED[0] = False
    p = ember.tensor([[4.0, 1.0], [5.0, 3.0], [2.0, 1.0]])
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = p.storage()
    assert len(s) == 6 and s.size() == 6 and s[0] == 4.0 and s.dtype is ember.float32 and s.tolist()[2:4] == [5, 3]
    assert s.element_size() == 4 and s.nbytes() == 24
    s[0] = 2.0  # writes through
    assert p[0, 0].item() == 2.0
    second = p[1]
    assert second.storage_offset() == 2 and second.storage().data_ptr() == p.storage().data_ptr()
    assert p.t().storage().tolist() == [2.0, 1.0, 5.0, 3.0, 2.0, 1.0]
    assert repr(ember.tensor([1.5]).storage()) == \
        " 1.5\n[ember.storage.TypedStorage(dtype=ember.float32, device=cpu) of size 1]"
    u = ember.tensor([1, 2], dtype=ember.int16).untyped_storage()
    assert len(u) == 4 and u.nbytes() == 4 and u.tolist() == [1, 0, 2, 0] and u.element_size() == 1
    assert repr(ember.tensor([1], dtype=ember.int8).untyped_storage()) == \
        " 1\n[ember.storage.UntypedStorage(device=cpu) of size 1]"


def test_numpy_ufuncs_on_tensors_give_tensors_and_reversed_flips():
    t = ember.tensor([1.0, 4.0])
    r = np.sqrt(t)
    assert isinstance(r, ember.Tensor) and r.tolist() == [1.0, 2.0]
    r[0] = 100.0
    assert t.tolist() == [1.0, 4.0]  # a new tensor, not a view of t
    m = np.isnan(t)
    assert m.dtype is ember.uint8 and m.tolist() == [0, 0]  # torch's legacy: bool results as uint8
    assert isinstance(np.add(ember.tensor([1]), 2), ember.Tensor)
    assert reversed(ember.tensor([[1, 2], [3, 4]])).tolist() == [[3, 4], [1, 2]]
    z = ember.tensor(1)
    assert reversed(z) is z
