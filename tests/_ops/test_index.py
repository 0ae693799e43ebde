"""Indexing, gather/scatter, masked and index_* ops: forward against NumPy, gradcheck, views, setitem, errors."""
import numpy as np
import pytest

import ember
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _u(*shapes):
    return lambda rng: [rng.uniform(-2, 2, s) for s in shapes]


def _idx(a):
    return ember.tensor(np.array(a, dtype=np.int64))


def _mask(a):
    return ember.tensor(np.array(a, dtype=bool))


# ---------------------------------------------------------------- NumPy references
def _np_scatter_add(x, dim, idx, src):
    y = x.copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        y[tuple(tgt)] += src[pos]
    return y


def _np_scatter(x, dim, idx, src):
    y = x.copy()
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        y[tuple(tgt)] = src[pos] if np.ndim(src) else src
    return y


def _np_index_add(x, dim, idx, src, alpha=1):
    y = np.moveaxis(x.copy(), dim, 0)
    np.add.at(y, idx, np.moveaxis(src, dim, 0) * alpha)
    return np.moveaxis(y, 0, dim)


def _np_index_copy(x, dim, idx, src):
    y = np.moveaxis(x.copy(), dim, 0)
    y[idx] = np.moveaxis(src, dim, 0)
    return np.moveaxis(y, 0, dim)


def _np_masked_scatter(x, m, src):
    y = np.broadcast_to(x, np.broadcast_shapes(x.shape, m.shape)).copy()
    mb = np.broadcast_to(m, y.shape)
    y[mb] = src.reshape(-1)[:mb.sum()]
    return y


def _np_put(x, idx, src, accumulate):
    y = x.copy().reshape(-1)
    if accumulate:
        np.add.at(y, idx.reshape(-1), src.reshape(-1))
    else:
        y[idx.reshape(-1)] = src.reshape(-1)
    return y.reshape(x.shape)


def _np_scatter_reduce(x, dim, idx, src, reduce, include_self=True):
    y = x.copy()
    groups = {}
    for pos in np.ndindex(*idx.shape):
        tgt = list(pos)
        tgt[dim] = idx[pos]
        groups.setdefault(tuple(tgt), []).append(src[pos])
    for tgt, vals in groups.items():
        vals = ([x[tgt]] if include_self else []) + vals
        f = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
        y[tgt] = f(vals)
    return y


I23 = np.array([[0, 2, 1], [2, 2, 0]])          # scatter index into (2, 4) along dim 1, with repeats
ROWS = np.array([0, 2, 2, 1, 0])                 # index_* index with repeats
UNIQ = np.array([3, 0, 2])
M34 = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
TAKE = np.array([[0, 11], [-1, 5], [5, 3]])


