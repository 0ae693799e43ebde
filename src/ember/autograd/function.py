"""Custom autograd functions: `Function`, its ctx (which is also the function's graph node) and
`once_differentiable`.

NOTE [ ctx is the node ]
As in torch, the object a custom forward receives as `ctx` is the grad_fn of its outputs: an instance of
`<Name>Backward`, a class made for each Function subclass, deriving from both `Node` (so the engine runs it like
a built-in op's node) and `FunctionCtx` (save_for_backward, mark_dirty, ...). User attributes set on ctx in
forward are therefore visible as `y.grad_fn.<attr>`.

Saved outputs are kept as (array, version counter, version) rather than as the output tensors themselves: an
output points at its grad_fn, so holding it from the node would make a reference cycle that only the cyclic
garbage collector could free.
"""
import functools
import inspect
import traceback
import warnings

from .._backend import XP
from .._tensor import Tensor
from .grad_mode import GRAD
from .graph import (FORWARD, _ANOMALY, _FREED, _FREED_MSG, _SAVED_HOOKS, CUSTOM_VIEWS, Node, _NodeExtras, _Packed,
                    bump_version, counter, grad_accumulator, version_error)

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable"]


class FunctionCtx:
    """Same as `torch.autograd.function.FunctionCtx`: what forward (or setup_context) records for backward."""

    def save_for_backward(self, *tensors):
        """Same as `torch.autograd.function.FunctionCtx.save_for_backward`."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Same as `torch.autograd.function.FunctionCtx.save_for_forward`: tensors a jvp staticmethod reads."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Same as `torch.autograd.function.FunctionCtx.mark_dirty`."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Same as `torch.autograd.function.FunctionCtx.mark_non_differentiable`."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """Same as `torch.autograd.function.FunctionCtx.set_materialize_grads`."""
        self._materialize = bool(value)

    def mark_shared_storage(self, *pairs):
        raise RuntimeError("mark_shared_storage is deprecated. Tensors with shared storages are automatically "
                           "tracked. Note that calls to `set_()` are not tracked")


class BackwardCFunction(Node, FunctionCtx):
    """The grad_fn of a custom Function's outputs; also the ctx its forward and backward receive."""
    _forward_cls = None
    _materialize = True
    _saved = None  # before forward finishes saving, saved_tensors is empty
    to_save = None
    dirty_tensors = None
    non_differentiable = None

    def name(self):
        return type(self).__name__

    @property
    def saved_tensors(self):
        """Same as `torch.autograd.function.BackwardCFunction.saved_tensors`: checked against in-place changes."""
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(_FREED_MSG)
        if saved is None:
            return ()
        return tuple(_unpack(self, s) for s in saved)

    saved_variables = saved_tensors

    def apply(self, grads):
        """Run the user's backward on the output gradients; one gradient per tensor input goes back."""
        if self._materialize:
            grads = [_zeros(m) if g is None and m is not None else g for g, m in zip(grads, self._out_meta)]
        res = self._forward_cls._backward_impl()(self, *grads)
        if type(res) is not tuple:
            res = (res,)
        return _check_grads(self, res)

    def release(self):
        self._saved = _FREED


def _unpack(node, s):
    if s is None:
        return None
    if s.__class__ is _Packed:
        return s.tensors()[0]
    if s[0] is None:  # an output: rebuilt around its array, with this node as its history
        _, data, vc, version, nr, rg = s
        t = Tensor._make(data)
        t._vc = vc
        if vc.v != version:
            raise version_error(t, version, node.name(), (node, nr))
        if rg:
            t._requires_grad = True
            t._grad_fn = node
            t._output_nr = nr
        if FORWARD[0] is not None:
            FORWARD[0].saved_output(node, nr, t)
        return t
    t, version = s
    if t._vc.v != version:
        raise version_error(t, version, node.name())
    return t


def _zeros(meta):
    shape, dt, xp = meta
    return Tensor._make(xp.zeros(shape, dt))


