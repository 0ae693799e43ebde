"""ember.nn.functional: same as torch.nn.functional."""
from ._functional.activation import *  # noqa: F401,F403
from ._functional.attention import *  # noqa: F401,F403
from ._functional.conv import *  # noqa: F401,F403
from ._functional.dropout import *  # noqa: F401,F403
from ._functional.embedding import *  # noqa: F401,F403
from ._functional.fractional_pool import *  # noqa: F401,F403
from ._functional.linear import *  # noqa: F401,F403
from ._functional.linear_cross_entropy import *  # noqa: F401,F403
from ._functional.loss import *  # noqa: F401,F403
from ._functional.normalization import *  # noqa: F401,F403
from ._functional.padding import *  # noqa: F401,F403
from ._functional.pooling import *  # noqa: F401,F403
from ._functional.softmax import *  # noqa: F401,F403
from ._functional.vision import *  # noqa: F401,F403
