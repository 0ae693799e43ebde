"""Datasets for the DataLoader tests, in an importable module so that spawned workers can unpickle them."""
import os
import random
import signal
import time

import numpy as np

import ember
from ember.utils.data import Dataset, IterableDataset, get_worker_info


class Squares(Dataset):
    """Item i is (i*i as a float32 vector of 2, i)."""

    def __init__(self, n=20):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return ember.full((2,), float(i * i)), i


class RandomDraws(Dataset):
    """Item i records which worker made it and one draw from each of ember, Python's random and NumPy."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        wid = -1 if info is None else info.id
        return {"worker": wid, "ember": float(ember.rand(1).item()), "random": random.random(),
                "numpy": float(np.random.rand())}


class FailAt(Dataset):
    """Raises ValueError (or KeyError) at one index."""

    def __init__(self, bad=5, exc=ValueError):
        self.bad, self.exc = bad, exc

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == self.bad:
            raise self.exc(f"bad index {i}")
        return i


class KillAt(Dataset):
    """The worker that fetches index `bad` kills itself with SIGKILL."""

    def __init__(self, bad=3):
        self.bad = bad

    def __len__(self):
        return 10

    def __getitem__(self, i):
        if i == self.bad and get_worker_info() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


class Slow(Dataset):
    """Each item takes `delay` seconds."""

    def __init__(self, delay=0.0, n=10, slow_index=None):
        self.delay, self.n, self.slow_index = delay, n, slow_index

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.slow_index is None or i == self.slow_index:
            time.sleep(self.delay)
        return i


class Range(IterableDataset):
    """range(start, end), split among workers through get_worker_info()."""

    def __init__(self, start, end, shard=True):
        self.start, self.end, self.shard = start, end, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.start, self.end))
        per = -(-(self.end - self.start) // info.num_workers)
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))

    def __len__(self):
        return self.end - self.start


class WorkerPid(Dataset):
    def __len__(self):
        return 100

    def __getitem__(self, i):
        return os.getpid()


def record_worker_info(worker_id):
    info = get_worker_info()
    assert info.id == worker_id
    info.dataset.init_id = worker_id


class InfoRecords(Dataset):
    """Item i: (worker id, num_workers, seed, whether info.dataset is this very object) seen in the worker."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return info.id, info.num_workers, info.seed, info.dataset is self


class UnpicklableAt(Dataset):
    """Item i is (a float32 vector of 2 holding i, i); item `bad` also carries a lambda, which cannot be sent."""

    def __init__(self, n, bad):
        self.n, self.bad = n, bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            return ember.full((2,), float(i)), i, (lambda: None)
        return ember.full((2,), float(i)), i