SPECS = [
    # getitem: basic (views) and advanced (copies)
    OpSpec("getitem_int", lambda x: x[1], lambda x: x[1], _u((3, 4)), gradgrad=True),
    OpSpec("getitem_neg_int", lambda x: x[-1, -2], lambda x: x[-1, -2], _u((3, 4))),
    OpSpec("getitem_slice", lambda x: x[:, 1:3], lambda x: x[:, 1:3], _u((3, 4)), gradgrad=True),
    OpSpec("getitem_step", lambda x: x[::2, 1::2], lambda x: x[::2, 1::2], _u((5, 4))),
    OpSpec("getitem_none_ellipsis", lambda x: x[None, ..., 0], lambda x: x[None, ..., 0], _u((2, 3, 4))),
    OpSpec("getitem_list", lambda x: x[[0, 2, 2]], lambda x: x[[0, 2, 2]], _u((3, 4)), gradgrad=True),
    OpSpec("getitem_tensor_idx", lambda x: x[_idx([[1, 0], [2, 2]])], lambda x: x[np.array([[1, 0], [2, 2]])],
           _u((3, 4))),
    OpSpec("getitem_two_arrays", lambda x: x[_idx([0, 2, 2]), _idx([1, 1, 3])],
           lambda x: x[[0, 2, 2], [1, 1, 3]], _u((3, 4)), gradgrad=True),
    OpSpec("getitem_mask", lambda x: x[_mask(M34)], lambda x: x[M34], _u((3, 4)), gradgrad=True),
    OpSpec("getitem_row_mask", lambda x: x[_mask([True, False, True])], lambda x: x[[True, False, True]],
           _u((3, 4))),
    OpSpec("getitem_slice_then_array", lambda x: x[1:, [0, 0, 3]], lambda x: x[1:, [0, 0, 3]], _u((3, 4))),
    OpSpec("getitem_int_array_separated", lambda x: x[0, :, [0, 1]], lambda x: x[0][:, [0, 1]],
           _u((2, 3, 4))),
    OpSpec("getitem_arrays_separated", lambda x: x[[0, 1], :, [0, 3]], lambda x: x[[0, 1], :, [0, 3]],
           _u((2, 3, 4))),
    # gather / scatter family
    OpSpec("gather", lambda x: ember.gather(x, 1, _idx(I23)), lambda x: np.take_along_axis(x[:, :4], I23, 1),
           _u((2, 4)), gradgrad=True),
    OpSpec("gather_small_index", lambda x: x.gather(0, _idx([[1], [0]])),
           lambda x: np.take_along_axis(x[:, :1], np.array([[1], [0]]), 0), _u((3, 4)), gradgrad=True),
    OpSpec("scatter_add", lambda x, s: ember.scatter_add(x, 1, _idx(I23), s),
           lambda x, s: _np_scatter_add(x, 1, I23, s), _u((2, 4), (2, 3)), gradgrad=True),
    OpSpec("scatter_add_big_src", lambda x, s: x.scatter_add(1, _idx(I23), s),
           lambda x, s: _np_scatter_add(x, 1, I23, s), _u((2, 4), (3, 5))),
    OpSpec("scatter_src", lambda x, s: x.scatter(1, _idx([[0, 3, 1], [2, 1, 0]]), s),
           lambda x, s: _np_scatter(x, 1, np.array([[0, 3, 1], [2, 1, 0]]), s), _u((2, 4), (2, 3))),
    OpSpec("scatter_value", lambda x: x.scatter(1, _idx(I23), 1.5), lambda x: _np_scatter(x, 1, I23, 1.5),
           _u((2, 4))),
    OpSpec("scatter_reduce_sum", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "sum"),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "sum"), _u((2, 4), (2, 3))),
    OpSpec("scatter_reduce_sum_noself", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "sum", include_self=False),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "sum", False), _u((2, 4), (2, 3))),
    OpSpec("scatter_reduce_mean", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "mean"),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "mean"), _u((2, 4), (2, 3))),
    OpSpec("scatter_reduce_mean_noself", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "mean", include_self=False),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "mean", False), _u((2, 4), (2, 3))),
    OpSpec("scatter_reduce_amax", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "amax"),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "amax"), _u((2, 4), (2, 3))),
    OpSpec("scatter_reduce_amin_noself", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "amin", include_self=False),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "amin", False), _u((2, 4), (2, 3))),
    OpSpec("scatter_reduce_prod", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "prod"),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "prod"), _u((2, 4), (2, 3))),
    OpSpec("scatter_reduce_prod_noself", lambda x, s: x.scatter_reduce(1, _idx(I23), s, "prod", include_self=False),
           lambda x, s: _np_scatter_reduce(x, 1, I23, s, "prod", False), _u((2, 4), (2, 3))),
    # index_* family
    OpSpec("index_select", lambda x: ember.index_select(x, 0, _idx(ROWS)), lambda x: x[ROWS], _u((3, 4)),
           gradgrad=True),
    OpSpec("index_select_dim1", lambda x: x.index_select(1, _idx([3, 3, 0])), lambda x: x[:, [3, 3, 0]],
           _u((3, 4)), gradgrad=True),
    OpSpec("index_add", lambda x, s: x.index_add(0, _idx(ROWS), s), lambda x, s: _np_index_add(x, 0, ROWS, s),
           _u((3, 4), (5, 4)), gradgrad=True),
    OpSpec("index_add_alpha_dim1", lambda x, s: ember.index_add(x, 1, _idx(ROWS), s, alpha=-2.0),
           lambda x, s: _np_index_add(x, 1, ROWS, s, -2.0), _u((2, 3), (2, 5))),
    OpSpec("index_copy", lambda x, s: x.index_copy(1, _idx(UNIQ), s), lambda x, s: _np_index_copy(x, 1, UNIQ, s),
           _u((2, 4), (2, 3))),
    OpSpec("index_fill", lambda x: x.index_fill(1, _idx([0, 2, 2]), -1.0),
           lambda x: np.where(np.isin(np.arange(4), [0, 2]), -1.0, x), _u((3, 4))),
    OpSpec("index_fill_tensor_value", lambda x, v: x.index_fill(0, _idx([1]), v),
           lambda x, v: np.where(np.arange(3)[:, None] == 1, v, x), lambda rng: [rng.uniform(-1, 1, (3, 2)),
                                                                                  np.array(0.5)]),
    OpSpec("index_fill_tensor_value_repeated_index", lambda x, v: x.index_fill(1, _idx([0, 2, 2]), v),
           lambda x, v: np.where(np.isin(np.arange(4), [0, 2]), v, x), lambda rng: [rng.uniform(-1, 1, (3, 4)),
                                                                                    np.array(0.5)]),
    OpSpec("index_reduce_prod", lambda x, s: x.index_reduce(0, _idx(ROWS), s, "prod"),
           lambda x, s: _np_scatter_reduce(x, 0, np.broadcast_to(ROWS[:, None], (5, 4)), s, "prod"),
           _u((3, 4), (5, 4))),
    OpSpec("index_reduce_mean_noself", lambda x, s: x.index_reduce(0, _idx(ROWS), s, "mean", include_self=False),
           lambda x, s: _np_scatter_reduce(x, 0, np.broadcast_to(ROWS[:, None], (5, 4)), s, "mean", False),
           _u((3, 4), (5, 4))),
    OpSpec("index_put", lambda x, v: x.index_put((_idx([0, 2]), _idx([1, 3])), v),
           lambda x, v: _np_index_put(x, ([0, 2], [1, 3]), v, False), _u((3, 4), (2,))),
    OpSpec("index_put_accumulate", lambda x, v: ember.index_put(x, (_idx([0, 2, 0]),), v, accumulate=True),
           lambda x, v: _np_index_put(x, ([0, 2, 0],), v, True), _u((3, 4), (4,)), gradgrad=True),
    # masked ops
    OpSpec("masked_fill", lambda x: x.masked_fill(_mask(M34), 2.5), lambda x: np.where(M34, 2.5, x), _u((3, 4)),
           gradgrad=True),
    OpSpec("masked_fill_broadcast", lambda x: ember.masked_fill(x, _mask([[True], [False]]), 0.0),
           lambda x: np.where(np.array([[True], [False]]), 0.0, x), _u((4,))),
    OpSpec("masked_fill_tensor_value", lambda x, v: x.masked_fill(_mask(M34), v), lambda x, v: np.where(M34, v, x),
           lambda rng: [rng.uniform(-1, 1, (3, 4)), np.array(0.5)]),
    OpSpec("masked_select", lambda x: x.masked_select(_mask(M34)), lambda x: x[M34], _u((3, 4)), gradgrad=True),
    OpSpec("masked_select_broadcast", lambda x: ember.masked_select(x, _mask([True, False, True, True])),
           lambda x: x[:, [0, 2, 3]].reshape(-1), _u((3, 4))),
    OpSpec("masked_scatter", lambda x, s: x.masked_scatter(_mask(M34), s),
           lambda x, s: _np_masked_scatter(x, M34, s), _u((3, 4), (2, 5))),
    # take / put / take_along_dim
    OpSpec("take", lambda x: ember.take(x, _idx(TAKE)), lambda x: x.reshape(-1)[TAKE], _u((3, 4)), gradgrad=True),
    OpSpec("put_unique", lambda x, s: x.put(_idx([[1, 5], [7, 0]]), s),
           lambda x, s: _np_put(x, np.array([1, 5, 7, 0]), s, False), _u((3, 4), (2, 2))),
    OpSpec("put_accumulate", lambda x, s: ember.put(x, _idx([1, 5, 1]), s, accumulate=True),
           lambda x, s: _np_put(x, np.array([1, 5, 1]), s, True), _u((3, 4), (3,))),
    OpSpec("take_along_dim", lambda x: ember.take_along_dim(x, _idx([[0, 3], [1, 1], [2, 0]]), 1),
           lambda x: np.take_along_axis(x, np.array([[0, 3], [1, 1], [2, 0]]), 1), _u((3, 4))),
    OpSpec("take_along_dim_broadcast", lambda x: x.take_along_dim(_idx([[0, 3]]), 1),
           lambda x: np.take_along_axis(x, np.array([[0, 3]] * 3), 1), _u((3, 4))),
    OpSpec("take_along_dim_flat", lambda x: ember.take_along_dim(x, _idx([11, 0, 4])),
           lambda x: x.reshape(-1)[[11, 0, 4]], _u((3, 4))),
]


