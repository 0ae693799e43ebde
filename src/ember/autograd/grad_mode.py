"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode."""
import functools

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

# The one flag every op reads; a list so that `from .grad_mode import GRAD` sees updates.
GRAD = [True]
_INFERENCE = [False]


def is_grad_enabled():
    """Same as `torch.is_grad_enabled`."""
    return GRAD[0]


def is_inference_mode_enabled():
    return _INFERENCE[0]


class _Mode:
    """A context manager that is also a decorator (a plain class: cheaper than @contextmanager)."""
    __slots__ = ("_prev", "_mode")
    _target = None

    def __init__(self):
        self._prev = []

    def __enter__(self):
        self._prev.append(GRAD[0])
        GRAD[0] = self._target

    def __exit__(self, *exc):
        GRAD[0] = self._prev.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper

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


class set_grad_enabled(_Mode):
    """Same as `torch.set_grad_enabled`: takes effect on construction, so it also works as a plain call."""
    __slots__ = ()

    def __init__(self, mode):
        self._prev = [GRAD[0]]
        self._mode = bool(mode)
        GRAD[0] = self._mode

    def __enter__(self):
        GRAD[0] = self._mode

    def __call__(self, fn):
        GRAD[0] = self._prev[0]
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return set_grad_enabled(self._mode)


class inference_mode(_Mode):
    """Same as `torch.inference_mode`: no graph is recorded (ember's tensors carry no extra inference flag)."""
    __slots__ = ()

    def __init__(self, mode=True):
        self._prev = []
        self._mode = bool(mode)

    def __enter__(self):
        self._prev.append((GRAD[0], _INFERENCE[0]))
        if self._mode:
            GRAD[0] = False
            _INFERENCE[0] = True

    def __exit__(self, *exc):
        GRAD[0], _INFERENCE[0] = self._prev.pop()
        return False

    def __call__(self, fn):
        if not callable(fn):  # @inference_mode(False) is handled by __init__
            raise TypeError("inference_mode expects a function")
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return inference_mode(self._mode)
