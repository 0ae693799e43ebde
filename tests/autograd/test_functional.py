"""ember.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp against hand-computed derivatives."""
import numpy as np
import pytest

import ember
from ember.autograd import functional as F

RNG = np.random.default_rng(0)
XA = RNG.standard_normal((2, 3))
YA = RNG.standard_normal(3)


def _t(a, requires_grad=False):
    return ember.tensor(a, dtype=ember.float64, requires_grad=requires_grad)


def _np(t):
    return t.detach().numpy()


def _exp_reducer(x):
    return x.exp().sum(1)


def _jac_exp_reducer(xa):
    # d(sum_j exp(x_ij)) / dx_kl = delta_ik exp(x_kl)
    jac = np.zeros((2, 2, 3))
    for i in range(2):
        jac[i, i] = np.exp(xa[i])
    return jac


def _pair(x, y):
    return x * y, (y * y).sum()


def _cube_sum(x):
    return (x * x * x).sum()


def _mixed(x, y):
    return (x * x * y).sum() + (y * y * y).sum()


# ----- jacobian -----

def test_jacobian_single_input_single_output():
    jac = F.jacobian(_exp_reducer, _t(XA))
    assert isinstance(jac, ember.Tensor) and jac.shape == (2, 2, 3)
    np.testing.assert_allclose(_np(jac), _jac_exp_reducer(XA))
    assert not jac.requires_grad


def test_jacobian_tuple_structure():
    x, y = _t(XA), _t(YA)
    jac = F.jacobian(_pair, (x, y))
    assert isinstance(jac, tuple) and len(jac) == 2 and all(isinstance(j, tuple) and len(j) == 2 for j in jac)
    assert jac[0][0].shape == (2, 3, 2, 3) and jac[0][1].shape == (2, 3, 3)
    assert jac[1][0].shape == (2, 3) and jac[1][1].shape == (3,)
    expected00 = np.einsum("ik,jl->ijkl", np.eye(2), np.eye(3)) * YA[None, None, None, :]
    np.testing.assert_allclose(_np(jac[0][0]), expected00)
    np.testing.assert_allclose(_np(jac[0][1]), np.einsum("jl,ij->ijl", np.eye(3), XA))
    np.testing.assert_allclose(_np(jac[1][0]), np.zeros((2, 3)))
    np.testing.assert_allclose(_np(jac[1][1]), 2 * YA)


def test_jacobian_tuple_outputs_single_input():
    jac = F.jacobian(lambda x: (x * 2, x.sum()), _t(YA))
    assert isinstance(jac, tuple) and len(jac) == 2 and isinstance(jac[0], ember.Tensor)
    np.testing.assert_allclose(_np(jac[0]), 2 * np.eye(3))
    np.testing.assert_allclose(_np(jac[1]), np.ones(3))


def test_jacobian_single_output_tuple_inputs():
    jac = F.jacobian(lambda x, y: x.sum(0) * y, (_t(XA), _t(YA)))
    assert isinstance(jac, tuple) and len(jac) == 2 and isinstance(jac[0], ember.Tensor)
    assert jac[0].shape == (3, 2, 3) and jac[1].shape == (3, 3)
    np.testing.assert_allclose(_np(jac[1]), np.diag(XA.sum(0)))


