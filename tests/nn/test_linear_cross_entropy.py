"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss against a NumPy reference: values, float64 gradients,
the chunked path (options), the module's state_dict layout, and the errors."""
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from ember.autograd.graph import saved_tensors_hooks
from ember.nn.modules.linear_cross_entropy_options import LinearCrossEntropyOptions

RNG = np.random.default_rng(0)


def ref_loss(x, w, target, bias=None, weight=None, reduction="mean", ignore_index=-100, smoothing=0.0):
    """NumPy: torch's cross_entropy of the logits x @ w^T + b, classes on axis 1 (axis 0 unbatched)."""
    c, out = w.shape[0], w.shape[1:-1]
    logits = x @ w.reshape(-1, w.shape[-1]).T
    if bias is not None:
        logits = logits + bias.reshape(-1)
    logits = logits.reshape(x.shape[:-1] + (c,) + out)
    axis = 0 if x.ndim == 1 else 1
    z = logits - logits.max(axis, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis, keepdims=True))
    wc = np.ones(c) if weight is None else weight
    wshape = (c,) + (1,) * len(out)
    if target.shape == logits.shape:  # class probabilities
        p = target * (1 - smoothing) + smoothing / c
        loss = -(p * logp * wc.reshape(wshape)).sum(axis)
        return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / max(loss.size, 0)}[reduction]
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(logp, np.expand_dims(safe, axis), axis).squeeze(axis)
    smooth = -(logp * wc.reshape(wshape)).sum(axis) / c
    loss = np.where(keep, (1 - smoothing) * -wc[safe] * picked + smoothing * smooth, 0.0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore"):
        return loss.sum() / (wc[safe] * keep).sum()


# (input shape, linear_weight shape, class-index target shape): unbatched, batched, K-dimensional
SHAPES = [((3,), (4, 3), ()), ((6, 3), (4, 3), (6,)), ((5, 3), (2, 3, 3), (5, 3)),
          ((4, 2), (3, 2, 1, 2), (4, 2, 1))]


def make(shape, bias=False, probs=False, dtype=np.float64, ignore=None):
    xs, ws, ts = shape
    x, w = RNG.standard_normal(xs).astype(dtype), RNG.standard_normal(ws).astype(dtype)
    b = RNG.standard_normal(ws[:-1]).astype(dtype) if bias else None
    if probs:
        logits_shape = xs[:-1] + ws[:-1]
        t = RNG.random(logits_shape)
        t = (t / t.sum(0 if len(xs) == 1 else 1, keepdims=True)).astype(dtype)
    else:
        t = RNG.integers(0, ws[0], ts)
        if ignore is not None and t.ndim:
            t.reshape(-1)[::3] = ignore
    return x, w, b, t


def _et(a, grad=False):
    return None if a is None else ember.tensor(a, requires_grad=grad)


CASES = [{"reduction": r} for r in ("mean", "sum", "none")] + [
    {"weight": True}, {"weight": True, "reduction": "sum"}, {"weight": True, "reduction": "none"},
    {"ignore_index": 1}, {"ignore": -100}, {"ignore": -100, "weight": True},
    {"label_smoothing": 0.2}, {"label_smoothing": 0.2, "weight": True, "ignore": -100},
    {"bias": True}, {"bias": True, "weight": True, "reduction": "sum"}, {"probs": True},
    {"probs": True, "weight": True},
    {"probs": True, "label_smoothing": 0.3, "reduction": "none"}, {"probs": True, "bias": True, "reduction": "sum"}]


def _run(shape, case, options=None, grad=False):
    case = dict(case)
    x, w, b, t = make(shape, case.pop("bias", False), case.pop("probs", False), ignore=case.pop("ignore", None))
    cw = RNG.random(w.shape[0]) + 0.1 if case.pop("weight", False) else None
    kw = dict(case)
    ref_kw = {"reduction": kw.get("reduction", "mean"), "ignore_index": kw.get("ignore_index", -100),
                  "smoothing": kw.get("label_smoothing", 0.0)}
    want = ref_loss(x, w, t, b, cw, **ref_kw)
    args = (_et(x, grad), _et(w, grad), ember.tensor(t))
    got = F.linear_cross_entropy(*args, linear_bias=_et(b, grad), weight=_et(cw), options=options, **kw)
    return want, got, args, b, cw, kw


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_match_numpy(shape, case):
    want, got, *_ = _run(shape, case)
    assert got.dtype == ember.float64
    assert tuple(got.shape) == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("case", [{"reduction": "none", "bias": True}, {"weight": True, "label_smoothing": 0.1},
                                  {"probs": True, "bias": True, "weight": True}, {"ignore": -100, "reduction": "sum"}],
                         ids=str)
def test_gradcheck_float64(shape, case):
    case = dict(case)
    x, w, b, t = make(shape, case.pop("bias", False), case.pop("probs", False), ignore=case.pop("ignore", None))
    cw = _et(RNG.random(w.shape[0]) + 0.1) if case.pop("weight", False) else None
    tt = ember.tensor(t)
    inputs = [_et(x, True), _et(w, True)] + ([_et(b, True)] if b is not None else [])

    def fn(x, w, b=None):
        return F.linear_cross_entropy(x, w, tt, linear_bias=b, weight=cw, **case)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_float32_matches_reference_composition():
    x, w, b, t = make(SHAPES[2], bias=True, dtype=np.float32)
    got = F.linear_cross_entropy(_et(x), _et(w), ember.tensor(t), linear_bias=_et(b), label_smoothing=0.1)
    logits = F.linear(_et(x), _et(w).reshape(6, 3), _et(b).reshape(6)).reshape(5, 2, 3)
    want = F.cross_entropy(logits, ember.tensor(t), label_smoothing=0.1)
    assert got.dtype == ember.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


# ---------------- the chunked path (options) ----------------
CHUNK_CASES = [{"reduction": r} for r in ("mean", "sum", "none")] + [
    {"weight": True}, {"weight": True, "reduction": "none", "bias": True}, {"ignore": -100, "weight": True},
    {"ignore_index": 1, "reduction": "sum", "bias": True}]


@pytest.mark.parametrize("shape", SHAPES[:2], ids=str)
@pytest.mark.parametrize("case", CHUNK_CASES, ids=str)
@pytest.mark.parametrize("size", [1, 2, 4, 100])
def test_chunked_values_and_grads(shape, case, size):
    opts = LinearCrossEntropyOptions(batch_chunk_size=size)
    want, got, args, b, cw, kw = _run(shape, case, opts, grad=True)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-10, atol=1e-12)
    x, w, t = args
    leaves = [x, w] + ([_et(b, True)] if b is not None else [])

    def fn(x, w, b=None):
        return F.linear_cross_entropy(x, w, t, linear_bias=b, weight=_et(cw), options=opts, **kw)
    assert gradcheck(fn, leaves)


