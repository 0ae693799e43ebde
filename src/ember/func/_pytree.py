"""Minimal pytrees for the function transforms: nested tuples, lists and dicts with tensors (or anything) at the
leaves."""

__all__ = ["tree_flatten", "tree_unflatten", "tree_map"]


def tree_flatten(tree):
    """(leaves, spec): spec rebuilds the tree from a list of leaves with tree_unflatten."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    cls = type(tree)
    if cls is tuple or cls is list or (isinstance(tree, tuple) and hasattr(tree, "_fields")):
        return (cls, [_flatten(v, leaves) for v in tree])
    if isinstance(tree, dict):
        return (cls, list(tree.keys()), [_flatten(v, leaves) for v in tree.values()])
    leaves.append(tree)
    return None


def tree_unflatten(leaves, spec):
    """The tree of `spec` with `leaves` (in flattening order) at its leaves."""
    it = iter(leaves)
    return _unflatten(spec, it)


def _unflatten(spec, it):
    if spec is None:
        return next(it)
    cls = spec[0]
    if len(spec) == 3:
        return cls(zip(spec[1], [_unflatten(s, it) for s in spec[2]]))
    items = [_unflatten(s, it) for s in spec[1]]
    if cls is tuple or cls is list:
        return cls(items)
    return cls(*items)  # a named tuple


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(v) for v in leaves], spec)


def broadcast_prefix(prefix, tree, what):
    """One entry of `prefix` per leaf of `tree`, where prefix is a tree prefix of tree (e.g. vmap's in_dims)."""
    out = []
    _broadcast(prefix, tree, out, what)
    return out


def _broadcast(prefix, tree, out, what):
    if prefix is None or isinstance(prefix, int):
        out.extend([prefix] * len(tree_flatten(tree)[0]))
        return
    if isinstance(prefix, dict) and isinstance(tree, dict):
        if set(prefix) != set(tree):
            raise ValueError(f"{what}: the keys of {prefix!r} do not match those of the inputs")
        for k in tree:
            _broadcast(prefix[k], tree[k], out, what)
        return
    if isinstance(prefix, (tuple, list)) and isinstance(tree, (tuple, list)) and len(prefix) == len(tree):
        for p, t in zip(prefix, tree):
            _broadcast(p, t, out, what)
        return
    raise ValueError(f"{what}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                     f"{_structure(prefix)} but inputs has structure {_structure(tree)}.")


def _structure(tree):
    return spec_str(tree_flatten(tree)[1])


def spec_str(spec, indent=0):
    """A spec written as torch writes its TreeSpec (error messages show it)."""
    if spec is None:
        return "*"
    cls = spec[0]
    context = repr(spec[1]) if len(spec) == 3 else "None"
    children = spec[2] if len(spec) == 3 else spec[1]
    inner = (",\n" + " " * (indent + 2)).join(spec_str(c, indent + 2) for c in children)
    return f"TreeSpec({cls.__name__}, {context}, [{inner}])"
