"""ember.utils.data against torch.utils.data: the same calls, the same results, types, dtypes and errors."""
import collections

import numpy as np
import pytest

import ember
import ember.utils.data as ed

torch = pytest.importorskip("torch")
import torch.utils.data as td

pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")

Point = collections.namedtuple("Point", ["x", "y"])


def _plain(x):
    """A library-neutral picture of a collated value: tensors become (dtype name, shape, values)."""
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: _plain(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(_plain(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_plain(v) for v in x])
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.tolist())
    return (type(x).__name__, x)


def _batches(lib):
    t = lib.tensor
    return [
        [0, 1, 2],
        [0.5, 1.5],
        [True, False],
        ["a", "b"],
        [b"x", b"y"],
        [t([1.0, 2.0]), t([3.0, 4.0])],
        [t([1, 2], dtype=lib.int16), t([3, 4], dtype=lib.int16)],
        [np.arange(3, dtype=np.uint8), np.arange(3, dtype=np.uint8)],
        [np.float32(1.5), np.float32(2.0)],
        [np.int32(1), np.int32(2)],
        [np.float64(1.0), np.float64(2.0)],
        [{"A": 0, "B": 1.0}, {"A": 100, "B": 2.0}],
        [Point(0, 0.5), Point(1, 1.5)],
        [(0, "a"), (1, "b")],
        [[0, 1], [2, 3]],
        [collections.OrderedDict(a=[1, 2]), collections.OrderedDict(a=[3, 4])],
        [(t([1.0]), 3, {"k": np.array([1, 2])}), (t([2.0]), 4, {"k": np.array([3, 4])})],
    ]


@pytest.mark.parametrize("case", range(17))
def test_default_collate_matches(case):
    assert _plain(ed.default_collate(_batches(ember)[case])) == _plain(td.default_collate(_batches(torch)[case]))


@pytest.mark.parametrize("value", [
    0, 1.5, "s", b"b", np.array([1, 2]), np.float32(3.0), np.array(["a"]), (np.array(1), 2), [np.array(1), "x"],
    {"a": np.array([1.0])}, Point(np.array(0), 1), range(3), np.int64(4),
])
def test_default_convert_matches(value):
    assert _plain(ed.default_convert(value)) == _plain(td.default_convert(value))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


@pytest.mark.parametrize("batch", [
    [[1, 2], [3]],
    [object(), object()],
    [np.array(["a"]), np.array(["b"])],
    [None, None],
])
def test_collate_errors_match(batch):
    assert _error(lambda: ed.default_collate(batch)) == _error(lambda: td.default_collate(batch))


@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (30, [0.3, 0.3, 0.4]), (10, [0.33, 0.33, 0.34]), (11, [0.5, 0.5]), (7, [0.25] * 4),
    (100, [0.1] * 10), (5, [0.2, 0.8]), (3, [1 / 3] * 3),
])
def test_random_split_lengths_match(n, lengths):
    a = [len(s) for s in ed.random_split(range(n), lengths)]
    b = [len(s) for s in td.random_split(range(n), lengths)]
    assert a == b


@pytest.mark.parametrize("n, lengths", [(10, [3, 3]), (10, [0.5, -0.5, 1.0]), (10, [2.0, -1.0])])
def test_random_split_errors_match(n, lengths):
    assert _error(lambda: ed.random_split(range(n), lengths)) == _error(lambda: td.random_split(range(n), lengths))


@pytest.mark.parametrize("n, reps, drop, shuffle", [
    (10, 3, False, False), (10, 3, True, False), (2, 5, False, False), (12, 4, False, False), (7, 2, True, False),
])
def test_distributed_sampler_matches(n, reps, drop, shuffle):
    for rank in range(reps):
        a = ed.DistributedSampler(range(n), reps, rank, shuffle=shuffle, drop_last=drop)
        b = td.DistributedSampler(range(n), reps, rank, shuffle=shuffle, drop_last=drop)
        assert list(a) == list(b) and len(a) == len(b)


@pytest.mark.parametrize("n, bs, drop", [(10, 3, False), (10, 3, True), (9, 3, True), (1, 5, False)])
def test_batch_sampler_and_len_match(n, bs, drop):
    a, b = ed.BatchSampler(range(n), bs, drop), td.BatchSampler(range(n), bs, drop)
    assert list(a) == list(b) and len(a) == len(b)
    assert len(ed.DataLoader(range(n), batch_size=bs, drop_last=drop)) == \
           len(td.DataLoader(range(n), batch_size=bs, drop_last=drop))


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2}, {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True}, {"sampler": [0, 1], "shuffle": True}, {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True}, {"batch_size": None, "drop_last": True},
    {"multiprocessing_context": "spawn"}, {"num_workers": 1, "multiprocessing_context": "nope"},
    {"num_workers": 1, "multiprocessing_context": 3}, {"batch_size": 0}, {"batch_size": 2, "drop_last": 1},
])
def test_dataloader_argument_errors_match(kwargs):
    assert _error(lambda: ed.DataLoader(range(4), **kwargs)) == _error(lambda: td.DataLoader(range(4), **kwargs))


@pytest.mark.parametrize("make", [
    lambda m: m.RandomSampler(range(3), replacement=0),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.WeightedRandomSampler([1.0], 0),
    lambda m: m.WeightedRandomSampler([1.0], 1, replacement=1),
    lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 1),
    lambda m: m.DistributedSampler(range(4), num_replicas=2, rank=2),
    lambda m: m.StackDataset(),
    lambda m: m.StackDataset([1], [1, 2]),
    lambda m: m.ConcatDataset([]),
    lambda m: m.ConcatDataset([[1, 2]])[-3],
])
def test_sampler_and_dataset_errors_match(make):
    assert _error(lambda: make(ed)) == _error(lambda: make(td))


def test_iterable_dataset_option_errors_match():
    class E(ed.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    class T(td.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    for kw in ({"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}):
        e, t = _error(lambda kw=kw: ed.DataLoader(E(), **kw)), _error(lambda kw=kw: td.DataLoader(T(), **kw))
        assert e[0] is t[0] and e[1].split(", but got")[0] == t[1].split(", but got")[0]


def test_worker_exception_message_matches():
    class Bad(ed.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise ValueError("nope")
    e = _error(lambda: list(ed.DataLoader(Bad(), num_workers=1, timeout=20)))
    assert e[0] is ValueError
    assert e[1].startswith("Caught ValueError in DataLoader worker process 0.\nOriginal Traceback (most recent call "
                           "last):\n")
    assert e[1].rstrip().endswith("ValueError: nope")


def test_concat_and_subset_match():
    a = ed.ConcatDataset([[1, 2], [3], [4, 5, 6]])
    b = td.ConcatDataset([[1, 2], [3], [4, 5, 6]])
    assert a.cumulative_sizes == b.cumulative_sizes
    assert [a[i] for i in range(-6, 6)] == [b[i] for i in range(-6, 6)]
