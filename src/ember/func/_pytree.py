"""The pytrees of the function transforms: ember.utils._pytree, plus matching vmap's in_dims against inputs."""

from ..utils._pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["broadcast_prefix", "tree_flatten", "tree_map", "tree_unflatten"]


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
    return repr(tree_flatten(tree)[1])  # as torch writes its TreeSpec
