"""Creation functions: dtypes, shapes, values, memory sharing, errors; fill_/zero_ and Tensor.new_*."""
import warnings

import numpy as np
import pytest

import ember
from tests.helpers import assert_close


def _same(t, values, dtype, shape=None):
    assert t.dtype is dtype, (t.dtype, dtype)
    if shape is not None:
        assert tuple(t.shape) == tuple(shape)
    np.testing.assert_array_equal(np.asarray(t.tolist()), np.asarray(values))


# (data, expected dtype, expected shape)
INFERENCE = [
    (1.5, ember.float32, ()), (3, ember.int64, ()), (True, ember.bool, ()), (1 + 2j, ember.complex64, ()),
    ([], ember.float32, (0,)), ([[]], ember.float32, (1, 0)), ([[1, 2], [3, 4]], ember.int64, (2, 2)),
    ([1, 2.5], ember.float32, (2,)), ([True, 2], ember.int64, (2,)), ([1.5, True], ember.float32, (2,)),
    ([1, 2j], ember.complex64, (2,)), (((1, 2), [3, 4]), ember.int64, (2, 2)), (range(4), ember.int64, (4,)),
    ([np.float64(1.0)], ember.float64, (1,)), (np.float32(2.5), ember.float32, ()), ([np.int32(1)], ember.int32, (1,)),
    ([np.int32(1), 2.5], ember.float32, (2,)), ([np.float16(1), 1.5], ember.float32, (2,)),
    ([np.uint8(1), np.int8(1)], ember.int16, (2,)), ([np.float64(1), 1j], ember.complex128, (2,)),
    (np.arange(6.0).reshape(2, 3), ember.float64, (2, 3)), (np.arange(3, dtype=np.int16), ember.int16, (3,)),
]


@pytest.mark.parametrize("data,dtype,shape", INFERENCE, ids=[repr(c[0])[:30] for c in INFERENCE])
def test_tensor_infers_dtype_like_torch(data, dtype, shape):
    t = ember.tensor(data)
    assert t.dtype is dtype
    assert tuple(t.shape) == shape


def test_tensor_values_and_explicit_dtype():
    _same(ember.tensor([[1, 2], [3, 4]], dtype=ember.float64), [[1, 2], [3, 4]], ember.float64)
    _same(ember.tensor([1.7, -2.7], dtype=ember.int32), [1, -2], ember.int32)
    _same(ember.tensor([-1], dtype=ember.uint8), [255], ember.uint8)
    _same(ember.tensor([0.5, 0.0], dtype=ember.bool), [True, False], ember.bool)
    _same(ember.tensor(5, dtype=ember.complex64), 5 + 0j, ember.complex64)
    _same(ember.tensor([1e40], dtype=ember.float32), [np.inf], ember.float32)
    assert ember.tensor([1, 2], dtype=ember.bfloat16).tolist() == [1.0, 2.0]


def test_tensor_from_tensors():
    _same(ember.tensor([ember.tensor(1, dtype=ember.int32), 2]), [1, 2], ember.int64)
    _same(ember.tensor([ember.tensor(1.0), ember.tensor(2.0)]), [1.0, 2.0], ember.float32)
    _same(ember.tensor([ember.tensor([1.0])]), [1.0], ember.float32)
    src = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        t = ember.tensor(src)
    assert not t.requires_grad and t.is_leaf
    t.zero_()
    assert src.tolist() == [1.0, 1.0]  # a copy


def test_tensor_default_float64_inference():
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor([1.5]).dtype is ember.float64
        assert ember.tensor([1j]).dtype is ember.complex128
        assert ember.tensor([1]).dtype is ember.int64
        assert ember.full((1,), 2.0).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("data,exc,match", [
    ([[1, 2], [3]], ValueError, r"expected sequence of length 2 at dim 1 \(got 1\)"),
    ([[[1], [2]], [[3], [4, 5]]], ValueError, "at dim 2"),
    ([None], RuntimeError, "Could not infer dtype of NoneType"),
    ("abc", TypeError, "invalid data type 'str'"),
    ({1: 2}, RuntimeError, "Could not infer dtype of dict"),
    ([ember.ones(2), ember.ones(2)], ValueError, "only one element tensors"),
    (2 ** 63, ValueError, "Overflow"),
    (np.array(["a"]), TypeError, "can't convert np.ndarray"),
])
def test_tensor_bad_data(data, exc, match):
    with pytest.raises(exc, match=match):
        ember.tensor(data)