def test_jacobian_unused_input_is_zero_or_strict_error():
    jac = F.jacobian(lambda x, y: x * 2, (_t(YA), _t(YA)))
    np.testing.assert_allclose(_np(jac[1]), np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1. This "
                                           "is not allowed in strict mode."):
        F.jacobian(lambda x, y: x * 2, (_t(YA), _t(YA)), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients"):
        F.jacobian(lambda x: ember.ones(2), _t(YA), strict=True)


def test_jacobian_create_graph_is_differentiable():
    x = _t(YA, requires_grad=True)
    jac = F.jacobian(lambda t: t * t * t, x, create_graph=True)
    assert jac.requires_grad
    np.testing.assert_allclose(_np(jac), np.diag(3 * YA ** 2))
    (g,) = ember.autograd.grad(jac.sum(), x)
    np.testing.assert_allclose(g.numpy(), 6 * YA)


def test_jacobian_does_not_touch_caller_graph_or_grad():
    x = _t(YA, requires_grad=True)
    F.jacobian(lambda t: t * 2, x)
    assert x.grad is None


def test_jacobian_strategy_and_vectorize_arguments():
    x = _t(XA)
    np.testing.assert_allclose(_np(F.jacobian(_exp_reducer, x, vectorize=True)), _jac_exp_reducer(XA))
    fwd = F.jacobian(_exp_reducer, x, vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(_np(fwd), _jac_exp_reducer(XA))
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode"'):
        F.jacobian(_exp_reducer, x, strategy="sideways")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(_exp_reducer, x, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not supported together"):
        F.jacobian(_exp_reducer, x, strict=True, vectorize=True)


def test_bad_input_types():
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor or a tuple of Tensors "
                                        "but the value at index 1 has type <class 'int'>."):
        F.jacobian(lambda a, b: a, (_t(YA), 3))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vjp must be either a "
                                        "Tensor or a tuple of Tensors"):
        F.vjp(lambda a: 3, _t(YA))


# ----- hessian -----

def test_hessian_single_input():
    h = F.hessian(_cube_sum, _t(YA))
    np.testing.assert_allclose(_np(h), np.diag(6 * YA))


def test_hessian_tuple_inputs():
    x, y = _t(YA), _t(YA[::-1].copy())
    h = F.hessian(_mixed, (x, y))
    xa, ya = YA, YA[::-1]
    assert isinstance(h, tuple) and all(isinstance(r, tuple) for r in h)
    np.testing.assert_allclose(_np(h[0][0]), np.diag(2 * ya))
    np.testing.assert_allclose(_np(h[0][1]), np.diag(2 * xa))
    np.testing.assert_allclose(_np(h[1][0]), np.diag(2 * xa))
    np.testing.assert_allclose(_np(h[1][1]), np.diag(6 * ya))


def test_hessian_needs_a_scalar_function():
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a "
                                           "single element"):
        F.hessian(lambda x: x * x, _t(YA))
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        F.hessian(lambda x: (x.sum(), x.sum()), _t(YA))


def test_hessian_strict_linear_function():
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is "
                                           "independent of the input"):
        F.hessian(lambda x: (x * 2).sum(), _t(YA), strict=True)
    np.testing.assert_allclose(_np(F.hessian(lambda x: (x * 2).sum(), _t(YA))), np.zeros((3, 3)))


# ----- vjp / jvp -----

def test_vjp():
    v = _t(np.array([1.0, -2.0]))
    out, g = F.vjp(_exp_reducer, _t(XA), v)
    np.testing.assert_allclose(_np(out), np.exp(XA).sum(1))
    np.testing.assert_allclose(_np(g), np.exp(XA) * np.array([[1.0], [-2.0]]))


def test_vjp_tuple_inputs_and_outputs():
    x, y = _t(XA), _t(YA)
    v = (_t(np.ones((2, 3))), _t(np.array(2.0)))
    out, (gx, gy) = F.vjp(_pair, (x, y), v)
    assert isinstance(out, tuple) and len(out) == 2
    np.testing.assert_allclose(_np(gx), np.broadcast_to(YA, (2, 3)))
    np.testing.assert_allclose(_np(gy), XA.sum(0) + 4 * YA)


def test_vjp_scalar_output_needs_no_v():
    _, g = F.vjp(_cube_sum, _t(YA))
    np.testing.assert_allclose(_np(g), 3 * YA ** 2)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns a "
                                           "single Tensor with a single element."):
        F.vjp(_exp_reducer, _t(XA))


def test_vjp_validates_v():
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be .*\[2\].* but got .*\[3\]"):
        F.vjp(_exp_reducer, _t(XA), _t(np.ones(3)))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1."):
        F.vjp(_pair, (_t(XA), _t(YA)), (_t(np.ones((2, 3))),))


def test_vjp_create_graph():
    x = _t(YA, requires_grad=True)
    out, g = F.vjp(_cube_sum, x, create_graph=True)
    assert out.requires_grad and g.requires_grad
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * YA)


def test_vjp_unused_input_zero_or_strict():
    _, (_, gy) = F.vjp(lambda a, b: (a * 2).sum(), (_t(YA), _t(YA)))
    np.testing.assert_allclose(_np(gy), np.zeros(3))
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1"):
        F.vjp(lambda a, b: (a * 2).sum(), (_t(YA), _t(YA)), strict=True)


def test_jvp():
    v = _t(np.ones((2, 3)))
    out, jv = F.jvp(_exp_reducer, _t(XA), v)
    np.testing.assert_allclose(_np(out), np.exp(XA).sum(1))
    np.testing.assert_allclose(_np(jv), np.exp(XA).sum(1))


