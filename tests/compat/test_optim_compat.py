"""ember.optim against torch.optim: training trajectories, state_dict structure, lr schedules."""
import copy
import math

import numpy as np
import pytest

import ember
import ember.optim as eoptim
from ember.optim import lr_scheduler as elrs

torch = pytest.importorskip("torch")
tlrs = torch.optim.lr_scheduler

# shapes: small ones (ufunc path) and one above the BLAS threshold; CHUNKED adds one spanning several chunks
# (the thresholds are lowered for these tests, so that the paths are exercised on small arrays)
SHAPES = [(3, 4), (4,), (25, 40)]
CHUNKED = [(3, 4), (30, 50), (60, 50)]


@pytest.fixture(autouse=True)
def _small_thresholds(monkeypatch):
    from ember.optim import _functional
    monkeypatch.setattr(_functional, "_BLAS_MIN", 500)
    monkeypatch.setattr(_functional, "_CHUNK", 1024)


def _problem(shapes, dtype, seed=0):
    """A separable quadratic 0.5 * sum(a * (p - c)^2): start points, curvatures and centers."""
    rng = np.random.default_rng(seed)
    p0 = [rng.standard_normal(s).astype(dtype) for s in shapes]
    a = [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]
    c = [rng.standard_normal(s).astype(dtype) for s in shapes]
    if np.dtype(dtype).kind == "c":
        p0 = [x + 1j * rng.standard_normal(x.shape).astype(dtype) for x in p0]
        c = [x + 1j * rng.standard_normal(x.shape).astype(dtype) for x in c]
    return p0, a, c


def _pair(p0):
    return ([ember.tensor(x.copy(), requires_grad=True) for x in p0],
            [torch.tensor(x.copy(), requires_grad=True) for x in p0])


def _set_grads(ps, a, c, lib):
    for p, ai, ci in zip(ps, a, c):
        g = ai * (p.detach().numpy() - ci)
        p.grad = lib.tensor(g)


def _run(name, kwargs, dtype=np.float32, shapes=SHAPES, steps=10, groups=None):
    p0, a, c = _problem(shapes, dtype)
    eps, tps = _pair(p0)
    if groups:
        eopt = getattr(eoptim, name)([dict(params=eps[:2], **groups), {"params": eps[2:]}], **kwargs)
        topt = getattr(torch.optim, name)([dict(params=tps[:2], **groups), {"params": tps[2:]}], **kwargs)
    else:
        eopt = getattr(eoptim, name)(eps, **kwargs)
        topt = getattr(torch.optim, name)(tps, **kwargs)
    for _ in range(steps):
        _set_grads(eps, a, c, ember)
        _set_grads(tps, a, c, torch)
        eopt.step()
        topt.step()
    return eps, tps, eopt, topt


def _close(eps, tps, dtype):
    tol = {"rtol": 1e-5, "atol": 1e-6} if np.dtype(dtype) in (np.float32, np.complex64) else {"rtol": 1e-10,
                                                                                                 "atol": 1e-12}
    for e, t in zip(eps, tps):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)


CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.2}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "nesterov": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("Adam", {"lr": 0.05, "betas": (0.5, 0.9), "eps": 1e-3}),
    ("AdamW", {"lr": 0.1}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.05, "amsgrad": True}),
    ("Adamax", {"lr": 0.1}),
    ("Adamax", {"lr": 0.1, "weight_decay": 0.1, "maximize": True}),
    ("NAdam", {"lr": 0.1}),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.1, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.1, "momentum_decay": 0.01, "maximize": True}),
    ("RAdam", {"lr": 0.1}),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.1, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.5, "weight_decay": 0.1, "maximize": True, "alpha": 0.9}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "initial_accumulator_value": 0.1, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "maximize": True, "eps": 1e-3}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "weight_decay": 0.1, "maximize": True}),
    ("ASGD", {"lr": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 3, "lambd": 1e-2, "alpha": 0.5, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 0, "maximize": True}),
    ("Rprop", {"lr": 0.01}),
    ("Rprop", {"lr": 0.01, "etas": (0.3, 1.5), "step_sizes": (1e-3, 1.0), "maximize": True}),
]


def _id(cfg):
    return cfg[0] + "-" + ",".join(f"{k}={v}" for k, v in cfg[1].items())


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trajectory(cfg, dtype):
    name, kwargs = cfg
    eps, tps, _, _ = _run(name, kwargs, dtype)
    _close(eps, tps, dtype)


