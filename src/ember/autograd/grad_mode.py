"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a small class (cheaper than @contextmanager) usable as a context manager and as a decorator, with or
without parentheses where torch allows it (`@no_grad`, `@no_grad()`). Decorated generator functions run each
step of the generator under the mode, and the caller's mode in between, as in torch.
"""
import functools
import inspect
import warnings

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled"]

# The one flag every op reads; a list so that `from .grad_mode import GRAD` sees updates.
GRAD = [True]
_INFERENCE = [False]


def is_grad_enabled():
    """Same as `torch.is_grad_enabled`."""
    return GRAD[0]


def is_inference_mode_enabled():
    """Same as `torch.is_inference_mode_enabled`."""
    return _INFERENCE[0]


def _decorate(factory, fn):
    """fn run under a fresh context made by factory() on every call (every step, for a generator)."""
    if inspect.isclass(fn):
        warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                      "decorate functions or methods. To preserve the current behavior of class decoration, you can "
                      "directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=3)
        return lambda *args, **kwargs: _decorate(factory, lambda: fn(*args, **kwargs))()
    if not callable(fn):
        raise TypeError(f"expected a callable to decorate, got {type(fn).__name__}")
    if inspect.isgeneratorfunction(fn):
        return _decorate_generator(factory, fn)

    @functools.wraps(fn)
    def decorated(*args, **kwargs):
        with factory():
            return fn(*args, **kwargs)
    return decorated


def _decorate_generator(factory, fn):
    @functools.wraps(fn)
    def decorated(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with factory():
                value = gen.send(None)
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    with factory():
                        gen.close()
                    raise
                except BaseException as e:
                    with factory():
                        value = gen.throw(e)
                else:
                    with factory():
                        value = gen.send(sent)
        except StopIteration as stop:
            return stop.value
    return decorated


class _Mode:
    """A context manager setting grad mode to `_target`; also a decorator, with or without parentheses."""
    __slots__ = ("_prev",)
    _target = None

    def __new__(cls, orig_func=None):
        if orig_func is None:
            self = object.__new__(cls)
            self._prev = None
            return self
        return _decorate(cls, orig_func)  # @no_grad used without parentheses

    # _prev is a linked stack (mode, older entry) so that one instance can be entered while already active
    def __enter__(self):
        self._prev = (GRAD[0], self._prev)
        GRAD[0] = self._target

    def __exit__(self, *exc):
        GRAD[0], self._prev = self._prev
        return False

    def __call__(self, fn):
        return _decorate(self.clone, fn)

    def clone(self):
        return self.__class__()


class no_grad(_Mode):
    """Same as `torch.no_grad`."""
    __slots__ = ()
    _target = False


class enable_grad(_Mode):
    """Same as `torch.enable_grad`."""
    __slots__ = ()
    _target = True


class set_grad_enabled:
    """Same as `torch.set_grad_enabled`: takes effect on construction, so it also works as a plain call."""
    __slots__ = ("prev", "mode")

    def __init__(self, mode):
        self.prev = GRAD[0]
        self.mode = bool(mode)
        GRAD[0] = self.mode

    def __enter__(self):
        GRAD[0] = self.mode

    def __exit__(self, *exc):
        GRAD[0] = self.prev
        return False

    def __call__(self, fn):
        GRAD[0] = self.prev  # as a decorator it must not change the mode of the code that defines fn
        return _decorate(self.clone, fn)

    def clone(self):
        return set_grad_enabled(self.mode)


class set_multithreading_enabled:
    """Same as `torch.autograd.set_multithreading_enabled`: ember's engine is single-threaded, so this only
    records the setting."""
    __slots__ = ("prev", "mode")
    enabled = [True]

    def __init__(self, mode):
        self.prev = self.enabled[0]
        self.mode = bool(mode)
        self.enabled[0] = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.enabled[0] = self.prev
        return False

    def clone(self):
        return set_multithreading_enabled(self.mode)


class inference_mode:
    """Same as `torch.inference_mode`: no graph is recorded (ember's tensors carry no inference flag).
    `inference_mode(False)` turns grad mode on, as torch's does."""
    __slots__ = ("_prev", "mode")

    def __new__(cls, mode=True):
        if not isinstance(mode, bool):  # @inference_mode used without parentheses
            return _decorate(cls, mode)
        self = object.__new__(cls)
        self._prev = None
        self.mode = mode
        return self

    def __enter__(self):
        self._prev = (GRAD[0], _INFERENCE[0], self._prev)
        GRAD[0] = not self.mode
        _INFERENCE[0] = self.mode

    def __exit__(self, *exc):
        GRAD[0], _INFERENCE[0], self._prev = self._prev
        return False

    def __call__(self, fn):
        return _decorate(self.clone, fn)

    def clone(self):
        return inference_mode(self.mode)
