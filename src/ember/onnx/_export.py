"""ONNX export by tracing the ops a model runs.

NOTE [ ONNX export by tracing ]
`export` runs the model once on the example inputs under an OpTracer (NOTE [ Tracing ops ]); each op that runs is
translated on the spot (_translate.py) into ONNX nodes over the names of its operand arrays. An array is named by
identity: the model's inputs are graph inputs, every op's results get fresh names, and an array that no traced op
produced (a parameter, a buffer, a constant the code made) becomes an initializer holding its values at export
time. An op none of whose operands depends on an input is folded: its results are such constants too, whatever the
op (a causal mask built with triu needs no ONNX form). Python-level control flow, shapes read with `.shape`, values
read with `.item()` and arrays computed outside ember's ops are fixed at their traced values, as in torch's
TorchScript-based exporter; the dims dynamic_axes names stay free where the graph allows (NOTE [ Dynamic dims by a
second trace ]). An op with no translation stops the export with an error naming it.
"""
import os

import numpy as np

from .._tracing import OpTracer, arrays_in

OPSETS = range(17, 22)  # LayerNormalization (17) and the opset 13+ forms of Split/Squeeze/Reduce* the translations use
DEFAULT_OPSET = 18
EXPORTING = [False]  # is_in_onnx_export()


class OnnxExporterError(RuntimeError):
    """Same as `torch.onnx.OnnxExporterError`: the model cannot be exported (an op without an ONNX form, ...)."""


class _Graph:
    """The ONNX graph under construction: nodes, initializers and the names of traced arrays."""

    def __init__(self, opset):
        from onnx import helper
        self.helper = helper
        self.opset = opset
        self.nodes = []
        self.inits = []
        self.names = {}       # id(array) -> (name, array): the array is kept alive so that its id stays unique
        self.roots = {}       # id(base array) -> name: views of traced arrays are not constants
        self.variable = set()   # names whose values depend on a graph input
        self.alt = None         # the result shapes of a second trace with the dynamic dims resized, in op order
        self.step = 0           # ops translated so far
        self.unexported = {}  # name -> why: traced results with no ONNX value (max pooling's indices, ...)
        self._n = 0

    def fresh(self, hint):
        self._n += 1
        return f"{hint}_{self._n}"

    def bind(self, arr, name):
        self.names[id(arr)] = (name, arr)
        self.roots[id(_root(arr))] = name

    def traced(self, arr):
        e = self.names.get(id(arr))
        return None if e is None else e[0]

    def value(self, arr, what="an operand"):
        """The name of a traced array, or of a new initializer holding arr's values."""
        name = self.traced(arr)
        if name is not None:
            if name in self.unexported:
                raise OnnxExporterError(f"ember.onnx.export: {what} is {self.unexported[name]}, which has no ONNX "
                                        "form in ember")
            return name
        if id(_root(arr)) in self.roots:
            raise OnnxExporterError(f"ember.onnx.export: {what} of shape {tuple(arr.shape)} is a view of a traced "
                                    "value made outside any op the exporter sees; it cannot be exported")
        return self.const(arr)

    def const(self, arr, hint="const", dtype=None):
        arr = np.asarray(_host(arr))
        if dtype is not None:
            arr = arr.astype(dtype)
        if arr.dtype.kind == "V" or arr.dtype.name == "bfloat16":
            arr = arr.astype(np.float32)
        name = self.fresh(hint)
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    @property
    def numpy_helper(self):
        from onnx import numpy_helper
        return numpy_helper

    def ints(self, values, hint="shape"):
        return self.const(np.asarray(values, np.int64), hint)

    def node(self, op_type, inputs, outputs=1, **attrs):
        """Add a node; returns its output names (one name when outputs == 1)."""
        outs = [self.fresh(op_type.lower()) for _ in range(outputs)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs, **attrs))
        if any(i in self.variable for i in inputs):
            self.variable.update(outs)
        return outs[0] if outputs == 1 else outs

    def is_variable(self, arr):
        """Whether arr's value depends on the model's inputs (else it is fixed at export)."""
        return self.traced(arr) in self.variable

    def dynamic_dims(self, result, index=0):
        """The dims of the current op's result (its index-th array) whose size changed with the dynamic dims of
        the inputs (NOTE [ Dynamic dims by a second trace ])."""
        if self.alt is None:
            return set()
        shapes = self.alt[self.step][1]
        if index >= len(shapes) or len(shapes[index]) != len(result.shape):
            _ops_differ()
        return {i for i, (a, b) in enumerate(zip(shapes[index], result.shape)) if a != b}

    def check_step(self, op):
        """The op the export's trace runs now is the one the resized trace ran at this step."""
        if self.alt is not None and (self.step >= len(self.alt) or self.alt[self.step][0] != op.name):
            _ops_differ()

    def out(self, arr, op_type, inputs, **attrs):
        """A one-output node whose result is the traced array arr."""
        name = self.node(op_type, inputs, **attrs)
        self.bind(arr, name)
        return name


