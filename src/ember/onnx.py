"""ember.onnx: torch.onnx's names. ember does not export ONNX yet: `export` and `dynamo_export` raise a clear
error; `is_in_onnx_export()` is False (model code asks it), and the rest raise when called."""
from ._unavailable import unavailable

_REASON = ("ember cannot write ONNX models yet. Save the weights with ember.save(model.state_dict(), path) and "
           "export from PyTorch, which loads them (torch.load with weights_only=True)")


def is_in_onnx_export():
    """Same as `torch.onnx.is_in_onnx_export`: never, in ember."""
    return False


__getattr__ = unavailable("torch.onnx", _REASON)
