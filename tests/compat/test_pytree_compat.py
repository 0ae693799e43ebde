"""ember.utils._pytree against torch.utils._pytree: leaves, spec reprs and maps on the same trees."""
import collections

import pytest

from ember.utils import _pytree as ept

torch = pytest.importorskip("torch")
tpt = pytest.importorskip("torch.utils._pytree")

NT = collections.namedtuple("NT", "x y")
TREES = [1, None, [1, 2], (1,), {"b": [1, (2, 3)], "a": 4}, NT(1, [2, {"k": 3}]),
         collections.OrderedDict(z=1, a=[2]), [[], (), {}], {"x": collections.deque([1, 2])}]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_same_leaves_specs_and_maps(tree):
    el, es = ept.tree_flatten(tree)
    tl, ts = tpt.tree_flatten(tree)
    assert el == tl
    assert repr(es) == repr(ts)
    assert (es.num_leaves, es.num_nodes, es.num_children) == (ts.num_leaves, ts.num_nodes, ts.num_children)
    f = str  # any leaf function
    assert ept.tree_map(f, tree) == tpt.tree_map(f, tree)
    assert ept.treespec_pprint(es) == tpt.treespec_pprint(ts)
