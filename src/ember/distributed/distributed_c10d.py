"""Process groups and collectives (same as `torch.distributed`), every collective one MPI call on tensors' arrays.

The default group is a duplicate of MPI's COMM_WORLD: rank and world size come from MPI, whoever started the
processes (`mpiexec`, `python -m ember.distributed.run`, a cluster's MPI launcher). Tensors travel as their NumPy
buffers (uppercase, buffer-based mpi4py calls), never pickled; only the *_object collectives pickle.
"""
import datetime
import enum
import os
import time
import warnings

import numpy as np

from .._tensor import Tensor
from ._mpi import WATCHDOG, available, flat_bytes, install_excepthook, meta_key, mpi, reduce_spec, remove_excepthook

__all__ = [
    "Backend",
    "GroupMember",
    "P2POp",
    "ProcessGroup",
    "ReduceOp",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "default_pg_timeout",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_gloo_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "is_torchelastic_launched",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
]

default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INIT = "Default process group has not been initialized, please make sure to call init_process_group."


class Backend(str):
    """Same as `torch.distributed.Backend`: a lower-case backend name ("mpi", "gloo" = MPI on the CPU, "nccl")."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):  # torch raises ValueError here
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")  # noqa: TRY004
        value = name.lower()
        if value not in ("gloo", "nccl", "mpi", "undefined", "cpu:gloo,cuda:nccl"):
            raise ValueError(f"Invalid backend: '{name}'")
        return str.__new__(cls, value)


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9


class ReduceOp:
    """Same as `torch.distributed.ReduceOp`."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


class ProcessGroup:
    """A group of ranks: an MPI communicator (and an NCCL communicator for the "nccl" backend)."""

    def __init__(self, comm, ranks, backend, timeout, name=""):
        self._comm = comm
        self._ranks = ranks            # global rank of each group rank
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._backend = Backend(backend)
        self._timeout = timeout.total_seconds()
        self._nccl = None
        self.group_name = name

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def name(self):
        return self._backend.upper() if self._backend != "gloo" else "GLOO"

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup backend={self._backend} ranks={self._ranks}>"


class GroupMember:
    """Same as `torch.distributed.GroupMember`: WORLD is the default group once initialised."""
    WORLD = None
    NON_GROUP_MEMBER = -100


group = GroupMember  # torch.distributed.group.WORLD

_STATE = {"world": None, "groups": [], "checks": True}


# ----- work handles -----

class Work:
    """Same as `torch.distributed.Work`: the handle of an async_op=True call; wait() finishes it."""
    __slots__ = ("_done", "_finish", "_name", "_pg", "_reqs", "_result", "_status")

    def __init__(self, pg, reqs, name, finish=None, result=None):
        self._pg = pg
        self._reqs = reqs
        self._name = name
        self._finish = finish
        self._done = False
        self._result = result
        self._status = None

    def _complete(self):
        self._done = True
        f = self._finish
        if f is not None:
            self._finish = None
            f()

    def wait(self, timeout=None):
        if self._done:
            return True
        if self._reqs:
            if timeout is None or (isinstance(timeout, datetime.timedelta) and timeout.total_seconds() <= 0):
                _blocking(self._pg, self._name, mpi().Request.Waitall, self._reqs)
            else:
                secs = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
                self._poll(secs)
        self._complete()
        return True

    def _poll(self, secs):
        test = mpi().Request.Testall
        end = time.monotonic() + secs
        delay = 1e-5
        while not test(self._reqs):
            if time.monotonic() > end:
                raise RuntimeError(f"{self._name} timed out after {secs:g} seconds in Work.wait")
            time.sleep(delay)
            delay = min(delay * 2, 1e-3)

    def is_completed(self):
        if not self._done and (not self._reqs or mpi().Request.Testall(self._reqs)):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def exception(self):
        return None

    def result(self):
        self.wait()
        return list(self._result) if self._result is not None else []

    def synchronize(self):
        self.wait()

    def __repr__(self):
        return f"<ember.distributed.Work {self._name} completed={self._done}>"


def _done_work(pg, name, result=None):
    w = Work(pg, None, name, result=result)
    w._done = True
    return w


def _blocking(pg, name, fn, *args):
    """Run one blocking MPI call under the watchdog (the group's timeout)."""
    cur = WATCHDOG.current
    cur[1] = name
    cur[2] = pg._timeout
    cur[0] = time.monotonic()
    try:
        return fn(*args)
    finally:
        cur[0] = None


# ----- initialisation -----

def is_available():
    """Same as `torch.distributed.is_available`: True when mpi4py can be imported."""
    return available()


def is_mpi_available():
    return available()


def is_gloo_available():
    return available()


def is_nccl_available():
    import importlib.util
    return importlib.util.find_spec("cupy") is not None


