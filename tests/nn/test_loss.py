"""nn losses: functional forward against NumPy, gradcheck, gradgradcheck, modules, legacy arguments and errors."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad

# ----- NumPy references -----


def _red(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction](loss)


def _log_softmax(x, axis=1):
    s = x - x.max(axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis, keepdims=True))


def _nll_ref(lp, t, w=None, ignore_index=-100, reduction="mean", smoothing=0.0):
    """lp (N, C, ...) log-probabilities, t (N, ...) indices: torch's weighted mean."""
    c = lp.shape[1]
    lpm = np.moveaxis(lp, 1, -1).reshape(-1, c)
    tt = t.reshape(-1)
    m = tt != ignore_index
    ts = np.where(m, tt, 0)
    w = np.ones(c) if w is None else w
    wt = w[ts] * m
    nll = -wt * lpm[np.arange(len(tt)), ts]
    smooth = -(lpm * w).sum(1) * m
    if reduction == "none":
        return ((1 - smoothing) * nll + smoothing / c * smooth).reshape(t.shape)
    if reduction == "sum":
        return (1 - smoothing) * nll.sum() + smoothing / c * smooth.sum()
    return ((1 - smoothing) * nll.sum() + smoothing / c * smooth.sum()) / wt.sum()


def _bce_ref(x, t, w=1.0):
    return -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log(1 - x), -100)) * w


def _bce_logits_ref(x, t, pw=1.0):
    return (1 - t) * x + (1 + (pw - 1) * t) * np.logaddexp(0, -x)


def _smooth_l1_ref(x, y, beta):
    d = np.abs(x - y)
    return np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


def _huber_ref(x, y, delta):
    d = np.abs(x - y)
    return np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))


def _multi_margin_ref(x, t, p=1, margin=1.0, w=None):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != t[i]:
                z = max(0.0, margin - x[i, t[i]] + x[i, j]) ** p
                out[i] += z * (1.0 if w is None else w[t[i]])
    return out / c


def _multilabel_margin_ref(x, t):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        ys = []
        for j in t[i]:
            if j < 0:
                break
            ys.append(j)
        for j in ys:
            for k in range(c):
                if k not in ys:
                    out[i] += max(0.0, 1 - (x[i, j] - x[i, k]))
    return out / c


def _cos_emb_ref(a, b, y, margin):
    cos = (a * b).sum(1) / np.sqrt(((a * a).sum(1) + 1e-12) * ((b * b).sum(1) + 1e-12))
    return np.where(y == 1, 1 - cos, 0) + np.where(y == -1, np.maximum(cos - margin, 0), 0)


def _triplet_ref(a, p, n, margin, pn, eps, swap):
    def dist(u, v):
        return (np.abs(u - v + eps) ** pn).sum(-1) ** (1 / pn)
    dn = dist(a, n)
    if swap:
        dn = np.minimum(dn, dist(p, n))
    return np.maximum(margin + dist(a, p) - dn, 0)


def _ctc_ref(lp, target, T):
    """-log p by summing over all alignments of length T (brute force, tiny cases only)."""
    import itertools
    c = lp.shape[1]
    total = -math.inf
    for path in itertools.product(range(c), repeat=T):
        collapsed = [k for i, k in enumerate(path) if k != 0 and (i == 0 or path[i - 1] != k)]
        if collapsed == list(target):
            total = np.logaddexp(total, sum(lp[t, k] for t, k in enumerate(path)))
    return -total


# ----- inputs -----

def _cls(shape, c, ignore=None):
    def make(rng):
        x = rng.standard_normal(shape)
        t = rng.integers(0, c, (shape[0],) + shape[2:])
        if ignore is not None:
            t.reshape(-1)[::3] = ignore
        return [x, t]
    return make


_W = np.array([0.2, 1.0, 0.5, 2.0])


def _probs(rng, *shape):
    return rng.uniform(0.05, 0.95, shape)


def _sign(rng, *shape):
    return np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


