"""autograd.forward_ad (NOTE [ Forward-mode AD ]): dual tensors, tangents through ops (formulas and the backward
route), in-place writes, views, custom Functions, and gradcheck's forward-mode check."""
import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
import ember.nn.functional as F
from ember.autograd import forward_ad as _fw
from ember.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck


def _t(*shape, seed=0, lo=-1.0, hi=1.0):
    return ember.tensor(np.random.default_rng(seed).uniform(lo, hi, shape))


def _jvp(f, xs, ts):
    """f's outputs' tangents through forward AD."""
    with fwAD.dual_level():
        out = f(*[fwAD.make_dual(x, t) for x, t in zip(xs, ts)])
        outs = out if isinstance(out, tuple) else (out,)
        return [fwAD.unpack_dual(o).tangent for o in outs]


def _reference(f, xs, ts):
    """The same through reverse mode: the Jacobian of each output times the tangents."""
    outs = f(*xs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    res = []
    for k in range(len(outs)):
        jac = ember.autograd.functional.jacobian(lambda *a: (f(*a) if len(outs) == 1 else f(*a)[k]), tuple(xs))
        jac = jac if isinstance(jac, tuple) else (jac,)
        o = outs[k]
        total = np.zeros(tuple(o.shape))
        for j, t in zip(jac, ts):
            total += np.tensordot(j.numpy(), t.numpy(), axes=t.dim())
        res.append(total)
    return res


CASES = {
    "add": (lambda a, b: a + b, [(3, 4), (4,)]),
    "sub-scalar": (lambda a: 2.0 - a, [(5,)]),
    "mul": (lambda a, b: a * b, [(3, 4), (3, 1)]),
    "div": (lambda a, b: a / b, [(6,), (6,)]),
    "unary chain": (lambda a: (a.exp() * a.sin() + a.cos() - a.tanh() * a.sigmoid()).square(), [(7,)]),
    "log-sqrt-reciprocal": (lambda a: a.log() + a.sqrt() + a.reciprocal(), [(5,)]),
    "matmul": (lambda a, b: a @ b, [(3, 4), (4, 2)]),
    "bmm": (lambda a, b: ember.bmm(a, b), [(2, 3, 4), (2, 4, 5)]),
    "mv-dot": (lambda a, b: (a @ b) @ (a @ b), [(3, 4), (4,)]),
    "softmax": (lambda a: F.softmax(a, -1), [(3, 5)]),
    "log_softmax": (lambda a: F.log_softmax(a, 0), [(4, 3)]),
    "layer_norm": (lambda a, w, b: F.layer_norm(a, (4,), w, b), [(3, 4), (4,), (4,)]),
    "conv2d": (lambda a, w: F.conv2d(a, w, padding=1), [(1, 2, 5, 5), (3, 2, 3, 3)]),
    "reductions": (lambda a: (a.sum(0), a.mean(1), a.amax(1), a.norm()), [(3, 4)]),
    "views": (lambda a: a.t().reshape(2, 6)[:, 1:4].unsqueeze(0).expand(2, 2, 3), [(3, 4)]),
    "cat-stack-where": (lambda a, b: ember.stack([ember.cat([a, b]).sum(0), ember.where(b > 0, a, b).sum(0)]),
                        [(2, 3), (2, 3)]),
    "gather-index": (lambda a: a.gather(1, ember.tensor([[0, 2], [1, 1]])) + a[ember.tensor([1, 0])][:, :2],
                     [(2, 3)]),
    "pow-clamp-relu": (lambda a: (a ** 3).clamp(-0.2, 0.5) + ember.relu(a) * a.abs(), [(6,)]),
    "cumsum-sort": (lambda a: a.cumsum(0) + a.sort()[0], [(5,)]),
    "mse-cross_entropy": (lambda a: F.mse_loss(a, ember.ones(3, 4, dtype=ember.float64))
                          + F.cross_entropy(a, ember.tensor([0, 3, 1])), [(3, 4)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_tangents_match_reverse_mode(name):
    f, shapes = CASES[name]
    lo = 0.5 if name == "log-sqrt-reciprocal" else -1.0
    xs = [_t(*s, seed=i, lo=lo) for i, s in enumerate(shapes)]
    ts = [_t(*s, seed=10 + i) for i, s in enumerate(shapes)]
    for got, want in zip(_jvp(f, xs, ts), _reference(f, xs, ts)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-10)


CASES["linear-relu"] = (lambda x, w, b: F.relu(F.linear(x, w, b)) + F.linear(x.unsqueeze(0), w).sum(0),
                       [(3, 4), (5, 4), (5,)])


@pytest.mark.parametrize("name", ["add", "sub-scalar", "mul", "div", "unary chain", "log-sqrt-reciprocal", "matmul",
                                  "bmm", "mv-dot", "linear-relu"])
def test_formulas_agree_with_the_backward_route(name, monkeypatch):
    f, shapes = CASES[name]
    lo = 0.5 if name == "log-sqrt-reciprocal" else -1.0
    xs = [_t(*s, seed=i, lo=lo) for i, s in enumerate(shapes)]
    ts = [_t(*s, seed=10 + i) for i, s in enumerate(shapes)]
    fast = _jvp(f, xs, ts)
    monkeypatch.setattr(_fw, "_USE_RULES", [False])
    slow = _jvp(f, xs, ts)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def test_levels_and_dual_tensors():
    x, t = _t(3), _t(3, seed=1)
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(x, t)
    with fwAD.dual_level() as level:
        assert level == 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        d = fwAD.make_dual(x, t)
        assert d._base is x and not d.requires_grad
        primal, tangent = fwAD.unpack_dual(d)
        assert tangent is t and primal._base is x and fwAD.unpack_dual(primal).tangent is None
        assert fwAD.unpack_dual(x) == (x, None)
        assert type(fwAD.unpack_dual(d)).__name__ == "UnpackedDualTensor"
        with pytest.raises(RuntimeError, match=r"different size .* Tensor is of size \[3\] while the given forward "
                                               r"gradient is of size \[4\]"):
            fwAD.make_dual(x, _t(4))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(ember.arange(3), ember.arange(3))
        with pytest.raises(RuntimeError, match="Invalid level"):
            fwAD.unpack_dual(d, level=5)
        y = d * 2
        assert fwAD.unpack_dual(d > 0).tangent is None and fwAD.unpack_dual(d.argmax()).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None
    assert fwAD.unpack_dual(y).tangent is None  # the level is gone, and its tangents with it
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()
    level = fwAD.enter_dual_level()
    fwAD.exit_dual_level(level=level)


def test_in_place_writes_carry_the_tangent():
    x, t = _t(4), ember.ones(4, dtype=ember.float64)
    with fwAD.dual_level():
        def tangent(f):
            d = fwAD.make_dual(x.clone(), t.clone())
            r = f(d)
            return fwAD.unpack_dual(d if r is None else r).tangent.numpy()
        np.testing.assert_array_equal(tangent(lambda d: d.mul_(3)), [3, 3, 3, 3])
        np.testing.assert_array_equal(tangent(lambda d: d.add_(d)), [2, 2, 2, 2])
        np.testing.assert_array_equal(tangent(lambda d: (d[1:].mul_(3), d)[1]), [1, 3, 3, 3])  # through a view
        np.testing.assert_array_equal(tangent(lambda d: d.__setitem__(1, 5.0)), [1, 0, 1, 1])
        np.testing.assert_array_equal(tangent(lambda d: d.__setitem__(slice(0, 2), d[2:] * 2)), [2, 2, 1, 1])
        np.testing.assert_array_equal(tangent(lambda d: d.masked_fill_(ember.tensor([True, False, True, False]),
                                                                        0.0)), [0, 1, 0, 1])
        np.testing.assert_array_equal(tangent(lambda d: d.fill_(2.0)), [0, 0, 0, 0])
        np.testing.assert_array_equal(tangent(lambda d: d.index_put_((ember.tensor([0]),),
                                                                     ember.tensor([1.0], dtype=ember.float64))),
                                      [0, 1, 1, 1])
        np.testing.assert_allclose(tangent(lambda d: d.exp_()), x.exp().numpy())
        np.testing.assert_array_equal(tangent(lambda d: d.unsqueeze_(0)), [[1, 1, 1, 1]])
        z = ember.zeros(4, dtype=ember.float64)
        z.copy_(fwAD.make_dual(x, t * 5))
        np.testing.assert_array_equal(fwAD.unpack_dual(z).tangent.numpy(), [5, 5, 5, 5])
        out = ember.empty(4, dtype=ember.float64)
        ember.add(fwAD.make_dual(x, t), 1.0, out=out)
        np.testing.assert_array_equal(fwAD.unpack_dual(out).tangent.numpy(), [1, 1, 1, 1])
        with pytest.raises(NotImplementedError, match="in-place resize_ of a dual tensor"):
            fwAD.make_dual(x.clone(), t).resize_(2)


class _Cube(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        ctx.x = x
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        return g * 3 * ctx.x ** 2

    @staticmethod
    def jvp(ctx, t):
        return t * 3 * ctx.x ** 2


class _NoJvp(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


def test_custom_functions_use_their_jvp():
    x, t = _t(3), _t(3, seed=1)
    with fwAD.dual_level():
        y = _Cube.apply(fwAD.make_dual(x, t))
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(), (3 * x ** 2 * t).numpy())
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            _NoJvp.apply(fwAD.make_dual(x, t))


def test_gradcheck_checks_forward_mode():
    x = _t(4).requires_grad_()
    w = _t(3, 4, seed=2).requires_grad_()
    assert gradcheck(lambda x, w: F.softmax(w @ x.sin(), 0), (x, w), check_forward_ad=True)
    assert gradcheck(_Cube.apply, (x,), check_forward_ad=True)
    z = ember.tensor(np.array([1 + 2j, -0.5 + 0.3j]), requires_grad=True)
    assert gradcheck(lambda z: (z * z).exp(), (z,), check_forward_ad=True)

    class Wrong(_Cube):
        @staticmethod
        def jvp(ctx, t):
            return t * 2 * ctx.x ** 2
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch for output 0"):
        gradcheck(Wrong.apply, (x,), check_forward_ad=True)
    assert gradgradcheck(lambda x: (x * x).sin(), (x,), check_fwd_over_rev=True)


def test_outside_a_level_nothing_changes():
    x = _t(3).requires_grad_()
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_func_jvp_and_jacfwd_run_in_forward_mode(monkeypatch):
    from ember import func
    from ember.func import _transforms
    opened = []
    real = _transforms._forward_jvp
    monkeypatch.setattr(_transforms, "_forward_jvp", lambda *a: opened.append(1) or real(*a))
    x, v = _t(4), _t(4, seed=1)

    def f(t):
        return (t.sin() * t ** 3).sum()
    # Hessian-vector product, forward over reverse: jvp of grad
    _, hvp = func.jvp(func.grad(f), (x,), (v,))
    hess = ember.autograd.functional.hessian(f, x)
    np.testing.assert_allclose(hvp.numpy(), (hess @ v).numpy(), rtol=1e-10)
    np.testing.assert_allclose(func.hessian(f)(x).numpy(), hess.numpy(), rtol=1e-10)
    a, b = _t(2, 3, seed=2), _t(3, seed=3)
    (ja, jb), aux = func.jacfwd(lambda a, b: (a @ b.exp(), b.sum()), argnums=(0, 1), has_aux=True)(a, b)
    ra, rb = func.jacrev(lambda a, b: a @ b.exp(), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ja.numpy(), ra.numpy(), rtol=1e-12)
    np.testing.assert_allclose(jb.numpy(), rb.numpy(), rtol=1e-12)
    assert float(aux) == pytest.approx(float(b.sum()))
    # a jvp inside a jvp: the inner one takes reverse mode (one level at a time)
    _, inner = func.jvp(lambda t: func.jvp(lambda s: (s ** 3).sum(), (t,), (v,))[1], (x,), (v,))
    np.testing.assert_allclose(float(inner), float((6 * x * v * v).sum()), rtol=1e-10)
    assert opened
