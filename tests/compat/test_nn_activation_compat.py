"""ember.nn activations, linear layers and dropout against torch: values, dtypes, gradients, grad_fn names,
module reprs and error messages."""
import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# name, kwargs
ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
    ("elu", {"alpha": 0.7}), ("selu", {}), ("celu", {}), ("celu", {"alpha": 1.3}), ("gelu", {}),
    ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}), ("hardtanh", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("hardsigmoid", {}), ("hardswish", {}), ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 3.0}), ("softsign", {}), ("softshrink", {}), ("softshrink", {"lambd": 1.2}),
    ("hardshrink", {}), ("hardshrink", {"lambd": 1.2}), ("tanhshrink", {}),
    ("threshold", {"threshold": 0.3, "value": -2.0}),
    ("logsigmoid", {}), ("glu", {}), ("glu", {"dim": 0}), ("sigmoid", {}), ("tanh", {}),
    ("rrelu", {}), ("rrelu", {"lower": 0.1, "upper": 0.2}),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for n, kw in ACTIVATIONS]


def _data(dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 6)) * 4
    a[0, :6] = [0.0, -3.0, 3.0, 30.0, -30.0, 1e-4]
    a[1, :4] = [-100.0, 100.0, 0.5, -0.5]
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=IDS)
def test_forward_backward_match_torch(name, kw, dtype):
    a = _data(dtype)
    g = np.random.default_rng(1).standard_normal(a.shape).astype(dtype)
    x, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = getattr(F, name)(x, **kw), getattr(TF, name)(tx, **kw)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
    assert str(y.dtype) == str(ty.dtype).replace("torch", "ember")
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), **tol)
    assert y.grad_fn.name() == ty.grad_fn.name()
    gy = g if y.shape == a.shape else g[:, :3] if kw.get("dim", -1) in (-1, 1) else g[:2]
    y.backward(ember.tensor(gy))
    ty.backward(torch.tensor(gy))
    if name == "celu" and dtype == np.float64:
        tol = {"rtol": 1e-6, "atol": 1e-12}  # torch's celu backward rounds 1/alpha to float32
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), **tol)


@pytest.mark.parametrize("name,kw", [a for a in ACTIVATIONS if a[0] != "rrelu"], ids=IDS[:-2])
def test_double_backward_matches_torch(name, kw):
    a = _data(np.float64)
    x, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    (gx,) = ember.autograd.grad(getattr(F, name)(x, **kw).sum(), x, create_graph=True)
    (tgx,) = torch.autograd.grad(getattr(TF, name)(tx, **kw).sum(), tx, create_graph=True)
    rtol = 1e-6 if name == "celu" else 1e-9  # torch's celu backward rounds 1/alpha to float32
    np.testing.assert_allclose(gx.detach().numpy(), tgx.detach().numpy(), rtol=rtol, atol=1e-12)
    if not tgx.requires_grad:
        return
    (ggx,) = ember.autograd.grad((gx * gx).sum(), x)
    if name == "hardsigmoid":  # torch has no double backward for it; ember's is zero
        np.testing.assert_array_equal(ggx.numpy(), 0)
        return
    (tggx,) = torch.autograd.grad((tgx * tgx).sum(), tx)
    np.testing.assert_allclose(ggx.numpy(), tggx.numpy(), rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu", "elu", "selu", "celu", "silu", "mish", "hardtanh",
                                  "hardsigmoid", "hardswish", "threshold", "rrelu"])
def test_inplace_matches_torch(name):
    a = _data(np.float32)
    args = (0.3, -2.0) if name == "threshold" else ()
    x, tx = ember.tensor(a), torch.tensor(a)
    r = getattr(F, name)(x, *args, inplace=True)
    getattr(TF, name)(tx, *args, inplace=True)
    assert r is x
    if name != "rrelu":
        np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-5, atol=1e-6)
    leaf = ember.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(F, name)(leaf, *args, inplace=True)


def test_inplace_on_non_leaf_backward_matches_torch():
    a = _data(np.float64)
    x, tx = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, ty = x * 2, tx * 2
    F.elu_(y)
    TF.elu_(ty)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), atol=1e-15)


def test_bfloat16_and_half_follow_torch_dtype():
    a = _data(np.float32)
    for name in ["relu", "gelu", "silu", "elu", "softplus", "leaky_relu", "hardswish"]:
        for edt, tdt in ((ember.bfloat16, torch.bfloat16), (ember.float16, torch.float16)):
            y = getattr(F, name)(ember.tensor(a).to(edt))
            ty = getattr(TF, name)(torch.tensor(a).to(tdt))
            assert str(y.dtype) == str(ty.dtype).replace("torch", "ember")
            np.testing.assert_allclose(y.float().numpy(), ty.float().numpy(), rtol=2e-2, atol=2e-2)


def test_integer_inputs_match_torch():
    a = np.arange(-4, 4)
    for name in ["relu", "relu6", "hardtanh"]:
        y, ty = getattr(F, name)(ember.tensor(a)), getattr(TF, name)(torch.tensor(a))
        assert str(y.dtype) == str(ty.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(y.numpy(), ty.numpy())
    for name in ["elu", "gelu", "silu", "leaky_relu", "softplus", "mish", "hardswish", "logsigmoid", "glu"]:
        with pytest.raises(NotImplementedError) as e:
            getattr(TF, name)(torch.tensor(a))
        with pytest.raises(NotImplementedError, match=e.value.args[0].replace('"', '.')):
            getattr(F, name)(ember.tensor(a))


@pytest.mark.parametrize("call", [
    lambda f, m: f.glu(m.randn(3)),
    lambda f, m: f.glu(m.tensor(1.0)),
    lambda f, m: f.gelu(m.randn(3), approximate="foo"),
    lambda f, m: f.celu(m.randn(3), 0.0),
    lambda f, m: f.softshrink(m.randn(3), -1.0),
    lambda f, m: f.rrelu(m.randn(3), 0.5, 0.1, training=True),
    lambda f, m: f.prelu(m.randn(2, 3), m.randn(2)),
    lambda f, m: f.linear(m.randn(3, 4), m.randn(5, 5)),
    lambda f, m: f.linear(m.randn(3, 4), m.randn(5, 4).double()),
    lambda f, m: f.linear(m.randn(3, 4), m.randn(5, 4), m.randn(4)),
    lambda f, m: f.dropout(m.randn(3), 1.5),
    lambda f, m: f.dropout1d(m.randn(3)),
    lambda f, m: f.bilinear(m.randn(3, 4), m.randn(2, 2), m.randn(5, 4, 2)),
    lambda f, m: f.bilinear(m.randn(3, 4), m.randn(3, 3), m.randn(5, 4, 2)),
    lambda f, m: f.bilinear(m.randn(3, 4), m.randn(3, 2, 3), m.randn(5, 4, 2)),
    lambda f, m: f.bilinear(m.randn(3, 3), m.randn(3, 2), m.randn(5, 4, 2)),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as te:
        call(TF, torch)
    with pytest.raises(type(te.value)) as ee:
        call(F, ember)
    assert str(ee.value) == str(te.value)


def test_prelu_matches_torch():
    rng = np.random.default_rng(0)
    for shape, n in [((4, 3, 5), 3), ((4, 3), 3), ((4, 3, 2, 2), 1), ((5,), 1)]:
        a, w = rng.standard_normal(shape), rng.standard_normal(n)
        x, ew = ember.tensor(a, requires_grad=True), ember.tensor(w, requires_grad=True)
        tx, tw = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
        y, ty = F.prelu(x, ew), TF.prelu(tx, tw)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy())
        assert y.grad_fn.name() == ty.grad_fn.name()
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
        np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy())


LINEAR_SHAPES = [((3, 4), (5, 4), (5,)), ((3, 4), (5, 4), None), ((2, 3, 4), (5, 4), (5,)), ((4,), (5, 4), (5,)),
                 ((2, 1, 3, 4), (5, 4), None), ((3, 4), (4,), None), ((3, 4), (5, 4), (1,)), ((0, 4), (5, 4), (5,))]


@pytest.mark.parametrize("xs,ws,bs", LINEAR_SHAPES)
def test_linear_matches_torch(xs, ws, bs):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in (xs, ws, bs) if s is not None]
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, ty = F.linear(*es), TF.linear(*ts)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert y.grad_fn.name() == ty.grad_fn.name()
    g = rng.standard_normal(ty.shape)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for e, t in zip(es, ts):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_linear_float32_and_bfloat16_dtypes():
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (5, 4), (5,)))
    for edt, tdt in ((ember.float32, torch.float32), (ember.bfloat16, torch.bfloat16)):
        y = F.linear(ember.tensor(x).to(edt), ember.tensor(w).to(edt), ember.tensor(b).to(edt))
        ty = TF.linear(torch.tensor(x).to(tdt), torch.tensor(w).to(tdt), torch.tensor(b).to(tdt))
        assert str(y.dtype) == str(ty.dtype).replace("torch", "ember")
        np.testing.assert_allclose(y.float().numpy(), ty.float().numpy(), rtol=2e-2, atol=5e-2)


def test_bilinear_matches_torch():
    rng = np.random.default_rng(0)
    for s1, s2, ws, bias in [((3, 4), (3, 2), (5, 4, 2), True), ((2, 3, 4), (2, 3, 2), (5, 4, 2), False),
                             ((4,), (2,), (5, 4, 2), True)]:
        arrays = [rng.standard_normal(s) for s in (s1, s2, ws)] + ([rng.standard_normal(ws[0])] if bias else [])
        es = [ember.tensor(a, requires_grad=True) for a in arrays]
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        y, ty = F.bilinear(*es), TF.bilinear(*ts)
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
        y.sum().backward()
        ty.sum().backward()
        for e, t in zip(es, ts):
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)


MODULE_REPRS = [
    "ReLU()", "ReLU(inplace=True)", "ReLU6()", "ReLU6(True)", "LeakyReLU()", "LeakyReLU(0.2, True)", "PReLU()",
    "PReLU(3, 0.1)", "RReLU()", "RReLU(0.1, 0.3, True)", "ELU()", "ELU(0.5, True)", "SELU()", "SELU(True)",
    "CELU(2.0)", "GELU()", "GELU('tanh')", "SiLU()", "Mish(True)", "Sigmoid()", "Tanh()", "Hardtanh()",
    "Hardtanh(-2, 3, True)", "Hardsigmoid()", "Hardswish(True)", "Softplus()", "Softplus(2, 10)", "Softsign()",
    "Softshrink()", "Softshrink(0.3)", "Hardshrink(1)", "Tanhshrink()", "Threshold(0.1, 20)",
    "Threshold(0.1, 20, True)", "LogSigmoid()", "GLU()", "GLU(1)", "Softmax()", "Softmax(1)", "LogSoftmax(-1)",
    "Softmin(0)", "Softmax2d()", "Dropout()", "Dropout(0.2, True)", "Dropout1d()", "Dropout2d(0.1)", "Dropout3d()",
    "AlphaDropout(0.3)", "FeatureAlphaDropout()", "Linear(3, 4)", "Linear(3, 4, bias=False)", "Bilinear(2, 3, 4)",
    "Bilinear(2, 3, 4, False)",
]


@pytest.mark.parametrize("expr", MODULE_REPRS)
def test_module_repr_matches_torch(expr):
    assert repr(eval("enn." + expr)) == repr(eval("torch.nn." + expr))


@pytest.mark.parametrize("expr", ["ReLU()", "LeakyReLU(0.2)", "ELU(0.5)", "GELU('tanh')", "Softplus(2, 10)",
                                  "Hardtanh(-2, 3)", "Threshold(0.1, 20.0)", "GLU(0)", "SiLU()", "Mish()"])
def test_module_forward_matches_torch(expr):
    a = _data(np.float64)
    np.testing.assert_allclose(eval("enn." + expr)(ember.tensor(a)).numpy(),
                               eval("torch.nn." + expr)(torch.tensor(a)).numpy(), rtol=1e-12, atol=1e-12)


def test_linear_module_state_dict_names_and_shapes_match_torch():
    em, tm = enn.Linear(3, 4), torch.nn.Linear(3, 4)
    assert [(k, tuple(v.shape)) for k, v in em.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    tm.weight.data = torch.from_numpy(em.weight.detach().numpy().copy())
    tm.bias.data = torch.from_numpy(em.bias.detach().numpy().copy())
    a = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(em(ember.tensor(a)).detach().numpy(), tm(torch.tensor(a)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_prelu_and_bilinear_parameter_shapes_match_torch():
    assert enn.PReLU(3).weight.shape == tuple(torch.nn.PReLU(3).weight.shape)
    assert tuple(enn.Bilinear(2, 3, 4).weight.shape) == tuple(torch.nn.Bilinear(2, 3, 4).weight.shape)


def test_alpha_dropout_statistics_like_torch():
    # masks differ from torch's (different generators); the transform keeps zero mean and unit variance
    ember.manual_seed(0)
    y = F.alpha_dropout(ember.randn(400000, dtype=ember.float64), 0.3, True)
    assert abs(y.mean().item()) < 0.01 and abs(y.std().item() - 1) < 0.01
    ty = TF.alpha_dropout(torch.randn(400000, dtype=torch.float64), 0.3, True)
    assert abs(ty.mean().item()) < 0.01 and abs(ty.std().item() - 1) < 0.01


def test_dropout_grad_fn_and_eval_identity_match_torch():
    x, tx = ember.ones(10, requires_grad=True), torch.ones(10, requires_grad=True)
    assert F.dropout(x, 0.5).grad_fn.name() == TF.dropout(tx, 0.5).grad_fn.name()
    assert F.dropout(x, 0.5, training=False) is x
    assert TF.dropout(tx, 0.5, training=False) is tx
