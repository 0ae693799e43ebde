"""ember.nn: same as torch.nn."""
from . import functional, init, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parameter import Buffer, Parameter

__all__ = ["Buffer", "Parameter", "functional", "init", "utils"] + _modules_all
