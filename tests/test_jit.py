"""ember.jit: TorchScript's decorators and entry points run the code eagerly; TorchScript files are refused."""
import pytest

import ember
from ember import nn


class Net(nn.Module):
    scale: ember.jit.Final[float]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.scale = 2.0

    def forward(self, x):
        if ember.jit.is_scripting() or ember.jit.is_tracing():
            raise AssertionError("never scripting")
        return self.helper(self.fc(x)) * ember.jit.annotate(float, self.scale)

    @ember.jit.ignore
    def helper(self, y):
        return y.relu()

    @ember.jit.export
    def extra(self):
        return 1

    @ember.jit.unused
    def unused(self):
        return 2

    @ember.jit.ignore(drop=True)
    def dropped(self):
        return 3


def test_script_and_trace_return_what_they_get_and_it_runs_as_python():
    m = Net()
    x = ember.randn(4, 3)
    assert ember.jit.script(m) is m and ember.jit.trace(m, (x,)) is m and ember.jit.trace_module(m, {"forward": x}) is m
    assert ember.equal(m(x), m.fc(x).relu() * 2.0)
    assert (m.extra(), m.unused(), m.dropped()) == (1, 2, 3)

    @ember.jit.script
    def f(a):
        return a + 1
    assert f(ember.tensor(1.0)).item() == 2.0
    assert ember.jit.script_if_tracing(f) is f and ember.jit.freeze(m) is m
    assert not isinstance(m, ember.jit.ScriptModule) and not isinstance(f, ember.jit.ScriptFunction)


def test_fork_and_wait():
    fut = ember.jit.fork(lambda a, b: a * b, ember.tensor(3.0), b=ember.tensor(4.0))
    assert ember.jit.wait(fut).item() == 12.0


def test_torchscript_files_are_refused_with_what_to_use(tmp_path):
    with pytest.raises(RuntimeError, match="ember has no TorchScript: ember.jit.save cannot write.*ember.save"):
        ember.jit.save(Net(), tmp_path / "m.pt")
    with pytest.raises(RuntimeError, match="ember.jit.load cannot read"):
        ember.jit.load(tmp_path / "m.pt")