def test_chunked_backward_twice_and_no_grad():
    x, w, b, t = make(SHAPES[1], bias=True)
    xe, we, be, te = _et(x, True), _et(w, True), _et(b, True), ember.tensor(t)
    opts = LinearCrossEntropyOptions(batch_chunk_size=2)
    loss = F.linear_cross_entropy(xe, we, te, linear_bias=be, options=opts)
    g1 = ember.autograd.grad(loss, [xe, we, be], retain_graph=True)
    g2 = ember.autograd.grad(loss, [xe, we, be])
    ref = ember.autograd.grad(F.linear_cross_entropy(xe, we, te, linear_bias=be), [xe, we, be])
    for a, c, r in zip(g1, g2, ref):
        np.testing.assert_allclose(a.numpy(), r.numpy(), rtol=1e-12)
        np.testing.assert_array_equal(a.numpy(), c.numpy())
    with ember.no_grad():
        out = F.linear_cross_entropy(xe, we, te, linear_bias=be, options=opts)
    assert not out.requires_grad
    np.testing.assert_allclose(out.numpy(), ref_loss(x, w, t, b), rtol=1e-12)


def test_chunked_graph_keeps_one_chunk_of_logits():
    """With a gradient needed the graph holds no chunk's logits (backward recomputes them), and no linear call
    ever sees more rows than one chunk."""
    n, c, size = 12, 50, 3
    x, w = _et(RNG.standard_normal((n, 4)), True), _et(RNG.standard_normal((c, 4)), True)
    t = ember.tensor(RNG.integers(0, c, n))
    saved = []
    rows = []
    import ember.nn._functional.linear_cross_entropy as mod
    real = mod.linear

    def spy(x, w, b=None):
        rows.append(x.shape[0])
        return real(x, w, b)
    mod.linear = spy
    try:
        with saved_tensors_hooks(lambda s: saved.append(tuple(s.shape)) or s, lambda s: s):
            loss = F.linear_cross_entropy(x, w, t, options=LinearCrossEntropyOptions(batch_chunk_size=size))
        loss.backward()
    finally:
        mod.linear = real
    assert sum(math.prod(s) for s in saved if s and s[-1] == c) <= size * c
    assert max(rows) == size and len(rows) == 2 * n // size  # forward, then recomputed in backward


