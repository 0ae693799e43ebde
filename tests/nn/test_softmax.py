"""nn softmax family: forward against NumPy, gradcheck, gradgradcheck, dims, dtypes and errors."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _softmax_ref(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _log_softmax_ref(x, dim):
    s = x - x.max(dim, keepdims=True)
    return s - np.log(np.exp(s).sum(dim, keepdims=True))


def _rand(*shape):
    return lambda rng: [rng.standard_normal(shape) * 3]


SPECS = [
    OpSpec("softmax_dim1", lambda x: F.softmax(x, 1), lambda x: _softmax_ref(x, 1), _rand(3, 5), gradgrad=True),
    OpSpec("softmax_dim0", lambda x: F.softmax(x, 0), lambda x: _softmax_ref(x, 0), _rand(4, 3), gradgrad=True),
    OpSpec("softmax_neg", lambda x: F.softmax(x, -2), lambda x: _softmax_ref(x, -2), _rand(2, 3, 4)),
    OpSpec("softmax_1d", lambda x: F.softmax(x, 0), lambda x: _softmax_ref(x, 0), _rand(6)),
    OpSpec("log_softmax_dim1", lambda x: F.log_softmax(x, 1), lambda x: _log_softmax_ref(x, 1), _rand(3, 5),
           gradgrad=True),
    OpSpec("log_softmax_last", lambda x: F.log_softmax(x, -1), lambda x: _log_softmax_ref(x, -1), _rand(2, 3, 4),
           gradgrad=True),
    OpSpec("softmin", lambda x: F.softmin(x, 1), lambda x: _softmax_ref(-x, 1), _rand(3, 4), gradgrad=True),
    OpSpec("tensor_softmax", lambda x: x.softmax(0), lambda x: _softmax_ref(x, 0), _rand(3, 4)),
    OpSpec("tensor_log_softmax", lambda x: x.log_softmax(-1), lambda x: _log_softmax_ref(x, -1), _rand(3, 4)),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_grad(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgrad(spec):
    check_gradgrad(spec)


def test_large_logits_are_stable():
    x = ember.tensor([[1000.0, 1000.0, -1000.0]])
    assert_close(F.softmax(x, 1), [[0.5, 0.5, 0.0]])
    assert_close(F.log_softmax(x, 1), [[-np.log(2), -np.log(2), -2000.0 - np.log(2)]], atol=1e-3)


def test_grad_fn_names_and_dtype_argument():
    x = ember.randn(3, 4, requires_grad=True)
    assert F.softmax(x, 1).grad_fn.name() == "SoftmaxBackward0"
    assert F.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"
    y = F.softmax(x, 1, dtype=ember.float64)
    assert y.dtype == ember.float64
    y.sum().backward()
    assert x.grad.dtype == ember.float32
    assert_close(x.grad, np.zeros((3, 4)), atol=1e-6)


@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_half_precisions_compute_in_float32_and_round_once(fn):
    x = ember.randn(3, 5) * 4
    for dt in (ember.bfloat16, ember.float16):
        y = fn(x.to(dt), 1)
        assert y.dtype is dt
        np.testing.assert_array_equal(y.float().numpy(), fn(x.to(dt).float(), 1).to(dt).float().numpy())
        xg = x.to(dt).requires_grad_()
        fn(xg, 1).sum().backward()
        assert xg.grad.dtype is dt


def test_zero_dim_input():
    x = ember.tensor(2.0, requires_grad=True)
    y = F.softmax(x, 0)
    assert_close(y, 1.0)
    y.backward()
    assert_close(x.grad, 0.0)
    assert_close(F.log_softmax(ember.tensor(3.0), 0), 0.0)


def test_implicit_dim_warns():
    x = ember.randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = F.softmax(x)
    assert_close(y, _softmax_ref(x.numpy(), 1))
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        y = F.log_softmax(ember.randn(2, 3, 4))
    assert_close(y.exp().sum(0), np.ones((3, 4)), atol=1e-5)


def test_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        F.softmax(ember.randn(2, 3), 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        F.softmax(ember.arange(3), 0)


def test_gumbel_softmax():
    ember.manual_seed(0)
    logits = ember.randn(5, 4, requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5)
    assert_close(y.sum(-1), np.ones(5), atol=1e-5)
    h = F.gumbel_softmax(logits, hard=True)
    assert_close(h.sum(-1), np.ones(5))
    assert set(np.unique(h.detach().numpy())) <= {0.0, 1.0}
    h.sum().backward()  # straight-through: the gradient reaches the logits
    assert logits.grad is not None and logits.grad.shape == (5, 4)
