"""Graph breaks (NOTE [ Graph breaks at submodules ]) and ember._dynamo: a module whose capture fails runs its own
forward eagerly and its submodules as regions of their own; explain() reports regions and breaks with the user's
line; config, reset, disable and graph_break behave as torch's."""
import inspect
import warnings

import numpy as np
import pytest

import ember
import ember._dynamo
from ember import nn
from ember.compiler import CompileError


class Gate(nn.Module):
    """Reads a value on the host: the capture of any module calling it breaks."""

    def forward(self, x):
        return x * 2 if x.detach().sum().item() > 0 else x * 3  # the break


BREAK_LINE = inspect.getsourcelines(Gate.forward)[1] + 1


def _model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), Stack(), nn.LayerNorm(8))


class Stack(nn.Module):
    """Calls the modules of a ModuleList, which is itself never called: a split looks through it."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8), Gate(), nn.Tanh()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _grads(m):
    return [p.grad.numpy().copy() for p in m.parameters()]


def test_a_module_with_a_break_runs_its_other_submodules_compiled():
    eager, model = _model(), _model()
    compiled = ember.compile(model)
    with pytest.warns(UserWarning, match=r"Sequential is split at its submodules: it reads a tensor's value on the "
                                         r"host \(Tensor.item\)"):
        first = compiled(ember.ones(3, 4))
    np.testing.assert_allclose(first.detach().numpy(), eager(ember.ones(3, 4)).detach().numpy(), rtol=1e-6)
    for sign in (1.0, -1.0):  # both branches of the gate, which runs eagerly each time
        x = ember.tensor(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32) * sign)
        y, y_eager = compiled(x), eager(x)
        np.testing.assert_allclose(y.detach().numpy(), y_eager.detach().numpy(), rtol=1e-5, atol=1e-6)
        y.square().sum().backward()
        y_eager.square().sum().backward()
        for g, g_eager in zip(_grads(model), _grads(eager)):
            np.testing.assert_allclose(g, g_eager, rtol=1e-4, atol=2e-5)  # create_graph's formulas: rounding
        model.zero_grad()
        eager.zero_grad()
    names = sorted(name for name, _, _ in compiled._compiled.regions())
    assert names == ["Sequential.LayerNorm", "Sequential.Linear", "Sequential.Stack.Linear", "Sequential.Stack.Tanh",
                     "Sequential.Tanh"]
    assert "forward" not in model[0].__dict__  # the submodules are left as they were


def test_explain_reports_the_break_and_its_line():
    def f(x):
        y = x.sin()
        if y.sum() > 0:  # the break
            y = y * 2
        return y.cos()
    out = ember._dynamo.explain(f)(ember.ones(3))
    assert isinstance(out, ember._dynamo.ExplainOutput)
    assert (out.graph_count, out.graph_break_count) == (0, 1)  # a function has no submodules to compile
    reason = out.break_reasons[0]
    assert "Tensor.item" in reason.reason and reason.graph_break
    assert reason.user_stack[-1].lineno == inspect.getsourcelines(f)[1] + 2
    text = str(out)
    assert text.startswith("Graph Count: 0\nGraph Break Count: 1\nOp Count: 0\nBreak Reasons:\n  Break Reason 1:")

    full = ember._dynamo.explain(_model())(ember.ones(2, 4))
    assert full.graph_count == 5 and full.graph_break_count == 1  # one break, though three modules split or ran eagerly
    assert full.break_reasons[0].user_stack[-1].lineno == BREAK_LINE
    assert full.op_count == sum(map(len, full.ops_per_graph)) > 0
    assert ["addmm"] in full.ops_per_graph
    assert full.out_guards[0] == ("Sequential.Linear: grad_mode=True, autocast=False, training=[True], args=(Tensor("
                                  "shape=[2, 4], dtype=float32, device=cpu, requires_grad=False)), kwargs={}, "
                                  "parameters and buffers: the same objects")

    clean = ember._dynamo.explain(lambda x: (x * 2).relu())(ember.ones(3))
    assert (clean.graph_count, clean.graph_break_count, clean.break_reasons) == (1, 0, [])
    with pytest.warns(FutureWarning, match="explain"):
        old = ember._dynamo.explain(lambda x: x + 1, ember.ones(2))
    assert old.graph_count == 1


def test_fullgraph_names_the_line_of_the_break():
    assert ember._dynamo.exc.Unsupported is CompileError
    with pytest.raises(CompileError, match=rf"fullgraph=True\): Sequential cannot be compiled: it reads a tensor's "
                                           rf"value on the host .* \(at .*test_graph_breaks.py, line {BREAK_LINE}: "):
        ember.compile(_model(), fullgraph=True)(ember.ones(2, 4))


def test_graph_break_and_disable_break_a_region():
    def g(x):
        y = x * 2
        ember._dynamo.graph_break()
        return y + 1
    with pytest.warns(UserWarning, match=r"g runs eagerly: graph_break\(\) called \(at "):
        assert ember.compile(g)(ember.ones(2)).tolist() == [3.0, 3.0]
    assert ember._dynamo.graph_break() is None  # outside a capture: nothing

    calls = []

    @ember.compiler.disable
    def logged(x):
        calls.append(x.sum().item())  # a host read: fine, it runs eagerly
        return x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)

        def forward(self, x):
            return self.b(logged(self.a(x)))
    ember.manual_seed(0)
    net = Net()
    compiled = ember.compile(net)
    with pytest.warns(UserWarning, match=r"Net is split at its submodules: it calls .*logged, which is disabled"):
        compiled(ember.ones(1, 2))
    want = net(ember.ones(1, 2))
    np.testing.assert_allclose(compiled(ember.ones(1, 2)).detach().numpy(), want.detach().numpy(), rtol=1e-6)
    assert sorted(name for name, _, _ in compiled._compiled.regions()) == ["Net.Linear", "Net.Linear"]
    assert logged(ember.ones(2)).tolist() == [1.0, 1.0] and calls[-1] == 2.0

    leaf = nn.Linear(2, 2)
    assert ember._dynamo.disable(leaf) is leaf
    with pytest.warns(UserWarning, match="disabled for compilation"):
        ember.compile(nn.Sequential(leaf))(ember.ones(1, 2))


def test_config_recompile_limit_and_reset():
    cfg = ember._dynamo.config
    assert (cfg.recompile_limit, cfg.cache_size_limit, cfg.suppress_errors) == (8, 8, False)
    with pytest.raises(AttributeError, match=r"ember._dynamo.config.no_such_switch does not exist"):
        cfg.no_such_switch = 1
    with pytest.raises(AttributeError, match="does not exist"):
        _ = cfg.no_such_switch
    f = ember.compile(lambda x: x + 1)
    cfg.cache_size_limit = 2
    try:
        assert cfg.recompile_limit == 2
        f(ember.ones(1))
        f(ember.ones(2))
        with pytest.warns(UserWarning, match=r"recompile limit \(2\)"):
            f(ember.ones(3))
    finally:
        cfg.recompile_limit = 8
    assert len(f.cache) == 2
    cfg.error_on_recompile = True
    try:
        f(ember.ones(2))  # guards that hold: no recompile
        with pytest.raises(ember._dynamo.exc.RecompileError, match="Recompiling function"):
            f(ember.ones(5))
    finally:
        cfg.error_on_recompile = False
    ember._dynamo.reset()
    assert len(f.cache) == 0
    f(ember.ones(3))
    assert len(f.cache) == 1
    ember.compiler.reset()
    assert len(f.cache) == 0


def test_marks_and_pass_through_decorators():
    t = ember.ones(2, 3)
    assert ember._dynamo.mark_dynamic(t, 0) is None and ember._dynamo.maybe_mark_dynamic(t, 1) is None
    assert ember._dynamo.mark_static(t) is None
    assert ember._dynamo.allow_in_graph(abs) is abs and ember._dynamo.assume_constant_result(abs) is abs
    assert ember._dynamo.is_compiling() is False and ember._dynamo.is_dynamo_supported()
    assert "inductor" in ember._dynamo.list_backends()
    assert ember._dynamo.OptimizedModule is ember.compiler._module.OptimizedModule
    doubled = ember._dynamo.optimize("inductor")(lambda x: x * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert doubled(ember.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(AttributeError):
        _ = ember._dynamo.no_such_name


def test_explain_counts_a_faithful_region_that_eager_outran(monkeypatch):
    times = iter([1.0, 2.0])  # eager's timing run, then the replay's: slower
    monkeypatch.setattr(ember.compiler._region, "_timed", lambda fn: next(times))
    out = ember._dynamo.explain(lambda x: x * 2 + 1)(ember.ones(3))
    assert (out.graph_count, out.graph_break_count) == (1, 0)
    assert out.out_guards[0].endswith("(runs eagerly: eager was faster)")