SPECS = [
    OpSpec("ce_mean", lambda x, t: F.cross_entropy(x, t), lambda x, t: _nll_ref(_log_softmax(x), t),
           _cls((5, 4), 4), nondiff=(1,), gradgrad=True),
    OpSpec("ce_weight_ignore", lambda x, t: F.cross_entropy(x, t, ember.tensor(_W, dtype=x.dtype), ignore_index=1),
           lambda x, t: _nll_ref(_log_softmax(x), t, _W, 1), _cls((6, 4), 4), nondiff=(1,), gradgrad=True),
    OpSpec("ce_smoothing_kdim", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2, ignore_index=2),
           lambda x, t: _nll_ref(_log_softmax(x), t, None, 2, "mean", 0.2), _cls((2, 4, 3, 2), 4, ignore=2),
           nondiff=(1,), gradgrad=True),
    OpSpec("ce_smoothing_weight_none",
           lambda x, t: F.cross_entropy(x, t, ember.tensor(_W, dtype=x.dtype), reduction="none",
                                        label_smoothing=0.3),
           lambda x, t: _nll_ref(_log_softmax(x), t, _W, -100, "none", 0.3), _cls((5, 4), 4), nondiff=(1,)),
    OpSpec("ce_sum_kdim", lambda x, t: F.cross_entropy(x, t, reduction="sum"),
           lambda x, t: _nll_ref(_log_softmax(x), t, reduction="sum"), _cls((2, 4, 3), 4), nondiff=(1,)),
    OpSpec("ce_probs", lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1),
           lambda x, p: -((p * 0.9 + 0.025) * _log_softmax(x)).sum(1).mean(),
           lambda rng: [rng.standard_normal((3, 4)), rng.dirichlet(np.ones(4), 3)], gradgrad=True),
    OpSpec("nll_mean", lambda x, t: F.nll_loss(x, t), lambda x, t: _nll_ref(x, t), _cls((5, 4), 4),
           nondiff=(1,), gradgrad=True),
    OpSpec("nll_weight_kdim_none", lambda x, t: F.nll_loss(x, t, ember.tensor(_W, dtype=x.dtype), reduction="none"),
           lambda x, t: _nll_ref(x, t, _W, reduction="none"), _cls((2, 4, 3), 4), nondiff=(1,)),
    OpSpec("nll_weight_ignore_mean", lambda x, t: F.nll_loss(x, t, ember.tensor(_W, dtype=x.dtype), ignore_index=0),
           lambda x, t: _nll_ref(x, t, _W, 0), _cls((2, 4, 3), 4), nondiff=(1,)),
    OpSpec("l1", lambda x, y: F.l1_loss(x, y), lambda x, y: np.abs(x - y).mean(),
           lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]),
    OpSpec("mse_sum", lambda x, y: F.mse_loss(x, y, reduction="sum"), lambda x, y: ((x - y) ** 2).sum(),
           lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))], gradgrad=True),
    OpSpec("bce", lambda x, t: F.binary_cross_entropy(x, t), lambda x, t: _bce_ref(x, t).mean(),
           lambda rng: [_probs(rng, 3, 4), _probs(rng, 3, 4)], gradgrad=True),
    OpSpec("bce_weight_none",
           lambda x, t: F.binary_cross_entropy(x, t, ember.tensor(_W, dtype=x.dtype), reduction="none"),
           lambda x, t: _bce_ref(x, t, _W), lambda rng: [_probs(rng, 3, 4), _probs(rng, 3, 4)]),
    OpSpec("bce_logits_pos_weight",
           lambda x, t: F.binary_cross_entropy_with_logits(x, t, pos_weight=ember.tensor(_W, dtype=x.dtype)),
           lambda x, t: _bce_logits_ref(x, t, _W).mean(),
           lambda rng: [rng.standard_normal((3, 4)) * 4, _probs(rng, 3, 4)], gradgrad=True),
    OpSpec("bce_logits_sum", lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction="sum"),
           lambda x, t: _bce_logits_ref(x, t).sum(),
           lambda rng: [rng.standard_normal((3, 4)) * 4, _probs(rng, 3, 4)]),
    OpSpec("kl_div_batchmean", lambda x, t: F.kl_div(x, t, reduction="batchmean"),
           lambda x, t: (t * (np.log(t) - x)).sum() / x.shape[0],
           lambda rng: [_log_softmax(rng.standard_normal((3, 4))), rng.dirichlet(np.ones(4), 3)], gradgrad=True),
    OpSpec("kl_div_log_target", lambda x, t: F.kl_div(x, t, reduction="sum", log_target=True),
           lambda x, t: (np.exp(t) * (t - x)).sum(),
           lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]),
    OpSpec("smooth_l1", lambda x, y: F.smooth_l1_loss(x, y, beta=0.5), lambda x, y: _smooth_l1_ref(x, y, 0.5).mean(),
           lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]),
    OpSpec("huber", lambda x, y: F.huber_loss(x, y, reduction="none", delta=0.7),
           lambda x, y: _huber_ref(x, y, 0.7),
           lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal((3, 4))]),
    OpSpec("soft_margin", lambda x, y: F.soft_margin_loss(x, y), lambda x, y: np.logaddexp(0, -x * y).mean(),
           lambda rng: [rng.standard_normal((3, 4)), _sign(rng, 3, 4)], nondiff=(1,)),
    OpSpec("multilabel_soft_margin",
           lambda x, y: F.multilabel_soft_margin_loss(x, y, ember.tensor(_W, dtype=x.dtype)),
           lambda x, y: ((y * np.logaddexp(0, -x) + (1 - y) * np.logaddexp(0, x)) * _W).mean(1).mean(),
           lambda rng: [rng.standard_normal((3, 4)), (rng.random((3, 4)) > 0.5) * 1.0], nondiff=(1,)),
    OpSpec("multi_margin_p2", lambda x, t: F.multi_margin_loss(x, t, p=2, margin=0.8,
                                                             weight=ember.tensor(_W, dtype=x.dtype)),
           lambda x, t: _multi_margin_ref(x, t, 2, 0.8, _W).mean(), _cls((5, 4), 4), nondiff=(1,)),
    OpSpec("multi_margin_p1", lambda x, t: F.multi_margin_loss(x, t, reduction="none"),
           lambda x, t: _multi_margin_ref(x, t), _cls((5, 4), 4), nondiff=(1,)),
    OpSpec("multilabel_margin", lambda x, t: F.multilabel_margin_loss(x, t, reduction="none"),
           lambda x, t: _multilabel_margin_ref(x, t),
           lambda rng: [rng.standard_normal((2, 4)), np.array([[3, 0, -1, 1], [1, 2, 3, -1]])], nondiff=(1,)),
    OpSpec("margin_ranking", lambda a, b, y: F.margin_ranking_loss(a, b, y, margin=0.3),
           lambda a, b, y: np.maximum(0, -y * (a - b) + 0.3).mean(),
           lambda rng: [rng.standard_normal(6), rng.standard_normal(6), _sign(rng, 6)], nondiff=(2,)),
    OpSpec("hinge_embedding", lambda x, y: F.hinge_embedding_loss(x, y, margin=0.5, reduction="sum"),
           lambda x, y: (np.where(y == 1, x, 0) + np.where(y == -1, np.maximum(0.5 - x, 0), 0)).sum(),
           lambda rng: [rng.standard_normal((3, 4)), _sign(rng, 3, 4)], nondiff=(1,)),
    OpSpec("cosine_embedding", lambda a, b, y: F.cosine_embedding_loss(a, b, y, margin=0.1, reduction="none"),
           lambda a, b, y: _cos_emb_ref(a, b, y, 0.1),
           lambda rng: [rng.standard_normal((5, 3)), rng.standard_normal((5, 3)), _sign(rng, 5)], nondiff=(2,)),
    OpSpec("triplet_swap", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=2.0, p=1.5, swap=True),
           lambda a, p, n: _triplet_ref(a, p, n, 2.0, 1.5, 1e-6, True).mean(),
           lambda rng: [rng.standard_normal((4, 3)) for _ in range(3)]),
    OpSpec("triplet_distance_fn",
           lambda a, p, n: F.triplet_margin_with_distance_loss(
               a, p, n, distance_function=lambda u, v: ((u - v) ** 2).sum(-1), margin=3.0, reduction="none"),
           lambda a, p, n: np.maximum(3.0 + ((a - p) ** 2).sum(-1) - ((a - n) ** 2).sum(-1), 0),
           lambda rng: [rng.standard_normal((4, 3)) for _ in range(3)]),
    OpSpec("poisson_log_input_full", lambda x, t: F.poisson_nll_loss(x, t, full=True),
           lambda x, t: (np.exp(x) - t * x + np.where(t > 1, t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t),
                                                      0)).mean(),
           lambda rng: [rng.standard_normal((3, 4)), rng.uniform(0.5, 4, (3, 4))], nondiff=(1,)),
    OpSpec("poisson_rate", lambda x, t: F.poisson_nll_loss(x, t, log_input=False, reduction="sum"),
           lambda x, t: (x - t * np.log(x + 1e-8)).sum(),
           lambda rng: [rng.uniform(0.5, 2, (3, 4)), rng.uniform(0, 4, (3, 4))]),
    OpSpec("gaussian_nll", lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
           lambda x, t, v: (0.5 * (np.log(v) + (x - t) ** 2 / v) + 0.5 * np.log(2 * np.pi)).mean(),
           lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.uniform(0.5, 2, (3, 4))]),
    OpSpec("gaussian_nll_var_per_row", lambda x, t, v: F.gaussian_nll_loss(x, t, v, reduction="none"),
           lambda x, t, v: 0.5 * (np.log(v[:, None]) + (x - t) ** 2 / v[:, None]),
           lambda rng: [rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.uniform(0.5, 2, 3)]),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_grad(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgrad(spec):
    check_gradgrad(spec)


# ----- cross entropy details -----

def test_cross_entropy_gradient_is_softmax_minus_onehot():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5))
    t = np.array([0, 3, 4, 1])
    xe = ember.tensor(x, requires_grad=True)
    F.cross_entropy(xe, ember.tensor(t)).backward()
    p = np.exp(_log_softmax(x))
    p[np.arange(4), t] -= 1
    assert_close(xe.grad, p / 4)


