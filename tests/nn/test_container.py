"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, Identity, Flatten, Unflatten."""
from collections import OrderedDict

import pytest

import ember
from ember import nn


class Add(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x + self.k

    def extra_repr(self):
        return f"k={self.k}"


def _ks(container):
    return [m.k for m in container]


def _assert_mirrored(m):
    for reg in ("_parameters", "_buffers", "_modules"):
        for k, v in getattr(m, reg).items():
            assert vars(m)[k] is v
    for k, v in vars(m).items():
        if isinstance(v, (nn.Module, nn.Parameter)):
            assert k in m._modules or k in m._parameters, k


# ----- Sequential -----

def test_sequential_forward_and_indexing():
    s = nn.Sequential(Add(1), Add(2), Add(3))
    assert s(ember.zeros(1)).item() == 6.0
    assert len(s) == 3 and s[0].k == 1 and s[-1].k == 3 and s[-3].k == 1
    sl = s[1:]
    assert type(sl) is nn.Sequential and _ks(sl) == [2, 3] and list(sl._modules) == ["1", "2"]
    assert _ks(s[::-1]) == [3, 2, 1]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    with pytest.raises(IndexError, match="index -4 is out of range"):
        s[-4]
    s[1] = Add(20)
    assert s[1].k == 20 and s._modules["1"] is s[1]
    assert [type(m) for m in s] == [Add] * 3


def test_sequential_ordered_dict_and_names():
    s = nn.Sequential(OrderedDict([("first", Add(1)), ("second", Add(2))]))
    assert list(s._modules) == ["first", "second"] and s.first.k == 1 and s[1] is s.second
    assert [n for n, _ in s.named_children()] == ["first", "second"]


def test_sequential_mutation():
    s = nn.Sequential(Add(1), Add(2))
    assert s.append(Add(3)) is s and _ks(s) == [1, 2, 3]
    assert s.insert(0, Add(0)) is s and _ks(s) == [0, 1, 2, 3] and list(s._modules) == ["0", "1", "2", "3"]
    s.insert(-1, Add(9))
    assert _ks(s) == [0, 1, 2, 9, 3]
    assert s.extend([Add(4)]) is s and _ks(s) == [0, 1, 2, 9, 3, 4]
    assert s.pop(3).k == 9 and _ks(s) == [0, 1, 2, 3, 4] and list(s._modules) == ["0", "1", "2", "3", "4"]
    del s[-1]
    del s[0:2]
    assert _ks(s) == [2, 3] and list(s._modules) == ["0", "1"]
    _assert_mirrored(s)
    assert not hasattr(s, "2")  # the renumbered keys left no stale attribute behind
    with pytest.raises(IndexError, match="Index out of range: 5"):
        s.insert(5, Add(0))
    with pytest.raises(AssertionError):
        s.insert(0, 3)


def test_sequential_operators():
    a, b = nn.Sequential(Add(1)), nn.Sequential(Add(2), Add(3))
    c = a + b
    assert _ks(c) == [1, 2, 3] and _ks(a) == [1]
    a += b
    assert _ks(a) == [1, 2, 3]
    d = b * 2
    assert _ks(d) == [2, 3, 2, 3] and d[0] is d[2]
    assert _ks(2 * b) == [2, 3, 2, 3]
    b *= 3
    assert _ks(b) == [2, 3] * 3
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        a + [Add(1)]
    with pytest.raises(TypeError, match="unsupported operand type"):
        a * 1.5
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
        a * 0
    assert "0" not in dir(a)


def test_sequential_parameters_and_state_dict():
    class P(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ember.ones(2))

        def forward(self, x):
            return x * self.w
    s = nn.Sequential(P(), nn.Sequential(P()))
    assert [n for n, _ in s.named_parameters()] == ["0.w", "1.0.w"]
    assert list(s.state_dict()) == ["0.w", "1.0.w"]
    s(ember.ones(2)).sum().backward()
    assert s[1][0].w.grad.tolist() == [1.0, 1.0]


# ----- ModuleList -----

def test_module_list():
    ml = nn.ModuleList([Add(1), Add(2)])
    assert len(ml) == 2 and ml[-1].k == 2 and _ks(ml) == [1, 2]
    ml.append(Add(3))
    ml.extend([Add(4), Add(5)])
    ml.insert(0, Add(0))
    assert _ks(ml) == [0, 1, 2, 3, 4, 5]
    sl = ml[1:3]
    assert type(sl) is nn.ModuleList and _ks(sl) == [1, 2]
    ml += [Add(6)]
    assert _ks(ml) == [0, 1, 2, 3, 4, 5, 6]
    assert _ks(ml + nn.ModuleList([Add(7)]))[-1] == 7
    assert ml.pop(-1).k == 6
    del ml[0]
    del ml[::2]
    assert _ks(ml) == [2, 4] and list(ml._modules) == ["0", "1"]
    ml[0] = Add(9)
    assert ml[0].k == 9 and vars(ml)["0"] is ml[0]
    _assert_mirrored(ml)
    with pytest.raises(IndexError, match="index 2 is out of range"):
        ml[2]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        ml.extend(1)
    assert [n for n, _ in nn.ModuleList([nn.Identity(), nn.Identity()]).named_modules()] == ["", "0", "1"]


def test_module_list_repr_groups_repeats():
    ml = nn.ModuleList([Add(1), Add(1), Add(1), Add(2), nn.Identity()])
    assert repr(ml) == ("ModuleList(\n  (0-2): 3 x Add(k=1)\n  (3): Add(k=2)\n  (4): Identity()\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"


# ----- ModuleDict -----

def test_module_dict():
    md = nn.ModuleDict({"b": Add(1), "a": Add(2)})
    assert list(md) == ["b", "a"] and list(md.keys()) == ["b", "a"]  # insertion order, not sorted
    assert "a" in md and md["a"].k == 2 and len(md) == 2
    md["c"] = Add(3)
    md.update([("d", Add(4))])
    md.update(nn.ModuleDict({"e": Add(5)}))
    assert [k for k, _ in md.items()] == ["b", "a", "c", "d", "e"] and [m.k for m in md.values()] == [1, 2, 3, 4, 5]
    assert md.pop("a").k == 2 and "a" not in md and not hasattr(md, "a")
    del md["b"]
    assert list(md) == ["c", "d", "e"]
    _assert_mirrored(md)
    md.clear()
    assert len(md) == 0 and not hasattr(md, "c")
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        md.update([("x", Add(1), 3)])
    with pytest.raises(TypeError, match="should be called with an iterable of key/value pairs"):
        md.update(3)


# ----- ParameterList / ParameterDict -----

def test_parameter_list():
    pl = nn.ParameterList([nn.Parameter(ember.ones(2)), ember.zeros(3)])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    assert pl[1].requires_grad and pl[-1].shape == (3,)
    pl.append(ember.ones(1))
    pl.extend([ember.ones(4)])
    pl += [ember.ones(5)]
    assert [p.shape[0] for p in pl] == [2, 3, 1, 4, 5]
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3", "4"]
    sl = pl[1:4:2]
    assert type(sl) is nn.ParameterList and [p.shape[0] for p in sl] == [3, 4] and sl[0] is pl[1]
    pl[0] = ember.full((2,), 7.0)
    assert isinstance(pl[0], nn.Parameter) and pl[0].tolist() == [7.0, 7.0]
    pl.append("not a tensor")
    assert pl[5] == "not a tensor" and len(list(pl.parameters())) == 5
    _assert_mirrored(pl)
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got Tensor"):
        pl.extend(ember.ones(2))


def test_parameter_list_repr():
    pl = nn.ParameterList([nn.Parameter(ember.ones(2, 3)), ember.zeros(4, dtype=ember.float64), "s"])
    assert repr(pl) == ("ParameterList(\n"
                        "    (0): Parameter containing: [ember.float32 of size 2x3]\n"
                        "    (1): Parameter containing: [ember.float64 of size 4]\n"
                        "    (2): Object of type: str\n)")


def test_parameter_dict():
    pd = nn.ParameterDict({"b": ember.ones(1), "a": nn.Parameter(ember.ones(2))})
    assert list(pd) == ["a", "b"]  # a plain dict is added in sorted order, as torch does
    assert isinstance(pd["b"], nn.Parameter) and "a" in pd and len(pd) == 2
    pd["c"] = ember.ones(3)
    pd.update(OrderedDict([("z", ember.ones(1)), ("y", ember.ones(1))]))
    assert list(pd.keys()) == ["a", "b", "c", "z", "y"]
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c", "z", "y"]
    assert pd.get("nope", 5) == 5 and pd.get("a") is pd["a"]
    assert pd.setdefault("d", ember.zeros(1)) is pd["d"]
    k, v = pd.popitem()
    assert k == "d" and v.shape == (1,)
    assert pd.pop("z").shape == (1,) and "z" not in pd and not hasattr(pd, "z")
    assert list(reversed(pd)) == ["y", "c", "b", "a"]
    cp = pd.copy()
    assert list(cp) == list(pd) and cp["a"] is pd["a"]
    merged = pd | nn.ParameterDict({"q": ember.ones(1)})
    assert list(merged)[-1] == "q" and "q" not in pd
    pd |= nn.ParameterDict({"r": ember.ones(1)})
    assert "r" in pd
    assert list(pd.fromkeys(["m", "n"], None)) == ["m", "n"]
    _assert_mirrored(pd)
    pd.clear()
    assert len(pd) == 0 and list(pd.parameters()) == []
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key as it is not a string"):
        pd[1] = ember.ones(1)
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        pd(1)


def test_parameter_dict_repr():
    pd = nn.ParameterDict({"w": ember.ones(2, 2), "n": 3})
    assert repr(pd) == ("ParameterDict(\n"
                        "    (n): Object of type: int\n"
                        "    (w): Parameter containing: [ember.FloatTensor of size 2x2]\n)")


# ----- Identity, Flatten, Unflatten -----

def test_identity():
    x = ember.ones(2)
    assert nn.Identity(3, key="ignored")(x) is x
    assert repr(nn.Identity()) == "Identity()"


def test_flatten():
    x = ember.arange(24.0).reshape(2, 3, 4)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Flatten(0, -1)(x).tolist() == list(range(24))
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    x.requires_grad_()
    nn.Flatten()(x).sum().backward()
    assert x.grad.shape == (2, 3, 4)


def test_unflatten():
    x = ember.arange(12.0).reshape(2, 6)
    u = nn.Unflatten(1, (2, 3))
    assert u(x).shape == (2, 2, 3) and u(x)[1, 1].tolist() == [9.0, 10.0, 11.0]
    assert nn.Unflatten(-1, [3, -1])(x).shape == (2, 3, 2)
    assert repr(u) == "Unflatten(dim=1, unflattened_size=(2, 3))"
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type int"):
        nn.Unflatten(1, 4)
    with pytest.raises(TypeError, match="but found element of type float at pos 1"):
        nn.Unflatten(1, (2, 2.0))
