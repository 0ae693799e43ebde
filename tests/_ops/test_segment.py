"""segment_reduce and _chunk_cat: against NumPy loop references, torch's rules for initial, empty segments and
ties, float64 gradchecks, errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

_NP = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}
_EMPTY = {"max": -np.inf, "min": np.inf, "sum": 0.0, "mean": np.nan, "prod": 1.0}


def ref_segment(data, reduce, lengths, initial=None):
    out, start = [], 0
    for n in lengths:
        seg = data[start:start + n]
        start += n
        if n == 0:
            out.append(np.full(data.shape[1:], _EMPTY[reduce] if initial is None else initial))
        elif initial is None:
            out.append(_NP[reduce](seg, axis=0))
        elif reduce == "mean":
            out.append((seg.sum(0) + initial) / n)
        else:
            out.append(_NP[reduce](np.concatenate([seg, np.full((1,) + data.shape[1:], initial)]), axis=0))
    return np.stack(out)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 0.5])
def test_segment_reduce_values_and_gradients(reduce, initial):
    rng = np.random.default_rng(0)
    data = rng.uniform(0.5, 2, (7, 3))
    lengths = [2, 0, 4, 1]
    x = ember.tensor(data, requires_grad=True)
    got = ember.segment_reduce(x, reduce, lengths=ember.tensor(lengths), initial=initial)
    np.testing.assert_allclose(got.detach().numpy(), ref_segment(data, reduce, lengths, initial), rtol=1e-12)
    offsets = ember.tensor(np.concatenate([[0], np.cumsum(lengths)]))
    by_offsets = ember.segment_reduce(x, reduce, offsets=offsets, initial=initial)
    np.testing.assert_array_equal(by_offsets.detach().numpy(), got.detach().numpy())
    if initial is not None or reduce not in ("max", "min", "mean"):  # empty segments give constants there
        assert gradcheck(lambda t: ember.segment_reduce(t, reduce, lengths=ember.tensor(lengths), initial=initial),
                         (x,))


def test_segment_reduce_max_shares_the_gradient_between_ties():
    x = ember.tensor([1.0, 5.0, 5.0, 7.0, 3.0], requires_grad=True)
    ember.segment_reduce(x, "max", lengths=ember.tensor([0, 1, 2, 2]), initial=1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.5, 0.5, 1.0, 0.0])


def test_segment_reduce_along_a_later_axis():
    data = np.arange(15.0).reshape(3, 5)
    lengths = np.array([[2, 3], [1, 4], [5, 0]])
    got = ember.segment_reduce(ember.tensor(data), "sum", lengths=ember.tensor(lengths), axis=1)
    want = np.stack([ref_segment(row, "sum", ls) for row, ls in zip(data, lengths)])
    np.testing.assert_array_equal(got.numpy(), want)


def test_segment_reduce_errors():
    x = ember.ones(5)
    with pytest.raises(RuntimeError, match="sum to data.size"):
        ember.segment_reduce(x, "max", lengths=ember.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="Either lengths or offsets must be defined"):
        ember.segment_reduce(x, "max")
    with pytest.raises(RuntimeError, match="not supported"):
        ember.segment_reduce(x, "median", lengths=ember.tensor([5]))


@pytest.mark.parametrize("dim,num_chunks", [(-1, 5), (1, 5), (0, 2), (2, 2), (1, 1)])
def test_chunk_cat(dim, num_chunks):
    a, b = np.arange(6.0).reshape(1, 2, 3), np.arange(6.0, 18.0).reshape(1, 2, 6)
    if dim in (-1, 2):
        b = b[..., :5]
    else:
        b = np.arange(6.0, 12.0).reshape(1, 2, 3)
    d = dim % 3
    parts = []
    for t in (a, b):
        size = t.shape[d]
        chunk = -(-size // num_chunks)
        pad = [(0, 0)] * 3
        pad[d] = (0, chunk * num_chunks - size)
        parts.append(np.pad(t, pad).reshape(t.shape[:d] + (num_chunks, -1)))
    got = ember._chunk_cat([ember.tensor(a), ember.tensor(b)], dim, num_chunks)
    np.testing.assert_array_equal(got.numpy(), np.concatenate(parts, -1))


@pytest.mark.parametrize("shapes,dim,num_chunks,message", [
    ([(2, 3), (4,)], -1, 3, "non-negative dim when input tensors have different ndims"),
    ([(2, 3), (4,)], 1, 3, "dim < ndim for all input tensors"),
    ([(2, 3, 4), (4, 3)], 1, 3, "same sizes of 0,...,dim-1 dimensions"),
    ([(2,), (3,)], 0, 0, "positive num_chunks"),
    ([], 0, 1, "non-empty input tensor list"),
    ([(0,), (3,)], 0, 1, "non-empty tensor"),
])
def test_chunk_cat_errors(shapes, dim, num_chunks, message):
    with pytest.raises(RuntimeError, match=message):
        ember._chunk_cat([ember.ones(s) for s in shapes], dim, num_chunks)