@pytest.mark.parametrize("kwargs, n, in_features, classes, want", [
    ({}, 64, 8, 32, 8),  # auto: aspect_ratio:2 -> next_pow2(ceil(64 / 4)) // 2
    ({"chunking_method": "aspect_ratio"}, 64, 8, 32, 16),
    ({"chunking_method": "aspect_ratio:4"}, 64, 8, 32, 4),
    ({"chunking_method": "aspect_ratio"}, 5, 8, 4, 5),  # capped at the rows
    ({"chunking_method": None}, 10, 8, 32, 10),
    ({"batch_chunk_size": 3}, 10, 8, 32, 3),
    ({"batch_chunk_size": 30}, 10, 8, 32, 10),
    ({"batch_chunk_size": 16, "chunking_method": "aspect_ratio"}, 64, 8, 32, 16),
    ({}, 0, 8, 32, 1)])
def test_chunk_size_resolution(kwargs, n, in_features, classes, want):
    from ember.nn._functional.linear_cross_entropy import _chunk_size
    assert _chunk_size(LinearCrossEntropyOptions(**kwargs), n, in_features, classes, False) == want


def test_chunked_half_accumulates_in_float32():
    x, w, _, t = make(SHAPES[1], dtype=np.float16)
    got = F.linear_cross_entropy(_et(x), _et(w), ember.tensor(t), options=LinearCrossEntropyOptions(batch_chunk_size=2))
    assert got.dtype == ember.float16
    want = ref_loss(x.astype(np.float64), w.astype(np.float64), t)
    np.testing.assert_allclose(float(got), want, rtol=2e-3)


@pytest.mark.parametrize("kwargs", [{"label_smoothing": 0.1}, {"reduction": "mean", "probs": True},
                                    {"k_dim": True}], ids=str)
def test_options_fall_back_with_warning(kwargs):
    kwargs = dict(kwargs)
    shape = SHAPES[2] if kwargs.pop("k_dim", False) else SHAPES[1]
    x, w, _, t = make(shape, probs=kwargs.pop("probs", False))
    with pytest.warns(UserWarning, match=r"linear_cross_entropy: ``options`` ignored; chunked path needs"):
        got = F.linear_cross_entropy(_et(x), _et(w), ember.tensor(t), options=LinearCrossEntropyOptions(), **kwargs)
    np.testing.assert_allclose(got.numpy(), ref_loss(x, w, t, smoothing=kwargs.get("label_smoothing", 0.0)),
                               rtol=1e-10)


# ---------------- the options class ----------------
@pytest.mark.parametrize("kwargs, match", [
    ({"acc_policy": "fast"}, "invalid acc_policy: 'fast'"),
    ({"chunking_method": "aspect_ratio:0"}, "invalid chunking_method: 'aspect_ratio:0'"),
    ({"chunking_method": "aspect_ratio:"}, "invalid chunking_method: 'aspect_ratio:'"),
    ({"chunking_method": "rows"}, "invalid chunking_method: 'rows'"),
    ({"batch_chunk_size": 0}, "batch_chunk_size must be positive int or None, got 0"),
    ({"batch_chunk_size": 2.0}, "batch_chunk_size must be positive int or None, got 2.0"),
    ({"acc_dtype": ember.int32}, "acc_dtype must be one of")])
def test_options_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        LinearCrossEntropyOptions(**kwargs)


