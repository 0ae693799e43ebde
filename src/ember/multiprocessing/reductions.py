"""Pickling tensors as shared-memory handles for multiprocessing (Queue, Pipe, Pool, Process arguments)."""
import errno
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .._tensor import Tensor
from ._shared import SharedStorage, open_storage, share_memory_, storage_of, too_many_files

__all__ = ["init_reductions", "rebuild_storage", "rebuild_tensor", "reduce_storage", "reduce_tensor"]

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
             "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
             "before serializing (e.g., putting it on the queue).")


# NOTE [ What a tensor sends ]
# A tensor is sent as (its SharedStorage, byte offset, shape, byte strides, dtype, requires_grad, attributes). The
# storage is pickled as a separate object, so the pickler's memo sends it once per message: views of one storage sent
# together arrive as views of one mapping. The storage travels as its file descriptor (multiprocessing's DupFd: passed
# to a child at spawn time, or fetched from the sender's resource sharer, so the sender must still be running when
# the receiver unpickles). As in torch, a tensor not yet in shared memory is moved there first (in place), and the
# gradient is not sent.

def reduce_storage(storage):
    return rebuild_storage, (DupFd(storage.fd), storage.nbytes)


def rebuild_storage(df, nbytes):
    try:
        fd = df.detach()
    except (OSError, EOFError, RuntimeError) as e:
        # out of descriptors shows as EMFILE, or as multiprocessing's "received 0 items of ancdata"
        if getattr(e, "errno", None) in (errno.EMFILE, errno.ENFILE) or "ancdata" in str(e):
            raise too_many_files(e) from e
        raise RuntimeError(
            f"ember.multiprocessing: could not receive a tensor's shared memory ({type(e).__name__}: {e}). Tensors "
            f"travel as file descriptors that the sending process hands over when the receiver takes them off the "
            f"queue, so the sender must still be running then: keep the producing process alive until its tensors "
            f"have been received (for example, have it wait on an Event that the consumer sets, and join it only "
            f"after consuming its items).") from e
    return open_storage(fd, nbytes)


def reduce_tensor(tensor):
    arr = tensor._data
    if tensor._requires_grad and tensor._grad_fn is not None:
        raise RuntimeError(_NON_LEAF)
    if arr.__class__ is not np.ndarray:
        raise RuntimeError("ember.multiprocessing cannot send CUDA tensors between processes yet; move the tensor to "
                           "the CPU first (tensor.cpu()) and back to the GPU in the receiving process.")
    state = tensor.__dict__ or None
    if arr.size == 0:  # no memory to share (torch's receiver also sees an unshared empty tensor)
        return _rebuild_empty, (type(tensor), arr.shape, arr.dtype, tensor._requires_grad, state)
    storage = storage_of(arr)
    if storage is None:
        share_memory_(tensor)
        arr = tensor._data
        storage = storage_of(arr)
    offset = arr.__array_interface__["data"][0] - storage.addr
    return rebuild_tensor, (type(tensor), storage, offset, arr.shape, arr.strides, arr.dtype, tensor._requires_grad,
                            state)


def rebuild_tensor(cls, storage, offset, shape, strides, dtype, requires_grad, state):
    arr = np.ndarray(shape, dtype, buffer=storage.array(), offset=offset, strides=strides)
    return _wrap(cls, arr, requires_grad, state)


def _rebuild_empty(cls, shape, dtype, requires_grad, state):
    return _wrap(cls, np.empty(shape, dtype), requires_grad, state)


def _wrap(cls, arr, requires_grad, state):
    t = Tensor._make(arr)
    if cls is not Tensor:
        t = t.as_subclass(cls)
    t._requires_grad = requires_grad
    if state:
        t.__dict__.update(state)
    return t


def _register_tree(cls):
    ForkingPickler.register(cls, reduce_tensor)
    for sub in cls.__subclasses__():
        _register_tree(sub)


def _init_subclass(cls, **kwargs):
    # tensor subclasses defined later (user classes) travel through shared memory too
    super(Tensor, cls).__init_subclass__(**kwargs)
    ForkingPickler.register(cls, reduce_tensor)


def init_reductions():
    """Registers the tensor and storage reducers with multiprocessing's ForkingPickler (done on import)."""
    ForkingPickler.register(SharedStorage, reduce_storage)
    _register_tree(Tensor)
    if "__init_subclass__" not in Tensor.__dict__:
        Tensor.__init_subclass__ = classmethod(_init_subclass)

