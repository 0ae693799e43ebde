"""ember.jit: torch.jit's names, so that model code written for TorchScript runs — eagerly.

ember has no TorchScript compiler: `script` and `trace` give back what they were given (a module stays an ember
module, a function stays a function), the decorators leave functions as they are, and `is_scripting()` is
False. A model therefore runs as ordinary Python, with the same results. TorchScript files cannot be written or
read: `save` and `load` say so and point to `ember.save`.
"""
import typing

__all__ = ["Final", "ScriptFunction", "ScriptModule", "annotate", "export", "fork", "freeze", "ignore", "interface",
           "is_scripting", "is_tracing", "load", "optimize_for_inference", "save", "script", "script_if_tracing",
           "trace", "trace_module", "unused", "wait"]

Final = typing.Final


class ScriptModule:
    """torch.jit.ScriptModule, for isinstance checks: ember never makes one (script returns the module)."""


class ScriptFunction:
    """torch.jit.ScriptFunction, for isinstance checks: ember never makes one (script returns the function)."""


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """Same signature as `torch.jit.script`; returns obj unchanged (it runs eagerly)."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """Same signature as `torch.jit.trace`; returns func unchanged (it runs eagerly)."""
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Same signature as `torch.jit.trace_module`; returns mod unchanged."""
    return mod


def script_if_tracing(fn):
    """Same as `torch.jit.script_if_tracing`: fn itself."""
    return fn


def ignore(drop=False, **kwargs):
    """Same as `torch.jit.ignore`, bare (`@ignore`) or called (`@ignore(drop=True)`): the function unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """Same as `torch.jit.unused`: fn itself."""
    return fn


def export(fn):
    """Same as `torch.jit.export`: fn itself."""
    return fn


def interface(obj):
    """Same as `torch.jit.interface`: obj itself."""
    return obj


def is_scripting():
    """Same as `torch.jit.is_scripting`: always False, as ember never scripts."""
    return False


def is_tracing():
    """Same as `torch.jit.is_tracing`: always False, as ember never traces for TorchScript."""
    return False


def annotate(the_type, the_value):
    """Same as `torch.jit.annotate`: the value itself."""
    return the_value


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Same signature as `torch.jit.freeze`; returns mod unchanged."""
    return mod


def optimize_for_inference(mod, other_methods=None):
    """Same signature as `torch.jit.optimize_for_inference`; returns mod unchanged."""
    return mod


class Future:
    """The result of `fork`: ember runs the call at once, so `wait` only hands its result back."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    """Same as `torch.jit.fork`: runs func(*args, **kwargs) (at once, in this thread) and returns a Future."""
    return Future(func(*args, **kwargs))


def wait(future):
    """Same as `torch.jit.wait`: the forked call's result."""
    return future.wait()


_NO_TORCHSCRIPT = ("ember has no TorchScript: {} cannot {} a TorchScript file. Save the model's state_dict with "
                   "ember.save instead (torch.load reads it too).")


def save(m, f, _extra_files=None):
    """torch.jit.save's name: raises, as ember cannot write TorchScript (see the message for what to use)."""
    raise RuntimeError(_NO_TORCHSCRIPT.format("ember.jit.save", "write"))


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """torch.jit.load's name: raises, as ember cannot read TorchScript (see the message for what to use)."""
    raise RuntimeError(_NO_TORCHSCRIPT.format("ember.jit.load", "read"))