def test_tensor_bad_arguments():
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8 without overflow"):
        ember.tensor([128], dtype=ember.int8)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        ember.tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match="argument 'dtype' must be ember.dtype"):
        ember.tensor([1], dtype=np.float32)
    with pytest.raises(TypeError, match="must be real number"):
        ember.tensor([1 + 1j], dtype=ember.float32)


def test_from_numpy_shares_memory_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    t = ember.from_numpy(a)
    a[0, 0] = 10.0
    assert t[0, 0].item() == 10.0 if hasattr(ember.Tensor, "__getitem__") else t.tolist()[0][0] == 10.0
    t.fill_(7.0)
    assert (a == 7.0).all()
    assert t.numpy() is a
    with pytest.raises(TypeError, match="expected np.ndarray"):
        ember.from_numpy([1, 2])
    with pytest.raises(ValueError, match="negative"):
        ember.from_numpy(a[:, ::-1])


def test_as_tensor_and_asarray_share_memory():
    a = np.arange(4.0)
    t = ember.as_tensor(a)
    a[1] = -1.0
    assert t.tolist() == [0.0, -1.0, 2.0, 3.0]
    c = ember.as_tensor(a, dtype=ember.float32)  # a cast: a copy
    a[2] = 9.0
    assert c.tolist()[2] == 2.0
    x = ember.ones(3)
    assert ember.as_tensor(x) is x
    assert ember.as_tensor(x, dtype=ember.float64).dtype is ember.float64
    s = ember.asarray(a)
    a[0] = 5.0
    assert s.tolist()[0] == 5.0
    cp = ember.asarray(a, copy=True)
    a[0] = 6.0
    assert cp.tolist()[0] == 5.0
    with pytest.raises(ValueError):
        ember.asarray([1, 2], copy=False)
    assert ember.asarray([1.0], requires_grad=True).requires_grad


def test_from_dlpack_and_frombuffer():
    a = np.arange(5, dtype=np.int32)
    t = ember.from_dlpack(a)
    a[0] = 42
    assert t.tolist()[0] == 42 and t.dtype is ember.int32
    buf = bytearray(b"abcdabcd")
    b = ember.frombuffer(buf, dtype=ember.int32)
    assert b.tolist() == [1684234849, 1684234849]
    b.zero_()
    assert buf == bytearray(8)
    assert ember.frombuffer(bytearray(b"abcdabcd"), dtype=ember.uint8, count=2, offset=4).tolist() == [97, 98]
    with pytest.raises(ValueError, match="must be a multiple of element size"):
        ember.frombuffer(bytearray(7), dtype=ember.int32)


SIZES = [((2, 3), (2, 3)), (((2, 3),), (2, 3)), (([2, 3],), (2, 3)), ((ember.Size([2, 3]),), (2, 3)), (((),), ()),
         ((0, 4), (0, 4)), ((np.int64(3),), (3,))]


@pytest.mark.parametrize("args,shape", SIZES, ids=str)
def test_size_forms(args, shape):
    for fn, v in ((ember.zeros, 0), (ember.ones, 1)):
        t = fn(*args)
        assert tuple(t.shape) == shape and t.dtype is ember.float32
        assert np.all(t.numpy() == v)
    assert tuple(ember.empty(*args).shape) == shape
    assert tuple(ember.rand(*args).shape) == shape


