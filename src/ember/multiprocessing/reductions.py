"""Pickling tensors as shared-memory handles for multiprocessing (Queue, Pipe, Pool, Process arguments)."""
import errno
import os
import socket
import threading
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .._tensor import Tensor
from .._backend.shared_memory import SharedRegion, SharedStorage, holder_of, open_storage, share_memory_, too_many_files

__all__ = ["dumps_through", "fd_channel", "init_reductions", "loads_through", "rebuild_region", "rebuild_storage",
           "rebuild_tensor", "reduce_region", "reduce_storage", "reduce_tensor"]

_NON_LEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
             "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
             "before serializing (e.g., putting it on the queue).")


# NOTE [ What a tensor sends ]
# A tensor is sent as (its SharedStorage, or the SharedRegion of one that it lives in, byte offset in that, shape,
# byte strides, dtype, requires_grad, attributes). The storage (and region) is pickled as a separate object, so the
# pickler's memo sends it once per message: views of one storage sent together arrive as views of one mapping, and
# the regions of one batch (see NOTE [ One memory file per batch ]) share one descriptor pass. The storage travels as
# its file descriptor (multiprocessing's DupFd: passed to a child at spawn time, or fetched from the sender's resource
# sharer, so the sender must still be running when the receiver unpickles). As in torch, a tensor not yet in shared
# memory is moved there first (in place), and the gradient is not sent.

def reduce_storage(storage):
    sock = getattr(_channel, "sock", None)
    if sock is not None:
        socket.send_fds(sock, [b"\0"], [storage.fd])
        return rebuild_from_channel, (storage.key, storage.nbytes)
    return rebuild_storage, (DupFd(storage.fd), storage.nbytes)


# NOTE [ Descriptors of DataLoader batches ]
# DupFd hands a descriptor over through the sender's resource sharer: one authenticated socket connection per
# storage, answered by a thread of the sender, which a busy DataLoader worker schedules late (about a millisecond
# per batch). A DataLoader instead gives each worker a socket pair (`fd_channel`): the worker pickles a batch itself
# (`dumps_through`), sending each storage's descriptor down its socket as it goes, and the main process unpickles
# it (`loads_through`) taking the descriptors off the other end. Both ends handle one worker's batches in the order
# the worker sent them, and each descriptor is checked against the file identity in the pickle, so descriptors
# of a batch whose pickling failed half way are skipped (closed) instead of being taken for the next batch's.
_channel = threading.local()  # .sock: the socket that reduce_storage / rebuild_from_channel use in this thread
CHANNEL_TIMEOUT = 30.0  # seconds; the descriptors are sent before the pickle, so they are there at once


def fd_channel():
    """A connected pair of sockets for one DataLoader worker: (main process's end, worker's end)."""
    kind = getattr(socket, "SOCK_SEQPACKET", socket.SOCK_STREAM)
    main_end, worker_end = socket.socketpair(socket.AF_UNIX, kind)
    main_end.settimeout(CHANNEL_TIMEOUT)
    return main_end, worker_end


def dumps_through(obj, sock):
    """ForkingPickler.dumps(obj), sending the descriptors of its shared storages down sock."""
    _channel.sock = sock
    try:
        return bytes(ForkingPickler.dumps(obj))
    finally:
        _channel.sock = None


def loads_through(data, sock):
    """Unpickles what `dumps_through` made, taking the descriptors from the other end of its socket."""
    _channel.sock = sock
    try:
        return ForkingPickler.loads(data)
    finally:
        _channel.sock = None


def rebuild_from_channel(key, nbytes):
    sock = getattr(_channel, "sock", None)
    if sock is None:
        raise RuntimeError("ember.multiprocessing: a DataLoader batch was unpickled outside its DataLoader")
    while True:
        try:
            _, fds, flags, _ = socket.recv_fds(sock, 1, 1)
        except OSError as e:
            if getattr(e, "errno", None) in (errno.EMFILE, errno.ENFILE):
                raise too_many_files(e) from e
            raise RuntimeError(f"ember.multiprocessing: could not receive a DataLoader batch's shared memory from "
                               f"its worker ({type(e).__name__}: {e})") from e
        if not fds:
            if flags & getattr(socket, "MSG_CTRUNC", 0):  # the descriptor was dropped: none free in this process
                raise too_many_files(OSError(errno.EMFILE, os.strerror(errno.EMFILE)))
            raise RuntimeError("ember.multiprocessing: a DataLoader worker's channel closed before its batch's "
                               "shared memory arrived")
        fd = fds[0]
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) == key:
            return open_storage(fd, nbytes)
        os.close(fd)  # left over from a batch that failed to pickle


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
    holder = holder_of(arr)
    if holder is None:
        share_memory_(tensor)
        arr = tensor._data
        holder = holder_of(arr)
    offset = arr.__array_interface__["data"][0] - holder.__array_interface__["data"][0]
    return rebuild_tensor, (type(tensor), holder, offset, arr.shape, arr.strides, arr.dtype, tensor._requires_grad,
                            state)


def rebuild_tensor(cls, holder, offset, shape, strides, dtype, requires_grad, state):
    # holder: the SharedStorage, or the SharedRegion of it, that the tensor's memory lives in
    arr = np.ndarray(shape, dtype, buffer=holder.array(), offset=offset, strides=strides)
    return _wrap(cls, arr, requires_grad, state)


def reduce_region(region):
    # the storage is pickled as its own object: the regions of one batch share it, and its one descriptor pass
    return rebuild_region, (region.storage, region.offset, region.nbytes)


def rebuild_region(storage, offset, nbytes):
    return SharedRegion(storage, offset, nbytes)


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
    ForkingPickler.register(SharedRegion, reduce_region)
    _register_tree(Tensor)
    if "__init_subclass__" not in Tensor.__dict__:
        Tensor.__init_subclass__ = classmethod(_init_subclass)