def test_options_dataclass():
    o = LinearCrossEntropyOptions(batch_chunk_size=2)
    assert repr(o) == ("LinearCrossEntropyOptions(allow_retain_graph=False, batch_chunk_size=2, "
                       "chunking_method='auto', acc_policy='auto', acc_dtype=None)")
    assert o == LinearCrossEntropyOptions(batch_chunk_size=2) and hash(o) == hash(LinearCrossEntropyOptions(False, 2))
    with pytest.raises(AttributeError):
        o.batch_chunk_size = 3
    assert nn.LinearCrossEntropyOptions is LinearCrossEntropyOptions


def test_chunked_call_errors():
    x, w, _, t = make(SHAPES[1])
    args = (_et(x), _et(w), ember.tensor(t))
    with pytest.raises(ValueError, match=r"batch_chunk_size \(=2\) and chunking_method \('aspect_ratio'\) give "
                                         r"different chunk sizes \(2 vs 4\); pass only one."):
        F.linear_cross_entropy(*args, options=LinearCrossEntropyOptions(batch_chunk_size=2,
                                                                        chunking_method="aspect_ratio"))
    with pytest.raises(RuntimeError, match="supports float32 acc_dtype with float16/bfloat16 inputs, but got "
                                           "ember.float32 acc_dtype and ember.float64 inputs."):
        F.linear_cross_entropy(*args, options=LinearCrossEntropyOptions(acc_dtype=ember.float32))
    with pytest.raises(AttributeError):
        F.linear_cross_entropy(*args, options="chunked")


# ---------------- errors of the functional ----------------
def _err(xs, ws, ts, **kw):
    b = kw.pop("bias_shape", None)
    return (ember.randn(*xs), ember.randn(*ws), ember.zeros(ts, dtype=kw.pop("tdtype", ember.int64)),
            dict(kw, linear_bias=None if b is None else ember.randn(*b)))


@pytest.mark.parametrize("args, exc, match", [
    (_err((4, 3, 2), (4, 2), (4,)), RuntimeError, "expected input with dimensionality 1 or 2, got 3"),
    (_err((), (4, 2), ()), RuntimeError, "expected input with dimensionality 1 or 2, got 0"),
    (_err((3,), (4,), ()), RuntimeError, "expected linear_weight with dimensionality at least 2, got 1"),
    (_err((2, 3), (4, 4), (2,)), RuntimeError,
     r"expected equal input and linear_weight last dimensions \(in_features\), got 3 and 4, respectively"),
    (_err((2, 3), (4, 3), (2,), bias_shape=(3,)), RuntimeError, r"expected linear_bias shape \(4,\), got \(3,\)"),
    (_err((2, 3), (4, 2, 3), (2, 2), bias_shape=(8,)), RuntimeError,
     r"expected linear_bias shape \(4, 2\), got \(8,\)"),
    (_err((3,), (2, 4, 3), ()), RuntimeError,
     (r"K-dimensional loss defined by linear_weight shape \(2, 4, 3\) requires batched input, \(N, 3\), "
      r"got unbatched input with shape \(3,\)")),
    (_err((2, 3), (4, 3), (2, 4), tdtype=ember.float32, ignore_index=-100), RuntimeError,
     "ignore_index cannot be specified when target contains probabilities"),
    (_err((5, 3), (4, 3), (3,)), ValueError, r"Expected input batch_size \(5\) to match target batch_size \(3\)."),
    (_err((5, 3), (4, 3), (5,), tdtype=ember.int32), RuntimeError,
     "expected target dtype to be Long or Byte, but got Int"),
    (_err((5, 3), (4, 3), (5,), reduction="avg"), ValueError, "avg is not a valid value for reduction"),
    (_err((5, 3), (4, 3), (5,), label_smoothing=1.5), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (_err((5, 3), (4, 3), (5,), weight=ember.ones(3)), RuntimeError,
     "weight tensor should be defined either for all 4 classes or no classes"),
    (_err((2, 3), (4, 2, 3), (2, 3)), RuntimeError, r"Expected target size \[2, 2\], got \[2, 3\]")])
def test_errors(args, exc, match):
    x, w, t, kw = args
    with pytest.raises(exc, match=match):
        F.linear_cross_entropy(x, w, t, **kw)


def test_target_out_of_bounds_and_signature():
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.linear_cross_entropy(ember.randn(2, 3), ember.randn(4, 3), ember.tensor([0, 7]))
    with pytest.raises(TypeError):
        F.linear_cross_entropy(ember.randn(2, 3), ember.randn(4, 3), ember.tensor([0, 1]), None)  # keyword-only
    with pytest.raises(AttributeError, match="'list' object has no attribute 'dim'"):
        F.linear_cross_entropy([1.0, 2.0], ember.randn(4, 2), ember.tensor(0))


# ---------------- the module ----------------
def test_module_state_dict_layout_and_forward():
    m = nn.LinearCrossEntropyLoss(5, 4, out_features=(3, 2), bias=True, weight=ember.rand(4) + 0.5,
                                  ignore_index=1, label_smoothing=0.1, dtype=ember.float64)
    sd = m.state_dict()
    assert list(sd) == ["weight", "linear.weight", "linear.bias"]
    assert tuple(sd["linear.weight"].shape) == (24, 5) and tuple(sd["linear.bias"].shape) == (24,)
    assert [n for n, _ in m.named_parameters()] == ["linear.weight", "linear.bias"]
    x = RNG.standard_normal((6, 5))
    t = RNG.integers(0, 4, (6, 3, 2))
    got = m(ember.tensor(x), ember.tensor(t))
    want = ref_loss(x, m.linear.weight.detach().numpy().reshape(4, 3, 2, 5), t,
                    m.linear.bias.detach().numpy().reshape(4, 3, 2), m.weight.numpy().astype(np.float64),
                    ignore_index=1, smoothing=0.1)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-10)
    got.backward()
    assert tuple(m.linear.weight.grad.shape) == (24, 5)