def test_filled_dtypes_and_values():
    _same(ember.full((2,), 1), [1, 1], ember.int64)
    _same(ember.full((2,), True), [True, True], ember.bool)
    _same(ember.full((2,), 1 + 1j), [1 + 1j, 1 + 1j], ember.complex64)
    _same(ember.full((2,), 2.5), [2.5, 2.5], ember.float32)
    _same(ember.full([2], ember.tensor(1.5)), [1.5, 1.5], ember.float32)
    _same(ember.full((2,), 2.5, dtype=ember.int64), [2, 2], ember.int64)
    _same(ember.ones(2, dtype=ember.int32), [1, 1], ember.int32)
    _same(ember.zeros_like(ember.ones(2, 3, dtype=ember.int8)), np.zeros((2, 3)), ember.int8)
    _same(ember.full_like(ember.ones(2, dtype=ember.int64), 2.7), [2, 2], ember.int64)
    _same(ember.ones_like(ember.ones(2), dtype=ember.float64), [1, 1], ember.float64)
    assert ember.empty_like(ember.ones(3, dtype=ember.int16)).dtype is ember.int16
    assert ember.ones(2, requires_grad=True).requires_grad
    assert not ember.zeros_like(ember.ones(2, requires_grad=True)).requires_grad
    _same(ember.scalar_tensor(3), 3.0, ember.float32, ())
    out = ember.empty(6)
    r = ember.zeros(2, 3, out=out)
    assert r is out and tuple(out.shape) == (2, 3) and out.tolist() == [[0.0] * 3] * 2


def test_filled_errors():
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        ember.ones(2, -1)
    with pytest.raises(RuntimeError, match="zeros: Dimension size must be non-negative."):
        ember.zeros(-2)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        ember.zeros(2.5)
    with pytest.raises(TypeError, match="must be tuple of ints"):
        ember.full(2, 1.0)
    with pytest.raises(RuntimeError, match="uint8_t without overflow"):
        ember.full((2,), 300, dtype=ember.uint8)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point"):
        ember.zeros(2, dtype=ember.int64, requires_grad=True)


def test_cuda_device_error_is_clear():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy present")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        ember.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        ember.tensor([1.0], device="cuda")


def test_empty_strided():
    t = ember.empty_strided((2, 3), (1, 2))
    assert t.stride() == (1, 2) and tuple(t.shape) == (2, 3)
    with pytest.raises(RuntimeError, match="dimensionality of sizes"):
        ember.empty_strided((2, 3), (3,))


def test_new_methods():
    x = ember.ones(2, dtype=ember.float64)
    _same(x.new_zeros(3), [0, 0, 0], ember.float64)
    _same(x.new_zeros(2, 2), np.zeros((2, 2)), ember.float64)
    _same(x.new_ones((2,)), [1, 1], ember.float64)
    _same(x.new_full((2,), 2), [2.0, 2.0], ember.float64)
    _same(x.new_tensor([1, 2]), [1.0, 2.0], ember.float64)
    _same(x.new_tensor([1, 2], dtype=ember.int32), [1, 2], ember.int32)
    assert x.new_empty(0, 3).shape == (0, 3)
    assert x.new_empty_strided((2, 2), (1, 2)).stride() == (1, 2)
    assert not ember.ones(2, requires_grad=True).new_zeros(2).requires_grad


ARANGE = [
    ((5,), {}, list(range(5)), ember.int64), ((1, 4), {}, [1, 2, 3], ember.int64),
    ((0.5, 5), {}, [0.5, 1.5, 2.5, 3.5, 4.5], ember.float32), ((-1, -5, -1), {}, [-1, -2, -3, -4], ember.int64),
    ((0, 5, 1.5), {"dtype": ember.int64}, [0, 1, 2, 3, 4], ember.int64),
    ((0, 5, 1.5), {"dtype": ember.int32}, [0, 1, 2, 3], ember.int32),
    ((5,), {"dtype": ember.float64}, [0, 1, 2, 3, 4], ember.float64), ((True,), {}, [0], ember.int64),
    ((1e20, 1e20 + 1), {}, [], ember.float32), ((10, 0, -3), {}, [10, 7, 4, 1], ember.int64),
]


@pytest.mark.parametrize("args,kw,values,dtype", ARANGE, ids=str)
def test_arange(args, kw, values, dtype):
    _same(ember.arange(*args, **kw), values, dtype)


