"""parameters_to_vector and vector_to_parameters."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck
from ember.nn.utils import parameters_to_vector, vector_to_parameters


def test_round_trip():
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (3 * 4 + 4 + 4 * 2 + 2,)
    expected = np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])
    np.testing.assert_array_equal(vec.detach().numpy(), expected)
    new = ember.arange(vec.numel(), dtype=ember.float32)
    vector_to_parameters(new, model.parameters())
    np.testing.assert_array_equal(parameters_to_vector(model.parameters()).detach().numpy(), new.numpy())
    np.testing.assert_array_equal(model[0].weight.detach().numpy(), np.arange(12).reshape(4, 3))
    # the parameters are views of vec's memory (as torch's .data assignment)
    new[0] = 100.0
    assert model[0].weight[0, 0].item() == 100.0


def test_parameters_keep_identity():
    lin = ember.nn.Linear(2, 2)
    w = lin.weight
    vector_to_parameters(ember.zeros(6), lin.parameters())
    assert lin.weight is w and isinstance(w, ember.nn.Parameter) and w.requires_grad


def test_parameters_to_vector_is_differentiable():
    a = ember.randn(2, 3, dtype=ember.float64, requires_grad=True)
    b = ember.randn(4, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda x, y: parameters_to_vector([x, y]) * 2, (a, b))


def test_type_error():
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: int"):
        vector_to_parameters(1, [ember.nn.Parameter(ember.ones(1))])
