"""ember.compile (NOTE [ Compiled regions ]): captured programs replay with eager's results, forward and backward,
recompile when guards change, and fall back to eager (loudly, or as an error with fullgraph=True) where the capture
cannot reproduce the function."""
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.compiler import CompileError, CompiledFunction, _region


def _programs(c):
    fn = c._compiled if isinstance(c, nn.Module) else c
    return [type(v).__name__ for v in fn.cache.values()]


def _chain(x, w):
    y = x
    for _ in range(20):
        y = (y * w + 0.1).tanh() - y * 0.5
    return y.sum(), y


def test_a_compiled_function_replays_forward_and_backward():
    f = ember.compile(_chain)
    assert isinstance(f, CompiledFunction)
    rng = np.random.default_rng(0)
    w = ember.tensor(1.01, requires_grad=True)
    for k in range(3):  # the first call captures, the others replay; new values each time
        x = ember.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
        s, y = f(x, w)
        s_e, y_e = _chain(x, w)
        np.testing.assert_allclose(y.detach().numpy(), y_e.detach().numpy(), rtol=1e-6)
        (s * 2).backward()
        gx, gw = x.grad.numpy().copy(), w.grad.numpy().copy()
        x.grad = w.grad = None
        (s_e * 2).backward()
        np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gw, w.grad.numpy(), rtol=1e-5)
        w.grad = None
        assert s.grad_fn is not None
    assert _programs(f) == ["_Program"] and len(f.compile_seconds) == 1
    with ember.no_grad():  # grad mode is a guard: a second program, without a backward
        f(ember.ones(16), w)
    assert _programs(f) == ["_Program", "_Program"]
    f(ember.ones(4, 4), w)  # so are shapes
    assert len(f.cache) == 3


def test_a_compiled_module_trains_as_the_eager_one():
    def build():
        ember.manual_seed(0)
        return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                             nn.Dropout(0.2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5), nn.LayerNorm(5))
    x = ember.randn(6, 1, 8, 8)
    y = ember.randint(0, 5, (6,))
    runs = []
    for compiled in (False, True):
        m = build()
        model = ember.compile(m) if compiled else m
        opt = ember.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        ember.manual_seed(1)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        m.eval()
        with ember.no_grad():
            runs.append((losses, model(x).numpy(), m[1].running_mean.numpy().copy(),
                         int(m[1].num_batches_tracked)))
        if compiled:
            assert _programs(model) == ["_Program", "_Program"]  # training, then eval under no_grad
            assert list(model.state_dict())[0].startswith("_orig_mod.")
    (l_e, out_e, rm_e, n_e), (l_c, out_c, rm_c, n_c) = runs
    np.testing.assert_allclose(l_c, l_e, rtol=1e-5)
    np.testing.assert_allclose(out_c, out_e, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rm_c, rm_e, rtol=1e-5, atol=1e-7)
    assert n_c == n_e == 4


def test_what_the_capture_cannot_see_runs_eagerly():
    calls = []

    def data_dependent(x):
        calls.append(1)
        return x * 2 if float(x.sum()) > 0 else x * 3  # a branch on a value: baked by the capture
    f = ember.compile(data_dependent)
    with pytest.warns(UserWarning, match=r"data_dependent runs eagerly: it reads a tensor's value on the host "
                                         r"\(Tensor.item\)"):
        r = f(ember.ones(3))
    assert r.tolist() == [2.0, 2.0, 2.0]
    assert f(-ember.ones(3)).tolist() == [-3.0, -3.0, -3.0]  # eager from now on, for these guards
    assert _programs(f) == ["object"] and f.reasons

    strict = ember.compile(data_dependent, fullgraph=True)
    with pytest.raises(CompileError, match=r"fullgraph=True\): .*data_dependent cannot be compiled"):
        strict(ember.ones(3))

    with pytest.warns(UserWarning, match="returns int"):
        assert ember.compile(lambda x: 3)(ember.ones(1)) == 3


def test_double_backward_through_a_region_is_refused():
    f = ember.compile(lambda x: (x * x).sum())
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    f(x)  # captures
    g, = ember.autograd.grad(f(x), x)
    assert g.tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match="not differentiable again"):
        ember.autograd.grad(f(x), x, create_graph=True)


def test_recompile_limit_warns_and_runs_eagerly():
    f = ember.compile(lambda x: x + 1)
    for n in range(1, 9):
        f(ember.ones(n))
    with pytest.warns(UserWarning, match="recompile limit"):
        assert f(ember.ones(9)).tolist() == [2.0] * 9
    assert len(f.cache) == 8


