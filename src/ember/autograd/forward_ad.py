"""Forward-mode automatic differentiation with dual tensors: the same as `torch.autograd.forward_ad`.

NOTE [ Forward-mode AD ]
Inside `with dual_level():`, `make_dual(x, t)` gives a view of x that carries the tangent t; every op applied to
dual tensors gives outputs whose tangents are the Jacobian-vector products J t, and `unpack_dual(y)` reads them.
Tangents are propagated at the one dispatch point (`_ops/_dispatch.py`), which hands each op to this module while
a level is open (one check per op otherwise): the op runs as usual, then its output's tangent is computed
- by a formula, for the ops here in _RULES (elementwise arithmetic, the common unary functions, products), or
- from the op's own backward, for every other differentiable op: the backward is linear in its output gradient u,
  so J t = d<J^T u, t>/du, which reverse mode computes (the backward run with a graph, then differentiated once
  more). This costs a backward and a double backward per op, and needs the op's backward to be differentiable,
  which ember's double-backward tests check for every op.
In-place ops and copy_ update the tangent of the tensor they write (in place, so a view's tangent stays a view of
its base's); custom autograd.Functions need a `jvp` staticmethod, as in torch. One level at a time, as torch;
leaving it forgets every tangent. Ops that are not differentiable (comparisons, argmax, integer results) give
outputs without tangents.
"""
import weakref
from collections import namedtuple

from .grad_mode import GRAD
from .graph import FORWARD

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "Same as `torch.autograd.forward_ad.UnpackedDualTensor`: (primal, tangent)."

_LEVEL = [-1]  # the open level, -1 when none
_EPOCH = [0]  # tangents are stored with the epoch of their level: leaving the level makes them all stale


def enter_dual_level():
    """Same as `torch.autograd.forward_ad.enter_dual_level`: opens level 0 (levels do not nest)."""
    if _LEVEL[0] >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _LEVEL[0] = 0
    FORWARD[0] = _HOOKS
    return 0


def exit_dual_level(*, level=None):
    """Same as `torch.autograd.forward_ad.exit_dual_level`: closes the level; its tangents are gone."""
    level = _LEVEL[0] if level is None else level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _LEVEL[0]:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _LEVEL[0] = -1
    _EPOCH[0] += 1
    FORWARD[0] = None


class dual_level:  # noqa: N801 - torch's name
    """Same as `torch.autograd.forward_ad.dual_level`: `with dual_level():` opens a level for its block."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def _check_level(level, what):
    if level is not None and level != _LEVEL[0]:
        raise RuntimeError(f"Invalid level given to {what}")


def make_dual(tensor, tangent, *, level=None):
    """Same as `torch.autograd.forward_ad.make_dual`: a view of `tensor` whose tangent is `tangent`."""
    if _LEVEL[0] < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_level(level, "make_dual")
    if tensor._data.dtype.kind not in "fcV":
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent._data.dtype.kind not in "fcV":
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size [{', '.join(map(str, tensor.shape))}] "
                           f"while the given forward gradient is of size [{', '.join(map(str, tangent.shape))}].")
    if tangent.device != tensor.device:
        raise RuntimeError(f"Expected tangent to be on the same device as the primal ({tensor.device}), but got "
                           f"{tangent.device}")
    dual = _quiet(lambda: tensor.view_as(tensor))
    _set(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """Same as `torch.autograd.forward_ad.unpack_dual`: (primal, tangent); tangent None for a tensor without one."""
    _check_level(level, "_fw_primal")
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_quiet(lambda: tensor.view_as(tensor)), tangent)


def tangent_of(t):
    """t's tangent at the open level, or None."""
    fw = getattr(t, "_fw", None)
    return fw[1] if fw is not None and fw[0] == _EPOCH[0] and _LEVEL[0] >= 0 else None


def _set(t, tangent):
    t._fw = (_EPOCH[0], tangent)


def _quiet(fn):
    """fn() with tangent propagation off (for the work this module does with ember ops)."""
    saved = FORWARD[0]
    FORWARD[0] = None
    try:
        return fn()
    finally:
        FORWARD[0] = saved


