"""ember.optim optimizers: hand-computed updates, options, param groups, state_dict, hooks, errors."""
import copy
import math

import numpy as np
import pytest

import ember
from ember import optim

P0 = np.array([1.0, -2.0, 3.0])
GRADS = [np.array([0.5, -1.0, 2.0]), np.array([-0.3, 0.4, 1.0]), np.array([0.2, 0.2, -0.6])]


def _trajectory(cls, grads=GRADS, p0=P0, **kwargs):
    """Parameter values after each step with the given gradients (float64)."""
    p = ember.tensor(p0.copy(), requires_grad=True)
    opt = cls([p], **kwargs)
    out = []
    for g in grads:
        p.grad = ember.tensor(g.copy())
        opt.step()
        out.append(p.detach().numpy().copy())
    return out


def _check(got, expected):
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- update rules, written out by hand

def test_sgd_plain():
    lr = 0.1
    p1 = P0 - lr * GRADS[0]
    p2 = p1 - lr * GRADS[1]
    p3 = p2 - lr * GRADS[2]
    _check(_trajectory(optim.SGD, lr=lr), [p1, p2, p3])


def test_sgd_momentum_dampening():
    lr, mu, damp = 0.1, 0.9, 0.25
    b1 = GRADS[0]                                  # the first buffer is the gradient itself (no dampening)
    p1 = P0 - lr * b1
    b2 = mu * b1 + (1 - damp) * GRADS[1]
    p2 = p1 - lr * b2
    b3 = mu * b2 + (1 - damp) * GRADS[2]
    p3 = p2 - lr * b3
    _check(_trajectory(optim.SGD, lr=lr, momentum=mu, dampening=damp), [p1, p2, p3])


def test_sgd_nesterov_weight_decay():
    lr, mu, wd = 0.1, 0.9, 0.01
    g1 = GRADS[0] + wd * P0
    b1 = g1
    p1 = P0 - lr * (g1 + mu * b1)
    g2 = GRADS[1] + wd * p1
    b2 = mu * b1 + g2
    p2 = p1 - lr * (g2 + mu * b2)
    _check(_trajectory(optim.SGD, GRADS[:2], lr=lr, momentum=mu, nesterov=True, weight_decay=wd), [p1, p2])


def test_sgd_maximize():
    lr = 0.1
    p1 = P0 + lr * GRADS[0]
    p2 = p1 + lr * GRADS[1]
    _check(_trajectory(optim.SGD, GRADS[:2], lr=lr, maximize=True), [p1, p2])


def _adam_by_hand(lr, b1, b2, eps, wd=0.0, amsgrad=False, decoupled=False, maximize=False, steps=3):
    p = P0.copy()
    m = np.zeros(3)
    v = np.zeros(3)
    vmax = np.zeros(3)
    out = []
    for t in range(1, steps + 1):
        g = -GRADS[t - 1] if maximize else GRADS[t - 1]
        if decoupled:
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vhat = (vmax if amsgrad else v) / (1 - b2 ** t)
        p = p - lr * (m / (1 - b1 ** t)) / (np.sqrt(vhat) + eps)
        out.append(p)
    return out


def test_adam():
    _check(_trajectory(optim.Adam, lr=0.1), _adam_by_hand(0.1, 0.9, 0.999, 1e-8))


def test_adam_options():
    _check(_trajectory(optim.Adam, lr=0.1, betas=(0.5, 0.9), eps=1e-3, amsgrad=True),
           _adam_by_hand(0.1, 0.5, 0.9, 1e-3, amsgrad=True))
    _check(_trajectory(optim.Adam, lr=0.1, weight_decay=0.1, maximize=True),
           _adam_by_hand(0.1, 0.9, 0.999, 1e-8, wd=0.1, maximize=True))


def test_adamw_decouples_weight_decay():
    _check(_trajectory(optim.AdamW, lr=0.1), _adam_by_hand(0.1, 0.9, 0.999, 1e-8, wd=0.01, decoupled=True))
    _check(_trajectory(optim.AdamW, lr=0.1, weight_decay=0.5, amsgrad=True),
           _adam_by_hand(0.1, 0.9, 0.999, 1e-8, wd=0.5, decoupled=True, amsgrad=True))
    _check(_trajectory(optim.Adam, lr=0.1, weight_decay=0.5, decoupled_weight_decay=True),
           _adam_by_hand(0.1, 0.9, 0.999, 1e-8, wd=0.5, decoupled=True))


