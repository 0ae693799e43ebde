"""no_grad, enable_grad, set_grad_enabled, inference_mode: context managers and decorators."""
import pytest

import ember


@pytest.fixture(autouse=True)
def _restore_grad_mode():
    yield
    assert ember.is_grad_enabled(), "a test left grad mode off"


def _w():
    return ember.ones(2, requires_grad=True)


def test_no_grad_context():
    w = _w()
    with ember.no_grad():
        assert not ember.is_grad_enabled()
        y = w * 2
    assert ember.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert (w * 2).requires_grad


def test_enable_grad_inside_no_grad():
    w = _w()
    with ember.no_grad():
        with ember.enable_grad():
            assert ember.is_grad_enabled()
            y = w * 2
        assert not ember.is_grad_enabled()
    assert y.requires_grad


@pytest.mark.parametrize("deco", [ember.no_grad, ember.no_grad()], ids=["bare", "called"])
def test_no_grad_decorator_with_and_without_parentheses(deco):
    @deco
    def f(x):
        """doc"""
        return ember.is_grad_enabled(), x * 2

    enabled, y = f(_w())
    assert not enabled and not y.requires_grad
    assert f.__name__ == "f" and f.__doc__ == "doc"
    assert ember.is_grad_enabled()


@pytest.mark.parametrize("deco", [ember.enable_grad, ember.enable_grad()], ids=["bare", "called"])
def test_enable_grad_decorator(deco):
    @deco
    def f():
        return ember.is_grad_enabled()

    with ember.no_grad():
        assert f()
        assert not ember.is_grad_enabled()


def test_decorated_generator_runs_each_step_under_the_mode():
    @ember.no_grad()
    def gen():
        for _ in range(3):
            got = yield ember.is_grad_enabled()
            assert got == "sent"
        return "done"

    g = gen()
    assert next(g) is False
    assert ember.is_grad_enabled()  # the caller's mode between steps
    assert g.send("sent") is False
    assert g.send("sent") is False
    with pytest.raises(StopIteration) as stop:
        g.send("sent")
    assert stop.value.value == "done"


def test_decorated_generator_close_and_throw():
    closed = []

    @ember.no_grad
    def gen():
        try:
            while True:
                try:
                    yield ember.is_grad_enabled()
                except ValueError:
                    closed.append(("thrown", ember.is_grad_enabled()))
        finally:
            closed.append(("closed", ember.is_grad_enabled()))

    g = gen()
    next(g)
    assert g.throw(ValueError) is False
    g.close()
    assert closed == [("thrown", False), ("closed", False)]


def test_set_grad_enabled_forms():
    ember.set_grad_enabled(False)  # a plain call takes effect at once
    assert not ember.is_grad_enabled()
    ember.set_grad_enabled(True)
    assert ember.is_grad_enabled()
    with ember.set_grad_enabled(False):
        assert not ember.is_grad_enabled()
        with ember.set_grad_enabled(True):
            assert ember.is_grad_enabled()
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()

    @ember.set_grad_enabled(False)
    def f():
        return ember.is_grad_enabled()

    assert ember.is_grad_enabled()  # decorating does not switch the mode
    assert f() is False
    assert ember.is_grad_enabled()
    with pytest.raises(TypeError):
        ember.set_grad_enabled()


def test_set_grad_enabled_restores_on_exception():
    with pytest.raises(ValueError):
        with ember.set_grad_enabled(False):
            raise ValueError
    assert ember.is_grad_enabled()
    with pytest.raises(ValueError):
        with ember.no_grad():
            raise ValueError


def test_reusing_one_no_grad_object_nested():
    ng = ember.no_grad()
    with ng:
        with ng:
            assert not ember.is_grad_enabled()
        assert not ember.is_grad_enabled()
    assert ember.is_grad_enabled()


def test_inference_mode():
    w = _w()
    assert not ember.is_inference_mode_enabled()
    with ember.inference_mode():
        assert ember.is_inference_mode_enabled() and not ember.is_grad_enabled()
        y = w * 2
        with ember.inference_mode(False):
            assert ember.is_grad_enabled() and not ember.is_inference_mode_enabled()
    assert not y.requires_grad
    assert not ember.is_inference_mode_enabled()
    with ember.no_grad():
        with ember.inference_mode(False):  # as in torch, inference_mode(False) turns grad mode on
            assert ember.is_grad_enabled()


@pytest.mark.parametrize("deco", [ember.inference_mode, ember.inference_mode(), ember.inference_mode(True)],
                         ids=["bare", "called", "true"])
def test_inference_mode_decorator(deco):
    @deco
    def f():
        return ember.is_grad_enabled(), ember.is_inference_mode_enabled()

    assert f() == (False, True)
    assert ember.is_grad_enabled() and not ember.is_inference_mode_enabled()


def test_inference_mode_false_decorator():
    @ember.inference_mode(False)
    def f():
        return ember.is_grad_enabled()

    with ember.no_grad():
        assert f() is True


def test_grad_mode_names_in_autograd():
    assert ember.autograd.no_grad is ember.no_grad
    assert ember.autograd.grad_mode.set_grad_enabled is ember.set_grad_enabled
    assert ember.autograd.is_grad_enabled() is True


def test_decorating_a_class_warns_like_torch():
    class A:
        def __init__(self):
            self.enabled = ember.is_grad_enabled()

    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        make = ember.no_grad()(A)
    assert make().enabled is False


def test_clone():
    ng = ember.no_grad()
    assert type(ng.clone()) is ember.no_grad
    assert ember.set_grad_enabled(True).clone().mode is True
