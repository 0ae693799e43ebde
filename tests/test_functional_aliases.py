"""torch's top-level spellings of nn.functional ops: argument mapping checked against nn.functional."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck
from tests.helpers import assert_close


def _r(*shape, seed=0):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape))


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert a.dtype == b.dtype
    assert_close(a, b.detach().numpy(), atol=1e-12, rtol=1e-12)


x1, x2, x3 = _r(2, 4, 7), _r(2, 4, 6, 5), _r(1, 2, 4, 5, 6)

CASES = [
    ("conv1d", lambda: ember.conv1d(x1, _r(3, 4, 3), _r(3), 2, 1), lambda: F.conv1d(x1, _r(3, 4, 3), _r(3), 2, 1)),
    ("conv2d", lambda: ember.conv2d(x2, _r(2, 2, 3, 3), None, 1, 1, 1, 2),
     lambda: F.conv2d(x2, _r(2, 2, 3, 3), None, 1, 1, 1, 2)),
    ("conv3d", lambda: ember.conv3d(x3, _r(3, 2, 2, 2, 2)), lambda: F.conv3d(x3, _r(3, 2, 2, 2, 2))),
    ("conv_transpose1d", lambda: ember.conv_transpose1d(x1, _r(4, 2, 3), None, 2, 1, 1),
     lambda: F.conv_transpose1d(x1, _r(4, 2, 3), None, 2, 1, 1)),
    ("conv_transpose2d", lambda: ember.conv_transpose2d(x2, _r(4, 3, 2, 2), _r(3), 2),
     lambda: F.conv_transpose2d(x2, _r(4, 3, 2, 2), _r(3), 2)),
    ("conv_transpose3d", lambda: ember.conv_transpose3d(x3, _r(2, 1, 2, 2, 2)),
     lambda: F.conv_transpose3d(x3, _r(2, 1, 2, 2, 2))),
    ("layer_norm", lambda: ember.layer_norm(x2, [6, 5], _r(6, 5), _r(6, 5), 1e-3, True),
     lambda: F.layer_norm(x2, [6, 5], _r(6, 5), _r(6, 5), 1e-3)),
    ("group_norm", lambda: ember.group_norm(x2, 2, _r(4), _r(4), 1e-5, True),
     lambda: F.group_norm(x2, 2, _r(4), _r(4))),
    ("batch_norm", lambda: ember.batch_norm(x2, _r(4), _r(4, seed=1), None, None, True, 0.1, 1e-5, False),
     lambda: F.batch_norm(x2, None, None, _r(4), _r(4, seed=1), True, 0.1, 1e-5)),
    ("instance_norm", lambda: ember.instance_norm(x2, _r(4), _r(4, seed=1), None, None, True, 0.1, 1e-5, False),
     lambda: F.instance_norm(x2, None, None, _r(4), _r(4, seed=1), True, 0.1, 1e-5)),
    ("rms_norm", lambda: ember.rms_norm(x2, [5], _r(5)), lambda: F.rms_norm(x2, [5], _r(5))),
    ("max_pool1d", lambda: ember.max_pool1d(x1, 2), lambda: F.max_pool1d(x1, 2)),
    ("max_pool2d", lambda: ember.max_pool2d(x2, 2, 1, 1, 1, True), lambda: F.max_pool2d(x2, 2, 1, 1, 1, True)),
    ("max_pool3d", lambda: ember.max_pool3d(x3, 2), lambda: F.max_pool3d(x3, 2)),
    ("avg_pool1d", lambda: ember.avg_pool1d(x1, 3, 2, 1, True, False), lambda: F.avg_pool1d(x1, 3, 2, 1, True, False)),
    ("adaptive_avg_pool1d", lambda: ember.adaptive_avg_pool1d(x1, 3), lambda: F.adaptive_avg_pool1d(x1, 3)),
    ("adaptive_max_pool1d", lambda: ember.adaptive_max_pool1d(x1, 3), lambda: F.adaptive_max_pool1d(x1, 3, True)),
    ("pixel_shuffle", lambda: ember.pixel_shuffle(x2, 2), lambda: F.pixel_shuffle(x2, 2)),
    ("pixel_unshuffle", lambda: ember.pixel_unshuffle(_r(1, 2, 4, 6), 2), lambda: F.pixel_unshuffle(_r(1, 2, 4, 6), 2)),
    ("channel_shuffle", lambda: ember.channel_shuffle(x2, 2), lambda: F.channel_shuffle(x2, 2)),
    ("cosine_similarity", lambda: ember.cosine_similarity(x2, _r(2, 4, 6, 5, seed=1), 2),
     lambda: F.cosine_similarity(x2, _r(2, 4, 6, 5, seed=1), 2)),
    ("pairwise_distance", lambda: ember.pairwise_distance(_r(3, 4), _r(3, 4, seed=1), 1.0, 1e-6, True),
     lambda: F.pairwise_distance(_r(3, 4), _r(3, 4, seed=1), 1.0, 1e-6, True)),
    ("pdist", lambda: ember.pdist(_r(4, 3), 3), lambda: F.pdist(_r(4, 3), 3)),
    ("bilinear", lambda: ember.bilinear(_r(2, 3), _r(2, 4), _r(5, 3, 4), _r(5)),
     lambda: F.bilinear(_r(2, 3), _r(2, 4), _r(5, 3, 4), _r(5))),
    ("prelu", lambda: ember.prelu(x2, _r(4)), lambda: F.prelu(x2, _r(4))),
    ("rrelu_eval", lambda: ember.rrelu(x1, 0.1, 0.3), lambda: F.rrelu(x1, 0.1, 0.3)),
    ("selu", lambda: ember.selu(x1), lambda: F.selu(x1)),
    ("celu", lambda: ember.celu(x1, 0.5), lambda: F.celu(x1, 0.5)),
    ("threshold", lambda: ember.threshold(x1, 0.1, -2.0), lambda: F.threshold(x1, 0.1, -2.0)),
    ("hardshrink", lambda: ember.hardshrink(x1, 0.3), lambda: F.hardshrink(x1, 0.3)),
    ("constant_pad_nd", lambda: ember.constant_pad_nd(x1, [1, 2, 0, 1], 3.5),
     lambda: F.pad(x1, [1, 2, 0, 1], value=3.5)),
]


@pytest.mark.parametrize("name,got,expected", CASES, ids=[c[0] for c in CASES])
def test_matches_functional(name, got, expected):
    _same(got(), expected())


def test_adaptive_max_pool1d_returns_tuple():
    out = ember.adaptive_max_pool1d(x1, 3)
    assert type(out) is tuple and len(out) == 2 and out[1].dtype == ember.int64


def test_max_pool_default_stride_is_kernel():
    assert ember.max_pool1d(x1, 2, ()).shape == (2, 4, 3)
    assert ember.max_pool2d(x2, 2).shape == (2, 4, 3, 2)


def test_embedding_weight_first_and_padding():
    w = _r(5, 3).requires_grad_()
    idx = ember.tensor([0, 3, 4, 4])
    out = ember.embedding(w, idx)
    _same(out, F.embedding(idx, w))
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [1, 0, 0, 1, 2])
    w.grad = None
    ember.embedding(w, idx, 3).sum().backward()  # padding row gets no gradient
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [1, 0, 0, 0, 2])
    w.grad = None
    ember.embedding(w, idx, -2).sum().backward()  # a negative padding_idx means none at the top level
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [1, 0, 0, 1, 2])


def test_dropout_requires_p_and_train():
    with pytest.raises(TypeError):
        ember.dropout(x1)
    for fn in (ember.dropout, ember.alpha_dropout, ember.feature_alpha_dropout):
        assert fn(x1, 0.5, False) is x1
    y = ember.ones(1000, dtype=ember.float64)
    out = ember.dropout(y, 0.5, True)
    vals = set(np.unique(out.numpy()).tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2
    z = ember.ones(100, dtype=ember.float64)
    assert ember.dropout_(z, 0.5, True) is z and set(np.unique(z.numpy()).tolist()) <= {0.0, 2.0}
    assert ember.dropout(y, 0.0, True).numpy().tolist() == y.numpy().tolist()


@pytest.mark.parametrize("name", ["selu_", "celu_", "rrelu_", "threshold_"])
def test_inplace_activations(name):
    base = getattr(ember, name[:-1])
    args = (0.1, -1.0) if name == "threshold_" else ()
    t = _r(3, 4)
    expected = base(t, *args)
    assert getattr(ember, name)(t, *args) is t
    _same(t, expected)


def test_selu_hand_values():
    out = ember.selu(ember.tensor([0.0, 1.0, -1.0], dtype=ember.float64))
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    assert_close(out, [0.0, scale, scale * alpha * (np.exp(-1) - 1)], atol=1e-12)


def _reduce(v, r):
    return v if r == 0 else (v.mean() if r == 1 else v.sum())


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses_int_reduction(reduction):
    names = {0: "none", 1: "mean", 2: "sum"}
    a, b, t = _r(3, 4), _r(3, 4, seed=1), ember.tensor([1.0, -1.0, 1.0], dtype=ember.float64)
    p = ember.tensor(np.random.default_rng(2).uniform(0.1, 0.9, (3, 4)))
    red = names[reduction]
    _same(ember.binary_cross_entropy_with_logits(a, p, None, None, reduction),
          F.binary_cross_entropy_with_logits(a, p, reduction=red))
    _same(ember.binary_cross_entropy_with_logits(a, p, _r(4), _r(4, seed=3).abs(), reduction),
          F.binary_cross_entropy_with_logits(a, p, _r(4), reduction=red, pos_weight=_r(4, seed=3).abs()))
    _same(ember.cosine_embedding_loss(a, b, t, 0.1, reduction),
          F.cosine_embedding_loss(a, b, t, 0.1, reduction=red))
    _same(ember.hinge_embedding_loss(a[0], t.repeat(2)[:4], 0.5, reduction),
          F.hinge_embedding_loss(a[0], t.repeat(2)[:4], 0.5, reduction=red))
    _same(ember.margin_ranking_loss(a[0], b[0], t.repeat(2)[:4], 0.2, reduction),
          F.margin_ranking_loss(a[0], b[0], t.repeat(2)[:4], 0.2, reduction=red))
    _same(ember.poisson_nll_loss(a, p, True, True, 1e-8, reduction),
          F.poisson_nll_loss(a, p, True, True, eps=1e-8, reduction=red))
    _same(ember.triplet_margin_loss(a, b, p, 1.0, 2, 1e-6, True, reduction),
          F.triplet_margin_loss(a, b, p, swap=True, reduction=red))
    lp, tg = _r(3, 4).log_softmax(1), p.log()
    _same(ember.kl_div(lp, tg, reduction, log_target=True), _reduce(F.kl_div(lp, tg, reduction="none",
                                                                             log_target=True), reduction))
    logp = _r(6, 2, 4).log_softmax(2)
    targets = ember.tensor([[1, 2], [3, 3]])
    _same(ember.ctc_loss(logp, targets, [6, 5], [2, 2], 0, reduction),
          F.ctc_loss(logp, targets, [6, 5], [2, 2], 0, red))


def test_losses_default_reduction_is_none():
    a, b = _r(3, 4), _r(3, 4, seed=1)
    assert ember.kl_div(a, b).shape == (3, 4)
    assert ember.binary_cross_entropy_with_logits(a, b.sigmoid()).shape == (3, 4)
    assert ember.triplet_margin_loss(a, b, a + 1).shape == (3,)


def test_bad_reduction():
    with pytest.raises(ValueError):
        ember.kl_div(_r(3), _r(3), 5)


def test_grads_flow_through_wrappers():
    w = _r(4).requires_grad_()
    b = _r(4, seed=1).requires_grad_()
    x = _r(2, 4, 3, seed=2).requires_grad_()
    assert gradcheck(lambda x, w, b: ember.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False), [x, w, b])
    emb = _r(5, 3).requires_grad_()
    assert gradcheck(lambda e: ember.embedding(e, ember.tensor([1, 1, 4])), [emb])
    a, c = _r(3, 4).requires_grad_(), _r(3, 4, seed=1).abs().requires_grad_()
    assert gradcheck(lambda a, c: ember.kl_div(a, c, 1), [a, c])


def test_tensor_method_spellings():
    t = _r(3)
    assert ember.is_inference(t) is False and ember.get_device(t) == -1
    r = _r(3).requires_grad_()
    d = ember.detach(r)
    assert not d.requires_grad and d.data_ptr() == r.data_ptr()
    y = r * 2
    assert ember.detach_(y) is y and not y.requires_grad
    f = ember.fill(t, 2.5)
    assert f is not t and f.numpy().tolist() == [2.5] * 3 and f.dtype == t.dtype
    v = ember.tensor(3.0, dtype=ember.float64, requires_grad=True)
    ember.fill(t, v).sum().backward()
    assert v.grad.item() == 3.0
    assert ember.fill_(t, 1.0) is t and t.numpy().tolist() == [1.0] * 3
    assert ember.zero_(t) is t and t.numpy().tolist() == [0.0] * 3
    i = ember.tensor([12, 18])
    assert ember.gcd_(i, ember.tensor([8, 12])) is i and i.tolist() == [4, 6]
    j = ember.tensor([4, 6])
    assert ember.lcm_(j, ember.tensor([6, 4])) is j and j.tolist() == [12, 12]
    k = ember.tensor([1.0, 2.0])
    assert ember.ldexp_(k, ember.tensor([2, 3])) is k and k.tolist() == [4.0, 16.0]
    z = ember.tensor([0.0, 2.0], dtype=ember.float64)
    assert ember.xlogy_(z, ember.tensor([0.0, np.e], dtype=ember.float64)) is z
    assert_close(z, [0.0, 2.0], atol=1e-12)


# ---------------- native_* normalizations: (output, statistics) ----------------

def test_native_layer_norm_returns_the_statistics():
    x, w, b = _r(2, 3, 4), _r(4, seed=1), _r(4, seed=2)
    out, mean, rstd = ember.native_layer_norm(x, [4], w, b, 1e-5)
    xa = x.numpy()
    m = xa.mean(-1, keepdims=True)
    r = 1 / np.sqrt(xa.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(mean.numpy(), m, rtol=1e-12)
    np.testing.assert_allclose(rstd.numpy(), r, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), (xa - m) * r * w.numpy() + b.numpy(), rtol=1e-10)
    xg = x.clone().requires_grad_()
    assert gradcheck(lambda t: ember.native_layer_norm(t, [4], w, b, 1e-5), (xg,))


def test_native_batch_norm_training_and_evaluation():
    x = _r(4, 3, 5)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    out, mean, invstd = ember.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    xa = x.numpy()
    np.testing.assert_allclose(mean.numpy(), xa.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(xa.var((0, 2)) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.1 * xa.mean((0, 2)), rtol=1e-12)  # running stats updated
    np.testing.assert_allclose(out.numpy(), F.batch_norm(x, None, None, training=True).numpy(), rtol=1e-12)
    out, mean, invstd = ember.native_batch_norm(x, None, None, rm, rv, False, 0.1, 1e-5)
    assert mean.shape == (0,) and invstd.shape == (0,)
    xg = x.clone().requires_grad_()
    assert gradcheck(lambda t: ember.native_batch_norm(t, None, None, None, None, True, 0.1, 1e-5), (xg,))


def test_native_batch_norm_legit_with_and_without_running_statistics():
    x = _r(4, 3, 5)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    with_stats = ember._native_batch_norm_legit(x, None, None, rm, rv, True, 0.1, 1e-5)
    without = ember._native_batch_norm_legit(x, None, None, True, 0.1, 1e-5)
    want = ember.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
    for got in (with_stats, without):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.1 * x.numpy().mean((0, 2)), rtol=1e-12)


def test_native_group_norm_statistics_per_group():
    x = _r(2, 4, 3)
    out, mean, rstd = ember.native_group_norm(x, None, None, 2, 4, 3, 2, 1e-5)
    g = x.numpy().reshape(2, 2, -1)
    np.testing.assert_allclose(mean.numpy(), g.mean(-1), rtol=1e-12)
    np.testing.assert_allclose(rstd.numpy(), 1 / np.sqrt(g.var(-1) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), F.group_norm(x, 2, eps=1e-5).numpy(), rtol=1e-12)
    empty = ember.native_group_norm(ember.zeros(0, 4, 3, dtype=ember.float64), None, None, 0, 4, 3, 2, 1e-5)
    assert empty[1].shape == (0, 2)
    xg = x.clone().requires_grad_()
    assert gradcheck(lambda t: ember.native_group_norm(t, None, None, 2, 4, 3, 2, 1e-5), (xg,))


def test_igamma_is_special_gammainc():
    a, x = ember.tensor([0.5, 1.0, 3.0]), ember.tensor([0.2, 1.0, 2.5])
    from scipy import special
    np.testing.assert_allclose(ember.igamma(a, x).numpy(), special.gammainc(a.numpy(), x.numpy()), rtol=1e-6)
    np.testing.assert_allclose(a.igammac(x).numpy(), special.gammaincc(a.numpy(), x.numpy()), rtol=1e-6)
    b = a.clone()
    assert b.igamma_(x) is b
    np.testing.assert_allclose(b.numpy(), special.gammainc(a.numpy(), x.numpy()), rtol=1e-6)
    xg = x.double().requires_grad_()
    assert gradcheck(lambda t: ember.igammac(a.double(), t), (xg,))
