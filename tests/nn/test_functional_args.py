"""torch's TypeError when a NumPy array or a list is passed where nn.functional expects a Tensor."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn

A = np.ones((2, 3), np.float32)
A4 = np.ones((1, 2, 4, 4), np.float32)


@pytest.mark.parametrize("call,msg", [
    (lambda: nn.Linear(3, 2)(A), "linear(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: nn.Embedding(3, 2)([1]), "embedding(): argument 'indices' (position 2) must be Tensor, not list"),
    (lambda: nn.Embedding(3, 2)(np.array([1])),
     "embedding(): argument 'indices' (position 2) must be Tensor, not numpy.ndarray"),
    (lambda: F.cross_entropy(A, ember.tensor([0, 1])),
     "cross_entropy_loss(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: F.cross_entropy(ember.ones(2, 3), np.array([0, 1])),
     "cross_entropy_loss(): argument 'target' (position 2) must be Tensor, not numpy.ndarray"),
    (lambda: F.nll_loss(A, ember.tensor([0, 1])),
     "nll_loss_nd(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: nn.Dropout()(A), "dropout(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: nn.LayerNorm(3)(A), "layer_norm(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: nn.MaxPool2d(2)(A4), "max_pool2d(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: F.avg_pool2d(A4, 2), "avg_pool2d(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: F.pad(A4, (1, 1)), "pad(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: F.gelu(A), "gelu(): argument 'input' (position 1) must be Tensor, not numpy.ndarray"),
    (lambda: F.linear([1.0], ember.ones(2, 1)), "linear(): argument 'input' (position 1) must be Tensor, not list"),
])
def test_non_tensor_arguments(call, msg):
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value) == msg