_FIRST_OF_EACH = [c for i, c in enumerate(CONFIGS) if i == len(CONFIGS) - 1 or CONFIGS[i + 1][0] != c[0]]


@pytest.mark.parametrize("cfg", _FIRST_OF_EACH, ids=_id)
def test_trajectory_chunked(cfg):
    """Parameters larger than one chunk: the chunked path gives the same trajectory."""
    eps, tps, _, _ = _run(cfg[0], cfg[1], np.float32, shapes=CHUNKED, steps=4)
    _close(eps, tps, np.float32)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "NAdam", "RAdam",
                                  "Adamax", "ASGD"])
def test_trajectory_complex(name):
    kwargs = {"lr": 0.05, "momentum": 0.9} if name == "SGD" else {"lr": 0.05}
    if name == "Adadelta":
        kwargs = {}
    eps, tps, _, _ = _run(name, kwargs, np.complex64, shapes=[(3, 4), (50, 50)])
    _close(eps, tps, np.complex64)


@pytest.mark.parametrize("name,kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.1}),
                                         ("RMSprop", {"lr": 0.01, "centered": True})])
def test_param_groups(name, kwargs):
    eps, tps, eopt, topt = _run(name, kwargs, np.float64, groups={"lr": 0.01})
    _close(eps, tps, np.float64)
    assert [g["lr"] for g in eopt.param_groups] == [g["lr"] for g in topt.param_groups]


def _structure(sd):
    state = {k: [(key, type(v).__name__ if not hasattr(v, "shape") else (tuple(v.shape), str(v.dtype).split(".")[-1]))
                 for key, v in s.items()] for k, s in sd["state"].items()}
    return state, sd["param_groups"]


@pytest.mark.parametrize("cfg", CONFIGS, ids=_id)
def test_state_dict_structure(cfg):
    name, kwargs = cfg
    _, _, eopt, topt = _run(name, kwargs, np.float32, shapes=[(3, 4), (4,)], steps=2)
    assert _structure(eopt.state_dict()) == _structure(topt.state_dict())
    assert repr(eopt) == repr(topt)


def _to_ember(obj):
    if isinstance(obj, torch.Tensor):
        return ember.tensor(obj.detach().numpy().copy())
    if isinstance(obj, dict):
        return {k: _to_ember(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_ember(v) for v in obj]
    return obj


@pytest.mark.parametrize("cfg", [c for c in CONFIGS if c[0] != "ASGD" or c[1].get("t0") == 3], ids=_id)
def test_load_torch_state_dict(cfg):
    """A state dict written by torch resumes in ember on the same trajectory."""
    name, kwargs = cfg
    dtype = np.float64
    p0, a, c = _problem(SHAPES[:2], dtype)
    eps, tps = _pair(p0)
    topt = getattr(torch.optim, name)(tps, **kwargs)
    for _ in range(3):
        _set_grads(tps, a, c, torch)
        topt.step()
    for e, t in zip(eps, tps):
        e.data = ember.tensor(t.detach().numpy().copy())
    eopt = getattr(eoptim, name)(eps, **kwargs)
    sd = copy.deepcopy(topt.state_dict())
    eopt.load_state_dict(_to_ember(sd))
    topt.load_state_dict(sd)  # loading casts state (NAdam's float32 mu_product) the same way in both
    for _ in range(4):
        _set_grads(eps, a, c, ember)
        _set_grads(tps, a, c, torch)
        eopt.step()
        topt.step()
    _close(eps, tps, dtype)


def test_linear_model_autograd():
    """A linear regression trained through autograd in both libraries."""
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((16, 5)), rng.standard_normal((16, 2))
    w0, b0 = rng.standard_normal((5, 2)), np.zeros(2)
    results = []
    for lib, optim in ((ember, eoptim), (torch, torch.optim)):
        w = lib.tensor(w0.copy(), requires_grad=True)
        b = lib.tensor(b0.copy(), requires_grad=True)
        opt = optim.Adam([w, b], lr=0.05)
        sched = (elrs if lib is ember else tlrs).StepLR(opt, 3, gamma=0.5)
        xt, yt = lib.tensor(x), lib.tensor(y)
        for _ in range(10):
            opt.zero_grad()
            loss = ((xt @ w + b - yt) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
        results.append((w.detach().numpy(), b.detach().numpy(), loss.item()))
    for e, t in zip(*results):
        np.testing.assert_allclose(e, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"line_search_fn": "strong_wolfe"}, {"history_size": 3, "max_iter": 5},
                                    {"lr": 0.5, "line_search_fn": "strong_wolfe", "max_iter": 4}])
