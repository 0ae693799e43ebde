"""Softmax family and losses against real torch: values, dtypes, gradients, module reprs and error messages."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 4))
T = RNG.integers(0, 4, 5)
X3 = RNG.standard_normal((2, 4, 3, 2))
T3 = RNG.integers(0, 4, (2, 3, 2))
W = RNG.random(4) + 0.1
U = RNG.uniform(0.05, 0.95, (3, 4))
V = RNG.uniform(0.05, 0.95, (3, 4))
Y = np.where(RNG.standard_normal((3, 4)) > 0, 1.0, -1.0)


def _dtype_name(d):
    return str(d).split(".")[-1]


def _compare(fe, ft, arrays, grad=(0,), dtype=np.float64, atol=1e-6):
    """Runs fe on ember tensors and ft on torch tensors; compares outputs, dtypes and gradients."""
    cast = [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]
    te = [ember.tensor(a) for a in cast]
    tt = [torch.tensor(a) for a in cast]
    for i in grad:
        te[i].requires_grad_(True)
        tt[i].requires_grad_(True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oe = fe(*te)
        ot = ft(*tt)
    assert _dtype_name(oe.dtype) == _dtype_name(ot.dtype)
    assert tuple(oe.shape) == tuple(ot.shape)
    np.testing.assert_allclose(oe.detach().numpy(), ot.detach().numpy(), atol=atol, rtol=1e-5, equal_nan=True)
    if grad:
        go = RNG.standard_normal(tuple(ot.shape)).astype(dtype)
        oe.backward(ember.tensor(go))
        ot.backward(torch.tensor(go))
        for i in grad:
            np.testing.assert_allclose(te[i].grad.numpy(), tt[i].grad.numpy(), atol=atol, rtol=1e-5)


REDUCTIONS = ["none", "mean", "sum"]


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_family(name, dim, dtype):
    _compare(lambda x: getattr(F, name)(x, dim), lambda x: getattr(TF, name)(x, dim), [X3[0]], dtype=dtype,
             atol=1e-5)


def test_softmax_dtype_argument_and_implicit_dim():
    _compare(lambda x: F.softmax(x, 1, dtype=ember.float64), lambda x: TF.softmax(x, 1, dtype=torch.float64),
             [X], dtype=np.float32)
    for nd in range(4):
        a = RNG.standard_normal((2,) * nd)
        _compare(lambda x: F.log_softmax(x), lambda x: TF.log_softmax(x), [a])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("ignore_index", [-100, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kdim", [False, True])
def test_cross_entropy_indices(reduction, smoothing, ignore_index, weighted, kdim):
    x, t = (X3, T3) if kdim else (X, T)
    kw = {"ignore_index": ignore_index, "reduction": reduction, "label_smoothing": smoothing}
    _compare(lambda a, b: F.cross_entropy(a, b, ember.tensor(W) if weighted else None, **kw),
             lambda a, b: TF.cross_entropy(a, b, torch.tensor(W) if weighted else None, **kw), [x, t])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [-100, 1])
@pytest.mark.parametrize("kdim", [False, True])
def test_nll_loss(reduction, ignore_index, kdim):
    x, t = (X3, T3) if kdim else (X, T)
    kw = {"ignore_index": ignore_index, "reduction": reduction}
    _compare(lambda a, b: F.nll_loss(a, b, ember.tensor(W), **kw),
             lambda a, b: TF.nll_loss(a, b, torch.tensor(W), **kw), [x, t])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_probabilities(reduction, smoothing):
    p = RNG.dirichlet(np.ones(4), 5)
    _compare(lambda a, b: F.cross_entropy(a, b, ember.tensor(W), reduction=reduction, label_smoothing=smoothing),
             lambda a, b: TF.cross_entropy(a, b, torch.tensor(W), reduction=reduction, label_smoothing=smoothing),
             [X, p], grad=(0, 1))
    p3 = RNG.random(X3.shape)
    _compare(lambda a, b: F.cross_entropy(a, b, reduction=reduction, label_smoothing=smoothing),
             lambda a, b: TF.cross_entropy(a, b, reduction=reduction, label_smoothing=smoothing), [X3, p3],
             grad=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_unbatched_and_float32(reduction):
    _compare(lambda a, b: F.cross_entropy(a, b, reduction=reduction, label_smoothing=0.1),
             lambda a, b: TF.cross_entropy(a, b, reduction=reduction, label_smoothing=0.1), [X[0], np.array(2)])
    _compare(lambda a, b: F.cross_entropy(a, b, reduction=reduction), lambda a, b: TF.cross_entropy(a, b,
             reduction=reduction), [X, T], dtype=np.float32, atol=1e-5)


ELEMENTWISE = [
    ("l1_loss", {}), ("mse_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("smooth_l1_loss", {"beta": 0.0}),
    ("huber_loss", {"delta": 0.7}), ("binary_cross_entropy", {}), ("binary_cross_entropy_with_logits", {}),
    ("kl_div", {}), ("kl_div", {"log_target": True}), ("poisson_nll_loss", {}),
    ("poisson_nll_loss", {"log_input": False, "full": True}),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw", ELEMENTWISE, ids=[f"{n}{k}" for n, k in ELEMENTWISE])
def test_elementwise_losses(name, kw, reduction):
    _compare(lambda a, b: getattr(F, name)(a, b, reduction=reduction, **kw),
             lambda a, b: getattr(TF, name)(a, b, reduction=reduction, **kw), [U, V * 3 if "poisson" in name else V],
             grad=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
def test_kl_div_reductions(reduction):
    _compare(lambda a, b: F.kl_div(a, b, reduction=reduction), lambda a, b: TF.kl_div(a, b, reduction=reduction),
             [np.log(U), V], grad=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_weights(reduction):
    _compare(lambda a, b: F.binary_cross_entropy(a, b, ember.tensor(W), reduction=reduction),
             lambda a, b: TF.binary_cross_entropy(a, b, torch.tensor(W), reduction=reduction), [U, V], grad=(0, 1))
    _compare(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, ember.tensor(W), reduction=reduction,
                                                                pos_weight=c),
             lambda a, b, c: TF.binary_cross_entropy_with_logits(a, b, torch.tensor(W), reduction=reduction,
                                                                 pos_weight=c),
             [X[:3] * 5, V, W[::-1].copy()], grad=(0, 1))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_losses(reduction):
    r = {"reduction": reduction}
    _compare(lambda a, b: F.soft_margin_loss(a, b, **r), lambda a, b: TF.soft_margin_loss(a, b, **r), [X[:3], Y])
    _compare(lambda a, b: F.multilabel_soft_margin_loss(a, b, ember.tensor(W), **r),
             lambda a, b: TF.multilabel_soft_margin_loss(a, b, torch.tensor(W), **r), [X[:3], (V > 0.5) * 1.0])
    for p in (1, 2):
        _compare(lambda a, b, p=p: F.multi_margin_loss(a, b, p, 0.7, ember.tensor(W), **r),
                 lambda a, b, p=p: TF.multi_margin_loss(a, b, p, 0.7, torch.tensor(W), **r), [X, T])
    _compare(lambda a, b: F.multilabel_margin_loss(a, b, **r), lambda a, b: TF.multilabel_margin_loss(a, b, **r),
             [X[:2], np.array([[3, 0, -1, 1], [1, 2, 3, -1]])])
    _compare(lambda a, b, c: F.margin_ranking_loss(a, b, c, 0.3, **r),
             lambda a, b, c: TF.margin_ranking_loss(a, b, c, 0.3, **r), [X[0], X[1], Y[0]], grad=(0, 1))
    _compare(lambda a, b: F.hinge_embedding_loss(a, b, 0.5, **r),
             lambda a, b: TF.hinge_embedding_loss(a, b, 0.5, **r), [X[:3], Y])
    _compare(lambda a, b, c: F.cosine_embedding_loss(a, b, c, 0.1, **r),
             lambda a, b, c: TF.cosine_embedding_loss(a, b, c, 0.1, **r), [X[:3], U, Y[:, 0]], grad=(0, 1))
    for swap in (False, True):
        _compare(lambda a, b, c, s=swap: F.triplet_margin_loss(a, b, c, 0.5, 1.5, swap=s, **r),
                 lambda a, b, c, s=swap: TF.triplet_margin_loss(a, b, c, 0.5, 1.5, swap=s, **r), [X[:3], U, V],
                 grad=(0, 1, 2))
    _compare(lambda a, b, c: F.triplet_margin_with_distance_loss(a, b, c, swap=True, **r),
             lambda a, b, c: TF.triplet_margin_with_distance_loss(a, b, c, swap=True, **r), [X[:3], U, V],
             grad=(0, 1, 2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1)])
def test_gaussian_nll(reduction, var_shape):
    var = RNG.uniform(0.5, 2, var_shape)
    _compare(lambda a, b, c: F.gaussian_nll_loss(a, b, c, full=True, reduction=reduction),
             lambda a, b, c: TF.gaussian_nll_loss(a, b, c, full=True, reduction=reduction), [X[:3], U, var],
             grad=(0, 1, 2))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc(reduction):
    tn, n, c = 7, 3, 5
    lp = RNG.standard_normal((tn, n, c))
    tg = RNG.integers(1, c, (n, 3))
    il, tl = [7, 6, 5], [3, 2, 1]
    _compare(lambda a, b: F.ctc_loss(a.log_softmax(2), b, il, tl, reduction=reduction),
             lambda a, b: TF.ctc_loss(a.log_softmax(2), b, il, tl, reduction=reduction), [lp, tg])
    cat = np.concatenate([tg[0, :3], tg[1, :2], tg[2, :1]])
    _compare(lambda a, b: F.ctc_loss(a.log_softmax(2), b, ember.tensor(il), ember.tensor(tl), reduction=reduction),
             lambda a, b: TF.ctc_loss(a.log_softmax(2), b, torch.tensor(il), torch.tensor(tl),
                                      reduction=reduction), [lp, cat])
    rep = np.array([[1, 1, 2], [2, 2, 2], [3, 1, 3]])
    _compare(lambda a, b: F.ctc_loss(a.log_softmax(2), b, [2, 7, 7], [3, 3, 3], reduction=reduction,
                                     zero_infinity=True),
             lambda a, b: TF.ctc_loss(a.log_softmax(2), b, [2, 7, 7], [3, 3, 3], reduction=reduction,
                                      zero_infinity=True), [lp, rep])


MODULES = list(nn.modules.loss.__all__)


@pytest.mark.parametrize("name", MODULES)
def test_module_repr_and_attributes(name):
    e, t = getattr(nn, name)(), getattr(torch.nn, name)()
    assert repr(e) == repr(t)
    for k, v in vars(t).items():
        if not k.startswith("_") and k not in ("training", "distance_function"):
            assert getattr(e, k) == v, k
    assert list(dict(e.named_buffers())) == list(dict(t.named_buffers()))


def test_weighted_module_buffers():
    e = nn.BCEWithLogitsLoss(ember.ones(4), pos_weight=ember.ones(4))
    t = torch.nn.BCEWithLogitsLoss(torch.ones(4), pos_weight=torch.ones(4))
    assert list(e.state_dict()) == list(t.state_dict())
    e = nn.CrossEntropyLoss(ember.ones(4), label_smoothing=0.1)
    t = torch.nn.CrossEntropyLoss(torch.ones(4), label_smoothing=0.1)
    assert list(e.state_dict()) == list(t.state_dict()) and repr(e) == repr(t)


def _err(fe, ft):
    with pytest.raises(Exception) as te:
        ft()
    with pytest.raises(type(te.value)) as ee:
        fe()
    assert str(ee.value) == str(te.value)


def test_error_messages():
    xe, xt = ember.tensor(X), torch.tensor(X)
    _err(lambda: F.nll_loss(xe, ember.tensor([1, 5, 0, 1, 1])), lambda: TF.nll_loss(xt, torch.tensor([1, 5, 0, 1, 1])))
    _err(lambda: F.cross_entropy(xe, ember.tensor([1, 0])), lambda: TF.cross_entropy(xt, torch.tensor([1, 0])))
    _err(lambda: F.cross_entropy(xe, ember.tensor(T).double()), lambda: TF.cross_entropy(xt, torch.tensor(T).double()))
    _err(lambda: F.nll_loss(xe, ember.tensor(T), ember.ones(3)), lambda: TF.nll_loss(xt, torch.tensor(T),
                                                                                      torch.ones(3)))
    _err(lambda: F.nll_loss(ember.tensor(X3), ember.zeros(2, 5, dtype=ember.int64)),
         lambda: TF.nll_loss(torch.tensor(X3), torch.zeros(2, 5, dtype=torch.long)))
    for xs, ts in [((2, 4, 3, 2), (2, 3, 3)), ((2, 4, 3, 2), (2, 3, 2, 1)), ((2, 4, 3, 2, 2), (2, 3, 2)),
                   ((2, 4, 3), (2, 3, 1))]:
        _err(lambda xs=xs, ts=ts: F.nll_loss(ember.zeros(xs), ember.zeros(ts, dtype=ember.int64)),
             lambda xs=xs, ts=ts: TF.nll_loss(torch.zeros(xs), torch.zeros(ts, dtype=torch.long)))
    _err(lambda: F.nll_loss(xe[0], ember.tensor([1, 2])), lambda: TF.nll_loss(xt[0], torch.tensor([1, 2])))
    _err(lambda: F.mse_loss(xe, xe, reduction="avg"), lambda: TF.mse_loss(xt, xt, reduction="avg"))
    _err(lambda: F.binary_cross_entropy(ember.tensor([2.0]), ember.tensor([1.0])),
         lambda: TF.binary_cross_entropy(torch.tensor([2.0]), torch.tensor([1.0])))
    _err(lambda: F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([[1.0]])),
         lambda: TF.binary_cross_entropy(torch.tensor([0.5]), torch.tensor([[1.0]])))
    _err(lambda: F.binary_cross_entropy_with_logits(ember.tensor([0.5]), ember.tensor([[1.0]])),
         lambda: TF.binary_cross_entropy_with_logits(torch.tensor([0.5]), torch.tensor([[1.0]])))
    _err(lambda: F.softmax(ember.arange(3), 0), lambda: TF.softmax(torch.arange(3), 0))
    _err(lambda: F.gaussian_nll_loss(xe, xe, ember.ones(2)), lambda: TF.gaussian_nll_loss(xt, xt, torch.ones(2)))
    _err(lambda: nn.MultiMarginLoss(p=3), lambda: torch.nn.MultiMarginLoss(p=3))


def test_warnings_match():
    for fe, ft in [(lambda: F.kl_div(ember.tensor(U), ember.tensor(V)), lambda: TF.kl_div(torch.tensor(U),
                                                                                           torch.tensor(V))),
                   (lambda: F.l1_loss(ember.tensor(U[0]), ember.tensor(U)), lambda: TF.l1_loss(torch.tensor(U[0]),
                                                                                               torch.tensor(U))),
                   (lambda: F.mse_loss(ember.tensor(U), ember.tensor(U), reduce=False),
                    lambda: TF.mse_loss(torch.tensor(U), torch.tensor(U), reduce=False)),
                   (lambda: F.softmax(ember.tensor(U)), lambda: TF.softmax(torch.tensor(U)))]:
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            fe()
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            ft()
        assert [str(w.message) for w in we] == [str(w.message) for w in wt]


def test_more_error_messages():
    cases = [
        lambda m, f: f.multi_margin_loss(m.zeros(3, 4), m.tensor([0, 1])),
        lambda m, f: f.multi_margin_loss(m.zeros(4), m.tensor([0, 1])),
        lambda m, f: f.cosine_embedding_loss(m.zeros(3, 2), m.zeros(3, 2), m.zeros(3, 1)),
        lambda m, f: f.cosine_embedding_loss(m.zeros(3, 2), m.zeros(3, 2), m.tensor(1.0)),
        lambda m, f: f.cosine_embedding_loss(m.zeros(3, 2), m.zeros(3), m.ones(3)),
        lambda m, f: f.cross_entropy(m.zeros(3, 2), m.ones(3, 2), weight=m.ones(3)),
        lambda m, f: f.cross_entropy(m.zeros(3, 2), m.ones(3, dtype=m.int64), weight=m.ones(3)),
        lambda m, f: f.cross_entropy(m.zeros(3, 2), m.tensor([0, 1, 1], dtype=m.int32)),
        lambda m, f: f.ctc_loss(m.zeros(5, 2, 3), m.ones(2, 2, dtype=m.int64), [6, 5], [2, 2]),
        lambda m, f: f.ctc_loss(m.zeros(5, 2, 3), m.ones(2, 2, dtype=m.int64), [5, 5], [2, 2], blank=3),
        lambda m, f: f.ctc_loss(m.zeros(5, 2, 3), m.ones(2, 3, dtype=m.int64), [5, 5], [2, 4]),
        lambda m, f: f.ctc_loss(m.zeros(5, 2, 3), m.ones(5, dtype=m.int64), [5, 5], [2, 4]),
    ]
    for case in cases:
        _err(lambda c=case: c(ember, F), lambda c=case: c(torch, TF))