def test_cross_entropy_float32_result_and_grad_fn():
    x = ember.randn(6, 3, requires_grad=True)
    loss = F.cross_entropy(x, ember.tensor([0, 1, 2, 0, 1, 2]))
    assert loss.dtype == ember.float32 and loss.shape == ()
    assert loss.grad_fn.name() == "NllLossBackward0"
    loss.backward()
    assert x.grad.dtype == ember.float32
    assert_close(x.grad.sum(1), np.zeros(6), atol=1e-6)


def test_cross_entropy_unbatched_and_uint8_targets():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert_close(F.cross_entropy(x, ember.tensor(2)), -_log_softmax(np.array([1.0, 2.0, 3.0]), 0)[2], atol=1e-6)
    xb = ember.randn(3, 4)
    a = F.cross_entropy(xb, ember.tensor([0, 1, 2], dtype=ember.uint8))
    b = F.cross_entropy(xb, ember.tensor([0, 1, 2]))
    assert_close(a, b.numpy())


def test_all_targets_ignored_gives_nan():
    loss = F.cross_entropy(ember.randn(2, 3), ember.tensor([1, 1]), ignore_index=1)
    assert math.isnan(loss.item())


def test_class_index_errors():
    x = ember.randn(3, 4)
    with pytest.raises(IndexError, match=r"^Target 5 is out of bounds\.$"):
        F.nll_loss(x, ember.tensor([1, 5, 0]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target batch_size \(2\)\."):
        F.cross_entropy(x, ember.tensor([1, 0]))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte, but got Float"):
        F.nll_loss(x, ember.tensor([1.0, 0.0, 1.0]))
    with pytest.raises(RuntimeError, match=r"Expected target size \[2, 4\], got \[2, 5\]"):
        F.nll_loss(ember.randn(2, 3, 4), ember.zeros(2, 5, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 4 classes"):
        F.cross_entropy(x, ember.tensor([1, 1, 0]), weight=ember.ones(3))
    with pytest.raises(ValueError, match="Expected 1 or more dimensions"):
        F.nll_loss(ember.tensor(1.0), ember.tensor(0))


# ----- other losses -----

def test_bce_clamps_log_and_checks_range():
    x = ember.tensor([0.0, 1.0, 0.5], requires_grad=True)
    t = ember.tensor([1.0, 0.0, 1.0])
    loss = F.binary_cross_entropy(x, t, reduction="none")
    assert_close(loss, [100.0, 100.0, np.log(2)])
    loss.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([1.5]), ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([float("nan")]), ember.tensor([1.0]))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([2.0]))
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([-0.5]))
    with pytest.raises(ValueError, match="is deprecated. Please ensure they have the same size"):
        F.binary_cross_entropy(ember.tensor([0.5]), ember.tensor([[1.0]]))


def test_bce_with_logits_is_stable_and_exact_at_zero():
    x = ember.tensor([-200.0, 0.0, 200.0], requires_grad=True)
    t = ember.tensor([1.0, 0.25, 0.0])
    loss = F.binary_cross_entropy_with_logits(x, t, reduction="none")
    assert_close(loss, [200.0, np.log(2), 200.0])
    loss.sum().backward()
    assert_close(x.grad, [-1.0, 0.25, 1.0])


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(ember.randn(2, 3), ember.rand(2, 3))


def test_l1_size_mismatch_warns():
    with pytest.warns(UserWarning, match="Using a target size"):
        F.l1_loss(ember.randn(3), ember.randn(2, 3))


def test_reduction_errors_and_legacy_arguments():
    with pytest.raises(ValueError, match="x is not a valid value for reduction"):
        F.mse_loss(ember.randn(3), ember.randn(3), reduction="x")
    x, y = ember.randn(3, 2), ember.randn(3, 2)
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        s = F.mse_loss(x, y, size_average=False)
    assert_close(s, ((x.numpy() - y.numpy()) ** 2).sum(), atol=1e-5)
    with pytest.warns(UserWarning, match="reduction='none'"):
        m = nn.L1Loss(reduce=False)
    assert m.reduction == "none"


def test_gaussian_nll_errors():
    x = ember.randn(3, 4)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, x, ember.ones(2))
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(x, x, -ember.ones(3, 4))


# ----- CTC -----

def test_ctc_matches_brute_force_and_gradcheck():
    rng = np.random.default_rng(0)
    T, N, C = 4, 2, 3
    lp = _log_softmax(rng.standard_normal((T, N, C)), 2)
    targets = np.array([[1, 2], [1, 1]])
    loss = F.ctc_loss(ember.tensor(lp), ember.tensor(targets), [4, 4], [2, 2], reduction="none")
    assert_close(loss, [_ctc_ref(lp[:, 0], [1, 2], 4), _ctc_ref(lp[:, 1], [1, 1], 4)])
    x = ember.tensor(rng.standard_normal((T, N, C)), requires_grad=True)
    assert gradcheck(lambda a: F.ctc_loss(a, ember.tensor(targets), [4, 3], [2, 1]), [x])
    assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(2), ember.tensor([1, 2, 2]), ember.tensor([4, 4]),
                                          ember.tensor([2, 1]), reduction="sum"), [x])


def test_ctc_impossible_alignment():
    lp = ember.randn(2, 1, 3).log_softmax(2)
    t = ember.tensor([[1, 1]])
    assert math.isinf(F.ctc_loss(lp, t, [2], [2], reduction="sum").item())
    assert F.ctc_loss(lp, t, [2], [2], reduction="sum", zero_infinity=True).item() == 0.0