def _np_index_put(x, idx, v, accumulate):
    y = x.copy()
    if accumulate:
        np.add.at(y, idx, v)
    else:
        y[idx] = v
    return y


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_forward(spec):
    check_forward(spec)
    check_forward(spec, np.float32)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


# ---------------------------------------------------------------- getitem against NumPy
A = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
GETITEM_CASES = [
    1, -1, (1, 2), (0, -1, 2, 3), slice(1, None), slice(None, None, 2), (slice(None), slice(1, 3)),
    (Ellipsis, 1), (1, Ellipsis, slice(0, 4, 3)), None, (None, 1, None), (Ellipsis, None), (),
    [1, 0, 1], ([0, 1], [2, 0]), ([[0], [1]], [0, 2]), (slice(None), [0, 2, 2]), (Ellipsis, [4, 0]),
    ([0, 1], slice(None), [0, 3]), (slice(None), [0, 1], slice(None), [1, 2]), (0, [0, 2], [1, 3]),
    (slice(None), [2, 0], [1, 3]), (slice(1, 2), Ellipsis, [0, 0, 1]), ([1], None, [2]),
    np.array([True, False]), (slice(None), np.array([True, False, True])),
    (np.arange(24).reshape(2, 3, 4) % 3 == 0), (0, np.array([[True, False, True, False]] * 3)),
    (slice(5, 1),), (slice(-100, 100),), (Ellipsis, slice(None, -1)),
]


def _np_key(k):
    return k


@pytest.mark.parametrize("key", GETITEM_CASES, ids=[repr(k)[:40] for k in GETITEM_CASES])
def test_getitem_matches_numpy(key):
    x = ember.tensor(A)
    got = x[key]
    expected = A[key] if not isinstance(key, tuple) or key != () else A
    assert_close(got, expected)
    assert got.dtype is ember.float32


def test_getitem_int_before_separated_array_follows_torch_not_numpy():
    x = ember.tensor(A)
    # torch: ints are selections (x[0][:, :, [0, 1]]), NumPy would move the broadcast dim first
    assert x[0, :, :, [0, 1]].shape == (3, 4, 2)
    assert x[:, 0, :, [0, 1]].shape == (2, 4, 2)
    assert x[[0, 1], 0].shape == (2, 4, 5)


def test_getitem_bool_scalars_add_a_dim():
    x = ember.tensor(A)
    assert x[True].shape == (1, 2, 3, 4, 5)
    assert x[False].shape == (0, 2, 3, 4, 5)
    assert x[0, True].shape == (1, 3, 4, 5)
    assert x[ember.tensor(True)].shape == (1, 2, 3, 4, 5)


def test_getitem_tensor_scalars_and_int32_indices():
    x = ember.tensor(A)
    assert_close(x[ember.tensor(1)], A[1])
    assert x[ember.tensor(1)]._base is x
    assert_close(x[ember.tensor([1, 0], dtype=ember.int32)], A[[1, 0]])
    assert_close(x[np.int64(1), np.array([2, 0])], A[1, [2, 0]])


def test_getitem_empty_index_list():
    x = ember.tensor(A)
    assert x[[]].shape == (0, 3, 4, 5)
    assert x[ember.tensor([], dtype=ember.int64)].shape == (0, 3, 4, 5)


def test_getitem_zero_dim():
    x = ember.tensor(3.0)
    assert x[None].shape == (1,)
    assert x[...].shape == ()
    assert x[()].item() == 3.0
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        x[0]


