"""Fractional max pooling: forward and indices against a loop reference, gradcheck, modules, errors."""
import math

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn

# the sample column each spatial dimension uses (torch's kernels: width first in 2-d, in order in 3-d)
COLUMN = {2: (1, 0), 3: (0, 1, 2)}


def ref_starts(u, n, o, k):
    """Window starts, one operation at a time in u's dtype (u: a NumPy scalar)."""
    t = type(u)
    starts = []
    if o > 1:
        alpha = t(n - k) / t(o - 1)
        starts = [int(np.trunc(np.float64((t(i) + u) * alpha))) - int(np.trunc(np.float64(u * alpha)))
                  for i in range(o - 1)]
    return starts + [n - k][:o]


def ref_fractional(x, k, outs, samples):
    """Loop reference over (N, C, *spatial) or (C, *spatial): values and flat in-plane indices."""
    nd = len(k)
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = x[None]
    sp = x.shape[2:]
    val = np.zeros(x.shape[:2] + tuple(outs), x.dtype)
    idx = np.zeros(x.shape[:2] + tuple(outs), np.int64)
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            starts = [ref_starts(samples[b, c, COLUMN[nd][d]], sp[d], outs[d], k[d]) for d in range(nd)]
            for o in np.ndindex(*outs):
                best, where = -np.inf, None
                for j in np.ndindex(*k):
                    pos = tuple(starts[d][o[d]] + j[d] for d in range(nd))
                    v = x[(b, c) + pos]
                    if where is None or v > best or np.isnan(v):  # first maximum, last NaN
                        best, where = v, np.ravel_multi_index(pos, sp)
                val[(b, c) + o], idx[(b, c) + o] = best, where
    return (val[0], idx[0]) if unbatched else (val, idx)


def distinct(shape, rng):
    """Values without ties: max pooling is differentiable there."""
    n = math.prod(shape)
    return (rng.permutation(n).reshape(shape) / n - 0.5) * 4


def pool(nd):
    return F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d


CASES = [  # (input shape, kernel, output size)
    ((2, 3, 9, 9), (3, 3), (4, 4)),
    ((1, 2, 7, 11), (2, 3), (4, 5)),
    ((2, 1, 6, 6), (2, 2), (5, 5)),     # windows reaching the last element
    ((1, 2, 5, 8), (5, 2), (1, 3)),     # one output row: the last window only
    ((3, 5, 7), (2, 2), (3, 4)),        # unbatched
    ((2, 2, 1, 1), (1, 1), (1, 1)),
    ((1, 2, 6, 7, 8), (2, 2, 3), (3, 4, 4)),
    ((2, 1, 5, 5, 5), (2, 2, 2), (2, 3, 2)),
    ((3, 6, 5, 7), (2, 1, 3), (3, 2, 3)),  # unbatched 3-d
    ((1, 1, 4, 3, 3), (3, 1, 1), (1, 2, 1)),
]


@pytest.mark.parametrize("shape, k, outs", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_and_indices(shape, k, outs, dtype):
    rng = np.random.default_rng(0)
    nd = len(k)
    x = rng.standard_normal(shape).astype(dtype)
    lead = shape[:-nd]
    s = rng.random((lead[0] if len(lead) == 2 else 2, lead[-1], nd)).astype(dtype)
    out, idx = pool(nd)(ember.tensor(x), k, output_size=outs, return_indices=True, _random_samples=ember.tensor(s))
    val, where = ref_fractional(x, k, outs, s)
    assert out.dtype == ember.tensor(x).dtype and idx.dtype == ember.int64
    np.testing.assert_array_equal(out.numpy(), val)
    np.testing.assert_array_equal(idx.numpy(), where)


@pytest.mark.parametrize("nd", [2, 3])
def test_ties_take_the_first_maximum_and_nan_the_last(nd):
    rng = np.random.default_rng(1)
    shape = (2, 2) + (7,) * nd
    x = rng.integers(0, 3, shape).astype(np.float64)  # many ties
    x[rng.random(shape) < 0.1] = np.nan
    x[rng.random(shape) < 0.1] = -np.inf
    k, outs = (3,) * nd, (4,) * nd
    s = rng.random((2, 2, nd))
    out, idx = pool(nd)(ember.tensor(x), k, outs, return_indices=True, _random_samples=ember.tensor(s))
    val, where = ref_fractional(x, k, outs, s)
    np.testing.assert_array_equal(out.numpy(), val)
    np.testing.assert_array_equal(idx.numpy(), where)


def test_all_minus_inf_window_points_at_its_first_element():
    x = ember.full((1, 1, 4, 4), -float("inf"))
    s = ember.tensor([[[0.3, 0.6]]])
    _, idx = F.fractional_max_pool2d(x, 2, 3, return_indices=True, _random_samples=s)
    _, want = ref_fractional(x.numpy(), (2, 2), (3, 3), s.numpy())
    np.testing.assert_array_equal(idx.numpy(), want)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_precision_sequence_rounds_in_the_samples_dtype(dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 3, 40, 37)).astype(dtype)
    s = rng.random((1, 3, 2)).astype(dtype)
    out, idx = F.fractional_max_pool2d(ember.tensor(x), (2, 3), (17, 13), return_indices=True,
                                       _random_samples=ember.tensor(s))
    val, where = ref_fractional(x, (2, 3), (17, 13), s)
    np.testing.assert_array_equal(idx.numpy(), where)
    np.testing.assert_array_equal(out.float().numpy(), val.astype(np.float32))


