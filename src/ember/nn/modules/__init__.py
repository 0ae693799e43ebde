"""The nn.Module classes, one module per family; __all__ collects them."""
from . import (activation, attention, batchnorm, channelshuffle, container, conv, distance, dropout, flatten, fold,
               instancenorm, linear, linear_cross_entropy, linear_cross_entropy_options, loss, normalization, padding,
               pixelshuffle, pooling, rnn, sparse, transformer, upsampling)
from .activation import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import Flatten, Identity, Unflatten
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .linear_cross_entropy import *  # noqa: F401,F403
from .linear_cross_entropy_options import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .loss import NLLLoss2d
from .module import Module
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403

__all__ = ["Flatten", "Identity", "Module", "ModuleDict", "ModuleList", "NLLLoss2d", "ParameterDict", "ParameterList",
           "Sequential", "Unflatten"]
for _family in (activation, attention, batchnorm, channelshuffle, conv, distance, dropout, fold, instancenorm,
                linear, linear_cross_entropy, linear_cross_entropy_options, loss, normalization, padding, pixelshuffle,
                pooling, rnn, sparse, transformer, upsampling):
    __all__ += _family.__all__
del _family
