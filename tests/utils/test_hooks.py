import collections

import numpy as np

import ember


def test_utils_hooks_names():
    hooks = ember.utils.hooks
    d = collections.OrderedDict()
    handle = hooks.RemovableHandle(d)
    d[handle.id] = "hook"
    handle.remove()
    assert not d
    assert hooks.unserializable_hook(lambda g: g).__torch_unserializable__ is True


def test_tensor_node_and_module_hooks_return_one_handle_class():
    import pickle

    RemovableHandle = ember.utils.hooks.RemovableHandle
    assert RemovableHandle is ember.autograd.graph.RemovableHandle is ember.nn.modules.module.RemovableHandle
    assert RemovableHandle.__module__ == "ember.utils.hooks"
    x = ember.ones(2, requires_grad=True)
    y = x * 3
    handles = [x.register_hook(lambda g: g * 2), y.register_hook(lambda g: g * 5),
               y.grad_fn.register_hook(lambda gi, go: None), y.grad_fn.register_prehook(lambda go: None),
               x.register_post_accumulate_grad_hook(lambda t: None),
               ember.nn.Linear(2, 2).register_forward_hook(lambda *a: None)]
    assert all(isinstance(h, RemovableHandle) for h in handles)
    ids = [h.id for h in handles]
    assert ids == sorted(set(ids))  # one id sequence for all of them
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [30, 30])
    for h in handles[:2]:
        h.remove()
        h.remove()  # a second remove is harmless
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3])
    state = pickle.loads(pickle.dumps(handles[0]))
    assert isinstance(state, RemovableHandle) and state.id == handles[0].id


def test_handle_as_context_manager_removes_the_tensor_hook():
    x = ember.ones(2, requires_grad=True)
    with x.register_hook(lambda g: g * 10):
        (x * 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [10, 10])
    x.grad = None
    (x * 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1])
