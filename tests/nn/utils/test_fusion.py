"""fuse_conv_bn_eval / fuse_linear_bn_eval: the fused layer computes bn(layer(x)) in eval mode."""
import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval


def _trained_bn(bn, shape):
    ember.manual_seed(0)
    bn.train()
    for _ in range(3):
        bn(ember.randn(*shape) * 3 + 1)
    with ember.no_grad():
        bn.weight.uniform_(0.5, 2.0)
        bn.bias.uniform_(-1.0, 1.0)
    return bn.eval()


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn(bias):
    conv = nn.Conv2d(3, 4, 3, bias=bias, dtype=ember.float64).eval()
    bn = _trained_bn(nn.BatchNorm2d(4, dtype=ember.float64), (2, 4, 5, 5))
    fused = fuse_conv_bn_eval(conv, bn)
    assert fused is not conv and type(fused) is nn.Conv2d
    assert isinstance(fused.weight, nn.Parameter) and isinstance(fused.bias, nn.Parameter)
    x = ember.randn(2, 3, 6, 6, dtype=ember.float64)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12)
    assert (conv.bias is None) == (not bias)  # the original is untouched


def test_fuse_conv_transpose_bn():
    conv = nn.ConvTranspose2d(3, 4, 2, dtype=ember.float64).eval()
    bn = _trained_bn(nn.BatchNorm2d(4, dtype=ember.float64), (2, 4, 3, 3))
    fused = fuse_conv_bn_eval(conv, bn, transpose=True)
    x = ember.randn(1, 3, 4, 4, dtype=ember.float64)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_fuse_linear_bn():
    lin = nn.Linear(3, 4, dtype=ember.float64).eval()
    bn = _trained_bn(nn.BatchNorm1d(4, dtype=ember.float64), (8, 4))
    fused = fuse_linear_bn_eval(lin, bn)
    x = ember.randn(5, 3, dtype=ember.float64)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(lin(x)).detach().numpy(), rtol=1e-10, atol=1e-12)


def test_weights_by_hand_and_errors():
    w, b = ember.ones(2, 1, 1, 1), ember.tensor([1.0, 2.0])
    fw, fb = fuse_conv_bn_weights(w, b, ember.tensor([1.0, 0.0]), ember.tensor([3.0, 0.0]), 1.0, None, None)
    np.testing.assert_allclose(fw.detach().numpy().ravel(), [0.5, 1.0])
    np.testing.assert_allclose(fb.detach().numpy(), [0.0, 2.0])
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        fuse_conv_bn_eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2))
    with pytest.raises(AssertionError, match="linear.out_features == bn.num_features"):
        fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(2).eval())
