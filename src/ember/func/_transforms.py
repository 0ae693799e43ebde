"""torch.func's transforms (grad, vjp, jvp, jacrev, jacfwd, hessian, vmap) on top of ember's autograd.

NOTE [ Transforms without functorch levels ]
ember has no batching rules, and forward-mode AD (autograd.forward_ad) has one level at a time. The transforms:
- grad / vjp / jacrev differentiate with respect to fresh leaves (inputs that already require grad get a
  differentiable alias instead, so an enclosing transform or an outer backward still sees through them); a leaf
  keeps its input's tangent, and inside a jvp the backward runs as recorded ops, so jvp(grad(f)) (a Hessian-vector
  product) is forward over reverse;
- jvp and jacfwd run in forward mode (dual tensors; jacfwd one jvp per input element); a jvp inside another
  falls back to the double-vjp trick (a vjp is linear in its cotangent; differentiating it with respect to the
  cotangent gives the jvp), which needs ops that are twice differentiable;
- vmap calls the function once per batch entry and stacks the results: the values are those of torch.func,
  the speed is that of a Python loop.
Results carry a graph only where something outside the transform can use it: when grad mode is on and some input
tensor (transformed or not) requires grad, as when the transforms are nested.
"""
from .._ops.creation import zeros, zeros_like
from .._ops.join import stack
from .._tensor import Tensor
from ..autograd import forward_ad as _fw
from ..autograd import grad as _autograd_grad
from ..autograd.grad_mode import GRAD
from ..autograd.graph import FORWARD
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap", "linearize"]


class _Grad:
    """Grad mode on for the block (the transforms differentiate even inside no_grad, as torch.func does)."""
    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = GRAD[0]
        GRAD[0] = True

    def __exit__(self, *exc):
        GRAD[0] = self.prev


def _fn_name(func):
    return getattr(func, "__name__", type(func).__name__)


def _tracked():
    """Whether the transform must build a graph through its results: grad mode is on (an input, or a tensor the
    function closes over such as a module's parameters, may require grad; _detach drops what nothing uses)."""
    return GRAD[0]


