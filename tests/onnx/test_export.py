"""ember.onnx.export (NOTE [ ONNX export by tracing ]): models written by tracing run in onnxruntime with ember's
results, also at other sizes of their dynamic dims; what cannot be exported fails naming the op."""
import io

import numpy as np
import pytest

import ember
from ember import nn

try:
    import onnx
    import onnxruntime as ort
except Exception as e:  # noqa: BLE001 - missing, or built against a newer ml_dtypes than the one installed
    pytest.skip(f"onnx and onnxruntime are needed: {type(e).__name__}: {e}", allow_module_level=True)


def _run(proto, *xs):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x.numpy() for i, x in zip(sess.get_inputs(), xs)})


def _same(model, proto, *xs, atol=1e-5):
    with ember.no_grad():
        want = model(*xs)
    want = want if isinstance(want, tuple) else (want,)
    got = _run(proto, *xs)
    flat = []
    for w in want:
        flat.extend(w if isinstance(w, tuple) else (w,))
    assert len(got) == len(flat)
    for g, w in zip(got, flat):
        np.testing.assert_allclose(g, w.numpy(), atol=atol, rtol=1e-4)


def _cnn():
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.MaxPool2d(2),
                      nn.Dropout(0.5), nn.Conv2d(4, 6, 3, stride=2, bias=False), nn.GELU(), nn.Flatten(),
                      nn.Linear(6 * 6 * 6, 10), nn.LogSoftmax(-1))
    with ember.no_grad():
        m[1].running_mean.uniform_(-1, 1)
        m[1].running_var.uniform_(0.5, 2)
        m[1].weight.uniform_(0.5, 1.5)
        m[1].bias.uniform_(-1, 1)
    return m


