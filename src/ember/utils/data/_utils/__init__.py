"""ember.utils.data._utils: torch's private module path, which programs import `collate` and the
`default_collate_fn_map` from to register collate functions for their own types."""
import sys

from .. import _worker as worker
from .. import collate

# `import ember.utils.data._utils.collate` finds the very same modules
sys.modules[__name__ + ".collate"] = collate
sys.modules[__name__ + ".worker"] = worker
