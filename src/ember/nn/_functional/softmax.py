"""nn.functional: the softmax family, defined with the tensor ops (Tensor.softmax needs it without nn)."""
from ..._ops.softmax import __all__, gumbel_softmax, log_softmax, softmax, softmin  # noqa: F401
