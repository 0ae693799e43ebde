"""The backward engine: runs graph nodes in dependency order (iteratively, never by recursion)."""
import numpy as np

from . import graph
from .grad_mode import GRAD
from .graph import _ANOMALY, _SINGLE, AccumulateGrad, grad_accumulator

__all__ = ["run_backward"]


def _alias(g, create_graph):
    """The caller's gradient as the engine will hold it. With create_graph it keeps its history (the result is
    differentiable with respect to it); otherwise a detached alias, whose shared array is never stolen as .grad."""
    if create_graph and g._requires_grad:
        return g
    return graph._make(g._data)


def _root_edge(t):
    if t._grad_fn is not None:
        return t.grad_fn, t._output_nr  # the property refreshes a stale view's history
    return grad_accumulator(t), 0


def _dependencies(roots):
    """Number of graph edges pointing at each node reachable from the roots (a node is seen once it has an
    entry: one dict serves as the count and the seen set)."""
    deps = dict.fromkeys(roots, 0)
    stack = list(deps)
    while stack:
        node = stack.pop()
        for fn, _ in node.next_functions:
            if fn is not None:
                c = deps.get(fn)
                if c is None:
                    deps[fn] = 1
                    stack.append(fn)
                else:
                    deps[fn] = c + 1
    return deps