# ---------------------------------------------------------------- views
def test_basic_indexing_returns_views_sharing_memory_and_version():
    x = ember.tensor(np.arange(12.0).reshape(3, 4))
    for v in (x[1], x[:, 1:3], x[None], x[..., ::2], x[1, 2], x[:]):
        assert v._base is x
        assert v._vc is x._vc
    v = x[1]
    v.mul_(10)
    assert x[1, 0].item() == 40.0
    assert x._version == 1 and v._version == 1


def test_advanced_indexing_copies():
    x = ember.arange(12.0).reshape(3, 4)
    y = x[[0, 1]]
    y.add_(100)
    assert x[0, 0].item() == 0.0
    assert y._base is None


def test_view_grad_fn_names():
    x = ember.ones(3, 4, requires_grad=True)
    assert x[0].grad_fn.name() == "SelectBackward0"
    assert x[1:2].grad_fn.name() == "SliceBackward0"
    assert x[None].grad_fn.name() == "UnsqueezeBackward0"
    assert x[...].grad_fn.name() == "AliasBackward0"
    assert x[:, 0:4].grad_fn.name() == "AliasBackward0"
    assert x[[0]].grad_fn.name() == "IndexBackward0"
    assert x.gather(0, _idx([[0]])).grad_fn.name() == "GatherBackward0"
    assert x.index_select(0, _idx([0])).grad_fn.name() == "IndexSelectBackward0"
    assert x.masked_fill(_mask([True] * 4), 1.0).grad_fn.name() == "MaskedFillBackward0"
    assert x.masked_fill(_mask([True] * 4), ember.tensor(1.0)).grad_fn.name() == "MaskedFillBackward1"
    assert x.scatter(0, _idx([[0]]), 1.0).grad_fn.name() == "ScatterBackward1"


def test_no_graph_without_grad():
    x = ember.ones(3, 4)
    assert x[0].grad_fn is None and x[[0, 1]].grad_fn is None
    w = ember.ones(3, 4, requires_grad=True)
    with ember.no_grad():
        assert w[0].grad_fn is None and not w[:, [1]].requires_grad


def test_getitem_grad_accumulates_repeated_indices():
    x = ember.zeros(3, 2, requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    assert_close(x.grad, [[3.0, 3.0], [0.0, 0.0], [1.0, 1.0]])


def test_getitem_large_repeated_rows_gradient():
    rng = np.random.default_rng(0)
    w = ember.tensor(rng.standard_normal((50, 3)), requires_grad=True)
    idx = rng.integers(0, 50, 400)
    g = rng.standard_normal((400, 3))
    w[ember.tensor(idx)].backward(ember.tensor(g))
    expected = np.zeros((50, 3))
    np.add.at(expected, idx, g)
    assert_close(w.grad, expected, atol=1e-10)


# ---------------------------------------------------------------- setitem
SETITEM_CASES = [
    (1, 7.0), ((0, 2), -1.0), (slice(1, 3), np.arange(4.0)), ((slice(None), 1), np.array([1.0, 2.0, 3.0])),
    ((Ellipsis, 0), 5.0), ([0, 2], np.array([[1.0], [2.0]])), (([0, 2], [1, 3]), np.array([8.0, 9.0])),
    (np.array([[True, False, False, True]] * 3), 0.5), ((slice(None), [3, 0]), np.array([1.0, 2.0])),
    ((0, [1, 1]), np.array([4.0, 5.0])), (None, 2.0), ((slice(None, None, 2), slice(1, None, 2)), 3.0),
    (np.array([True, False, True]), np.arange(4.0)),
]


@pytest.mark.parametrize("key,value", SETITEM_CASES, ids=[repr(k)[:40] for k, _ in SETITEM_CASES])
def test_setitem_matches_numpy(key, value):
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    x = ember.tensor(a)
    x[key] = ember.tensor(value.astype(np.float32)) if isinstance(value, np.ndarray) else value
    a[key] = value
    assert_close(x, a)
    assert x._version == 1


def test_setitem_scalar_casts_and_value_with_leading_ones():
    x = ember.zeros(3, dtype=ember.int64)
    x[0] = 2.7
    assert x.tolist() == [2, 0, 0]
    y = ember.zeros(2, 3)
    y[0] = ember.ones(1, 1, 3)
    y[[1]] = ember.full((1, 1, 3), 2.0)
    assert y.tolist() == [[1.0] * 3, [2.0] * 3]
    z = ember.zeros(3, dtype=ember.uint8)
    z[0] = -1
    assert z.tolist() == [255, 0, 0]


def test_setitem_writes_through_views():
    x = ember.zeros(3, 4)
    v = x[1:]
    v[0, [0, 3]] = 5.0
    assert x[1].tolist() == [5.0, 0.0, 0.0, 5.0]
    assert x._version == 1


def test_setitem_on_nonleaf_records_copy_slices():
    w = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = w * 2
    x[0] = 0.0
    assert x.grad_fn.name() == "torch::autograd::CopySlices"
    (x * ember.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert_close(w.grad, [[0.0, 0.0], [6.0, 8.0]])


def test_setitem_advanced_on_nonleaf_records_index_put():
    w = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = w * 1
    x[[0, 2]] = 5.0
    assert x.grad_fn.name() == "IndexPutBackward0"
    x.sum().backward()
    assert_close(w.grad, [0.0, 1.0, 0.0])


def test_setitem_value_requires_grad():
    v = ember.tensor([1.0, 2.0], requires_grad=True)
    x = ember.zeros(3, 2)
    x[1] = v
    (x * ember.tensor([[1.0, 1.0], [2.0, 3.0], [1.0, 1.0]])).sum().backward()
    assert_close(v.grad, [2.0, 3.0])
    assert x.requires_grad and not x.is_leaf


def test_setitem_broadcast_value_grad_is_summed():
    s = ember.tensor(2.0, requires_grad=True)
    x = ember.zeros(3, 4)
    x[:, 1:3] = s
    x.sum().backward()
    assert s.grad.item() == 6.0
    row = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.zeros(3, 2)
    y[[0, 0, 2]] = row  # repeated index: each written position sends its gradient back
    y.sum().backward()
    assert_close(row.grad, [3.0, 3.0])


def test_setitem_masks_region_gradient_of_self():
    w = ember.ones(2, 3, requires_grad=True)
    x = w.clone()
    x[_mask([[True, False, True], [False, False, True]])] = ember.tensor(0.0, dtype=ember.float64)
    x.sum().backward()
    assert_close(w.grad, [[0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])


def test_setitem_gradgrad():
    from ember.autograd import gradcheck, gradgradcheck

    def fn(x, v):
        y = x * 1
        y[1:, [0, 2]] = v
        return y * y

    x = ember.tensor(np.random.default_rng(1).standard_normal((3, 3)), requires_grad=True)
    v = ember.tensor(np.random.default_rng(2).standard_normal((2, 2)), requires_grad=True)
    assert gradcheck(fn, (x, v))
    assert gradgradcheck(fn, (x, v))


def test_setitem_leaf_requiring_grad_raises():
    w = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        w[0] = 1.0
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad"):
        w[[0]] = 1.0
    with ember.no_grad():
        w[0] = 5.0
    assert w.tolist() == [5.0, 1.0, 1.0]


def test_setitem_errors():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match the existing size "
                                           r"\(3\) at non-singleton dimension 0"):
        x[0] = ember.ones(3)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to "
                                           r"indexing result of shape \[2, 4\]"):
        x[[0, 1]] = ember.ones(3)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match, got Float "
                                           "for the destination and Double for the source."):
        x[[0]] = ember.ones(4, dtype=ember.float64)
    with pytest.raises(TypeError, match="can't assign a list to a ember.FloatTensor"):
        x[0] = [1, 2, 3, 4]
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        ember.zeros(2, dtype=ember.uint8)[0] = 300
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        x[0] = 1 + 2j
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[5] = 1.0
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1] = 1.0
    assert x._version == 0


