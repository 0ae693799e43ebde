import pickle

import numpy as np
import pytest

import ember
from ember.amp import GradScaler


def _setup(value=1.0):
    p = ember.nn.Parameter(ember.tensor([value, value]))
    opt = ember.optim.SGD([p], lr=1.0)
    return p, opt


def _backward(scaler, p, grad):
    """A loss whose gradient with respect to p is `grad`, scaled."""
    loss = (p * ember.tensor(grad)).sum()
    scaler.scale(loss).backward()


def test_scale_multiplies_outputs_and_nested_containers():
    s = GradScaler("cpu", init_scale=8.0)
    t = ember.tensor([1.0, 2.0])
    assert s.scale(t).tolist() == [8.0, 16.0]
    a, (b,) = s.scale((t, [t]))
    assert a.tolist() == [8.0, 16.0] and b.tolist() == [8.0, 16.0]
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        s.scale(3)


def test_step_unscales_and_applies_the_true_gradient():
    s = GradScaler("cpu", init_scale=1024.0)
    p, opt = _setup()
    _backward(s, p, [0.5, -0.25])
    np.testing.assert_allclose(p.grad.numpy(), [512.0, -256.0])
    s.step(opt)
    np.testing.assert_allclose(p.grad.numpy(), [0.5, -0.25])
    np.testing.assert_allclose(p.detach().numpy(), [0.5, 1.25])
    s.update()
    assert s.get_scale() == 1024.0 and s._get_growth_tracker() == 1


def test_inf_or_nan_skips_the_step_and_backs_off():
    for bad in (float("inf"), float("nan")):
        s = GradScaler("cpu", init_scale=1024.0, backoff_factor=0.25)
        p, opt = _setup()
        _backward(s, p, [bad, 1.0])
        assert s.step(opt) is None
        assert p.detach().tolist() == [1.0, 1.0]
        s.update()
        assert s.get_scale() == 256.0 and s._get_growth_tracker() == 0


def test_growth_after_growth_interval_clean_steps():
    s = GradScaler("cpu", init_scale=4.0, growth_factor=3.0, growth_interval=3)
    p, opt = _setup()
    scales = []
    for _ in range(7):
        opt.zero_grad()
        _backward(s, p, [1.0, 1.0])
        s.step(opt)
        s.update()
        scales.append(s.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]


def test_unscale_then_clip_then_step():
    s = GradScaler("cpu", init_scale=2.0 ** 10)
    p, opt = _setup()
    _backward(s, p, [3.0, 4.0])
    s.unscale_(opt)
    norm = ember.nn.utils.clip_grad_norm_([p], 1.0)
    assert abs(float(norm) - 5.0) < 1e-5
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    s.step(opt)  # does not unscale twice
    s.update()
    np.testing.assert_allclose(p.detach().numpy(), [1 - 0.6, 1 - 0.8], rtol=1e-5)


def test_misuse_errors():
    s = GradScaler("cpu")
    p, opt = _setup()
    with pytest.raises(AssertionError, match="Attempted unscale_ but _scale is None"):
        s.unscale_(opt)
    _backward(s, p, [1.0, 1.0])
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update\\(\\)"):
        s.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        s.step(opt, closure=lambda: 0)
    s.update()
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update."):
        s.update()


def test_fp16_gradients_cannot_be_unscaled():
    s = GradScaler("cpu")
    p = ember.nn.Parameter(ember.ones(2, dtype=ember.float16))
    opt = ember.optim.SGD([p], lr=1.0)
    s.scale(ember.ones(1))
    p.grad = ember.ones(2, dtype=ember.float16)
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients."):
        s.unscale_(opt)


def test_update_with_an_explicit_new_scale():
    s = GradScaler("cpu")
    s.scale(ember.ones(1))
    s.update(new_scale=128.0)
    assert s.get_scale() == 128.0
    s.update(ember.tensor([64.0]))
    assert s.get_scale() == 64.0
    with pytest.raises(AssertionError, match="new_scale should be a float"):
        s.update(ember.tensor([1.0, 2.0]))


def test_state_dict_round_trip_and_pickling():
    s = GradScaler("cpu", init_scale=16.0, growth_interval=5)
    p, opt = _setup()
    _backward(s, p, [1.0, 1.0])
    s.step(opt)
    s.update()
    sd = s.state_dict()
    assert sd == {"scale": 16.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 5,
                  "_growth_tracker": 1}
    t = GradScaler("cpu")
    t.load_state_dict(sd)
    assert t.get_scale() == 16.0 and t.state_dict() == sd
    u = pickle.loads(pickle.dumps(s))
    assert u.state_dict() == sd
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        GradScaler("cpu").load_state_dict({})


def test_disabled_scaler_is_a_pass_through():
    s = GradScaler("cpu", enabled=False)
    p, opt = _setup()
    t = ember.ones(2)
    assert s.scale(t) is t
    (p * 2).sum().backward()
    s.step(opt)
    s.update()
    assert p.detach().tolist() == [-1.0, -1.0]
    assert s.get_scale() == 1.0 and s.state_dict() == {} and not s.is_enabled()


def test_constructor_checks_and_cuda_without_gpu():
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(AssertionError, match="The backoff factor must be < 1.0."):
        GradScaler("cpu", backoff_factor=1.0)
    if not ember.cuda.is_available():
        with pytest.warns(UserWarning, match="^ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                                             "Disabling.$"):
            assert not GradScaler().is_enabled()


def test_mixed_precision_training_with_scaler_converges():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(4, 16), ember.nn.Tanh(), ember.nn.Linear(16, 1))
    opt = ember.optim.Adam(model.parameters(), lr=0.02)
    scaler = GradScaler("cpu", init_scale=2.0 ** 8, growth_interval=10)
    x = ember.randn(128, 4)
    y = (x.sum(1, keepdim=True) > 0).float()
    first = None
    for _ in range(80):
        with ember.autocast("cpu"):
            logits = model(x)
        loss = ember.nn.functional.binary_cross_entropy_with_logits(logits.float(), y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        first = loss.item() if first is None else first
    assert loss.item() < 0.5 * first
    assert scaler.get_scale() > 2.0 ** 8  # grew: no overflow in this run