# ----- modules -----

def test_modules_forward_like_functional():
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((5, 4)))
    t = ember.tensor(rng.integers(0, 4, 5))
    w = ember.tensor(_W)
    assert_close(nn.CrossEntropyLoss(w, label_smoothing=0.1)(x, t), F.cross_entropy(x, t, w, label_smoothing=0.1))
    assert_close(nn.NLLLoss(w, ignore_index=2, reduction="sum")(x, t),
                 F.nll_loss(x, t, w, ignore_index=2, reduction="sum"))
    y = ember.tensor(rng.standard_normal((5, 4)))
    assert_close(nn.MSELoss()(x, y), F.mse_loss(x, y))
    assert_close(nn.HuberLoss(delta=0.5)(x, y), F.huber_loss(x, y, delta=0.5))
    assert_close(nn.SmoothL1Loss(beta=0.5)(x, y), F.smooth_l1_loss(x, y, beta=0.5))
    assert_close(nn.BCEWithLogitsLoss(pos_weight=w)(x, y.sigmoid()),
                 F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=w))
    assert_close(nn.TripletMarginLoss(margin=0.5)(x, y, -x), F.triplet_margin_loss(x, y, -x, margin=0.5))
    assert_close(nn.GaussianNLLLoss()(x, y, ember.ones(5, 4)), F.gaussian_nll_loss(x, y, ember.ones(5, 4)))


