"""ember.optim: optimizers and learning-rate schedulers, as torch.optim."""
from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
           "ASGD",
           "LBFGS",
           "Muon",
           "SGD",
           "Adadelta",
           "Adafactor",
           "Adagrad",
           "Adam",
           "AdamW",
           "Adamax",
           "NAdam",
           "Optimizer",
           "RAdam",
           "RMSprop",
           "Rprop",
           "SparseAdam",
           "lr_scheduler",
           "swa_utils",
]


def __getattr__(name):
    # swa_utils builds on nn: loaded on first use, keeping `import ember.optim` free of nn
    if name == "swa_utils":
        import importlib
        return importlib.import_module(".swa_utils", __name__)
    raise AttributeError(f"module 'ember.optim' has no attribute '{name}'")