# ----- propagation (called by the dispatch functions while a level is open) -----

def _fit(tangent, out):
    """A computed tangent in the output's shape and dtype."""
    if tangent is None:
        return None
    if tuple(tangent.shape) != tuple(out.shape):
        tangent = tangent.expand(tuple(out.shape))
    if tangent.dtype != out.dtype:
        tangent = tangent.to(out.dtype)
    return tangent


def _differentiable(t):
    return t._data.dtype.kind in "fcV"


def _attach(out, tangents):
    outs = out if isinstance(out, tuple) else (out,)
    for o, t in zip(outs, tangents):
        if t is not None and _differentiable(o):
            t = _fit(t, o)
            _set(o, t)
            node = o._grad_fn
            if node is not None:  # a backward that reads this saved output gets the tangent back (see outputs)
                _OUTPUT_TANGENTS.setdefault(node, {})[o._output_nr] = (_EPOCH[0], t)


# node -> {output index: (epoch, tangent)}: OpNode.outputs rebuilds saved outputs as new tensors, which must carry
# their tangents for a backward run as recorded ops (forward over reverse)
_OUTPUT_TANGENTS = weakref.WeakKeyDictionary()


_WRITING = [0]  # > 0 while a write whose tangent is taken care of runs


def _has_dual_base(t):
    return t._base is not None and tangent_of(t._base) is not None


class _Hooks:
    """What the dispatch point and the in-place writes call while a level is open."""
    tangent_of = staticmethod(tangent_of)

    @staticmethod
    def run(plain, op, inputs, attrs):
        tangents = [tangent_of(t) for t in inputs]
        if op.bwd is None or all(t is None for t in tangents):
            return _quiet(lambda: plain(op, inputs, attrs))
        FORWARD[0] = None
        try:
            rule = _RULES.get(op) if _USE_RULES[0] else None
            if rule is not None:
                out = plain(op, inputs, attrs)
                _attach(out, (rule(inputs, tangents, attrs, out),))
                return out
            out, jvps = _through_backward(plain, op, inputs, tangents, attrs)
            if len(inputs) == 1 and not isinstance(out, tuple) and _is_view(out._data, inputs[0]._data):
                # a view's tangent is the same view of the input's tangent (views are linear), so that an
                # in-place write through the view reaches the base's tangent too
                jvps = (plain(op, (tangents[0],), attrs),)
            _attach(out, jvps)
            return out
        finally:
            FORWARD[0] = _HOOKS

    @staticmethod
    def saved_output(node, i, t):
        """t is output i of node, rebuilt from what the node saved."""
        entry = _OUTPUT_TANGENTS.get(node, {}).get(i)
        if entry is not None and entry[0] == _EPOCH[0]:
            _set(t, entry[1])

    @staticmethod
    def picked(out, input, idx, nd):
        """out holds input's elements at idx (flat positions in each of the last nd dims' planes: max pooling)."""
        tangent = tangent_of(input)
        if tangent is not None:
            _set(out, _quiet(lambda: tangent.flatten(-nd).gather(-1, idx.flatten(-nd)).reshape(tuple(out.shape))))

    @staticmethod
    def involved(dst, value):
        """Whether writing value into dst concerns tangents."""
        return (tangent_of(dst) is not None or _has_dual_base(dst)
                or hasattr(value, "_data") and tangent_of(value) is not None)

    @staticmethod
    def write(dst, result, do_write):
        """do_write() overwrites dst with result's value; dst's tangent becomes result's (zero if it has none)."""
        had = tangent_of(dst)
        src = tangent_of(result)
        if had is None and _has_dual_base(dst):
            raise NotImplementedError("forward-mode AD: an in-place write into a view of a dual tensor made "
                                      "before the level was entered is not supported; write into the base")
        _WRITING[0] += 1
        try:
            do_write()
        finally:
            _WRITING[0] -= 1
        if src is None and had is None:
            return
        new = _quiet(lambda: _fit(src, dst) if src is not None else dst.detach() * 0)
        if had is not None and tuple(had.shape) == tuple(dst.shape) and had.dtype == dst.dtype:
            had._data[...] = new._data  # in place: the tangent of a view stays a view of its base's tangent
        else:
            _set(dst, new)

    @staticmethod
    def on_write(t, opname):
        """Every in-place write reports here (bump_version): one that did not come through write() must not leave
        a stale tangent behind."""
        if _WRITING[0]:
            return
        had = tangent_of(t)
        if had is None and not _has_dual_base(t):
            return
        if had is not None and opname in _ZEROING:
            had._data[...] = 0
            return
        raise NotImplementedError(f"forward-mode AD: the in-place {opname} of a dual tensor has no tangent rule in "
                                  f"ember; use its out-of-place form")

    @staticmethod
    def adopt(t, view, name):
        """t became `view` of itself in place (squeeze_, t_, ...): its tangent becomes view's."""
        _WRITING[0] += 1
        try:
            from .graph import bump_version
            bump_version(t, name)
        finally:
            _WRITING[0] -= 1
        tangent = tangent_of(view)
        if tangent is not None:
            _set(t, tangent)

    @staticmethod
    def custom_function(cls, ctx, args, out):
        """The output tangents of a custom autograd.Function, from its jvp staticmethod."""
        tangents = [tangent_of(a) if hasattr(a, "_data") else None for a in args]
        if all(t is None for t in tangents):
            return
        res = _quiet(lambda: cls.jvp(ctx, *tangents))
        _attach(out, res if isinstance(res, tuple) else (res,))


