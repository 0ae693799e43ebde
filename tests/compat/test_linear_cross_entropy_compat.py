"""F.linear_cross_entropy, nn.LinearCrossEntropyLoss and LinearCrossEntropyOptions against real torch: values,
dtypes, gradients, the chunked path, warnings, error messages, and torch's state_dicts loaded by ember."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn

torch = pytest.importorskip("torch")
TF = torch.nn.functional
TOpts = pytest.importorskip("torch.nn.modules.linear_cross_entropy_options").LinearCrossEntropyOptions
EOpts = nn.modules.linear_cross_entropy_options.LinearCrossEntropyOptions

RNG = np.random.default_rng(0)
# (input shape, linear_weight shape): unbatched, batched, K-dimensional
SHAPES = [((3,), (4, 3)), ((7, 3), (5, 3)), ((5, 3), (2, 3, 3)), ((4, 2), (3, 2, 1, 2))]


def _arrays(xs, ws, probs=False, ignore=None):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    b = RNG.standard_normal(ws[:-1])
    logits_shape = xs[:-1] + ws[:-1]
    if probs:
        t = RNG.random(logits_shape)
        t = t / t.sum(0 if len(xs) == 1 else 1, keepdims=True)
    else:
        t = RNG.integers(0, ws[0], xs[:-1] + ws[1:-1])
        if ignore is not None and t.ndim:
            t.reshape(-1)[::3] = ignore
    return x, w, b, t


CASES = [{}, {"reduction": "sum"}, {"reduction": "none"}, {"bias": True}, {"weight": True},
         {"weight": True, "reduction": "none", "bias": True}, {"ignore_index": 1}, {"ignore": -100, "weight": True},
         {"label_smoothing": 0.2, "weight": True}, {"label_smoothing": 0.1, "ignore": -100, "reduction": "sum"},
         {"probs": True}, {"probs": True, "weight": True, "bias": True},
         {"probs": True, "label_smoothing": 0.3, "reduction": "none"}]
OPTIONS = [None, {"batch_chunk_size": 2}, {"batch_chunk_size": 3}, {}, {"chunking_method": "aspect_ratio"}]


def _both(shape, case, opts, dtype):
    case = dict(case)
    x, w, b, t = _arrays(*shape, probs=case.pop("probs", False), ignore=case.pop("ignore", None))
    use_b, use_w = case.pop("bias", False), case.pop("weight", False)
    cw = RNG.random(w.shape[0]) + 0.1
    grad = dtype == np.float64
    out = []
    for lib, opt_cls in ((torch, TOpts), (ember, EOpts)):
        def tensor(a, g=False, lib=lib):
            tt = lib.tensor(a.astype(dtype) if a.dtype.kind == "f" else a)
            return tt.requires_grad_(g)
        leaves = [tensor(x, grad), tensor(w, grad)] + ([tensor(b, grad)] if use_b else [])
        kw = dict(case, linear_bias=leaves[2] if use_b else None, weight=tensor(cw) if use_w else None,
                  options=None if opts is None else opt_cls(**opts))
        fn = TF.linear_cross_entropy if lib is torch else F.linear_cross_entropy
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = fn(leaves[0], leaves[1], tensor(t), **kw)
        out.append((y, leaves, [str(c.message) for c in caught]))
    return out


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("opts", OPTIONS, ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_torch(shape, case, opts, dtype):
    (yt, lt, wt), (ye, le, we) = _both(shape, case, opts, dtype)
    assert str(ye.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    assert tuple(ye.shape) == tuple(yt.shape)
    tol = 1e-12 if dtype == np.float64 else 2e-6
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=tol, atol=tol, equal_nan=True)
    assert [m.replace("torch.", "ember.") for m in wt] == we
    if dtype == np.float64:
        go = RNG.standard_normal(tuple(yt.shape))
        gt = torch.autograd.grad(yt, lt, torch.tensor(go))
        ge = ember.autograd.grad(ye, le, ember.tensor(go))
        for a, c in zip(ge, gt):
            np.testing.assert_allclose(_np(a), _np(c), rtol=1e-10, atol=1e-12)


def test_torch_options_object_drives_ember():
    """The OpInfo harness hands torch's options object to ember unchanged: ember reads its fields."""
    x, w, _, t = _arrays((9, 4), (6, 4))
    opts = TOpts(batch_chunk_size=2, allow_retain_graph=True)
    yt = TF.linear_cross_entropy(torch.tensor(x), torch.tensor(w), torch.tensor(t), reduction="sum", options=opts)
    ye = F.linear_cross_entropy(ember.tensor(x), ember.tensor(w), ember.tensor(t), reduction="sum", options=opts)
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-12)


