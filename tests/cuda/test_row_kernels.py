"""The GPU's row kernels (_backend/row_kernels.py, NOTE [ Row kernels ]): layer/RMS norm, softmax/log_softmax, the
attention softmax and cross-entropy, forward and backward, against the CPU in float64, with each kernel checked
to have run. They need a real GPU; elsewhere the same ops take their CuPy chains, which the rest of tests/cuda
covers on the fake.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import row_kernels


@pytest.fixture
def launched(gpu, monkeypatch):
    """The names of the row kernels launched during the test (it skips where they cannot run)."""
    if getattr(gpu, "IS_FAKE", False) or not row_kernels.available(gpu.zeros(1, np.float32)):
        pytest.skip("the row kernels need a GPU")
    names = []
    real = row_kernels._launch

    def launch(name, *args):
        names.append(name)
        return real(name, *args)
    monkeypatch.setattr(row_kernels, "_launch", launch)
    return names


def _run(fn, arrays, dev, dtype, grad_seed=0):
    """fn's output and the gradients of its inputs for a fixed output gradient, as float64 NumPy arrays."""
    ts = [ember.tensor(a, dtype=dtype, device=dev, requires_grad=True) for a in arrays]
    y = fn(*ts)
    w = np.cos(np.arange(y.numel()) + grad_seed).reshape(tuple(y.shape))
    y.backward(ember.tensor(w, dtype=dtype, device=dev))
    return [y.detach().cpu().double().numpy()] + [t.grad.cpu().double().numpy() for t in ts]


def _check(fn, arrays, dtype, tol):
    got = _run(fn, arrays, "cuda", dtype)
    want = _run(fn, arrays, "cpu", ember.float64)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


DTYPES = [(ember.float32, 2e-4), (ember.float64, 1e-10)]
IDS = ["float32", "float64"]
SHAPES = [(7, 33), (2, 3, 512), (3, 2500), (5, 1)]


@pytest.mark.parametrize("dtype, tol", DTYPES, ids=IDS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_layer_norm(shape, dtype, tol, launched):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape) * 3 + 1
    w, b = rng.standard_normal(shape[-1:]), rng.standard_normal(shape[-1:])
    _check(lambda x, w, b: F.layer_norm(x, shape[-1:], w, b), [x, w, b], dtype, tol)
    _check(lambda x: F.layer_norm(x, shape[-1:]), [x], dtype, tol)
    assert {"norm_fwd", "norm_bwd", "col_partials", "col_finish"} <= set(launched)


@pytest.mark.parametrize("dtype, tol", DTYPES, ids=IDS)
def test_layer_norm_over_two_dims_and_rms_norm(dtype, tol, launched):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((4, 6, 40)), rng.standard_normal((6, 40))
    _check(lambda x, w: F.layer_norm(x, (6, 40), w), [x, w], dtype, tol)
    _check(lambda x, w: F.rms_norm(x, (40,), w[0]), [x, w], dtype, tol)
    assert launched.count("norm_fwd") == 2 and launched.count("norm_bwd") == 2


def test_layer_norm_weight_only_gradient(launched):
    x = ember.randn(64, 300, device="cuda")
    w = ember.randn(300, device="cuda", requires_grad=True)
    F.layer_norm(x, (300,), w).sum().backward()
    xh = (x - x.mean(-1, keepdim=True)) / (x.var(-1, unbiased=False, keepdim=True) + 1e-5).sqrt()
    np.testing.assert_allclose(w.grad.cpu().numpy(), xh.sum(0).cpu().numpy(), rtol=1e-4, atol=1e-4)
    assert launched.count("col_finish") == 1


@pytest.mark.parametrize("dtype, tol", DTYPES, ids=IDS)
@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_softmax(shape, log, dtype, tol, launched):
    x = np.random.default_rng(2).standard_normal(shape) * 4
    f = F.log_softmax if log else F.softmax
    _check(lambda x: f(x, -1), [x], dtype, tol)
    assert {"softmax_fwd", "softmax_bwd"} <= set(launched)


def test_softmax_of_infinities_as_the_cpu(launched):
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0]])
    for f in (F.softmax, F.log_softmax):
        got = f(ember.tensor(x, device="cuda"), -1).cpu().numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(f(ember.tensor(x), -1).numpy()))
        np.testing.assert_allclose(got, f(ember.tensor(x), -1).numpy(), rtol=1e-12)
    assert launched.count("softmax_fwd") == 2


