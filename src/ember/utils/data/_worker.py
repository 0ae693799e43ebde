"""What runs inside a DataLoader worker process, and the small records workers and the main process exchange."""
import dataclasses
import os
import queue
import random
import sys
import traceback

__all__ = ["get_worker_info"]

# How often a waiting worker checks that its parent is still alive, and the main process that its workers are.
POLL_INTERVAL = 0.5


class WorkerInfo:
    """Same as `torch.utils.data._utils.worker.WorkerInfo`: read-only id, num_workers, seed, dataset (this worker's
    copy), rng (None) and worker_method ("multiprocessing")."""
    __slots__ = ("dataset", "id", "num_workers", "rng", "seed", "worker_method")

    def __init__(self, id, num_workers, seed, dataset, rng=None, worker_method="multiprocessing"):
        for k, v in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset), ("rng", rng),
                     ("worker_method", worker_method)):
            object.__setattr__(self, k, v)

    def __setattr__(self, key, val):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field '{key}'")

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, dataset={self.dataset!r}, "
                f"rng={self.rng!r}, worker_method={self.worker_method!r})")


_worker_info = None


def get_worker_info():
    """Same as `torch.utils.data.get_worker_info`: this worker's WorkerInfo, or None in the main process."""
    return _worker_info


class _KeyErrorMessage(str):
    """A message that KeyError prints as is (KeyError would otherwise show repr() of it, escaping the newlines)."""
    __slots__ = ()

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, carried from a worker to be raised again in the main process."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001  (an exception class whose constructor wants other arguments)
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:
            # no reference cycle through this frame: the DataLoader iterator in the traceback (and its workers)
            # goes away with the exception, not at the next garbage collection
            del exc


class _IterableDatasetStopIteration:
    """Sent by a worker whose copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _Pickled:
    """A batch that its worker pickled itself, its storages' descriptors sent down the worker's channel; see NOTE
    [ Descriptors of DataLoader batches ] in ember/multiprocessing/reductions.py."""
    __slots__ = ("payload", "worker_id")

    def __init__(self, worker_id, payload):
        self.worker_id, self.payload = worker_id, payload

    def __reduce__(self):
        return _Pickled, (self.worker_id, self.payload)

    def load(self, sock):
        from ...multiprocessing.reductions import loads_through
        return loads_through(self.payload, sock)


def _send_form(data, channel, worker_id):
    # a batch pickled here, or, when that fails, the error (instead of a batch lost in the queue's feeder thread)
    from ...multiprocessing.reductions import dumps_through
    try:
        return _Pickled(worker_id, dumps_through(data, channel))
    except Exception:  # noqa: BLE001
        return ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")


class _ResumeIteration:
    """Sent to persistent workers at the start of each epoch; carries the epoch's base seed."""

    def __init__(self, base_seed):
        self.base_seed = base_seed


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.getitems is not None:
            return self.collate_fn(self.getitems(index))
        ds = self.dataset
        return self.collate_fn([ds[i] for i in index])


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        self.drop_last = drop_last
        self.it = None
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.it is None:  # iter() is called on first use, inside the worker, so that sharding sees WorkerInfo
            self.it = iter(self.dataset)
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        data = []
        for _ in index:
            try:
                data.append(next(self.it))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def numpy_seed(base_seed, worker_id):
    """NumPy's global seed for a worker: 128 bits mixed from the worker id and the 64-bit base seed."""
    import numpy as np
    mask = 0xFFFFFFFF
    return np.random.SeedSequence([worker_id, base_seed & mask, (base_seed >> 32) & mask]).generate_state(4)


def seed_worker(base_seed, worker_id):
    """Seeds ember's default generator, Python's `random` and NumPy's global generator for one worker, so that no
    two workers (and no two epochs) draw the same random augmentations. Returns ember's seed."""
    import numpy as np

    import ember
    seed = base_seed + worker_id
    random.seed(seed)
    ember.manual_seed(seed)
    np.random.seed(numpy_seed(base_seed, worker_id))
    return seed


def _set_worker_info(worker_id, num_workers, seed, dataset):
    global _worker_info
    _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)


def _prepare_process():
    """Once per worker: one BLAS thread, shared-memory tensor pickling."""
    import ember
    try:
        import ember.multiprocessing
    except ImportError:
        pass
    from ember import _threads
    if getattr(_threads, "_requested", [None])[0] != 1:  # a forked worker inherits a BLAS already at one thread
        ember.set_num_threads(1)


def worker_loop(*args):
    """The body of a worker process: fetch the batches named on index_queue and put them on data_queue."""
    try:
        _worker_loop(*args)
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the whole process group: the main process raises it and shuts us down


def _worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation, collate_fn, drop_last,
                 base_seed, init_fn, worker_id, num_workers, channel=None):
    parent = os.getppid()
    _prepare_process()
    seed = seed_worker(base_seed, worker_id)
    _set_worker_info(worker_id, num_workers, seed, dataset)
    init_error, fetcher = None, None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:  # noqa: BLE001
        init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    exhausted = False
    # the parent dying re-parents us: getppid() changes, and we leave instead of lingering as an orphan
    while os.getppid() == parent:
        try:
            r = index_queue.get(timeout=POLL_INTERVAL)
        except queue.Empty:
            continue
        if r is None:  # the final signal
            break
        if isinstance(r, _ResumeIteration):
            seed = seed_worker(r.base_seed, worker_id)
            _set_worker_info(worker_id, num_workers, seed, dataset)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
            exhausted = False
            data_queue.put((r, None))
            continue
        if done_event.is_set() or exhausted:
            continue  # drain until the final signal
        idx, index = r
        if init_error is not None:
            data, init_error = init_error, None
        else:
            data = _fetch(fetcher, index, iterable, worker_id)
            exhausted = isinstance(data, _IterableDatasetStopIteration)
            if channel is not None and not exhausted and data.__class__ is not ExceptionWrapper:
                data = _send_form(data, channel, worker_id)
        data_queue.put((idx, data))
        del data, idx, index, r  # a batch must not stay alive here while the next one is fetched
    if done_event.is_set():
        # nobody reads the results any more: do not block exit flushing them
        data_queue.cancel_join_thread()
        data_queue.close()


_arena = []  # this worker's BatchArena: the tensors collated for one batch share one memory file


def _batch_arena():
    if not _arena:
        try:
            from ..._backend.shared_memory import BatchArena
            _arena.append(BatchArena())
        except ImportError:
            _arena.append(None)
    return _arena[0]


def _fetch(fetcher, index, iterable, worker_id):
    from . import collate
    arena = _batch_arena()
    if arena is not None:
        arena.begin()
        collate._ARENA[0] = arena
    try:
        return fetcher.fetch(index)
    except StopIteration:
        if iterable:
            return _IterableDatasetStopIteration(worker_id)
        return ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    except Exception:  # noqa: BLE001
        return ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    finally:
        if arena is not None:
            collate._ARENA[0] = None
            arena.end()
