"""Graph nodes (grad_fn objects), saved tensors and the version counter."""
import sys
import traceback
import weakref
from collections import OrderedDict

import numpy as np

from .._dtype import legacy_type_name, strided
from .grad_mode import GRAD

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "increment_version"]

_ANOMALY = [False, True]  # [detect_anomaly enabled, check_nan]


class _Version:
    """A counter shared by a tensor and all its views; every in-place op bumps it.
    `last` remembers which in-place op bumped it and where, for the saved-tensor error."""
    __slots__ = ("v", "saved", "last")

    def __init__(self):
        self.v = 0
        self.saved = False
        self.last = None


def counter(t):
    c = t._vc
    if c is None:
        c = t._vc = _Version()
    return c


# id -> output of a custom Function that is an input returned as-is (a view torch refuses to modify in place);
# keyed by id since tensors compare elementwise
CUSTOM_VIEWS = weakref.WeakValueDictionary()

_PKG_DIR = __file__.rsplit("/", 2)[0]


def user_location():
    """file:line of the innermost frame outside ember (where the user's code called us)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    return f"{f.f_code.co_filename}:{f.f_lineno}" if f is not None else "<unknown>"


def user_stack():
    """The formatted stack of the current call without ember's own frames (anomaly mode's forward trace)."""
    return [line for frame, line in zip(traceback.extract_stack(), traceback.format_stack())
            if not frame.filename.startswith(_PKG_DIR)]


# While a forward-mode AD level is open: the object that propagates tangents (NOTE [ Forward-mode AD ] in
# autograd/forward_ad.py); the dispatch functions hand it every op, and every in-place write reports here.
FORWARD = [None]


def carries_tangent(t):
    """Whether t is a dual tensor of the open forward-mode AD level: ops that take a cheaper route without a graph
    must take their differentiable one for it."""
    return FORWARD[0] is not None and FORWARD[0].tangent_of(t) is not None


def bump_version(t, opname):
    if FORWARD[0] is not None:
        FORWARD[0].on_write(t, opname)
    c = counter(t)
    c.v += 1
    if c.saved:  # only tensors some graph saved pay for finding the user's line
        c.last = (opname, user_location())


_FREED = object()

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward."
)


def _type_string(t):
    return f"[{legacy_type_name(t)} [{', '.join(str(s) for s in t.shape)}]]"


def _short_name(node):
    # torch 2.13 names the producing op without the "Backward0" suffix: AddBackward0 -> Add, TBackward1 -> T1
    name = node.name()
    return name.replace("Backward0", "") if name.endswith("Backward0") else name.replace("Backward", "")


def version_error(t, saved_version, node_name, output_of=None):
    """torch's error for a saved tensor modified in place; output_of=(node, nr) names the node that saved it as
    its output (the tensor's own grad_fn may since have been rewritten by the in-place op)."""
    c = t._vc
    if output_of is None and t._grad_fn is not None:
        output_of = (t._grad_fn, t._output_nr)
    who = f", which is output {output_of[1]} of {_short_name(output_of[0])}," if output_of is not None else ""
    msg = (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
           f"{_type_string(t)}{who} is at version {c.v}; expected version {saved_version} instead. "
           f"Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
           f"ember.autograd.set_detect_anomaly(True, check_nan=False). The tensor was saved by {node_name}")
    msg += f" and last modified by {c.last[0]} at {c.last[1]}." if c.last is not None else "."
    return RuntimeError(msg)


# NOTE [ Saved tensor hooks ]
# Inside `saved_tensors_hooks(pack, unpack)`, every tensor a graph node saves is stored as pack(tensor) and handed
# to backward as unpack(packed), as torch does. Such values are not checked against in-place changes (the hooks
# decide what is kept). The stack is empty outside the context managers: record() pays one list test.
_SAVED_HOOKS = []


class _Packed:
    """Saved tensors as the innermost active pack hook made them, with the unpack hook to restore them (once:
    a backward formula may read its saved inputs several times)."""
    __slots__ = ("values", "unpack", "unpacked")

    def __init__(self, tensors):
        pack, self.unpack = _SAVED_HOOKS[-1]
        self.values = [None if t is None else pack(t) for t in tensors]
        self.unpacked = None

    def tensors(self):
        if self.unpacked is None:
            self.unpacked = [None if v is None else _unpacked(self.unpack(v)) for v in self.values]
        return self.unpacked


def _unpacked(t):
    if not isinstance(t, _Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(t).__name__}")
    return t


class saved_tensors_hooks:
    """Same as `torch.autograd.graph.saved_tensors_hooks`: pack_hook(tensor) runs when a tensor is saved for
    backward, unpack_hook(packed) when backward uses it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _HOOKS_DISABLED:
            raise RuntimeError(_HOOKS_DISABLED[-1])
        _SAVED_HOOKS.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _SAVED_HOOKS.pop()


_HOOKS_DISABLED = []  # error messages of the active disable_saved_tensors_hooks blocks


class disable_saved_tensors_hooks:
    """Same as `torch.autograd.graph.disable_saved_tensors_hooks`: entering saved_tensors_hooks inside raises
    RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        _HOOKS_DISABLED.append(self.error_message)
        return self

    def __exit__(self, *exc):
        _HOOKS_DISABLED.pop()


def increment_version(tensor):
    """Same as `torch.autograd.graph.increment_version`: bumps the version counter of a tensor (or of each
    tensor of an iterable), as an in-place op would."""
    for t in (tensor,) if isinstance(tensor, _Tensor) else tensor:
        bump_version(t, "increment_version")


class save_on_cpu(saved_tensors_hooks):
    """Same as `torch.autograd.graph.save_on_cpu`: saved tensors live on the CPU until backward needs them."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            cpu = t.detach().cpu()
            if pin_memory and t.device.type != "cpu":
                cpu = cpu.pin_memory()
            return t.device, cpu

        def unpack(packed):
            device, t = packed
            return t.to(device, non_blocking=pin_memory)
        super().__init__(pack, unpack)


class _NodeExtras:
    """What few nodes have: hooks and, in anomaly mode, the forward traceback (kept out of Node's hot slots)."""
    __slots__ = ("pre", "post", "tensor", "trace")

    def __init__(self, trace=None):
        self.pre = self.post = self.tensor = None
        self.trace = trace


class Node:
    """Same as `torch.autograd.graph.Node`: an entry of the backward graph (a tensor's grad_fn)."""
    __slots__ = ("next_functions", "_meta", "_x", "metadata_", "__weakref__")
    _name = "Node"
    nout = 1

    def name(self):
        return self._name

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grads):
        raise NotImplementedError

    def release(self):
        pass

    @property
    def metadata(self):
        try:
            return self.metadata_
        except AttributeError:
            self.metadata_ = {}
            return self.metadata_

    def _extras(self):
        x = self._x
        if x is None:
            x = self._x = _NodeExtras()
        return x

    @property
    def _pre_hooks(self):
        return self._x and self._x.pre and list(self._x.pre.values())

    @property
    def _hooks(self):
        return self._x and self._x.post and list(self._x.post.values())

    @property
    def _tensor_hooks(self):
        """[(output_nr, hook), ...] of the tensor hooks on this node's outputs."""
        return self._x and self._x.tensor and list(self._x.tensor.values())

    @property
    def _trace(self):
        return self._x and self._x.trace

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; it may return replacement grad_inputs."""
        x = self._extras()
        if x.post is None:
            x.post = OrderedDict()
        return add_hook(x.post, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; it may return replacement grad_outputs."""
        x = self._extras()
        if x.pre is None:
            x.pre = OrderedDict()
        return add_hook(x.pre, fn)

    def _register_tensor_hook(self, output_nr, fn):
        x = self._extras()
        if x.tensor is None:
            x.tensor = OrderedDict()
        return add_hook(x.tensor, (output_nr, fn))


class RemovableHandle:
    """Same as `torch.utils.hooks.RemovableHandle`: removes the hook stored under `id` in hooks_dict (and in the
    extra dicts). Tensor, node and module hooks all live in id-keyed OrderedDicts, as in torch."""
    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            self.extra_dict_ref = ()
        else:
            if isinstance(extra_dict, dict):
                extra_dict = (extra_dict,)
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None:
            d.pop(self.id, None)
        for ref in self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        self.hooks_dict_ref = weakref.ref(state[0] if state[0] is not None else OrderedDict())
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in (state[2] if len(state) > 2 else ()) if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


RemovableHandle.__module__ = "ember.utils.hooks"  # where torch's lives; pickling finds it there too


def add_hook(hooks, value):
    """Store value in the id-keyed OrderedDict hooks under a new handle's id; returns the handle."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = value
    return handle


class OpNode(Node):
    """The grad_fn of a built-in op: holds the op, its non-tensor arguments and what it saved."""
    __slots__ = ("op", "attrs", "extra", "_saved", "_versions", "_saved_out")

    def name(self):
        return self.op.node_name

    @property
    def inputs(self):
        """The saved input tensors, checked against in-place modification."""
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(_FREED_MSG)
        if saved.__class__ is _Packed:
            return saved.tensors()
        for t, v in zip(saved, self._versions):
            if t._vc.v != v:
                raise version_error(t, v, self.name())
        return saved

    @property
    def output(self):
        return self.outputs[0]

    @property
    def outputs(self):
        saved = self._saved_out
        if saved is _FREED:
            raise RuntimeError(_FREED_MSG)
        if saved.__class__ is _Packed:  # unpacked outputs still carry this node as history under create_graph
            saved = [(t._data, counter(t), counter(t).v) for t in saved.tensors()]
        res = []
        for i, (data, vc, v) in enumerate(saved):
            if vc.v != v:
                t = _make(data)
                t._vc = vc
                raise version_error(t, v, self.name(), (self, i))
            t = _make(data)
            t._vc = vc
            if GRAD[0]:  # create_graph: the output carries this node as its history
                t._requires_grad = True
                t._grad_fn = self
                t._output_nr = i
            if FORWARD[0] is not None:
                FORWARD[0].saved_output(self, i, t)
            res.append(t)
        return res

    @property
    def shapes(self):
        return [m[0] for m in self._meta]

    @property
    def needs_input_grad(self):
        return tuple(fn is not None for fn, _ in self.next_functions)

    # torch's grad_fn._saved_self / _saved_other / _saved_result, for the ops that save them. Properties, not a
    # __getattr__: a class with __getattr__ gets a slower attribute lookup for every attribute (measured +10% on
    # the graph building of small ops)
    @property
    def _saved_self(self):
        return self._saved_input(0, "_saved_self")

    @property
    def _saved_other(self):
        return self._saved_input(1, "_saved_other")

    @property
    def _saved_result(self):
        if self._saved_out is None:
            raise AttributeError(f"'{self.name()}' object has no attribute '_saved_result'")
        t = self.outputs[0]
        if t._grad_fn is None:
            t._requires_grad = True
            t._grad_fn = self
        return t

    def _saved_input(self, i, name):
        saved = self.inputs if self._saved is not None else ()
        if i < len(saved):
            return saved[i]
        raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")

    def apply(self, grads):
        g = grads[0] if self.nout == 1 else grads
        out = self.op.bwd(self, g)
        return out if type(out) is tuple else (out,)

    def release(self):
        if self._saved is not None:
            self._saved = _FREED
        if self._saved_out is not None:
            self._saved_out = _FREED
        self.extra = None


class AccumulateGrad(Node):
    """Accumulates incoming gradients into a leaf's .grad."""
    __slots__ = ("_var", "_edge")
    _name = "torch::autograd::AccumulateGrad"

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"

    def __init__(self, t):
        self.next_functions = ()
        self._meta = ((t._data.shape, t._data.dtype),)
        self._x = None
        self._var = weakref.ref(t)
        self._edge = (self, 0)  # the graph edge to this leaf, made once

    @property
    def variable(self):
        return self._var()

    def apply(self, grads):
        t = self._var()
        if t is None:
            return ()
        g = grads[0]
        old = t._grad
        if g.__class__ is not _Tensor and g.layout is not strided:  # a sparse gradient (Embedding(sparse=True))
            t._grad = g if old is None else old + g
        elif old is None:
            if GRAD[0]:
                t._grad = g
            else:
                t._grad = _make(g._data) if _owns(g) else _make(g._data.copy())
        elif GRAD[0] or old._requires_grad:
            t._grad = old + g
        else:
            od = old._data
            if od.shape == g._data.shape and od.dtype == g._data.dtype and (
                    od.__class__ is not np.ndarray or od.flags.writeable):
                od += g._data
            else:
                t._grad = old + g
        ext = t._ext
        if ext is not None and ext.post_acc_hooks:
            for hook in list(ext.post_acc_hooks.values()):
                hook(t)
        return ()


def _owns(g):
    # NOTE [ Stealing gradients ]
    # An incoming gradient becomes .grad without a copy only when nothing else can see it: its array owns its
    # memory (not a view, e.g. of an expand) and is held by no other Tensor (a user's gradient, another leaf's
    # .grad), and the Tensor itself is held by no one else (a hook that kept it, a second edge it was routed to).
    # The engine keeps exactly one reference (the node's gradient list); add apply's local and getrefcount's own.
    arr = g._data
    return arr.base is None and sys.getrefcount(arr) <= 3 and sys.getrefcount(g) <= 4


def grad_accumulator(t):
    acc = t._accum
    if acc is None:
        acc = t._accum = AccumulateGrad(t)
    return acc


_new = object.__new__


class OpNodeN(OpNode):
    """An OpNode with several outputs."""
    __slots__ = ("nout",)


# NOTE [ Node classes ]
# As in torch, type(y.grad_fn).__name__ is the node's name (MulBackward0, CopySlices): each node name gets its own
# slot-less subclass of OpNode / OpNodeN, made on first use and kept on the Op (op.node_cls: a dict lookup per
# recorded op measured 10% of a small op's graph-building time). The engine runs single-output built-in nodes by
# calling op.bwd directly; it recognizes them by membership in _SINGLE.
_NODE_CLS = ({}, {})  # single-output, several-output: node name -> class
_SINGLE = set()


def _node_class(op, multi):
    """The node class of op's single-output (multi False) or several-output calls."""
    name = op.node_name
    cls = _NODE_CLS[multi].get(name)
    if cls is None:
        cls = type(name.rsplit("::", 1)[-1], (OpNodeN if multi else OpNode,), {"__slots__": ()})
        cls.__module__ = "ember.autograd.graph"
        _NODE_CLS[multi][name] = cls
        if not multi:
            _SINGLE.add(cls)
    op.node_cls[multi] = cls
    return cls


def _edge(t):
    if not t._requires_grad:
        return _NO_EDGE
    fn = t._grad_fn
    if fn is not None:
        if t._view_ver is not None and t._view_ver != t._vc.v:
            from .._view_autograd import refresh_view
            fn = refresh_view(t)
        return (fn, t._output_nr)
    return (t._accum or grad_accumulator(t))._edge


_NO_EDGE = (None, 0)

# NOTE [ Shared node metadata ]
# Every node keeps its inputs' (shape, dtype) pairs. Most nodes of a graph share them, and a tuple per node is
# three more objects that Python's cyclic GC walks again and again while a long graph is alive (on a chain of
# 1000 small ops the collector took a fifth of the forward). So the tuples are interned: nodes share one each.
_METAS = {}


def _intern_meta(key):
    if len(_METAS) >= 4096:  # programs with ever-changing shapes must not grow the table without bound
        _METAS.clear()
    _METAS[key] = key
    return key


def record(op, inputs, attrs, out, extra, nout):
    """Build the grad_fn for an op whose inputs require grad; returns the output tensor(s)."""
    if nout == 1 and len(inputs) <= 2 and not _SAVED_HOOKS and not _ANOMALY[0]:
        return _record_small(op, inputs, attrs, out, extra)
    if nout == 1:
        node = _new(op.node_cls[0] or _node_class(op, False))
    else:
        node = _new(op.node_cls[1] or _node_class(op, True))
        node.nout = nout
    node.op = op
    node.attrs = attrs
    node.extra = extra
    node._x = _NodeExtras(user_stack()) if _ANOMALY[0] else None
    edges = []
    meta = []
    for t in inputs:  # one loop, not two comprehensions: each is a frame of its own in Python 3.11
        d = t._data
        meta.append((d.shape, d.dtype))
        if not t._requires_grad:
            edges.append(_NO_EDGE)
        elif t._grad_fn is not None and t._view_ver is None:
            edges.append((t._grad_fn, t._output_nr))
        else:
            edges.append(_edge(t))
    node.next_functions = tuple(edges)
    key = tuple(meta)
    node._meta = _METAS.get(key) or _intern_meta(key)
    if op.save & 1 and not _SAVED_HOOKS:
        vs = []
        for t in inputs:
            c = t._vc
            if c is None:
                c = t._vc = _Version()
            c.saved = True
            vs.append(c.v)
        node._saved = inputs
        node._versions = vs
    elif op.save & 1:
        node._saved = _Packed(inputs)
    else:
        node._saved = None
    if nout == 1:
        y = _make(out)
        if out.dtype.kind in "fcV":
            y._requires_grad = True
            y._grad_fn = node
        outs = (y,)
        result = y
    else:
        outs = tuple([_make(o) for o in out])
        for i, y in enumerate(outs):
            if y._data.dtype.kind in "fcV":
                y._requires_grad = True
                y._grad_fn = node
                y._output_nr = i
        result = outs
    if op.save & 2 and not _SAVED_HOOKS:
        so = []
        for y in outs:
            c = y._vc = _Version()
            c.saved = True
            so.append((y._data, c, 0))
        node._saved_out = so
    elif op.save & 2:
        node._saved_out = _Packed(outs)
    else:
        node._saved_out = None
    return result


def _record_small(op, inputs, attrs, out, extra):
    """record() for the common case, unrolled: one output, one or two inputs, no saved-tensor hooks, no anomaly
    mode (the same node as record's general path builds)."""
    node = _new(op.node_cls[0] or _node_class(op, False))
    node.op = op
    node.attrs = attrs
    node.extra = extra
    node._x = None
    # edges and version counters inline, as in record's loop: a function call each was a tenth of this function
    a = inputs[0]
    da = a._data
    if not a._requires_grad:
        ea = _NO_EDGE
    elif a._grad_fn is not None and a._view_ver is None:
        ea = (a._grad_fn, a._output_nr)
    else:
        ea = _edge(a)
    save = op.save & 1
    if save:
        ca = a._vc
        if ca is None:
            ca = a._vc = _Version()
        ca.saved = True
    if len(inputs) == 2:
        b = inputs[1]
        db = b._data
        if not b._requires_grad:
            eb = _NO_EDGE
        elif b._grad_fn is not None and b._view_ver is None:
            eb = (b._grad_fn, b._output_nr)
        else:
            eb = _edge(b)
        node.next_functions = (ea, eb)
        key = ((da.shape, da.dtype), (db.shape, db.dtype))
        if save:
            cb = b._vc
            if cb is None:
                cb = b._vc = _Version()
            cb.saved = True
            node._saved = inputs
            node._versions = (ca.v, cb.v)
        else:
            node._saved = None
    else:
        node.next_functions = (ea,)
        key = ((da.shape, da.dtype),)
        if save:
            node._saved = inputs
            node._versions = (ca.v,)
        else:
            node._saved = None
    node._meta = _METAS.get(key) or _intern_meta(key)
    y = _make(out)
    if out.dtype.kind in "fcV":
        y._requires_grad = True
        y._grad_fn = node
    if op.save & 2:
        c = y._vc = _Version()
        c.saved = True
        node._saved_out = ((out, c, 0),)
    else:
        node._saved_out = None
    return y


def _make(arr):  # replaced by Tensor._make when ember._tensor is imported
    raise RuntimeError("ember._tensor was not imported")


class _Tensor:  # replaced by Tensor when ember._tensor is imported
    pass


def bind_tensor(cls):
    """Called once by ember._tensor: this layer builds and recognizes Tensors without importing their class, which
    sits above it."""
    global _make, _Tensor
    _make, _Tensor = cls._make, cls
