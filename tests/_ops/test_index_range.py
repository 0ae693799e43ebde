"""Indexing with a Python range, which torch treats like a list of its ints."""
import warnings

import pytest

import ember


def _x():
    return ember.arange(12.0).reshape(3, 4)


def test_range_with_tensor_index_picks_one_element_per_row():
    # the "What is torch.nn really?" nll: input[range(n), target]
    x = _x()
    t = ember.tensor([0, 2, 1])
    assert x[range(3), t].tolist() == [0.0, 6.0, 9.0]
    assert x[range(2), range(2)].tolist() == [0.0, 5.0]


def test_range_alone_and_with_basic_parts():
    x = _x()
    assert x[range(2)].tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert x[range(-1, -3, -1)].tolist() == [[8, 9, 10, 11], [4, 5, 6, 7]]
    assert x[:, range(1, 3)].tolist() == [[1, 2], [5, 6], [9, 10]]
    assert x[..., range(2)].shape == (3, 2)
    assert x[None, range(2), 1].tolist() == [[1.0, 5.0]]
    assert x[range(2), None].shape == (2, 1, 4)
    assert x[range(0, 3, 2)].shape == (2, 4)
    empty = x[range(0)]
    assert empty.shape == (0, 4) and empty.dtype == ember.float32


def test_range_out_of_bounds_is_index_error():
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        _x()[range(5)]


def test_range_inside_a_list_is_a_tuple_key_with_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = _x()[[range(2)]]
    assert y.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(w) == 1 and "Using a non-tuple sequence for multidimensional indexing is deprecated" in str(w[0].message)


def test_setitem_with_range():
    y = ember.zeros(5)
    y[range(0, 4, 2)] = 7
    assert y.tolist() == [7.0, 0.0, 7.0, 0.0, 0.0]
    z = ember.zeros(3, 4)
    z[range(3), ember.tensor([0, 2, 1])] = ember.tensor([1.0, 2.0, 3.0])
    assert z.tolist() == [[1, 0, 0, 0], [0, 0, 2, 0], [0, 3, 0, 0]]


def test_range_index_gradient():
    x = _x().requires_grad_()
    y = x[range(3), ember.tensor([0, 2, 1])]
    assert y.grad_fn.name() == "IndexBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [[1, 0, 0, 0], [0, 0, 1, 0], [0, 1, 0, 0]]


def test_index_select_still_needs_a_tensor():
    with pytest.raises(TypeError, match="must be Tensor, not range"):
        ember.index_select(_x(), 0, range(2))