def test_adamax():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    p, m, u, out = P0.copy(), np.zeros(3), np.zeros(3), []
    for t, g in enumerate(GRADS, 1):
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1 ** t) * m / u
        out.append(p)
    _check(_trajectory(optim.Adamax, lr=lr), out)


def test_nadam():
    lr, b1, b2, eps, psi = 0.1, 0.9, 0.999, 1e-8, 4e-3
    p, m, v, mu_prod, out = P0.copy(), np.zeros(3), np.zeros(3), 1.0, []
    for t, g in enumerate(GRADS, 1):
        mu = b1 * (1 - 0.5 * 0.96 ** (t * psi))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * psi))
        mu_prod = float(np.float32(mu_prod) * np.float32(mu))  # torch keeps the product in float32
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2 ** t)) + eps
        p = p - lr * (1 - mu) / (1 - mu_prod) * g / denom - lr * mu_next / (1 - mu_prod * mu_next) * m / denom
        out.append(p)
    _check(_trajectory(optim.NAdam, lr=lr), out)


def test_nadam_decoupled_weight_decay():
    lr, wd = 0.1, 0.2
    got = _trajectory(optim.NAdam, GRADS[:1], lr=lr, weight_decay=wd, decoupled_weight_decay=True)
    mu = 0.9 * (1 - 0.5 * 0.96 ** 4e-3)
    mu_next = 0.9 * (1 - 0.5 * 0.96 ** 8e-3)
    mu_prod = float(np.float32(mu))
    g = GRADS[0]
    p = P0 * (1 - lr * wd)
    denom = np.sqrt((0.001 * g * g) / 0.001) + 1e-8
    p = p - lr * (1 - mu) / (1 - mu_prod) * g / denom - lr * mu_next / (1 - mu_prod * mu_next) * (0.1 * g) / denom
    _check(got, [p])


def _radam_by_hand(lr, b1, b2, eps, steps):
    p, m, v, out = P0.copy(), np.zeros(3), np.zeros(3), []
    rho_inf = 2 / (1 - b2) - 1
    for t in range(1, steps + 1):
        g = GRADS[(t - 1) % 3]
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
            p = p - lr * m_hat * adaptive * rect
        else:
            p = p - lr * m_hat
        out.append(p)
    return out


def test_radam_both_branches():
    grads = [GRADS[i % 3] for i in range(8)]           # rho_t exceeds 5 from step 6 on with beta2=0.999
    _check(_trajectory(optim.RAdam, grads, lr=0.1), _radam_by_hand(0.1, 0.9, 0.999, 1e-8, 8))


def test_rmsprop_plain_and_centered():
    lr, alpha, eps = 0.01, 0.99, 1e-8
    p, sq, out = P0.copy(), np.zeros(3), []
    for g in GRADS:
        sq = alpha * sq + (1 - alpha) * g * g
        p = p - lr * g / (np.sqrt(sq) + eps)
        out.append(p)
    _check(_trajectory(optim.RMSprop, lr=lr), out)

    p, sq, ga, buf, out = P0.copy(), np.zeros(3), np.zeros(3), np.zeros(3), []
    for g in GRADS:
        sq = alpha * sq + (1 - alpha) * g * g
        ga = alpha * ga + (1 - alpha) * g
        buf = 0.5 * buf + g / (np.sqrt(sq - ga * ga) + eps)
        p = p - lr * buf
        out.append(p)
    _check(_trajectory(optim.RMSprop, lr=lr, centered=True, momentum=0.5), out)


def test_adagrad():
    lr, lr_decay, init, eps = 0.1, 0.5, 0.1, 1e-10
    p, s, out = P0.copy(), np.full(3, init), []
    for t, g in enumerate(GRADS, 1):
        s = s + g * g
        clr = lr / (1 + (t - 1) * lr_decay)
        p = p - clr * g / (np.sqrt(s) + eps)
        out.append(p)
    _check(_trajectory(optim.Adagrad, lr=lr, lr_decay=lr_decay, initial_accumulator_value=init), out)