# writes of constants or random numbers: the tangent becomes zero
_ZEROING = frozenset(("fill_", "zero_", "uniform_", "normal_", "random_", "exponential_", "geometric_", "cauchy_",
                      "log_normal_", "bernoulli_"))


def _is_view(out, a):
    """Whether array out is a view of array a's memory."""
    base = out.base
    return base is not None and (base is a or base is a.base)


_HOOKS = _Hooks()


_USE_RULES = [True]  # the tests switch the formulas off to compare them with the backward route


def _through_backward(plain, op, inputs, tangents, attrs):
    """(output, its tangents) for an op without a formula: the op runs once, recorded on aliases of the dual inputs,
    and J t = d<J^T u, t>/du comes from that record (see NOTE). The aliases are differentiable views of inputs that
    require grad, so the output keeps its place in the caller's graph; otherwise the caller gets it detached."""
    import ember
    prev = GRAD[0]
    keep_graph = prev and any(x._requires_grad for x in inputs)
    GRAD[0] = True
    try:
        xs = [x if t is None else (x.view_as(x) if x._requires_grad else x.detach().requires_grad_(True))
              for x, t in zip(inputs, tangents)]
        for x, t in zip(xs, tangents):
            if t is not None:  # the record saves the aliases: a backward through it (forward over reverse) sees them
                _set(x, t)
        out = plain(op, xs, attrs)
        ys = out if isinstance(out, tuple) else (out,)
        live = [i for i, y in enumerate(ys) if y.requires_grad]
        # J^T u is linear in u, so any u will do; ones rather than zeros, as some backwards work in log space
        us = [ember.ones_like(ys[i]).requires_grad_(True) for i in live]
        want = [(x, t) for x, t in zip(xs, tangents) if t is not None]
        try:
            vjps = ember.autograd.grad([ys[i] for i in live], [x for x, _ in want], us, create_graph=True,
                                       allow_unused=True) if live else ()
        except RuntimeError as e:
            raise NotImplementedError(f"forward-mode AD of {op.name}: its backward is not differentiable ({e})") \
                from None
        for g in vjps:
            if g is not None and not g.requires_grad and bool((g != 0).any()):
                raise NotImplementedError(f"forward-mode AD of {op.name}: its backward does not record a graph, so "
                                          f"no tangent can be taken from it")
        pairs = [(g, t.to(g.dtype) if t.dtype != g.dtype else t) for g, (_, t) in zip(vjps, want)
                 if g is not None and g.requires_grad]
        # retain_graph: the vjps' graph reaches into the caller's (through aliases of inputs that require grad)
        jv = ember.autograd.grad([g for g, _ in pairs], us, [t for _, t in pairs], retain_graph=True,
                                 allow_unused=True) if pairs else [None] * len(us)
    finally:
        GRAD[0] = prev
    res = [None] * len(ys)
    for i, j in zip(live, jv):
        res[i] = (j if j is not None else ys[i].detach() * 0).detach()
    if not keep_graph:
        ys = tuple(y.detach() for y in ys)
    return (ys if isinstance(out, tuple) else ys[0]), tuple(res)