def test_lbfgs(kwargs):
    dtype = np.float64
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((20, 6)), rng.standard_normal(20)
    w0 = rng.standard_normal(6)
    out = []
    for lib, optim in ((ember, eoptim), (torch, torch.optim)):
        w = lib.tensor(w0.astype(dtype), requires_grad=True)
        xt, yt = lib.tensor(x), lib.tensor(y)
        opt = optim.LBFGS([w], **kwargs)
        losses = []

        def closure(opt=opt, w=w, xt=xt, yt=yt):
            opt.zero_grad()
            # a smooth non-quadratic objective, so the line search has work to do
            loss = ((xt @ w - yt) ** 2).mean() + (w ** 4).sum() * 0.01
            loss.backward()
            return loss

        for _ in range(3):
            losses.append(opt.step(closure).item())
        state = opt.state[w]
        out.append((w.detach().numpy(), losses, state["func_evals"], state["n_iter"]))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-8)
    assert out[0][2:] == out[1][2:]


# ---------------------------------------------------------------- schedulers

def _sched_pair(make, n=30, opt_name="SGD", opt_kwargs=None, groups=1, metrics=None, epochs=None):
    """lr (and momentum/beta1) sequences of a scheduler built by make(lr_scheduler_module, optimizer)."""
    opt_kwargs = opt_kwargs or {"lr": 0.1, "momentum": 0.9}
    seqs = []
    for lib, optim, mod in ((ember, eoptim, elrs), (torch, torch.optim, tlrs)):
        ps = [lib.zeros(2, requires_grad=True) for _ in range(groups)]
        opt = getattr(optim, opt_name)([{"params": [p], "lr": opt_kwargs["lr"] * (i + 1)} for i, p in enumerate(ps)],
                                       **opt_kwargs)
        sched = make(mod, opt)
        seq = []
        for i in range(n):
            for p in ps:
                p.grad = lib.ones(2)
            opt.step()
            if metrics is not None:
                sched.step(metrics[i])
            elif epochs is not None:
                sched.step(epochs[i])
            else:
                sched.step()
            g = opt.param_groups
            seq.append(([x["lr"] for x in g], [x.get("momentum", x.get("betas")) for x in g],
                        list(sched.get_last_lr())))
        seqs.append((seq, sched.state_dict()))
    (e, esd), (t, tsd) = seqs
    for (elr, em, elast), (tlr, tm, tlast) in zip(e, t):
        np.testing.assert_allclose(elr, tlr, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(elast, tlast, rtol=1e-12, atol=1e-15)
        assert np.allclose(np.array(em, dtype=float), np.array(tm, dtype=float), rtol=1e-12)
    assert list(esd.keys()) == list(tsd.keys())


SCHEDULERS = {
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 0.95 ** e),
    "LambdaLR-list": lambda m, o: m.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda m, o: m.StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.3),
    "ConstantLR": lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=12),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, gamma=0.9),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=15, power=2.0),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.01),
    "CosineAnnealingWarmRestarts-1": lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5),
    "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR-triangular2": lambda m, o: m.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=3, step_size_down=5,
                                                    mode="triangular2"),
    "CyclicLR-exp_range": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.9,
                                                  cycle_momentum=False),
    "CyclicLR-scale_fn": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 0.5 ** x,
                                                 scale_mode="iterations"),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=30),
    "OneCycleLR-linear3": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 2.0], epochs=3, steps_per_epoch=10,
                                                    anneal_strategy="linear", three_phase=True, div_factor=10.0,
                                                    final_div_factor=100.0, pct_start=0.25),
    "SequentialLR": lambda m, o: m.SequentialLR(o, [m.LinearLR(o, 0.1, total_iters=5), m.ExponentialLR(o, 0.9),
                                                    m.StepLR(o, 3)], milestones=[5, 12]),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler([m.ConstantLR(o, 0.5, total_iters=4),
                                                         m.ExponentialLR(o, 0.9)]),
    "Chained-cos-multistep": lambda m, o: m.ChainedScheduler([m.CosineAnnealingLR(o, 10),
                                                              m.MultiStepLR(o, [5, 15])]),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