def test_adadelta():
    lr, rho, eps = 1.0, 0.9, 1e-6
    p, sq, acc, out = P0.copy(), np.zeros(3), np.zeros(3), []
    for g in GRADS:
        sq = rho * sq + (1 - rho) * g * g
        delta = np.sqrt(acc + eps) / np.sqrt(sq + eps) * g
        acc = rho * acc + (1 - rho) * delta * delta
        p = p - lr * delta
        out.append(p)
    _check(_trajectory(optim.Adadelta), out)


def test_asgd():
    lr, lambd, alpha, t0 = 0.1, 1e-2, 0.75, 1.0
    p, ax, eta, mu, out = P0.copy(), np.zeros(3), float(np.float32(lr)), 1.0, []  # eta is a float32 tensor
    axs = []
    for t, g in enumerate(GRADS, 1):
        p = p * (1 - lambd * eta) - eta * g
        ax = p.copy() if mu == 1 else ax + (p - ax) * mu
        eta = float(np.float32(lr / (1 + lambd * lr * t) ** alpha))
        mu = float(np.float32(1 / max(1, t - t0)))
        out.append(p)
        axs.append(ax)
    x = ember.tensor(P0.copy(), requires_grad=True)
    opt = optim.ASGD([x], lr=lr, lambd=lambd, t0=t0)
    for g, e, a in zip(GRADS, out, axs):
        x.grad = ember.tensor(g)
        opt.step()
        np.testing.assert_allclose(x.detach().numpy(), e, rtol=1e-12)
        np.testing.assert_allclose(opt.state[x]["ax"].numpy(), a, rtol=1e-12)
    assert opt.state[x]["eta"].item() == pytest.approx(eta, rel=1e-7)


def test_rprop():
    lr, (em, ep), (smin, smax) = 0.01, (0.5, 1.2), (1e-6, 50)
    p, prev, size, out = P0.copy(), np.zeros(3), np.full(3, lr), []
    grads = [GRADS[0], GRADS[0], -GRADS[0], GRADS[1]]
    for g in grads:
        s = np.sign(g * prev)
        size = np.clip(size * np.where(s > 0, ep, np.where(s < 0, em, 1.0)), smin, smax)
        g = np.where(s < 0, 0.0, g)
        p = p - np.sign(g) * size
        prev = g
        out.append(p)
    _check(_trajectory(optim.Rprop, grads, lr=lr), out)


def test_lbfgs_solves_quadratic():
    a = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
    b = np.array([1.0, -1.0, 2.0])
    x_star = np.linalg.solve(a, b)
    for ls in (None, "strong_wolfe"):
        x = ember.tensor(np.zeros(3), requires_grad=True)
        opt = optim.LBFGS([x], lr=1, max_iter=50, line_search_fn=ls, tolerance_grad=1e-12, tolerance_change=1e-14)
        at, bt = ember.tensor(a), ember.tensor(b)

        def closure(opt=opt, x=x, at=at, bt=bt):
            opt.zero_grad()
            loss = 0.5 * (x @ (at @ x)) - bt @ x
            loss.backward()
            return loss

        loss = opt.step(closure)
        assert isinstance(loss, ember.Tensor)
        np.testing.assert_allclose(x.detach().numpy(), x_star, rtol=1e-6, atol=1e-8)
        state = opt.state[x]
        assert state["n_iter"] >= 2 and state["func_evals"] >= state["n_iter"]
        assert set(state) >= {"d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "prev_loss"}


def test_lbfgs_first_step_by_hand():
    # first iteration: d = -g, t = min(1, 1 / |g|_1) * lr
    x = ember.tensor(P0.copy(), requires_grad=True)
    opt = optim.LBFGS([x], lr=0.5, max_iter=1)

    def closure():
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss

    opt.step(closure)
    g = 2 * P0
    np.testing.assert_allclose(x.detach().numpy(), P0 - min(1.0, 1.0 / np.abs(g).sum()) * 0.5 * g, rtol=1e-12)


def test_lbfgs_errors():
    x = ember.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        optim.LBFGS([{"params": [x]}, {"params": [ember.zeros(1, requires_grad=True)]}])
    with pytest.raises(TypeError):
        optim.LBFGS([x]).step()


# ---------------------------------------------------------------- common behaviour

ALL = [(optim.SGD, {"lr": 0.1, "momentum": 0.9}), (optim.Adam, {}), (optim.AdamW, {}), (optim.Adamax, {}),
       (optim.NAdam, {}), (optim.RAdam, {}), (optim.RMSprop, {"centered": True, "momentum": 0.5}),
       (optim.Adagrad, {}), (optim.Adadelta, {}), (optim.ASGD, {}), (optim.Rprop, {})]
IDS = [c.__name__ for c, _ in ALL]


@pytest.mark.parametrize("cls,kwargs", ALL, ids=IDS)
def test_state_dict_round_trip_resumes_identically(cls, kwargs):
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(6)]
    p0 = rng.standard_normal((2, 3)).astype(np.float32)
    a = ember.tensor(p0.copy(), requires_grad=True)
    opt_a = cls([a], **kwargs)
    for g in grads:
        a.grad = ember.tensor(g)
        opt_a.step()
    b = ember.tensor(p0.copy(), requires_grad=True)
    opt_b = cls([b], **kwargs)
    for g in grads[:3]:
        b.grad = ember.tensor(g)
        opt_b.step()
    saved = copy.deepcopy(opt_b.state_dict())
    c = ember.tensor(b.detach().numpy().copy(), requires_grad=True)
    opt_c = cls([c], **kwargs)
    opt_c.load_state_dict(saved)
    for g in grads[3:]:
        c.grad = ember.tensor(g)
        opt_c.step()
    np.testing.assert_array_equal(c.detach().numpy(), a.detach().numpy())


