"""Muon: steps against a NumPy reference (bfloat16 rounding as torch's), its checks and its state."""
import math

import ml_dtypes
import numpy as np
import pytest

import ember
from ember.optim.muon import _zeropower_via_newtonschulz


def _bf16(a):
    return a.astype(ml_dtypes.bfloat16).astype(np.float32)


def _ns_ref(g, a=3.4445, b=-4.7750, c=2.0315, steps=5, eps=1e-7):
    tall = g.shape[0] > g.shape[1]
    x = _bf16(g.astype(np.float32))
    x = x.T if tall else x
    x = _bf16(x / max(float(_bf16(np.float32(np.linalg.norm(x)))), eps))
    for _ in range(steps):
        gram = _bf16(x @ x.T)
        x = _bf16(_bf16(c * (gram @ gram) + b * gram) @ x + a * x)
    return x.T if tall else x


def _muon_ref(w, grads, lr, wd, mom, nesterov, adjust):
    buf = np.zeros_like(w)
    for g in grads:
        buf = buf + (1 - mom) * (g - buf)
        u = g + mom * (buf - g) if nesterov else buf
        o = _ns_ref(u)
        A, B = w.shape
        scale = math.sqrt(max(1, A / B)) if adjust == "original" else 0.2 * math.sqrt(max(A, B))
        w = w * (1 - lr * wd) - lr * scale * o
    return w


@pytest.mark.parametrize("shape", [(6, 4), (3, 7)])
@pytest.mark.parametrize("nesterov, adjust", [(True, "original"), (False, "match_rms_adamw")])
def test_steps_match_the_reference(shape, nesterov, adjust):
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(shape).astype(np.float32)
    grads = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    w = ember.tensor(w0, requires_grad=True)
    opt = ember.optim.Muon([w], lr=0.02, weight_decay=0.1, nesterov=nesterov, adjust_lr_fn=adjust)
    for g in grads:
        w.grad = ember.tensor(g)
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), _muon_ref(w0, grads, 0.02, 0.1, 0.95, nesterov, adjust),
                               rtol=1e-5, atol=1e-6)
    assert list(opt.state[w]) == ["momentum_buffer"]


def test_newton_schulz_gives_a_roughly_orthogonal_matrix():
    g = ember.tensor(np.random.default_rng(2).standard_normal((8, 5)), dtype=ember.float32)
    o = _zeropower_via_newtonschulz(g, (3.4445, -4.7750, 2.0315), 5, 1e-7)
    assert o.dtype == ember.bfloat16 and o.shape == (8, 5)
    s = np.linalg.svd(o.float().numpy(), compute_uv=False)
    assert (s > 0.5).all() and (s < 1.5).all()
    with pytest.raises(ValueError, match="less than 100"):
        _zeropower_via_newtonschulz(g, (1, 2, 3), 100, 1e-7)


def test_argument_checks():
    w = ember.zeros(2, 2, requires_grad=True)
    with pytest.raises(ValueError, match="Muon only supports 2D parameters whereas we found a parameter with size"):
        ember.optim.Muon([w, ember.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Learning rate should be >= 0 but is: -1"):
        ember.optim.Muon([w], lr=-1)
    with pytest.raises(ValueError, match="Adjust learning rate function other is not supported"):
        ember.optim.Muon([w], adjust_lr_fn="other")
    c = ember.zeros(2, 2, dtype=ember.complex64, requires_grad=True)
    opt = ember.optim.Muon([c])
    c.grad = ember.ones(2, 2, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="Muon does not support complex parameters"):
        opt.step()