def test_weight_buffers_and_repr():
    m = nn.CrossEntropyLoss(weight=ember.ones(3))
    assert list(m.state_dict()) == ["weight"]
    assert repr(m) == "CrossEntropyLoss()"
    b = nn.BCEWithLogitsLoss(pos_weight=ember.ones(2))
    assert list(dict(b.named_buffers())) == ["pos_weight"]
    assert nn.L1Loss().reduction == "mean"
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="expected margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0)


@pytest.mark.parametrize("name,fn", [
    ("MseLossBackward0", lambda x, p, r: F.mse_loss(x, p, reduction=r)),
    ("SmoothL1LossBackward0", lambda x, p, r: F.smooth_l1_loss(x, p, reduction=r)),
    ("HuberLossBackward0", lambda x, p, r: F.huber_loss(x, p, reduction=r)),
    ("BinaryCrossEntropyBackward0", lambda x, p, r: F.binary_cross_entropy(x.sigmoid(), p, reduction=r)),
    ("BinaryCrossEntropyBackward0", lambda x, p, r: F.binary_cross_entropy(x.sigmoid(), p, ember.ones(3),
                                                                           reduction=r)),
    ("BinaryCrossEntropyWithLogitsBackward0", lambda x, p, r: F.binary_cross_entropy_with_logits(x, p, reduction=r)),
    ("SoftMarginLossBackward0", lambda x, p, r: F.soft_margin_loss(x, p, reduction=r)),
    ("MultiMarginLossBackward0", lambda x, p, r: F.multi_margin_loss(x, ember.tensor([0, 2]), reduction=r)),
    ("MultilabelMarginLossBackward0", lambda x, p, r: F.multilabel_margin_loss(x, ember.tensor([[1, -1, 0]] * 2),
                                                                              reduction=r)),
])
def test_fused_losses_carry_torch_grad_fn_name(name, fn):
    # printing a loss shows its grad_fn: torch's fused kernels name the loss, not the final mean
    x = ember.tensor([[0.2, -0.4, 0.9], [0.1, 0.3, -0.7]], requires_grad=True)
    p = ember.tensor([[0.5, 0.1, 0.9], [0.0, 1.0, 0.3]])
    for r in ("mean", "sum", "none"):
        loss = fn(x, p, r)
        assert loss.grad_fn.name() == name
    loss = fn(x, p, "mean")
    loss.backward()
    assert x.grad is not None and x.grad.shape == x.shape
    assert f"grad_fn=<{name}>" in repr(loss)


def test_mse_named_mean_keeps_value_and_gradient():
    x = ember.tensor([1.0, 2.0, 4.0], requires_grad=True)
    loss = F.mse_loss(x, ember.tensor([0.0, 0.0, 1.0]))
    assert_close(loss, np.float32((1 + 4 + 9) / 3))
    loss.backward()
    assert_close(x.grad, np.array([2 / 3, 4 / 3, 2.0], np.float32))


def test_nll_loss_with_spatial_dims_is_named_2d():
    x = ember.randn(2, 3, 4, requires_grad=True)
    t = ember.tensor([[0, 1, 2, 1], [2, 2, 0, 1]])
    assert F.cross_entropy(x, t).grad_fn.name() == "NllLoss2DBackward0"
    assert F.nll_loss(x, t, reduction="sum").grad_fn.name() == "NllLoss2DBackward0"
    assert F.nll_loss(x, t, reduction="none").grad_fn.name() == "ViewBackward0"
    assert F.nll_loss(x.unsqueeze(-1), t.unsqueeze(-1), reduction="none").grad_fn.name() == "NllLoss2DBackward0"
    assert F.cross_entropy(x[:, :, 0], t[:, 0]).grad_fn.name() == "NllLossBackward0"
    assert F.cross_entropy(x, t, label_smoothing=0.1).grad_fn.name() == "AddBackward0"
    probs = ember.tensor([[0.2, 0.3, 0.5]])
    assert F.cross_entropy(x[:1, :, 0], probs, reduction="sum").grad_fn.name() == "NegBackward0"