@pytest.mark.parametrize("cls,kwargs", ALL, ids=IDS)
def test_grad_none_is_skipped(cls, kwargs):
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0, 4.0], requires_grad=True)
    opt = cls([a, b], **kwargs)
    a.grad = ember.tensor([0.5, -0.5])
    opt.step()
    assert b.tolist() == [3.0, 4.0]
    assert a.tolist() != [1.0, 2.0]
    if cls is not optim.Adagrad:  # Adagrad creates its state up front
        assert b not in opt.state


@pytest.mark.parametrize("cls,kwargs", ALL, ids=IDS)
def test_identity_memory_and_version(cls, kwargs):
    p = ember.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    arr = p._data
    view = p.detach()[1:]
    opt = cls([p], **kwargs)
    v0 = p._version
    p.grad = ember.ones(4)
    opt.step()
    assert p._data is arr
    assert p._version == v0 + 1
    assert view.tolist() == p.tolist()[1:]


@pytest.mark.parametrize("cls,kwargs", ALL, ids=IDS)
def test_float32_state_dtypes(cls, kwargs):
    p = ember.zeros(3, dtype=ember.float32, requires_grad=True)
    opt = cls([p], **kwargs)
    p.grad = ember.ones(3)
    opt.step()
    for key, value in opt.state[p].items():
        if isinstance(value, ember.Tensor):
            expected = ember.float32 if value.dim() == 0 else p.dtype
            assert value.dtype == expected, key
    assert p.dtype == ember.float32


def test_param_groups_with_different_lrs():
    a = ember.tensor([1.0], requires_grad=True)
    b = ember.tensor([1.0], requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.0)
    a.grad = ember.tensor([1.0])
    b.grad = ember.tensor([1.0])
    opt.step()
    assert a.item() == pytest.approx(0.9)
    assert b.item() == pytest.approx(0.5)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.0  # defaults fill the rest
    opt.param_groups[0]["lr"] = 0.2  # edited options apply on the next step
    opt.step()
    assert a.item() == pytest.approx(0.7)


