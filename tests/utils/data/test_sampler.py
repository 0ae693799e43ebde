import pytest

import ember
from ember.utils.data import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)


def test_sequential():
    s = SequentialSampler(range(5))
    assert list(s) == [0, 1, 2, 3, 4] and len(s) == 5


def test_sampler_base():
    with pytest.raises(NotImplementedError):
        iter(Sampler())
    assert Sampler[int] is Sampler


def test_random_sampler_is_permutation_and_reproducible():
    s = RandomSampler(range(10), generator=ember.Generator().manual_seed(1))
    a = list(s)
    assert sorted(a) == list(range(10)) and len(s) == 10
    assert list(RandomSampler(range(10), generator=ember.Generator().manual_seed(1))) == a
    ember.manual_seed(5)
    b = list(RandomSampler(range(10)))
    ember.manual_seed(5)
    assert list(RandomSampler(range(10))) == b


def test_random_sampler_num_samples():
    g = ember.Generator().manual_seed(0)
    a = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(a) == 10
    assert sorted(a[:4]) == [0, 1, 2, 3] and sorted(a[4:8]) == [0, 1, 2, 3]  # whole permutations first
    r = list(RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(r) == 70 and set(r) <= {0, 1, 2}


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=0"):
        RandomSampler(range(3), replacement=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler([])


def test_subset_random_sampler():
    s = SubsetRandomSampler([10, 20, 30], generator=ember.Generator().manual_seed(0))
    assert sorted(s) == [10, 20, 30] and len(s) == 3


def test_weighted_random_sampler():
    g = ember.Generator().manual_seed(0)
    s = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], 50, generator=g)
    out = list(s)
    assert len(out) == 50 and len(s) == 50 and set(out) <= {1, 3}
    assert s.weights.dtype == ember.float64
    nr = list(WeightedRandomSampler([1.0, 1.0, 1.0], 3, replacement=False, generator=g))
    assert sorted(nr) == [0, 1, 2]


def test_weighted_random_sampler_errors():
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=True"):
        WeightedRandomSampler([1.0], True)
    with pytest.raises(ValueError, match="replacement should be a boolean value, but got replacement=1"):
        WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError, match=r"weights should be a 1d sequence but given weights have shape \(1, 2\)"):
        WeightedRandomSampler([[1.0, 2.0]], 1)


def test_batch_sampler():
    assert list(BatchSampler(SequentialSampler(range(10)), 3, False)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert list(BatchSampler(SequentialSampler(range(10)), 3, True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(range(10), 3, False)) == 4 and len(BatchSampler(range(10), 3, True)) == 3
    assert list(BatchSampler(range(6), 3, True)) == [[0, 1, 2], [3, 4, 5]]


def test_batch_sampler_errors():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=True"):
        BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=1"):
        BatchSampler(range(3), 2, 1)


def test_distributed_sampler_partitions():
    shards = [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False)) for r in range(3)]
    assert shards == [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]  # padded with the first indices
    dropped = [list(DistributedSampler(range(10), 3, r, shuffle=False, drop_last=True)) for r in range(3)]
    assert dropped == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert len(DistributedSampler(range(10), 3, 0)) == 4 and len(DistributedSampler(range(10), 3, 0,
                                                                                     drop_last=True)) == 3
    tiny = list(DistributedSampler(range(2), num_replicas=5, rank=4, shuffle=False))
    assert tiny == [0]  # padding repeats the data when it is shorter than the padding


def test_distributed_sampler_shuffle_and_epoch():
    s0, s1 = (DistributedSampler(range(12), 2, r, seed=7) for r in range(2))
    a0, a1 = list(s0), list(s1)
    assert sorted(a0 + a1) == list(range(12))
    assert list(s0) == a0  # same epoch, same order
    s0.set_epoch(1)
    assert s0.epoch == 1 and list(s0) != a0


def test_distributed_sampler_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(5), num_replicas=3, rank=3)
    with pytest.raises((RuntimeError, ValueError), match="distributed package|process group has not been initialized"):
        DistributedSampler(range(5))