def test_float32_sequence_rounds_in_float32():
    # a case where float32 and float64 arithmetic give different windows
    n, o, u = 2381, 1000, np.float32(0.7310586)
    assert ref_starts(u, n, o, 1) != ref_starts(np.float64(u), n, o, 1)
    x = ember.arange(n, dtype=ember.float32).reshape(1, 1, 1, n)  # increasing: each window's max is its start
    _, idx = F.fractional_max_pool2d(x, 1, (1, o), return_indices=True, _random_samples=ember.tensor([[[u, 0.5]]]))
    assert idx.numpy().ravel().tolist() == ref_starts(u, n, o, 1)


def test_output_size_one_is_the_last_window():
    x = ember.tensor(np.arange(30.0, dtype=np.float32).reshape(1, 1, 5, 6))
    out, idx = F.fractional_max_pool2d(x, (2, 3), 1, return_indices=True, _random_samples=ember.tensor([[[0.9, 0.1]]]))
    assert out.tolist() == [[[[29.0]]]] and idx.tolist() == [[[[29]]]]


def test_output_size_zero_and_empty_batch():
    x = ember.randn(2, 3, 6, 6)
    assert F.fractional_max_pool2d(x, 2, (0, 3)).shape == (2, 3, 0, 3)
    out, idx = F.fractional_max_pool3d(ember.randn(0, 2, 5, 5, 5), 2, 3, return_indices=True)
    assert out.shape == idx.shape == (0, 2, 3, 3, 3)
    # the first dimension may be empty, batched or not
    out = F.fractional_max_pool2d(ember.randn(0, 6, 7), 2, 3, _random_samples=ember.rand(1, 0, 2))
    assert out.shape == (0, 3, 3)


def test_output_ratio():
    x = ember.randn(2, 3, 9, 11)
    s = ember.rand(2, 3, 2)
    a = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.7), _random_samples=s)
    b = F.fractional_max_pool2d(x, 2, output_size=(4, 7), _random_samples=s)
    assert a.shape == (2, 3, 4, 7) and ember.equal(a, b)
    assert F.fractional_max_pool2d(x, 2, output_ratio=0.5).shape == (2, 3, 4, 5)  # a number, as documented
    assert F.fractional_max_pool3d(ember.randn(3, 8, 6, 5), 2, output_ratio=0.5).shape == (3, 4, 3, 2)
    # output_size wins where both are given, as in torch
    assert F.fractional_max_pool2d(x, 2, output_size=3, output_ratio=0.5).shape == (2, 3, 3, 3)


def test_samples_come_from_the_global_generator():
    x = ember.randn(2, 3, 9, 9)
    ember.manual_seed(7)
    got = F.fractional_max_pool2d(x, 2, 4)
    ember.manual_seed(7)
    s = ember.rand(2, 3, 2)
    assert ember.equal(got, F.fractional_max_pool2d(x, 2, 4, _random_samples=s))
    ember.manual_seed(7)
    got = F.fractional_max_pool3d(x, 2, (1, 4, 4))  # 3-d pooling of a 4-d input: unbatched, one row of samples
    ember.manual_seed(7)
    assert ember.equal(got, F.fractional_max_pool3d(x, 2, (1, 4, 4), _random_samples=ember.rand(1, 2, 3)))