def is_torchelastic_launched():
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized():
    """Same as `torch.distributed.is_initialized`."""
    return _STATE["world"] is not None


def _env_int(name):
    v = os.environ.get(name)
    if v is None or v == "":
        return None
    try:
        return int(v)
    except ValueError:
        raise ValueError(f"Error initializing ember.distributed using env:// rendezvous: environment variable "
                         f"{name} must be an integer, got {v!r}") from None


def _check_layout(world_size, rank, init_method, size, mpi_rank):
    """The rank/world size the caller or the environment asked for must be MPI's."""
    launch = ("ember.distributed connects processes through MPI: start them with `mpiexec -n N python script.py` "
              "or `python -m ember.distributed.run --nproc-per-node N script.py`")
    if init_method is None or init_method.startswith("env://"):
        for var, mine in (("WORLD_SIZE", size), ("RANK", mpi_rank)):
            v = _env_int(var)
            if v is not None and v != mine:
                raise RuntimeError(f"environment variable {var}={v} does not match MPI's view of this process "
                                   f"(rank {mpi_rank} of an MPI job of {size} process(es)). {launch}.")
    if world_size is not None and world_size != -1 and world_size != size:
        raise RuntimeError(f"init_process_group(world_size={world_size}) does not match MPI's view: this MPI job "
                           f"has {size} process(es). {launch}.")
    if rank is not None and rank != -1 and rank != mpi_rank:
        raise RuntimeError(f"init_process_group(rank={rank}) does not match MPI's view: MPI gave this process "
                           f"rank {mpi_rank}. {launch}.")


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Same as `torch.distributed.init_process_group`, on MPI.

    The processes and their ranks come from MPI; `init_method` ("env://", "tcp://...", "file://...") and explicit
    `world_size`/`rank` are checked against MPI's view, never used to connect. "gloo" is MPI on the CPU. `store` is
    not supported. A single process started without a launcher forms a world of one."""
    if _STATE["world"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("ember.distributed does not support store-based initialisation; processes are "
                                  "connected by MPI")
    if backend is None:
        backend = "mpi"
    b = Backend(backend)
    if b == "undefined" or b == "cpu:gloo,cuda:nccl":
        b = Backend("mpi")
    if timeout is None:
        timeout = default_pg_timeout if b != "nccl" else datetime.timedelta(minutes=10)
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    M = mpi()
    world = M.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    _check_layout(world_size, rank, init_method, size, me)
    comm = world.Dup()
    _fill_env(comm, size, me)
    pg = ProcessGroup(comm, list(range(size)), b, timeout, group_name or "0")
    if b == "nccl":
        from .nccl import NcclGroup
        try:
            pg._nccl = NcclGroup(comm, device_id)
        except BaseException:
            comm.Free()
            raise
    _STATE["world"] = pg
    _STATE["groups"] = [pg]
    _STATE["checks"] = os.environ.get("EMBER_DISTRIBUTED_CHECKS", "1") != "0"
    GroupMember.WORLD = pg
    WATCHDOG.start(max(0.05, min(1.0, pg._timeout / 4)))
    install_excepthook()


def _fill_env(comm, size, me):
    """Under a bare `mpiexec`, give the process the variables torchrun would have set (scripts read LOCAL_RANK
    to pick their GPU); values already present are kept."""
    if "LOCAL_RANK" not in os.environ or "LOCAL_WORLD_SIZE" not in os.environ:
        M = mpi()
        local = comm.Split_type(M.COMM_TYPE_SHARED, key=me)
        os.environ.setdefault("LOCAL_RANK", str(local.Get_rank()))
        os.environ.setdefault("LOCAL_WORLD_SIZE", str(local.Get_size()))
        local.Free()
    os.environ.setdefault("RANK", str(me))
    os.environ.setdefault("WORLD_SIZE", str(size))


def destroy_process_group(group=None):
    """Same as `torch.distributed.destroy_process_group`. MPI itself stays initialised (it cannot restart), so
    init_process_group may be called again."""
    world = _STATE["world"]
    if world is None:
        raise ValueError(_NOT_INIT)
    if group is None or group is world:
        for pg in _STATE["groups"]:
            _free(pg)
        _STATE["world"] = None
        _STATE["groups"] = []
        GroupMember.WORLD = None
        WATCHDOG.stop()
        remove_excepthook()
    elif isinstance(group, ProcessGroup):
        _free(group)
        if group in _STATE["groups"]:
            _STATE["groups"].remove(group)


def _free(pg):
    if pg._nccl is not None:
        pg._nccl.destroy()
        pg._nccl = None
    if pg._comm is not None:
        pg._comm.Free()
        pg._comm = None


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None, sort_ranks=True):
    """Same as `torch.distributed.new_group`: every rank of the default group must call it; a rank not in `ranks`
    gets GroupMember.NON_GROUP_MEMBER."""
    world = _world()
    if ranks is None:
        ranks = list(range(world._size))
    ranks = [int(r) for r in ranks]
    if sort_ranks:
        ranks = sorted(ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError("the new group cannot have duplicate ranks")
    for r in ranks:
        if r < 0 or r >= world._size:
            raise ValueError("The new group's rank should be within the world_size set by init_process_group")
    me = world._rank
    member = me in ranks
    M = mpi()
    comm = _blocking(world, "new_group", world._comm.Split, 0 if member else M.UNDEFINED,
                     ranks.index(me) if member else 0)
    if not member:
        return GroupMember.NON_GROUP_MEMBER
    b = Backend(backend) if backend is not None else world._backend
    t = timeout if timeout is not None else datetime.timedelta(seconds=world._timeout)
    pg = ProcessGroup(comm, ranks, b, t, group_desc or str(len(_STATE["groups"])))
    if b == "nccl":
        from .nccl import NcclGroup
        pg._nccl = NcclGroup(comm, device_id)
    _STATE["groups"].append(pg)
    return pg


def _world():
    w = _STATE["world"]
    if w is None:
        raise ValueError(_NOT_INIT)
    return w


def _group(g, op_name):
    """The ProcessGroup to run on, or None (with torch's warning) on a rank outside `g`."""
    w = _STATE["world"]
    if w is None:
        raise ValueError(_NOT_INIT)
    if g is None:
        return w
    if g is GroupMember.NON_GROUP_MEMBER:
        warnings.warn(f"Running {op_name} on global rank {w._rank} which does not belong to the given group.",
                      stacklevel=3)
        return None
    if not isinstance(g, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(g).__name__}")
    if g._comm is None:
        raise RuntimeError("the process group has been destroyed")
    return g


def get_rank(group=None):
    """Same as `torch.distributed.get_rank`: the rank in `group` (-1 outside it)."""
    pg = _world() if group is None else group
    if pg is GroupMember.NON_GROUP_MEMBER:
        _world()
        return -1
    return pg._rank


def get_world_size(group=None):
    """Same as `torch.distributed.get_world_size` (-1 outside `group`)."""
    pg = _world() if group is None else group
    if pg is GroupMember.NON_GROUP_MEMBER:
        _world()
        return -1
    return pg._size


def get_backend(group=None):
    """Same as `torch.distributed.get_backend`."""
    pg = _world() if group is None else group
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return pg._backend


def get_process_group_ranks(group):
    """Same as `torch.distributed.get_process_group_ranks`."""
    pg = _world() if group is None else group
    return list(pg._ranks)


def get_group_rank(group, global_rank):
    """Same as `torch.distributed.get_group_rank`."""
    pg = _world() if group is None else group
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def get_global_rank(group, group_rank):
    """Same as `torch.distributed.get_global_rank`."""
    pg = _world() if group is None else group
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def _group_rank(pg, global_rank, group_rank):
    if group_rank is not None:
        if global_rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        if not 0 <= group_rank < pg._size:
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    if global_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    return get_group_rank(pg, global_rank)


# ----- tensor arguments -----

def _check_single_tensor(param, name):
    if not isinstance(param, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
                        f"             but got {type(param)} instead.")


def _check_tensor_list(param, name):
    if not isinstance(param, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(param)} instead.")
    if not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[torch.Tensor]\n"
                        f"             but got {type(param)} with elements of type {[type(p) for p in param]}.")


