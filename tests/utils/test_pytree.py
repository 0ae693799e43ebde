"""ember.utils._pytree: flatten/unflatten round trips, maps over several trees, specs and their errors."""
import collections

import pytest

from ember.utils import _pytree as pt

NT = collections.namedtuple("NT", "x y")


def test_flatten_and_unflatten_round_trip_every_container():
    tree = {"b": [1, (2, 3)], "a": NT(4, [5]), "o": collections.OrderedDict(c=6),
            "d": collections.defaultdict(list, k=[7]), "q": collections.deque([8, 9], maxlen=3), "n": None}
    leaves, spec = pt.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5, 6, 7, 8, 9, None]  # dicts in insertion order; None is a leaf
    assert spec.num_leaves == 10 and spec.num_children == 6 and spec.type is dict
    back = pt.tree_unflatten(leaves, spec)
    assert back == tree and type(back["a"]) is NT and back["q"].maxlen == 3 and back["d"].default_factory is list
    assert pt.tree_structure(tree) == spec and pt.tree_leaves(tree) == leaves


def test_spec_repr_as_torch_writes_it():
    spec = pt.tree_structure({"b": [1, (2, 3)], "a": 4})
    assert repr(spec) == ("TreeSpec(dict, ['b', 'a'], [TreeSpec(list, None, [*,\n    TreeSpec(tuple, None, [*,\n"
                          "      *])]),\n  *])")
    assert repr(pt.tree_structure(1)) == "*" and pt.tree_structure(1).is_leaf()
    assert pt.treespec_pprint(spec) == "{'b': [*, (*, *)], 'a': *}"


def test_maps():
    assert pt.tree_map(lambda a, b: a + b, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    assert pt.tree_map_only(int, lambda x: x * 2, [1, "a", 2.0]) == [2, "a", 2.0]
    seen = []
    assert pt.tree_map_(seen.append, {"k": [1, 2]}) == {"k": [1, 2]} and seen == [1, 2]
    assert pt.tree_leaves([1, [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1) == [1, [2]]
    assert pt.tree_all(lambda x: x > 0, [1, (2,)]) and not pt.tree_any(lambda x: x > 5, [1, (2,)])
    assert pt.tree_all_only(int, lambda x: x > 0, [1, "s"]) and pt.tree_any_only(str, lambda s: s == "s", [1, "s"])
    # a second tree may hold whole subtrees where the first has leaves
    assert pt.tree_map(lambda a, b: (a, b), [1, 2], [[0], {"k": 1}]) == [(1, [0]), (2, {"k": 1})]


def test_registered_classes():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    pt.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
    try:
        leaves, spec = pt.tree_flatten([Pair(1, 2)])
        assert leaves == [1, 2]
        p = pt.tree_unflatten([3, 4], spec)[0]
        assert (p.a, p.b) == (3, 4)
        with pytest.raises(ValueError, match="already registered"):
            pt.register_pytree_node(Pair, lambda p: ([], None), lambda c, _: None)
    finally:
        del pt._NODES[Pair]


def test_errors():
    with pytest.raises(ValueError, match="Node arity mismatch; expected 2, but got 1."):
        pt.tree_map(lambda a, b: a + b, [1, 2], [1])
    with pytest.raises(ValueError, match="`leaves` has length 1 but the spec refers to a pytree that holds 2 items"):
        pt.tree_unflatten([1], pt.tree_structure([1, 2]))
    with pytest.raises(ValueError, match="Node type mismatch"):
        pt.tree_map(lambda a, b: a, [1], (1,))
