"""ember.nn: same as torch.nn."""
from . import attention, functional, init, parallel, utils
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Buffer", "DataParallel", "Parameter", "UninitializedBuffer", "UninitializedParameter", "attention",
           "functional", "init", "parallel", "utils"] + _modules_all
