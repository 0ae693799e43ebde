"""MPI access for ember.distributed: the lazy mpi4py import, buffer specs for tensors' arrays, the watchdog."""
import os
import sys
import threading
import time
import zlib

import numpy as np

_MPI = [None]


def mpi():
    """The mpi4py.MPI module, imported on first use: importing it initialises MPI, which `import ember` must not."""
    m = _MPI[0]
    if m is None:
        try:
            from mpi4py import MPI as m
        except ImportError as e:
            raise RuntimeError("ember.distributed needs mpi4py and an MPI library; install them with "
                               "`pip install mpi4py mpich`") from e
        _MPI[0] = m
    return m


def available():
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


# ----- buffers -----

_REDUCE_TYPES = {}  # numpy dtype -> MPI datatype for arithmetic reductions


def _reduce_types():
    if not _REDUCE_TYPES:
        M = mpi()
        for dt, t in ((np.float32, M.FLOAT), (np.float64, M.DOUBLE), (np.int8, M.INT8_T), (np.int16, M.INT16_T),
                      (np.int32, M.INT32_T), (np.int64, M.INT64_T), (np.uint8, M.UINT8_T),
                      (np.complex64, M.C_FLOAT_COMPLEX), (np.complex128, M.C_DOUBLE_COMPLEX), (np.bool_, M.C_BOOL)):
            _REDUCE_TYPES[np.dtype(dt)] = t
    return _REDUCE_TYPES


def flat_bytes(arr):
    """A contiguous array's memory as a 1-d uint8 view (MPI moves every dtype, bfloat16 included, as bytes)."""
    return arr.reshape(-1).view(np.uint8)


def reduce_spec(arr):
    """(array to reduce, MPI datatype, cast back): float16 and bfloat16, which MPI cannot add, go through float32."""
    types = _reduce_types()
    t = types.get(arr.dtype)
    if t is not None:
        return arr, t, False
    if arr.dtype.kind == "f" or arr.dtype.kind == "V" or arr.dtype.name == "bfloat16":
        return arr.astype(np.float32), types[np.dtype(np.float32)], True
    raise RuntimeError(f"ember.distributed cannot reduce tensors of dtype {arr.dtype}")


def meta_key(arr):
    """A deterministic integer naming an array's shape and dtype, the same in every process."""
    return hash((arr.shape, zlib.crc32(arr.dtype.name.encode()))) & 0x3FFFFFFFFFFFFFFF


# ----- watchdog -----

class Watchdog:
    """Aborts the MPI job when a blocking call lasts longer than its group's timeout, so no rank waits forever.

    The main thread only writes the start time and name of the call it is in (two list stores); a daemon thread
    checks them, as the NCCL watchdog of torch does."""

    def __init__(self):
        self.current = [None, "", 0.0]  # start time, operation name, timeout in seconds
        self._stop = threading.Event()
        self._thread = None

    def start(self, poll):
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, args=(poll,), name="ember-distributed-watchdog",
                                            daemon=True)
            self._thread.start()

    def stop(self):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None

    def _run(self, poll):
        cur = self.current
        while not self._stop.wait(poll):
            t0, name, limit = cur[0], cur[1], cur[2]
            if t0 is not None and time.monotonic() - t0 > limit:
                abort(f"[rank {_rank()}] ember.distributed: {name} timed out after {limit:g} seconds (the "
                      f"process group's timeout): another rank has probably failed or stopped calling the same "
                      f"collectives. Aborting the job.")


def _rank():
    try:
        return mpi().COMM_WORLD.Get_rank()
    except Exception:  # noqa: BLE001 - only for a message
        return "?"


def abort(message, code=1):
    """Print `message` and abort every process of the MPI job."""
    try:
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
        sys.stdout.flush()
        time.sleep(0.5)  # the MPI launcher forwards output asynchronously; an abort can drop what is in flight
    finally:
        mpi().COMM_WORLD.Abort(code)
        os._exit(code)


WATCHDOG = Watchdog()


# ----- exceptions abort the job -----

_HOOK = [None]


def _excepthook(tp, value, tb):
    prev = _HOOK[0] or sys.__excepthook__
    prev(tp, value, tb)
    M = _MPI[0]
    if M is not None and M.Is_initialized() and not M.Is_finalized() and M.COMM_WORLD.Get_size() > 1:
        abort(f"[rank {M.COMM_WORLD.Get_rank()}] ember.distributed: an uncaught {tp.__name__} ended this rank; "
              f"aborting the MPI job so that the other ranks do not wait for it forever.")


def install_excepthook():
    """An uncaught exception prints its traceback and then aborts the MPI job (set
    EMBER_DISTRIBUTED_ABORT_ON_ERROR=0 to keep Python's plain behaviour)."""
    if os.environ.get("EMBER_DISTRIBUTED_ABORT_ON_ERROR", "1") == "0" or sys.excepthook is _excepthook:
        return
    _HOOK[0] = sys.excepthook
    sys.excepthook = _excepthook


def remove_excepthook():
    if sys.excepthook is _excepthook:
        sys.excepthook = _HOOK[0] or sys.__excepthook__
        _HOOK[0] = None
