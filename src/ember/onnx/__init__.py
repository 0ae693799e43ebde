"""ember.onnx: torch.onnx's export, by tracing the ops a model runs (NOTE [ ONNX export by tracing ] in
_export.py); the models it writes run in onnxruntime and the other ONNX runtimes. `is_in_onnx_export()` is True
while an export traces the model. torch.onnx's other names (dynamo_export, the symbolic registry...) raise."""
from .._unavailable import unavailable
from ._export import ONNXProgram, OnnxExporterError, export

__all__ = ["ONNXProgram", "OnnxExporterError", "export", "is_in_onnx_export"]

_REASON = "ember writes ONNX through ember.onnx.export only"


def is_in_onnx_export():
    """Same as `torch.onnx.is_in_onnx_export`: whether an export is tracing the model now."""
    from . import _export
    return _export.EXPORTING[0]


__getattr__ = unavailable("torch.onnx", _REASON)
