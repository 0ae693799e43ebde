"""DataLoader: batches from a dataset, in the main process or in worker processes (same as
`torch.utils.data.dataloader`)."""
import itertools
import math
import multiprocessing
import os
import queue
import re
import signal
import sys
import time
import warnings
import weakref

from . import _worker
from ._worker import ExceptionWrapper, _IterableDatasetStopIteration, _Pickled, _ResumeIteration, get_worker_info
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: endless Nones (the dataset decides what comes next)."""

    def __iter__(self):
        while True:
            yield None


def _ember():
    import ember
    return ember


# Settings a running iterator depends on: changing them afterwards would silently not take effect.
_FROZEN_ATTRS = frozenset(("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"))


class DataLoader:
    """Same as `torch.utils.data.DataLoader`.

    Worker i seeds ember's default generator and Python's `random` with base_seed + i, and NumPy's global generator
    with a SeedSequence of (i, base_seed), base_seed being drawn from `generator` (or the default generator) for each
    iterator. Deviations: persistent workers are reseeded at every epoch from a fresh base seed (torch seeds them
    once), so epochs replay under `ember.manual_seed` whatever the previous epoch drew; a worker that dies is
    reported within about a second (also when a `timeout` is set); pin_memory is a no-op, with torch's warning,
    when no GPU is available.
    """
    _initialized = False

    def __class_getitem__(cls, item):  # DataLoader[Tuple[Tensor, Tensor]] in type hints
        return cls

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        prefetch_factor = _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            _check_iterable_options(shuffle, sampler, batch_sampler)
        else:
            self._dataset_kind = _DatasetKind.Map
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._pin_warned = False
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self._mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(ctx, str):
                methods = multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                     f"{methods!r}, but got multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={ctx}")
        self._mp_context = ctx

    def __setattr__(self, attr, val):
        if self._initialized and attr in _FROZEN_ATTRS:
            raise ValueError(f"{attr} attribute should not be set after {self.__class__.__name__} is initialized")
        object.__setattr__(self, attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            # trusted as the user's promise; the iterator warns if more samples than this come out
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        """Same as torch's: warns when more workers are asked for than this process may use CPUs."""
        if not self.num_workers:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is None:
            suggest = "DataLoader is not able to compute a suggested max number of worker in current system."
        else:
            note = "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
            suggest = (f"Our suggested max number of worker in current system is {cpus}{note}, which is smaller than "
                       "what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. {suggest} Please be "
                      "aware that excessive worker creation might get DataLoader running slow or even freeze, lower "
                      "the worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)


def _check_worker_options(num_workers, timeout, prefetch_factor, persistent_workers):
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to "
                         "enable multiprocessing, otherwise set prefetch_factor to None.")
    if num_workers > 0 and prefetch_factor is None:
        prefetch_factor = 2
    elif prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    return prefetch_factor


def _check_iterable_options(shuffle, sampler, batch_sampler):
    # An IterableDataset decides its own order: samplers would be meaningless (and duplicate data across workers).
    if shuffle not in (False, None):
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                         f"shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                         f"sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                         f"batch_sampler={batch_sampler}")


