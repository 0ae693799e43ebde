"""ember.utils._pytree: same as torch.utils._pytree — nested containers (tuples, lists, dicts, named tuples and
registered classes) flattened to a list of leaves and a TreeSpec that rebuilds them."""
import collections
import dataclasses

__all__ = ["LeafSpec", "TreeSpec", "is_namedtuple", "register_pytree_node", "tree_all", "tree_all_only", "tree_any",
           "tree_any_only", "tree_flatten", "tree_is_leaf", "tree_iter", "tree_leaves", "tree_map", "tree_map_",
           "tree_map_only", "tree_map_only_", "tree_structure", "tree_unflatten", "treespec_pprint"]


@dataclasses.dataclass(frozen=True)
class _Node:
    flatten: object    # tree -> (children, context)
    unflatten: object  # (children, context) -> tree


_NODES = {
    tuple: _Node(lambda t: (list(t), None), lambda c, _: tuple(c)),
    list: _Node(lambda t: (list(t), None), lambda c, _: list(c)),
    dict: _Node(lambda d: (list(d.values()), list(d)), lambda c, keys: dict(zip(keys, c))),
    collections.OrderedDict: _Node(lambda d: (list(d.values()), list(d)),
                                   lambda c, keys: collections.OrderedDict(zip(keys, c))),
    collections.defaultdict: _Node(lambda d: (list(d.values()), (d.default_factory, list(d))),
                                   lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c))),
    collections.deque: _Node(lambda d: (list(d), d.maxlen), lambda c, maxlen: collections.deque(c, maxlen)),
}
_NAMEDTUPLE = _Node(lambda t: (list(t), type(t)), lambda c, cls: cls(*c))


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Same as `torch.utils._pytree.register_pytree_node`: flatten_fn(obj) -> (children, context),
    unflatten_fn(children, context) -> obj."""
    if cls in _NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _NODES[cls] = _Node(flatten_fn, unflatten_fn)


def is_namedtuple(obj):
    """Same as `torch.utils._pytree.is_namedtuple`: obj is a named tuple, or a named tuple class."""
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def _node_of(tree):
    cls = type(tree)
    node = _NODES.get(cls)
    if node is None and is_namedtuple(cls):
        return _NAMEDTUPLE
    return node


def tree_is_leaf(tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_is_leaf`."""
    return (is_leaf is not None and is_leaf(tree)) or _node_of(tree) is None


class TreeSpec:
    """Same as `torch.utils._pytree.TreeSpec`: a container type, its context (dict keys, ...) and its children's
    specs."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_children = len(self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self):
        return False

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, it):
        children = [c._build(it) for c in self.children_specs]
        node = _NAMEDTUPLE if self.type is namedtuple_type else _NODES[self.type]
        return node.unflatten(children, self.context)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and other.is_leaf() == self.is_leaf() and other.type is self.type
                and other.context == self.context and other.children_specs == self.children_specs)

    def __hash__(self):
        return hash((self.type, self.num_nodes, self.num_leaves))

    def __repr__(self, indent=0):
        name = "namedtuple" if self.type is namedtuple_type else self.type.__name__
        inner = (",\n" + " " * (indent + 2)).join(c.__repr__(indent + 2) for c in self.children_specs)
        return f"TreeSpec({name}, {self.context!r}, [{inner}])"


class namedtuple_type:
    """The TreeSpec type of named tuples (their class is the spec's context)."""


class LeafSpec(TreeSpec):
    """Same as `torch.utils._pytree.LeafSpec`: the spec of one leaf, written `*`."""

    def __init__(self):
        super().__init__(None, None, [])
        self.num_nodes = 1
        self.num_leaves = 1

    def is_leaf(self):
        return True

    def _build(self, it):
        return next(it)

    def __repr__(self, indent=0):
        return "*"


_LEAF = LeafSpec()


def tree_flatten(tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_flatten`: (leaves, treespec)."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves, is_leaf):
    node = None if is_leaf is not None and is_leaf(tree) else _node_of(tree)
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, context = node.flatten(tree)
    return TreeSpec(namedtuple_type if node is _NAMEDTUPLE else type(tree), context,
                    [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves, treespec):
    """Same as `torch.utils._pytree.tree_unflatten`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but got "
                        f"item of type {type(treespec)}.")
    return treespec.unflatten(leaves)


def tree_leaves(tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_leaves`."""
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_iter`."""
    return iter(tree_leaves(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_structure`."""
    return tree_flatten(tree, is_leaf)[1]


def _leaves_like(spec, tree, is_leaf):
    """The leaves of `tree` taken along `spec` (tree may hold whole subtrees where spec has leaves)."""
    if spec.is_leaf():
        return [tree]
    node = _node_of(tree)
    if node is None or (type(tree) is not spec.type and not (spec.type is namedtuple_type and is_namedtuple(tree))):
        raise ValueError(f"Node type mismatch; expected {spec.type}, but got {type(tree)}.")
    children, context = node.flatten(tree)
    if len(children) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
    if context != spec.context:
        raise ValueError(f"Node context mismatch for custom node type {spec.type}.")
    return [leaf for c, s in zip(children, spec.children_specs) for leaf in _leaves_like(s, c, is_leaf)]


def tree_map(func, tree, *rests, is_leaf=None):
    """Same as `torch.utils._pytree.tree_map`: func over the leaves of tree (and the matching leaves of rests)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_leaves_like(spec, r, is_leaf) for r in rests]
    return spec.unflatten(map(func, leaves, *others))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Same as `torch.utils._pytree.tree_map_`: func applied to every leaf for its effect; returns tree."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_leaves_like(spec, r, is_leaf) for r in rests]
    for args in zip(leaves, *others):
        func(*args)
    return tree


def _only(type_or_types, func):
    return lambda x: func(x) if isinstance(x, type_or_types) else x


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_map_only`: func on the leaves of the given type(s), others kept."""
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types, func, tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_map_only_`."""
    return tree_map_(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_all`."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_any`."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_all_only`: pred holds for every leaf of the given type(s)."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    """Same as `torch.utils._pytree.tree_any_only`."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


class _Star:
    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """Same as `torch.utils._pytree.treespec_pprint`: the tree written as Python writes it, leaves as `*`."""
    return repr(treespec.unflatten([_Star()] * treespec.num_leaves))
