"""clip_grad_norm_, clip_grad_value_, get_total_norm and clip_grads_with_norm_ against hand computation."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.nn import Parameter
from ember.nn.utils import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm


def _params(rng, shapes=((3, 4), (5,), (2, 2, 2)), dtype=np.float32, scale=3.0):
    ps = []
    for s in shapes:
        p = Parameter(ember.tensor(rng.standard_normal(s).astype(dtype)))
        p.grad = ember.tensor((scale * rng.standard_normal(s)).astype(dtype))
        ps.append(p)
    return ps


def _ref_norm(grads, p):
    flat = np.concatenate([g.ravel().astype(np.float64) for g in grads])
    if p == math.inf:
        return np.abs(flat).max()
    if p == -math.inf:
        return min(np.abs(g).min() for g in grads)
    if p == 0:
        return float(sum(np.count_nonzero(g) > 0 for g in grads))  # the norm of the per-tensor counts
    return (np.abs(flat) ** p).sum() ** (1 / p)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, 0.5, math.inf, "inf", -math.inf])
def test_clip_grad_norm_values(norm_type):
    rng = np.random.default_rng(0)
    ps = _params(rng)
    grads = [p.grad.numpy().copy() for p in ps]
    p = float(norm_type)
    total = clip_grad_norm_(ps, 1.0, norm_type)
    ref = _ref_norm(grads, p)
    assert total.dtype == ember.float32 and total.shape == ()
    np.testing.assert_allclose(total.item(), ref, rtol=1e-5)
    coef = min(1.0 / (ref + 1e-6), 1.0)
    for q, g in zip(ps, grads):
        np.testing.assert_allclose(q.grad.numpy(), g * coef, rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_zero_norm_counts_nonzero_tensors():
    ps = _params(np.random.default_rng(1))
    ps[1].grad.zero_()
    assert clip_grad_norm_(ps, 1e9, norm_type=0).item() == 2.0


def test_no_clipping_below_max_norm():
    ps = _params(np.random.default_rng(2), scale=1e-3)
    grads = [p.grad.numpy().copy() for p in ps]
    total = clip_grad_norm_(ps, 10.0)
    assert total.item() < 10.0
    for q, g in zip(ps, grads):
        np.testing.assert_array_equal(q.grad.numpy(), g)


def test_single_tensor_and_generator():
    p = Parameter(ember.tensor([3.0, 4.0]))
    p.grad = ember.tensor([3.0, 4.0])
    total = clip_grad_norm_(p, 1.0)
    assert total.item() == pytest.approx(5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    p.grad = ember.tensor([3.0, 4.0])
    total = clip_grad_norm_((q for q in [p]), 10.0)
    assert total.item() == pytest.approx(5.0)


def test_empty_parameters():
    total = clip_grad_norm_([], 1.0)
    assert total.item() == 0.0 and total.dtype == ember.float32
    with pytest.warns(UserWarning, match="empty generator"):
        clip_grad_norm_((p for p in []), 1.0)
    no_grad = Parameter(ember.ones(3))
    assert clip_grad_norm_([no_grad], 1.0).item() == 0.0
    assert get_total_norm([]).item() == 0.0


def test_float64_and_mixed_dtypes():
    rng = np.random.default_rng(3)
    ps = _params(rng, dtype=np.float64)
    assert clip_grad_norm_(ps, 1.0).dtype == ember.float64
    mixed = _params(rng, shapes=((3,),)) + _params(rng, shapes=((4,),), dtype=np.float64)
    grads = [p.grad.numpy().copy() for p in mixed]
    total = clip_grad_norm_(mixed, 0.5)
    assert total.dtype == ember.float64
    np.testing.assert_allclose(total.item(), _ref_norm(grads, 2.0), rtol=1e-6)
    assert mixed[0].grad.dtype == ember.float32 and mixed[1].grad.dtype == ember.float64


def test_nonfinite():
    ps = _params(np.random.default_rng(4))
    ps[0].grad[0, 0] = float("inf")
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from `parameters` is non-finite"):
        clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    total = clip_grad_norm_(ps, 1.0)
    assert math.isinf(total.item())
    ps[1].grad[0] = float("nan")
    with pytest.raises(RuntimeError, match="non-finite"):
        clip_grad_norm_(ps, 1.0, norm_type="inf", error_if_nonfinite=True)


def test_no_graph_and_version_bump():
    ps = _params(np.random.default_rng(5))
    v = ps[0].grad._version
    total = clip_grad_norm_(ps, 0.1)
    assert not total.requires_grad and total.grad_fn is None
    assert ps[0].grad._version > v


def test_get_total_norm_and_clip_grads_with_norm():
    rng = np.random.default_rng(6)
    ps = _params(rng)
    grads = [p.grad.numpy().copy() for p in ps]
    total = get_total_norm([p.grad for p in ps], norm_type=2.0)
    np.testing.assert_allclose(total.item(), _ref_norm(grads, 2.0), rtol=1e-5)
    clip_grads_with_norm_(ps, 2.0, total)
    for q, g in zip(ps, grads):
        np.testing.assert_allclose(q.grad.numpy(), g * 2.0 / (total.item() + 1e-6), rtol=1e-5)
    # a single tensor
    assert get_total_norm(ember.tensor([3.0, 4.0])).item() == pytest.approx(5.0)


def test_deprecated_clip_grad_norm():
    ps = _params(np.random.default_rng(7))
    with pytest.warns(FutureWarning, match="deprecated"):
        clip_grad_norm(ps, 1.0)


def test_clip_grad_value():
    rng = np.random.default_rng(8)
    ps = _params(rng)
    grads = [p.grad.numpy().copy() for p in ps]
    assert clip_grad_value_(ps, 0.5) is None
    for q, g in zip(ps, grads):
        np.testing.assert_array_equal(q.grad.numpy(), np.clip(g, -0.5, 0.5))
    p = Parameter(ember.tensor([-3.0, 0.1, 3.0]))
    p.grad = ember.tensor([-3.0, 0.1, 3.0])
    clip_grad_value_(p, 1)
    np.testing.assert_allclose(p.grad.numpy(), [-1.0, 0.1, 1.0], rtol=1e-6)


def test_clip_works_in_a_training_step():
    model = ember.nn.Linear(4, 3)
    loss = (model(ember.randn(5, 4)) ** 2).sum() * 100
    loss.backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        total = clip_grad_norm_(model.parameters(), 1.0)
    after = get_total_norm([p.grad for p in model.parameters()])
    assert total.item() > 1.0
    assert after.item() == pytest.approx(1.0, rel=1e-4)
