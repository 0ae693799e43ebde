"""Dropout functions and modules: masks, scaling, seeding, feature masks, alpha dropout, in-place rules."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember.autograd import gradcheck, gradgradcheck


def test_dropout_scales_kept_values_and_zeroes_the_rest():
    ember.manual_seed(0)
    y = F.dropout(ember.ones(20000), 0.25)
    vals = np.unique(y.numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.75], rtol=1e-6)
    assert (y.numpy() == 0).mean() == pytest.approx(0.25, abs=0.02)


def test_dropout_is_reproducible_with_manual_seed():
    x = ember.randn(100)
    ember.manual_seed(7)
    a = F.dropout(x, 0.5)
    ember.manual_seed(7)
    b = F.dropout(x, 0.5)
    assert ember.equal(a, b)


def test_dropout_eval_and_p0_return_input():
    x = ember.randn(5)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.alpha_dropout(x, 0.5) is x  # training defaults to False
    assert ember.equal(F.dropout(x, 1.0), ember.zeros(5))


def test_dropout_gradient_is_the_mask():
    x = ember.randn(50, dtype=ember.float64, requires_grad=True)
    y = F.dropout(x, 0.4)
    y.sum().backward()
    kept = y.detach().numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.6)
    assert y.grad_fn.name() == "MulBackward0"


@pytest.mark.parametrize("fn", [lambda t: F.dropout(t, 0.3), lambda t: F.alpha_dropout(t, 0.3, True),
                                lambda t: F.dropout2d(t, 0.3), lambda t: F.feature_alpha_dropout(t, 0.3, True)])
def test_gradcheck_with_fixed_seed(fn):
    def f(t):
        ember.manual_seed(11)
        return fn(t)
    x = ember.randn(4, 3, 2, 2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(f, [x])
    assert gradgradcheck(lambda t: f(t) ** 2, [x])


@pytest.mark.parametrize("fn,shape,mask_axes", [
    (F.dropout1d, (4, 6, 10), (2,)), (F.dropout1d, (6, 10), (1,)),
    (F.dropout2d, (4, 6, 5, 5), (2, 3)), (F.dropout3d, (4, 6, 3, 3, 3), (2, 3, 4)),
    (F.dropout3d, (6, 3, 3, 3), (1, 2, 3)),
])
def test_feature_dropout_drops_whole_channels(fn, shape, mask_axes):
    ember.manual_seed(3)
    y = fn(ember.ones(shape), 0.5).numpy()
    zero_any, zero_all = (y == 0).any(mask_axes), (y == 0).all(mask_axes)
    np.testing.assert_array_equal(zero_any, zero_all)
    assert 0.2 < zero_all.mean() < 0.8
    np.testing.assert_allclose(np.unique(y), [0.0, 2.0])


def test_feature_dropout_rank_checks_and_warnings():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 1D input"):
        F.dropout1d(ember.randn(3))
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input"):
        F.dropout2d(ember.randn(2, 3, 4))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input to dropout3d"):
        F.dropout3d(ember.randn(2, 3, 4))


def test_alpha_dropout_keeps_mean_and_variance():
    ember.manual_seed(0)
    x = ember.randn(300000, dtype=ember.float64)
    y = F.alpha_dropout(x, 0.3, True)
    assert abs(y.mean().item()) < 0.01 and y.std().item() == pytest.approx(1.0, abs=0.01)
    # dropped units all take the same value a * (-alpha) + b
    _, counts = np.unique(y.numpy(), return_counts=True)
    assert counts.max() == pytest.approx(0.3 * 300000, rel=0.02)


def test_feature_alpha_dropout_drops_per_channel():
    ember.manual_seed(0)
    y = F.feature_alpha_dropout(ember.zeros(8, 16, 5), 0.5, True).numpy()
    # zero input: kept channels stay at b (a constant), dropped ones at another constant
    assert len(np.unique(y.round(6))) == 2
    assert (y == y[:, :, :1]).all()


def test_invalid_p():
    for fn in (F.dropout, F.alpha_dropout, F.dropout2d, F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
            fn(ember.randn(2, 3, 4, 4), 1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        nn.Dropout(-0.1)


def test_inplace_dropout():
    ember.manual_seed(0)
    x = ember.ones(100)
    assert F.dropout(x, 0.5, inplace=True) is x
    assert set(np.unique(x.numpy())) == {0.0, 2.0}
    leaf = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        F.dropout(leaf, 0.5, inplace=True)
    y = leaf * 1
    F.dropout(y, 0.5, inplace=True)
    y.sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), y.detach().numpy())


def test_modules_follow_train_and_eval():
    for m, x in [(nn.Dropout(), ember.ones(2, 4, 3, 3)), (nn.Dropout1d(), ember.ones(8, 4, 3)),
                 (nn.Dropout2d(), ember.ones(8, 4, 3, 3)), (nn.Dropout3d(), ember.ones(8, 4, 3, 3, 3)),
                 (nn.AlphaDropout(), ember.ones(2, 4, 3, 3)), (nn.FeatureAlphaDropout(), ember.ones(8, 4, 3, 3))]:
        m.eval()
        assert m(x) is x
        m.train()
        ember.manual_seed(0)
        assert not ember.equal(m(x), x)


def test_module_reprs():
    assert repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"
    assert repr(nn.Dropout2d(0.2, True)) == "Dropout2d(p=0.2, inplace=True)"
    assert repr(nn.AlphaDropout(0.1)) == "AlphaDropout(p=0.1, inplace=False)"