def _check_grads(node, res):
    """torch's validation of what a custom backward returned; keeps the gradients of tensor inputs."""
    n = node._nargs
    if len(res) != n:
        if len(res) < n or any(r is not None for r in res[n:]):
            raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(res)})")
        res = res[:n]
    is_tensor = node._is_tensor
    out = []
    for i, g in enumerate(res):
        if not is_tensor[i]:
            if g is not None:
                raise RuntimeError(f"function {node.name()} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Variable")
            continue
        if g is not None and not isinstance(g, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        out.append(g)
    return tuple(out)


class _FunctionMeta(type):
    """Gives every Function subclass its `<Name>Backward` node class (torch's FunctionMeta)."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls, "_name": name +
                                                                           "Backward", "__module__": __name__})
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Same as `torch.autograd.Function`: subclass it with static `forward` and `backward`, call `apply`."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, "
                      f"so you should invoke them on the class itself. Instantiating an autograd function will raise "
                      f"an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def _backward_impl(cls):
        bwd, vjp = cls.backward, cls.vjp
        if bwd is not Function.backward and vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                               "should only implement one of them.")
        return vjp if vjp is not Function.vjp else bwd

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward with grad mode off and record the call in the graph like a built-in op."""
        setup = cls.setup_context is not Function.setup_context
        if kwargs or setup:
            args = _bind(cls, args, kwargs, setup)
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        prev = GRAD[0]
        GRAD[0] = False
        fw = FORWARD[0]
        FORWARD[0] = None  # the forward's own ops carry no tangents: the jvp staticmethod gives them
        try:
            if setup:
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args)
        finally:
            GRAD[0] = prev
            FORWARD[0] = fw
        res = _record(ctx, args, out) if prev and any(needs) else _untracked(ctx, args, out, prev)
        if fw is not None:
            fw.custom_function(cls, ctx, args, res)
        return res


def _bind(cls, args, kwargs, setup):
    """Positional arguments with keywords and defaults filled in (torch's bind_default_args)."""
    sig = cls.__dict__.get("_forward_signature")
    if sig is None:
        sig = inspect.signature(cls.forward)
        plain = all(p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in sig.parameters.values())
        sig = (sig, len(sig.parameters) if plain else -1)
        type.__setattr__(cls, "_forward_signature", sig)
    sig, nplain = sig
    lead = () if setup else (None,)  # the ctx slot of a forward(ctx, ...)
    if not kwargs and len(args) + len(lead) == nplain:
        return args
    bound = sig.bind(*lead, *args, **kwargs)
    if setup or bound.kwargs:  # a classic forward's unused trailing defaults are not inputs, as in torch
        bound.apply_defaults()
    return bound.args[len(lead):]


def _alias(t, view):
    """A new tensor over t's memory and version counter: a view of t (grad mode on) or a plain alias."""
    a = Tensor._make(t._data)
    a._vc = t._vc or counter(t)
    a._base = (t._base if t._base is not None else t) if view else t._base
    if view:
        CUSTOM_VIEWS[id(a)] = a
    return a


def _untracked(ctx, args, out, grad_mode):
    """No graph: dirty inputs still count as modified and returned inputs become new tensors, as in torch."""
    dirty = ctx.dirty_tensors or ()
    for t in dirty:
        bump_version(t, ctx.name())
    if not any(isinstance(a, Tensor) for a in args):
        return out
    ins = {id(a) for a in args if isinstance(a, Tensor)}
    dirty_ids = {id(t) for t in dirty}

    def fix(o):
        if isinstance(o, Tensor) and id(o) in ins and id(o) not in dirty_ids:
            return _alias(o, grad_mode)
        return o
    return tuple(fix(o) for o in out) if type(out) is tuple else fix(out)


