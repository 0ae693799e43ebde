"""Tensor and Node hooks, retain_grad, post-accumulate-grad hooks, and the order they fire in."""
import numpy as np
import pytest

import ember


def _x():
    return ember.tensor([1.0, 2.0], requires_grad=True)


def test_hook_on_non_leaf_sees_gradient_and_can_replace_it():
    x = _x()
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.register_hook(lambda g: g * 10)
    (y * 3).sum().backward()
    assert seen == [[3.0, 3.0]]
    np.testing.assert_allclose(x.grad.numpy(), [60.0, 60.0])


def test_hook_on_leaf_changes_accumulated_gradient():
    x = _x()
    x.register_hook(lambda g: g + 1)
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])


def test_hook_returning_none_keeps_gradient():
    x = _x()
    x.register_hook(lambda g: None)
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_handle_remove_and_context_manager():
    x = _x()
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    handle.remove()  # removing twice is harmless
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    x.grad = None
    with x.register_hook(lambda g: g * 0):
        (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0])
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_hook_on_tensor_used_twice_fires_once_with_summed_gradient():
    x = _x()
    a = x * 1
    seen = []
    a.register_hook(lambda g: seen.append(g.tolist()))
    (a * a).sum().backward()
    assert seen == [[2.0, 4.0]]


def test_leaf_hook_fires_for_autograd_grad_without_touching_grad():
    x = _x()
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    (g,) = ember.autograd.grad((x * 3).sum(), x)
    assert seen == [[3.0, 3.0]]
    np.testing.assert_allclose(g.numpy(), [6.0, 6.0])
    assert x.grad is None


def test_hooks_need_requires_grad():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        ember.ones(2).register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        ember.ones(2).retain_grad()


def test_retain_grad_accumulates_on_non_leaf():
    x = _x()
    a = x * 1
    assert not a.retains_grad
    a.retain_grad()
    assert a.retains_grad and not x.retains_grad
    (a * 2).sum().backward(retain_graph=True)
    np.testing.assert_allclose(a.grad.numpy(), [2.0, 2.0])
    (a * 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [5.0, 5.0])


def test_retain_grad_on_leaf_is_a_no_op():
    x = _x()
    x.retain_grad()
    (x * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_retain_grad_registered_after_a_hook_sees_its_result():
    x = _x()
    y = x * 2
    y.register_hook(lambda g: g * 10)
    y.retain_grad()
    y.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [10.0, 10.0])


def test_retain_grad_registered_before_a_hook_still_sees_its_result():
    x = _x()
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [10.0, 10.0])  # torch: 10, the hook's result


def test_post_accumulate_grad_hook():
    x = _x()
    seen = []
    h = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0], [6.0, 6.0]]
    ember.autograd.grad((x * 3).sum(), x)  # no accumulation, no hook
    assert len(seen) == 2
    h.remove()
    (x * 3).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        ember.ones(2).register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_hook_can_step_like_an_optimizer():
    w = _x()

    def sgd(t):
        with ember.no_grad():
            t.sub_(t.grad * 0.5)
        t.grad = None

    w.register_post_accumulate_grad_hook(sgd)
    (w * w).sum().backward()  # grad 2w = [2, 4]
    np.testing.assert_allclose(w.detach().numpy(), [0.0, 0.0])
    assert w.grad is None


def test_node_prehook_and_hook():
    x = _x()
    y = x * 2
    seen = []
    y.grad_fn.register_prehook(lambda go: seen.append(("pre", [g.tolist() for g in go])))
    y.grad_fn.register_hook(lambda gi, go: seen.append(("post", gi[0].tolist(), go[0].tolist())))
    y.sum().backward()
    assert seen == [("pre", [[1.0, 1.0]]), ("post", [2.0, 2.0], [1.0, 1.0])]


def test_node_hooks_can_replace_gradients():
    x = _x()
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0] * 100,))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [200.0, 200.0])
    x.grad = None
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 7,) + tuple(gi[1:]))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [14.0, 14.0])


