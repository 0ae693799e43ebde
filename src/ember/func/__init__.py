"""ember.func: the part of torch.func that ember has — functional_call."""
from ..nn.utils.stateless import _func_functional_call as functional_call

__all__ = ["functional_call"]