def _reaches_outside(t, own):
    """Whether t's history leads to a leaf other than the transform's own tracked leaves (`own`: their ids)."""
    seen = set()
    stack = [t._grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        var = getattr(node, "variable", None) if not node.next_functions else None
        if var is not None and id(var) not in own:
            return True
        stack.extend(fn for fn, _ in node.next_functions)
    return False


def _track(v):
    """A tensor to differentiate with respect to, standing for input v (with v's tangent, inside jvp)."""
    if not isinstance(v, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(v)}")
    if v._requires_grad:
        return v.view_as(v)
    tangent = _fw.tangent_of(v)
    leaf = v.detach().requires_grad_(True)
    return leaf if tangent is None else _fw.make_dual(leaf, tangent)


def _argnums(argnums, nargs):
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not isinstance(argnums, int) and not nums:
        raise RuntimeError("argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(n)}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnum={n}, but only {nargs} positional inputs")
    return nums


def _track_args(args, argnums):
    """args with the leaves at argnums replaced by tracked tensors; also [(tracked leaves, spec)] per argnum."""
    args = list(args)
    trees = []
    for n in _argnums(argnums, len(args)):
        leaves, spec = tree_flatten(args[n])
        new = [_track(v) for v in leaves]
        args[n] = tree_unflatten(new, spec)
        trees.append((new, spec))
    return args, trees


def _grads(outputs, inputs, grad_outputs, create_graph):
    """d outputs / d inputs (zeros where an input is unused), keeping the graph alive for further calls."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o._requires_grad]
    if not pairs:
        res = [None] * len(inputs)
    else:
        # inside jvp the backward runs as recorded ops, which carry the tangents (forward over reverse)
        res = _autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=True,
                             create_graph=create_graph or FORWARD[0] is not None, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(res, inputs)]


def _detach(tree, keep, own=None):
    """tree with its tensors detached, except (when keep) those whose graph reaches beyond the leaves in `own`."""
    leaves, spec = tree_flatten(tree)
    if keep and own is None:
        return tree
    out = []
    for v in leaves:
        if isinstance(v, Tensor) and v._requires_grad and (
                not keep or v._grad_fn is None or not _reaches_outside(v, own)):
            tangent = _fw.tangent_of(v)
            v = v.detach() if tangent is None else _fw.make_dual(v.detach(), tangent)
        out.append(v)
    return tree_unflatten(out, spec)


def _own(trees):
    return {id(_leaf_of(v)) for leaves, _ in trees for v in leaves if _leaf_of(v)._grad_fn is None}


def _leaf_of(v):
    """The leaf a tracked tensor stands on (itself, or the base of the dual view _track made)."""
    return v._base if v._base is not None and _fw.tangent_of(v) is not None else v


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is "
                           "True")
    return out


def _per_argnum(trees, values, argnums):
    """values (flat, over all tracked leaves) rebuilt into the structure of the differentiated arguments."""
    res, k = [], 0
    for leaves, spec in trees:
        res.append(tree_unflatten(values[k:k + len(leaves)], spec))
        k += len(leaves)
    return res[0] if isinstance(argnums, int) else tuple(res)


def grad_and_value(func, argnums=0, has_aux=False):
    """Same as `torch.func.grad_and_value`."""
    def wrapper(*args, **kwargs):
        keep = _tracked()
        with _Grad():
            targs, trees = _track_args(args, argnums)
            out, aux = _split_aux(func(*targs, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs "
                                   "instead?")
            flat = [v for leaves, _ in trees for v in leaves]
            gs = _grads([out], flat, [None], keep)
        own = _own(trees)
        g = _per_argnum(trees, _detach(gs, keep, own), argnums)
        value = _detach(out, keep, own)
        return (g, (value, _detach(aux, keep, own))) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """Same as `torch.func.grad`."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _vjp(func, primals, has_aux, keep):
    with _Grad():
        flat, spec = tree_flatten(primals)
        tracked = [_track(v) for v in flat]
        out, aux = _split_aux(func(*tree_unflatten(tracked, spec)), has_aux, "vjp")
    out_flat, out_spec = tree_flatten(out)
    for o in out_flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"vjp(f, *primals): Expected f to be a function that has non-empty output and returns "
                               f"Tensors, got {type(o)}")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        ct_flat, ct_spec = tree_flatten(cotangents)
        if len(ct_flat) != len(out_flat):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {ct_spec}, primal output: "
                               f"{out_spec}")
        for o, c in zip(out_flat, ct_flat):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {c.shape} and output[0] has "
                                   f"a shape of {o.shape}.")
        cg = GRAD[0] if create_graph is None else create_graph
        with _Grad():
            gs = _grads(out_flat, tracked, ct_flat, cg)
        return tree_unflatten(gs if create_graph else _detach(gs, cg, own), spec)
    own = {id(_leaf_of(v)) for v in tracked if _leaf_of(v)._grad_fn is None}
    return out_flat, out_spec, vjp_fn, aux, own


