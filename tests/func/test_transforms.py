"""ember.func transforms: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, stack_module_state."""
import numpy as np
import pytest

import ember
from ember.func import (
    functional_call,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stack_module_state,
    vjp,
    vmap,
)

X = [1.0, 2.0, 3.0]


def _x():
    return ember.tensor(X)


def _close(t, expected):
    np.testing.assert_allclose(t.detach().numpy(), expected, rtol=1e-6, atol=1e-6)


def test_grad_and_nested_grad():
    g = grad(lambda t: (t ** 3).sum())(_x())
    _close(g, [3.0, 12.0, 27.0])
    assert not g.requires_grad and g.grad_fn is None
    _close(grad(grad(lambda t: t ** 3))(ember.tensor(2.0)), 12.0)  # d2/dt2 t^3 = 6t


def test_grad_argnums_pytrees_and_aux():
    x = _x()
    ga, gb = grad(lambda a, b: (a * b ** 2).sum(), argnums=(0, 1))(x, x + 1)
    _close(ga, [4.0, 9.0, 16.0])
    _close(gb, [4.0, 12.0, 24.0])  # 2 a b
    gd = grad(lambda p: (p["w"] * p["b"]).sum())({"w": x, "b": ember.tensor(2.0)})
    assert set(gd) == {"w", "b"}
    _close(gd["w"], [2.0, 2.0, 2.0])
    _close(gd["b"], 6.0)
    g, aux = grad(lambda t: ((t ** 2).sum(), t.mean()), has_aux=True)(x)
    _close(g, [2.0, 4.0, 6.0])
    _close(aux, 2.0)
    (g, (value, aux)) = grad_and_value(lambda t: ((t ** 2).sum(), t.max()), has_aux=True)(x)
    _close(value, 14.0)
    _close(aux, 3.0)
    _close(grad(lambda a, b: (a * 2).sum(), argnums=1)(x, x), [0.0, 0.0, 0.0])  # unused: zeros


def test_grad_errors():
    with pytest.raises(RuntimeError, match=r"^grad_and_value\(f\)\(\*args\): Expected f\(\*args\) to return a scalar "
                                           r"Tensor, got tensor with 1 dims. Maybe you wanted to use the vjp or "
                                           r"jacrev APIs instead\?$"):
        grad(lambda t: t * 2)(_x())
    with pytest.raises(ValueError, match="^Thing passed to transform API must be Tensor, got <class 'float'>$"):
        grad(lambda t: t.sum())(3.0)
    with pytest.raises(RuntimeError, match="^Got argnum=1, but only 1 positional inputs$"):
        grad(lambda t: t.sum(), argnums=1)(_x())


def test_grad_composes_with_outer_autograd_and_no_grad():
    w = ember.tensor([1.0, -1.0, 0.5], requires_grad=True)
    g = grad(lambda t: (t ** 3).sum())(w)
    assert g.requires_grad
    g.sum().backward()
    _close(w.grad, [6.0, -6.0, 3.0])  # d/dw sum 3 w^2
    with ember.no_grad():
        _close(grad(lambda t: (t ** 2).sum())(_x()), [2.0, 4.0, 6.0])


def test_vjp_and_jvp():
    out, fn = vjp(lambda t: t ** 2, _x())
    _close(out, [1.0, 4.0, 9.0])
    (g,) = fn(ember.ones(3))
    _close(g, [2.0, 4.0, 6.0])
    out, tangent_out = jvp(lambda t: t ** 2, (_x(),), (ember.tensor([1.0, 0.0, 2.0]),))
    _close(out, [1.0, 4.0, 9.0])
    _close(tangent_out, [2.0, 0.0, 12.0])
    assert not tangent_out.requires_grad


def test_jacobians_and_hessian():
    x = _x()
    _close(jacrev(lambda t: t.sin())(x), np.diag(np.cos(X)))
    _close(jacfwd(lambda t: t * t)(x), np.diag([2.0, 4.0, 6.0]))
    _close(hessian(lambda t: (t ** 3).sum())(x), np.diag([6.0, 12.0, 18.0]))
    (ja, jb), (ka, kb) = jacrev(lambda a, b: (a * b, a + b), argnums=(0, 1))(x, x * 2)
    _close(ja, np.diag([2.0, 4.0, 6.0]))
    _close(jb, np.diag(X))
    _close(ka, np.eye(3))
    _close(kb, np.eye(3))
    j = jacrev(lambda m: m @ m)(ember.tensor([[0.0, 1.0], [2.0, 3.0]]))
    assert j.shape == (2, 2, 2, 2)
    _close(j[0, 1], [[1.0, 3.0], [0.0, 1.0]])  # (MM)01 = m00 m01 + m01 m11