class _LM(nn.Module):
    """A causal Transformer language model: embedding + learned positions, pre-norm GELU layers, a head."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.pos = nn.Parameter(ember.randn(1, 12, 16))
        layer = nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, norm_first=True, activation="gelu")
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(16, 50)

    def forward(self, idx):
        t = idx.shape[1]
        h = self.emb(idx) + self.pos[:, :t]
        mask = nn.Transformer.generate_square_subsequent_mask(t)
        return self.head(self.enc(h, mask=mask, is_causal=True)).log_softmax(-1)


def _resnet():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
            self.c2, self.b2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)

        def forward(self, x):
            return (self.b2(self.c2(self.b1(self.c1(x)).relu())) + x).relu()
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), Block(), Block(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(8, 3))


# model, example input, the dim of the batch
MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16), nn.SiLU(), nn.Linear(16, 4)),
            lambda: ember.randn(3, 8), 0),
    "cnn": (_cnn, lambda: ember.randn(2, 1, 28, 28), 0),
    "resnet": (_resnet, lambda: ember.randn(2, 3, 16, 16), 0),
    "lstm": (lambda: nn.LSTM(8, 16, 2, batch_first=True), lambda: ember.randn(2, 5, 8), 0),
    "gru": (lambda: nn.GRU(8, 16, bidirectional=True), lambda: ember.randn(5, 2, 8), 1),
    "rnn": (lambda: nn.RNN(8, 16, nonlinearity="relu"), lambda: ember.randn(5, 2, 8), 1),
    "transformer": (lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 32, batch_first=True), 2),
                    lambda: ember.randn(2, 5, 16), 0),
    "lm": (_LM, lambda: ember.randint(0, 50, (2, 12)), 0),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_exported_models_match_ember_also_at_other_batch_sizes(name):
    ember.manual_seed(0)
    make, example, bdim = MODELS[name]
    model, x = make(), example()
    n_out = 3 if name == "lstm" else 2 if name in ("gru", "rnn") else 1
    out_names = ["y"] + [f"state_{i}" for i in range(n_out - 1)]
    dyn = {"x": {bdim: "batch"}, "y": {bdim: "batch"}}
    dyn.update({n: {1: "batch"} for n in out_names[1:]})
    program = ember.onnx.export(model, (x,), input_names=["x"], output_names=out_names, dynamic_axes=dyn)
    model.eval()
    _same(model, program.model_proto, x)
    batch = ember.cat([x, x, x[:1]]) if bdim == 0 else ember.cat([x, x, x[:, :1]], 1)
    _same(model, program.model_proto, batch)
    graph = program.model_proto.graph
    assert [i.name for i in graph.input] == ["x"] and [o.name for o in graph.output] == out_names
    assert graph.input[0].type.tensor_type.shape.dim[bdim].dim_param == "batch"


def test_export_writes_files_and_restores_training_mode(tmp_path):
    model = _cnn()
    model.train()
    x = ember.randn(2, 1, 28, 28)
    ember.onnx.export(model, (x,), tmp_path / "m.onnx")
    assert model.training and model[1].training  # traced in eval mode, as torch's training=EVAL
    proto = onnx.load(tmp_path / "m.onnx")
    onnx.checker.check_model(proto)
    assert proto.opset_import[0].version == 18 and [i.name for i in proto.graph.input] == ["input_0"]
    buf = io.BytesIO()
    ember.onnx.export(model, x, buf, opset_version=17)
    model.eval()
    _same(model, onnx.load_from_string(buf.getvalue()), x)
    assert {n.op_type for n in proto.graph.node} >= {"Conv", "MaxPool", "Gemm", "LogSoftmax"}


def test_onnx_program_runs_and_saves(tmp_path):
    model = nn.Sequential(nn.Linear(4, 3), nn.Sigmoid())
    x = ember.randn(5, 4)
    program = ember.onnx.export(model, (x,))
    y, = program(x)
    with ember.no_grad():
        np.testing.assert_allclose(y.numpy(), model(x).numpy(), atol=1e-6)
    program.save(tmp_path / "p.onnx")
    assert onnx.load(tmp_path / "p.onnx").graph.node[0].op_type == "Gemm"


def test_reductions_in_either_opset_form():
    class Pool(nn.Module):
        def forward(self, x, w):
            return (x * w).mean(-1) - x.sum((0, 2), keepdim=True).squeeze(2) * 0.5
    x, w = ember.randn(3, 4, 5), ember.randn(5)
    for opset in (17, 18, 21):
        _same(Pool(), ember.onnx.export(Pool(), (x, w), opset_version=opset).model_proto, x, w)


def test_is_in_onnx_export_while_tracing():
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(ember.onnx.is_in_onnx_export())
            return x * 2
    ember.onnx.export(Probe(), (ember.ones(2),))
    assert seen == [True] and not ember.onnx.is_in_onnx_export()


def test_constants_are_folded():
    class Masked(nn.Module):
        def forward(self, x):
            keep = ember.ones(4, 4).triu().bool()  # ops on constants only: one initializer in the model
            return x.masked_fill(~keep, 0.0) if False else x * keep
    proto = ember.onnx.export(Masked(), (ember.randn(4, 4),)).model_proto
    assert [n.op_type for n in proto.graph.node] == ["Mul", "Identity"]
    _same(Masked(), proto, ember.randn(4, 4))


def test_what_cannot_be_exported_is_named():
    class Scan(nn.Module):
        def forward(self, x):
            return x.cumsum(1)
    with pytest.raises(ember.onnx.OnnxExporterError, match="aten::cumsum has no ONNX translation"):
        ember.onnx.export(Scan(), (ember.randn(2, 3),))

    class Indices(nn.Module):
        def forward(self, x):
            return nn.functional.max_pool2d(x, 2, return_indices=True)[1].float()
    with pytest.raises(ember.onnx.OnnxExporterError, match="max pooling's indices"):
        ember.onnx.export(Indices(), (ember.randn(1, 1, 4, 4),))
    with pytest.raises(ember.onnx.OnnxExporterError, match="opsets 17 to 21, not 13"):
        ember.onnx.export(nn.ReLU(), (ember.randn(2),), opset_version=13)
    with pytest.raises(ember.onnx.OnnxExporterError, match=r"dynamic_axes names \['z'\]"):
        ember.onnx.export(nn.ReLU(), (ember.randn(2),), dynamic_axes={"z": [0]})

    class Branchy(nn.Module):  # the number of ops depends on the batch size
        def forward(self, x):
            for _ in range(x.shape[0]):
                x = x + 1
            return x
    with pytest.raises(ember.onnx.OnnxExporterError, match="ran other ops when the dynamic dims"):
        ember.onnx.export(Branchy(), (ember.randn(2, 3),), input_names=["x"], dynamic_axes={"x": {0: "b"}})


@pytest.mark.parametrize("norm", ["group", "instance", "rms"])
def test_normalizations_computing_their_statistics(norm):
    ember.manual_seed(0)
    layer = {"group": lambda: nn.GroupNorm(2, 4), "instance": lambda: nn.InstanceNorm2d(4, affine=True),
             "rms": lambda: nn.RMSNorm([4, 5, 5])}[norm]()
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), layer)
    if norm != "rms":
        with ember.no_grad():
            layer.weight.uniform_(0.5, 1.5)
            layer.bias.uniform_(-1, 1)
    x = ember.randn(2, 3, 5, 5)
    program = ember.onnx.export(model, (x,), input_names=["x"], dynamic_axes={"x": {0: "b"}})
    model.eval()
    _same(model, program.model_proto, x)
    _same(model, program.model_proto, ember.cat([x, x, x[:1]]))


def test_transposed_convolutions():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                          nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1),
                          nn.ConvTranspose2d(4, 3, 3, padding=1, groups=1, bias=False, dilation=2),
                          nn.Sigmoid())
    x = ember.randn(2, 3, 8, 8)
    program = ember.onnx.export(model, (x,), input_names=["x"], dynamic_axes={"x": {0: "b"}})
    assert {n.op_type for n in program.model_proto.graph.node} >= {"ConvTranspose"}
    _same(model, program.model_proto, x)
    _same(model, program.model_proto, ember.cat([x, x[:1]]))
