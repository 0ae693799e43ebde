import collections

import numpy as np
import pytest

import ember
from ember.utils.data import default_collate, default_convert
from ember.utils.data.collate import collate, default_collate_fn_map

Point = collections.namedtuple("Point", ["x", "y"])


def test_python_numbers():
    t = default_collate([0, 1, 2])
    assert t.tolist() == [0, 1, 2] and t.dtype == ember.int64
    f = default_collate([0.5, 1.0])
    assert f.tolist() == [0.5, 1.0] and f.dtype == ember.float64
    b = default_collate([True, False])
    assert b.tolist() == [True, False] and b.dtype == ember.bool


def test_tensors_are_stacked():
    out = default_collate([ember.ones(2, 3), ember.zeros(2, 3)])
    assert out.shape == (2, 2, 3) and out.dtype == ember.float32
    assert out[0].sum().item() == 6.0 and out[1].sum().item() == 0.0


def test_numpy_arrays_and_scalars():
    out = default_collate([np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32)])
    assert out.dtype == ember.int32 and out.shape == (2, 3)
    s = default_collate([np.float32(1.5), np.float32(2.5)])
    assert s.dtype == ember.float32 and s.tolist() == [1.5, 2.5]
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                                        "or lists; found <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_strings_bytes_unchanged():
    assert default_collate(["a", "b"]) == ["a", "b"]
    assert default_collate([b"a", b"b"]) == [b"a", b"b"]


def test_mapping_namedtuple_sequences():
    d = default_collate([{"A": 0, "B": 1}, {"A": 100, "B": 100}])
    assert d["A"].tolist() == [0, 100] and d["B"].tolist() == [1, 100]
    p = default_collate([Point(0, 0), Point(1, 1)])
    assert isinstance(p, Point) and p.x.tolist() == [0, 1]
    tup = default_collate([(0, 1), (2, 3)])
    assert isinstance(tup, list) and [t.tolist() for t in tup] == [[0, 2], [1, 3]]
    lst = default_collate([[0, 1], [2, 3]])
    assert isinstance(lst, list) and [t.tolist() for t in lst] == [[0, 2], [1, 3]]
    od = default_collate([collections.OrderedDict(a=1), collections.OrderedDict(a=2)])
    assert isinstance(od, collections.OrderedDict) and od["a"].tolist() == [1, 2]


def test_nested_image_label_batch():
    batch = [(ember.full((3, 4, 4), float(i)), i) for i in range(5)]
    x, y = default_collate(batch)
    assert x.shape == (5, 3, 4, 4) and y.dtype == ember.int64 and y.tolist() == [0, 1, 2, 3, 4]


def test_unequal_sizes_error():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])


def test_unsupported_type_error():
    class Thing:
        pass
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers, "
                                        "dicts or lists; found <class '.*Thing'>"):
        default_collate([Thing(), Thing()])


def test_custom_collate_fn_map():
    def as_sum(batch, *, collate_fn_map):
        return sum(batch)
    assert collate([1, 2, 3], collate_fn_map={int: as_sum}) == 6
    assert ember.Tensor in default_collate_fn_map


def test_default_convert():
    assert default_convert(0) == 0
    t = default_convert(np.array([0, 1]))
    assert isinstance(t, ember.Tensor) and t.tolist() == [0, 1]
    p = default_convert(Point(np.array(0), np.array(1)))
    assert isinstance(p, Point) and p.y.item() == 1
    lst = default_convert([np.array([0, 1]), np.array([2, 3])])
    assert [x.tolist() for x in lst] == [[0, 1], [2, 3]]
    assert isinstance(default_convert((np.array(1),)), list)
    s = np.array(["a"])
    assert default_convert(s) is s
    assert default_convert("abc") == "abc"
    d = default_convert({"k": np.float64(2.0)})
    assert d["k"].dtype == ember.float64
    assert default_convert(range(2)) == [0, 1]
    x = ember.ones(2)
    assert default_convert(x) is x


def test_stacking_fast_path_matches_stack():
    xs = [ember.arange(6.0).reshape(2, 3) + i for i in range(4)]
    out = default_collate(xs)
    assert out.shape == (4, 2, 3) and out.dtype == ember.float32
    assert out.tolist() == ember.stack(xs).tolist()
    t = [x.t() for x in xs]  # non-contiguous samples
    assert default_collate(t).tolist() == ember.stack(t).tolist()
    assert default_collate([ember.zeros(0, 2)] * 3).shape == (3, 0, 2)
    assert default_collate([ember.tensor(1.5), ember.tensor(2.5)]).tolist() == [1.5, 2.5]


def test_stacking_keeps_the_graph_and_promotion():
    a = ember.ones(2, requires_grad=True)
    out = default_collate([a, ember.zeros(2)])
    assert out.grad_fn is not None
    out.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0]
    mixed = default_collate([ember.ones(2, dtype=ember.int32), ember.ones(2, dtype=ember.float64)])
    assert mixed.dtype == ember.float64


def test_private_collate_path_registers_custom_types():
    # torch documents extending default_collate through torch.utils.data._utils.collate
    import ember.utils.data._utils.collate as private

    class Point:
        def __init__(self, v):
            self.v = v

    def collate_point(batch, *, collate_fn_map=None):
        return ember.tensor([p.v for p in batch])
    assert private.default_collate is ember.utils.data.default_collate
    private.default_collate_fn_map[Point] = collate_point
    try:
        out = ember.utils.data.default_collate([{"p": Point(1)}, {"p": Point(2)}])
        assert out["p"].tolist() == [1, 2]
        assert private.collate([Point(3)], collate_fn_map={Point: collate_point}).tolist() == [3]
    finally:
        del private.default_collate_fn_map[Point]
