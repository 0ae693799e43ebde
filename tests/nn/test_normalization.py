"""nn normalization and distances: functional forward against NumPy, gradcheck, gradgradcheck, module behaviour."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad

# ----- NumPy references -----

def _bn_ref(x, w=None, b=None, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    view = (1, -1) + (1,) * (x.ndim - 2)
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    if w is not None:
        y = y * w.reshape(view)
    if b is not None:
        y = y + b.reshape(view)
    return y


def _ln_ref(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def _rms_ref(x, k, w=None, eps=None):
    eps = np.finfo(x.dtype).eps if eps is None else eps
    axes = tuple(range(x.ndim - k, x.ndim))
    return x / np.sqrt((x * x).mean(axes, keepdims=True) + eps) * (1 if w is None else w)


def _gn_ref(x, g, w, b, eps=1e-5):
    xs = x.reshape(x.shape[0], g, -1)
    y = ((xs - xs.mean(2, keepdims=True)) / np.sqrt(xs.var(2, keepdims=True) + eps)).reshape(x.shape)
    view = (1, -1) + (1,) * (x.ndim - 2)
    return y * w.reshape(view) + b.reshape(view)


def _in_ref(x, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


def _lrn_ref(x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    sq = x * x
    div = np.zeros_like(x)
    for i in range(c):
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        div[:, i] = sq[:, lo:hi].sum(1)
    return x / (k + alpha / size * div) ** beta


def _pnorm(a, p, axis):
    return (np.abs(a) ** p).sum(axis) ** (1 / p)


def _pdist_ref(x, p):
    i, j = np.triu_indices(x.shape[0], 1)
    return _pnorm(x[i] - x[j], p, 1)


def _cos_ref(a, b, dim, eps=1e-8):
    na = np.maximum(np.sqrt((a * a).sum(dim, keepdims=True)), eps)
    nb = np.maximum(np.sqrt((b * b).sum(dim, keepdims=True)), eps)
    return ((a / na) * (b / nb)).sum(dim)


def _n(*shape):
    return lambda rng: [rng.standard_normal(s) for s in shape]


SPECS = [
    OpSpec("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
           lambda x, w, b: _bn_ref(x, w, b), _n((4, 3, 5), (3,), (3,)), gradgrad=True),
    OpSpec("batch_norm_2d_noaffine", lambda x: F.batch_norm(x, None, None, training=True), _bn_ref,
           _n((3, 2, 3, 4)), gradgrad=True),
    OpSpec("batch_norm_eval", lambda x, w, b, m, v: F.batch_norm(x, m, v, w, b, training=False),
           lambda x, w, b, m, v: (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5) * w[:, None] + b[:, None],
           lambda rng: [rng.standard_normal((4, 3, 2)), rng.standard_normal(3), rng.standard_normal(3),
                        rng.standard_normal(3), rng.random(3) + 0.5], nondiff=(3, 4), gradgrad=True),
    OpSpec("layer_norm", lambda x, w, b: F.layer_norm(x, (3, 4), w, b), lambda x, w, b: _ln_ref(x, 2, w, b),
           _n((2, 3, 4), (3, 4), (3, 4)), gradgrad=True),
    OpSpec("layer_norm_noaffine", lambda x: F.layer_norm(x, 5, eps=1e-3), lambda x: _ln_ref(x, 1, eps=1e-3),
           _n((3, 5))),
    OpSpec("rms_norm", lambda x, w: F.rms_norm(x, (4,), w, 1e-6), lambda x, w: _rms_ref(x, 1, w, 1e-6),
           _n((3, 2, 4), (4,)), gradgrad=True),
    OpSpec("rms_norm_default_eps", lambda x: F.rms_norm(x, [2, 4]), lambda x: _rms_ref(x, 2), _n((3, 2, 4))),
    OpSpec("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), lambda x, w, b: _gn_ref(x, 2, w, b),
           _n((3, 4, 5), (4,), (4,)), gradgrad=True),
    OpSpec("group_norm_2d", lambda x, w, b: F.group_norm(x, 3, w, b), lambda x, w, b: _gn_ref(x, 3, w, b),
           _n((2, 6, 2, 3), (6,), (6,))),
    OpSpec("instance_norm", lambda x: F.instance_norm(x), _in_ref, _n((2, 3, 4, 3)), gradgrad=True),
    OpSpec("local_response_norm", lambda x: F.local_response_norm(x, 3, alpha=0.1), lambda x: _lrn_ref(x, 3, 0.1),
           _n((2, 5, 4))),
    OpSpec("local_response_norm_4d", lambda x: F.local_response_norm(x, 2, 0.2, 0.5, 2.0),
           lambda x: _lrn_ref(x, 2, 0.2, 0.5, 2.0), _n((2, 4, 3, 2))),
    OpSpec("normalize", lambda x: F.normalize(x, dim=1), lambda x: x / np.maximum(_pnorm(x, 2, 1)[:, None], 1e-12),
           _n((3, 4)), gradgrad=True),
    OpSpec("normalize_p1", lambda x: F.normalize(x, 1.0, 0), lambda x: x / _pnorm(x, 1, 0)[None], _n((3, 4))),
    OpSpec("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), lambda a, b: _cos_ref(a, b, 1),
           _n((3, 4), (3, 4)), gradgrad=True),
    OpSpec("cosine_similarity_bcast", lambda a, b: F.cosine_similarity(a, b, -1),
           lambda a, b: _cos_ref(*np.broadcast_arrays(a, b), -1), _n((3, 4), (4,))),
    OpSpec("pairwise_distance", lambda a, b: F.pairwise_distance(a, b),
           lambda a, b: _pnorm(a - b + 1e-6, 2, -1), _n((3, 4), (3, 4)), gradgrad=True),
    OpSpec("pairwise_distance_p3_keepdim", lambda a, b: F.pairwise_distance(a, b, 3.0, keepdim=True),
           lambda a, b: _pnorm(a - b + 1e-6, 3, -1)[:, None], _n((3, 4), (3, 4))),
    OpSpec("pdist", lambda x: F.pdist(x), lambda x: _pdist_ref(x, 2), _n((4, 3)), gradgrad=True),
    OpSpec("pdist_p1_5", lambda x: F.pdist(x, 1.5), lambda x: _pdist_ref(x, 1.5), _n((5, 2))),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_result_dtype_follows_input():
    x = ember.randn(4, 3, 2)
    for y in (F.batch_norm(x, None, None, training=True), F.layer_norm(x, (2,)), F.group_norm(x, 3),
              F.rms_norm(x, (2,)), F.instance_norm(x)):
        assert y.dtype == ember.float32


@pytest.mark.parametrize("norm", [
    lambda x: F.batch_norm(x, None, None, training=True),
    lambda x: nn.BatchNorm2d(3).to(x.dtype)(x),
    lambda x: F.layer_norm(x, (5, 5)),
    lambda x: F.group_norm(x, 3),
    lambda x: F.instance_norm(x),
    lambda x: F.rms_norm(x, (5,), eps=1e-6),
], ids=["batch_norm", "BatchNorm2d", "layer_norm", "group_norm", "instance_norm", "rms_norm"])
def test_bfloat16_input_matches_float32_within_bfloat16_rounding(norm):
    x, w = ember.randn(4, 3, 5, 5), ember.randn(4, 3, 5, 5)
    xb, x32 = x.bfloat16().requires_grad_(), x.clone().requires_grad_()
    yb, y32 = norm(xb), norm(x32)
    assert yb.dtype == ember.bfloat16
    (yb.float() * w).sum().backward()
    (y32 * w).sum().backward()
    assert xb.grad.dtype == ember.bfloat16
    assert_close(yb.float(), y32.detach().numpy(), atol=0.05, rtol=0.02)
    assert_close(xb.grad.float(), x32.grad.numpy(), atol=0.05 * float(x32.grad.abs().max()), rtol=0.02)


def test_rms_norm_default_eps_is_the_input_dtype_epsilon():
    x = ember.tensor([[1e-3, -1e-3]]).bfloat16()
    eps = float(ember.finfo(ember.bfloat16).eps)
    want = 1e-3 / np.sqrt(1e-6 + eps)
    assert_close(F.rms_norm(x, (2,)).float(), np.array([[want, -want]]), rtol=0.02, atol=0)


def test_grad_fn_names():
    x = ember.randn(4, 3, 2, requires_grad=True)
    assert F.batch_norm(x, None, None, training=True).grad_fn.name() == "NativeBatchNormBackward0"
    assert F.layer_norm(x, (2,)).grad_fn.name() == "NativeLayerNormBackward0"
    assert F.group_norm(x, 3).grad_fn.name() == "NativeGroupNormBackward0"


# ----- running statistics -----

def test_batch_norm_updates_running_stats_with_unbiased_variance():
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((5, 3, 4))
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    F.batch_norm(ember.tensor(xa), rm, rv, training=True, momentum=0.3)
    np.testing.assert_allclose(rm.numpy(), 0.3 * xa.mean((0, 2)))
    np.testing.assert_allclose(rv.numpy(), 0.7 + 0.3 * xa.var((0, 2), ddof=1))


def test_batch_norm_eval_leaves_running_stats():
    rm, rv = ember.zeros(3), ember.ones(3)
    F.batch_norm(ember.randn(4, 3), rm, rv, training=False)
    assert rm.tolist() == [0, 0, 0] and rv.tolist() == [1, 1, 1]


def test_instance_norm_running_stats_average_over_batch():
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((2, 3, 6))
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    F.instance_norm(ember.tensor(xa), rm, rv, use_input_stats=True, momentum=0.5)
    np.testing.assert_allclose(rm.numpy(), 0.5 * xa.mean(2).mean(0))
    np.testing.assert_allclose(rv.numpy(), 0.5 + 0.5 * xa.var(2, ddof=1).mean(0))


def test_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(ember.randn(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(ember.randn(2, 3), ember.zeros(4), ember.ones(4), training=True)
    with pytest.raises(RuntimeError, match=r"expected input with shape \[\*, 4\], but got input of size\[2, 3\]"):
        F.layer_norm(ember.randn(2, 3), (4,))
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(ember.randn(2, 3, 1), 2)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        F.local_response_norm(ember.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        F.pdist(ember.randn(3))


# ----- modules -----

def test_batchnorm_module_train_eval_and_buffers():
    bn = nn.BatchNorm1d(3, momentum=None)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype == ember.int64
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(3)]
    for xa in xs:
        bn(ember.tensor(xa))
    # momentum=None: cumulative moving average of the batch statistics
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0), rtol=1e-5, atol=1e-6)
    assert int(bn.num_batches_tracked) == 3
    bn.eval()
    x = ember.tensor(xs[0])
    expected = (xs[0] - bn.running_mean.numpy()) / np.sqrt(bn.running_var.numpy() + 1e-5)
    assert_close(bn(x), expected, atol=1e-5)
    bn.reset_running_stats()
    assert bn.running_var.tolist() == [1, 1, 1] and int(bn.num_batches_tracked) == 0


def test_batchnorm_input_dim_checks():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(ember.randn(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(ember.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 5D input \(got 4D input\)"):
        nn.BatchNorm3d(3)(ember.randn(2, 3, 4, 4))


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    bn = nn.BatchNorm2d(2, affine=False, track_running_stats=False).eval()
    xa = np.random.default_rng(4).standard_normal((3, 2, 2, 2))
    assert_close(bn(ember.tensor(xa)), _bn_ref(xa), atol=1e-6)
    assert list(bn.state_dict()) == []


def test_batchnorm_gradients_reach_parameters():
    bn = nn.BatchNorm2d(3)
    bn(ember.randn(2, 3, 4, 4)).pow(2).sum().backward()
    assert bn.weight.grad.shape == (3,) and bn.bias.grad.shape == (3,)


def test_instancenorm_module():
    m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    xa = np.random.default_rng(5).standard_normal((2, 3, 5)).astype(np.float32)
    assert_close(m(ember.tensor(xa)), _in_ref(xa), atol=1e-5)
    assert int(m.num_batches_tracked) == 0  # instance norm never counts batches
    assert m(ember.tensor(xa[0])).shape == (3, 5)  # unbatched input
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.InstanceNorm2d(3)(ember.randn(2, 3))


def test_layernorm_groupnorm_rmsnorm_modules():
    ln = nn.LayerNorm([3, 4], bias=False)
    assert ln.bias is None and ln.weight.shape == (3, 4)
    xa = np.random.default_rng(6).standard_normal((2, 3, 4)).astype(np.float32)
    assert_close(ln(ember.tensor(xa)), _ln_ref(xa, 2), atol=1e-5)
    gn = nn.GroupNorm(2, 4)
    assert gn(ember.randn(3, 4, 5)).shape == (3, 4, 5)
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        nn.GroupNorm(2, 5)
    rms = nn.RMSNorm(4)
    assert_close(rms(ember.tensor(xa)), _rms_ref(xa, 1), atol=1e-5)


def test_reprs():
    assert repr(nn.BatchNorm2d(4)) == ("BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                                       "track_running_stats=True)")
    assert repr(nn.LayerNorm(5)) == "LayerNorm((5,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert repr(nn.RMSNorm([2, 3])) == "RMSNorm((2, 3), eps=None, elementwise_affine=True)"
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"


def test_distance_modules():
    a, b = ember.randn(3, 4), ember.randn(3, 4)
    assert_close(nn.CosineSimilarity()(a, b), F.cosine_similarity(a, b))
    assert_close(nn.PairwiseDistance(p=1.0, keepdim=True)(a, b), F.pairwise_distance(a, b, 1.0, keepdim=True))


def test_in_place_change_of_output_does_not_reach_backward():
    # batch norm without affine returns xhat itself; a following in-place ReLU must not corrupt the gradient
    xa = np.random.default_rng(7).standard_normal((4, 3))
    x1, x2 = ember.tensor(xa, requires_grad=True), ember.tensor(xa, requires_grad=True)
    y1 = F.batch_norm(x1, None, None, training=True)
    y1.clone().relu().sum().backward()
    y2 = F.batch_norm(x2, None, None, training=True)
    y2.relu_().sum().backward()
    assert_close(x2.grad, x1.grad.numpy())


def test_gradients_when_only_parameters_require_grad():
    x = ember.randn(4, 3, 2)
    w, b = ember.ones(3, requires_grad=True), ember.zeros(3, requires_grad=True)
    F.batch_norm(x, None, None, w, b, training=True).mul(x).sum().backward()
    xa = x.numpy()
    assert_close(w.grad, (_bn_ref(xa) * xa).sum((0, 2)), atol=1e-4)
    assert_close(b.grad, xa.sum((0, 2)), atol=1e-4)


def test_no_grad_forward_matches_graph_forward():
    x, w, b = ember.randn(3, 4, requires_grad=True), ember.randn(4), ember.randn(4)
    with ember.no_grad():
        y0 = F.layer_norm(x, (4,), w, b)
    assert_close(F.layer_norm(x, (4,), w, b), y0.numpy())


def test_batchnorm_loads_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm1d(3)
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
        bn.load_state_dict(sd)
    sd._metadata[""]["version"] = 1  # checkpoints before version 2 had no counter
    bn.load_state_dict(sd)
    assert int(bn.num_batches_tracked) == 0


# ---------------- layer norm / RMS norm over trailing dims: the (M, N) row kernels ----------------
@pytest.mark.parametrize("affine", ["wb", "w", "b", "none"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_float32_layer_norm_matches_float64(affine, layout):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((6, 5, 16)) * 3 + 2).astype(np.float32)
    if layout == "transposed":
        a = np.ascontiguousarray(a.transpose(1, 0, 2)).transpose(1, 0, 2)  # same values, non-contiguous
    wa = (1 + 0.3 * rng.standard_normal((5, 16))).astype(np.float32)
    ba = rng.standard_normal((5, 16)).astype(np.float32)
    ga = rng.standard_normal(a.shape).astype(np.float32)
    out = {}
    for dt in (np.float32, np.float64):
        x = ember.tensor(a.astype(dt), requires_grad=True)
        w = ember.tensor(wa.astype(dt), requires_grad=True) if "w" in affine else None
        b = ember.tensor(ba.astype(dt), requires_grad=True) if "b" in affine else None
        y = F.layer_norm(x, (5, 16), w, b)
        assert y.dtype == x.dtype
        y.backward(ember.tensor(ga.astype(dt)))
        out[dt] = [y.detach().numpy()] + [t.grad.numpy() for t in (x, w, b) if t is not None]
        assert x.grad._data.base is None  # the gradient owns its memory: it becomes .grad without a copy
    ref = _ln_ref(a.astype(np.float64), 2, wa if "w" in affine else None, ba if "b" in affine else None)
    np.testing.assert_allclose(out[np.float64][0], ref, atol=1e-12)
    for p, q in zip(out[np.float32], out[np.float64]):
        assert p.dtype == np.float32
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=2e-5)


def test_float32_rms_norm_matches_float64():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((7, 33)).astype(np.float32)
    wa = rng.standard_normal(33).astype(np.float32)
    ga = rng.standard_normal(a.shape).astype(np.float32)
    out = []
    for dt in (np.float32, np.float64):
        x = ember.tensor(a.astype(dt), requires_grad=True)
        w = ember.tensor(wa.astype(dt), requires_grad=True)
        y = F.rms_norm(x, (33,), w, 1e-6)
        y.backward(ember.tensor(ga.astype(dt)))
        out.append([y.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
    np.testing.assert_allclose(out[1][0], _rms_ref(a.astype(np.float64), 1, wa, 1e-6), atol=1e-12)
    for p, q in zip(*out):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=2e-5)


def test_layer_norm_output_is_not_the_saved_xhat():
    # with a graph the affine step writes a new array: changing the output in place leaves the backward intact
    x = ember.randn(4, 8, requires_grad=True)
    y = F.layer_norm(x, (8,))
    y2 = F.layer_norm(x, (8,), ember.ones(8), ember.zeros(8))
    F.relu(y2, inplace=True)
    (g1,) = ember.autograd.grad(y.sum() + (y * y).sum(), x)
    x2 = x.detach().clone().requires_grad_(True)
    y3 = F.layer_norm(x2, (8,))
    (g2,) = ember.autograd.grad(y3.sum() + (y3 * y3).sum(), x2)
    assert_close(g1, g2.numpy(), atol=1e-6)


def test_sync_batch_norm_in_one_process_is_batch_norm():
    sbn, bn = ember.nn.SyncBatchNorm(3), ember.nn.BatchNorm1d(3)
    assert repr(sbn) == "SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert list(sbn.state_dict()) == list(bn.state_dict())
    x = ember.randn(4, 3, 2)
    np.testing.assert_allclose(sbn(x).detach().numpy(), bn(x).detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(sbn.running_mean.numpy(), bn.running_mean.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
        sbn(ember.ones(3))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        ember.nn.SyncBatchNorm(0)(ember.ones(2, 0))


def test_convert_sync_batchnorm_keeps_parameters_and_buffers():
    bn = ember.nn.BatchNorm2d(2)
    model = ember.nn.Sequential(ember.nn.Conv2d(1, 2, 1), bn)
    bn.eval()
    out = ember.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert out is model
    sbn = model[1]
    assert type(sbn).__name__ == "SyncBatchNorm"
    assert sbn.weight is bn.weight and sbn.running_mean is bn.running_mean
    assert not sbn.training


@pytest.mark.parametrize("norm, shape", [
    (lambda x, w, b: F.layer_norm(x, (3,), w, b), (0, 3)),
    (lambda x, w, b: F.rms_norm(x, (3,), w), (0, 3)),
    (lambda x, w, b: F.group_norm(x, 1, w, b), (0, 3, 2)),
    (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (0, 3)),
], ids=["layer_norm", "rms_norm", "group_norm", "batch_norm"])
def test_empty_inputs_give_empty_outputs_and_zero_parameter_gradients(norm, shape):
    x = ember.randn(*shape, dtype=ember.float64, requires_grad=True)
    w, b = ember.ones(3, dtype=ember.float64, requires_grad=True), ember.zeros(3, dtype=ember.float64,
                                                                             requires_grad=True)
    y = norm(x, w, b)
    assert y.shape == shape
    y.sum().backward()
    assert x.grad.shape == shape
    assert w.grad.tolist() == [0.0, 0.0, 0.0]


def test_batch_norm_of_an_empty_batch_leaves_the_running_statistics():
    m = nn.BatchNorm1d(3)
    m.running_mean.fill_(0.5)
    assert m(ember.randn(0, 3)).shape == (0, 3)
    assert m.running_mean.tolist() == [0.5] * 3 and m.running_var.tolist() == [1.0] * 3
    assert F.batch_norm(ember.randn(0), None, None, training=True).shape == (0,)
