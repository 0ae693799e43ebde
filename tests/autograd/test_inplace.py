"""In-place ops and autograd: history rewriting, leaf errors, views, version counters."""
import numpy as np
import pytest

import ember


def test_inplace_on_non_leaf_rewrites_history():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_inplace_op_that_needs_its_own_input_value():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    w = ember.tensor([3.0, 4.0], requires_grad=True)
    y = x * 1
    y.mul_(w)           # d/dw needs y's value before the multiplication
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


def test_inplace_on_leaf_requiring_grad_raises():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1)
    with ember.no_grad():
        x.add_(1)
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 2.0])


def test_version_counter_is_shared_by_views_and_bumped_by_inplace_ops():
    base = ember.zeros(4)
    v = base.view(2, 2)
    assert base._version == 0
    v.add_(1)
    assert base._version == 1 and v._version == 1
    base.mul_(2)
    assert v._version == 2
    np.testing.assert_array_equal(v.numpy(), [[2.0, 2.0], [2.0, 2.0]])


def test_modified_saved_tensor_raises_with_op_and_location():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    e = x.exp()
    s = e * e           # saves e
    e.add_(1)
    with pytest.raises(RuntimeError) as info:
        s.sum().backward()
    msg = str(info.value)
    assert "one of the variables needed for gradient computation has been modified by an inplace operation" in msg
    assert "is at version 1; expected version 0 instead" in msg
    assert "add_" in msg and "test_inplace.py:" in msg


def test_inplace_on_view_of_non_leaf_updates_base_gradient():
    w = ember.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    base = w * 1
    v = base.transpose(0, 1)[1]
    v.mul_(2)
    assert base.grad_fn.name() == "torch::autograd::CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    base.sum().backward()
    expected = np.ones((3, 4))
    expected[:, 1] = 2
    np.testing.assert_array_equal(w.grad.numpy(), expected)


def test_inplace_on_view_then_backward_through_the_view():
    w = ember.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    base = w * 1
    v = base.view(2, 2)
    v.mul_(ember.tensor([[10.0, 1.0], [1.0, 1.0]]))
    (v * v).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [200.0, 4.0, 6.0, 8.0])


def test_writing_a_grad_tensor_into_a_plain_buffer_view():
    z = ember.zeros(3)
    x = ember.ones(2, requires_grad=True)
    z.view(3)[0:2].copy_(x * 3) if hasattr(ember.Tensor, "copy_") and hasattr(ember.Tensor, "__getitem__") else \
        pytest.skip("needs copy_ and indexing")
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_int_result_cannot_be_written_into_int_tensor_from_float():
    t = ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        t.add_(1.5)
    np.testing.assert_array_equal(t.numpy(), [1, 2])


def test_other_views_see_an_inplace_change_of_their_base():
    w = ember.tensor(np.arange(6.0), requires_grad=True)
    y = w * 1
    a = y.view(2, 3)      # made before the in-place op below
    y.view(2, 3)[0].mul_(10)
    (a * 1).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [10, 10, 10, 1, 1, 1])


def test_writing_into_an_expanded_tensor_is_refused_like_torch():
    e = ember.ones(1).expand(3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single"):
        e.add_(ember.ones(3))


def test_copy_broadcasts_casts_and_routes_gradient_to_source():
    a = ember.zeros(2, 3)
    b = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a.copy_(b)
    assert a.grad_fn.name() == "torch::autograd::CopyBackwards" and "grad_fn=<CopyBackwards>" in repr(a)
    (a * ember.tensor([[1.0], [10.0]])).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [11.0, 11.0, 11.0])
    c = ember.zeros(2, dtype=ember.int64)
    c.copy_(ember.tensor([1.7, -2.2]))
    assert c.tolist() == [1, -2] and c._version == 1
    with pytest.raises(RuntimeError, match="must match the size"):
        ember.zeros(3).copy_(ember.ones(2))