def test_unbatched_uses_the_first_samples_and_extra_batches_are_ignored():
    x = ember.randn(3, 8, 8)
    s = ember.rand(4, 3, 2)
    a = F.fractional_max_pool2d(x, 2, 4, _random_samples=s)
    assert ember.equal(a, F.fractional_max_pool2d(x[None], 2, 4, _random_samples=s[:1])[0])
    b = F.fractional_max_pool2d(ember.stack([x, x]), 2, 4, _random_samples=s)
    assert ember.equal(b, F.fractional_max_pool2d(ember.stack([x, x]), 2, 4, _random_samples=s[:2]))


def test_with_indices_variants_and_return_types():
    x = ember.randn(1, 2, 6, 6)
    s = ember.rand(1, 2, 2)
    out, idx = F.fractional_max_pool2d_with_indices(x, 2, 3, _random_samples=s)
    assert ember.equal(out, F.fractional_max_pool2d(x, 2, 3, _random_samples=s))
    assert idx.dtype == ember.int64 and not idx.requires_grad
    out3, idx3 = F.fractional_max_pool3d_with_indices(x, (1, 2, 2), (1, 3, 3), _random_samples=ember.rand(1, 1, 3))
    assert out3.shape == idx3.shape == (1, 1, 3, 3)


def test_indices_feed_max_unpool():
    x = ember.randn(1, 2, 8, 8)
    out, idx = F.fractional_max_pool2d(x, 2, 4, return_indices=True)
    un = F.max_unpool2d(out, idx, 2, output_size=(8, 8))
    flat = x.reshape(1, 2, -1).numpy()
    want = np.zeros_like(flat)
    np.put_along_axis(want, idx.reshape(1, 2, -1).numpy(), out.reshape(1, 2, -1).numpy(), -1)
    np.testing.assert_array_equal(un.reshape(1, 2, -1).numpy(), want)


GRAD_CASES = [((2, 2, 7, 8), (2, 3), (4, 3)), ((3, 6, 6), (3, 2), (3, 5)),
              ((1, 2, 5, 6, 5), (2, 2, 2), (3, 3, 2)), ((2, 4, 5, 6), (2, 2, 3), (2, 3, 2))]


@pytest.mark.parametrize("shape, k, outs", GRAD_CASES)
def test_gradcheck_and_gradgradcheck(shape, k, outs):
    rng = np.random.default_rng(3)
    nd = len(k)
    x = ember.tensor(distinct(shape, rng), requires_grad=True)
    s = ember.tensor(rng.random((shape[0] if len(shape) == nd + 2 else 1, shape[-nd - 1], nd)))

    def fn(t):
        return pool(nd)(t, k, outs, _random_samples=s)

    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))


def test_gradient_goes_to_the_argmax_and_sums_over_overlaps():
    rng = np.random.default_rng(4)
    x = ember.tensor(distinct((2, 3, 9, 9), rng), requires_grad=True)
    out, idx = F.fractional_max_pool2d(x, 3, 6, return_indices=True)
    assert out.grad_fn.name() == "FractionalMaxPool2DBackward0"
    g = rng.standard_normal(out.shape)
    out.backward(ember.tensor(g))
    want = np.zeros((6, 81))
    np.add.at(want, (np.arange(6)[:, None], idx.reshape(6, -1).numpy()), g.reshape(6, -1))
    np.testing.assert_allclose(x.grad.numpy().reshape(6, -1), want)