def test_arange_float_lengths():
    # the length is ceil((end - start) / step) computed in double, as torch does
    assert ember.arange(0, 1, 0.1).shape == (10,)
    assert ember.arange(-3.3, 7.1, 0.7).shape == (15,)
    assert ember.arange(0, -1, -0.01).shape == (100,)
    assert_close(ember.arange(0.5, 2.7, 0.3, dtype=ember.float64), np.array([0.5 + 0.3 * i for i in range(8)]))


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        ember.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        ember.arange(1, 0, 0.1)
    with pytest.raises(RuntimeError, match="unsupported range: 0 -> inf"):
        ember.arange(0, float("inf"))


def test_range_is_deprecated_and_inclusive():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        t = ember.range(0, 1, 0.25)
    assert t.dtype is ember.float32
    assert_close(t, np.array([0, 0.25, 0.5, 0.75, 1.0]))


def test_linspace_logspace_eye():
    assert_close(ember.linspace(0, 1, 5), np.array([0, 0.25, 0.5, 0.75, 1.0]))
    _same(ember.linspace(0, 1, 1), [0.0], ember.float32)
    _same(ember.linspace(0, 1, 0), [], ember.float32)
    _same(ember.linspace(0, 10, 5, dtype=ember.int64), [0, 2, 5, 7, 10], ember.int64)
    assert ember.linspace(0, 1 + 1j, 3).dtype is ember.complex64
    assert_close(ember.linspace(-3, 7.5, 11, dtype=ember.float64), np.linspace(-3, 7.5, 11), atol=1e-14)
    assert_close(ember.logspace(0, 2, 3), np.array([1.0, 10.0, 100.0]))
    assert_close(ember.logspace(0, 2, 3, base=2), np.array([1.0, 2.0, 4.0]))
    _same(ember.logspace(0, 2, 3, dtype=ember.int64), [1, 10, 100], ember.int64)
    _same(ember.eye(2, 3, dtype=ember.int64), [[1, 0, 0], [0, 1, 0]], ember.int64)
    _same(ember.eye(2), [[1, 0], [0, 1]], ember.float32)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ember.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        ember.eye(-1)


def test_tri_indices():
    _same(ember.tril_indices(3, 3), [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]], ember.int64)
    _same(ember.triu_indices(3, 4, -1), [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2], [0, 1, 2, 3, 0, 1, 2, 3, 1, 2, 3]],
          ember.int64)
    assert tuple(ember.tril_indices(3, 3, -5).shape) == (2, 0)
    with pytest.raises(RuntimeError, match="row must be non-negative"):
        ember.tril_indices(-1, 3)


def test_complex_polar_heaviside():
    re, im = ember.tensor([1.0, -2.0]), ember.tensor([2.0, 0.5])
    _same(ember.complex(re, im), [1 + 2j, -2 + 0.5j], ember.complex64)
    p = ember.polar(ember.tensor([2.0], dtype=ember.float64), ember.tensor([np.pi / 2], dtype=ember.float64))
    assert_close(p, np.array([2j]), atol=1e-15)
    _same(ember.heaviside(ember.tensor([-1.0, 0.0, 2.0]), ember.tensor([0.5])), [0, 0.5, 1], ember.float32)
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got scalar type Double"):
        ember.complex(re, im.double())
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double"):
        ember.complex(ember.tensor([1]), ember.tensor([2]))