def test_softmax_not_over_the_last_dim_takes_the_chain(launched):
    x = np.random.default_rng(3).standard_normal((4, 5))
    _check(lambda x: F.softmax(x, 0), [x], ember.float64, 1e-10)
    assert launched == []


@pytest.mark.parametrize("dtype, tol", DTYPES, ids=IDS)
def test_attention_math_path_with_a_fully_masked_row(dtype, tol, launched):
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 3, 6, 8)) for _ in range(3))
    mask = rng.random((6, 6)) > 0.3
    mask[2] = False  # a row that sees nothing: zeros out, as the CPU

    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=ember.tensor(mask, device=q.device))
    _check(attention, [q, k, v], dtype, tol)
    assert "softmax_fwd" in launched


def _ce(x, t, dev, dtype, **kw):
    xt = ember.tensor(x, dtype=dtype, device=dev, requires_grad=True)
    loss = F.cross_entropy(xt, ember.tensor(t, device=dev), **kw)
    w = np.cos(np.arange(loss.numel()) + 1.0).reshape(tuple(loss.shape))
    loss.backward(ember.tensor(w, dtype=dtype, device=dev))
    return loss.detach().cpu().double().numpy(), xt.grad.cpu().double().numpy()


@pytest.mark.parametrize("dtype, tol", DTYPES, ids=IDS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", ["plain", "weight", "ignore", "weight+ignore", "spatial", "one-sample"])
def test_cross_entropy(case, reduction, dtype, tol, launched):
    rng = np.random.default_rng(5)
    shape = {"spatial": (3, 7, 4, 5), "one-sample": (11,)}.get(case, (37, 1500 if case == "plain" else 19))
    x = rng.standard_normal(shape) * 2
    c = shape[1] if len(shape) > 1 else shape[0]
    t = rng.integers(0, c, shape[:1] + shape[2:] if len(shape) > 1 else ())
    kw = {"reduction": reduction}
    if "weight" in case:
        kw["weight"] = rng.random(c) + 0.1
    if "ignore" in case:
        t[::3] = 4
        kw["ignore_index"] = 4
    got = _ce(x, t, "cuda", dtype, **{**kw, "weight": None if "weight" not in kw else
                                      ember.tensor(kw["weight"], dtype=dtype, device="cuda")})
    want = _ce(x, t, "cpu", ember.float64, **{**kw, "weight": None if "weight" not in kw else
                                              ember.tensor(kw["weight"])})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    assert {"class_targets", "class_loss", "class_loss_bwd"} <= set(launched)


def test_cross_entropy_all_ignored_mean_is_nan(launched):
    x = ember.randn(4, 3, device="cuda")
    loss = F.cross_entropy(x, ember.full((4,), -100, device="cuda"))
    assert np.isnan(loss.item())
    assert "class_targets" in launched


def test_cross_entropy_reports_the_first_bad_target_at_the_next_synchronization(launched):
    x = ember.randn(6, 5, device="cuda", requires_grad=True)
    t = ember.tensor([1, 0, 7, -3, 4, -100], device="cuda")
    loss = F.cross_entropy(x, t)  # queued, not raised: no host read yet
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        loss.item()
    assert "class_targets" in launched


def test_cross_entropy_with_label_smoothing_takes_the_chain(launched):
    x = np.random.default_rng(6).standard_normal((5, 4))
    t = np.array([0, 3, 1, 1, 2])
    got = _ce(x, t, "cuda", ember.float64, label_smoothing=0.2)
    want = _ce(x, t, "cpu", ember.float64, label_smoothing=0.2)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-10)
    assert "class_loss" not in launched


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=IDS)
def test_dropout_keeps_a_boolean_mask_and_draws_what_the_chain_draws(dtype, gpu, monkeypatch):
    """NOTE [ Dropout on the GPU ]: one kernel each way, a boolean mask, the CPU path's draws."""
    from ember.nn._functional import dropout as _dropout
    if getattr(gpu, "IS_FAKE", False):
        pytest.skip("the dropout kernel needs a GPU")
    x = ember.randn(64, 33, dtype=dtype, device="cuda", requires_grad=True)
    ember.manual_seed(7)
    y = F.dropout(x, 0.3)
    keep, scale = y.grad_fn.attrs
    y.backward(ember.ones_like(y))
    wide = "double" if dtype == ember.float64 else "float"
    assert any(k[1:] == ("apply", wide) for k in _dropout._MASKED.built)
    assert keep.dtype == np.bool_ and scale == pytest.approx(1 / 0.7)
    monkeypatch.setattr(_dropout._MASKED, "broken", True)
    ember.manual_seed(7)
    want = F.dropout(x.detach(), 0.3)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), want.cpu().numpy())
    kept = want.cpu().numpy() != 0
    np.testing.assert_allclose(x.grad.cpu().numpy(), kept / 0.7, rtol=1e-6)
    assert 0.6 < kept.mean() < 0.8
    z = ember.randn(64, 33, dtype=dtype, device="cuda", requires_grad=True)
    g = ember.randn(64, 33, dtype=dtype, device="cuda", requires_grad=True)
    gz, = ember.autograd.grad(F.dropout(z, 0.3), z, g, create_graph=True)
    gz.sum().backward()  # double backward: the same op again
    np.testing.assert_allclose(g.grad.cpu().numpy(), (gz.detach().cpu().numpy() != 0) / 0.7, rtol=1e-6)


