import gc
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck


def test_chain_rule_matches_hand_computed():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).exp().sum()
    y.backward()
    xs = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    np.testing.assert_allclose(x.grad.numpy(), 2 * xs * np.exp(xs * xs), rtol=1e-5)


def test_broadcast_gradients_are_summed_to_input_shape():
    a = ember.ones(2, 3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    (a * b * 2).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(3, 4.0))


def test_gradients_accumulate_across_backward_calls():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0])


def test_shared_gradient_is_not_aliased_between_leaves():
    a = ember.ones(3, requires_grad=True)
    b = ember.ones(3, requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(1)
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0, 1.0])


def test_grad_fn_names_and_next_functions():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    z = y + x
    assert z.grad_fn.name() == "AddBackward0"
    assert y.grad_fn.name() == "MulBackward0"
    fns = [f for f, _ in z.grad_fn.next_functions]
    assert fns[0] is y.grad_fn
    assert fns[1].name() == "torch::autograd::AccumulateGrad"
    assert fns[1].variable is x


def test_no_graph_without_requires_grad_or_in_no_grad():
    x = ember.ones(2)
    assert (x * 2).grad_fn is None
    w = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        y = w * 2
    assert y.grad_fn is None and not y.requires_grad


def test_non_scalar_backward_needs_gradient():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_backward_twice_through_freed_graph_raises():
    x = ember.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = ember.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])


def test_autograd_grad_does_not_touch_dot_grad():
    x = ember.tensor([2.0], requires_grad=True)
    (g,) = ember.autograd.grad((x * x * x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [12.0])
    assert x.grad is None


def test_second_derivative_with_create_graph():
    x = ember.tensor([2.0], requires_grad=True)
    (g,) = ember.autograd.grad((x * x * x).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [12.0])


def test_grad_of_intermediate_and_allow_unused():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    u = ember.tensor([1.0], requires_grad=True)
    y = x * 2
    z = (y * y).sum()
    gy, gu = ember.autograd.grad(z, [y, u], allow_unused=True)
    np.testing.assert_allclose(gy.numpy(), [4.0, 8.0])
    assert gu is None
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        ember.autograd.grad((x * 2).sum(), [u])


def test_backward_inputs_only_accumulates_there():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    (a * b).sum().backward(inputs=[a])
    assert b.grad is None
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 1.0])


def test_deep_chain_does_not_recurse():
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0])


def test_graph_and_saved_tensors_are_freed_after_backward():
    x = ember.ones(1000, requires_grad=True)
    y = x * x
    ref = weakref.ref(y.grad_fn)
    loss = y.sum()
    del y
    loss.backward()
    del loss
    gc.collect()
    assert ref() is None


def test_gradcheck_accepts_correct_and_rejects_wrong_gradient():
    x = ember.tensor(np.random.default_rng(0).standard_normal(4), requires_grad=True)
    assert gradcheck(lambda t: (t * t).exp(), (x,))
    from ember._ops._dispatch import Op, dispatch1
    wrong = Op("wrong", np.square, lambda ctx, g: g)  # d(x^2)/dx is not 1
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(lambda t: dispatch1(wrong, t), (x,))


def test_create_graph_result_is_differentiable_in_grad_outputs():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    go = ember.tensor([3.0, 4.0], requires_grad=True)
    (g,) = ember.autograd.grad(x * x, x, grad_outputs=go, create_graph=True)   # 2 x go
    (ggo,) = ember.autograd.grad(g.sum(), go)
    np.testing.assert_allclose(ggo.numpy(), [2.0, 4.0])


def test_out_argument_refuses_inputs_that_require_grad():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic differentiation"):
        ember.add(x, 1, out=ember.empty(2))


def test_gradient_kept_by_a_hook_is_not_changed_by_a_later_backward():
    x = ember.ones(3, requires_grad=True)
    saved = []
    x.register_hook(saved.append)
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    np.testing.assert_array_equal(saved[0].numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])


def test_fresh_gradient_becomes_dot_grad_without_a_copy():
    w = ember.ones(3, requires_grad=True)
    y = w * 3
    pointers = []  # only the address: holding the array itself would (rightly) force a copy
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: pointers.append(grad_inputs[0].data_ptr()))
    y.sum().backward()
    assert pointers == [w.grad.data_ptr()]


def test_gradgradcheck_through_ops_whose_gradient_is_the_incoming_one():
    from ember.autograd import gradgradcheck
    rng = np.random.default_rng(0)
    a = ember.tensor(rng.standard_normal(3), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradgradcheck(lambda x, y: x + y, (a, b))      # first derivatives are the same tensor twice
    assert gradgradcheck(lambda x, y: x - y * 2, (a, b))