def test_add_param_group_and_errors():
    a = ember.zeros(2, requires_grad=True)
    opt = optim.Adam([a])
    b = ember.zeros(2, requires_grad=True)
    opt.add_param_group({"params": [b], "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        opt.add_param_group({"params": [a * 2]})
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        opt.add_param_group({"params": [3]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([b])
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {ember.zeros(1, requires_grad=True)}})
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got ember.FloatTensor"):
        optim.SGD(a, lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([b, b], lr=0.1)


def test_named_parameters():
    a = ember.zeros(2, requires_grad=True)
    opt = optim.SGD([("w", a)], lr=0.1)
    assert opt.param_groups[0]["params"] == [a]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w"]


@pytest.mark.parametrize("make,msg", [
    (lambda p: optim.SGD(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.SGD(p, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda p: optim.SGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.SGD(p, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum requires"),
    (lambda p: optim.Adam(p, lr=-0.1), "Invalid learning rate: -0.1"),
    (lambda p: optim.Adam(p, eps=-1), "Invalid epsilon value: -1"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    (lambda p: optim.Adam(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.Adam(p, betas=(0, 0.9)), "betas must be either both floats or both Tensors"),
    (lambda p: optim.AdamW(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.NAdam(p, momentum_decay=-1), "Invalid momentum_decay value: -1"),
    (lambda p: optim.RMSprop(p, alpha=-1), "Invalid alpha value: -1"),
    (lambda p: optim.RMSprop(p, momentum=-1), "Invalid momentum value: -1"),
    (lambda p: optim.Adagrad(p, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda p: optim.Adagrad(p, initial_accumulator_value=-1), "Invalid initial_accumulator_value value: -1"),
    (lambda p: optim.Adadelta(p, rho=1.5), "Invalid rho value: 1.5"),
    (lambda p: optim.Rprop(p, etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    (lambda p: optim.ASGD(p, weight_decay=-1), "Invalid weight_decay value: -1"),
    (lambda p: optim.LBFGS(p, lr=-1), "Invalid learning rate: -1"),
    (lambda p: optim.SGD(p, lr=ember.tensor([0.1, 0.2])), "Tensor lr must be 1-element"),
])
def test_invalid_hyperparameters(make, msg):
    with pytest.raises(ValueError, match=msg.replace("(", "\\(").replace(")", "\\)")):
        make([ember.zeros(1, requires_grad=True)])


def test_fused_foreach_differentiable():
    p = [ember.zeros(2, requires_grad=True)]
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        optim.Adam(p, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        optim.SGD(p, fused=True, differentiable=True)
    with pytest.raises(NotImplementedError):
        optim.Adam(p, differentiable=True)
    for kwargs in ({"fused": True}, {"foreach": True}, {"capturable": True}):
        opt = optim.Adam(p, **kwargs)
        p[0].grad = ember.ones(2)
        opt.step()
    assert opt.defaults["capturable"] is True


def test_lr_as_tensor():
    p = ember.tensor([1.0], requires_grad=True)
    opt = optim.Adam([p], lr=ember.tensor(0.1))
    p.grad = ember.tensor([2.0])
    opt.step()
    assert p.item() == pytest.approx(0.9)


def test_complex_parameters():
    p = ember.tensor(np.array([1 + 2j, -1j]), requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    p.grad = ember.tensor(np.array([0.5 - 1j, 2 + 0j]))
    opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [1 - 0.05 + 2.1j, -0.2 - 1j])
    q = ember.tensor(np.array([1 + 2j]), requires_grad=True)
    opt = optim.Adam([q], lr=0.1)
    q.grad = ember.tensor(np.array([0.5 - 1j]))
    opt.step()  # componentwise on (real, imag) pairs: each moves by lr against its sign
    np.testing.assert_allclose(q.detach().numpy(), [0.9 + 2.1j], rtol=1e-7)


def test_zero_grad():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    p.grad = ember.tensor([3.0, 4.0])
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and g.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None
    opt.zero_grad()  # no gradient: nothing to do


def test_closure_runs_with_grad_and_returns_loss():
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    calls = []

    def closure():
        calls.append(ember.is_grad_enabled())
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with ember.no_grad():
        loss = opt.step(closure)
    assert calls == [True]
    assert loss.item() == 5.0
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6])
    assert opt.step() is None


def test_step_hooks():
    p = ember.tensor([1.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    seen = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: seen.append(("pre", o is opt, args, kwargs)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: seen.append(("post", args, kwargs)))
    h3 = optim.optimizer.register_optimizer_step_pre_hook(lambda o, args, kwargs: seen.append(("global",)))
    p.grad = ember.tensor([1.0])
    opt.step()
    assert seen == [("global",), ("pre", True, (), {}), ("post", (), {})]
    for h in (h1, h2, h3):
        h.remove()
    seen.clear()
    opt.step()
    assert seen == []
    # a pre-hook may replace the arguments
    opt.register_step_pre_hook(lambda o, args, kwargs: ((), {"closure": lambda: 7.0}))
    assert opt.step() == 7.0
    opt.register_step_pre_hook(lambda o, args, kwargs: 5)
    with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\)"):
        opt.step()


def test_state_dict_hooks():
    p = ember.tensor([1.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    sd = opt.state_dict()
    assert log == ["pre"] and sd["extra"] == 1
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append("load-pre"))
    opt.register_load_state_dict_post_hook(lambda o: log.append("load-post"))
    opt.load_state_dict(sd)
    assert log == ["pre", "load-pre", "load-post"]


def test_state_dict_format():
    a = ember.tensor([1.0, 2.0], requires_grad=True)
    b = ember.tensor([3.0], requires_grad=True)
    opt = optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], amsgrad=True)
    a.grad = ember.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert list(sd["state"]) == [0]
    assert list(sd["state"][0]) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    step = sd["state"][0]["step"]
    assert step.dtype == ember.float32 and step.dim() == 0 and step.item() == 1.0
    assert sd["state"][0]["exp_avg"] is opt.state[a]["exp_avg"]  # not a copy, as in torch
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5
    assert list(sd["param_groups"][0]) == ["lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach",
                                           "capturable", "differentiable", "fused", "decoupled_weight_decay",
                                           "params"]


def test_load_state_dict_validates_and_casts():
    a = ember.tensor([1.0, 2.0], dtype=ember.float32, requires_grad=True)
    opt = optim.Adam([a])
    a.grad = ember.ones(2)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    b = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    opt2 = optim.Adam([b])
    opt2.load_state_dict(sd)
    assert opt2.state[b]["exp_avg"].dtype == ember.float64
    assert opt2.state[b]["step"].dtype == ember.float32  # steps keep their dtype
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        optim.Adam([{"params": [b]}, {"params": [ember.zeros(1, requires_grad=True)]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that doesn't match the size "
                                         "of optimizer's group"):
        optim.Adam([b, ember.zeros(1, requires_grad=True)]).load_state_dict(sd)
    # loading does not replace the optimizer's parameters, and later steps use the loaded state
    assert opt2.param_groups[0]["params"][0] is b
    b.grad = ember.ones(2, dtype=ember.float64)
    opt2.step()
    assert opt2.state[b]["step"].item() == 2.0


def test_load_old_style_python_step():
    p = ember.tensor([1.0], requires_grad=True)
    opt = optim.Adam([p])
    p.grad = ember.ones(1)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    sd["state"][0]["step"] = 1  # pre-1.12 checkpoints stored a Python number
    opt2 = optim.Adam([ember.tensor([1.0], requires_grad=True)])
    opt2.load_state_dict(sd)
    assert isinstance(next(iter(opt2.state.values()))["step"], ember.Tensor)


def test_repr():
    opt = optim.SGD([ember.zeros(1, requires_grad=True)], lr=0.1)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n    foreach: None\n"
                         "    fused: None\n    lr: 0.1\n    maximize: False\n    momentum: 0\n    nesterov: False\n"
                         "    weight_decay: 0\n)")


def test_adagrad_state_created_up_front():
    p = ember.zeros(2, requires_grad=True)
    opt = optim.Adagrad([p], initial_accumulator_value=0.5)
    assert opt.state[p]["sum"].tolist() == [0.5, 0.5] and opt.state[p]["step"].item() == 0.0


def test_custom_optimizer_subclass_gets_hooks():
    class Halve(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {})

        def step(self, closure=None):
            for p in self.param_groups[0]["params"]:
                p.data = p * 0.5

    p = ember.tensor([4.0], requires_grad=True)
    opt = Halve([p])
    log = []
    opt.register_step_post_hook(lambda o, a, k: log.append(1))
    opt.step()
    assert p.item() == 2.0 and log == [1]


def test_required_option():
    class Needs(optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": optim.optimizer.required})

    with pytest.raises(ValueError, match="parameter group didn't specify a value of required optimization parameter "
                                         "lr"):
        Needs([ember.zeros(1, requires_grad=True)])
    assert repr(optim.optimizer.required) == "<required parameter>"


def test_pickle_round_trip():
    import pickle
    p = ember.tensor([1.0], requires_grad=True)
    opt = optim.Adam([p])
    p.grad = ember.ones(1)
    opt.step()
    opt2 = pickle.loads(pickle.dumps(opt))
    assert opt2.param_groups[0]["lr"] == 1e-3
    assert opt2._optimizer_step_pre_hooks == {}


def test_nn_parameter():
    nn = pytest.importorskip("ember.nn")
    if not hasattr(nn, "Parameter"):
        pytest.skip("ember.nn.Parameter not available yet")
    w = nn.Parameter(ember.tensor([1.0, -1.0]))
    opt = optim.SGD([w], lr=0.5)
    w.grad = ember.tensor([1.0, 1.0])
    opt.step()
    assert isinstance(w, nn.Parameter) and w.tolist() == [0.5, -1.5]


def test_large_parameters_use_the_chunked_path():
    """Parameters bigger than one chunk (and than the BLAS threshold) update exactly like small ones."""
    from ember.optim import _functional as K
    n = K._CHUNK * 2 + 123
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(n)
    gs = [rng.standard_normal(n) for _ in range(3)]
    big = ember.tensor(p0.copy(), requires_grad=True)
    small = [ember.tensor(p0[i:i + 1000].copy(), requires_grad=True) for i in range(0, n, 1000)]
    opt_big, opt_small = optim.Adam([big], lr=0.1), optim.Adam(small, lr=0.1)
    for g in gs:
        big.grad = ember.tensor(g)
        for i, s in enumerate(small):
            s.grad = ember.tensor(g[i * 1000:(i + 1) * 1000])
        opt_big.step()
        opt_small.step()
    np.testing.assert_allclose(big.detach().numpy(), np.concatenate([s.detach().numpy() for s in small]),
                               rtol=1e-13, atol=1e-15)


def test_non_contiguous_parameter():
    base = ember.tensor(np.arange(12.0).reshape(3, 4))
    p = base.t().detach().requires_grad_()  # a strided view: updated in place through the whole-array path
    opt = optim.Adam([p], lr=0.1)
    p.grad = ember.ones(4, 3, dtype=ember.float64)
    opt.step()
    np.testing.assert_allclose(base.numpy(), np.arange(12.0).reshape(3, 4) - 0.1, rtol=1e-7)


def test_adafactor_first_step_matches_the_factored_update():
    w = ember.nn.Parameter(ember.tensor([[1.0, -1.0], [2.0, 0.5]]))
    v = ember.nn.Parameter(ember.tensor([1.0, 2.0]))
    opt = ember.optim.Adafactor([w, v], lr=0.01)
    gw = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    w.grad = ember.tensor(gw)
    v.grad = ember.tensor([-3.0, 0.5])
    opt.step()
    # step 1: the estimates are the first squared gradients; rho = min(lr, 1) = 0.01
    row, col = (gw ** 2).mean(1, keepdims=True), (gw ** 2).mean(0, keepdims=True)
    update = gw / np.sqrt(row @ col / row.mean())
    update /= max(1.0, np.sqrt((update ** 2).mean()))
    w0 = np.array([[1.0, -1.0], [2.0, 0.5]])
    alpha = max(1e-3, np.sqrt((w0 ** 2).mean())) * 0.01
    np.testing.assert_allclose(w.detach().numpy(), w0 - alpha * update, rtol=1e-5)
    # a vector: the update is g / |g| = sign(g), scaled by RMS(v) * rho
    np.testing.assert_allclose(v.detach().numpy(), [1.0 + np.sqrt(2.5) * 0.01, 2.0 - np.sqrt(2.5) * 0.01], rtol=1e-6)
    st = opt.state[w]
    assert sorted(st) == ["col_var", "row_var", "step"] and st["row_var"].shape == (2, 1)
    assert sorted(opt.state[v]) == ["step", "variance"] and float(st["step"]) == 1.0
    with pytest.raises(ValueError, match="^Clipping threshold d should be >= 1 but is: 0.5$"):
        ember.optim.Adafactor([v], d=0.5)