def test_setitem_tensor_of_other_dtype_is_cast_for_basic_keys():
    x = ember.zeros(2, 2)
    x[0] = ember.tensor([1, 2])
    x[1] = ember.tensor([3.5, 4.5], dtype=ember.float64)
    assert x.tolist() == [[1.0, 2.0], [3.5, 4.5]]
    assert x.dtype is ember.float32


# ---------------------------------------------------------------- accumulate with duplicate indices
def test_index_put_accumulate_sums_duplicates():
    x = ember.zeros(3, 2)
    x.index_put_((_idx([0, 0, 2, 0]),), ember.ones(4, 2), accumulate=True)
    assert x.tolist() == [[3.0, 3.0], [0.0, 0.0], [1.0, 1.0]]
    y = ember.zeros(3, 2)
    y.index_put_((_idx([1, 1]), _idx([0, 0])), ember.tensor(1.5), accumulate=True)
    assert y.tolist() == [[0.0, 0.0], [3.0, 0.0], [0.0, 0.0]]
    assert x._version == 1


def test_index_put_without_accumulate_last_write_wins():
    x = ember.zeros(3)
    x.index_put_((_idx([1, 1]),), ember.tensor([4.0, 7.0]))
    assert x.tolist() == [0.0, 7.0, 0.0]


