"""The "nccl" backend: collectives on GPU tensors through CuPy's NCCL bindings (cupy.cuda.nccl).

The NCCL unique id is made by group rank 0 and sent to the others over the group's MPI communicator. Every call
is queued on the current CUDA stream, so later work on that stream is ordered after it; an async_op Work's wait()
makes the current stream wait for the collective's event (it is already ordered when the stream is unchanged).
"""
import numpy as np

__all__ = ["NcclGroup"]


def _nccl():
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as e:
        raise RuntimeError("the 'nccl' backend needs CuPy with NCCL support (ember's cuda12 or cuda13 extra and "
                           "NVIDIA's NCCL); for CPU tensors use backend='mpi' or 'gloo'") from e
    if not getattr(nccl, "available", True):
        raise RuntimeError("CuPy was built without NCCL support: the 'nccl' backend is unavailable")
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise RuntimeError(f"the 'nccl' backend needs a CUDA GPU: {e}") from e
    if n == 0:
        raise RuntimeError("the 'nccl' backend needs a CUDA GPU, and none is visible")
    return cupy, nccl


def _dtype_codes(nccl):
    codes = {np.dtype(np.float32): nccl.NCCL_FLOAT32, np.dtype(np.float64): nccl.NCCL_FLOAT64,
             np.dtype(np.float16): nccl.NCCL_FLOAT16, np.dtype(np.int8): nccl.NCCL_INT8,
             np.dtype(np.uint8): nccl.NCCL_UINT8, np.dtype(np.int32): nccl.NCCL_INT32,
             np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.bool_): nccl.NCCL_UINT8}
    bf = getattr(nccl, "NCCL_BFLOAT16", None)
    if bf is not None:
        import ml_dtypes
        codes[np.dtype(ml_dtypes.bfloat16)] = bf
    return codes


