"""Same as `torch.utils.tensorboard`: SummaryWriter writes TensorBoard event files.

The event format and its protobuf messages come from the tensorboard package, an optional dependency
(pip install tensorboard, or pip install 'ember[tensorboard]'), imported only with this module. tensorboard 2.17.1
is the first that runs on NumPy 2.
"""
try:
    import tensorboard
except ImportError:
    raise ImportError("ember.utils.tensorboard needs the tensorboard package: pip install tensorboard") from None

from packaging.version import Version

if Version(tensorboard.__version__) < Version("2.17.1"):
    raise ImportError(f"ember.utils.tensorboard needs tensorboard>=2.17.1 (the first that runs on NumPy 2), found "
                      f"{tensorboard.__version__}: pip install -U tensorboard")
del tensorboard, Version

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
