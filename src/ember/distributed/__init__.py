"""ember.distributed: same as `torch.distributed`, on MPI (mpi4py) for CPU tensors and NCCL (CuPy) for GPU ones.

Importing this package does not start MPI; `init_process_group` does.
"""
from .distributed_c10d import *
from .distributed_c10d import __all__ as _c10d_all

__all__ = list(_c10d_all)
