"""float32 matmul precision, shared by ember.set_float32_matmul_precision and backends.cuda.matmul.allow_tf32."""
import warnings

PRECISION = ["highest"]


def set_float32_matmul_precision(precision):
    """Same as `torch.set_float32_matmul_precision`: 'highest' (full float32), 'high' or 'medium' (TF32 on GPUs)."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"set_float32_matmul_precision call has no effect.", stacklevel=2)
        return
    PRECISION[0] = precision


def get_float32_matmul_precision():
    """Same as `torch.get_float32_matmul_precision`."""
    return PRECISION[0]