def _bump(t):
    from ..autograd.graph import counter
    counter(t).v += 1


def _src_array(t):
    """A contiguous host array holding the tensor's values (the tensor's own memory when possible)."""
    d = t._data
    if d.__class__ is np.ndarray:
        return d if d.flags.c_contiguous else np.ascontiguousarray(d)
    return d.get()  # a CuPy array on the MPI backend: staged through the host


def _dst_array(t):
    """(contiguous host array to receive into, write-back callable or None)."""
    d = t._data
    if d.__class__ is np.ndarray:
        if d.flags.c_contiguous and d.flags.writeable:
            return d, None
        c = np.ascontiguousarray(d)
        return c, lambda: np.copyto(d, c)
    c = d.get()

    def back():
        import cupy
        d[...] = cupy.asarray(c)
    return c, back


def _finisher(t, *steps):
    """One callable running the given steps (None skipped) and bumping the tensor's version."""
    steps = [s for s in steps if s is not None]

    def finish():
        for s in steps:
            s()
        _bump(t)
    return finish


def _run(pg, name, async_op, blocking, nonblocking, finish, result=None):
    """Run a collective: the blocking MPI call, or the nonblocking one wrapped in a Work."""
    if async_op:
        req = nonblocking()
        return Work(pg, [req] if not isinstance(req, list) else req, name, finish, result)
    _blocking(pg, name, blocking)
    if finish is not None:
        finish()
    return None