def _record(ctx, args, out):
    """Make ctx the grad_fn of forward's outputs and pack what it saved."""
    is_tuple = type(out) is tuple
    outs = list(out) if is_tuple else [out]
    dirty = ctx.dirty_tensors
    dirty_ids = _ids(dirty)
    if dirty:
        _check_dirty(dirty, outs)
    _init_node(ctx, args)
    ins = _ids(args)
    nondiff = _ids(ctx.non_differentiable)
    meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(None)
            continue
        oid = id(o)
        if oid in dirty_ids:
            bump_version(o, ctx.name())
        elif oid in ins:  # an input returned as-is: the output is a view of it, as in torch
            o = outs[i] = _alias(o, True)
        d = o._data
        meta.append((d.shape, d.dtype, XP[type(d)]))
        if oid in nondiff or d.dtype.kind not in "fcV":
            continue
        if oid in dirty_ids and o._view_ver is not None:
            _rebase_dirty_view(ctx, o, i)
        else:
            o._grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
    ctx.nout = len(outs)
    ctx._out_meta = meta
    _pack_saved(ctx, outs)
    ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = None  # they may hold outputs: no cycles
    return tuple(outs) if is_tuple else outs[0]


_NO_IDS = frozenset()


def _ids(tensors):
    return {id(t) for t in tensors if isinstance(t, Tensor)} if tensors else _NO_IDS


def _check_dirty(dirty, outs):
    out_ids = {id(o) for o in outs}
    if any(id(t) not in out_ids for t in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    from .._ops._inplace import check_leaf
    for t in dirty:
        check_leaf(t, used="has been used")  # torch words the custom-Function case so


def _init_node(ctx, args):
    """The Node slots graph.record fills for built-in ops, from the tensor arguments."""
    nf = []
    meta = []
    is_tensor = []
    for a in args:
        if not isinstance(a, Tensor):
            is_tensor.append(False)
            continue
        is_tensor.append(True)
        if a._requires_grad:
            fn = a._grad_fn
            nf.append((fn, a._output_nr) if fn is not None else (a._accum or grad_accumulator(a), 0))
        else:
            nf.append((None, 0))
        meta.append((a._data.shape, a._data.dtype))
    ctx.next_functions = tuple(nf)
    ctx._meta = meta
    ctx._is_tensor = is_tensor
    ctx._nargs = len(args)
    ctx._x = _NodeExtras(_forward_trace()) if _ANOMALY[0] else None


_PKG_DIR = __file__.rsplit("/", 2)[0]


def _forward_trace():
    """The user's part of the stack: where the custom function was applied."""
    stack = traceback.extract_stack()
    return traceback.format_list([f for f in stack if not f.filename.startswith(_PKG_DIR)])


def _rebase_dirty_view(ctx, view, i):
    from .._view_autograd import rebase_view
    r = Tensor._make(view._data)
    r._requires_grad = True
    r._grad_fn = ctx
    r._output_nr = i
    rebase_view(view, r)


def _pack_saved(ctx, outs):
    to_save = ctx.to_save
    if not to_save:
        ctx._saved = ()
        return
    out_nr = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
    saved = []
    for t in to_save:
        if t is None:
            saved.append(None)
            continue
        if _SAVED_HOOKS:
            saved.append(_Packed([t]))
            continue
        c = t._vc or counter(t)
        c.saved = True
        nr = out_nr.get(id(t))
        if nr is not None and t._grad_fn is ctx:
            saved.append((None, t._data, c, c.v, nr, True))
        else:
            saved.append((t, c.v))
    ctx._saved = saved


class _DelayedError(Node):
    """A node that raises when backward reaches it (once_differentiable's double-backward guard)."""
    __slots__ = ("msg", "nout")
    _name = "DelayedError"

    def __init__(self, msg, nout):
        self.msg = msg
        self.nout = nout
        self.next_functions = ()
        self._meta = ()
        self._x = None

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(fn):
    """Same as `torch.autograd.function.once_differentiable`: backward runs without building a graph; trying to
    differentiate its result raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = GRAD[0]
        GRAD[0] = False
        try:
            outputs = fn(ctx, *args)
        finally:
            GRAD[0] = prev
        if not prev or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        tupled = outputs if type(outputs) is tuple else (outputs,)
        node = _DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                             len(tupled))
        res = []
        for i, g in enumerate(tupled):
            if isinstance(g, Tensor):
                g = Tensor._make(g._data)
                g._requires_grad = True
                g._grad_fn = node
                g._output_nr = i
            res.append(g)
        return tuple(res) if type(outputs) is tuple else res[0]
    return wrapper


class InplaceFunction(Function):
    """Same as `torch.autograd.function.InplaceFunction`."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace
