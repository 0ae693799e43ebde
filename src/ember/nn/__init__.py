"""ember.nn: same as torch.nn."""
from . import init, utils
from .modules import *
from .parameter import Buffer, Parameter

__all__ = ["Buffer", "Flatten", "Identity", "Module", "ModuleDict", "ModuleList", "Parameter", "ParameterDict",
           "ParameterList", "Sequential", "Unflatten", "init", "utils"]
