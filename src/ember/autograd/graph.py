"""Graph nodes (grad_fn objects), saved tensors and the version counter."""
import sys
import traceback
import weakref

import numpy as np

from .grad_mode import GRAD

__all__ = ["Node"]

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


def bump_version(t, opname):
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
    from .._tensor_str import legacy_type_name
    return f"[{legacy_type_name(t)} [{', '.join(str(s) for s in t.shape)}]]"


def version_error(t, saved_version, node_name):
    c = t._vc
    who = f", which is output {t._output_nr} of {t._grad_fn.name()}," if t._grad_fn is not None else ""
    msg = (f"one of the variables needed for gradient computation has been modified by an inplace operation: "
           f"{_type_string(t)}{who} is at version {c.v}; expected version {saved_version} instead. "
           f"Hint: the tensor was saved by {node_name}.")
    if c.last is not None:
        msg += f" It was last modified by {c.last[0]} at {c.last[1]}."
    return RuntimeError(msg)


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
        return self._x and self._x.pre

    @property
    def _hooks(self):
        return self._x and self._x.post

    @property
    def _tensor_hooks(self):
        return self._x and self._x.tensor

    @property
    def _trace(self):
        return self._x and self._x.trace

    def register_hook(self, fn):
        """fn(grad_inputs, grad_outputs) runs after this node; it may return replacement grad_inputs."""
        x = self._extras()
        if x.post is None:
            x.post = []
        x.post.append(fn)
        return _Handle(x.post, fn)

    def register_prehook(self, fn):
        """fn(grad_outputs) runs before this node; it may return replacement grad_outputs."""
        x = self._extras()
        if x.pre is None:
            x.pre = []
        x.pre.append(fn)
        return _Handle(x.pre, fn)

    def _register_tensor_hook(self, output_nr, fn):
        x = self._extras()
        if x.tensor is None:
            x.tensor = []
        x.tensor.append((output_nr, fn))
        return _Handle(x.tensor, (output_nr, fn))


class _Handle:
    """Same as `torch.utils.hooks.RemovableHandle`."""
    __slots__ = ("_list", "_item")

    def __init__(self, lst, item):
        self._list = lst
        self._item = item

    def remove(self):
        try:
            self._list.remove(self._item)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


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
        from .._tensor import Tensor
        res = []
        for i, (data, vc, v) in enumerate(saved):
            if vc.v != v:
                t = Tensor._make(data)
                t._vc = vc
                raise version_error(t, v, self.name())
            t = Tensor._make(data)
            t._vc = vc
            if GRAD[0]:  # create_graph: the output carries this node as its history
                t._requires_grad = True
                t._grad_fn = self
                t._output_nr = i
            res.append(t)
        return res

    @property
    def shapes(self):
        return [m[0] for m in self._meta]

    @property
    def needs_input_grad(self):
        return tuple(fn is not None for fn, _ in self.next_functions)

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
        if old is None:
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
            for hook in list(ext.post_acc_hooks):
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


def record(op, inputs, attrs, out, extra, nout):
    """Build the grad_fn for an op whose inputs require grad; returns the output tensor(s)."""
    if nout == 1:
        node = _new(OpNode)
    else:
        node = _new(OpNodeN)
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
    node._meta = meta
    if op.save & 1:
        vs = []
        for t in inputs:
            c = t._vc
            if c is None:
                c = t._vc = _Version()
            c.saved = True
            vs.append(c.v)
        node._saved = inputs
        node._versions = vs
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
    if op.save & 2:
        so = []
        for y in outs:
            c = y._vc = _Version()
            c.saved = True
            so.append((y._data, c, 0))
        node._saved_out = so
    else:
        node._saved_out = None
    return result


def _make(arr):  # replaced by Tensor._make when ember._tensor is imported
    raise RuntimeError("ember._tensor was not imported")
