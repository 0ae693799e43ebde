"""The nn.Module classes."""
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .flatten import Flatten, Identity, Unflatten
from .module import Module

__all__ = [
           "Flatten",
           "Identity",
           "Module",
           "ModuleDict",
           "ModuleList",
           "ParameterDict",
           "ParameterList",
           "Sequential",
           "Unflatten",
]
