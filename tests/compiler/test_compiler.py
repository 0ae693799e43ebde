"""ember.compile / ember.compiler: models run eagerly, with the same results and a one-time warning."""
import warnings

import pytest

import ember
from ember import compiler


@pytest.fixture(autouse=True)
def fresh_warning():
    compiler._WARNED[0] = False
    yield
    compiler._WARNED[0] = False


def test_compile_returns_the_module_itself_and_warns_once():
    m = ember.nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="no graph compiler yet"):
        c = ember.compile(m)
    assert c is m
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.compile(m, mode="reduce-overhead") is m   # second call: silent


def test_compile_as_decorator_with_and_without_arguments():
    with pytest.warns(UserWarning):
        @ember.compile
        def f(x):
            return x * 3

    @ember.compile(fullgraph=True, dynamic=False)
    def g(x):
        return x + 1
    assert f(ember.ones(2)).tolist() == [3.0, 3.0]
    assert g(ember.ones(2)).tolist() == [2.0, 2.0]


def test_eager_backend_and_disable_do_not_warn():
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
    assert ember.compiler.disable(abs) is abs and ember.compiler.disable()(abs) is abs
    assert ember.compiler.allow_in_graph(abs) is abs
    assert ember.compiler.reset() is None
    assert "eager" in ember.compiler.list_backends()
