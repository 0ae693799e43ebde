"""DistributedDataParallel: gradients averaged across processes in buckets, overlapped with backward.

Parameters are grouped into flat buckets (reverse registration order, bucket_cap_mb each, the first one 1 MiB as in
torch). Each parameter's post-accumulate-grad hook copies its gradient (divided by the world size) into its bucket
slot; a bucket whose gradients are all in starts a non-blocking all-reduce (MPI Iallreduce / NCCL) at once, in
bucket order on every rank. ember's autograd engine has no end-of-backward callback, so the hook that launches the
last bucket waits for all of them and writes the averages back into .grad: that is the end of the backward pass
for every parameter that takes part. A reduction left unfinished (a parameter got no gradient) is reported at the
next forward, as torch does.
"""
import contextlib

import numpy as np

from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled
from ...distributed import distributed_c10d as c10d
from ...distributed._mpi import flat_bytes, mpi
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_MIB = 1024 * 1024
_FIRST_BUCKET_BYTES = _MIB
_BROADCAST_BYTES = 250 * _MIB


class _Bucket:
    __slots__ = ("flat", "params", "pending", "slots", "views", "work", "xp")

    def __init__(self, params, xp):
        self.params = params   # indices into DistributedDataParallel._params
        self.xp = xp
        dt = None
        total = 0
        offs = []
        for p in (_p for _, _p in params):
            offs.append(total)
            total += p._data.size
            dt = p._data.dtype
        self.flat = xp.zeros(total, dt)
        self.slots = [self.flat[o:o + p._data.size].reshape(p._data.shape) for o, (_, p) in zip(offs, params)]
        self.views = [Tensor._make(s) for s in self.slots]  # the .grad tensors of gradient_as_bucket_view
        self.pending = len(params)
        self.work = None


def _tensors_in(obj, out):
    """Every Tensor inside a forward's output (nested tuples, lists, dicts, dataclass-like objects)."""
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _reached_leaves(outputs):
    """ids of the leaf tensors that the outputs' autograd graph reaches."""
    seen = set()
    leaves = set()
    stack = []
    for t in outputs:
        if not t._requires_grad:
            continue
        if t._grad_fn is None:
            leaves.add(id(t))
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        var = getattr(node, "variable", None) if not node.next_functions else None
        if var is not None:
            leaves.add(id(var))
        for fn, _ in node.next_functions:
            if fn is not None and fn not in seen:
                stack.append(fn)
    return leaves


