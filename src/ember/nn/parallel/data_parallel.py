"""DataParallel: the single-process wrapper. ember runs the wrapped module on its own device."""
from ..modules.module import Module

__all__ = ["DataParallel"]


def _device_ids():
    import ember
    return list(range(ember.cuda.device_count())) if ember.cuda.is_available() else []


class DataParallel(Module):
    """Same as `torch.nn.DataParallel`, except that the module is not replicated over several GPUs: forward calls
    the wrapped module once, on the device of its parameters (torch does the same when no GPU is available)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        available = _device_ids()
        if not available:
            self.device_ids = []
            return
        self.device_ids = list(available if device_ids is None else
                               [d if isinstance(d, int) else d.index for d in device_ids])
        self.output_device = self.device_ids[0] if output_device is None else output_device

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