# ----- formulas for the common ops, keyed by the Op records themselves (an op's name can stand for several forms:
# tensor + tensor, tensor + scalar, scalar - tensor ...). inputs and tangents are Tensors, a tangent None where an
# input has none; each formula is checked against _through_backward by the tests. -----

def _sum_terms(*terms):
    r = None
    for t in terms:
        if t is not None:
            r = t if r is None else r + t
    return r


def _binary_rules():
    def mul(i, t, a, o):
        return _sum_terms(None if t[0] is None else t[0] * i[1].detach(), None if t[1] is None else i[0].detach() * t[1])

    def div(i, t, a, o):
        b = i[1].detach()
        return _sum_terms(None if t[0] is None else t[0] / b, None if t[1] is None else -t[1] * o.detach() / b)
    from .._ops import binary as B
    return {
        B.ADD: lambda i, t, a, o: _sum_terms(*t),
        B.SUB: lambda i, t, a, o: _sum_terms(t[0], None if t[1] is None else -t[1]),
        B.ADD_S: lambda i, t, a, o: t[0],
        B.SUB_S: lambda i, t, a, o: t[0],
        B.RSUB_S: lambda i, t, a, o: -t[0],
        B.MUL: mul,
        B.MUL_S: lambda i, t, a, o: t[0] * a[0],
        B.DIV: div,
        B.DIV_S: lambda i, t, a, o: t[0] / a[0],
    }


def _unary_rules():
    from .._ops import unary as U

    def d(derivative):  # tangent * f'(x), f'(x) from the input x and the output y
        return lambda i, t, a, o: t[0] * derivative(i[0].detach(), o.detach())
    return {
        U.NEG: lambda i, t, a, o: -t[0],
        U.EXP: d(lambda x, y: y),
        U.LOG: d(lambda x, y: 1 / x),
        U.SIN: d(lambda x, y: x.cos()),
        U.COS: d(lambda x, y: -x.sin()),
        U.TANH: d(lambda x, y: 1 - y * y),
        U.SIGMOID: d(lambda x, y: y * (1 - y)),
        U.SQRT: d(lambda x, y: 0.5 / y),
        U.RECIPROCAL: d(lambda x, y: -y * y),
        U.SQUARE: d(lambda x, y: 2 * x),
    }


def _product_rules():
    import ember
    from .._ops import linalg as L

    def product(i, t, a, o):
        return _sum_terms(None if t[0] is None else ember.matmul(t[0], i[1].detach()),
                          None if t[1] is None else ember.matmul(i[0].detach(), t[1]))
    return {op: product for op in (L.MM, L.BMM, L.DOT, L.MV, L.MATMUL_ND, L.MATMUL_VM)}


def _nn_rules():
    from ..nn._functional import activation as A
    from ..nn._functional import linear as L

    def linear(i, t, a, o):
        x, w = i[0].detach(), i[1].detach()
        return _sum_terms(None if t[0] is None else L.linear(t[0], w), None if t[1] is None else L.linear(x, t[1]),
                          t[2] if len(t) > 2 else None)
    rules = {op: linear for op in L._LINEAR.values()}
    rules[A._RELU] = lambda i, t, a, o: t[0] * (i[0].detach() > 0).to(t[0].dtype)
    return rules


class _Rules(dict):
    """Op -> formula, filled on first use (the op modules import after this one)."""

    def get(self, op, default=None):
        if not self:
            self.update(_binary_rules())
            self.update(_unary_rules())
            self.update(_product_rules())
            self.update(_nn_rules())
        return dict.get(self, op, default)


_RULES = _Rules()