def _same_everywhere(pg, name, arr):
    """Report tensors whose shape or dtype differ across ranks (one small all-reduce), instead of letting MPI
    read or write the wrong number of bytes."""
    if not _STATE["checks"] or pg._size == 1:
        return
    M = mpi()
    k = meta_key(arr)
    buf = np.array([k, -k], dtype=np.int64)
    _blocking(pg, name, pg._comm.Allreduce, M.IN_PLACE, [buf, M.INT64_T], M.MAX)
    if buf[0] == k and buf[1] == -k:
        return
    mine = f"{list(arr.shape)} {arr.dtype}"
    every = _blocking(pg, name, pg._comm.allgather, mine)
    desc = ", ".join(f"rank {pg._ranks[i]}: {d}" for i, d in enumerate(every))
    raise RuntimeError(f"{name}: the tensors differ in shape or dtype across ranks ({desc}); every rank must pass "
                       f"a tensor of the same shape and dtype")


# ----- reductions -----

def _mpi_op(op, dt, name):
    M = mpi()
    if op is RedOpType.PREMUL_SUM or op is RedOpType.UNUSED or not isinstance(op, RedOpType):
        raise ValueError(f"{name}: unsupported reduce op {op}")
    if dt == np.bool_:
        return {RedOpType.SUM: M.LOR, RedOpType.MAX: M.LOR, RedOpType.BOR: M.LOR, RedOpType.AVG: M.LOR,
                RedOpType.PRODUCT: M.LAND, RedOpType.MIN: M.LAND, RedOpType.BAND: M.LAND,
                RedOpType.BXOR: M.LXOR}[op]
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR):
        if dt.kind not in "iu":
            raise RuntimeError(f"Cannot use {op} with non-integral dtype")
        return {RedOpType.BAND: M.BAND, RedOpType.BOR: M.BOR, RedOpType.BXOR: M.BXOR}[op]
    if dt.kind == "c" and op in (RedOpType.MIN, RedOpType.MAX):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    return {RedOpType.SUM: M.SUM, RedOpType.AVG: M.SUM, RedOpType.PRODUCT: M.PROD, RedOpType.MIN: M.MIN,
            RedOpType.MAX: M.MAX}[op]


def _reduce_steps(t, arr, back, op, size):
    """Finishing steps of a reduction into `arr` (the tensor's array or a staging copy): average, cast, write back."""
    red, mt, cast = reduce_spec(arr)

    def post():
        if op is RedOpType.AVG:
            if red.dtype.kind in "iu":
                np.floor_divide(red, size, out=red)
            elif red.dtype.kind != "b":
                np.divide(red, size, out=red)
        if cast:
            np.copyto(arr, red.astype(arr.dtype))
    return red, mt, post, back


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Same as `torch.distributed.all_reduce` (in place): MPI Allreduce with MPI_IN_PLACE. AVG is supported on
    every backend."""
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "all_reduce")
    if pg is None:
        return None
    if pg._nccl is not None:
        return pg._nccl.all_reduce(pg, tensor, op, async_op)
    arr, back = _dst_array(tensor)
    mop = _mpi_op(op, arr.dtype, "all_reduce")
    _same_everywhere(pg, "all_reduce", arr)
    red, mt, post, back = _reduce_steps(tensor, arr, back, op, pg._size)
    M = mpi()
    comm = pg._comm
    return _run(pg, "all_reduce", async_op,
                lambda: comm.Allreduce(M.IN_PLACE, [red, mt], mop),
                lambda: comm.Iallreduce(M.IN_PLACE, [red, mt], mop),
                _finisher(tensor, post, back))


def _all_reduce_array(pg, arr, async_op):
    """Sum a contiguous host array in place across `pg` (no checks): DistributedDataParallel's bucket reduction."""
    M = mpi()
    red, mt, cast = reduce_spec(arr)
    post = (lambda: np.copyto(arr, red.astype(arr.dtype))) if cast else None
    comm = pg._comm
    return _run(pg, "all_reduce", async_op, lambda: comm.Allreduce(M.IN_PLACE, [red, mt], M.SUM),
                lambda: comm.Iallreduce(M.IN_PLACE, [red, mt], M.SUM), post)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Same as `torch.distributed.reduce`: the result lands in `tensor` on rank `dst`; other ranks' tensors are
    left unchanged."""
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "reduce")
    if pg is None:
        return None
    root = _group_rank(pg, dst, group_dst)
    if pg._nccl is not None:
        return pg._nccl.reduce(pg, tensor, root, op, async_op)
    M = mpi()
    comm = pg._comm
    if pg._rank != root:
        arr = _src_array(tensor)
        mop = _mpi_op(op, arr.dtype, "reduce")
        _same_everywhere(pg, "reduce", arr)
        red, mt, _ = reduce_spec(arr)
        return _run(pg, "reduce", async_op, lambda: comm.Reduce([red, mt], None, mop, root),
                    lambda: comm.Ireduce([red, mt], None, mop, root), None)
    arr, back = _dst_array(tensor)
    mop = _mpi_op(op, arr.dtype, "reduce")
    _same_everywhere(pg, "reduce", arr)
    red, mt, post, back = _reduce_steps(tensor, arr, back, op, pg._size)
    return _run(pg, "reduce", async_op, lambda: comm.Reduce(M.IN_PLACE, [red, mt], mop, root),
                lambda: comm.Ireduce(M.IN_PLACE, [red, mt], mop, root), _finisher(tensor, post, back))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Same as `torch.distributed.broadcast` (in place): MPI Bcast of the tensor's bytes."""
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "broadcast")
    if pg is None:
        return None
    root = _group_rank(pg, src, group_src)
    if pg._nccl is not None:
        return pg._nccl.broadcast(pg, tensor, root, async_op)
    M = mpi()
    arr, back = _dst_array(tensor) if pg._rank != root else (_src_array(tensor), None)
    _same_everywhere(pg, "broadcast", arr)
    buf = [flat_bytes(arr), M.BYTE]
    comm = pg._comm
    return _run(pg, "broadcast", async_op, lambda: comm.Bcast(buf, root), lambda: comm.Ibcast(buf, root),
                _finisher(tensor, back) if pg._rank != root else None)