def _pin(data):
    """data with every tensor moved to page-locked memory (only called when a GPU is present)."""
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    if isinstance(data, dict):
        try:
            return type(data)({k: _pin(v) for k, v in data.items()})
        except TypeError:  # a mapping type that cannot be built from a dict
            return {k: _pin(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_pin(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_pin(d) for d in data)
    return data


def _pin_available():
    ember = _ember()
    return ember.cuda.is_available() and hasattr(ember.Tensor, "pin_memory")


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._pin_memory = loader.pin_memory and self._check_pin_memory(loader)
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._generator = loader.generator
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = self._draw_base_seed()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def _draw_base_seed(self):
        ember = _ember()
        return int(ember.empty((), dtype=ember.int64).random_(generator=self._generator).item())

    @staticmethod
    def _check_pin_memory(loader):
        if loader.pin_memory_device and not loader._pin_warned:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used as the device,"
                          f"ignore pin_memory_device='{loader.pin_memory_device}'.", stacklevel=4)
        if _pin_available():
            return True
        if not loader._pin_warned:
            loader._pin_warned = True
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=4)
        return False

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        if self._sampler_iter is None:
            raise StopIteration
        data = self._next_data()
        self._num_yielded += 1
        n = self._IterableDataset_len_called
        if self._dataset_kind == _DatasetKind.Iterable and n is not None and self._num_yielded > n:
            self._warn_too_many(n)
        return data

    def _warn_too_many(self, n):
        msg = (f"Length of IterableDataset {self._dataset} was reported to be {n}(when accessing len(dataloader)), "
               f"but {self._num_yielded} samples have been fetched. ")
        if self._num_workers > 0:
            msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                    "IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
        warnings.warn(msg, stacklevel=3)

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _worker.make_fetcher(self._dataset_kind == _DatasetKind.Iterable, self._dataset,
                                             self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        data = self._fetcher.fetch(index)  # StopIteration from an exhausted IterableDataset ends the loop
        return _pin(data) if self._pin_memory else data


# NOTE [ Worker lifetime ]
# Worker processes must never outlive their use, and the main process must never hang on them. So:
# - The handles (processes, queues, done event) live in a _WorkerPool that the iterator owns, and a weakref
#   finalizer shuts the pool down when the iterator is collected (a loop broken off early, a dropped loader) or at
#   interpreter exit; exhausting a non-persistent iterator shuts it down at once.
# - Workers are daemonic, and poll os.getppid(): if the main process dies, even by SIGKILL, they leave.
# - The main process never blocks on the result queue for more than POLL_INTERVAL: between waits it checks that
#   every worker still owing results is alive, so a worker killed by a signal or a segfault is an error within
#   about a second, not a hang.


class _WorkerPool:
    """The worker processes of one iterator and the queues to them."""

    def __init__(self):
        self.workers, self.index_queues, self.alive = [], [], []
        self.channels = []  # per worker: the main process's end of its descriptor channel (or None)
        self.result_queue = self.done_event = None
        self.closed = False

    def shutdown(self):
        if self.closed:
            return
        self.closed = True
        try:
            if self.done_event is not None:
                self.done_event.set()
            for q in self.index_queues:
                _put_quietly(q, None)
            deadline = time.monotonic() + 2 * _worker.POLL_INTERVAL
            for w in self.workers:
                w.join(timeout=max(0.0, deadline - time.monotonic()))
            for q in self.index_queues + [self.result_queue]:
                if q is not None:
                    q.cancel_join_thread()
                    q.close()
        finally:
            for w in self.workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=1.0)
            for w in self.workers:
                if w.is_alive():
                    os.kill(w.pid, signal.SIGKILL)
                    w.join(timeout=1.0)
            for c in self.channels:
                if c is not None:
                    c.close()  # descriptors of batches never received are closed with it


def _put_quietly(q, item):
    try:
        q.put(item)
    except (OSError, ValueError):  # the queue is already closed
        pass


_BOOTSTRAP_HINT = (
    "DataLoader workers are started with the '{method}' start method, which imports the main module in every "
    "worker, and the main module creates a DataLoader and iterates over it while being imported. Put the code that "
    "runs when the script starts under `if __name__ == '__main__':` (so that workers only import its definitions), "
    "or use multiprocessing_context='fork'.")