def test_loss_target_dtype_rules():
    x = ember.tensor([[0.3, -0.2], [0.1, 0.5]])
    long_t = ember.tensor([[1, 0], [0, 1]])
    bool_t = long_t.bool()
    with pytest.raises(RuntimeError, match="^Found dtype Long but expected Float$"):
        F.binary_cross_entropy(x.sigmoid(), long_t)
    with pytest.raises(RuntimeError, match="^Found dtype Double but expected Float$"):
        F.binary_cross_entropy(x.sigmoid(), long_t.double())
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        F.binary_cross_entropy_with_logits(x, long_t)
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
        F.binary_cross_entropy_with_logits(x, bool_t)
    with pytest.raises(RuntimeError, match="^kl_div: Integral inputs not supported.$"):
        F.kl_div(x, long_t, reduction="batchmean")
    with pytest.raises(RuntimeError, match="Expected floating point type for target with class probabilities, got Long"):
        F.cross_entropy(x, long_t)
    # bool targets are promoted by mse / smooth_l1 / huber / soft_margin
    assert_close(F.mse_loss(x, bool_t), np.float32(((0.3 - 1) ** 2 + 0.04 + 0.01 + 0.25) / 4))
    assert F.smooth_l1_loss(x, bool_t).dtype == ember.float32
    assert F.soft_margin_loss(x, bool_t).dtype == ember.float32
    # huber and soft_margin keep the input's dtype; mse promotes
    assert F.huber_loss(x, long_t.double()).dtype == ember.float32
    assert F.soft_margin_loss(x, long_t.double()).dtype == ember.float32
    assert F.mse_loss(x, long_t.double()).dtype == ember.float64


def test_class_losses_refuse_integer_input():
    t = ember.tensor([0, 1])
    with pytest.raises(NotImplementedError, match="\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        F.cross_entropy(ember.tensor([[1, 2], [3, 4]]), t)
    with pytest.raises(NotImplementedError, match="\"log_softmax_kernel_impl\" not implemented for 'Long'"):
        F.cross_entropy(ember.ones(2, 3, 4, dtype=ember.int64), ember.zeros(2, 4, dtype=ember.int64))
    with pytest.raises(NotImplementedError, match="\"nll_loss_out_frame\" not implemented for 'Bool'"):
        F.nll_loss(ember.tensor([[True, False], [False, True]]), t)


def test_nll_loss_2d_is_the_deprecated_nll_loss():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        m = nn.NLLLoss2d(ignore_index=0)
    assert isinstance(m, nn.NLLLoss) and m.ignore_index == 0



@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_named_loss_reductions_gradcheck(reduction):
    from ember.autograd import gradgradcheck
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    y = ember.rand(3, 4, dtype=ember.float64)
    for fn in (F.mse_loss, F.smooth_l1_loss, F.huber_loss, F.binary_cross_entropy_with_logits, F.soft_margin_loss):
        assert gradcheck(lambda a: fn(a, y, reduction=reduction), (x,))
        assert gradgradcheck(lambda a: fn(a, y, reduction=reduction), (x,))
    probs = y.softmax(1)
    assert gradcheck(lambda a: F.cross_entropy(a, probs, reduction=reduction), (x,))


def test_gaussian_nll_loss_takes_var_broadcast_over_one_dimension_as_torch():
    x, t = ember.zeros(4, 3), ember.ones(4, 3)
    for var in (ember.ones(4, 1), ember.ones(4), ember.ones(1, 3), ember.full((4, 3), 1.0)):
        assert float(F.gaussian_nll_loss(x, t, var)) == pytest.approx(0.5)
    for var in (ember.ones(3), ember.ones(2, 3), ember.ones(4, 3, 1)):
        with pytest.raises(ValueError, match="var is of incorrect size"):
            F.gaussian_nll_loss(x, t, var)


def test_multilabel_margin_loss_counts_a_repeated_target_each_time():
    x = ember.tensor([[0.1, 0.2, 0.4, 0.8]])
    # targets 3, 3, 0: the pairs (3, k) count twice for k in {1, 2}; torch 2.13 gives 1.1
    loss = F.multilabel_margin_loss(x, ember.tensor([[3, 3, 0, -1]]))
    want = (2 * ((1 - 0.8 + 0.2) + (1 - 0.8 + 0.4)) + (1 - 0.1 + 0.2) + (1 - 0.1 + 0.4)) / 4
    assert float(loss) == pytest.approx(want) == pytest.approx(1.1)