class NcclGroup:
    """An NCCL communicator over the ranks of one MPI communicator, on this process's GPU."""

    def __init__(self, comm, device_id=None):
        cupy, nccl = _nccl()
        self.cupy = cupy
        self.nccl = nccl
        dev = _device_index(device_id, cupy)
        cupy.cuda.Device(dev).use()
        self.device = dev
        uid = nccl.get_unique_id() if comm.Get_rank() == 0 else None
        uid = comm.bcast(uid, root=0)  # a small tuple of ints: the only pickled message of this backend
        self.comm = nccl.NcclCommunicator(comm.Get_size(), uid, comm.Get_rank())
        self.codes = _dtype_codes(nccl)
        self.size = comm.Get_size()

    def destroy(self):
        self.comm.destroy()

    def synchronize(self):
        self.cupy.cuda.get_current_stream().synchronize()

    # ----- helpers -----
    def _arr(self, t):
        d = t._data
        if not isinstance(d, self.cupy.ndarray):
            raise RuntimeError("Tensors must be CUDA and dense for the NCCL backend")  # noqa: TRY004 - torch's type
        if not d.flags.c_contiguous:
            raise ValueError("Tensors must be contiguous")
        return d

    def _code(self, d):
        c = self.codes.get(d.dtype)
        if c is None:
            raise RuntimeError(f"the NCCL backend does not support tensors of dtype {d.dtype}")
        return c

    def _op(self, op):
        from .distributed_c10d import RedOpType
        n = self.nccl
        m = {RedOpType.SUM: n.NCCL_SUM, RedOpType.AVG: n.NCCL_SUM, RedOpType.PRODUCT: n.NCCL_PROD,
             RedOpType.MIN: n.NCCL_MIN, RedOpType.MAX: n.NCCL_MAX}
        if op not in m:
            raise ValueError(f"the NCCL backend does not support {op}")
        return m[op]

    def _finish(self, pg, name, async_op, t, post=None):
        """Bump the version, average, and return a Work (async) or None."""
        from .distributed_c10d import _bump
        if post is not None:
            post()
        if t is not None:
            _bump(t)
        if not async_op:
            return None
        ev = self.cupy.cuda.Event()
        ev.record()
        return _CudaWork(pg, name, ev, self.cupy)

    def _stream(self):
        return self.cupy.cuda.get_current_stream().ptr

    def _avg(self, d, op):
        from .distributed_c10d import RedOpType
        if op is RedOpType.AVG:
            if d.dtype.kind in "iu":
                d //= self.size
            else:
                d /= self.size

    # ----- collectives -----
    def all_reduce(self, pg, t, op, async_op):
        d = self._arr(t)
        self.comm.allReduce(d.data.ptr, d.data.ptr, d.size, self._code(d), self._op(op), self._stream())
        return self._finish(pg, "all_reduce", async_op, t, lambda: self._avg(d, op))

    def reduce(self, pg, t, root, op, async_op):
        d = self._arr(t)
        self.comm.reduce(d.data.ptr, d.data.ptr, d.size, self._code(d), self._op(op), root, self._stream())
        post = (lambda: self._avg(d, op)) if pg.rank() == root else None
        return self._finish(pg, "reduce", async_op, t, post)

    def broadcast(self, pg, t, root, async_op):
        d = self._arr(t)
        self.comm.bcast(d.data.ptr, d.size, self._code(d), root, self._stream())
        return self._finish(pg, "broadcast", async_op, t)

    def all_gather_into_tensor(self, pg, out, inp, async_op):
        o, i = self._arr(out), self._arr(inp)
        self.comm.allGather(i.data.ptr, o.data.ptr, i.size, self._code(i), self._stream())
        return self._finish(pg, "all_gather_into_tensor", async_op, out)

    def all_gather(self, pg, tensor_list, t, async_op):
        i = self._arr(t)
        flat = self.cupy.empty((self.size,) + i.shape, i.dtype)
        self.comm.allGather(i.data.ptr, flat.data.ptr, i.size, self._code(i), self._stream())
        for k, dst in enumerate(tensor_list):
            d = self._arr(dst)
            if d.shape != i.shape or d.dtype != i.dtype:
                raise RuntimeError("the NCCL backend's all_gather needs every tensor of tensor_list to have the "
                                   "input's shape and dtype")
            d[...] = flat[k]
        return self._finish(pg, "all_gather", async_op, None)

    def reduce_scatter_tensor(self, pg, out, inp, op, async_op):
        o, i = self._arr(out), self._arr(inp)
        self.comm.reduceScatter(i.data.ptr, o.data.ptr, o.size, self._code(o), self._op(op), self._stream())
        return self._finish(pg, "reduce_scatter_tensor", async_op, out, lambda: self._avg(o, op))

    def send(self, pg, t, peer, async_op=False):
        d = self._arr(t)
        self.comm.send(d.data.ptr, d.size, self._code(d), peer, self._stream())
        return self._finish(pg, "send", async_op, None)

    def recv(self, pg, t, peer, async_op=False):
        d = self._arr(t)
        self.comm.recv(d.data.ptr, d.size, self._code(d), peer, self._stream())
        return self._finish(pg, "recv", async_op, t)


def _device_index(device_id, cupy):
    import os
    if device_id is None:
        local = os.environ.get("LOCAL_RANK") or os.environ.get("MPI_LOCALRANKID")
        if local is not None:
            return int(local) % cupy.cuda.runtime.getDeviceCount()
        return cupy.cuda.runtime.getDevice()
    if isinstance(device_id, int):
        return device_id
    idx = getattr(device_id, "index", None)
    return 0 if idx is None else idx


class _CudaWork:
    """A Work for an NCCL call: complete when its CUDA event has been reached."""

    def __init__(self, pg, name, event, cupy):
        self._pg = pg
        self._name = name
        self._event = event
        self._cupy = cupy

    def wait(self, timeout=None):
        self._cupy.cuda.get_current_stream().wait_event(self._event)
        return True

    def is_completed(self):
        return self._event.done

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def synchronize(self):
        self._event.synchronize()