class DistributedDataParallel(Module):
    """Same as `torch.nn.parallel.DistributedDataParallel`, on ember.distributed (MPI on the CPU, NCCL on GPUs).

    Deviations: buckets are not rebuilt after the first iteration; communication hooks, join() and
    mixed_precision are not supported; the unused-parameter error always names the parameters."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None):
        super().__init__()
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:
                raise NotImplementedError(f"DistributedDataParallel: {name} is not supported by ember")
        self.module = module
        pg = process_group if process_group is not None else c10d._world()
        self.process_group = pg
        self._named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not self._named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        devices = {p.device for _, p in self._named}
        types = {d.type for d in devices}
        if len(types) != 1:
            raise ValueError(f"DistributedDataParallel's input module must be on the same type of devices, but "
                             f"input module parameters locate in {types}.")
        self.device_type = next(iter(types))
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if (device_ids or output_device is not None) and self.device_type == "cpu":
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments only work with "
                             f"single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        self.device_ids = list(device_ids) if device_ids else None
        self.output_device = output_device
        self.dim = dim
        # torch 2.13: forward_sync_buffers, when given, replaces broadcast_buffers (which, when False, also keeps
        # the buffers out of the construction-time broadcast)
        effective = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.broadcast_buffers = effective
        self.forward_sync_buffers = effective if forward_sync_buffers is None else bool(forward_sync_buffers)
        init_buffers = effective if forward_sync_buffers is None else True
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = 25 if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * _MIB)
        self._verify_same_model()
        if init_sync:
            self._broadcast_states([p for _, p in module.named_parameters()] +
                                   ([b for _, b in module.named_buffers()] if init_buffers else []))
        self._build_buckets()
        self._armed = False       # an iteration whose gradients must be reduced is under way
        self._fired = False       # some hook of that iteration has run
        self._unused = ()         # parameter indices without a gradient this iteration (find_unused_parameters)
        self._ready = [False] * len(self._named)
        self._next = 0
        self._handles = [p.register_post_accumulate_grad_hook(self._hook_for(i))
                         for i, (_, p) in enumerate(self._named)]

    # ----- construction -----
    def _verify_same_model(self):
        """Every rank must hold the same parameters (names, shapes, dtypes), as torch checks at construction."""
        pg = self.process_group
        if pg._size == 1:
            return
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in self._named]
        every = [None] * pg._size
        c10d.all_gather_object(every, mine, group=pg)
        for r, theirs in enumerate(every):
            if len(theirs) != len(mine):
                raise RuntimeError(f"DDP expects same model across all ranks, but Rank {pg._rank} has {len(mine)} "
                                   f"params, while rank {pg._ranks[r]} has inconsistent {len(theirs)} params.")
            for a, b in zip(mine, theirs):
                if a != b:
                    raise RuntimeError(f"DDP expects same model across all ranks, but Rank {pg._rank} has "
                                       f"parameter {a[0]} with shape {list(a[1])} and dtype {a[2]}, while rank "
                                       f"{pg._ranks[r]} has {b[0]} with shape {list(b[1])} and dtype {b[2]}.")

    def _broadcast_states(self, tensors):
        """Rank 0's values into every rank's tensors, a few coalesced Bcasts of their bytes."""
        pg = self.process_group
        if pg._size == 1 or not tensors:
            return
        if pg._nccl is not None:
            for t in tensors:
                c10d.broadcast(t, group_src=0, group=pg)
            return
        M = mpi()
        chunk = []
        size = 0
        for t in tensors + [None]:
            if t is not None:
                chunk.append(t)
                size += t._data.nbytes
            if chunk and (t is None or size >= _BROADCAST_BYTES):
                data = np.concatenate([flat_bytes(c10d._src_array(c)) for c in chunk])
                c10d._blocking(pg, "broadcast", pg._comm.Bcast, [data, M.BYTE], 0)
                if pg._rank != 0:
                    c10d._unpack(data, chunk)()
                chunk, size = [], 0

    def _build_buckets(self):
        """Buckets of parameters in reverse registration order, one dtype each, about bucket_cap_mb each."""
        limits = [self.bucket_bytes_cap] if self.static_graph else \
            [min(_FIRST_BUCKET_BYTES, self.bucket_bytes_cap), self.bucket_bytes_cap]
        open_ = {}   # (dtype, device) -> [members, bytes, number of buckets closed so far]
        closed = []
        order = list(range(len(self._named)))[::-1]
        for pos, i in enumerate(order):
            p = self._named[i][1]
            key = (p._data.dtype, str(p.device))
            entry = open_.setdefault(key, [[], 0, 0])
            entry[0].append((pos, i))
            entry[1] += p._data.nbytes
            if entry[1] >= limits[min(entry[2], len(limits) - 1)]:
                closed.append(entry[0])
                open_[key] = [[], 0, entry[2] + 1]
        closed += [e[0] for e in open_.values() if e[0]]
        closed.sort(key=lambda members: min(pos for pos, _ in members))
        self._buckets = []
        self._where = [None] * len(self._named)   # parameter index -> (bucket index, slot index)
        for b, members in enumerate(closed):
            params = [(i, self._named[i][1]) for _, i in members]
            xp = np if params[0][1]._data.__class__ is np.ndarray else _array_module(params[0][1]._data)
            self._buckets.append(_Bucket(params, xp))
            for s, (i, _) in enumerate(params):
                self._where[i] = (b, s)

    # ----- forward -----
    def forward(self, *inputs, **kwargs):
        if self._armed:
            if self._fired:
                self._unfinished_reduction()
            self._armed = False
        grad = is_grad_enabled()
        if grad and self.require_forward_param_sync and self.forward_sync_buffers and self.process_group._size > 1:
            buffers = [b for _, b in self.module.named_buffers()]
            if buffers:
                self._broadcast_states(buffers)
        out = self.module(*inputs, **kwargs)
        if grad and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out):
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._ready = [False] * len(self._named)
        self._next = 0
        self._fired = False
        self._unused = ()
        if self.find_unused_parameters:
            reached = _reached_leaves(_tensors_in(out, []))
            self._unused = tuple(i for i, (_, p) in enumerate(self._named) if id(p) not in reached)
        self._armed = True

    @contextlib.contextmanager
    def no_sync(self):
        """Same as `torch.nn.parallel.DistributedDataParallel.no_sync`: gradients accumulate locally inside."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    # ----- backward: the hooks -----
    def _hook_for(self, i):
        def hook(p):
            if self._armed:
                self._mark_ready(i, p)
        return hook

    def _mark_ready(self, i, p):
        if self._ready[i]:
            raise RuntimeError(f"Expected to mark a variable ready only once. This error is caused by one of the "
                               f"following reasons: 1) Use of a module parameter outside the `forward` function. "
                               f"2) Reused parameters in multiple reentrant backward passes. Parameter "
                               f"{self._named[i][0]} (index {i}) was marked ready twice.")
        if not self._fired:
            self._fired = True
            for u in self._unused:   # torch: unused parameters count as ready, with zero gradient
                if u != i:
                    self._mark_one(u, None)
        self._mark_one(i, p._grad)
        if self._next == len(self._buckets):
            self._finalize()

    def _mark_one(self, i, grad):
        self._ready[i] = True
        b, s = self._where[i]
        bucket = self._buckets[b]
        slot = bucket.slots[s]
        n = self.process_group._size
        if grad is None:
            slot[...] = 0
        elif self.gradient_as_bucket_view and grad is bucket.views[s]:
            slot /= n
        else:
            bucket.xp.divide(grad._data, n, out=slot)
            if self.gradient_as_bucket_view:
                bucket.params[s][1]._grad = bucket.views[s]
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch()
        elif self._next:
            self._progress()

    def _launch(self):
        """Start the reductions of the ready buckets, in bucket order (the same order on every rank)."""
        pg = self.process_group
        buckets = self._buckets
        while self._next < len(buckets) and buckets[self._next].pending == 0:
            b = buckets[self._next]
            if pg._nccl is not None:
                b.work = pg._nccl.all_reduce(pg, Tensor._make(b.flat), c10d.ReduceOp.SUM, True)
            else:
                b.work = c10d._all_reduce_array(pg, b.flat, True)
            self._next += 1

    def _progress(self):
        """Let MPI advance the reductions in flight (MPI progresses non-blocking collectives inside MPI calls)."""
        reqs = [r for b in self._buckets[:self._next] if b.work is not None and getattr(b.work, "_reqs", None)
                for r in b.work._reqs]
        if reqs:
            mpi().Request.Testall(reqs)

    def _finalize(self):
        """Wait for every bucket and write the averaged gradients into .grad."""
        for b in self._buckets:
            b.work.wait()
            b.work = None
        used = self._globally_used() if self.find_unused_parameters else None
        for b in self._buckets:
            for (i, p), slot, view in zip(b.params, b.slots, b.views):
                g = p._grad
                if g is None:
                    if used is not None and used[i]:
                        p._grad = view if self.gradient_as_bucket_view else Tensor._make(slot.copy())
                    continue
                if g is view:
                    continue
                d = g._data
                if getattr(d.flags, "writeable", True) and d.shape == slot.shape:  # CuPy flags lack writeable
                    d[...] = slot
                else:
                    p._grad = Tensor._make(slot.copy())
        self._armed = False
        self._fired = False

    def _globally_used(self):
        """Whether some rank used each parameter (find_unused_parameters): one small all-reduce, as torch's
        local_used_map."""
        local = np.ones(len(self._named), np.int32)
        local[list(self._unused)] = 0
        c10d._all_reduce_array(self.process_group, local, False)  # on the group's MPI communicator, any backend
        return local > 0

    def _unfinished_reduction(self):
        names = [n for i, (n, _) in enumerate(self._named) if not self._ready[i]]
        idx = [str(i) for i, _ in enumerate(self._named) if not self._ready[i]]
        for b in self._buckets:   # the launched reductions are matched on the other ranks: finish them
            if b.work is not None:
                b.work.wait()
                b.work = None
        self._armed = False
        self._fired = False
        r = self.process_group._rank
        if self.static_graph:
            head = ("Expected to have finished reduction in the prior iteration before starting a new one. This "
                    "error indicates that your training graph has changed in this iteration, e.g., one parameter "
                    "is used in first iteration, but then got unused in the second iteration. this is not "
                    "compatible with static_graph set to True.")
        else:
            head = ("Expected to have finished reduction in the prior iteration before starting a new one. This "
                    "error indicates that your module has parameters that were not used in producing loss. You "
                    "can enable unused parameter detection by passing the keyword argument "
                    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
                    "making sure all `forward` function outputs participate in calculating loss. \n"
                    "If you already have done the above, then the distributed data parallel module wasn't able "
                    "to locate the output tensors in the return value of your module's `forward` function. Please "
                    "include the loss function and the structure of the return value of `forward` of your module "
                    "when reporting this issue (e.g. list, dict, iterable).")
        raise RuntimeError(f"{head}\nParameters which did not receive grad for rank {r}: {', '.join(names)}\n"
                           f"Parameter indices which did not receive grad for rank {r}: {' '.join(idx)}")

    def _remove_hooks(self):
        for h in self._handles:
            h.remove()
        self._handles = []


def _array_module(arr):
    import importlib
    return importlib.import_module(type(arr).__module__.split(".")[0])