def test_no_grad_and_samples_never_require_grad():
    x = ember.randn(1, 1, 5, 5, requires_grad=True)
    s = ember.rand(1, 1, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'random_samples'"):
        F.fractional_max_pool2d(x, 2, 3, _random_samples=s)
    with ember.no_grad():
        assert not F.fractional_max_pool2d(x, 2, 3, _random_samples=s).requires_grad


# --- modules ----------------------------------------------------------------------------------------------------

def test_module_output_size_and_ratio():
    s = ember.rand(1, 3, 2, dtype=ember.float64)
    m = nn.FractionalMaxPool2d(2, output_ratio=0.5, _random_samples=s)
    assert m.kernel_size == (2, 2) and m.output_ratio == (0.5, 0.5) and m.output_size is None
    assert "_random_samples" in m.state_dict() and repr(m) == "FractionalMaxPool2d()"
    x = ember.randn(1, 3, 5, 7, dtype=ember.float64)
    assert ember.equal(m(x), F.fractional_max_pool2d(x, 2, (2, 3), _random_samples=s))
    m = nn.FractionalMaxPool2d((2, 3), output_size=(4, 3), return_indices=True, _random_samples=s)
    out, idx = m(ember.randn(3, 7, 6, dtype=ember.float64))  # unbatched
    assert out.shape == idx.shape == (3, 4, 3)
    m3 = nn.FractionalMaxPool3d(2, output_size=3)
    assert m3.output_size == (3, 3, 3) and m3._random_samples is None and "_random_samples" not in m3.state_dict()
    assert m3(ember.randn(2, 4, 6, 6, 6)).shape == (2, 4, 3, 3, 3)
    assert m3.to(ember.float64)(ember.randn(4, 6, 6, 6, dtype=ember.float64)).shape == (4, 3, 3, 3)


def test_module_samples_follow_dtype_conversion():
    m = nn.FractionalMaxPool3d(2, output_ratio=0.5, _random_samples=ember.rand(2, 4, 3, dtype=ember.float64))
    m.float()
    assert m._random_samples.dtype == ember.float32
    assert m(ember.randn(2, 4, 5, 5, 5)).shape == (2, 4, 2, 2, 2)


@pytest.mark.parametrize("make, msg", [
    (lambda: nn.FractionalMaxPool2d(2),
     "FractionalMaxPool2d requires specifying either an output size, or a pooling ratio"),
    (lambda: nn.FractionalMaxPool3d(2), "FractionalMaxPool3d requires specifying either"),
    (lambda: nn.FractionalMaxPool2d(2, 3, 0.5), "only one of output_size and output_ratio may be specified"),
    (lambda: nn.FractionalMaxPool2d(2, output_ratio=1.0), r"output_ratio must be between 0 and 1 \(got 1.0\)"),
    (lambda: nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 0)), "output_ratio must be between 0 and 1"),
    (lambda: nn.FractionalMaxPool3d(0, output_size=2), "kernel_size must be greater than 0, but got 0"),
    (lambda: nn.FractionalMaxPool3d((2, 0, 2), output_size=2), r"kernel_size must be greater than 0, but got \(2, 0"),
])
def test_module_errors(make, msg):
    with pytest.raises(ValueError, match=msg):
        make()


# --- errors -----------------------------------------------------------------------------------------------------

X2, X3 = ember.randn(2, 3, 6, 7), ember.randn(2, 3, 5, 6, 7)
S2, S3 = ember.rand(2, 3, 2), ember.rand(2, 3, 3)