def test_vmap_in_and_out_dims():
    a = ember.arange(6.0).reshape(2, 3)
    _close(vmap(lambda r: r.sum())(a), [3.0, 12.0])
    _close(vmap(lambda c: c.sum(), in_dims=1)(a), [3.0, 5.0, 7.0])
    _close(vmap(lambda r: r * 2, out_dims=1)(a), (a * 2).t().numpy())
    s, m = vmap(lambda r: (r.sum(), r.max()))(a)
    _close(s, [3.0, 12.0])
    _close(m, [2.0, 5.0])
    y, k = vmap(lambda r, c: (r * c, c), in_dims=(0, None), out_dims=(0, None))(a, ember.tensor(3.0))
    _close(y, (a * 3).numpy())
    _close(k, 3.0)
    _close(vmap(vmap(lambda p, q: p * q))(ember.ones(2, 3), a), a.numpy())
    _close(vmap(lambda r, scale=1.0: r * scale)(a, scale=2.0), (a * 2).numpy())
    _close(vmap(lambda m, v: m @ v)(ember.ones(4, 2, 3), ember.arange(12.0).reshape(4, 3)),
           np.repeat(np.arange(12.0).reshape(4, 3).sum(1, keepdims=True), 2, axis=1))


def test_vmap_errors():
    with pytest.raises(ValueError, match=r"^vmap: Expected all tensors to have the same size in the mapped dimension, "
                                         r"got sizes \[2, 3\] for the mapped dimension$"):
        vmap(lambda a, b: a + b)(ember.ones(2), ember.ones(3))
    with pytest.raises(ValueError, match="must only return Tensors, got type <class 'float'>. Did you mean to set "
                                         "out_dims= to None for output?"):
        vmap(lambda a: 3.0)(ember.ones(2))
    with pytest.raises(ValueError, match=r"Got in_dim=1 for some input, but that input is a Tensor of dimensionality "
                                         r"1 so expected in_dim to satisfy -1 <= in_dim < 1."):
        vmap(lambda a: a, in_dims=1)(ember.ones(2))
    with pytest.raises(ValueError, match=r"in_dims is not compatible with the structure of `inputs`. in_dims has "
                                         r"structure TreeSpec\(tuple, None, \[\*,\n  \*\]\) but inputs has structure "
                                         r"TreeSpec\(tuple, None, \[\*\]\)."):
        vmap(lambda a: a, in_dims=(0, 0))(ember.ones(2))


def test_per_sample_gradients_match_one_backward_per_sample():
    ember.manual_seed(0)
    model = ember.nn.Linear(3, 2)
    data = ember.linspace(-1, 1, 12).reshape(4, 3)
    targets = ember.tensor([0, 1, 1, 0])
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, t):
        return ember.nn.functional.cross_entropy(functional_call(model, p, (x.unsqueeze(0),)), t.unsqueeze(0))

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, data, targets)
    for i in range(4):
        model.zero_grad()
        ember.nn.functional.cross_entropy(model(data[i:i + 1]), targets[i:i + 1]).backward()
        _close(per_sample["weight"][i], model.weight.grad.numpy())
        _close(per_sample["bias"][i], model.bias.grad.numpy())


def test_stack_module_state_for_ensembles():
    models = [ember.nn.Linear(3, 2) for _ in range(3)]
    for j, m in enumerate(models):
        with ember.no_grad():
            m.weight.fill_(j)
            m.bias.fill_(-j)
    params, buffers = stack_module_state(models)
    assert params["weight"].shape == (3, 2, 3) and params["weight"].requires_grad and params["weight"].is_leaf
    assert buffers == {}
    x = ember.ones(5, 3)
    out = vmap(lambda p, b, inp: functional_call(models[0], (p, b), (inp,)), in_dims=(0, 0, None))(params, buffers, x)
    assert out.shape == (3, 5, 2)
    _close(out[:, 0, 0], [0.0, 2.0, 4.0])  # 3 j - j


def test_linearize_functionalize_and_batch_norm_replacement():
    from ember.func import functionalize, linearize, replace_all_batch_norm_modules_
    out, jvp_fn = linearize(lambda t: t * t * t, ember.tensor([1.0, 2.0]))
    _close(out, [1.0, 8.0])
    _close(jvp_fn(ember.tensor([1.0, 0.5])), [3.0, 6.0])  # 3 t^2 dt
    _close(functionalize(lambda t: t + 1)(ember.zeros(2)), [1.0, 1.0])
    model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))
    assert replace_all_batch_norm_modules_(model) is model
    bn = model[1]
    assert bn.running_mean is None and bn.running_var is None and not bn.track_running_stats
    assert dict(model.named_buffers()) == {}
    assert model(ember.ones(3, 2)).shape == (3, 2)