def test_complex_and_polar_gradients():
    from ember.autograd import gradcheck
    a = ember.tensor([0.7, -1.3, 2.0], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([0.3, 1.1, -2.5], dtype=ember.float64, requires_grad=True)
    assert gradcheck(ember.complex, (a, b))
    r = ember.tensor([0.7, 1.3, 2.0], dtype=ember.float64, requires_grad=True)  # abs >= 0: polar's domain
    assert gradcheck(ember.polar, (r, b))
    y = ember.complex(a, b)
    assert y.grad_fn.name() == "ComplexBackward0"
    y.backward(ember.tensor([1 + 2j, 3 - 1j, -1j], dtype=ember.complex128))
    assert a.grad.tolist() == [1.0, 3.0, 0.0] and b.grad.tolist() == [2.0, -1.0, -1.0]


def test_fill_and_zero():
    x = ember.ones(3)
    v0 = x._version
    assert x.fill_(2.5) is x and x.tolist() == [2.5] * 3
    assert x._version == v0 + 1
    x.zero_()
    assert x.tolist() == [0.0] * 3 and x._version == v0 + 2
    _same(ember.ones(2, dtype=ember.int64).fill_(2.7), [2, 2], ember.int64)
    _same(ember.ones(2, dtype=ember.uint8).fill_(-1), [255, 255], ember.uint8)
    _same(ember.ones(2).fill_(ember.tensor(4.0, dtype=ember.float64)), [4.0, 4.0], ember.float32)
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        ember.ones(2).fill_(ember.ones(2))
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        ember.ones(2).fill_(1e300)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember.ones(2, requires_grad=True).fill_(1.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember.ones(2, requires_grad=True).zero_()
    with ember.no_grad():
        w = ember.ones(2, requires_grad=True)
        w.zero_()
    assert w.tolist() == [0.0, 0.0]


def test_fill_gradients():
    a = ember.ones(3, requires_grad=True)
    v = ember.tensor(2.0, requires_grad=True)
    y = a * 1
    y.fill_(v)
    assert y.grad_fn.name() == "FillBackward3"
    (y * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.0]
    assert v.grad.item() == 6.0
    b = ember.ones(2, requires_grad=True)
    z = b * 1
    z.zero_()
    assert z.grad_fn.name() == "ZeroBackward0"
    (z + b).sum().backward()
    assert b.grad.tolist() == [1.0, 1.0]


def test_fill_on_view_writes_base():
    base = ember.zeros(2, 3)
    row = ember.from_numpy(base.numpy()[1])
    row.fill_(5.0)
    assert base.tolist() == [[0.0] * 3, [5.0] * 3]


def test_no_warnings_on_common_paths():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.tensor([[1.0, 2.0], [3.0, 4.0]])
        ember.tensor(np.arange(3.0))
        ember.arange(10.0)
        ember.linspace(0, 1, 100, dtype=ember.float16)


def test_heaviside_inplace():
    x = ember.tensor([-1.0, 0.0, 2.0])
    assert x.heaviside_(ember.tensor(0.5)) is x and x.tolist() == [0.0, 0.5, 1.0]


def test_from_numpy_of_read_only_array_warns_once():
    from ember._ops import creation
    creation._READONLY_WARNED[0] = False
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="The given NumPy array is not writable"):
        ember.from_numpy(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.as_tensor(a).tolist() == [0.0, 1.0, 2.0]  # suppressed for the rest of the program


def test_sizes_as_keywords():
    assert ember.zeros(size=(2, 3)).shape == (2, 3) and ember.ones(size=[2]).tolist() == [1.0, 1.0]
    assert ember.empty(size=(0,)).shape == (0,)
    assert ember.rand(size=(2,)).shape == (2,) and ember.randn(size=(1, 2)).shape == (1, 2)
    x = ember.ones(1)
    assert x.new_zeros(size=(2,)).tolist() == [0.0, 0.0] and x.new_ones(size=(1,)).tolist() == [1.0]
    assert x.new_empty(size=(3,)).shape == (3,)
    assert ember.arange(end=3).tolist() == [0, 1, 2] and ember.arange(start=1, end=3).tolist() == [1, 2]
    with pytest.raises(TypeError, match="arange\\(\\) missing 1 required positional argument: 'end'"):
        ember.arange()


def test_from_numpy_takes_ndarray_subclasses_sharing_their_memory(tmp_path):
    m = np.memmap(tmp_path / "tokens.bin", dtype=np.int32, mode="w+", shape=(4,))
    t = ember.from_numpy(m)
    assert type(t._data) is np.ndarray and t.dtype == ember.int32
    t[0] = 5
    assert m[0] == 5
    with pytest.raises(TypeError, match="expected np.ndarray"):
        ember.from_numpy([1, 2])
