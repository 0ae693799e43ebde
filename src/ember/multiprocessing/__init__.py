"""ember.multiprocessing: a drop-in for multiprocessing in which tensors travel through shared memory.

Same as `torch.multiprocessing`: everything of Python's multiprocessing, plus reducers that send ember tensors put on
any Queue/Pipe (or passed to a spawned Process) as shared-memory handles, so the receiver sees the same memory.
"""
import multiprocessing
import sys
from multiprocessing import *

from . import reductions as reductions
from .reductions import init_reductions
from .spawn import ProcessContext as ProcessContext
from .spawn import ProcessException as ProcessException
from .spawn import ProcessExitedException as ProcessExitedException
from .spawn import ProcessRaisedException as ProcessRaisedException
from .spawn import SpawnContext as SpawnContext
from .spawn import spawn as spawn
from .spawn import start_processes as start_processes

# as in torch: star-imports get multiprocessing's names and the strategy functions; spawn & co. are attributes
__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]  # noqa: RUF022 (torch's order)
__all__ += multiprocessing.__all__

# NOTE [ Sharing strategies ]
# ember has one mechanism, unnamed memory files passed by descriptor, which is torch's "file_descriptor" strategy.
# "file_system" is accepted for compatibility and uses the same mechanism (which leaves nothing in /dev/shm either).
_all_sharing_strategies = {"file_descriptor", "file_system"} if sys.platform != "darwin" else {"file_system"}
_sharing_strategy = "file_system" if sys.platform == "darwin" else "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Same as `torch.multiprocessing.set_sharing_strategy`."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:  # torch asserts, with this message
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """Same as `torch.multiprocessing.get_sharing_strategy`."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """Same as `torch.multiprocessing.get_all_sharing_strategies`."""
    return _all_sharing_strategies


init_reductions()