def test_is_compiling_during_the_capture():
    seen = []

    def probe(x):
        seen.append(ember.compiler.is_compiling())
        return x * 2
    ember.compile(probe)(ember.ones(2))
    assert seen[0] is True and ember.compiler.is_compiling() is False


def test_compile_as_decorator_with_and_without_arguments():
    @ember.compile
    def f(x):
        return x * 3

    @ember.compile(fullgraph=True, dynamic=False)
    def g(x):
        return x + 1
    assert f(ember.ones(2)).tolist() == [3.0, 3.0]
    assert g(ember.ones(2)).tolist() == [2.0, 2.0]
    assert g(ember.zeros(2)).tolist() == [1.0, 1.0]


def test_eager_backend_and_disable_return_the_model():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.compile(abs, backend="eager") is abs
        assert ember.compile(abs, disable=True) is abs


def test_bad_arguments_raise_as_torch():
    with pytest.raises(AssertionError, match="A callable function is expected, but <class 'int'> is provided."):
        ember.compile(3)
    with pytest.raises(RuntimeError, match="Either mode or options"):
        ember.compile(abs, mode="default", options={"trace.enabled": True})


def test_compiler_switches():
    assert ember.compiler.is_compiling() is False and ember.compiler.is_dynamo_compiling() is False
    assert ember.compiler.disable(abs)(-2) == 2 and ember.compiler.disable()(abs)(-3) == 3
    assert ember.compiler.allow_in_graph(abs) is abs
    assert ember.compiler.reset() is None
    assert "eager" in ember.compiler.list_backends()


@pytest.mark.parametrize("make", [lambda: nn.GroupNorm(2, 4), lambda: nn.InstanceNorm2d(4, affine=True),
                                  lambda: nn.RMSNorm([4, 5, 5]), lambda: nn.BatchNorm2d(4)])
def test_normalizations_compile_with_their_gradients(make):
    ember.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), make())
    c = ember.compile(m)
    w = ember.randn(2, 4, 5, 5)  # (y * y).sum() would be about constant after a normalization: no gradient to test
    for k in range(3):
        x = ember.randn(2, 3, 5, 5)
        y = c(x)
        (y * w).sum().backward()
        got = [p.grad.numpy().copy() for p in m.parameters()]
        m.zero_grad()
        y_e = m(x)  # (batch norm: its running statistics move once more; the outputs use the batch's)
        (y_e * w).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), y_e.detach().numpy(), rtol=1e-4, atol=1e-5)
        for g, p in zip(got, m.parameters()):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-4, atol=1e-5)
        m.zero_grad()
    assert _programs(c) == ["_Program"]


def test_backward_constants_computed_from_the_output_gradient_are_caught():
    class SignGrad(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g * 0 + ember.from_numpy(np.sign(g.detach().numpy()) * 2)  # computed aside: a constant

    f = ember.compile(lambda x: SignGrad.apply(x) * 3)
    x = ember.randn(5, requires_grad=True)
    with pytest.warns(UserWarning, match="gradients for other input values differ"):
        f(x)
    for g in (ember.ones(5), -ember.ones(5)):
        (gx,) = ember.autograd.grad(f(x), [x], g)
        np.testing.assert_array_equal(gx.numpy(), np.sign(g.numpy()) * 2)


def test_a_compiled_convolution_takes_each_output_gradient():
    ember.manual_seed(0)
    conv = nn.Conv2d(4, 4, 3, padding=1, bias=False)  # stride 1: both gradients from one gradient grid
    compiled = ember.compile(conv)
    x = ember.randn(2, 4, 6, 6, requires_grad=True)
    compiled(x).sum().backward()
    assert _programs(compiled) == ["_Program"]
    for _ in range(2):
        g = ember.randn(2, 4, 6, 6)
        got = ember.autograd.grad(compiled(x), [x, conv.weight], g)
        want = ember.autograd.grad(conv(x), [x, conv.weight], g)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)


def test_a_faithful_region_slower_than_eager_runs_eagerly_and_quietly(monkeypatch):
    times = iter([1.0, 2.0])  # eager's timing run, then the replay's
    monkeypatch.setattr(_region, "_timed", lambda fn: next(times))
    f = ember.compile(lambda x: x * 2 + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(ember.ones(3)).tolist() == [3.0, 3.0, 3.0]
        assert f(ember.zeros(3)).tolist() == [1.0, 1.0, 1.0]
    assert _programs(f) == ["object"] and "slower than eager" in f.reasons[0]