def test_jvp_tuples():
    x, y = _t(XA), _t(YA)
    _, (jx, jy) = F.jvp(_pair, (x, y), (_t(np.ones((2, 3))), _t(YA)))
    np.testing.assert_allclose(_np(jx), YA + XA * YA)
    np.testing.assert_allclose(_np(jy), 2 * (YA * YA).sum())


def test_jvp_needs_v_unless_single_element_input():
    _, jv = F.jvp(lambda t: t * 3, _t(np.array([2.0])))
    np.testing.assert_allclose(_np(jv), [3.0])
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function "
                                           "is a single Tensor with a single element."):
        F.jvp(_exp_reducer, _t(XA))


def test_jvp_create_graph():
    x = _t(YA, requires_grad=True)
    v = _t(np.ones(3))
    _, jv = F.jvp(lambda t: t * t, x, v, create_graph=True)
    assert jv.requires_grad
    np.testing.assert_allclose(_np(jv), 2 * YA)
    (g,) = ember.autograd.grad(jv.sum(), x)
    np.testing.assert_allclose(g.numpy(), 2 * np.ones(3))


def test_jvp_strict():
    _, jv = F.jvp(lambda t: (t * 2).sum(), _t(YA), _t(YA), strict=True)  # linear is fine, as in torch
    np.testing.assert_allclose(_np(jv), 2 * YA.sum())
    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 1"):
        F.jvp(lambda a, b: a * 2, (_t(YA), _t(YA)), (_t(YA), _t(YA)), strict=True)


# ----- hvp / vhp -----

def test_hvp_and_vhp_match_the_hessian():
    x, v = _t(YA), _t(np.array([1.0, -1.0, 0.5]))
    out, hv = F.hvp(_cube_sum, x, v)
    _, vh = F.vhp(_cube_sum, x, v)
    np.testing.assert_allclose(_np(out), (YA ** 3).sum())
    np.testing.assert_allclose(_np(hv), 6 * YA * _np(v))
    np.testing.assert_allclose(_np(vh), 6 * YA * _np(v))


def test_hvp_vhp_tuples():
    x, y = _t(YA), _t(YA[::-1].copy())
    vx, vy = _t(np.ones(3)), _t(np.arange(3.0))
    _, (hx, hy) = F.hvp(_mixed, (x, y), (vx, vy))
    _, (wx, wy) = F.vhp(_mixed, (x, y), (vx, vy))
    xa, ya, va, vb = YA, YA[::-1], np.ones(3), np.arange(3.0)
    np.testing.assert_allclose(_np(hx), 2 * ya * va + 2 * xa * vb)
    np.testing.assert_allclose(_np(hy), 2 * xa * va + 6 * ya * vb)
    np.testing.assert_allclose(_np(wx), _np(hx))
    np.testing.assert_allclose(_np(wy), _np(hy))


def test_hvp_vhp_need_scalar_functions():
    for fn, name in ((F.hvp, "hvp"), (F.vhp, "vhp")):
        with pytest.raises(RuntimeError, match=f"The Tensor returned by the function given to {name} should contain "
                                               f"a single element"):
            fn(lambda t: t * t, _t(YA), _t(YA))


def test_hvp_vhp_create_graph():
    x = _t(YA, requires_grad=True)
    v = _t(np.ones(3))
    for fn in (F.hvp, F.vhp):
        _, hv = fn(lambda t: (t * t * t * t).sum(), x, v, create_graph=True)
        assert hv.requires_grad
        np.testing.assert_allclose(_np(hv), 12 * YA ** 2)
        (g,) = ember.autograd.grad(hv.sum(), x)
        np.testing.assert_allclose(g.numpy(), 24 * YA)


def test_results_do_not_require_grad_without_create_graph():
    x = _t(YA, requires_grad=True)
    for fn in (F.vjp, F.hvp, F.vhp):
        out, res = fn(_cube_sum, x, None if fn is F.vjp else _t(np.ones(3)))
        assert not out.requires_grad and not res.requires_grad


def test_create_graph_keeps_history_of_leaf_grad_outputs():
    x = _t(YA, requires_grad=True)
    go = _t(np.ones(3), requires_grad=True)
    (g,) = ember.autograd.grad(x * x, x, go, create_graph=True)  # g = 2 x go
    (ggo,) = ember.autograd.grad(g.sum(), go)
    np.testing.assert_allclose(ggo.numpy(), 2 * YA)