def vjp(func, *primals, has_aux=False):
    """Same as `torch.func.vjp`: (output, vjp_fn) or (output, vjp_fn, aux)."""
    keep = _tracked()
    out_flat, out_spec, vjp_fn, aux, own = _vjp(func, primals, has_aux, keep)
    out = _detach(tree_unflatten(out_flat, out_spec), keep, own)
    return (out, vjp_fn, _detach(aux, keep, own)) if has_aux else (out, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """Same as `torch.func.jvp`: (output, jvp_out) or (output, jvp_out, aux)."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    p_flat, t_flat = tree_flatten(primals)[0], tree_flatten(tangents)[0]
    if len(p_flat) != len(t_flat):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           "structure.")
    for p, t in zip(p_flat, t_flat):
        if isinstance(p, Tensor) and isinstance(t, Tensor) and tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same shape. "
                               f"Got primal shape {tuple(p.shape)} and tangent shape {tuple(t.shape)}")
    if _fw._LEVEL[0] < 0:  # forward-mode AD, unless a jvp is already open around this one
        return _forward_jvp(func, primals, tangents, has_aux)
    keep = _tracked()
    out_flat, out_spec, vjp_fn, aux, own = _vjp(func, primals, has_aux, True)
    with _Grad():
        # the vjp is linear in its cotangent u: d(vjp(u) . t)/du is the jvp
        us = [zeros_like(o).requires_grad_(True) for o in out_flat]
        gs = tree_flatten(vjp_fn(tree_unflatten(us, out_spec), create_graph=True))[0]
        jv = _grads(gs, us, t_flat, keep)
    own.update(id(u) for u in us)
    out = _detach(tree_unflatten(out_flat, out_spec), keep, own)
    jv = _detach(tree_unflatten(jv, out_spec), keep, own)
    return (out, jv, _detach(aux, keep, own)) if has_aux else (out, jv)


def _forward_jvp(func, primals, tangents, has_aux):
    """jvp through autograd.forward_ad: the primals become dual tensors (NOTE [ Forward-mode AD ])."""
    p_flat, p_spec = tree_flatten(primals)
    t_flat = tree_flatten(tangents)[0]
    with _fw.dual_level():
        duals = [_fw.make_dual(p, t.to(p.dtype) if t.dtype != p.dtype else t) if isinstance(p, Tensor) else p
                 for p, t in zip(p_flat, t_flat)]
        out, aux = _split_aux(func(*tree_unflatten(duals, p_spec)), has_aux, "jvp")
        out_flat, out_spec = tree_flatten(out)
        prims, tans = [], []
        for o in out_flat:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f(*primals) to be a tensor or tuple of "
                                   f"tensors, got {type(o)}")
            primal, tangent = _fw.unpack_dual(o)
            prims.append(primal)
            tans.append(zeros_like(o) if tangent is None else tangent)
    out = tree_unflatten(prims, out_spec)
    jv = tree_unflatten(tans, out_spec)
    return (out, jv, aux) if has_aux else (out, jv)


def linearize(func, *primals):
    """Same as `torch.func.linearize`: (output, jvp_fn) where jvp_fn(*tangents) is the jvp at primals."""
    out = jvp(func, primals, tuple(zeros_like(p) for p in primals))[0]

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return out, jvp_fn


def _jacobian_rows(o, inputs, keep):
    """The Jacobian of tensor o with respect to each input: shapes o.shape + input.shape."""
    n = o.numel()
    rows = [[] for _ in inputs]
    for k in range(n):
        e = zeros(n, dtype=o.dtype, device=o.device)
        e[k] = 1
        for r, g in zip(rows, _grads([o], inputs, [e.reshape(o.shape)], keep)):
            r.append(g)
    res = []
    for r, x in zip(rows, inputs):
        j = stack(r) if r else zeros((0,) + tuple(x.shape), dtype=o.dtype, device=o.device)
        res.append(j.reshape(tuple(o.shape) + tuple(x.shape)))
    return res


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Same as `torch.func.jacrev`."""
    def wrapper(*args, **kwargs):
        keep = _tracked()
        with _Grad():
            targs, trees = _track_args(args, argnums)
            out, aux = _split_aux(func(*targs, **kwargs), has_aux, "jacrev")
            flat = [v for leaves, _ in trees for v in leaves]
            out_flat, out_spec = tree_flatten(out)
            jacs = []
            for o in out_flat:
                if not isinstance(o, Tensor):
                    raise RuntimeError(f"jacrev(f, ...)(*args): Expected f(*args) to return a Tensor or a tuple of "
                                       f"Tensors, got {type(o)}")
                jacs.append(_per_argnum(trees, _detach(_jacobian_rows(o, flat, keep), keep, _own(trees)), argnums))
        res = tree_unflatten(jacs, out_spec)
        return (res, _detach(aux, keep, _own(trees))) if has_aux else res
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Same as `torch.func.jacfwd`: one forward-mode jvp per input element (reverse mode inside an open jvp)."""
    rev = jacrev(func, argnums, has_aux=has_aux)

    def wrapper(*args):
        if _fw._LEVEL[0] >= 0:
            return rev(*args)
        nums = _argnums(argnums, len(args))
        leaves = [tree_flatten(args[n]) for n in nums]
        for flat, _ in leaves:
            for v in flat:
                if not isinstance(v, Tensor):
                    raise ValueError(f"Thing passed to transform API must be Tensor, got {type(v)}")
        cols, out_spec, aux = None, None, None
        flat_inputs = [v for flat, _ in leaves for v in flat]
        for i, x in enumerate(flat_inputs):
            for k in range(x.numel()):
                e = [zeros_like(v) for v in flat_inputs]
                e[i].view(-1)[k] = 1
                tangents, j = list(args), 0
                tangents = [zeros_like(a) if isinstance(a, Tensor) else a for a in args]
                for n, (flat, spec) in zip(nums, leaves):
                    tangents[n] = tree_unflatten(e[j:j + len(flat)], spec)
                    j += len(flat)
                res = jvp(func, tuple(args), tuple(tangents), has_aux=has_aux)
                out, jv = res[0], res[1]
                if has_aux:
                    aux = res[2]
                o_flat, out_spec = tree_flatten(out)
                jv_flat = tree_flatten(jv)[0]
                if cols is None:
                    cols = [[[] for _ in flat_inputs] for _ in o_flat]
                for c, t in zip(cols, jv_flat):
                    c[i].append(t)
        if cols is None:
            return rev(*args)
        jacs = []
        for o, per_input in zip(o_flat, cols):
            js = [stack(ts, dim=-1).reshape(tuple(o.shape) + tuple(x.shape)) if ts else
                  zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype, device=o.device)
                  for ts, x in zip(per_input, flat_inputs)]
            trees, j = [], 0
            for flat, spec in leaves:
                trees.append(tree_unflatten(js[j:j + len(flat)], spec))
                j += len(flat)
            jacs.append(trees[0] if isinstance(argnums, int) else tuple(trees))
        res = tree_unflatten(jacs, out_spec)
        return (res, aux) if has_aux else res
    return wrapper


def hessian(func, argnums=0):
    """Same as `torch.func.hessian`."""
    return jacfwd(jacrev(func, argnums), argnums)


def _vmap_name(func, in_dims):
    return f"vmap({_fn_name(func)}, in_dims={in_dims}, ...)(<inputs>)"


def _batch_size(func, in_dims, leaves, dims):
    sizes = []
    for v, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(f"{_vmap_name(func, in_dims)}: in_dims must be int or None, got {type(d)}")
        if not isinstance(v, Tensor):
            raise ValueError(f"{_vmap_name(func, in_dims)}: Got in_dim={d} for an input but the input is of type "
                             f"{type(v)}. We cannot vmap over non-Tensor arguments, please use None as the "
                             "respective in_dim")
        n = v.dim()
        if not -n <= d < n:
            raise ValueError(f"{_vmap_name(func, in_dims)}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
        sizes.append(v.shape[d])
    if not sizes:
        raise ValueError(f"{_vmap_name(func, in_dims)}: at least one input must be batched (have a non-None "
                         "in_dim).")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"[{', '.join(map(str, sizes))}] for the mapped dimension")
    return sizes[0]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Same as `torch.func.vmap` (runs func once per batch entry and stacks the results)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")

    def wrapped(*args, **kwargs):
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap({_fn_name(func)}, in_dims={in_dims}, ...): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"{_vmap_name(func, in_dims)}: in_dims is not compatible with the structure of "
                             f"`inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                             f"structure {tree_flatten(args)[1]}.")
        leaves, spec = tree_flatten(args)
        dims = broadcast_prefix(in_dims, args, _vmap_name(func, in_dims))
        size = _batch_size(func, in_dims, leaves, dims)
        results = []
        for i in range(size):
            sliced = [v if d is None else v.select(d, i) for v, d in zip(leaves, dims)]
            results.append(func(*tree_unflatten(sliced, spec), **kwargs))
        return _stack_results(func, results, out_dims)
    return wrapped


def _stack_results(func, results, out_dims):
    flats = [tree_flatten(r) for r in results]
    spec = flats[0][1]
    ods = broadcast_prefix(out_dims, results[0], f"vmap({_fn_name(func)}, ...)")
    out = []
    for k, od in enumerate(ods):
        column = [f[0][k] for f in flats]
        if od is None:
            out.append(column[0])
            continue
        if not isinstance(column[0], Tensor):
            raise ValueError(f"vmap({_fn_name(func)}, ...): `{_fn_name(func)}` must only return Tensors, got type "
                             f"{type(column[0])}. Did you mean to set out_dims= to None for output?")
        out.append(stack(column, dim=od))
    return tree_unflatten(out, spec)