def test_module_loads_a_state_dict_and_defaults():
    m = nn.LinearCrossEntropyLoss(3, 4)
    assert list(m.state_dict()) == ["linear.weight"] and m.linear.bias is None and m.weight is None
    sd = {"linear.weight": ember.arange(12.0).reshape(12 // 3, 3)}
    m.load_state_dict(sd)
    np.testing.assert_array_equal(m.linear.weight.detach().numpy(), np.arange(12.0).reshape(4, 3))
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "weight"'):
        nn.LinearCrossEntropyLoss(3, 4, weight=ember.ones(4)).load_state_dict(sd)
    assert (m.num_classes, m.out_features, m.reduction, m.ignore_index, m.label_smoothing, m.options) == \
        (4, (), "mean", None, 0.0, None)


def test_module_repr_and_options():
    opts = LinearCrossEntropyOptions(batch_chunk_size=2)
    m = nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=True, options=opts)
    assert repr(m) == (
        "LinearCrossEntropyLoss(\n  in_features=3, num_classes=4, out_features=(2,), bias=True, reduction=mean, "
        "ignore_index=None, label_smoothing=0.0, options=LinearCrossEntropyOptions(allow_retain_graph=False, "
        "batch_chunk_size=2, chunking_method='auto', acc_policy='auto', acc_dtype=None)\n"
        "  (linear): Linear(in_features=3, out_features=8, bias=True)\n)")
    m2 = nn.LinearCrossEntropyLoss(3, 4, options=opts)
    x, t = ember.randn(6, 3), ember.tensor([0, 1, 2, 3, 0, 1])
    with pytest.warns(UserWarning, match="options`` ignored"):
        m(x, ember.zeros(6, 2, dtype=ember.int64))
    want = F.cross_entropy(F.linear(x, m2.linear.weight), t)
    np.testing.assert_allclose(m2(x, t).detach().numpy(), want.detach().numpy(), rtol=1e-6)


def test_module_errors():
    with pytest.raises(RuntimeError, match=r"expected label_smoothing to be in range \[0, 1\], got 2.0"):
        nn.LinearCrossEntropyLoss(3, 4, label_smoothing=2.0)
    with pytest.raises(RuntimeError, match=r"expected label_smoothing to be in range \[0, 1\], got -0.1"):
        nn.LinearCrossEntropyLoss(3, 4, label_smoothing=-0.1)
    with pytest.raises(TypeError):
        nn.LinearCrossEntropyLoss(3, 4, 5)  # out_features and the rest are keyword-only
    with pytest.raises(TypeError):
        nn.LinearCrossEntropyLoss(3, 4, out_features=2)
    m = nn.LinearCrossEntropyLoss(3, 4, out_features=(2,))
    with pytest.raises(RuntimeError, match="requires batched input"):
        m(ember.randn(3), ember.tensor([0, 1]))