def _unpack(arr, tensors, backs=None):
    """Copy consecutive pieces of the 1-d byte array `arr` into `tensors`."""
    def run():
        off = 0
        for t in tensors:
            d = t._data
            n = d.size * d.itemsize
            piece = arr[off:off + n].view(d.dtype).reshape(d.shape)
            if d.__class__ is np.ndarray:
                np.copyto(d, piece)
            else:
                import cupy
                d[...] = cupy.asarray(piece)
            off += n
            _bump(t)
    return run


def _nbytes(t):
    return t._data.size * t._data.itemsize


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Same as `torch.distributed.all_gather`: `tensor_list[i]` receives rank i's tensor (MPI Allgatherv)."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "all_gather")
    if pg is None:
        return None
    if len(tensor_list) != pg._size:
        raise ValueError(f"all_gather: tensor_list must have one tensor per rank ({pg._size}), "
                         f"got {len(tensor_list)}")
    if pg._nccl is not None:
        return pg._nccl.all_gather(pg, tensor_list, tensor, async_op)
    M = mpi()
    counts = [_nbytes(t) for t in tensor_list]
    if counts[pg._rank] != _nbytes(tensor):
        raise RuntimeError(f"all_gather: tensor_list[{pg._rank}] has {tensor_list[pg._rank].numel()} elements of "
                           f"{tensor_list[pg._rank].dtype} but this rank's tensor has {tensor.numel()} of "
                           f"{tensor.dtype}")
    displs = np.cumsum([0] + counts[:-1]).tolist()
    out = np.empty(sum(counts), np.uint8)
    send = [flat_bytes(_src_array(tensor)), M.BYTE]
    recv = [out, (counts, displs), M.BYTE]
    comm = pg._comm
    return _run(pg, "all_gather", async_op, lambda: comm.Allgatherv(send, recv),
                lambda: comm.Iallgatherv(send, recv), _unpack(out, tensor_list))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Same as `torch.distributed.all_gather_into_tensor`: output is the ranks' inputs concatenated (or
    stacked) along dim 0, gathered straight into its memory (MPI Allgather)."""
    _check_single_tensor(input_tensor, "input_tensor")
    _check_single_tensor(output_tensor, "output_tensor")
    pg = _group(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor.dtype != input_tensor.dtype:
        raise RuntimeError(f"output tensor must have the same type as input tensor, got {output_tensor.dtype} "
                           f"and {input_tensor.dtype}")
    if output_tensor.numel() != input_tensor.numel() * pg._size:
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    if pg._nccl is not None:
        return pg._nccl.all_gather_into_tensor(pg, output_tensor, input_tensor, async_op)
    M = mpi()
    src = _src_array(input_tensor)
    _same_everywhere(pg, "all_gather_into_tensor", src)
    out, back = _dst_array(output_tensor)
    send, recv = [flat_bytes(src), M.BYTE], [flat_bytes(out), M.BYTE]
    comm = pg._comm
    return _run(pg, "all_gather_into_tensor", async_op, lambda: comm.Allgather(send, recv),
                lambda: comm.Iallgather(send, recv), _finisher(output_tensor, back))


def _rooted_list(pg, group, tensors, name, root, group_root, role):
    """The root's rank in pg for gather/scatter, after torch's checks that only the root passes a list, with one
    tensor per rank."""
    if root is None and group_root is None:
        root = 0 if group is None else pg._ranks[0]
    root = _group_rank(pg, root, group_root)
    arg = f"{name}_list"
    if pg._rank == root:
        if not tensors:
            raise ValueError(f"Argument ``{arg}`` must be specified on {role} rank.")
        if len(tensors) != pg._size:
            raise ValueError(f"{name}: {arg} must have one tensor per rank ({pg._size}), got {len(tensors)}")
    elif tensors:
        raise ValueError(f"Argument ``{arg}`` must NOT be specified on non-{role} ranks.")
    return root


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Same as `torch.distributed.gather` (MPI Gatherv)."""
    _check_single_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    else:
        gather_list = []
    pg = _group(group, "gather")
    if pg is None:
        return None
    root = _rooted_list(pg, group, gather_list, "gather", dst, group_dst, "destination")
    if pg._nccl is not None:
        raise RuntimeError("gather is not supported by ember's NCCL backend; use all_gather")
    M = mpi()
    send = [flat_bytes(_src_array(tensor)), M.BYTE]
    comm = pg._comm
    if pg._rank != root:
        return _run(pg, "gather", async_op, lambda: comm.Gatherv(send, None, root),
                    lambda: comm.Igatherv(send, None, root), None)
    counts = [_nbytes(t) for t in gather_list]
    displs = np.cumsum([0] + counts[:-1]).tolist()
    out = np.empty(sum(counts), np.uint8)
    recv = [out, (counts, displs), M.BYTE]
    return _run(pg, "gather", async_op, lambda: comm.Gatherv(send, recv, root),
                lambda: comm.Igatherv(send, recv, root), _unpack(out, gather_list))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Same as `torch.distributed.scatter` (MPI Scatterv)."""
    _check_single_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    else:
        scatter_list = []
    pg = _group(group, "scatter")
    if pg is None:
        return None
    root = _rooted_list(pg, group, scatter_list, "scatter", src, group_src, "source")
    if pg._nccl is not None:
        raise RuntimeError("scatter is not supported by ember's NCCL backend; use broadcast")
    M = mpi()
    out, back = _dst_array(tensor)
    recv = [flat_bytes(out), M.BYTE]
    comm = pg._comm
    send = None
    if pg._rank == root:
        counts = [_nbytes(t) for t in scatter_list]
        if counts[root] != out.nbytes:
            raise RuntimeError("scatter: every tensor in scatter_list must have the output tensor's size and dtype")
        data = np.concatenate([flat_bytes(_src_array(t)) for t in scatter_list])
        send = [data, (counts, np.cumsum([0] + counts[:-1]).tolist()), M.BYTE]
    return _run(pg, "scatter", async_op, lambda: comm.Scatterv(send, recv, root),
                lambda: comm.Iscatterv(send, recv, root), _finisher(tensor, back))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Same as `torch.distributed.reduce_scatter`: output = reduction over ranks of input_list[my rank]."""
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    pg = _group(group, "reduce_scatter")
    if pg is None:
        return None
    if len(input_list) != pg._size:
        raise ValueError(f"reduce_scatter: input_list must have one tensor per rank ({pg._size}), "
                         f"got {len(input_list)}")
    if pg._nccl is not None:
        raise RuntimeError("reduce_scatter with a tensor list is not supported by ember's NCCL backend; use "
                           "reduce_scatter_tensor")
    for t in input_list:
        if t.dtype != output.dtype:
            raise RuntimeError("reduce_scatter: input tensors must have the output tensor's dtype")
    if input_list[pg._rank].numel() != output.numel():
        raise RuntimeError("reduce_scatter: input_list[rank] must have as many elements as the output tensor")
    data = np.concatenate([_src_array(t).reshape(-1) for t in input_list])
    out, back = _dst_array(output)
    mop = _mpi_op(op, out.dtype, "reduce_scatter")
    counts = [t.numel() for t in input_list]
    sred, mt, _ = reduce_spec(data)
    red, _, post, back = _reduce_steps(output, out, back, op, pg._size)
    comm = pg._comm
    return _run(pg, "reduce_scatter", async_op,
                lambda: comm.Reduce_scatter([sred, mt], [red, mt], counts, mop),
                lambda: comm.Ireduce_scatter([sred, mt], [red, mt], counts, mop), _finisher(output, post, back))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Same as `torch.distributed.reduce_scatter_tensor`: `input` holds world_size chunks along dim 0; rank i
    receives the reduction of chunk i (MPI Reduce_scatter_block)."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    pg = _group(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    if output.dtype != input.dtype:
        raise RuntimeError(f"input tensor must have the same type as output tensor, got {input.dtype} and "
                           f"{output.dtype}")
    if input.numel() != output.numel() * pg._size:
        raise ValueError("input tensor must be the same size as output size times world size")
    if pg._nccl is not None:
        return pg._nccl.reduce_scatter_tensor(pg, output, input, op, async_op)
    src = _src_array(input)
    _same_everywhere(pg, "reduce_scatter_tensor", src)
    out, back = _dst_array(output)
    mop = _mpi_op(op, out.dtype, "reduce_scatter_tensor")
    sred, mt, _ = reduce_spec(src)
    red, _, post, back = _reduce_steps(output, out, back, op, pg._size)
    comm = pg._comm
    return _run(pg, "reduce_scatter_tensor", async_op,
                lambda: comm.Reduce_scatter_block([sred, mt], [red, mt], mop),
                lambda: comm.Ireduce_scatter_block([sred, mt], [red, mt], mop), _finisher(output, post, back))


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Same as `torch.distributed.all_to_all`: rank j's input_tensor_list[i] lands in rank i's
    output_tensor_list[j] (MPI Alltoallv)."""
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    pg = _group(group, "all_to_all")
    if pg is None:
        return None
    if len(input_tensor_list) != pg._size or len(output_tensor_list) != pg._size:
        raise ValueError(f"all_to_all: both tensor lists must have one tensor per rank ({pg._size})")
    if pg._nccl is not None:
        raise RuntimeError("all_to_all is not supported by ember's NCCL backend yet")
    M = mpi()
    scounts = [_nbytes(t) for t in input_tensor_list]
    rcounts = [_nbytes(t) for t in output_tensor_list]
    data = np.concatenate([flat_bytes(_src_array(t)) for t in input_tensor_list])
    out = np.empty(sum(rcounts), np.uint8)
    send = [data, (scounts, np.cumsum([0] + scounts[:-1]).tolist()), M.BYTE]
    recv = [out, (rcounts, np.cumsum([0] + rcounts[:-1]).tolist()), M.BYTE]
    comm = pg._comm
    return _run(pg, "all_to_all", async_op, lambda: comm.Alltoallv(send, recv), lambda: comm.Ialltoallv(send, recv),
                _unpack(out, output_tensor_list))


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """Same as `torch.distributed.all_to_all_single`: splits along dim 0 (equal splits by default)."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    pg = _group(group, "all_to_all_single")
    if pg is None:
        return None
    if pg._nccl is not None:
        raise RuntimeError("all_to_all_single is not supported by ember's NCCL backend yet")
    M = mpi()
    n = pg._size

    def counts(t, splits, name):
        d = t._data
        row = (d.size // d.shape[0] if d.ndim and d.shape[0] else d.size) * d.itemsize
        if splits is None or len(splits) == 0:
            if d.ndim == 0 or d.shape[0] % n:
                raise ValueError(f"all_to_all_single: the {name} tensor's first dimension must be divisible by "
                                 f"the world size {n}")
            return [d.shape[0] // n * row] * n
        if len(splits) != n or sum(splits) != d.shape[0]:
            raise ValueError(f"all_to_all_single: {name}_split_sizes must have {n} entries summing to "
                             f"{d.shape[0]}")
        return [int(s) * row for s in splits]
    sc = counts(input, input_split_sizes, "input")
    rc = counts(output, output_split_sizes, "output")
    out, back = _dst_array(output)
    send = [flat_bytes(_src_array(input)), (sc, np.cumsum([0] + sc[:-1]).tolist()), M.BYTE]
    recv = [flat_bytes(out), (rc, np.cumsum([0] + rc[:-1]).tolist()), M.BYTE]
    comm = pg._comm
    return _run(pg, "all_to_all_single", async_op, lambda: comm.Alltoallv(send, recv),
                lambda: comm.Ialltoallv(send, recv), _finisher(output, back))


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Same as `torch.distributed.barrier`."""
    pg = _group(group, "barrier")
    if pg is None:
        return None
    if pg._nccl is not None:
        pg._nccl.synchronize()
    comm = pg._comm
    if async_op:
        return Work(pg, [comm.Ibarrier()], "barrier")
    if timeout is not None:
        Work(pg, [comm.Ibarrier()], "barrier").wait(timeout)
        return None
    _blocking(pg, "barrier", comm.Barrier)
    return None


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """Same as `torch.distributed.monitored_barrier`: a barrier that raises after `timeout`."""
    pg = _group(group, "monitored_barrier")
    if pg is None:
        return
    t = timeout if timeout is not None else datetime.timedelta(seconds=pg._timeout)
    Work(pg, [pg._comm.Ibarrier()], "monitored_barrier").wait(t)
    return


# ----- point to point -----

def _peer(pg, rank, group_rank, what):
    peer = _group_rank(pg, rank, group_rank)
    if peer == pg._rank:
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the rank of the current "
                         f"process.")
    return peer


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Same as `torch.distributed.send` (MPI Send of the tensor's bytes)."""
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "send")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "destination")
    if pg._nccl is not None:
        return pg._nccl.send(pg, tensor, peer)
    M = mpi()
    _blocking(pg, "send", pg._comm.Send, [flat_bytes(_src_array(tensor)), M.BYTE], peer, tag)
    return None


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Same as `torch.distributed.recv`: returns the sender's rank (any sender when src is None)."""
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "recv")
    if pg is None:
        return -1
    M = mpi()
    if src is None and group_src is None:
        peer = M.ANY_SOURCE
    else:
        peer = _peer(pg, src, group_src, "source")
    if pg._nccl is not None:
        if peer == M.ANY_SOURCE:
            raise RuntimeError("recv from any source is not supported by the NCCL backend")
        pg._nccl.recv(pg, tensor, peer)
        return pg._ranks[peer]
    arr, back = _dst_array(tensor)
    status = M.Status()
    _blocking(pg, "recv", pg._comm.Recv, [flat_bytes(arr), M.BYTE], peer, tag, status)
    if back is not None:
        back()
    _bump(tensor)
    return pg._ranks[status.Get_source()]


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Same as `torch.distributed.isend`."""
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "isend")
    if pg is None:
        return None
    peer = _peer(pg, dst, group_dst, "destination")
    if pg._nccl is not None:
        return pg._nccl.send(pg, tensor, peer, async_op=True)
    M = mpi()
    buf = flat_bytes(_src_array(tensor))
    return Work(pg, [pg._comm.Isend([buf, M.BYTE], peer, tag)], "isend", result=[tensor])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Same as `torch.distributed.irecv`."""
    _check_single_tensor(tensor, "tensor")
    pg = _group(group, "irecv")
    if pg is None:
        return None
    M = mpi()
    peer = M.ANY_SOURCE if src is None and group_src is None else _peer(pg, src, group_src, "source")
    if pg._nccl is not None:
        return pg._nccl.recv(pg, tensor, peer, async_op=True)
    arr, back = _dst_array(tensor)
    req = pg._comm.Irecv([flat_bytes(arr), M.BYTE], peer, tag)
    return Work(pg, [req], "irecv", _finisher(tensor, back), result=[tensor])