def _ops_differ():
    raise OnnxExporterError("ember.onnx.export: the model ran other ops when the dynamic dims had other sizes; it "
                            "cannot be exported with these dynamic_axes")


def _root(a):
    while getattr(a, "base", None) is not None and a.base.__class__ is a.__class__:
        a = a.base
    return a


def _host(a):
    return a if isinstance(a, np.ndarray) or not hasattr(a, "get") else a.get()


class _Tracer(OpTracer):
    """Translates each op as it runs (NOTE [ ONNX export by tracing ])."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph

    def __enter__(self):
        EXPORTING[0] = True
        return super().__enter__()

    def __exit__(self, *exc):
        EXPORTING[0] = False
        return super().__exit__(*exc)

    def record(self, op, args, out):
        from . import _translate
        g = self.graph
        g.check_step(op)
        if any(g.is_variable(a) for a in arrays_in(args)):
            _translate.translate(g, op, args, out)
            for a in arrays_in(out):  # results bound without a node of their own (split parts, indices) too
                name = g.traced(a)
                if name is not None:
                    g.variable.add(name)
        else:  # an op on constants only: its results are constants too (folded), whatever the op
            for i, a in enumerate(arrays_in(out)):
                if g.dynamic_dims(a, i):  # unless their shape follows a dynamic dim: then they have no value
                    g.bind(a, g.fresh("sized_constant"))
                    g.unexported[g.traced(a)] = (f"a constant made by aten::{op.name} whose shape {tuple(a.shape)} "
                                                 "follows a dynamic dim")
        g.step += 1


class _ShapeTracer(OpTracer):
    """A trace that only notes each op's result shapes (NOTE [ Dynamic dims by a second trace ])."""

    def __init__(self):
        super().__init__()
        self.shapes = []

    def record(self, op, args, out):
        self.shapes.append((op.name, [tuple(a.shape) for a in arrays_in(out)]))


class ONNXProgram:
    """What `export` returns, as torch's: the model (`model_proto`), `save(path)`, and calling it runs the model
    with onnxruntime on ember tensors or arrays."""

    def __init__(self, model_proto):
        self.model_proto = model_proto
        self._session = None

    def save(self, destination):
        data = self.model_proto.SerializeToString()
        if isinstance(destination, (str, os.PathLike)):
            with open(destination, "wb") as f:
                f.write(data)
        else:
            destination.write(data)

    def __call__(self, *args):
        import onnxruntime

        import ember
        if self._session is None:
            self._session = onnxruntime.InferenceSession(self.model_proto.SerializeToString(),
                                                         providers=["CPUExecutionProvider"])
        names = [i.name for i in self._session.get_inputs()]
        feeds = {n: (a.detach().cpu().numpy() if isinstance(a, ember.Tensor) else np.asarray(a))
                 for n, a in zip(names, args)}
        return [ember.from_numpy(np.asarray(r)) for r in self._session.run(None, feeds)]

    def __repr__(self):
        g = self.model_proto.graph
        return f"ONNXProgram({len(g.node)} nodes, inputs {[i.name for i in g.input]}, outputs " \
               f"{[o.name for o in g.output]})"


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None, output_names=None,
           opset_version=None, dynamo=True, external_data=True, dynamic_shapes=None, custom_translation_table=None,
           report=False, optimize=True, verify=False, profile=False, dump_exported_program=False, artifacts_dir=".",
           fallback=False, export_params=True, keep_initializers_as_inputs=False, dynamic_axes=None, training=None,
           operator_export_type=None, do_constant_folding=True, custom_opsets=None,
           export_modules_as_functions=False, autograd_inlining=True):
    """Same as `torch.onnx.export`: traces model(*args, **kwargs) (a Module runs in eval mode, as torch's default
    training=EVAL) and writes the ONNX model to f when given; returns an ONNXProgram. See NOTE [ ONNX export by
    tracing ] for what the trace fixes. Arguments for torch's own export machinery (dynamo, optimize, custom
    opsets...) are accepted and have no effect; dynamic_shapes is not supported (use dynamic_axes)."""
    try:
        import onnx
    except Exception as e:  # missing, or onnx built against a newer ml_dtypes than the installed one
        raise ImportError(f"ember.onnx.export needs the onnx package (pip install onnx, or ember[onnx]); importing "
                          f"it failed: {type(e).__name__}: {e}") from e
    import ember
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset not in OPSETS:
        raise OnnxExporterError(f"ember.onnx.export writes opsets {OPSETS.start} to {OPSETS.stop - 1}, not "
                                f"{opset_version}")
    if dynamic_shapes is not None:
        raise OnnxExporterError("ember.onnx.export: dynamic_shapes is not supported; name dynamic dims with "
                                "dynamic_axes={'input': {0: 'batch'}}")
    if not isinstance(args, tuple):
        args = (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict) and not kwargs:  # torch's old form: kwargs as the last element
        args, kwargs = args[:-1], args[-1]
    flat_in = [a for a in list(args) + list(kwargs.values()) if isinstance(a, ember.Tensor)]
    in_names = list(input_names or []) + [f"input_{i}" for i in range(len(input_names or []), len(flat_in))]
    dyn = _dynamic_axes(dynamic_axes)

    graph = _Graph(opset)
    graph_inputs = []
    for t, name in zip(flat_in, in_names):
        graph.bind(t._data, name)
        graph.variable.add(name)
        graph_inputs.append(_value_info(onnx, name, t._data, dyn.get(name)))

    was_training = getattr(model, "training", None)
    if was_training:
        model.eval()
    try:
        if any(n in dyn for n in in_names):
            graph.alt = _resized_trace(model, args, kwargs, flat_in, in_names, dyn)
        with ember.no_grad(), _Tracer(graph):
            result = model(*args, **kwargs)
        if graph.alt is not None and graph.step != len(graph.alt):
            _ops_differ()
    finally:
        if was_training:
            model.train(True)

    flat_out = _flat_outputs(result)
    out_names = list(output_names or []) + [f"output_{i}" for i in range(len(output_names or []), len(flat_out))]
    graph_outputs = []
    for t, name in zip(flat_out, out_names):
        graph.nodes.append(onnx.helper.make_node("Identity", [graph.value(t._data, "an output")], [name]))
        graph_outputs.append(_value_info(onnx, name, t._data, dyn.get(name)))
    unused = set(dyn) - set(in_names) - set(out_names)
    if unused:
        raise OnnxExporterError(f"ember.onnx.export: dynamic_axes names {sorted(unused)}, which are neither inputs "
                                f"{in_names} nor outputs {out_names}")

    g = onnx.helper.make_graph(graph.nodes, "main_graph", graph_inputs, graph_outputs, graph.inits)
    proto = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", opset)],
                                   producer_name="ember", producer_version=ember.__version__)
    proto.ir_version = min(proto.ir_version, 10)  # what onnxruntime releases of the last two years read
    onnx.checker.check_model(proto)
    program = ONNXProgram(proto)
    if f is not None:
        program.save(f)
    return program