def test_node_hook_handle_remove():
    x = _x()
    y = x * 2
    h = y.grad_fn.register_prehook(lambda go: (go[0] * 100,))
    h.remove()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_accumulate_grad_node_prehook():
    x = _x()
    acc = (x * 1).grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    seen = []
    acc.register_prehook(lambda go: seen.append(go[0].tolist()))
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]]


def test_firing_order_matches_torch():
    x = _x()
    y = x * 2
    log = []
    y.register_hook(lambda g: log.append("tensor1"))
    y.register_hook(lambda g: log.append("tensor2") or g * 10)
    y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].tolist())))
    x.register_hook(lambda g: log.append(("leaf", g.tolist())))
    x.register_hook(lambda g: log.append("leaf2") or g + 1)
    x.register_post_accumulate_grad_hook(lambda t: log.append(("acc", t.grad.tolist())))
    y.sum().backward()
    assert log == ["tensor1", "tensor2", ("pre", [10.0, 10.0]), ("post", [20.0, 20.0]), ("leaf", [20.0, 20.0]),
                   "leaf2", ("acc", [21.0, 21.0])]
    np.testing.assert_allclose(x.grad.numpy(), [21.0, 21.0])


def test_hook_that_removes_itself_while_running():
    x = _x()
    handles = []

    def once(g):
        handles[0].remove()
        return g * 2

    handles.append(x.register_hook(once))
    (x * 1).sum().backward()
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_metadata_dict_on_node():
    y = _x() * 2
    y.grad_fn.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}


def test_hook_changing_size_or_dtype_or_returning_non_tensor_raises_torch_errors():
    def halve(g):
        return g[:1]

    x = _x()
    y = x * 2
    y.register_hook(halve)
    with pytest.raises(RuntimeError, match="^hook 'halve' has changed the size of value$"):
        y.sum().backward()
    x = _x()
    x.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has changed the type of value \(was ember.FloatTensor "
                                           r"got ember.DoubleTensor\)$"):
        (x * 2).sum().backward()
    x = _x()
    x.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match="^expected Variable, but hook returned 'int'$"):
        (x * 2).sum().backward()


def test_saved_tensors_hooks_pack_on_save_and_unpack_in_backward():
    from ember.autograd import Function
    from ember.autograd.graph import save_on_cpu, saved_tensors_hooks

    class Twice(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * a  # deliberately a * g, to see the unpacked value

    log = []
    x = _x()
    with saved_tensors_hooks(lambda t: log.append("pack") or t.detach().numpy().copy(),
                             lambda arr: log.append("unpack") or ember.from_numpy(arr)):
        y = x * x              # saves x twice
        w = Twice.apply(x)     # saves x once
    assert log == ["pack"] * 3
    (y.sum() + w.sum()).backward()
    assert log.count("unpack") == 3
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 6.0])  # 2x + x
    x.grad = None
    with save_on_cpu():
        z = (x.exp() * x).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1.0, 2.0]) * [2.0, 3.0], rtol=1e-6)  # e^x (1 + x)
    with saved_tensors_hooks(lambda t: t, lambda t: 3):
        q = x.exp().sum()
    with pytest.raises(TypeError, match="unpack_hook expected to be a Tensor but got result of type int"):
        q.backward()


def test_saved_tensors_hooks_keep_double_backward_working():
    from ember.autograd.graph import saved_tensors_hooks
    x = ember.tensor([0.5, 1.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        (g,) = ember.autograd.grad((x ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 6.0])  # 6x


def test_hook_handles_are_removable_handles():
    x = _x()
    assert type(x.register_hook(lambda g: g)).__name__ == "RemovableHandle"
    assert type((x * 2).grad_fn.register_hook(lambda gi, go: None)).__name__ == "RemovableHandle"


def test_disable_saved_tensors_hooks_and_increment_version():
    from ember.autograd.graph import disable_saved_tensors_hooks, increment_version, saved_tensors_hooks
    with disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError, match="^no hooks here$"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again outside
        pass
    x = ember.ones(2)
    increment_version(x)
    increment_version([x, x])
    assert x._version == 3
    with ember.autograd.set_multithreading_enabled(False):
        (x.requires_grad_() * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
