"""Selection and sorting: sort, argsort, msort, topk, kthvalue, nonzero, unique, searchsorted, histograms."""
import numpy as np
import pytest

import ember
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _distinct(*shape):
    """Values without ties (so the sorted order, and hence the gradient, is unique)."""
    def make(rng):
        n = int(np.prod(shape))
        return [(rng.permutation(n) + rng.uniform(0.1, 0.9, n)).reshape(shape) / n]
    return make


def _np_sort_desc(x, dim):
    return -np.sort(-x, axis=dim)


def _np_topk(x, k, dim, largest):
    s = _np_sort_desc(x, dim) if largest else np.sort(x, axis=dim)
    return np.take(s, np.arange(k), axis=dim)


def _np_kth(x, k, dim, keepdim):
    v = np.take(np.sort(x, axis=dim), [k - 1], axis=dim)
    return v if keepdim else np.squeeze(v, dim)


SPECS = [
    OpSpec("sort", lambda x: ember.sort(x).values, lambda x: np.sort(x, -1), _distinct(3, 5), gradgrad=True),
    OpSpec("sort_dim0_desc", lambda x: x.sort(0, True).values, lambda x: _np_sort_desc(x, 0), _distinct(4, 3)),
    OpSpec("sort_stable", lambda x: ember.sort(x, stable=True).values, lambda x: np.sort(x, -1), _distinct(6)),
    OpSpec("msort", lambda x: ember.msort(x), lambda x: np.sort(x, 0), _distinct(4, 3)),
    OpSpec("topk", lambda x: ember.topk(x, 2).values, lambda x: _np_topk(x, 2, -1, True), _distinct(3, 5),
           gradgrad=True),
    OpSpec("topk_smallest_dim0", lambda x: x.topk(3, dim=0, largest=False).values,
           lambda x: _np_topk(x, 3, 0, False), _distinct(5, 2)),
    OpSpec("topk_partition_path", lambda x: x.topk(3).values, lambda x: _np_topk(x, 3, -1, True), _distinct(2, 40)),
    OpSpec("topk_partition_smallest", lambda x: x.topk(2, largest=False).values,
           lambda x: _np_topk(x, 2, -1, False), _distinct(2, 40)),
    OpSpec("kthvalue", lambda x: ember.kthvalue(x, 2).values, lambda x: _np_kth(x, 2, -1, False), _distinct(3, 5),
           gradgrad=True),
    OpSpec("kthvalue_keepdim", lambda x: x.kthvalue(3, 0, keepdim=True).values, lambda x: _np_kth(x, 3, 0, True),
           _distinct(4, 3)),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_forward(spec):
    check_forward(spec)
    check_forward(spec, np.float32)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_sort_returns_named_tuple_with_int64_indices():
    x = ember.tensor([3.0, 1.0, 2.0])
    r = ember.sort(x)
    assert isinstance(r, ember.return_types.sort)
    assert r.values.tolist() == [1.0, 2.0, 3.0] and r.indices.tolist() == [1, 2, 0]
    assert r.indices.dtype is ember.int64
    v, i = x.sort(descending=True)
    assert v.tolist() == [3.0, 2.0, 1.0] and i.tolist() == [0, 2, 1]
    assert r.values.grad_fn is None


def test_sort_nan_and_ties_follow_torch():
    x = ember.tensor([3.0, float("nan"), 1.0, 3.0, 2.0])
    v, i = ember.sort(x)
    assert i.tolist() == [2, 4, 0, 3, 1]
    v, i = ember.sort(x, descending=True)
    assert i.tolist() == [1, 0, 3, 4, 2]
    assert np.isnan(v[0].item())
    assert ember.argsort(ember.tensor([2, 1, 2, 1]), descending=True).tolist() == [0, 2, 1, 3]


def test_bfloat16_with_nan_sorts_like_float32():
    # NumPy's own sort of ml_dtypes' bfloat16 misorders arrays holding NaN: the keys are compared in float32
    x32 = ember.tensor([[3.0, float("nan"), 1.0, 2.0, 1.0, -0.5, float("-inf")], [0.5, 0.25, float("nan"), 8.0,
                                                                                   float("nan"), -1.0, 0.0]])
    x = x32.bfloat16()
    for desc in (False, True):
        want = ember.sort(x32, 1, descending=desc).indices.tolist()
        assert ember.sort(x, 1, descending=desc).indices.tolist() == want
        assert ember.sort(x, 1, descending=desc).values.dtype is ember.bfloat16
    assert ember.topk(x, 3, 1).indices.tolist() == ember.topk(x32, 3, 1).indices.tolist()
    assert ember.kthvalue(x, 2, 1).indices.tolist() == ember.kthvalue(x32, 2, 1).indices.tolist()
    assert ember.median(x, 1).indices.tolist() == ember.median(x32, 1).indices.tolist()
    assert x[0].nanmedian().item() == 1.0 and x[:, 3:].nanmedian().item() == x32[:, 3:].nanmedian().item()
    u = ember.unique(x)
    assert u.dtype is ember.bfloat16 and u.tolist()[:7] == ember.unique(x32).tolist()[:7]
    assert ember.searchsorted(ember.tensor([1.0, 2.0, 3.0]).bfloat16(), x).tolist() == \
        ember.searchsorted(ember.tensor([1.0, 2.0, 3.0]), x32).tolist()


def test_sort_integer_bool_and_zero_dim():
    assert ember.sort(ember.tensor([[3, 1], [1, 2]]), dim=0).values.tolist() == [[1, 1], [3, 2]]
    assert ember.sort(ember.tensor([True, False, True])).values.tolist() == [False, True, True]
    v, i = ember.sort(ember.tensor(5.0))
    assert v.item() == 5.0 and i.item() == 0 and i.shape == ()
    assert ember.argsort(ember.tensor(5.0)).shape == ()


def test_sort_grad_fn_names():
    x = ember.ones(3, requires_grad=True)
    assert ember.sort(x).values.grad_fn.name() == "SortBackward0"
    assert ember.sort(x, stable=True).values.grad_fn.name() == "SortBackward1"
    assert ember.topk(x, 1).values.grad_fn.name() == "TopkBackward0"
    assert ember.kthvalue(x, 1).values.grad_fn.name() == "KthvalueBackward0"


def test_sort_out():
    x = ember.tensor([2.0, 1.0])
    vals, idx = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.sort(x, out=(vals, idx))
    assert r.values is vals and vals.tolist() == [1.0, 2.0] and idx.tolist() == [1, 0]


def test_topk_and_kthvalue():
    x = ember.tensor([[1.0, 9.0, 3.0, 7.0], [8.0, 2.0, 6.0, 4.0]])
    r = ember.topk(x, 2)
    assert isinstance(r, ember.return_types.topk)
    assert r.values.tolist() == [[9.0, 7.0], [8.0, 6.0]] and r.indices.tolist() == [[1, 3], [0, 2]]
    assert x.topk(1, dim=0, largest=False).indices.tolist() == [[0, 1, 0, 1]]
    assert x.topk(0).values.shape == (2, 0)
    k = ember.kthvalue(x, 2, dim=1)
    assert isinstance(k, ember.return_types.kthvalue)
    assert k.values.tolist() == [3.0, 4.0] and k.indices.tolist() == [2, 3]
    s = ember.tensor(5.0)
    assert ember.topk(s, 1).values.item() == 5.0 and ember.kthvalue(s, 1).indices.item() == 0


def test_topk_gradient_scatters_back():
    x = ember.tensor([1.0, 9.0, 3.0, 7.0], requires_grad=True)
    x.topk(2).values.backward(ember.tensor([10.0, 20.0]))
    assert x.grad.tolist() == [0.0, 10.0, 0.0, 20.0]


def test_selection_errors():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        x.topk(5)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 1"):
        x.kthvalue(0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.sort(2)


# ---------------------------------------------------------------- nonzero / unique
def test_nonzero_and_argwhere():
    x = ember.tensor([[0, 1], [2, 0]])
    assert ember.nonzero(x).tolist() == [[0, 1], [1, 0]]
    assert ember.nonzero(x).dtype is ember.int64
    rows, cols = x.nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]
    assert ember.argwhere(x).tolist() == [[0, 1], [1, 0]]
    assert ember.nonzero(ember.tensor(3)).shape == (1, 0)
    assert [t.tolist() for t in ember.nonzero(ember.tensor(3), as_tuple=True)] == [[0]]
    assert ember.nonzero(ember.zeros(2, 3)).shape == (0, 2)


def test_unique():
    x = ember.tensor([3, 1, 2, 1])
    assert ember.unique(x).tolist() == [1, 2, 3]
    u, inv, cnt = ember.unique(x, return_inverse=True, return_counts=True)
    assert inv.tolist() == [2, 0, 1, 0] and cnt.tolist() == [2, 1, 1]
    assert inv.dtype is ember.int64 and cnt.dtype is ember.int64
    u, inv = x.unique(return_inverse=True)
    assert inv.tolist() == [2, 0, 1, 0]
    m = ember.tensor([[1, 2], [1, 2], [0, 1]])
    u, inv = ember.unique(m, dim=0, return_inverse=True)
    assert u.tolist() == [[0, 1], [1, 2]] and inv.tolist() == [1, 1, 0]
    assert ember.unique(m, return_inverse=True)[1].shape == (3, 2)
    nan = float("nan")
    assert np.isnan(ember.unique(ember.tensor([3.0, nan, nan])).numpy()).sum() == 2
    with pytest.raises(IndexError, match="Dimension specified as 0 but tensor has no dimensions"):
        ember.unique(ember.tensor(1.0), dim=0)


def test_unique_consecutive():
    x = ember.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    u, inv, cnt = ember.unique_consecutive(x, return_inverse=True, return_counts=True)
    assert u.tolist() == [1, 2, 3, 1, 2]
    assert inv.tolist() == [0, 0, 1, 1, 2, 3, 3, 4] and cnt.tolist() == [2, 2, 1, 2, 1]
    m = ember.tensor([[1, 1, 2, 2], [0, 0, 5, 5]])
    u, cnt = m.unique_consecutive(dim=1, return_counts=True)
    assert u.tolist() == [[1, 2], [0, 5]] and cnt.tolist() == [2, 2]
    assert ember.unique_consecutive(ember.tensor([], dtype=ember.int64)).tolist() == []


# ---------------------------------------------------------------- searchsorted / bucketize / histograms
def test_searchsorted():
    seq = ember.tensor([1, 3, 5, 7])
    v = ember.tensor([3, 6, 9])
    assert ember.searchsorted(seq, v).tolist() == [1, 3, 4]
    assert ember.searchsorted(seq, v, right=True).tolist() == [2, 3, 4]
    assert ember.searchsorted(seq, v, side="right").tolist() == [2, 3, 4]
    r = ember.searchsorted(seq, 3, out_int32=True)
    assert r.shape == () and r.item() == 1 and r.dtype is ember.int32
    seq2 = ember.tensor([[1, 3, 5, 7], [2, 4, 6, 8]])
    assert ember.searchsorted(seq2, ember.tensor([[3, 6, 9], [3, 6, 9]])).tolist() == [[1, 3, 4], [1, 2, 4]]
    unsorted = ember.tensor([5, 1, 7, 3])
    assert ember.searchsorted(unsorted, v, sorter=ember.argsort(unsorted)).tolist() == [1, 3, 4]
    with pytest.raises(RuntimeError, match="boundaries tensor should be 1 dimension or the first N-1 dimensions"):
        ember.searchsorted(seq2, v)
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        ember.searchsorted(seq, v, right=True, side="left")


def test_bucketize():
    b = ember.tensor([1, 3, 5, 7])
    assert ember.bucketize(ember.tensor([3, 6, 9]), b).tolist() == [1, 3, 4]
    assert ember.bucketize(ember.tensor([[3], [7]]), b, right=True).tolist() == [[2], [4]]
    assert ember.bucketize(3, b, right=True).item() == 2
    with pytest.raises(RuntimeError, match=r"boundaries tensor must be 1 dimension, but got dim\(2\)"):
        ember.bucketize(ember.tensor([1]), b.reshape(2, 2))


def test_histc():
    r = ember.histc(ember.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    assert r.tolist() == [0.0, 2.0, 1.0, 0.0] and r.dtype is ember.float32
    assert ember.histc(ember.tensor([1.0, 2.0, 1.0, 5.0]), bins=4).tolist() == [2.0, 1.0, 0.0, 1.0]
    assert ember.histc(ember.tensor([1.0, 1.0]), bins=4).tolist() == [0.0, 0.0, 2.0, 0.0]
    assert ember.histc(ember.tensor([0.0, 3.0, 9.0], dtype=ember.float64), bins=3, min=0, max=3).dtype is \
        ember.float64
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        ember.histc(ember.tensor([1, 2]))


def test_histogram():
    h = ember.histogram(ember.tensor([1.0, 2.0, 1.0, 5.0]), bins=4)
    assert isinstance(h, ember.return_types.histogram)
    assert h.hist.tolist() == [2.0, 1.0, 0.0, 1.0] and h.bin_edges.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    h = ember.tensor([1.0, 2.0, 3.0]).histogram(ember.tensor([0.0, 2.0, 4.0]), weight=ember.tensor([1.0, 2.0, 4.0]))
    assert h.hist.tolist() == [1.0, 6.0]


def test_bincount():
    x = ember.tensor([0, 1, 1, 3])
    assert ember.bincount(x).tolist() == [1, 2, 0, 1] and ember.bincount(x).dtype is ember.int64
    assert x.bincount(minlength=6).tolist() == [1, 2, 0, 1, 0, 0]
    w = ember.bincount(x, weights=ember.tensor([1.0, 2.0, 3.0, 4.0]))
    assert w.tolist() == [1.0, 5.0, 0.0, 4.0] and w.dtype is ember.float32
    assert ember.bincount(x, weights=ember.tensor([1, 2, 3, 4])).dtype is ember.float64
    assert ember.bincount(ember.tensor([], dtype=ember.int64)).tolist() == []
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral inputs."):
        ember.bincount(ember.tensor([-1]))
    with pytest.raises(NotImplementedError, match="\"bincount_cpu\" not implemented for 'Float'"):
        ember.bincount(ember.tensor([1.0]))


def test_gradients_of_sort_flow_through_indices():
    x = ember.tensor([[3.0, 1.0, 2.0]], requires_grad=True)
    v, _ = x.sort(dim=1, descending=True)
    (v * ember.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    assert_close(x.grad, [[1.0, 3.0, 2.0]])


def test_searchsorted_values_named_input():
    seq = ember.tensor([1, 3])
    assert ember.searchsorted(seq, input=ember.tensor([2])).tolist() == [1]
    assert ember.searchsorted(sorted_sequence=seq, values=ember.tensor([4])).tolist() == [2]


# ---------------- histogramdd ----------------

def test_histogramdd_matches_numpy():
    rng = np.random.default_rng(3)
    pts = rng.standard_normal((50, 3)).astype(np.float32)
    w = rng.random(50).astype(np.float32)
    r = ember.histogramdd(ember.tensor(pts), bins=[3, 4, 2], weight=ember.tensor(w), density=True)
    hist, edges = np.histogramdd(pts.astype(np.float64), bins=[3, 4, 2], weights=w, density=True)
    np.testing.assert_allclose(r.hist.numpy(), hist, rtol=1e-5)
    for got, want in zip(r.bin_edges, edges):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    r = ember.histogramdd(ember.tensor(pts).reshape(5, 10, 3), bins=2, range=[0.0, 1.0, -1.0, 1.0, 0.0, 2.0])
    hist, _ = np.histogramdd(pts.astype(np.float64), bins=2, range=[(0, 1), (-1, 1), (0, 2)])
    np.testing.assert_array_equal(r.hist.numpy(), hist)


def test_histogramdd_edges_as_torch_has_them():
    pts = ember.tensor([[0.5, 0.5], [1.0, 2.0], [0.0, 0.0]])
    r = ember.histogramdd(pts, bins=[ember.tensor([0.0, 0.5, 1.0]), ember.tensor([0.0, 1.0, 2.0])])
    np.testing.assert_array_equal(r.hist.numpy(), [[1, 0], [1, 1]])        # the last edge closes the last bin
    r = ember.histogramdd(pts, bins=[ember.tensor([0.0, 1.0]), ember.tensor([2.0, 0.0])])
    np.testing.assert_array_equal(r.hist.numpy(), [[0]])                   # decreasing edges hold nothing
    r = ember.histogramdd(ember.tensor([[2.0, 3.0], [2.0, 3.0]]), bins=[2, 2])
    np.testing.assert_allclose(r.bin_edges[0].numpy(), [1.5, 2.0, 2.5])   # a constant coordinate: +-0.5
    r = ember.histogramdd(ember.zeros(0, 2), bins=2)
    np.testing.assert_allclose(r.bin_edges[1].numpy(), [0.0, 0.5, 1.0])
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.histogramdd(ember.zeros(3), bins=2)