def test_index_add_and_scatter_add_sum_duplicates():
    x = ember.zeros(3, 2).index_add(0, _idx([0, 0, 2]), ember.ones(3, 2), alpha=2)
    assert x.tolist() == [[4.0, 4.0], [0.0, 0.0], [2.0, 2.0]]
    y = ember.zeros(2, 3).scatter_add(1, _idx([[0, 0], [2, 2]]), ember.full((2, 2), 5.0))
    assert y.tolist() == [[10.0, 0.0, 0.0], [0.0, 0.0, 10.0]]
    z = ember.zeros(5).put(_idx([0, 0, 4]), ember.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert z.tolist() == [3.0, 0.0, 0.0, 0.0, 3.0]


# ---------------------------------------------------------------- in-place variants
INPLACE = [
    ("index_put_", lambda x: x.index_put_((_idx([0, 2]),), ember.tensor(1.5)),
     lambda x: x.index_put((_idx([0, 2]),), ember.tensor(1.5))),
    ("scatter_", lambda x: x.scatter_(1, _idx(I23), 9.0), lambda x: x.scatter(1, _idx(I23), 9.0)),
    ("scatter_src_", lambda x: x.scatter_(1, _idx([[0], [1], [3]]), ember.ones(3, 1)),
     lambda x: x.scatter(1, _idx([[0], [1], [3]]), ember.ones(3, 1))),
    ("scatter_add_", lambda x: x.scatter_add_(1, _idx(I23), ember.ones(2, 3)),
     lambda x: x.scatter_add(1, _idx(I23), ember.ones(2, 3))),
    ("scatter_reduce_", lambda x: x.scatter_reduce_(1, _idx(I23), ember.ones(2, 3) * 3, "amax"),
     lambda x: x.scatter_reduce(1, _idx(I23), ember.ones(2, 3) * 3, "amax")),
    ("index_add_", lambda x: x.index_add_(0, _idx([2, 2]), ember.ones(2, 4), alpha=3),
     lambda x: x.index_add(0, _idx([2, 2]), ember.ones(2, 4), alpha=3)),
    ("index_copy_", lambda x: x.index_copy_(1, _idx([3, 0]), ember.zeros(3, 2)),
     lambda x: x.index_copy(1, _idx([3, 0]), ember.zeros(3, 2))),
    ("index_fill_", lambda x: x.index_fill_(0, _idx([1]), -7.0), lambda x: x.index_fill(0, _idx([1]), -7.0)),
    ("index_reduce_", lambda x: x.index_reduce_(0, _idx([1, 1]), ember.ones(2, 4) * 2, "prod"),
     lambda x: x.index_reduce(0, _idx([1, 1]), ember.ones(2, 4) * 2, "prod")),
    ("masked_fill_", lambda x: x.masked_fill_(_mask(M34), 0.0), lambda x: x.masked_fill(_mask(M34), 0.0)),
    ("masked_scatter_", lambda x: x.masked_scatter_(_mask(M34), ember.zeros(12)),
     lambda x: x.masked_scatter(_mask(M34), ember.zeros(12))),
    ("put_", lambda x: x.put_(_idx([11, 0]), ember.tensor([1.0, 2.0])),
     lambda x: x.put(_idx([11, 0]), ember.tensor([1.0, 2.0]))),
]


@pytest.mark.parametrize("name,inplace_fn,fn", INPLACE, ids=[c[0] for c in INPLACE])
def test_inplace_variants(name, inplace_fn, fn):
    if name.startswith(("scatter_add", "scatter_reduce")) or name == "scatter_":
        base = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    else:
        base = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    if name == "scatter_src_":
        base = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    expected = fn(ember.tensor(base))
    x = ember.tensor(base)
    assert inplace_fn(x) is x
    assert_close(x, expected._data)
    assert x._version == 1
    t = ember.tensor(base.T.copy()).t()  # a non-contiguous self
    inplace_fn(t)
    assert_close(t, expected._data)


def test_inplace_with_grad_goes_through_the_graph():
    w = ember.ones(3, 4, requires_grad=True)
    x = w * 2
    x.masked_fill_(_mask(M34), 0.0)
    assert x.grad_fn.name() == "MaskedFillBackward0"
    x.sum().backward()
    assert_close(w.grad, np.where(M34, 0.0, 2.0))
    v = ember.ones(2, 4, requires_grad=True)
    y = ember.zeros(3, 4)
    y.index_add_(0, _idx([0, 0]), v, alpha=2)
    y.sum().backward()
    assert_close(v.grad, np.full((2, 4), 2.0))


# ---------------------------------------------------------------- gradients of specific ops
def test_scatter_gradients():
    x = ember.tensor(np.arange(8.0).reshape(2, 4), requires_grad=True)
    s = ember.tensor(np.ones((2, 2)) * 3, requires_grad=True)
    idx = _idx([[0, 3], [1, 1]])
    y = x.scatter(1, idx, s)
    y.backward(ember.tensor(np.arange(8.0).reshape(2, 4) + 1))
    assert_close(x.grad, [[0.0, 2.0, 3.0, 0.0], [5.0, 0.0, 7.0, 8.0]])
    assert_close(s.grad, [[1.0, 4.0], [6.0, 6.0]])


def test_scatter_reduce_amax_splits_gradient_between_ties():
    x = ember.tensor([1.0, 5.0], requires_grad=True)
    s = ember.tensor([5.0, 2.0, 5.0], requires_grad=True)
    y = x.scatter_reduce(0, _idx([1, 0, 1]), s, "amax")
    y.backward(ember.tensor([1.0, 6.0]))
    assert_close(x.grad, [0.0, 2.0])
    assert_close(s.grad, [2.0, 1.0, 2.0])


def test_scatter_reduce_prod_gradient_with_zeros():
    x = ember.tensor([2.0, 3.0], requires_grad=True)
    s = ember.tensor([0.0, 4.0, 5.0], requires_grad=True)
    y = x.scatter_reduce(0, _idx([0, 0, 1]), s, "prod")
    y.sum().backward()
    assert_close(y, [0.0, 15.0])
    assert_close(x.grad, [0.0, 5.0])
    assert_close(s.grad, [8.0, 0.0, 3.0])


def test_scatter_with_reduce_is_not_differentiable():
    x = ember.ones(2, 3, requires_grad=True)
    y = x.scatter(1, _idx([[0], [1]]), 2.0, reduce="multiply")
    assert_close(y, [[2.0, 1.0, 1.0], [1.0, 2.0, 1.0]])
    with pytest.raises(RuntimeError, match="not implemented"):
        y.sum().backward()


def test_masked_scatter_source_gradient():
    x = ember.zeros(2, 2, requires_grad=True)
    s = ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
    y = x.masked_scatter(_mask([[True, False], [True, True]]), s)
    assert_close(y, [[1.0, 0.0], [2.0, 3.0]])
    y.backward(ember.tensor([[10.0, 20.0], [30.0, 40.0]]))
    assert_close(s.grad, [10.0, 30.0, 40.0, 0.0, 0.0])
    assert_close(x.grad, [[0.0, 20.0], [0.0, 0.0]])


# ---------------------------------------------------------------- errors
def test_getitem_errors():
    x = ember.zeros(2, 3)
    cases = [
        (lambda: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 2"),
        (lambda: x[:, -4], IndexError, "index -4 is out of bounds for dimension 1 with size 3"),
        (lambda: x[0, 0, 0], IndexError, "too many indices for tensor of dimension 2"),
        (lambda: x[::-1], ValueError, "step must be greater than zero"),
        (lambda: x[:, ::-2], ValueError, "step must be greater than zero"),
        (lambda: x[1.5], IndexError, (r"only integers, slices \(`:`\), ellipsis \(`...`\), None and long or byte "
                                     r"Variables are valid indices \(got float\)")),
        (lambda: x[ember.tensor([0.0])], IndexError, ("tensors used as indices must be long, int, byte or bool "
                                                     "tensors")),
        (lambda: x[ember.tensor([0], dtype=ember.int16)], IndexError, "tensors used as indices must be long"),
        (lambda: x[_idx([0, 2])], IndexError, "index 2 is out of bounds for dimension 0 with size 2"),
        (lambda: x[:, _idx([3])], IndexError, "index 3 is out of bounds for dimension 0 with size 3"),
        (lambda: x[_idx([0]), _idx([-4])], IndexError, "index -4 is out of bounds for dimension 1 with size 3"),
        (lambda: x[_idx([0, 1]), _idx([0, 1, 2])], IndexError,
         r"shape mismatch: indexing tensors could not be broadcast together with shapes \[2\], \[3\]"),
        (lambda: x[_mask([True, False, True])], IndexError,
         (r"The shape of the mask \[3\] at index 0 does not match the shape of the indexed tensor \[2, 3\] at index "
         r"0")),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


def test_op_errors():
    x = ember.zeros(3, 4)
    f = ember.tensor([[0.0]])
    cases = [
        (lambda: x.gather(1, f), RuntimeError, "gather\\(\\): Expected dtype int32/int64 for index"),
        (lambda: x.gather(1, _idx([0])), RuntimeError, "Index tensor must have the same number of dimensions"),
        (lambda: x.gather(1, _idx([[5]])), RuntimeError, "index 5 is out of bounds for dimension 1 with size 4"),
        (lambda: x.gather(1, _idx([[-1]])), RuntimeError, "index -1 is out of bounds for dimension 1 with size 4"),
        (lambda: x.gather(2, _idx([[0]])), IndexError, (r"Dimension out of range \(expected to be in range of "
                                                       r"\[-2, 1\], but got 2\)")),
        (lambda: x.scatter(1, f, 1.0), RuntimeError, "scatter\\(\\): Expected dtype int32/int64 for index"),
        (lambda: x.scatter(1, _idx([[0, 1]]), ember.ones(1, 2, dtype=ember.float64)), RuntimeError,
         "scatter\\(\\): Expected self.dtype to be equal to src.dtype"),
        (lambda: x.scatter_add(1, _idx([[0, 1]]), x[:, :1]), RuntimeError,
         (r"Expected index \[1, 2\] to be no larger than self \[3, 4\] apart from dimension 1 and to be no larger "
         r"size than src \[3, 1\]")),
        (lambda: x.scatter_reduce(1, _idx([[0]]), x, "foo"), RuntimeError,
         "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
        (lambda: x.scatter(1, _idx([[0]]), 1.0, reduce="foo"), RuntimeError,
         "reduce argument must be either add or multiply."),
        (lambda: x.index_select(1, f[0]), RuntimeError, "index_select\\(\\): Expected dtype int32 or int64"),
        (lambda: x.index_select(0, _idx([[0]])), IndexError, "index_select\\(\\): Index is supposed to be a vector"),
        (lambda: x.index_select(1, _idx([4])), RuntimeError, ("INDICES element is out of DATA bounds, id=4 "
                                                             "axis_dim=4")),
        (lambda: x.index_add(1, _idx([0, 1]), x[:, :1]), RuntimeError,
         r"index_add_\(\): Number of indices \(2\) should be equal to source.size\(dim\): \(1\), for dim: 1"),
        (lambda: x.index_add(1, _idx([0]), ember.ones(3, 1, dtype=ember.float64)), RuntimeError,
         r"index_add_\(\): self \(Float\) and source \(Double\) must have the same scalar type"),
        (lambda: x.index_copy(1, _idx([0]).int(), x[:, :1]), RuntimeError,
         r"index_copy_\(\): Expected a long tensor for index, but got Int"),
        (lambda: x.index_fill(1, _idx([7]), 1.0), IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
        (lambda: x.index_fill(1, _idx([0]), ember.ones(1)), RuntimeError,
         r"index_fill_ only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)."),
        (lambda: x.masked_fill(_idx([1, 0, 1, 0]), 1.0), RuntimeError,
         "masked_fill_ only supports boolean masks, but got mask with dtype long int"),
        (lambda: x.masked_fill(_mask([True] * 5), 1.0), RuntimeError,
         r"The size of tensor a \(4\) must match the size of tensor b \(5\) at non-singleton dimension 1"),
        (lambda: ember.zeros(3).masked_fill_(_mask([[True], [False]]), 1.0), RuntimeError,
         r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"),
        (lambda: x.masked_select(ember.ones(3, 4)), RuntimeError, "masked_select: expected BoolTensor for mask"),
        (lambda: x.masked_scatter(_mask([True] * 4), ember.ones(3)), RuntimeError,
         "Number of elements of source < number of ones in mask"),
        (lambda: x.take(_idx([12])), IndexError, ("out of range: tried to access index 12 on a tensor of 12 "
                                                 "elements.")),
        (lambda: x.take(_idx([0]).int()), RuntimeError, r"take\(\): Expected a long tensor for index, but got Int"),
        (lambda: x.take_along_dim(_idx([[0]]).int(), 1), RuntimeError,
         r"ember.take_along_dim\(\): dtype of indices should be Long but got Int"),
        (lambda: x.index_put((_idx([0]),), ember.ones(1, dtype=ember.float64)), RuntimeError,
         "Index put requires the source and destination dtypes match"),
    ]
    for fn, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            fn()


# ---------------------------------------------------------------- dtypes and odd shapes
def test_integer_and_bool_tensors():
    x = ember.arange(6).reshape(2, 3)
    assert x[_idx([1])].dtype is ember.int64
    assert x.gather(1, _idx([[2], [0]])).tolist() == [[2], [3]]
    b = ember.tensor([True, False, True])
    assert b[[0, 1]].tolist() == [True, False]
    assert b.masked_fill(ember.tensor([False, True, False]), True).tolist() == [True, True, True]
    assert x.index_select(1, ember.tensor([2], dtype=ember.int32)).tolist() == [[2], [5]]


def test_zero_dim_inputs():
    s = ember.tensor(5.0)
    assert s.index_select(0, _idx([0])).shape == ()
    assert s.gather(0, ember.tensor(0)).item() == 5.0
    assert s.take(_idx([0, 0])).tolist() == [5.0, 5.0]
    assert s.masked_select(ember.tensor(True)).tolist() == [5.0]
    assert s.scatter(0, ember.tensor(0), 2.0).item() == 2.0


def test_empty_index():
    x = ember.ones(3, 2, requires_grad=True)
    y = x.index_select(0, ember.tensor([], dtype=ember.int64))
    assert y.shape == (0, 2)
    y.sum().backward()
    assert_close(x.grad, np.zeros((3, 2)))


def test_out_arguments():
    x = ember.arange(6.0).reshape(2, 3)
    out = ember.empty(0)
    r = ember.gather(x, 1, _idx([[0], [2]]), out=out)
    assert r is out and out.tolist() == [[0.0], [5.0]]
    out = ember.empty(0)
    ember.index_select(x, 1, _idx([1]), out=out)
    assert out.tolist() == [[1.0], [4.0]]
    out = ember.empty(0)
    ember.masked_select(x, x._data > 2 if False else _mask([[False] * 3, [True] * 3]), out=out)
    assert out.tolist() == [3.0, 4.0, 5.0]


def test_unravel_index():
    r = ember.unravel_index(ember.tensor([0, 7, 23]), (2, 3, 4))
    assert isinstance(r, tuple) and [t.tolist() for t in r] == [[0, 0, 1], [0, 1, 2], [0, 3, 3]]
    assert r[0].dtype is ember.int64
    # out-of-range and negative indices wrap modulo the number of elements, as in torch
    assert [t.tolist() for t in ember.unravel_index(ember.tensor([6, -1]), (2, 3))] == [[0, 1], [0, 2]]
    assert [t.item() for t in ember.unravel_index(ember.tensor(3, dtype=ember.int32), 4)] == [3]
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype, but got ember.float32"):
        ember.unravel_index(ember.tensor([1.0]), (2, 3))


def test_fill_diagonal_():
    x = ember.zeros(3, 4)
    assert x.fill_diagonal_(5) is x
    assert x.tolist() == [[5, 0, 0, 0], [0, 5, 0, 0], [0, 0, 5, 0]]
    y = ember.zeros(7, 3).fill_diagonal_(1, wrap=True)
    assert y.nonzero().tolist() == [[0, 0], [1, 1], [2, 2], [4, 0], [5, 1], [6, 2]]
    assert ember.zeros(7, 3).fill_diagonal_(1).sum().item() == 3
    assert ember.zeros(2, 2, 2).fill_diagonal_(1.5).sum().item() == 3.0
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        ember.zeros(2, 3, 2).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        ember.zeros(2).fill_diagonal_(1)
    w = ember.ones(2, 2, requires_grad=True)
    y = (w * 1).fill_diagonal_(0)
    y.sum().backward()
    assert w.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_setitem_float_into_integer_tensor_checks_range():
    x = ember.zeros(3, dtype=ember.int64)
    x[0], x[1] = 2.7, -3.9  # truncated, as a C cast
    assert x.tolist() == [2, -3, 0]
    for bad in (float("nan"), float("inf"), 1e30):
        with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
            x[2] = bad
    u = ember.zeros(2, dtype=ember.uint8)
    u[0] = 254.9
    assert u.tolist() == [254, 0]
    for bad in (255.5, -0.5):
        with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
            u[1] = bad


def test_unsafe_masked_index_and_put_accumulate():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 5))
    mask = rng.random((6, 6)) > 0.4
    i0, i1 = rng.integers(-7, 9, (6, 1)), rng.integers(0, 9, (1, 6))  # out of range where the mask may be False
    c0, c1 = np.clip(i0, -5, 4), np.clip(i1, -5, 4)
    idx = [ember.tensor(i0), ember.tensor(i1)]
    got = ember._unsafe_masked_index(ember.tensor(x), ember.tensor(mask), idx, -4.0)
    np.testing.assert_array_equal(got.numpy(), np.where(mask, x[c0, c1], -4.0))
    v = rng.standard_normal((6, 6))
    want = x.copy()
    np.add.at(want, (np.broadcast_to(c0, (6, 6)), np.broadcast_to(c1, (6, 6))), np.where(mask, v, 0))
    got = ember._unsafe_masked_index_put_accumulate(ember.tensor(x), ember.tensor(mask), idx, ember.tensor(v))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    xt, vt = ember.tensor(x, requires_grad=True), ember.tensor(v, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: ember._unsafe_masked_index(a, ember.tensor(mask), idx, 0.5), (xt,))
    assert ember.autograd.gradcheck(
        lambda a, b: ember._unsafe_masked_index_put_accumulate(a, ember.tensor(mask), idx, b), (xt, vt))
