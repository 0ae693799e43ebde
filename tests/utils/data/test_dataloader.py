"""DataLoader in the main process: argument rules, batching, len, iterable datasets, seeding."""
import multiprocessing

import pytest

import ember
from ember.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler, TensorDataset, get_worker_info

from ._datasets import FailAt, Range, Squares


def test_batches_in_order():
    batches = list(DataLoader(Squares(10), batch_size=4))
    assert len(batches) == 3
    x, i = batches[0]
    assert x.shape == (4, 2) and x.dtype == ember.float32 and i.dtype == ember.int64
    assert i.tolist() == [0, 1, 2, 3] and batches[-1][1].tolist() == [8, 9]


def test_len_and_drop_last():
    assert len(DataLoader(range(10), batch_size=3)) == 4
    assert len(DataLoader(range(10), batch_size=3, drop_last=True)) == 3
    assert [b.tolist() for b in DataLoader(range(7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]


def test_batch_size_none_uses_default_convert():
    out = list(DataLoader(range(3), batch_size=None))
    assert out == [0, 1, 2]
    t = list(DataLoader(TensorDataset(ember.arange(3)), batch_size=None))
    assert t[1][0].item() == 1 and t[1][0].dim() == 0


def test_batch_sampler_option():
    bs = BatchSampler(SequentialSampler(range(5)), 2, False)
    assert [b.tolist() for b in DataLoader(range(5), batch_sampler=bs)] == [[0, 1], [2, 3], [4]]


def test_shuffle_reproducible_with_manual_seed():
    ember.manual_seed(0)
    a = [b.tolist() for b in DataLoader(range(10), batch_size=5, shuffle=True)]
    ember.manual_seed(0)
    b = [b.tolist() for b in DataLoader(range(10), batch_size=5, shuffle=True)]
    assert a == b and sorted(a[0] + a[1]) == list(range(10))
    g1, g2 = ember.Generator().manual_seed(3), ember.Generator().manual_seed(3)
    assert [x.tolist() for x in DataLoader(range(10), shuffle=True, generator=g1)] == \
           [x.tolist() for x in DataLoader(range(10), shuffle=True, generator=g2)]
    assert isinstance(DataLoader(range(3), shuffle=True).sampler, RandomSampler)


def test_exception_propagates_unwrapped_in_main_process():
    with pytest.raises(ValueError, match="bad index 5"):
        list(DataLoader(FailAt(5), batch_size=2))


def test_no_worker_info_in_main_process():
    assert get_worker_info() is None


@pytest.mark.parametrize("kwargs, err, msg", [
    ({"num_workers": -1}, ValueError, "num_workers option should be non-negative"),
    ({"timeout": -1}, ValueError, "timeout option should be non-negative"),
    ({"prefetch_factor": 2}, ValueError, "prefetch_factor option could only be specified in multiprocessing"),
    ({"num_workers": 1, "prefetch_factor": -1}, ValueError, "prefetch_factor option should be non-negative"),
    ({"persistent_workers": True}, ValueError, "persistent_workers option needs num_workers > 0"),
    ({"sampler": [0, 1], "shuffle": True}, ValueError, "sampler option is mutually exclusive with shuffle"),
    ({"batch_sampler": [[0]], "batch_size": 2}, ValueError, ("batch_sampler option is mutually exclusive with "
                                                          "batch_size, shuffle, sampler, and drop_last")),
    ({"batch_sampler": [[0]], "drop_last": True}, ValueError, "batch_sampler option is mutually exclusive"),
    ({"batch_size": None, "drop_last": True}, ValueError, ("batch_size=None option disables auto-batching and is "
                                                        "mutually exclusive with drop_last")),
    ({"multiprocessing_context": "spawn"}, ValueError, ("multiprocessing_context can only be used with "
                                                        "multi-process loading")),
    ({"num_workers": 1, "multiprocessing_context": "nope"}, ValueError, "should specify a valid start method"),
    ({"num_workers": 1, "multiprocessing_context": 3}, TypeError, ("multiprocessing_context option should be a valid "
                                                                "context object")),
])
def test_argument_errors(kwargs, err, msg):
    with pytest.raises(err, match=msg):
        DataLoader(range(4), **kwargs)


def test_context_string_becomes_context():
    dl = DataLoader(range(4), num_workers=1, multiprocessing_context="spawn")
    assert isinstance(dl.multiprocessing_context, multiprocessing.context.BaseContext)


def test_frozen_attributes():
    dl = DataLoader(range(4))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        dl.batch_size = 3
    dl.num_workers = 0  # not frozen


def test_iterable_dataset_options():
    ds = Range(0, 5)
    for kw, name in (({"shuffle": True}, "shuffle"), ({"sampler": [0]}, "sampler"),
                     ({"batch_sampler": [[0]]}, "batch_sampler")):
        with pytest.raises(ValueError, match=f"DataLoader with IterableDataset: expected unspecified {name} option"):
            DataLoader(ds, **kw)
    DataLoader(ds, shuffle=False)


def test_iterable_dataset_batches_and_len():
    dl = DataLoader(Range(0, 7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(dl) == 3
    assert len(DataLoader(Range(0, 7), batch_size=3, drop_last=True)) == 2
    assert [b.tolist() for b in DataLoader(Range(0, 7), batch_size=3, drop_last=True)] == [[0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Range(0, 3), batch_size=None)) == [0, 1, 2]


def test_iterable_len_warning():
    class Liar(Range):
        def __len__(self):
            return 2
    dl = DataLoader(Liar(0, 3), batch_size=None)
    assert len(dl) == 2
    with pytest.warns(UserWarning, match=r"Length of IterableDataset .* was reported to be 2\(when accessing "
                                         r"len\(dataloader\)\), but 3 samples have been fetched"):
        list(dl)


def test_pin_memory_without_accelerator_warns_once():
    dl = DataLoader(range(4), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no accelerator is found, then "
                                         "device pinned memory won't be used."):
        assert [b.tolist() for b in dl] == [[0, 1], [2, 3]]
    assert [b.tolist() for b in dl] == [[0, 1], [2, 3]]  # no second warning (warnings are errors here)


def test_iterator_len_and_not_picklable():
    import pickle
    it = iter(DataLoader(range(5), batch_size=2))
    assert len(it) == 3
    with pytest.raises(NotImplementedError, match="cannot be pickled"):
        pickle.dumps(it)


def test_consumes_default_generator_like_torch():
    # a base seed is drawn per iteration, so two epochs of a shuffled loader differ but replay under manual_seed
    ember.manual_seed(1)
    dl = DataLoader(range(8), batch_size=8, shuffle=True)
    e1, e2 = next(iter(dl)).tolist(), next(iter(dl)).tolist()
    assert e1 != e2
    ember.manual_seed(1)
    assert next(iter(dl)).tolist() == e1


def test_getitems_used_for_batches():
    from ember.utils.data import Dataset, StackDataset, Subset

    class Batched(Dataset):
        calls = 0

        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, indices):
            Batched.calls += 1
            return [i * 10 for i in indices]
    out = [b.tolist() for b in DataLoader(Subset(Batched(), [5, 4, 3, 2]), batch_size=2)]
    assert out == [[50, 40], [30, 20]] and Batched.calls == 2
    x, y = next(iter(DataLoader(StackDataset(Batched(), Batched()), batch_size=3)))
    assert x.tolist() == y.tolist() == [0, 10, 20]


def test_dataloader_is_subscriptable_in_type_hints():
    import typing

    def train(loader: DataLoader[typing.Tuple[ember.Tensor, ember.Tensor]]):
        return loader
    assert DataLoader[int] is DataLoader and train(None) is None
