"""LinearCrossEntropyOptions: how F.linear_cross_entropy chunks its rows (see NOTE [ chunked linear_cross_entropy ])."""
import dataclasses

import ember

__all__ = ["LinearCrossEntropyOptions"]

_ACC_DTYPES = (ember.float16, ember.bfloat16, ember.float32, ember.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Same as `torch.nn.LinearCrossEntropyOptions`; ember ignores acc_policy and allow_retain_graph (its chunked
    backward recomputes, so retain_graph always works)."""
    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: ember.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in ("auto", "accurate", "balanced", "compact"):
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method not in (None, "auto"):
            name, colon, factor = self.chunking_method.partition(":")
            if name != "aspect_ratio" or (colon and not (factor.isdigit() and int(factor) > 0)):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if size is not None and not (isinstance(size, int) and size > 0):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(f"acc_dtype must be one of {{None, {', '.join(map(str, _ACC_DTYPES))}}}, got "
                             f"{self.acc_dtype!r}. Pass acc_dtype=None to let the op pick automatically.")