def _to_run(roots, targets):
    """Nodes that lead to some target: only they need to run when gradients for chosen inputs are asked for."""
    reach = {}  # node -> whether a target is reachable from it (itself included)
    run = set()
    stack = [(r, False) for r in set(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            leads = any(fn is not None and reach.get(fn) for fn, _ in node.next_functions)
            reach[node] = leads or node in targets
            if leads:
                run.add(node)
            continue
        if node in reach:
            continue
        reach[node] = False
        stack.append((node, True))
        for fn, _ in node.next_functions:
            if fn is not None and fn not in reach:
                stack.append((fn, False))
    return run


def _validate(node, grads):
    """Sum broadcast gradients down to each input's shape and cast to its dtype, as torch's engine does."""
    out = list(grads)
    meta = node._meta
    for i, g in enumerate(out):
        if g is None:
            continue
        shape, dt = meta[i]
        d = g._data
        if d.shape != shape:
            g = _sum_to(g, shape, node, i)
        if g._data.dtype != dt:
            if dt.kind != "c" and g._data.dtype.kind == "c":
                g = g.real
            g = g.to(_from_np(dt))
        out[i] = g
    return out


def _summed(a, b):
    """Two gradients of one output added up: on their arrays when no graph of the backward is recorded."""
    da, db = a._data, b._data
    if GRAD[0] or da.__class__ is not db.__class__ or da.dtype != db.dtype or da.dtype.kind == "b" \
            or a.__class__ is not graph._Tensor:  # a sparse gradient (embedding's) adds as a tensor
        return a + b
    s = da + db
    return graph._make(s if s.__class__ is da.__class__ else np.asarray(s))  # NumPy answers 0-d arrays with a scalar


def _from_np(dt):
    from .._dtype import FROM_NP
    return FROM_NP[dt]


def _sum_to(g, shape, node, i):
    gs = g._data.shape
    lead = len(gs) - len(shape)
    if lead < 0 or any(s != 1 and s != gs[lead + k] for k, s in enumerate(shape)):
        raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} - got "
                           f"[{', '.join(map(str, gs))}] but expected shape compatible with "
                           f"[{', '.join(map(str, shape))}]")
    dims = tuple(range(lead)) + tuple(lead + k for k, s in enumerate(shape) if s == 1 and gs[lead + k] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


def _call_tensor_hooks(hooks, grads):
    # retain_grad hooks run last, whenever they were registered: .grad shows what the other hooks made of it
    for nr, hook in sorted(hooks.values(), key=lambda h: getattr(h[1], "_retains_grad", False)):
        g = grads[nr]
        if g is None:
            continue
        r = hook(g)
        if r is not None:
            if r.__class__ is not g.__class__ or r._data.shape != g._data.shape or r._data.dtype != g._data.dtype:
                _check_hook_result(hook, g, r)
            grads[nr] = r


def _check_hook_result(hook, g, r):
    """torch's errors for a tensor hook that returned something other than a same-typed, same-sized gradient."""
    if not isinstance(r, graph._Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    name = getattr(hook, "__name__", type(hook).__name__)
    if r._data.dtype != g._data.dtype:
        from .._dtype import legacy_type_name
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {legacy_type_name(g)} got "
                           f"{legacy_type_name(r)})")
    if r._data.shape != g._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")


def _before(node, x, gbuf, needed, capture, results):
    """Tensor hooks, gradient capture for autograd.grad and pre-hooks; returns (whether to run node, gradients)."""
    if x is not None and x.tensor:
        _call_tensor_hooks(x.tensor, gbuf)
    if capture is not None and node in capture:
        for nr, k in capture[node]:
            results[k] = gbuf[nr]
    run = needed is None or node in needed
    if run and x is not None and x.pre:
        for hook in list(x.pre.values()):
            r = hook(tuple(gbuf))
            if r is not None:
                gbuf = list(r)
    return run, gbuf


def _check_nan(node, grads):
    for i, g in enumerate(grads):
        if g is not None and g._data.dtype.kind in "fc":
            xp = g._data
            if (xp != xp).any():
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _warn_anomaly(node):
    """Anomaly mode's warning for an error raised while running `node`: where its forward ran."""
    import warnings
    trace = getattr(node, "_trace", None)
    if trace:
        where = "Traceback of forward call that caused the error:\n" + "".join(trace)
    else:
        where = "No forward pass information available. Enable detect anomaly during forward pass for more information."
    warnings.warn(f"Error detected in {node.name()}. {where}", UserWarning, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """The stacklevel of the innermost caller outside ember, so that a warning points at the user's line."""
    import sys

    from .graph import _PKG_DIR
    f = sys._getframe(1)
    level = 1
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
        level += 1
    return level


def run_backward(tensors, grads, retain_graph, create_graph, inputs=None, accumulate=True, allow_unused=True):
    """Backpropagate `grads` from `tensors`.

    With accumulate=True, leaf gradients go into .grad (of `inputs` only, when given). With accumulate=False
    (autograd.grad), the gradients reaching `inputs` are returned instead and no .grad is touched.
    """
    roots = []
    buffers = {}
    # roots' gradients are the caller's tensors: wrap them so that their arrays never pass as unshared
    grads = [g if g is None else _alias(g, create_graph) for g in grads]
    for t, g in zip(tensors, grads):
        node, nr = _root_edge(t)
        roots.append(node)
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.nout
        if g is not None:
            buf[nr] = g if buf[nr] is None else buf[nr] + g
    deps = _dependencies(roots)

    capture = None   # node -> [(output slot, index in result)] for autograd.grad on non-leaf inputs
    results = None
    needed = None
    if inputs is not None:
        targets = {}
        results = [None] * len(inputs)
        capture = {}
        for k, t in enumerate(inputs):
            node, nr = _root_edge(t)
            targets[node] = True
            capture.setdefault(node, []).append((nr, k))
        needed = _to_run(roots, targets)
        if accumulate:  # backward(inputs=...) still accumulates into the chosen leaves
            needed.update(n for n in targets if isinstance(n, AccumulateGrad))

    prev = GRAD[0]
    GRAD[0] = bool(create_graph)
    g = r = node = None
    try:
        ready = [n for n in dict.fromkeys(roots) if deps.get(n, 0) == 0]
        plain = needed is None and capture is None
        check_nan = _ANOMALY[0] and _ANOMALY[1]
        while ready:
            node = ready.pop()
            gbuf = buffers.pop(node, None) or [None] * node.nout
            x = node._x
            run = True
            if x is not None or not plain:
                run, gbuf = _before(node, x, gbuf, needed, capture, results)
            if run and (gbuf[0] is not None if len(gbuf) == 1 else any(v is not None for v in gbuf)):
                if node.__class__ in _SINGLE:  # a built-in single-output op: its backward directly
                    out = node.op.bwd(node, gbuf[0])
                    if out.__class__ is not tuple:
                        out = (out,)
                else:
                    out = node.apply(gbuf)
                for g, m in zip(out, node._meta):  # the common case: each gradient has its input's shape/dtype
                    if g is not None:
                        d = g._data
                        if d.shape != m[0] or (d.dtype is not m[1] and d.dtype != m[1]):
                            out = _validate(node, out)
                            break
                if check_nan:
                    _check_nan(node, out)
                if x is not None and x.post:
                    for hook in list(x.post.values()):
                        r = hook(tuple(out), tuple(gbuf))
                        if r is not None:
                            out = list(r)
            else:
                out = ()
            if not retain_graph:
                node.release()
            nf = node.next_functions
            if len(out) < len(nf):
                out = tuple(out) + (None,) * (len(nf) - len(out))
            for (fn, nr), g in zip(nf, out):
                if fn is None:
                    continue
                if g is not None:
                    buf = buffers.get(fn)
                    if buf is None:
                        buf = buffers[fn] = [None] * fn.nout
                    cur = buf[nr]
                    buf[nr] = g if cur is None else _summed(cur, g)
                d = deps[fn] - 1
                deps[fn] = d
                if d == 0:
                    ready.append(fn)
            out = g = r = None  # hold no gradient across nodes: AccumulateGrad counts references (graph._owns)
    except Exception:
        if _ANOMALY[0] and node is not None:
            _warn_anomaly(node)
        raise
    finally:
        GRAD[0] = prev
    return results
