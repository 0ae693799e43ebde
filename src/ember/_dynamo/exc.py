"""ember._dynamo.exc: the exceptions of torch._dynamo.exc that ember.compile raises."""
from ..compiler._region import CompileError as Unsupported  # a graph break under fullgraph=True
from ..compiler._region import RecompileError

__all__ = ["RecompileError", "Unsupported"]
