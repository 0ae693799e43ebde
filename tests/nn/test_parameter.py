"""nn.Parameter and nn.Buffer."""
import copy
import pickle

import numpy as np
import pytest

import ember
from ember import nn


def test_parameter_is_a_leaf_tensor_sharing_memory():
    x = ember.arange(3.0)
    p = nn.Parameter(x)
    assert isinstance(p, ember.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == x.data_ptr()
    x.add_(1)  # writes through, and counts as a change of the parameter too
    assert p.tolist() == [1.0, 2.0, 3.0]
    assert p._version == x._version == 1


def test_parameter_from_non_leaf_is_detached_leaf():
    a = ember.ones(2, requires_grad=True)
    p = nn.Parameter(a * 2)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None
    (p * 3).sum().backward()
    assert a.grad is None and p.grad.tolist() == [3.0, 3.0]


def test_parameter_defaults_and_flags():
    p = nn.Parameter()
    assert p.shape == (0,) and p.requires_grad and p.dtype == ember.float32
    q = nn.Parameter(ember.ones(2), requires_grad=False)
    assert not q.requires_grad and isinstance(q, nn.Parameter)
    with ember.no_grad():  # no_grad does not change a new parameter's requires_grad
        assert nn.Parameter(ember.ones(1)).requires_grad


def test_parameter_errors():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        nn.Parameter(ember.tensor([1, 2]))
    assert nn.Parameter(ember.tensor([1, 2]), requires_grad=False).dtype == ember.int64
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        nn.Parameter([1.0, 2.0])


def test_parameter_repr():
    assert repr(nn.Parameter(ember.arange(3.0))) == "Parameter containing:\ntensor([0., 1., 2.], requires_grad=True)"
    assert repr(nn.Parameter(ember.arange(2.0), requires_grad=False)) == "Parameter containing:\ntensor([0., 1.])"


def test_ops_on_parameters_return_plain_tensors():
    p = nn.Parameter(ember.ones(2, 2))
    for t in (p + 1, p[0], p.detach(), p.data, p.clone(), p.view(4), p.t()):
        assert type(t) is ember.Tensor


def test_parameter_deepcopy():
    p = nn.Parameter(ember.arange(3.0))
    p.grad = ember.ones(3)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.is_leaf
    assert q.tolist() == [0.0, 1.0, 2.0] and q.data_ptr() != p.data_ptr()
    assert q.grad is None  # as torch: Parameter.__deepcopy__ copies data and requires_grad only
    r = copy.deepcopy(nn.Parameter(ember.ones(1), requires_grad=False))
    assert not r.requires_grad
    memo = {}
    assert copy.deepcopy([p, p], memo)[0] is memo[id(p)]


def test_parameter_pickle():
    p = nn.Parameter(ember.arange(4.0).reshape(2, 2))
    p.tag = "w"
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is nn.Parameter and q.requires_grad and q.tag == "w"
    np.testing.assert_array_equal(q.numpy(force=True), p.numpy(force=True))
    r = pickle.loads(pickle.dumps(nn.Parameter(ember.ones(1), requires_grad=False)))
    assert type(r) is nn.Parameter and not r.requires_grad


def test_buffer():
    b = nn.Buffer(ember.ones(2), persistent=False)
    assert isinstance(b, nn.Buffer) and isinstance(b, ember.Tensor) and b.persistent is False
    assert not isinstance(ember.ones(2), nn.Buffer)
    assert isinstance(nn.Buffer(), nn.Buffer) and nn.Buffer().persistent is True
    src = ember.ones(2, requires_grad=True)
    c = nn.Buffer(src * 1)
    assert c.requires_grad and c.is_leaf
    m = nn.Module()
    m.running = nn.Buffer(ember.zeros(3))
    m.scratch = b
    assert dict(m.named_buffers()).keys() == {"running", "scratch"}
    assert list(m.state_dict()) == ["running"]
