"""nn.utils.stateless.functional_call: a call with parameters and buffers swapped in, then restored."""
import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils.stateless import _func_functional_call, _functional_call, functional_call


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight
        self.register_buffer("scale", ember.ones(1))

    def forward(self, x):
        return self.b(self.a(x)) * self.scale


def test_swaps_and_restores():
    m = nn.Linear(3, 2)
    w, b = m.weight, m.bias
    new_w = ember.ones(2, 3, requires_grad=True)
    x = ember.randn(4, 3)
    y = _functional_call(m, {"weight": new_w}, x)
    np.testing.assert_allclose(y.detach().numpy(), x.numpy().sum(1, keepdims=True) + b.detach().numpy(), rtol=1e-6)
    assert m.weight is w and m._parameters["weight"] is w
    y.sum().backward()
    np.testing.assert_allclose(new_w.grad.numpy(), np.tile(x.numpy().sum(0), (2, 1)), rtol=1e-6)
    assert w.grad is None


def test_kwargs_and_args_tuple():
    m = nn.Bilinear(2, 3, 1)
    x1, x2 = ember.randn(4, 2), ember.randn(4, 3)
    ref = m(x1, x2)
    out = _functional_call(m, {}, (x1,), {"input2": x2})
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy())


def test_tied_weights_and_buffers():
    m = Tied()
    w = ember.eye(2) * 2
    x = ember.ones(1, 2)
    out = _functional_call(m, {"a.weight": w, "scale": ember.tensor([3.0])}, x)
    np.testing.assert_allclose(out.numpy(), [[12.0, 12.0]])  # both layers see the new tied weight
    out = _functional_call(m, {"a.weight": w}, x, tie_weights=False)
    assert out.shape == (1, 2)
    with pytest.raises(ValueError, match="which are tied"):
        _functional_call(m, {"a.weight": w, "b.weight": ember.eye(2)}, x)


def test_strict_and_deprecation():
    m = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Linear:\n\tUnexpected key\(s\): "
                                           r"'nope'.\n\tMissing key\(s\): 'bias', 'weight'."):
        _functional_call(m, {"nope": ember.ones(1)}, ember.ones(1, 2), strict=True)
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        functional_call(m, {}, ember.ones(1, 2))


def test_func_variant_takes_dict_sequences():
    m = nn.Linear(2, 2)
    out = _func_functional_call(m, ({"weight": ember.zeros(2, 2)}, {"bias": ember.ones(2)}), ember.ones(3, 2))
    np.testing.assert_array_equal(out.numpy(), np.ones((3, 2)))
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        _func_functional_call(m, ({"bias": ember.ones(2)}, {"bias": ember.ones(2)}), ember.ones(3, 2))


def test_func_functional_call_takes_a_sequence_of_dicts():
    m = ember.nn.Linear(2, 1)
    out = ember.func.functional_call(m, ({"weight": ember.ones(1, 2)}, {"bias": ember.full((1,), 0.5)}),
                                     (ember.tensor([[1.0, 2.0]]),))
    assert out.tolist() == [[3.5]]
