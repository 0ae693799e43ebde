import math
import warnings

import pytest

import ember
from ember.utils.data import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)


class ListDS(Dataset):
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


class Iter(IterableDataset):
    def __init__(self, items):
        self.items = list(items)

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


def test_base_dataset_getitem_raises():
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__."):
        Dataset()[0]


def test_dataset_generic_subscript():
    class Typed(Dataset[int]):
        pass
    assert issubclass(Typed, Dataset)


def test_tensor_dataset():
    x, y = ember.arange(12.0).reshape(4, 3), ember.tensor([0, 1, 0, 1])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6.0, 7.0, 8.0] and b.item() == 0
    assert ds.tensors[0] is x
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, ember.zeros(3))


def test_add_concat_and_cumulative_sizes():
    a, b = ListDS(range(3)), ListDS(range(10, 15))
    ds = a + b
    assert isinstance(ds, ConcatDataset)
    assert ds.cumulative_sizes == [3, 8]
    assert len(ds) == 8
    assert [ds[i] for i in range(8)] == [0, 1, 2, 10, 11, 12, 13, 14]
    assert ds[-1] == 14 and ds[-8] == 0
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ds[-9]
    with pytest.raises(IndexError):
        ds[8]


def test_concat_rules():
    with pytest.raises(AssertionError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([ListDS([1]), Iter([2])])
    ds = ConcatDataset([ListDS([]), ListDS([1, 2])])
    assert ds[0] == 1
    with pytest.warns(FutureWarning, match="renamed to `cumulative_sizes`"):
        assert ds.cummulative_sizes == [0, 2]


def test_chain_dataset():
    ds = Iter([1, 2]) + Iter([3])
    assert isinstance(ds, ChainDataset)
    assert list(ds) == [1, 2, 3] and len(ds) == 3
    bad = ChainDataset([Iter([1]), ListDS([2])])
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(bad)
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        len(bad)


def test_subset():
    base = ListDS(range(10, 20))
    s = Subset(base, [3, 1, 7])
    assert len(s) == 3 and s[0] == 13 and s[2] == 17
    assert s.__getitems__([0, 1]) == [13, 11]
    assert s.dataset is base and s.indices == [3, 1, 7]


def test_subset_subclass_must_override_getitems():
    class Bad(Subset):
        def __getitem__(self, i):
            return 0
    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(ListDS([1]), [0])

    class Good(Bad):
        def __getitems__(self, indices):
            return [0 for _ in indices]
    assert Good(ListDS([1]), [0]).__getitems__([0]) == [0]


def test_stack_dataset_tuple_and_dict():
    a, b = ListDS("abc"), ListDS([1, 2, 3])
    st = StackDataset(a, b)
    assert len(st) == 3 and st[1] == ("b", 2)
    assert st.__getitems__([0, 2]) == [("a", 1), ("c", 3)]
    sd = StackDataset(x=a, y=b)
    assert sd[2] == {"x": "c", "y": 3}
    assert sd.__getitems__([0]) == [{"x": "a", "y": 1}]


def test_stack_dataset_errors():
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()
    with pytest.raises(ValueError, match="but both types are given"):
        StackDataset(ListDS([1]), y=ListDS([1]))
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(ListDS([1]), ListDS([1, 2]))

    class Short(ListDS):
        def __getitems__(self, indices):
            return [1]
    with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
        StackDataset(Short([1, 2]), ListDS([1, 2])).__getitems__([0, 1])


def test_random_split_lengths_and_disjoint():
    parts = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(42))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(range(10), [3, 7], generator=ember.Generator().manual_seed(42))
    assert again[0].indices == parts[0].indices


@pytest.mark.parametrize("n, fracs, expected", [
    (30, [0.3, 0.3, 0.4], [9, 9, 12]),
    (10, [0.33, 0.33, 0.34], [4, 3, 3]),   # floors 3,3,3; the remainder of 1 goes to the first split
    (11, [0.5, 0.5], [6, 5]),
    (7, [0.25, 0.25, 0.25, 0.25], [2, 2, 2, 1]),
])
def test_random_split_fractions(n, fracs, expected):
    parts = random_split(range(n), fracs, generator=ember.Generator().manual_seed(0))
    assert [len(p) for p in parts] == expected


def test_random_split_warnings_and_errors():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0. This might result in an empty dataset."):
        random_split(range(2), [0.5, 0.0, 0.5])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(range(10), [0.5, -0.5, 1.0])


def test_random_split_uses_default_generator():
    ember.manual_seed(3)
    a = random_split(range(20), [10, 10])[0].indices
    ember.manual_seed(3)
    b = random_split(range(20), [10, 10])[0].indices
    assert a == b
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isclose(sum(len(p) for p in random_split(range(20), [0.5, 0.5])), 20)