@pytest.mark.parametrize("dtype, tol", DTYPES, ids=IDS)
@pytest.mark.parametrize("shape", [(8, 5), (4, 3, 7), (6, 4, 5, 3)], ids=str)
def test_batch_norm_training(shape, dtype, tol, launched):
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape) * 2 + 0.5
    c = shape[1]
    w, b = rng.standard_normal(c), rng.standard_normal(c)
    stats = {}

    def bn(x, w, b):
        rm, rv = ember.zeros(c, dtype=x.dtype, device=x.device), ember.ones(c, dtype=x.dtype, device=x.device)
        y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2)
        stats[x.device.type] = (rm.cpu().double().numpy(), rv.cpu().double().numpy())
        return y
    _check(bn, [x, w, b], dtype, tol)
    np.testing.assert_allclose(stats["cuda"][0], stats["cpu"][0], rtol=tol, atol=tol)
    np.testing.assert_allclose(stats["cuda"][1], stats["cpu"][1], rtol=tol, atol=tol)
    _check(lambda x: F.batch_norm(x, None, None, training=True), [x], dtype, tol)
    assert {"channel_stats", "channel_normalize", "channel_running", "channel_grads", "channel_input_grad"} <= \
        set(launched)


def test_batch_norm_eval_and_group_norm_use_the_affine_kernel(launched):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 6, 5))
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    got = F.group_norm(ember.tensor(x, device="cuda"), 3, ember.tensor(w, device="cuda"),
                       ember.tensor(b, device="cuda")).cpu().numpy()
    np.testing.assert_allclose(got, F.group_norm(ember.tensor(x), 3, ember.tensor(w), ember.tensor(b)).numpy(),
                               rtol=1e-10, atol=1e-10)
    rm, rv = ember.tensor(rng.standard_normal(6)), ember.tensor(rng.random(6) + 0.5)
    got = F.batch_norm(ember.tensor(x, device="cuda"), rm.cuda(), rv.cuda(), ember.tensor(w, device="cuda"),
                       ember.tensor(b, device="cuda")).cpu().numpy()
    np.testing.assert_allclose(got, F.batch_norm(ember.tensor(x), rm, rv, ember.tensor(w), ember.tensor(b)).numpy(),
                               rtol=1e-10, atol=1e-10)
    assert launched.count("channel_affine") == 2
    _check(lambda x, w, b: F.group_norm(x, 3, w, b), [x, w, b], ember.float64, 1e-10)  # backward: the chains


def test_batch_norm_module_trains_on_the_kernels(launched, monkeypatch):
    monkeypatch.setattr(ember.backends.cudnn, "allow_tf32", False)  # the convolution in full float32
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.Conv2d(3, 8, 3), ember.nn.BatchNorm2d(8), ember.nn.ReLU())
    cpu = [p.detach().clone() for p in net.parameters()]
    x = ember.randn(4, 3, 9, 9)
    y_cpu = net(x)
    y_cpu.square().mean().backward()
    grads_cpu = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    net.cuda()
    for p, q in zip(net.parameters(), cpu):
        p.data.copy_(q.cuda())
    net[1].running_mean.zero_()
    net[1].running_var.fill_(1.0)
    y = net(x.cuda())
    y.square().mean().backward()
    np.testing.assert_allclose(y.detach().cpu().numpy(), y_cpu.detach().numpy(), rtol=1e-4, atol=1e-4)
    for p, g in zip(net.parameters(), grads_cpu):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g.numpy(), rtol=1e-3, atol=1e-4)
    assert "channel_grads" in launched
