"""Optimizers, LR schedulers, gradient clipping, GradScaler and autocast on 'cuda' against the CPU.

Without a GPU they run on the fake CuPy of tests/cuda/fake_cupy.py; on a GPU they run on real CuPy.
"""
import copy

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn, optim
from ember.amp import GradScaler


def _on_device(t, gpu):
    return type(t._data) is gpu.ndarray and t.device.type == "cuda"


def _host(t):
    return t.detach().cpu().numpy()


def _tol(gpu):
    return {"rtol": 1e-12, "atol": 1e-14} if getattr(gpu, "IS_FAKE", False) else {"rtol": 1e-6, "atol": 1e-8}


OPTIMIZERS = [
    ("SGD", lambda p: optim.SGD(p, lr=0.1)),
    ("SGD_momentum_nesterov_wd", lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD_dampening_maximize", lambda p: optim.SGD(p, lr=0.05, momentum=0.5, dampening=0.3, maximize=True)),
    ("Adam", lambda p: optim.Adam(p, lr=0.01)),
    ("Adam_amsgrad_wd", lambda p: optim.Adam(p, lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", lambda p: optim.AdamW(p, lr=0.01, weight_decay=0.1)),
    ("AdamW_amsgrad", lambda p: optim.AdamW(p, lr=0.01, amsgrad=True)),
    ("Adamax", lambda p: optim.Adamax(p, lr=0.02, weight_decay=0.01)),
    ("NAdam", lambda p: optim.NAdam(p, lr=0.01)),
    ("NAdam_decoupled", lambda p: optim.NAdam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", lambda p: optim.RAdam(p, lr=0.01)),
    ("RAdam_decoupled", lambda p: optim.RAdam(p, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adagrad", lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.01)),
    ("Adadelta", lambda p: optim.Adadelta(p, lr=1.0, weight_decay=0.01)),
    ("RMSprop", lambda p: optim.RMSprop(p, lr=0.01)),
    ("RMSprop_centered_momentum", lambda p: optim.RMSprop(p, lr=0.01, centered=True, momentum=0.9,
                                                           weight_decay=0.01)),
    ("Rprop", lambda p: optim.Rprop(p, lr=0.01)),
    ("ASGD", lambda p: optim.ASGD(p, lr=0.01, t0=1)),
]


def _params(dev, dtype, sizes=((5, 4), (4,), (300_000,))):
    """Parameters with fixed values (one large enough for the CPU's BLAS path) on dev."""
    rng = np.random.default_rng(0)
    return [nn.Parameter(ember.tensor(rng.standard_normal(s), dtype=dtype, device=dev)) for s in sizes]


def _grads(step, params):
    rng = np.random.default_rng(10 + step)
    for p in params:
        p.grad = ember.tensor(rng.standard_normal(p.shape), dtype=p.dtype, device=p.device)


def _run(make, dev, dtype, steps=3):
    params = _params(dev, dtype)
    opt = make(params)
    for i in range(steps):
        _grads(i, params)
        opt.step()
    return params, opt


@pytest.mark.parametrize("dtype", [ember.float64, ember.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name, make", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_step_matches_cpu(name, make, dtype, gpu):
    cpu, _ = _run(make, "cpu", dtype)
    dev, dev_opt = _run(make, "cuda", dtype)
    tol = _tol(gpu) if dtype == ember.float64 else {"rtol": 2e-6, "atol": 1e-6}
    for c, d in zip(cpu, dev):
        assert _on_device(d, gpu) and d.dtype == c.dtype
        np.testing.assert_allclose(_host(d), _host(c), **tol)
    # optimizer state lives on the parameters' device (step counters excepted, as in torch)
    for p in dev:
        for k, v in dev_opt.state[p].items():
            if isinstance(v, ember.Tensor) and k != "step" and v.dim() > 0:
                assert _on_device(v, gpu), k


SGDS = [o for o in OPTIMIZERS if o[0].startswith("SGD")]


@pytest.mark.parametrize("dtype, ulp", [(ember.float16, 2.0 ** -10), (ember.bfloat16, 2.0 ** -7)],
                         ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name, make", SGDS, ids=[o[0] for o in SGDS])
def test_fused_sgd_on_half_precision_parameters(name, make, dtype, ulp, gpu):
    """SGD updates each parameter with one kernel on a GPU (NOTE [ Fused device updates ]), in float with one
    rounding per stored value: its half precision parameters agree with the CPU's chains (a rounding per op) to
    within four units in the last place. (Half precision Adam state is not compared: where g^2 underflows in the
    stored v, the two differ by design, as torch keeps float32 master weights for it.)"""
    from ember import _backend
    from ember.optim import _fused_cuda
    if dtype == ember.bfloat16 and _backend.cupy_bf16_missing(gpu) is not None:
        pytest.skip(_backend.cupy_bf16_missing(gpu))
    cpu, _ = _run(make, "cpu", dtype)
    dev, _ = _run(make, "cuda", dtype)
    for c, d in zip(cpu, dev):
        assert _on_device(d, gpu) and d.dtype == c.dtype
        np.testing.assert_allclose(_host(d.float()), _host(c.float()), rtol=4 * ulp, atol=4 * ulp)
    if not getattr(gpu, "IS_FAKE", False):  # the fake CuPy compiles no kernels: there the chains ran
        assert not _fused_cuda.KERNELS.broken and {k[1] for k in _fused_cuda.KERNELS.built} & {"sgd", "sgd_momentum"}


def test_lbfgs_matches_cpu(gpu):
    def run(dev):
        x = nn.Parameter(ember.tensor([1.5, -0.5, 2.0], dtype=ember.float64, device=dev))
        target = ember.tensor([0.2, 0.3, -0.4], dtype=ember.float64, device=dev)
        opt = optim.LBFGS([x], lr=0.5, max_iter=10, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((x - target) ** 4).sum() + (x * x).sum()
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
        return x
    c, d = run("cpu"), run("cuda")
    assert _on_device(d, gpu)
    np.testing.assert_allclose(_host(d), _host(c), rtol=1e-8, atol=1e-10)


def test_optimizer_state_dict_round_trip_on_device(gpu):
    params = _params("cuda", ember.float32, sizes=((3, 2), (2,)))
    opt = optim.Adam(params, lr=0.1)
    _grads(0, params)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    params2 = [nn.Parameter(p.detach().clone()) for p in params]
    opt2 = optim.Adam(params2, lr=0.1)
    opt2.load_state_dict(sd)
    for p in params2:
        assert _on_device(opt2.state[p]["exp_avg"], gpu)
    _grads(1, params)
    _grads(1, params2)
    opt.step()
    opt2.step()
    for a, b in zip(params, params2):
        np.testing.assert_array_equal(_host(a), _host(b))


def test_zero_grad_and_foreach_flags_on_device(gpu):
    params = _params("cuda", ember.float32, sizes=((3,),))
    opt = optim.SGD(params, lr=0.1, momentum=0.9, foreach=True)
    _grads(0, params)
    opt.step()
    opt.zero_grad(set_to_none=False)
    assert _on_device(params[0].grad, gpu) and float(params[0].grad.abs().sum()) == 0.0
    opt.zero_grad()
    assert params[0].grad is None


@pytest.mark.parametrize("make_sched", [
    lambda o: optim.lr_scheduler.StepLR(o, 2, 0.5),
    lambda o: optim.lr_scheduler.CosineAnnealingLR(o, 5),
    lambda o: optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=6),
    lambda o: optim.lr_scheduler.ReduceLROnPlateau(o, patience=0),
    lambda o: optim.lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e),
], ids=["step", "cosine", "onecycle", "plateau", "lambda"])
def test_lr_schedulers_unaffected(make_sched, gpu):
    def run(dev):
        params = _params(dev, ember.float32, sizes=((4,),))
        opt = optim.SGD(params, lr=0.5, momentum=0.9)
        sched = make_sched(opt)
        lrs = []
        for i in range(5):
            _grads(i, params)
            loss = (params[0] * params[0]).sum()
            opt.step()
            if isinstance(sched, optim.lr_scheduler.ReduceLROnPlateau):
                sched.step(loss)
            else:
                sched.step()
            lrs.append(opt.param_groups[0]["lr"])
        return lrs, params[0]
    (lc, pc), (ld, pd) = run("cpu"), run("cuda")
    assert lc == ld
    assert _on_device(pd, gpu)
    np.testing.assert_allclose(_host(pd), _host(pc), rtol=2e-6, atol=1e-6)  # the GPU's kernel contracts to FMAs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm_on_device(norm_type, foreach, gpu):
    def run(dev):
        params = _params(dev, ember.float32, sizes=((5, 4), (4,), (7,)))
        _grads(0, params)
        total = nn.utils.clip_grad_norm_(params, 1.5, norm_type=norm_type, foreach=foreach)
        return total, [p.grad for p in params]
    tc, gc = run("cpu")
    td, gd = run("cuda")
    assert _on_device(td, gpu) and td.dim() == 0
    np.testing.assert_allclose(_host(td), _host(tc), rtol=1e-6)
    for c, d in zip(gc, gd):
        assert _on_device(d, gpu)
        np.testing.assert_allclose(_host(d), _host(c), rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_nonfinite_and_get_total_norm(gpu):
    p = nn.Parameter(ember.ones(3, device="cuda"))
    p.grad = ember.tensor([1.0, float("inf"), 2.0], device="cuda")
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    grads = [ember.tensor([3.0, 4.0], device="cuda")]
    n = nn.utils.get_total_norm(grads)
    assert _on_device(n, gpu) and float(n) == 5.0
    nn.utils.clip_grads_with_norm_([nn.Parameter(ember.zeros(2, device="cuda"))], 1.0, n)


def test_clip_grad_value_on_device(gpu):
    params = _params("cuda", ember.float32, sizes=((5, 4), (3,)))
    _grads(0, params)
    nn.utils.clip_grad_value_(params, 0.5)
    for p in params:
        assert _on_device(p.grad, gpu)
        assert float(p.grad.abs().max()) <= 0.5


def test_parameters_to_vector_round_trip_on_device(gpu):
    m = nn.Linear(3, 2).to("cuda")
    v = nn.utils.parameters_to_vector(m.parameters())
    assert _on_device(v, gpu) and v.shape == (8,)
    nn.utils.vector_to_parameters(v * 2, m.parameters())
    assert _on_device(m.weight, gpu)
    np.testing.assert_allclose(_host(nn.utils.parameters_to_vector(m.parameters())), _host(v) * 2, rtol=1e-6)


def test_weight_norm_and_spectral_norm_on_device(gpu):
    m = nn.utils.parametrizations.weight_norm(nn.Linear(4, 3)).to("cuda")
    x = ember.randn(2, 4, device="cuda")
    y = m(x)
    y.sum().backward()
    assert _on_device(y, gpu)
    s = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3)).to("cuda")
    assert _on_device(s(x), gpu)


# ---------------- GradScaler ----------------

def _scaled_setup(grad, dev="cuda", init_scale=1024.0, **kw):
    s = GradScaler("cuda", init_scale=init_scale, **kw)
    p = nn.Parameter(ember.tensor([1.0, 1.0], device=dev))
    opt = optim.SGD([p], lr=1.0)
    loss = (p * ember.tensor(grad, device=dev)).sum()
    s.scale(loss).backward()
    return s, p, opt


def test_grad_scaler_enabled_on_cuda(gpu):
    assert GradScaler("cuda").is_enabled()


def test_grad_scaler_step_and_scale_on_device(gpu):
    s, p, opt = _scaled_setup([0.5, -0.25])
    assert _on_device(p.grad, gpu)
    np.testing.assert_allclose(_host(p.grad), [512.0, -256.0])
    assert _on_device(s.scale(ember.ones(2, device="cuda")), gpu)
    s.step(opt)
    np.testing.assert_allclose(_host(p.grad), [0.5, -0.25])
    np.testing.assert_allclose(_host(p), [0.5, 1.25])
    s.update()
    assert s.get_scale() == 1024.0 and s._get_growth_tracker() == 1
    assert _on_device(p, gpu)


@pytest.mark.parametrize("bad", [float("inf"), float("nan")])
def test_grad_scaler_skips_and_backs_off_on_device(bad, gpu):
    s, p, opt = _scaled_setup([bad, 1.0], backoff_factor=0.25)
    assert s.step(opt) is None
    np.testing.assert_array_equal(_host(p), [1.0, 1.0])
    s.update()
    assert s.get_scale() == 256.0 and s._get_growth_tracker() == 0


def test_grad_scaler_growth_on_device(gpu):
    s = GradScaler("cuda", init_scale=4.0, growth_factor=3.0, growth_interval=3)
    p = nn.Parameter(ember.tensor([1.0, 1.0], device="cuda"))
    opt = optim.SGD([p], lr=0.1)
    scales = []
    for _ in range(7):
        opt.zero_grad()
        s.scale((p * p).sum()).backward()
        s.step(opt)
        s.update()
        scales.append(s.get_scale())
    assert scales == [4.0, 4.0, 12.0, 12.0, 12.0, 36.0, 36.0]


def test_grad_scaler_unscale_then_clip_on_device(gpu):
    s, p, opt = _scaled_setup([3.0, 4.0])
    s.unscale_(opt)
    assert _on_device(p.grad, gpu)
    total = nn.utils.clip_grad_norm_([p], 1.0)
    assert abs(float(total) - 5.0) < 1e-5
    s.step(opt)
    s.update()
    np.testing.assert_allclose(_host(p), [1.0 - 0.6, 1.0 - 0.8], rtol=1e-5)


def test_grad_scaler_state_dict_on_device(gpu):
    s, _, opt = _scaled_setup([1.0, 1.0], init_scale=8.0, growth_interval=1)
    s.step(opt)
    s.update()
    sd = s.state_dict()
    assert sd["scale"] == 16.0
    s2 = GradScaler("cuda")
    s2.load_state_dict(sd)
    assert s2.get_scale() == 16.0


def test_grad_scaler_float16_params_refused(gpu):
    s = GradScaler("cuda")
    p = nn.Parameter(ember.ones(2, dtype=ember.float16, device="cuda"))
    opt = optim.SGD([p], lr=1.0)
    s.scale((p.float() * 2).sum()).backward()
    with pytest.raises(ValueError, match="Attempting to unscale FP16 gradients"):
        s.unscale_(opt)


# ---------------- autocast on cuda ----------------

def test_autocast_cuda_float16_policy(gpu):
    x = ember.randn(4, 8, device="cuda")
    w = ember.randn(3, 8, device="cuda", requires_grad=True)
    img = ember.randn(2, 3, 6, 6, device="cuda")
    k = ember.randn(4, 3, 3, 3, device="cuda", requires_grad=True)
    t = ember.tensor([0, 1, 2, 1], device="cuda")
    with ember.autocast("cuda", dtype=ember.float16):
        y = F.linear(x, w)
        mm = x @ x.T
        bmm = ember.bmm(x.unsqueeze(0), x.T.unsqueeze(0))
        c = F.conv2d(img, k)
        sm = F.softmax(y, -1)
        ls = F.log_softmax(y, -1)
        loss = F.cross_entropy(y, t)
        mse = F.mse_loss(y, ember.zeros(4, 3, device="cuda"))
        ln = F.layer_norm(y, (3,))
        q = ember.randn(1, 2, 5, 4, device="cuda")
        a = F.scaled_dot_product_attention(q, q, q)
        s = y.float().sum()
    for r in (y, mm, bmm, c, a):
        assert r.dtype == ember.float16 and _on_device(r, gpu)
    for r in (sm, ls, loss, mse, ln, s):
        assert r.dtype == ember.float32 and _on_device(r, gpu)
    loss.backward()
    assert w.grad.dtype == ember.float32 and _on_device(w.grad, gpu)
    assert k.grad is None
    c.float().sum().backward()
    assert k.grad.dtype == ember.float32 and _on_device(k.grad, gpu)


def test_autocast_cpu_region_leaves_cuda_ops_alone(gpu):
    x = ember.randn(4, 8, device="cuda")
    with ember.autocast("cpu", dtype=ember.bfloat16):
        y = x @ x.T
    assert y.dtype == ember.float32 and _on_device(y, gpu)


def test_mixed_precision_training_loop_on_device(gpu):
    """float16 autocast + GradScaler on cuda: the loss goes down and parameters stay float32 on the device."""
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).to("cuda")
    opt = optim.Adam(model.parameters(), lr=0.01)
    scaler = GradScaler("cuda", init_scale=2.0 ** 10)
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((64, 8)), dtype=ember.float32, device="cuda")
    y = ember.tensor(rng.integers(0, 3, 64), device="cuda")
    losses = []
    for _ in range(20):
        opt.zero_grad()
        with ember.autocast("cuda", dtype=ember.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    for p in model.parameters():
        assert p.dtype == ember.float32 and _on_device(p, gpu)


MULTI = [
    ("sgd", lambda ps: optim.SGD(ps, lr=0.1), "sgd"),
    ("sgd-momentum-nesterov-wd", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
     "sgd_momentum"),
    ("sgd-dampening-maximize", lambda ps: optim.SGD(ps, lr=0.1, momentum=0.5, dampening=0.3, maximize=True),
     "sgd_momentum"),
    ("adam", lambda ps: optim.Adam(ps, lr=0.01, weight_decay=0.1), "adam"),
    ("adamw", lambda ps: optim.AdamW(ps, lr=0.01), "adam"),
]


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name, make, kernel", MULTI, ids=[m[0] for m in MULTI])
def test_multi_tensor_updates_match_the_cpu(name, make, kernel, dtype, gpu):
    """NOTE [ Fused device updates ]: 40 parameters of mixed sizes (two launches of up to 32 tensors each) step as
    the CPU's chains do; one strided parameter takes its own kernel."""
    from ember.optim import _fused_cuda
    rng = np.random.default_rng(0)
    shapes = [(int(n),) for n in rng.integers(1, 3000, 39)] + [(70, 3)]
    values = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(3)]

    def run(dev):
        ps = [nn.Parameter(ember.tensor(v, dtype=dtype, device=dev)) for v in values]
        ps[-1] = nn.Parameter(ember.tensor(values[-1].T, dtype=dtype, device=dev).t())  # a strided parameter
        opt = make(ps)
        for gs in grads:
            for p, g in zip(ps, gs):
                p.grad = ember.tensor(g, dtype=dtype, device=dev)
            opt.step()
        return [_host(p.detach().double()) for p in ps]
    tol = 1e-5 if dtype == ember.float32 else 1e-12
    for d, c in zip(run("cuda"), run("cpu")):
        np.testing.assert_allclose(d, c, rtol=tol, atol=tol)
    if not getattr(gpu, "IS_FAKE", False):
        assert any(k[1] == kernel and v is not None for k, v in _fused_cuda._MT.items())
