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


def test_grad_fn_type_is_named_after_the_node():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert type(y.grad_fn).__name__ == "MulBackward0"
    assert isinstance(y.grad_fn, ember.autograd.graph.Node)
    assert type(x.max(0)[0].grad_fn).__name__ == "MaxBackward0"
    z = x * 1
    z[0] = 3.0
    assert type(z.grad_fn).__name__ == "CopySlices" and z.grad_fn.name() == "torch::autograd::CopySlices"
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")
    assert repr(y.grad_fn.next_functions[0][0]).startswith("<AccumulateGrad object at 0x")
    (y.sum() + z.sum()).backward()
    assert x.grad.tolist() == [2.0, 3.0]


def test_autograd_grad_names_the_unused_input():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="^The differentiated Tensor at index 1 appears to not have been used in "
                                           "the graph. Set allow_unused=True if this is the desired behavior.$"):
        ember.autograd.grad((a * 2).sum(), [a, b])


def test_version_error_names_the_producing_op_like_torch():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    c = a * 2
    d = c ** 2
    c.add_(1)
    with pytest.raises(RuntimeError) as info:
        d.sum().backward()
    msg = str(info.value)
    assert msg.startswith("one of the variables needed for gradient computation has been modified by an inplace "
                          "operation: [ember.FloatTensor [2]], which is output 0 of Add, is at version 1; expected "
                          "version 0 instead. Hint: enable anomaly detection to find the operation that failed to "
                          "compute its gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False).")
    assert "saved by PowBackward0 and last modified by add_ at " in msg
    b = a.sigmoid()  # saves its output: named after the op that made it, not the in-place op
    b.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[ember.FloatTensor \[2\]\], which is output 0 of Sigmoid, is at "
                                           r"version 1; expected version 0 instead"):
        b.sum().backward()


def test_legacy_variable_returns_a_detached_tensor():
    from ember.autograd import Variable
    t = ember.ones(2)
    v = Variable(t, requires_grad=True)
    assert type(v) is ember.Tensor and v is not t
    assert v.requires_grad and v.is_leaf and not t.requires_grad
    assert isinstance(t, Variable) and not isinstance(3, Variable)
    v2 = Variable(v * 2)
    assert not v2.requires_grad and v2.grad_fn is None and v2.tolist() == [2.0, 2.0]
    assert Variable().shape == (0,)
    with pytest.raises(TypeError, match="^Variable data has to be a tensor, but got int$"):
        Variable(3)
    with pytest.warns(UserWarning, match="volatile was removed"):
        Variable(t, volatile=True)


def test_backward_with_create_graph_warns_once_about_the_grad_cycle(monkeypatch):
    import ember.autograd as A
    monkeypatch.setattr(A, "_WARNED_CYCLE", [False])
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="^Using backward\\(\\) with create_graph=True will create a reference cycle") \
            as rec:
        (x ** 2).sum().backward(create_graph=True)
    assert rec[0].filename == __file__
    assert x.grad.requires_grad and x.grad.tolist() == [2.0, 4.0]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.grad = None
        (x ** 2).sum().backward(create_graph=True)  # once per process, as torch
        ember.autograd.grad((x ** 2).sum(), x, create_graph=True)  # autograd.grad never warns


def test_grad_with_batched_grad_outputs_gives_rows_of_the_jacobian():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x ** 2
    (jac,) = ember.autograd.grad(y, x, ember.eye(3), is_grads_batched=True)
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        ember.autograd.grad(y.sum(), x)  # the graph was freed after the last row


def test_grad_fn_exposes_saved_self_other_and_result():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is x
    e = x.exp()
    r = e.grad_fn._saved_result
    assert r is not e and r.tolist() == e.tolist() and r.grad_fn is e.grad_fn
    with pytest.raises(AttributeError, match="'ExpBackward0' object has no attribute '_saved_self'"):
        e.grad_fn._saved_self
    e.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        e.grad_fn._saved_result