@pytest.mark.parametrize("half", ["float16"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_chunked_half(half, reduction):
    x, w, _, t = _arrays((8, 4), (6, 4))
    args = {"reduction": reduction}
    yt = TF.linear_cross_entropy(torch.tensor(x).to(getattr(torch, half)), torch.tensor(w).to(getattr(torch, half)),
                                 torch.tensor(t), options=TOpts(batch_chunk_size=3), **args)
    ye = F.linear_cross_entropy(ember.tensor(x).to(getattr(ember, half)), ember.tensor(w).to(getattr(ember, half)),
                                ember.tensor(t), options=EOpts(batch_chunk_size=3), **args)
    assert str(ye.dtype) == f"ember.{half}" and str(yt.dtype) == f"torch.{half}"
    np.testing.assert_allclose(_np(ye).astype(np.float64), _np(yt).astype(np.float64), rtol=2e-3, atol=2e-3)


# ---------------- errors: torch's exception types and messages ----------------
def _bad(xs, ws, ts, tdtype="int64", bias=None, **kw):
    def build(lib):
        return ((lib.zeros(xs, dtype=lib.float64), lib.zeros(ws, dtype=lib.float64),
                 lib.zeros(ts, dtype=getattr(lib, tdtype))),
                dict(kw, linear_bias=None if bias is None else lib.zeros(bias, dtype=lib.float64)))
    return build


def _same_error(call_t, call_e):
    with pytest.raises(Exception) as et:
        call_t()
    with pytest.raises(Exception) as ee:
        call_e()
    assert type(ee.value) is type(et.value) or issubclass(type(ee.value), type(et.value))
    assert str(ee.value) == str(et.value).replace("torch.", "ember.")


@pytest.mark.parametrize("build", [
    _bad((4, 3, 2), (4, 2), (4,)), _bad((), (4, 2), ()), _bad((3,), (4,), ()), _bad((2, 3), (4, 4), (2,)),
    _bad((2, 3), (4, 3), (2,), bias=(3,)), _bad((2, 3), (4, 2, 3), (2, 2), bias=(8,)), _bad((3,), (2, 4, 3), ()),
    _bad((2, 3), (4, 3), (2, 4), tdtype="float64", ignore_index=-100), _bad((5, 3), (4, 3), (3,)),
    _bad((5, 3), (4, 3), (5,), tdtype="int32"), _bad((5, 3), (4, 3), (5,), reduction="avg"),
    _bad((5, 3), (4, 3), (5,), label_smoothing=1.5), _bad((2, 3), (4, 2, 3), (2, 3)),
    _bad((5, 3), (4, 3), (5,), options_kw={"batch_chunk_size": 2, "chunking_method": "aspect_ratio"}),
    _bad((5, 3), (4, 3), (5,), options_kw={"acc_dtype": "float32"}),
    _bad((5, 3), (4, 3), (5,), options_kw={"batch_chunk_size": 8, "chunking_method": "aspect_ratio:2"})])
def test_errors_match_torch(build):
    def call(lib, fn, opts):
        args, kw = build(lib)
        okw = kw.pop("options_kw", None)
        if okw is not None:
            if "acc_dtype" in okw:
                okw = dict(okw, acc_dtype=getattr(lib, okw["acc_dtype"]))
            kw["options"] = opts(**okw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kw)
    _same_error(lambda: call(torch, TF.linear_cross_entropy, TOpts), lambda: call(ember, F.linear_cross_entropy, EOpts))


def test_weight_size_error_matches_torch():
    def call(lib, fn):
        return fn(lib.zeros(5, 3), lib.zeros(4, 3), lib.zeros(5, dtype=lib.int64), weight=lib.ones(3))
    _same_error(lambda: call(torch, TF.linear_cross_entropy), lambda: call(ember, F.linear_cross_entropy))


@pytest.mark.parametrize("kwargs", [{"acc_policy": "fast"}, {"chunking_method": "aspect_ratio:0"},
                                    {"chunking_method": "aspect_ratio:"}, {"chunking_method": "rows"},
                                    {"batch_chunk_size": 0}, {"batch_chunk_size": 2.5}, {"batch_chunk_size": -1}])
def test_options_validation_matches_torch(kwargs):
    _same_error(lambda: TOpts(**kwargs), lambda: EOpts(**kwargs))


def test_options_repr_and_fields_match_torch():
    for kw in [{}, {"batch_chunk_size": 4, "allow_retain_graph": True}, {"chunking_method": None},
               {"acc_policy": "compact", "chunking_method": "aspect_ratio:3"}]:
        assert repr(EOpts(**kw)) == repr(TOpts(**kw))
    import dataclasses
    assert [f.name for f in dataclasses.fields(EOpts)] == [f.name for f in dataclasses.fields(TOpts)]
    assert [f.default for f in dataclasses.fields(EOpts)] == [f.default for f in dataclasses.fields(TOpts)]


def test_signatures_match_torch():
    import inspect

    def params(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
    assert params(F.linear_cross_entropy) == params(TF.linear_cross_entropy)
    assert params(nn.LinearCrossEntropyLoss.__init__) == params(torch.nn.LinearCrossEntropyLoss.__init__)
    assert params(nn.LinearCrossEntropyLoss.forward) == params(torch.nn.LinearCrossEntropyLoss.forward)
    assert nn.LinearCrossEntropyOptions is EOpts


# ---------------- the module ----------------
MODULE_CASES = [{}, {"bias": True}, {"out_features": (3, 2), "bias": True}, {"out_features": (2,)},
                {"weight": True, "ignore_index": 1, "label_smoothing": 0.1},
                {"reduction": "none", "out_features": (2,)},
                {"options": {"batch_chunk_size": 2}, "bias": True, "weight": True}, {"options": {}}]


@pytest.mark.parametrize("case", MODULE_CASES, ids=str)
@pytest.mark.parametrize("probs", [False, True])
def test_module_loads_torch_state_dict(case, probs):
    case = dict(case)
    out = tuple(case.get("out_features", ()))
    cw = RNG.random(4) + 0.1 if case.pop("weight", False) else None
    opts = case.pop("options", None)
    if probs and case.get("ignore_index") is not None:
        case.pop("ignore_index")
    torch.manual_seed(0)
    mt = torch.nn.LinearCrossEntropyLoss(5, 4, dtype=torch.float64, weight=None if cw is None else torch.tensor(cw),
                                         options=None if opts is None else TOpts(**opts), **case)
    me = nn.LinearCrossEntropyLoss(5, 4, dtype=ember.float64, weight=None if cw is None else ember.tensor(cw),
                                   options=None if opts is None else EOpts(**opts), **case)
    sd = mt.state_dict()
    assert list(me.state_dict()) == list(sd)
    assert [tuple(v.shape) for v in me.state_dict().values()] == [tuple(v.shape) for v in sd.values()]
    me.load_state_dict({k: ember.tensor(v.numpy()) for k, v in sd.items()})
    assert repr(me) == repr(mt)
    x = RNG.standard_normal((6, 5))
    t = RNG.random((6, 4) + out) if probs else RNG.integers(0, 4, (6,) + out)
    xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yt, ye = mt(xt, torch.tensor(t)), me(xe, ember.tensor(t))
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-12, atol=1e-12)
    go = RNG.standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(go))
    ye.backward(ember.tensor(go))
    pairs = [(xe.grad, xt.grad)] + [(pe.grad, pt.grad) for pe, pt in zip(me.parameters(), mt.parameters())]
    for a, c in pairs:
        np.testing.assert_allclose(_np(a), _np(c), rtol=1e-10, atol=1e-12)


def test_ember_state_dict_loads_into_torch():
    me = nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=True)
    mt = torch.nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=True)
    mt.load_state_dict({k: torch.tensor(v.numpy()) for k, v in me.state_dict().items()})
    x, t = RNG.standard_normal((5, 3)).astype(np.float32), RNG.integers(0, 4, (5, 2))
    np.testing.assert_allclose(_np(me(ember.tensor(x), ember.tensor(t))), _np(mt(torch.tensor(x), torch.tensor(t))),
                               rtol=1e-5)


def test_module_label_smoothing_error_matches_torch():
    for v in (2.0, -0.1):
        _same_error(lambda v=v: torch.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=v),
                    lambda v=v: nn.LinearCrossEntropyLoss(3, 4, label_smoothing=v))