@pytest.mark.parametrize("groups", [1, 2])
def test_scheduler(name, groups):
    if name.endswith("-list") and groups == 1:
        pytest.skip("two lambdas need two groups")
    if name == "CyclicLR-triangular2" and groups == 1:
        pytest.skip("two max_lrs need two groups")
    if name == "OneCycleLR-linear3" and groups == 1:
        pytest.skip("two max_lrs need two groups")
    n = 30 if not name.startswith("OneCycle") else 29
    _sched_pair(SCHEDULERS[name], n=n, groups=groups)


@pytest.mark.parametrize("name", ["CyclicLR", "OneCycleLR"])
def test_scheduler_cycles_adam_beta1(name):
    _sched_pair(SCHEDULERS[name], n=29, opt_name="Adam", opt_kwargs={"lr": 0.1})


@pytest.mark.parametrize("kwargs", [{}, {"mode": "max", "factor": 0.5, "patience": 2, "threshold": 0.1, "cooldown": 2},
                                    {"threshold_mode": "abs", "patience": 1, "min_lr": 0.02, "eps": 1e-3},
                                    {"mode": "max", "threshold_mode": "abs", "patience": 0, "factor": 0.7}])
def test_reduce_on_plateau(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.5, 0.5, 0.5, 0.5, 0.49, 0.6, 0.7, 0.8, 0.8, 0.8, 0.8, 0.3, 0.3, 0.3,
               0.3] * 2
    _sched_pair(lambda m, o: m.ReduceLROnPlateau(o, **kwargs), n=len(metrics), metrics=metrics, groups=2)


def test_warm_restarts_fractional_epochs():
    epochs = [0.0, 0.5, 1.2, 2.9, 3.0, 4.4, 7.7, 12.0, 12.5, 29.9, 30.1, 31.0]
    for t_mult in (1, 2, 3):
        _sched_pair(lambda m, o, t_mult=t_mult: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=t_mult, eta_min=0.001),
                    n=len(epochs), epochs=epochs)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
                                  "ConstantLR", "PolynomialLR"])
def test_closed_form_epoch(name):
    epochs = [0, 3, 4, 8, 2, 15, 16]
    with pytest.warns(UserWarning):
        _sched_pair(SCHEDULERS[name], n=len(epochs), epochs=epochs)


def test_one_cycle_too_many_steps():
    for mod, optim in ((elrs, eoptim), (tlrs, torch.optim)):
        opt = optim.SGD([ember.zeros(1, requires_grad=True) if mod is elrs else torch.zeros(1, requires_grad=True)],
                        lr=0.1, momentum=0.9)
        s = mod.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            s.step()
        with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of total steps is 3"):
            opt.step()
            s.step()


def test_cosine_annealing_recursive_matches_torch_long():
    """The recursive formula drifts from the closed form exactly as torch's does, over several periods."""
    _sched_pair(lambda m, o: m.CosineAnnealingLR(o, T_max=3, eta_min=0.05), n=100)


def test_step_before_optimizer_warning_matches():
    for mod, optim, lib in ((elrs, eoptim, ember), (tlrs, torch.optim, torch)):
        opt = optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        s = mod.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step"):
            s.step()


def test_math_is_used():
    assert math.isclose(elrs.OneCycleLR._annealing_cos(1.0, 0.0, 0.5), tlrs.OneCycleLR._annealing_cos(1.0, 0.0, 0.5))


@pytest.mark.parametrize("kwargs", [{"lr": 0.02}, {"lr": 0.02, "nesterov": False, "adjust_lr_fn": "match_rms_adamw",
                                                    "weight_decay": 0.0, "momentum": 0.8}])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_muon_trajectory_and_state_dict(kwargs, dtype):
    # Muon takes only matrices; its Newton-Schulz iteration runs in bfloat16 in both libraries
    eps, tps, eopt, topt = _run("Muon", kwargs, dtype, shapes=[(6, 4), (3, 7)], steps=5)
    _close(eps, tps, dtype)
    es, ts = eopt.state_dict(), topt.state_dict()
    assert list(es["param_groups"][0]) == list(ts["param_groups"][0])
    assert sorted(es["state"][0]) == sorted(ts["state"][0])