ERRORS = [
    (lambda: F.fractional_max_pool2d(X2, 2), ValueError,
     "fractional_max_pool2d requires specifying either an output_size or an output_ratio"),
    (lambda: F.fractional_max_pool3d(X3, 2), ValueError, "fractional_max_pool3d requires specifying either"),
    (lambda: F.fractional_max_pool2d(X2, 2, output_ratio=(0.5, 0.5, 0.5)), ValueError,
     "fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints."),
    (lambda: F.fractional_max_pool2d(X2, 2, output_ratio=(0.5,)), IndexError, "tuple index out of range"),
    (lambda: F.fractional_max_pool2d([1.0], 2, 3), TypeError,
     "fractional_max_pool2d(): argument 'input' (position 1) must be Tensor, not list"),
    (lambda: F.fractional_max_pool2d(X2, 2, 3, _random_samples=[0.5]), TypeError,
     "fractional_max_pool2d(): argument 'random_samples' (position 4) must be Tensor, not list"),
    (lambda: F.fractional_max_pool2d(X2, 2.0, 3, _random_samples=S2), TypeError,
     "fractional_max_pool2d(): argument 'kernel_size' (position 2) must be tuple of ints, not float"),
    (lambda: F.fractional_max_pool2d(X2, 2, (3, 3.5), _random_samples=S2), TypeError,
     ("fractional_max_pool2d(): argument 'output_size' failed to unpack the object at pos 2 with error \"type must "
      "be tuple of ints,but got float\"")),
    (lambda: F.fractional_max_pool2d(X2, (True, 2), 3, _random_samples=S2), TypeError,
     "argument 'kernel_size' (position 2) must be tuple of ints, but found element of type bool at pos 0"),
    (lambda: F.fractional_max_pool2d(X2, (2, 2, 2), 3, _random_samples=S2), RuntimeError,
     "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints"),
    (lambda: F.fractional_max_pool2d(X2, (2,), 3, _random_samples=S2), RuntimeError,
     "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints"),
    (lambda: F.fractional_max_pool3d(X3, 2, (3, 3), _random_samples=S3), RuntimeError,
     "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints"),
    (lambda: F.fractional_max_pool2d(X2, 0, 3, _random_samples=S2), RuntimeError,
     "fractional_max_pool2d(): kernel_size must be greater than zero, but got kernel_size=[0, 0]"),
    (lambda: F.fractional_max_pool2d(ember.randn(6, 7), 2, 3, _random_samples=S2), RuntimeError,
     "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: [6, 7]"),
    (lambda: F.fractional_max_pool2d(ember.randn(6, 7), 2, 3), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    (lambda: F.fractional_max_pool3d(X2[0], 2, 2, _random_samples=S3), RuntimeError,
     "fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: [3, 6, 7]"),
    (lambda: F.fractional_max_pool2d(ember.randn(2, 0, 6, 7), 2, 3, _random_samples=S2), RuntimeError,
     ("fractional_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but got[2, 0, 6, 7] "
      "with dimension 1 being empty.")),
    (lambda: F.fractional_max_pool2d(X2, 2, (6, 3), _random_samples=S2), RuntimeError,
     "fractional_max_pool2d(): pool height 2 too large relative to input height 6"),
    (lambda: F.fractional_max_pool2d(X2, (1, 3), (6, 6), _random_samples=S2), RuntimeError,
     "fractional_max_pool2d(): pool width 3 too large relative to input width 7"),
    (lambda: F.fractional_max_pool3d(X3, 1, (5, 2, 2), _random_samples=S3), RuntimeError,  # strict in 3-d
     "fractional_max_pool3d_out(): pool time 1 too large relative to input time 5"),
    (lambda: F.fractional_max_pool3d(X3, 2, (3, 5, 2), _random_samples=S3), RuntimeError,
     "fractional_max_pool3d_out(): pool height 2 too large relative to input height 6"),
    (lambda: F.fractional_max_pool2d(X2, 2, (-1, 3), _random_samples=S2), RuntimeError,
     "Trying to create tensor with negative dimension -1: [2, 3, -1, 3]"),
    (lambda: F.fractional_max_pool2d(X2, 2, 3, _random_samples=S2.double()), RuntimeError,
     "Expect _random_samples to have the same dtype as input"),
    (lambda: F.fractional_max_pool2d(X2, 2, 3, _random_samples=ember.rand(3, 2)), RuntimeError,
     "Expect _random_samples to have 3 dimensions, got 2"),
    (lambda: F.fractional_max_pool2d(X2, 2, 3, _random_samples=ember.rand(1, 3, 2)), RuntimeError,
     "Expect _random_samples.size(0) no less then input batch size."),
    (lambda: F.fractional_max_pool2d(X2, 2, 3, _random_samples=ember.rand(2, 4, 2)), RuntimeError,
     "Expect _random_samples.size(1) equals to input channel size."),
    (lambda: F.fractional_max_pool3d(X3, 2, 3, _random_samples=ember.rand(2, 3, 2)), RuntimeError,
     "Expect _random_samples.size(2) equals to 3; got 2."),
    (lambda: F.fractional_max_pool2d(ember.ones(1, 1, 4, 4, dtype=ember.int64), 2, 2,
                                     _random_samples=ember.zeros(1, 1, 2, dtype=ember.int64)),
     NotImplementedError, "\"fractional_max_pool2d_out_frame\" not implemented for 'Long'"),
    (lambda: F.fractional_max_pool3d(ember.ones(1, 1, 4, 4, 4, dtype=ember.int64), 2, 2), NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
]


@pytest.mark.parametrize("call, exc, msg", ERRORS)
def test_errors(call, exc, msg):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value) == msg or msg in str(e.value)
