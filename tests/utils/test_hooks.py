import collections

import ember


def test_utils_hooks_names():
    hooks = ember.utils.hooks
    d = collections.OrderedDict()
    handle = hooks.RemovableHandle(d)
    d[handle.id] = "hook"
    handle.remove()
    assert not d
    assert hooks.unserializable_hook(lambda g: g).__torch_unserializable__ is True