class P2POp:
    """Same as `torch.distributed.P2POp`: one isend/irecv for batch_isend_irecv."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv, send, recv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        _check_single_tensor(tensor, "tensor")
        self.op = op
        self.tensor = tensor
        self.peer = peer
        self.group = group
        self.tag = tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list):
    """Same as `torch.distributed.batch_isend_irecv`: returns one Work per operation."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        fn = isend if p.op in (isend, send) else irecv
        if fn is isend:
            works.append(isend(p.tensor, p.peer, p.group, p.tag, group_dst=p.group_peer))
        else:
            works.append(irecv(p.tensor, p.peer, p.group, p.tag, group_src=p.group_peer))
    return works


# ----- Python objects (pickled) -----

def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Same as `torch.distributed.broadcast_object_list`: object_list is filled in place from `src`."""
    pg = _group(group, "broadcast_object_list")
    if pg is None:
        return
    if src is None and group_src is None:
        src = 0 if group is None else pg._ranks[0]
    root = _group_rank(pg, src, group_src)
    got = _blocking(pg, "broadcast_object_list", pg._comm.bcast, list(object_list) if pg._rank == root else None,
                    root)
    if pg._rank != root:
        object_list[:len(got)] = got


def all_gather_object(object_list, obj, group=None):
    """Same as `torch.distributed.all_gather_object`: object_list[i] becomes rank i's obj."""
    pg = _group(group, "all_gather_object")
    if pg is None:
        return
    got = _blocking(pg, "all_gather_object", pg._comm.allgather, obj)
    for i, o in enumerate(got):
        object_list[i] = o


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Same as `torch.distributed.gather_object`."""
    pg = _group(group, "gather_object")
    if pg is None:
        return
    if dst is None and group_dst is None:
        dst = 0 if group is None else pg._ranks[0]
    root = _group_rank(pg, dst, group_dst)
    if pg._rank == root and object_gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    got = _blocking(pg, "gather_object", pg._comm.gather, obj, root)
    if pg._rank == root:
        for i, o in enumerate(got):
            object_gather_list[i] = o


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None, group=None,
                        group_src=None):
    """Same as `torch.distributed.scatter_object_list`: scatter_object_output_list[0] receives this rank's object."""
    pg = _group(group, "scatter_object_list")
    if pg is None:
        return
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    if src is None and group_src is None:
        src = 0 if group is None else pg._ranks[0]
    root = _group_rank(pg, src, group_src)
    data = list(scatter_object_input_list) if pg._rank == root else None
    scatter_object_output_list[0] = _blocking(pg, "scatter_object_list", pg._comm.scatter, data, root)