# NOTE [ Dynamic dims by a second trace ]
# Which dims of a reshape's target (or an expand's, a state's batch) follow a dynamic input dim is found by
# running the model once more, before the export's trace, on inputs whose dynamic dims are one larger (their
# values tiled from the example's): a dim whose size differs between the two runs is dynamic. The ops of the two
# runs must match one for one; a model whose ops depend on those sizes cannot be exported with them dynamic.

def _resized_trace(model, args, kwargs, flat_in, in_names, dyn):
    import ember
    swap = {}
    for t, name in zip(flat_in, in_names):
        axes = dyn.get(name)
        if axes:
            shape = list(t.shape)
            for a in axes:
                shape[a] += 1
            swap[id(t)] = ember.from_numpy(np.resize(_host(t.detach()._data), shape)).to(t.device)

    def sub(v):
        if isinstance(v, ember.Tensor):
            return swap.get(id(v), v)
        if isinstance(v, (list, tuple)):
            return type(v)(sub(x) for x in v)
        if isinstance(v, dict):
            return {k: sub(x) for k, x in v.items()}
        return v
    tracer = _ShapeTracer()
    with ember.no_grad(), tracer:
        model(*sub(args), **sub(kwargs))
    return tracer.shapes


def _flat_outputs(result):
    import ember
    if isinstance(result, ember.Tensor):
        return [result]
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, (list, tuple)):
        out = []
        for r in result:
            out.extend(_flat_outputs(r))
        return out
    raise OnnxExporterError(f"ember.onnx.export: the model returned {type(result).__name__}; ONNX outputs are "
                            "tensors (or tuples, lists and dicts of them)")


def _dynamic_axes(spec):
    """{name: {axis: dim name}} from torch's dynamic_axes (a dict of dicts, or of axis lists)."""
    out = {}
    for name, axes in (spec or {}).items():
        if isinstance(axes, dict):
            out[name] = {int(a): str(d) for a, d in axes.items()}
        else:
            out[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
    return out


def _value_info(onnx, name, arr, dyn):
    from onnx import helper
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(np.float32) if arr.dtype.kind == "V" else arr.dtype)
    dims = [(dyn or {}).get(i, int(n)) for i, n in enumerate(arr.shape)]
    return helper.make_tensor_value_info(name, elem, dims)