def _main_module_unguarded():
    """Whether the main script has no `if __name__ == '__main__':` block (a spawned worker would rerun it)."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    if not path or not os.path.isfile(path):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            src = f.read()
    except OSError:
        return False
    return re.search(r"__name__\s*==\s*['\"]__main__['\"]", src) is None


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._worker_init_fn = loader.worker_init_fn
        self._ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._pool = _WorkerPool()
        self._finalizer = weakref.finalize(self, _WorkerPool.shutdown, self._pool)
        self._start_workers()
        self._reset(loader, first_iter=True)

    def _start_workers(self):
        try:
            import ember.multiprocessing  # noqa: F401  (tensors in the dataset travel as shared memory)
            from ember.multiprocessing.reductions import fd_channel
        except ImportError:
            fd_channel = None
        import multiprocessing.resource_sharer  # noqa: F401  (imported once here, not in every forked worker)
        pool, ctx = self._pool, self._ctx
        pool.result_queue = ctx.Queue()
        pool.done_event = ctx.Event()
        iterable = self._dataset_kind == _DatasetKind.Iterable
        for i in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()  # never block the main process's exit on indices nobody will read
            main_end, worker_end = fd_channel() if fd_channel is not None else (None, None)
            pool.channels.append(main_end)
            w = ctx.Process(target=_worker.worker_loop, daemon=True, args=(
                iterable, self._dataset, iq, pool.result_queue, pool.done_event, self._auto_collation,
                self._collate_fn, self._drop_last, self._base_seed, self._worker_init_fn, i, self._num_workers,
                worker_end))
            try:
                self._start_process(w)
            finally:
                if worker_end is not None:
                    worker_end.close()  # the worker has its own copy now
            pool.workers.append(w)
            pool.index_queues.append(iq)
            pool.alive.append(True)
        self._worker_ids = {w.pid: i for i, w in enumerate(pool.workers)}

    def _start_process(self, w):
        try:
            w.start()
        except RuntimeError as e:
            if "bootstrapping phase" not in str(e):
                raise
            # we are a spawned worker re-running an unguarded main script: say what to change
            method = self._ctx.get_start_method()
            raise RuntimeError("A DataLoader started its workers while this process was itself a worker being "
                               "bootstrapped. " + _BOOTSTRAP_HINT.format(method=method)) from None

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # index of the next task to send
        self._rcvd_idx = 0  # index of the next task to return
        self._task_info = {}  # task idx -> (worker id,) while in flight, (worker id, data) once arrived early
        self._tasks_outstanding = 0
        pool = self._pool
        pool.alive = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            self._resume_workers()
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _resume_workers(self):
        """Persistent workers: start a new epoch, reseeded, and wait until each has dropped the previous one."""
        self._base_seed = self._draw_base_seed()
        for q in self._pool.index_queues:
            q.put(_ResumeIteration(self._base_seed))
        pending = self._num_workers
        while pending:
            idx, _ = self._get_data()
            if isinstance(idx, _ResumeIteration):
                pending -= 1

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        pool = self._pool
        for _ in range(self._num_workers):  # the next worker that has not run out of data
            wid = next(self._worker_cycle)
            if pool.alive[wid]:
                break
        else:
            return
        pool.index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _next_data(self):
        while True:
            # skip tasks of workers that have ended (an exhausted IterableDataset copy)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._pool.alive[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._worker_exhausted(data.worker_id)
                self._try_put_index()
                continue
            if idx == self._rcvd_idx:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)
            if not self._in_order:
                del self._task_info[idx]
                return self._process_data(data)
            self._task_info[idx] += (data,)

    def _worker_exhausted(self, wid):
        self._pool.alive[wid] = False
        if not self._persistent_workers:
            self._pool.index_queues[wid].put(None)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return _pin(data) if self._pin_memory else data

    def _get_data(self):
        """The next (idx, data) from the result queue; raises on timeout or when a worker has died."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _worker.POLL_INTERVAL
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            try:
                idx, data = self._pool.result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            else:
                if data.__class__ is _Pickled:  # at once, in arrival order: see _worker._send_form
                    data = data.load(self._pool.channels[data.worker_id])
                return idx, data
            self._check_workers()  # outside the except block: the error should not chain to queue.Empty

    def _check_workers(self):
        pool = self._pool
        dead = [w for i, w in enumerate(pool.workers) if pool.alive[i] and not w.is_alive()]
        if not dead:
            return
        self._shutdown_workers()
        raise RuntimeError(_death_message(dead, self._ctx))

    def _shutdown_workers(self):
        # the finalizer runs the pool's shutdown at most once, and detaches itself
        if self._finalizer.alive:
            self._finalizer()

    def __del__(self):
        finalizer = getattr(self, "_finalizer", None)
        if finalizer is not None and finalizer.alive:
            finalizer()


def _death_message(dead, ctx):
    pids = ", ".join(str(w.pid) for w in dead)
    msg = f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
    details = []
    for w in dead:
        code = w.exitcode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            details.append(f"pid {w.pid} was killed by {name}")
        elif code:
            details.append(f"pid {w.pid} exited with code {code}")
    if details:
        msg += " (" + "; ".join(details) + ")"
    method = ctx.get_start_method()
    if method != "fork" and any(w.exitcode == 1 for w in dead) and _main_module_unguarded():
        msg += ". " + _BOOTSTRAP_HINT.format(method=method)
    elif any(w.exitcode == -signal.SIGBUS for w in dead):
        msg += ". This can happen when shared memory (/dev/shm) is too small."
    return msg

