"""Real programs (training loops, custom Functions, hooks, higher-order gradients, optimizer and scheduler
state, torch.func transforms, SWA) run with ember and with PyTorch: results, dtypes, grads, errors and warnings
must agree."""
import io
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

# ----- comparison -----


def _norm(v, lib):
    """A library-neutral, comparable form of a program's result."""
    if isinstance(v, lib.Tensor):
        return {"T": v.detach().numpy(), "dtype": str(v.dtype).split(".")[-1], "shape": tuple(v.shape),
                "rg": v.requires_grad, "leaf": v.is_leaf,
                "gf": type(v.grad_fn).__name__ if v.grad_fn is not None else None}
    if isinstance(v, dict):
        return {k: _norm(x, lib) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_norm(x, lib) for x in v) if type(v) in (list, tuple) else tuple(_norm(x, lib) for x in v)
    if isinstance(v, str):
        # ember appends where a saved tensor was modified to torch's version-counter message
        cut = v.find("check_nan=False).")
        v = v[:cut + len("check_nan=False).")] if cut >= 0 else v
        v = re.sub(r" at 0x[0-9a-f]+>", " at 0x...>", v)
        return v.replace("torch.", "").replace("ember.", "").replace("torch", "LIB").replace("ember", "LIB")
    if isinstance(v, BaseException):
        return ("EXC", type(v).__name__, _norm(str(v), lib))
    return v


def catch(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return e


def warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = fn()
    return r, [(x.category.__name__, str(x.message)) for x in w]


def _diff(a, b, path=""):
    if isinstance(a, dict) and "T" in a and isinstance(b, dict) and "T" in b:
        out = [f"{path}.{k}: {a[k]!r} vs {b[k]!r}" for k in a if k != "T" and a[k] != b[k]]
        if a["T"].shape != b["T"].shape or not np.allclose(a["T"], b["T"], rtol=1e-4, atol=1e-5, equal_nan=True):
            out.append(f"{path}: values {a['T']!r} vs {b['T']!r}")
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        out = [] if set(a) == set(b) else [f"{path}: keys {sorted(map(str, a))} vs {sorted(map(str, b))}"]
        for k in a:
            if k in b:
                out += _diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b) or type(a) is not type(b):
            return [f"{path}: {a!r} vs {b!r}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _diff(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        return [] if np.isclose(a, b, rtol=1e-4, atol=1e-6, equal_nan=True) else [f"{path}: {a!r} vs {b!r}"]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def _run(program):
    mine = _norm(program(ember), ember)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.func's internals use deprecated torch.jit APIs
        ref = _norm(program(torch), torch)
    diffs = _diff(mine, ref)
    assert not diffs, "\n".join(d[:400] for d in diffs)


# ----- programs -----

def custom_fn(torch):
    r = {}
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=2.0):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x.clamp(min=0) * scale
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            r["nig"] = ctx.needs_input_grad
            gi = g.clone(); gi[x < 0] = 0
            return gi * ctx.scale, None
    x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = MyReLU.apply(x, 3.0)
    r["y"] = y
    r["gf"] = type(y.grad_fn).__name__
    r["gfname"] = y.grad_fn.name() if hasattr(y.grad_fn, "name") else None
    y.sum().backward()
    r["g"] = x.grad
    r["nf"] = str(y.grad_fn.next_functions)
    # wrong number of grads
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k
        @staticmethod
        def backward(ctx, g):
            return g
    r["bad"] = catch(lambda: Bad.apply(x, 2).sum().backward())
    class Bad2(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
        @staticmethod
        def backward(ctx, g):
            return g[:1]
    r["bad2"] = catch(lambda: Bad2.apply(x).sum().backward())
    class Bad3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2
        @staticmethod
        def backward(ctx, g):
            return g, g
    r["bad3"] = catch(lambda: Bad3.apply(x).sum().backward())
    # calling forward directly / instantiating
    # once_differentiable
    once_differentiable = torch.autograd.function.once_differentiable
    class Sq(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2
        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    z = torch.tensor([1.0, 2.0], requires_grad=True)
    out = Sq.apply(z)
    gz, = torch.autograd.grad(out.sum(), z, create_graph=True)
    r["gz"] = gz
    r["gz_rg"] = gz.requires_grad
    r["gz_dd"] = catch(lambda: gz.sum().backward())
    # mark_dirty
    class Inc(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x
        @staticmethod
        def backward(ctx, g):
            return g
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1
    c = Inc.apply(b)
    r["dirty_same"] = c is b
    r["c"] = c
    r["c_ver"] = c._version
    c.sum().backward()
    r["ag"] = a.grad
    # mark_dirty on leaf
    r["dirty_leaf"] = catch(lambda: Inc.apply(a))
    # non-tensor returns & tuples
    class Split(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_non_differentiable(x.argmax())
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            return x * 2, idx
        @staticmethod
        def backward(ctx, g, gidx):
            r["gidx"] = gidx
            return g * 2
    v = torch.tensor([1.0, 5.0, 2.0], requires_grad=True)
    o, i = Split.apply(v)
    r["i"] = i
    r["o"] = o
    o.sum().backward()
    # materialize grads
    class Two(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone()
        @staticmethod
        def backward(ctx, g1, g2):
            r["g2none"] = g2 is None
            return g1
    w = torch.ones(2, requires_grad=True)
    p, q = Two.apply(w)
    p.sum().backward()
    r["wg"] = (w.grad.detach(), w.grad.requires_grad)
    # ctx.saved_tensors after backward
    class Keep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 3
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3
    k = torch.ones(2, requires_grad=True)
    kk = Keep.apply(k)
    kk.sum().backward()
    r["saved_after"] = catch(lambda: kk.grad_fn.saved_tensors)
    r["kk_backagain"] = catch(lambda: kk.sum().backward())
    # save non-tensor in save_for_backward
    class SaveInt(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None)
            return x + 1
        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            r["b_none"] = b is None
            return g
    SaveInt.apply(k).sum().backward()
    class SaveBad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x + 1
        @staticmethod
        def backward(ctx, g):
            return g
    r["savebad"] = catch(lambda: SaveBad.apply(k))
    # forward returning input unchanged
    class Ident(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x
        @staticmethod
        def backward(ctx, g):
            return g * 5
    ii = Ident.apply(k)
    r["ident_is"] = ii is k
    r["ident_gf"] = type(ii.grad_fn).__name__
    k.grad = None
    ii.sum().backward()
    r["kgrad"] = k.grad
    # no input requires grad
    nn_ = Keep.apply(torch.ones(2))
    r["nograd"] = nn_
    # apply under no_grad
    with torch.no_grad():
        r["ng"] = Keep.apply(k)
    # setup_context style
    class Lin(torch.autograd.Function):
        @staticmethod
        def forward(x, w):
            return x @ w
        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w = inputs
            ctx.save_for_backward(x, w)
        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g @ w.t(), x.t() @ g
    xx = torch.arange(6.).reshape(2, 3).requires_grad_()
    ww = torch.arange(3.).reshape(3, 1).requires_grad_()
    Lin.apply(xx, ww).sum().backward()
    r["lin"] = (xx.grad, ww.grad)
    return r

def hooks(torch):
    r = {}
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    seen = []
    h = y.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    x.register_hook(lambda g: g + 1)
    z = (y ** 2).sum()
    z.backward()
    r["yg"] = y.grad
    r["xg"] = x.grad
    r["seen"] = seen
    h.remove()
    r["h"] = type(h).__name__
    x.grad = None
    (x * 3).sum().backward()
    r["xg2"] = x.grad
    # non-leaf grad access warning
    w = x * 1
    w.sum().backward()
    r["retains"] = (w.retains_grad, y.retains_grad, x.retains_grad)
    r["leaf_hook_nograd"] = catch(lambda: torch.ones(2).register_hook(lambda g: g))
    r["retain_leaf"] = catch(lambda: x.retain_grad())
    r["retain_nograd"] = catch(lambda: torch.ones(2).retain_grad())
    # hook returning wrong shape
    q = torch.ones(3, requires_grad=True)
    q2 = q * 2
    q2.register_hook(lambda g: g[:2])
    r["hookshape"] = catch(lambda: q2.sum().backward())
    # post accumulate grad hook
    p = torch.ones(2, requires_grad=True)
    acc = []
    p.register_post_accumulate_grad_hook(lambda t: acc.append(t.grad.clone()))
    (p * 4).sum().backward()
    r["acc"] = acc
    r["pah_nonleaf"] = catch(lambda: (p * 2).register_post_accumulate_grad_hook(lambda t: None))
    # module full backward hook is elsewhere; grad_fn hooks
    a = torch.ones(2, requires_grad=True)
    b = a * 3
    log = []
    b.grad_fn.register_hook(lambda gi, go: log.append((len(gi), len(go))))
    b.grad_fn.register_prehook(lambda go: log.append("pre"))
    b.sum().backward()
    r["log"] = [v if isinstance(v, str) else v[1] for v in log]  # torch counts a scalar operand as an input
    return r


def errors(torch):
    r = {}
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.sum().backward(retain_graph=False)
    z = x.exp()
    z2 = z.sum()
    z2.backward()
    r["twice"] = catch(lambda: z2.backward())
    r["nonscalar"] = catch(lambda: (x * 2).backward())
    r["nonscalar_grad_shape"] = catch(lambda: (x * 2).backward(torch.ones(2)))
    r["nograd"] = catch(lambda: torch.ones(3).sum().backward())
    r["int_rg"] = catch(lambda: torch.tensor([1, 2]).requires_grad_())
    r["int_rg2"] = catch(lambda: torch.tensor([1, 2], requires_grad=True))
    r["leaf_inplace"] = catch(lambda: x.add_(1))
    r["leaf_inplace2"] = catch(lambda: x.mul_(2))
    def f():
        x[0] = 5
    r["leaf_setitem"] = catch(f)
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.sigmoid()
    b.mul_(2)
    r["saved_inplace"] = catch(lambda: b.sum().backward())
    c = a * 2
    d = c ** 2
    c.add_(1)
    r["saved_inplace2"] = catch(lambda: d.sum().backward())
    r["grad_nonleaf"] = catch(lambda: torch.autograd.grad((a * 2).sum(), [a, c]))
    r["grad_unused"] = catch(lambda: torch.autograd.grad((a * 2).sum(), [a, torch.ones(2, requires_grad=True)]))
    r["grad_unused_ok"] = torch.autograd.grad((a * 2).sum(), [a, torch.ones(2, requires_grad=True)], allow_unused=True)
    r["grad_unused_mat"] = torch.autograd.grad((a * 2).sum(), [a, torch.ones(2, requires_grad=True)], allow_unused=True, materialize_grads=True)
    r["grad_nonrg_input"] = catch(lambda: torch.autograd.grad((a * 2).sum(), torch.ones(2)))
    r["grad_nonscalar"] = catch(lambda: torch.autograd.grad(a * 2, a))
    r["detach_inplace"] = catch(lambda: (a * 2).detach_())
    e = a.detach()
    r["detach"] = (e.requires_grad, e.is_leaf, e._version)
    e.zero_()
    r["a_after_detach_zero"] = a
    r["rg_nonleaf"] = catch(lambda: (a * 2).requires_grad_(False))
    r["rg_nonleaf_true"] = catch(lambda: (a * 2).requires_grad_(True))
    r["numpy_rg"] = catch(lambda: a.numpy())
    r["item"] = (a * 2).sum().item()
    r["grad_none_before"] = torch.ones(2, requires_grad=True).grad
    r["backward_int_grad"] = catch(lambda: (a * 2).backward(torch.ones(2, dtype=torch.long)))
    return r

def modes(torch):
    r = {}
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = x * 2
        r["in"] = torch.is_grad_enabled()
        with torch.enable_grad():
            yy = x * 2
    r["y"] = y
    r["yy"] = yy
    @torch.no_grad()
    def f(t):
        return t * 3
    r["f"] = f(x)
    @torch.no_grad
    def f2(t):
        return t * 3
    r["f2"] = f2(x)
    with torch.set_grad_enabled(False):
        r["sge"] = x * 2
    torch.set_grad_enabled(False)
    r["sge_fn"] = x * 2
    torch.set_grad_enabled(True)
    r["after"] = x * 2
    with torch.inference_mode():
        z = x * 2
        r["inf_is"] = torch.is_inference_mode_enabled()
    r["z"] = z
    @torch.inference_mode()
    def g(t):
        return t + 1
    r["g"] = g(x)
    with torch.inference_mode(mode=False):
        r["inf_false"] = x * 2
    # generator under no_grad
    @torch.no_grad()
    def gen():
        yield x * 2
        yield x * 3
    r["gen"] = list(gen())
    r["rg_in_nograd"] = None
    with torch.no_grad():
        w = torch.zeros(2, requires_grad=True)
        r["rg_in_nograd"] = (w.requires_grad, w.is_leaf)
        w2 = w + 1
        r["w2"] = w2
    class M:
        @torch.enable_grad()
        def m(self, t):
            return t * 2
    with torch.no_grad():
        r["m"] = M().m(x)
    r["mode_repr"] = type(torch.no_grad()).__name__
    torch.no_grad()  # constructing it does not switch grad mode off
    r["is_grad_enabled_in_no_grad_ctor"] = torch.is_grad_enabled()
    return r

def functional(torch):
    r = {}
    F = torch.autograd.functional
    def f(x):
        return (x ** 3).sum()
    x = torch.tensor([1.0, 2.0, 3.0])
    r["jac"] = F.jacobian(lambda t: t ** 2, x)
    r["hess"] = F.hessian(f, x)
    r["vjp"] = F.vjp(lambda t: t ** 2, x, torch.ones(3))
    r["jvp"] = F.jvp(lambda t: t ** 2, x, torch.ones(3))
    r["hvp"] = F.hvp(f, x, torch.ones(3))
    r["vhp"] = F.vhp(f, x, torch.ones(3))
    def g(a, b):
        return a * b, a + b
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    r["jac2"] = F.jacobian(g, (a, b))
    r["jac_vec"] = F.jacobian(g, (a, b), vectorize=True)
    r["jac_cg"] = F.jacobian(lambda t: t.sin(), x, create_graph=True)
    r["hess2"] = F.hessian(lambda a, b: (a * b).sum() + (a ** 2 * b).sum(), (a, b))
    r["jac_strict"] = catch(lambda: F.jacobian(lambda t: torch.ones(2), x, strict=True))
    r["jac_const"] = F.jacobian(lambda t: torch.ones(2), x)
    r["vjp_scalar"] = F.vjp(f, x)
    r["vjp_noscalar"] = catch(lambda: F.vjp(lambda t: t * 2, x))
    r["jac_mat"] = F.jacobian(lambda m: m @ m, torch.arange(4.).reshape(2, 2))
    return r

def doublebackward(torch):
    r = {}
    torch.manual_seed(0)
    D = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    for p in D.parameters():
        with torch.no_grad():
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape))
    real = torch.linspace(0, 1, 12).reshape(3, 4)
    fake = torch.linspace(1, 0, 12).reshape(3, 4)
    alpha = torch.tensor([[0.2], [0.5], [0.9]])
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = D(interp)
    grads = torch.autograd.grad(outputs=out, inputs=interp, grad_outputs=torch.ones_like(out),
                                create_graph=True, retain_graph=True, only_inputs=True)[0]
    r["grads"] = grads
    gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    r["gp"] = gp
    loss = D(fake).mean() - D(real).mean() + 10 * gp
    loss.backward()
    r["pg"] = [p.grad for p in D.parameters()]
    # scalar double derivative
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 3
    dy, = torch.autograd.grad(y, x, create_graph=True)
    d2y, = torch.autograd.grad(dy, x, create_graph=True)
    d3y, = torch.autograd.grad(d2y, x)
    r["d"] = (dy, d2y, d3y)
    # backward with create_graph then grad of grad
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    l = (w ** 4).sum()
    with warnings.catch_warnings():  # torch warns once per process about the .grad reference cycle
        warnings.simplefilter("ignore")
        l.backward(create_graph=True)
    r["wg"] = (w.grad.detach(), w.grad.requires_grad)
    g2 = w.grad.sum()
    w.grad = None
    g2.backward()
    r["wg2"] = w.grad
    # nested functions with sin/ softplus etc
    t = torch.tensor([0.3, -0.7], requires_grad=True)
    o = torch.nn.functional.softplus(t) * torch.sigmoid(t) + torch.nn.functional.gelu(t)
    g1, = torch.autograd.grad(o.sum(), t, create_graph=True)
    g2_, = torch.autograd.grad(g1.sum(), t)
    r["sp"] = (g1, g2_)
    return r


def _model(torch):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5 + i * 0.1, p.numel()).reshape(p.shape))
    return m

def _data(torch):
    X = torch.linspace(-1, 1, 24).reshape(8, 3)
    Y = torch.stack([X.sum(1), (X ** 2).sum(1)], 1)
    return X, Y

def train_loop(torch):
    r = {}
    for name, kw in [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)),
                     ("Adam", dict(lr=0.01, amsgrad=True)), ("AdamW", dict(lr=0.01, weight_decay=0.1)),
                     ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True)), ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
                     ("Adadelta", {}), ("Adamax", {}), ("NAdam", dict(lr=0.01)), ("RAdam", dict(lr=0.01)),
                     ("ASGD", dict(lr=0.01)), ("Rprop", {})]:
        m = _model(torch)
        X, Y = _data(torch)
        opt = getattr(torch.optim, name)(m.parameters(), **kw)
        losses = []
        for epoch in range(5):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(m(X), Y)
            loss.backward()
            n = torch.nn.utils.clip_grad_norm_(m.parameters(), max_norm=1.0)
            opt.step()
            losses.append(loss.item())
        r[name] = {"losses": losses, "n": n, "params": list(m.parameters()),
                   "sd": opt.state_dict(), "repr": repr(opt)}
    return r

def state_roundtrip(torch):
    r = {}
    m = _model(torch)
    X, Y = _data(torch)
    opt = torch.optim.Adam([{"params": m[0].parameters(), "lr": 1e-2}, {"params": m[2].parameters()}], lr=1e-3, betas=(0.8, 0.9))
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.zero_grad(); torch.nn.functional.mse_loss(m(X), Y).backward(); opt.step(); sched.step()
    buf = io.BytesIO()
    torch.save({"model": m.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf)
    r["ck_opt"] = ck["opt"]
    r["ck_sched"] = ck["sched"]
    m2 = _model(torch)
    m2.load_state_dict(ck["model"])
    opt2 = torch.optim.Adam([{"params": m2[0].parameters(), "lr": 5}, {"params": m2[2].parameters()}])
    opt2.load_state_dict(ck["opt"])
    sched2 = torch.optim.lr_scheduler.StepLR(opt2, step_size=2, gamma=0.5)
    sched2.load_state_dict(ck["sched"])
    r["groups2"] = [{k: v for k, v in g.items() if k != "params"} for g in opt2.param_groups]
    for _ in range(3):
        for o, s, mm in ((opt, sched, m), (opt2, sched2, m2)):
            o.zero_grad(); torch.nn.functional.mse_loss(mm(X), Y).backward(); o.step(); s.step()
    r["p1"] = list(m.parameters()); r["p2"] = list(m2.parameters())
    r["lr"] = (sched.get_last_lr(), sched2.get_last_lr())
    r["state_keys"] = [sorted(v.keys()) for v in opt2.state_dict()["state"].values()]
    r["step"] = opt2.state_dict()["state"][0]["step"]
    r["state_by_param"] = type(list(opt2.state.keys())[0]).__name__
    # mismatched load
    opt3 = torch.optim.Adam(m2.parameters())
    r["bad_load"] = catch(lambda: opt3.load_state_dict(ck["opt"]))
    opt4 = torch.optim.Adam([{"params": [m2[0].weight]}, {"params": [m2[0].bias, m2[2].weight, m2[2].bias]}])
    r["bad_load2"] = catch(lambda: opt4.load_state_dict(ck["opt"]))
    # add_param_group
    extra = torch.nn.Parameter(torch.ones(2))
    opt.add_param_group({"params": extra, "lr": 0.5})
    r["groups"] = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    r["dup"] = catch(lambda: opt.add_param_group({"params": [extra]}))
    r["bad_param"] = repr(catch(lambda: torch.optim.SGD([torch.ones(2)], lr=0.1)))
    r["bad_param2"] = catch(lambda: torch.optim.SGD(torch.ones(2, requires_grad=True), lr=0.1))
    r["empty"] = catch(lambda: torch.optim.SGD([], lr=0.1))
    r["neg_lr"] = catch(lambda: torch.optim.Adam(m.parameters(), lr=-1))
    r["bad_beta"] = catch(lambda: torch.optim.Adam(m.parameters(), betas=(1.0, 0.9)))
    r["sgd_nolr"] = repr(torch.optim.SGD(m.parameters()))
    r["nesterov_bad"] = catch(lambda: torch.optim.SGD(m.parameters(), lr=0.1, nesterov=True))
    r["sd_after_add"] = opt.state_dict()["param_groups"]
    return r

def schedulers(torch):
    r = {}
    def mk():
        p = torch.nn.Parameter(torch.ones(2))
        return p, torch.optim.SGD([p], lr=0.1, momentum=0.9)
    S = torch.optim.lr_scheduler
    p, o = mk()
    s = S.OneCycleLR(o, max_lr=1.0, total_steps=20)
    lrs = []
    for i in range(20):
        o.step(); s.step(); lrs.append(s.get_last_lr()[0])
    r["onecycle"] = lrs
    r["onecycle_mom"] = o.param_groups[0]["momentum"]
    r["onecycle_over"] = catch(lambda: (o.step(), s.step()))
    p, o = mk()
    s = S.OneCycleLR(o, max_lr=0.5, epochs=2, steps_per_epoch=5, anneal_strategy="linear")
    r["oc_sd"] = s.state_dict()
    p, o = mk()
    s = S.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=1)
    hist = []
    for v in [1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7, 0.8]:
        o.step(); s.step(v); hist.append(o.param_groups[0]["lr"])
    r["plateau"] = hist
    r["plateau_last"] = s.get_last_lr()
    r["plateau_sd"] = {k: v for k, v in s.state_dict().items()}
    p, o = mk()
    s1 = S.LinearLR(o, start_factor=0.1, total_iters=3)
    s2 = S.ExponentialLR(o, gamma=0.9)
    lrs = []
    for i in range(6):
        o.step(); s1.step(); s2.step(); lrs.append(o.param_groups[0]["lr"])
    r["chain_manual"] = lrs
    p, o = mk()
    s = S.SequentialLR(o, schedulers=[S.LinearLR(o, start_factor=0.1, total_iters=3), S.CosineAnnealingLR(o, T_max=5)], milestones=[3])
    lrs = []
    for i in range(8):
        o.step(); s.step(); lrs.append(s.get_last_lr())
    r["seq"] = lrs
    r["seq_sd_keys"] = sorted(s.state_dict().keys())
    p, o = mk()
    s = S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=2), S.ExponentialLR(o, gamma=0.9)])
    lrs = []
    for i in range(4):
        o.step(); s.step(); lrs.append(s.get_last_lr())
    r["chained"] = lrs
    p, o = mk()
    s = S.LambdaLR(o, lr_lambda=lambda e: 0.95 ** e)
    for i in range(3):
        o.step(); s.step()
    r["lambda_sd"] = {k: v for k, v in s.state_dict().items()}
    r["lambda_lr"] = s.get_last_lr()
    p, o = mk()
    s = S.MultiStepLR(o, milestones=[2, 4], gamma=0.1)
    sd0 = s.state_dict()
    r["ms_sd"] = sd0
    for i in range(5):
        o.step(); s.step()
    r["ms"] = s.get_last_lr()
    r["ms_lr_call"] = warns(lambda: s.get_lr())
    p, o = mk()
    r["warn_order"] = warns(lambda: [S.StepLR(o, 1).step(), o.step()][0])
    p, o = mk()
    s = S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)
    lrs = []
    for ep in range(4):
        for b in range(3):
            o.step(); s.step(ep + b / 3); lrs.append(s.get_last_lr()[0])
    r["cawr"] = lrs
    p, o = mk()
    s = S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")
    lrs = []
    for i in range(10):
        o.step(); s.step(); lrs.append(s.get_last_lr()[0])
    r["cyclic"] = lrs
    r["cyclic_mom"] = o.param_groups[0]["momentum"]
    p, o = mk()
    s = S.PolynomialLR(o, total_iters=4, power=2.0)
    lrs = []
    for i in range(6):
        o.step(); s.step(); lrs.append(s.get_last_lr()[0])
    r["poly"] = lrs
    r["step_epoch_warn"] = warns(lambda: s.step(3))
    r["initial_lr"] = o.param_groups[0].get("initial_lr")
    r["no_initial"] = catch(lambda: S.StepLR(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1), 1, last_epoch=3))
    return r

def accum_clip(torch):
    r = {}
    m = _model(torch)
    X, Y = _data(torch)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    accum = 4
    opt.zero_grad()
    norms = []
    for i in range(8):
        xb, yb = X[i:i+1], Y[i:i+1]
        loss = torch.nn.functional.mse_loss(m(xb), yb) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            norms.append(torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5))
            torch.nn.utils.clip_grad_value_(m.parameters(), 0.1)
            opt.step()
            opt.zero_grad(set_to_none=False)
    r["norms"] = norms
    r["grads"] = [p.grad for p in m.parameters()]
    opt.zero_grad()
    r["grads_none"] = [p.grad for p in m.parameters()]
    r["params"] = list(m.parameters())
    r["inf_norm"] = torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(torch.ones(2))], 1.0)
    p = torch.nn.Parameter(torch.ones(3)); p.grad = torch.tensor([3.0, -4.0, 0.0])
    r["inf"] = torch.nn.utils.clip_grad_norm_([p], 1.0, norm_type="inf")
    r["p_grad"] = p.grad
    p.grad = torch.tensor([float("nan"), 1.0, 0.0])
    r["nonfinite"] = catch(lambda: torch.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True))
    r["single"] = torch.nn.utils.clip_grad_norm_(torch.nn.Parameter(torch.ones(2)), 1.0)
    r["get_total_norm"] = torch.nn.utils.get_total_norm([torch.tensor([3.0, 4.0])]) if hasattr(torch.nn.utils, "get_total_norm") else None
    return r

def lbfgs(torch):
    r = {}
    x = torch.tensor([-1.5, 2.0], requires_grad=True, dtype=torch.float64)  # float32 rounds differently
    opt = torch.optim.LBFGS([x], lr=1, max_iter=20, history_size=10, line_search_fn="strong_wolfe")
    calls = [0]
    def closure():
        opt.zero_grad()
        calls[0] += 1
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss
    losses = [opt.step(closure).item() for _ in range(3)]
    r["losses"] = losses
    r["x"] = x
    r["calls"] = calls[0]
    r["state_keys"] = sorted(opt.state_dict()["state"][0].keys())
    r["func_evals"] = opt.state_dict()["state"][0]["func_evals"]
    r["noclosure"] = catch(lambda: opt.step())
    r["two_groups"] = catch(lambda: torch.optim.LBFGS([{"params": [x]}, {"params": [torch.ones(1, requires_grad=True)]}]))
    return r


def manual_sgd(torch):
    r = {}
    torch.manual_seed(0)
    x = torch.linspace(-1, 1, 10)
    y = 3 * x + 2
    w = torch.tensor(0.5, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    for i in range(5):
        pred = w * x + b
        loss = ((pred - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            b.sub_(0.1 * b.grad)
        w.grad.zero_()
        b.grad.data.zero_()
    r["wb"] = (w, b)
    r["w_leaf"] = (w.is_leaf, w.requires_grad, w.grad_fn)
    # old-style .data
    p = torch.ones(3, requires_grad=True)
    (p * 2).sum().backward()
    p.data.add_(-0.5 * p.grad.data)
    r["p"] = p
    r["pv"] = p._version
    r["p_data_rg"] = p.data.requires_grad
    # Variable
    V = torch.autograd.Variable(torch.ones(2), requires_grad=True)
    r["V"] = (V, type(V).__name__)
    # w = w - lr*grad mistake: makes non-leaf
    q = torch.ones(2, requires_grad=True)
    (q * 3).sum().backward()
    q = q - 0.1 * q.grad
    r["q"] = q
    r["q_grad"] = warns(lambda: q.grad)[0]
    # in-place on leaf outside no_grad
    z = torch.ones(2, requires_grad=True)
    (z * 3).sum().backward()
    r["leaf_sub"] = catch(lambda: z.sub_(0.1 * z.grad))
    def f():
        nonlocal z
        z -= 1
    r["leaf_isub"] = catch(f)
    # grad accumulation semantics
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (a ** 2).sum().backward()
    r["acc"] = a.grad
    g_before = a.grad
    (a * 1).sum().backward()
    r["same_obj"] = g_before is a.grad
    a.grad = None
    (a * 1).sum().backward()
    r["after_none"] = a.grad
    # backward with gradient
    c = a * torch.tensor([1.0, 10.0])
    c.backward(gradient=torch.tensor([1.0, 0.5]), retain_graph=True)
    r["bg"] = a.grad
    torch.autograd.backward([c.sum() * 0 + (a ** 3).sum()], retain_graph=True)
    r["bg2"] = a.grad
    # backward with inputs=
    u = torch.ones(2, requires_grad=True); v = torch.ones(2, requires_grad=True)
    (u * v * 2).sum().backward(inputs=[u])
    r["inputs"] = (u.grad, v.grad)
    # grad of int output
    r["int_out"] = catch(lambda: (a > 0).sum().backward())
    # requires_grad propagation through ops
    r["rg_ops"] = [(a + 1).requires_grad, (a.detach() + 1).requires_grad, a.argmax().requires_grad, (a > 1).requires_grad,
                   a.long().requires_grad, a.double().requires_grad, a.tolist(), a.clone().is_leaf, a.new_ones(2).requires_grad,
                   torch.zeros_like(a).requires_grad, a.floor().requires_grad, a.sign().requires_grad]
    r["floor_grad"] = torch.autograd.grad(a.floor().sum() + a.round().sum() + a.sign().sum(), a)
    r["numpy_err"] = catch(lambda: a.numpy())
    r["np_detach"] = a.detach().numpy().tolist()
    r["bool_err"] = catch(lambda: bool(a))
    return r

def custom_optimizer(torch):
    r = {}
    class MySGD(torch.optim.Optimizer):
        def __init__(self, params, lr=0.01, momentum=0.0):
            if lr < 0.0:
                raise ValueError(f"Invalid learning rate: {lr}")
            defaults = dict(lr=lr, momentum=momentum)
            super().__init__(params, defaults)

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["buf"] = torch.zeros_like(p)
                    state["step"] += 1
                    buf = state["buf"]
                    buf.mul_(group["momentum"]).add_(p.grad)
                    p.add_(buf, alpha=-group["lr"])
            return loss
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = MySGD([w], lr=0.1, momentum=0.9)
    def closure():
        opt.zero_grad()
        l = (w ** 2).sum()
        l.backward()
        return l
    r["losses"] = [opt.step(closure) for _ in range(3)]
    r["w"] = w
    r["sd"] = opt.state_dict()
    r["repr"] = repr(opt)
    r["defaults"] = opt.defaults
    opt2 = MySGD([torch.nn.Parameter(torch.tensor([1.0, -2.0]))])
    opt2.load_state_dict(opt.state_dict())
    r["sd2"] = opt2.state_dict()
    r["state_type"] = type(opt.state).__name__
    # hooks
    log = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, a, k: log.append("post"))
    opt.step(closure)
    h1.remove(); h2.remove()
    opt.step(closure)
    r["log"] = [v if isinstance(v, str) else v[1] for v in log]  # torch counts a scalar operand as an input
    # scheduler on custom optimizer
    s = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    opt.step(closure); s.step()
    r["lr"] = (s.get_last_lr(), opt.param_groups[0]["lr"], opt.param_groups[0]["initial_lr"])
    # custom scheduler
    class Warmup(torch.optim.lr_scheduler.LRScheduler):
        def __init__(self, optimizer, warmup, last_epoch=-1):
            self.warmup = warmup
            super().__init__(optimizer, last_epoch)
        def get_lr(self):
            f = min(1.0, (self.last_epoch + 1) / self.warmup)
            return [base * f for base in self.base_lrs]
    p = torch.nn.Parameter(torch.ones(1))
    o = torch.optim.Adam([p], lr=1.0)
    ws = Warmup(o, 4)
    lrs = [o.param_groups[0]["lr"]]
    for i in range(5):
        o.step(); ws.step(); lrs.append(o.param_groups[0]["lr"])
    r["warm"] = lrs
    r["warm_sd"] = ws.state_dict()
    class Old(torch.optim.lr_scheduler._LRScheduler):
        def get_lr(self):
            return [b * 0.5 for b in self.base_lrs]
    o2 = torch.optim.SGD([p], lr=1.0)
    r["old"] = Old(o2).get_last_lr()
    # lr as tensor
    o3 = torch.optim.Adam([torch.nn.Parameter(torch.ones(2))], lr=torch.tensor(0.01))
    r["lr_tensor"] = o3.param_groups[0]["lr"]
    # set lr manually
    for g in o.param_groups:
        g["lr"] = 0.123
    r["manual_lr"] = o.param_groups[0]["lr"]
    # zero_grad set_to_none default
    w.grad = torch.ones(2)
    opt.zero_grad()
    r["zg"] = w.grad
    return r

def optim_state(torch):
    r = {}
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
    b = torch.nn.Parameter(torch.tensor([0.5]))
    for name, kw in [("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", {}), ("AdamW", dict(amsgrad=True)),
                     ("RMSprop", dict(centered=True, momentum=0.1)), ("Adagrad", {}), ("Adadelta", {}), ("Adamax", {}),
                     ("NAdam", {}), ("RAdam", {}), ("ASGD", {}), ("Rprop", {}), ("Adam", dict(maximize=True, weight_decay=0.1)),
                     ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1))]:
        w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0]))
        b = torch.nn.Parameter(torch.tensor([0.5]))
        o = getattr(torch.optim, name)([w, b], **kw)
        r0 = o.state_dict()
        for i in range(2):
            o.zero_grad()
            ((w ** 2).sum() + (b * 3).sum()).backward()
            o.step()
        key = name + str(sorted(kw))
        sd = o.state_dict()
        r[key] = {"before": r0, "after": sd, "w": w, "b": b,
                  "step_type": {k: type(v).__name__ for k, v in sd["state"].get(0, {}).items()}}
    # parameter without grad: no state entry
    w = torch.nn.Parameter(torch.ones(2)); u = torch.nn.Parameter(torch.ones(2))
    o = torch.optim.Adam([w, u])
    (w * 2).sum().backward(); o.step()
    r["partial"] = o.state_dict()
    return r


def anomaly(torch):
    r = {}
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    def f():
        with torch.autograd.detect_anomaly():
            y = torch.sqrt(x) * 0
            z = (x / y).sum()
            z.backward()
    e, w = warns(lambda: catch(f))
    r["exc"] = (type(e).__name__, str(e).split("\n")[0])
    r["w"] = [(c, m.split("\n")[0]) for c, m in w]
    r["enabled"] = torch.is_anomaly_enabled()
    def g():
        with torch.autograd.set_detect_anomaly(True):
            r["in"] = torch.is_anomaly_enabled()
            (x.log() * 0).sum().backward()
    e, w = warns(lambda: catch(g))
    r["g"] = e if e is None else (type(e).__name__, str(e).split("\n")[0])
    r["gw"] = [(c, m.split("\n")[0]) for c, m in w]
    r["check_nan"] = torch.is_anomaly_check_nan_enabled() if hasattr(torch, "is_anomaly_check_nan_enabled") else None
    return r

def views(torch):
    r = {}
    x = torch.arange(6.0).reshape(2, 3).requires_grad_()
    y = x * 1
    v = y[0]
    v.retain_grad()
    v.mul_(2)
    r["v_gf"] = v.grad_fn.name()
    r["y_gf"] = y.grad_fn.name()
    y.sum().backward()
    r["xg"] = x.grad
    # view of leaf in-place
    # in-place on view under no_grad then use
    w = torch.ones(4, requires_grad=True)
    with torch.no_grad():
        w[1:3] = 5
    r["w"] = w
    r["w_leaf"] = (w.is_leaf, w.requires_grad, w._version)
    # detach then inplace changes orig
    a = torch.ones(3, requires_grad=True)
    b = a.exp()
    c = b.detach()
    c.zero_()
    r["b_err"] = catch(lambda: b.sum().backward())
    return r

def func_basic(torch):
    r = {}
    F = torch.func
    x = torch.tensor([1., 2., 3.])
    r["grad"] = F.grad(lambda t: (t ** 3).sum())(x)
    r["grad2"] = F.grad(F.grad(lambda t: (t ** 3).sum()))(torch.tensor(2.))
    r["hess"] = F.hessian(lambda t: (t ** 3).sum())(x)
    r["jacrev"] = F.jacrev(lambda t: t.sin())(x)
    r["jacfwd"] = F.jacfwd(lambda t: t.sin() * t)(x)
    r["jvp"] = F.jvp(lambda t: t ** 2, (x,), (torch.ones(3),))
    r["vjp"] = F.vjp(lambda t: t ** 2, x)[1](torch.ones(3))
    r["vjp_out"] = F.vjp(lambda t: t ** 2, x)[0]
    r["vmap_mm"] = F.vmap(lambda a, b: a @ b)(torch.ones(4, 2, 3), torch.arange(12.).reshape(4, 3))
    r["vmap_grad"] = F.vmap(F.grad(lambda w, xx: (w * xx).sum() ** 2), in_dims=(None, 0))(x, torch.arange(6.).reshape(2, 3))
    r["gv"] = F.grad_and_value(lambda t: (t ** 2).sum())(x)
    r["gv_aux"] = F.grad_and_value(lambda t: ((t ** 2).sum(), t.mean()), has_aux=True)(x)
    r["g_aux"] = F.grad(lambda t: ((t ** 2).sum(), {"m": t.max()}), has_aux=True)(x)
    r["argnums"] = F.grad(lambda a, b: (a * b ** 2).sum(), argnums=(0, 1))(x, x + 1)
    r["argnum1"] = F.grad(lambda a, b: (a * b ** 2).sum(), argnums=1)(x, x + 1)
    r["dict"] = F.grad(lambda p: (p["w"] * p["b"]).sum())({"w": x, "b": torch.tensor(2.)})
    r["jac2"] = F.jacrev(lambda a, b: (a * b, a + b), argnums=(0, 1))(x, x * 2)
    r["jac_mat"] = F.jacrev(lambda m: m @ m)(torch.arange(4.).reshape(2, 2))
    r["vmap_dims"] = F.vmap(lambda a: a.sum(0), in_dims=1, out_dims=0)(torch.arange(6.).reshape(2, 3))
    r["vmap_out1"] = F.vmap(lambda a: a * 2, in_dims=0, out_dims=1)(torch.arange(6.).reshape(2, 3))
    r["vmap_tuple"] = F.vmap(lambda a: (a.sum(), a.max()))(torch.arange(6.).reshape(2, 3))
    r["vmap_none_out"] = F.vmap(lambda a, s: (a * s, s), in_dims=(0, None), out_dims=(0, None))(torch.ones(2, 3), torch.tensor(3.))
    r["vmap_nested"] = F.vmap(F.vmap(lambda a, b: a * b))(torch.ones(2, 3), torch.arange(6.).reshape(2, 3))
    r["vmap_kw"] = F.vmap(lambda a, scale=1.0: a * scale)(torch.ones(2, 2), scale=3.0)
    r["e1"] = catch(lambda: F.grad(lambda t: t * 2)(x))
    r["e2"] = catch(lambda: F.vmap(lambda a, b: a + b)(torch.ones(2), torch.ones(3)))
    r["e3"] = catch(lambda: F.vmap(lambda a: 3.0)(torch.ones(2)))
    r["e4"] = catch(lambda: F.grad(lambda t: t.sum())(3.0))
    r["e5"] = catch(lambda: F.vmap(lambda a: a, in_dims=1)(torch.ones(2)))
    r["e6"] = catch(lambda: F.grad(lambda t: t.sum(), argnums=1)(x))
    r["e7"] = catch(lambda: F.vmap(lambda a: a, in_dims=(0, 0))(torch.ones(2)))
    r["unused"] = F.grad(lambda a, b: (a * 2).sum(), argnums=1)(x, x)
    r["const"] = F.grad(lambda a: torch.tensor(3.0))(x)
    with torch.no_grad():
        r["nograd"] = F.grad(lambda t: (t ** 2).sum())(x)
    w = torch.tensor([1.0, -1.0, 0.5], requires_grad=True)
    g = F.grad(lambda t: (t ** 3).sum())(w)
    r["outer"] = g
    g.sum().backward()
    r["outer_grad"] = w.grad
    return r

def per_sample_grads(torch):
    r = {}
    F = torch.func
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5 + i * 0.1, p.numel()).reshape(p.shape))
    data = torch.linspace(-1, 1, 15).reshape(5, 3)
    targets = torch.tensor([0, 1, 1, 0, 1])
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        t = target.unsqueeze(0)
        pred = F.functional_call(model, (params, buffers), (batch,))
        return torch.nn.functional.cross_entropy(pred, t)
    psg = F.vmap(F.grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data, targets)
    r["psg"] = psg
    # ensembling
    models = [torch.nn.Linear(3, 2) for _ in range(3)]
    for j, m in enumerate(models):
        with torch.no_grad():
            m.weight.copy_(torch.full((2, 3), 0.1 * (j + 1))); m.bias.fill_(j)
    sp, sb = F.stack_module_state(models)
    r["stacked"] = sp
    base = models[0]
    def fmodel(p, b, xx):
        return F.functional_call(base, (p, b), (xx,))
    ens = F.vmap(fmodel, in_dims=(0, 0, None))(sp, sb, data)
    r["ens"] = (ens.detach(), ens.requires_grad)
    # jacobian of a model wrt input
    r["jac_model"] = F.jacrev(model)(data[0])
    r["hess_loss"] = F.hessian(lambda xx: compute_loss(params, buffers, xx, targets[0]))(data[0])
    return r


def swa(torch):
    r = {}
    S = torch.optim.swa_utils
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5 + i * 0.1, p.numel()).reshape(p.shape))
    X = torch.linspace(-1, 1, 24).reshape(8, 3)
    Y = torch.stack([X.sum(1), (X ** 2).sum(1)], 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    swa_model = S.AveragedModel(model)
    ema_model = S.AveragedModel(model, multi_avg_fn=S.get_ema_multi_avg_fn(0.9))
    ema2 = S.AveragedModel(model, avg_fn=S.get_ema_avg_fn(0.8), use_buffers=True)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    swa_sched = S.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear")
    lrs = []
    for epoch in range(8):
        for i in range(0, 8, 4):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(X[i:i + 4]), Y[i:i + 4]).backward()
            opt.step()
            ema_model.update_parameters(model)
            ema2.update_parameters(model)
        if epoch >= 4:
            swa_model.update_parameters(model)
            swa_sched.step()
        else:
            sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    r["lrs"] = lrs
    loader = [(X[i:i + 4], Y[i:i + 4]) for i in range(0, 8, 4)]
    S.update_bn(loader, swa_model)
    r["swa_sd"] = swa_model.state_dict()
    r["ema_sd"] = ema_model.state_dict()
    r["ema2_sd"] = ema2.state_dict()
    r["n"] = swa_model.n_averaged
    swa_model.eval()
    r["pred"] = swa_model(X)
    r["sched_sd"] = swa_sched.state_dict()
    r["repr"] = repr(swa_model)
    r["training"] = (swa_model.training, swa_model.module.training)
    r["bad"] = catch(lambda: S.SWALR(opt, swa_lr=0.1, anneal_strategy="exp"))
    r["bad2"] = catch(lambda: S.SWALR(opt, swa_lr=[0.1, 0.2]))
    return r


def saved_hooks(torch):
    r = {}
    packed = []
    def pack(t):
        packed.append(tuple(t.shape))
        return t.clone()
    def unpack(t):
        return t * 1
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sin()
        m = torch.nn.Linear(3, 2)
        with torch.no_grad():
            m.weight.fill_(0.5); m.bias.fill_(0.1)
        o = torch.nn.functional.relu(m(x.unsqueeze(0))).tanh().sum()
        e = x.exp()
        gg = torch.autograd.grad(e.sum(), x, create_graph=True)[0]
    y.sum().backward()
    r["g"] = x.grad
    r["packed_some"] = len(packed) > 0  # how many each op saves differs
    x.grad = None
    o.backward()
    r["g_lin"] = (x.grad, m.weight.grad)
    x.grad = None
    gg.sum().backward()
    r["gg"] = x.grad
    with torch.autograd.graph.save_on_cpu():
        z = (x.exp() * x).sum()
    x.grad = None
    z.backward()
    r["g2"] = x.grad
    # unpack returning non tensor
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        q = x.exp().sum()
    r["bad_unpack"] = catch(lambda: q.backward())
    # in-place after saving with hooks: hooks that copy make it safe
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
        a = x * 1
        b = a.exp()
    a.add_(1)  # a is not saved by exp (exp saves output); b saved
    b2 = b.sum()
    x.grad = None
    b2.backward()
    r["ok"] = x.grad
    return r


def optim_more(torch):
    r = {}
    def P(*v, dt=None):
        return torch.nn.Parameter(torch.tensor(list(v), dtype=dt))
    # flags
    for kw in (dict(foreach=True), dict(foreach=False), dict(fused=True), dict(capturable=False), dict(differentiable=False)):
        p = P(1.0, 2.0)
        o = catch(lambda: torch.optim.Adam([p], lr=0.1, **kw))
        if isinstance(o, Exception):
            r[str(kw)] = o
            continue
        (p ** 2).sum().backward(); o.step()
        r[str(kw)] = (p, o.state_dict()["param_groups"])
    for kw in (dict(fused=True), dict(foreach=True)):
        p = P(1.0, 2.0)
        o = catch(lambda: torch.optim.SGD([p], lr=0.1, momentum=0.9, **kw))
        if not isinstance(o, Exception):
            (p ** 2).sum().backward(); o.step()
        r["sgd" + str(kw)] = p
    # load float32 state into float64 params
    p = P(1.0, 2.0)
    o = torch.optim.Adam([p], lr=0.1)
    (p ** 2).sum().backward(); o.step()
    sd = o.state_dict()
    q = P(1.0, 2.0, dt=torch.float64)
    o2 = torch.optim.Adam([q], lr=0.5)
    o2.load_state_dict(sd)
    r["cast"] = o2.state[q]
    r["cast_lr"] = o2.param_groups[0]["lr"]
    # sd is a copy?
    sd["param_groups"][0]["lr"] = 99
    r["lr_after_mut"] = o.param_groups[0]["lr"]
    sd2 = o.state_dict()
    r["state_shared"] = sd2["state"][0]["exp_avg"] is o.state[p]["exp_avg"]
    # torch.save / load weights_only
    buf = io.BytesIO()
    torch.save(o.state_dict(), buf); buf.seek(0)
    r["loaded"] = torch.load(buf, weights_only=True)
    # add_param_group after scheduler
    o3 = torch.optim.SGD([P(1.0)], lr=0.1)
    s3 = torch.optim.lr_scheduler.StepLR(o3, 1, gamma=0.5)
    o3.add_param_group({"params": [P(2.0)], "lr": 0.2})
    o3.step()
    r["sched_after_add"] = catch(lambda: s3.step())
    r["groups_after_add"] = [{k: v for k, v in g.items() if k != "params"} for g in o3.param_groups]
    # plateau variants
    for kw in (dict(mode="max", threshold_mode="abs", threshold=0.1, patience=0, cooldown=1, min_lr=[0.01]),
               dict(factor=0.1, patience=2, eps=1e-3)):
        o4 = torch.optim.SGD([P(1.0)], lr=0.1)
        s4 = torch.optim.lr_scheduler.ReduceLROnPlateau(o4, **kw)
        r["pl_last_before"] = s4.get_last_lr()
        hist = []
        for v in [1.0, 1.05, 1.2, 1.0, 0.9, 0.95, 1.3, 1.31, 1.0, 1.0]:
            o4.step(); s4.step(v); hist.append(o4.param_groups[0]["lr"])
        r["pl" + str(sorted(kw))] = (hist, s4.num_bad_epochs, s4.best, s4.cooldown_counter)
    o5 = torch.optim.SGD([P(1.0)], lr=0.1)
    r["pl_bad"] = catch(lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(o5, factor=1.0))
    r["pl_bad_mode"] = catch(lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(o5, mode="avg"))
    r["pl_noarg"] = catch(lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(o5).step())
    # OneCycle three-phase with Adam
    o6 = torch.optim.Adam([P(1.0)], lr=0.1)
    s6 = torch.optim.lr_scheduler.OneCycleLR(o6, max_lr=0.5, total_steps=12, three_phase=True, div_factor=10, final_div_factor=100)
    h = []
    for i in range(12):
        o6.step(); s6.step(); h.append((o6.param_groups[0]["lr"], o6.param_groups[0]["betas"][0]))
    r["oc3"] = h
    r["oc_bad"] = catch(lambda: torch.optim.lr_scheduler.OneCycleLR(o6, max_lr=0.5))
    r["oc_bad2"] = catch(lambda: torch.optim.lr_scheduler.OneCycleLR(torch.optim.Adagrad([P(1.0)]), max_lr=0.5, total_steps=3))
    # cosine with eta_min beyond T_max
    o7 = torch.optim.SGD([P(1.0)], lr=0.1)
    s7 = torch.optim.lr_scheduler.CosineAnnealingLR(o7, T_max=3, eta_min=0.01)
    h = []
    for i in range(8):
        o7.step(); s7.step(); h.append(s7.get_last_lr()[0])
    r["cos"] = h
    # verbose deprecation
    # step(epoch) deprecation
    o9 = torch.optim.SGD([P(1.0)], lr=0.1)
    s9 = torch.optim.lr_scheduler.StepLR(o9, 2)
    o9.step()
    r["epoch_warn"] = warns(lambda: (s9.step(5), s9.get_last_lr())[1])
    # zero_grad on param with grad that's a view
    # Adam on param without grad, mixed None grads
    a, b = P(1.0, 2.0), P(3.0)
    o10 = torch.optim.AdamW([a, b], lr=0.1)
    (a * 2).sum().backward()
    o10.step()
    r["mixed"] = (a, b, sorted(o10.state_dict()["state"].keys()))
    # complex params
    c = torch.nn.Parameter(torch.tensor([1 + 1j, 2 - 1j]))
    o11 = torch.optim.Adam([c], lr=0.1)
    (c.abs() ** 2).sum().backward(); o11.step()
    r["complex"] = c
    # optimizer on non-leaf
    r["nonleaf"] = repr(catch(lambda: torch.optim.SGD([P(1.0) * 2], lr=0.1)))
    r["dup_params"] = warns(lambda: repr(catch(lambda: torch.optim.SGD([a, a], lr=0.1))))
    r["dict_params"] = repr(catch(lambda: torch.optim.SGD([("a", a), ("b", b)], lr=0.1)))
    return r


def gradcheck_prog(torch):
    r = {}
    class Sq(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 2
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * g
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    r["ok"] = torch.autograd.gradcheck(Sq.apply, (x,), eps=1e-6, atol=1e-4)
    r["ok2"] = torch.autograd.gradgradcheck(lambda t: (t ** 3).sum(), (x,))
    e = catch(lambda: torch.autograd.gradcheck(Wrong.apply, (x,)))
    r["wrong"] = (type(e).__name__, str(e).split("\n")[0])
    r["wrong_nr"] = torch.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    x32 = torch.tensor([0.5, -1.0], requires_grad=True)
    res, w = warns(lambda: catch(lambda: torch.autograd.gradcheck(Sq.apply, (x32,), eps=1e-3, atol=1e-2, rtol=1e-2)))
    r["f32"] = (res if isinstance(res, bool) else type(res).__name__, [m.split("\n")[0][:80] for _, m in w])
    r["fast"] = torch.autograd.gradcheck(Sq.apply, (x,), fast_mode=True)
    return r


def grad_misc(torch):
    r = {}
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x ** 2
    # is_grads_batched
    r["batched"] = torch.autograd.grad(y, x, torch.eye(3), is_grads_batched=True)
    # backward twice with retain_graph accumulates
    z = (x * 3).sum()
    z.backward(retain_graph=True); z.backward()
    r["twice"] = x.grad
    # where with nan trap
    a = torch.tensor([0.0, 1.0], requires_grad=True)
    out = torch.where(a > 0, a.sqrt(), torch.zeros_like(a))
    out.sum().backward()
    r["where_nan"] = a.grad
    # norm at zero
    b = torch.zeros(3, requires_grad=True)
    b.norm().backward()
    r["norm0"] = b.grad
    c = torch.zeros(3, requires_grad=True)
    torch.linalg.vector_norm(c).backward()
    r["vnorm0"] = c.grad
    # abs at 0, relu at 0, max ties, clamp boundary
    d = torch.tensor([0.0, 1.0, 1.0, -2.0], requires_grad=True)
    (d.abs().sum() + d.relu().sum() + d.max() + d.clamp(0, 1).sum() + d.amax() + torch.nn.functional.leaky_relu(d, 0.1).sum()).backward()
    r["kinks"] = d.grad
    # grad of sum of list of outputs
    e = torch.tensor([1.0, 2.0], requires_grad=True)
    outs = [e * 2, e ** 2]
    r["multi"] = torch.autograd.grad(outs, e, grad_outputs=[torch.ones(2), torch.ones(2)])
    r["multi_none"] = catch(lambda: torch.autograd.grad(outs, e))
    # hooks on tensor used twice
    f = torch.tensor([1.0], requires_grad=True)
    g = f * 2
    calls = []
    g.register_hook(lambda gr: calls.append(gr.item()))
    (g * 3 + g * 4).sum().backward()
    r["calls"] = calls
    # requires_grad toggle on leaf
    h = torch.ones(2)
    h.requires_grad = True
    (h * 2).sum().backward()
    r["h"] = h.grad
    h.requires_grad_(False)
    r["h_after"] = (h.requires_grad, h.grad)
    # grad attribute set manually
    h.grad = None
    # detect backward through int cast
    i = torch.tensor([1.5, 2.5], requires_grad=True)
    r["int_cast"] = (i.int().requires_grad, i.round().requires_grad)
    # grad of indexing with repeated indices
    j = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    j[[0, 0, 2]].sum().backward()
    r["rep_idx"] = j.grad
    # set_grad_enabled as a function-style decorator
    @torch.set_grad_enabled(False)
    def fn(t):
        return t * 2
    r["sge_deco"] = fn(j)
    # nested no_grad + enable_grad + retain_grad of intermediate in loop
    k = torch.ones(2, requires_grad=True)
    ys = []
    for _ in range(3):
        k2 = k * 2
        k2.retain_grad()
        ys.append(k2)
    sum(y.sum() for y in ys).backward()
    r["loop_retain"] = [y.grad for y in ys]
    # grad_fn.next_functions structure
    m = torch.ones(2, requires_grad=True)
    n = (m * 2 + 1).sum()
    r["nf_names"] = [type(fn_).__name__ if fn_ is not None else None for fn_, _ in n.grad_fn.next_functions]
    r["gf_name"] = n.grad_fn.name()
    sq = m.pow(2)
    ex = m.exp()
    r["saved"] = (sq.grad_fn._saved_self is m, ex.grad_fn._saved_result, catch(lambda: ex.grad_fn._saved_self))
    return r


def fn_edge(torch):
    r = {}
    F = torch.autograd.Function
    class ViewFn(F):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)
        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2)
    x = torch.ones(2, 2, requires_grad=True)
    v = ViewFn.apply(x)
    r["view"] = (v, v._base is x if v._base is not None else None)
    v.sum().backward()
    r["view_g"] = x.grad
    class ND(F):
        @staticmethod
        def forward(ctx, x):
            idx = x.argsort()
            ctx.mark_non_differentiable(idx)
            s = x.sort().values
            return s, idx
        @staticmethod
        def backward(ctx, gs, gi):
            r["gi"] = gi
            return gs
    y = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
    s, i = ND.apply(y)
    r["nd"] = (s, i)
    s.sum().backward()
    r["nd_g"] = y.grad
    class FloatND(F):
        @staticmethod
        def forward(ctx, x):
            m = x * 2
            ctx.mark_non_differentiable(m)
            return m
        @staticmethod
        def backward(ctx, g):
            return g
    m = FloatND.apply(y)
    r["float_nd"] = m
    r["float_nd_bw"] = catch(lambda: m.sum().backward())
    r["kw"] = catch(lambda: ND.apply(x=y))
    class NoneOut(F):
        @staticmethod
        def forward(ctx, x):
            return None
        @staticmethod
        def backward(ctx, g):
            return None
    r["none_out"] = catch(lambda: NoneOut.apply(y))
    class RetInt(F):
        @staticmethod
        def forward(ctx, x):
            return x.long()
        @staticmethod
        def backward(ctx, g):
            return g
    r["ret_int"] = RetInt.apply(y)
    class BadGradType(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2
        @staticmethod
        def backward(ctx, g):
            return 5
    r["bad_type"] = catch(lambda: BadGradType.apply(y).sum().backward())
    class GradDtype(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2
        @staticmethod
        def backward(ctx, g):
            return g.double()
    y.grad = None
    GradDtype.apply(y).sum().backward()
    r["gd"] = y.grad
    class NoBackward(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2
    r["nobw"] = catch(lambda: NoBackward.apply(y).sum().backward())
    class NoFwd(F):
        pass
    r["nofwd"] = catch(lambda: NoFwd.apply(y))
    class WithNonTensorGrad(F):
        @staticmethod
        def forward(ctx, x, flag, other):
            ctx.flag = flag
            return x * other
        @staticmethod
        def backward(ctx, g):
            return g * 2, None, g.sum() * 0 + 1
    o = torch.tensor(3.0, requires_grad=True)
    y.grad = None
    WithNonTensorGrad.apply(y, True, o).sum().backward()
    r["nt"] = (y.grad, o.grad)
    class GradForNonTensor(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k
        @staticmethod
        def backward(ctx, g):
            return g, g
    r["g_for_nontensor"] = catch(lambda: GradForNonTensor.apply(y, 2.0).sum().backward())
    class GradForNoRG(F):
        @staticmethod
        def forward(ctx, x, w):
            return x * w
        @staticmethod
        def backward(ctx, g):
            return g, g
    y.grad = None
    GradForNoRG.apply(y, torch.ones(3)).sum().backward()
    r["g_norg"] = y.grad
    # needs_input_grad
    class NIG(F):
        @staticmethod
        def forward(ctx, a, b, c):
            return a + b
        @staticmethod
        def backward(ctx, g):
            r["nig"] = ctx.needs_input_grad
            return g, g, None
    NIG.apply(y, torch.ones(3), 3).sum().backward()
    # jvp not implemented
    r["ctx_name"] = type(NIG.apply(y, torch.ones(3), 3).grad_fn).__name__
    return r


def named_opt(torch):
    r = {}
    torch.manual_seed(0)
    m = torch.nn.Linear(2, 1)
    with torch.no_grad():
        m.weight.fill_(0.5); m.bias.fill_(0.1)
    o = torch.optim.Adam(m.named_parameters(), lr=0.1)
    m(torch.ones(1, 2)).sum().backward()
    o.step()
    sd = o.state_dict()
    r["sd"] = sd
    r["pg"] = o.param_groups[0].get("param_names")
    log = []
    o.register_state_dict_pre_hook(lambda opt: log.append("sd_pre"))
    o.register_state_dict_post_hook(lambda opt, sd: log.append("sd_post") or sd)
    o.register_load_state_dict_pre_hook(lambda opt, sd: log.append("ld_pre"))
    o.register_load_state_dict_post_hook(lambda opt: log.append("ld_post"))
    o.load_state_dict(o.state_dict())
    r["log"] = log
    # zero_grad after create_graph backward
    w = torch.nn.Parameter(torch.ones(2))
    o2 = torch.optim.SGD([w], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (w ** 2).sum().backward(create_graph=True)
    r["gf_before"] = w.grad.requires_grad
    o2.zero_grad(set_to_none=False)
    r["after_zero"] = w.grad
    # sd of optimizer with named params loaded into unnamed
    m2 = torch.nn.Linear(2, 1)
    o3 = torch.optim.Adam(m2.parameters(), lr=0.3)
    r["load_named_into_unnamed"] = catch(lambda: o3.load_state_dict(sd))
    r["o3_groups"] = [{k: v for k, v in g.items() if k != "params"} for g in o3.param_groups]
    # multiple param groups with named
    o4 = catch(lambda: torch.optim.SGD([{"params": m.named_parameters(), "lr": 0.1}], lr=0.2))
    r["o4"] = o4 if isinstance(o4, Exception) else o4.param_groups[0].get("param_names")
    return r


def sched_more(torch):
    r = {}
    S = torch.optim.lr_scheduler
    def mk(n=2):
        ps = [torch.nn.Parameter(torch.ones(1)) for _ in range(n)]
        return torch.optim.SGD([{"params": [ps[0]], "lr": 0.1}, {"params": ps[1:], "lr": 0.01}], lr=1.0, momentum=0.9)
    class Lam:
        def __init__(self, k): self.k = k
        def __call__(self, e): return self.k ** e
    o = mk()
    s = S.LambdaLR(o, [Lam(0.5), lambda e: 1.0 / (e + 1)])
    for _ in range(3):
        o.step(); s.step()
    sd = s.state_dict()
    r["lam_sd"] = sd
    o2 = mk()
    s2 = S.LambdaLR(o2, [Lam(0.9), lambda e: 1.0])
    s2.load_state_dict(sd)
    r["lam_loaded_k"] = s2.lr_lambdas[0].k
    # resume with last_epoch
    o3 = mk()
    for g in o3.param_groups:
        g["initial_lr"] = g["lr"]
    s3 = S.StepLR(o3, step_size=2, gamma=0.5, last_epoch=3)
    r["resume"] = (s3.get_last_lr(), s3.last_epoch, [g["lr"] for g in o3.param_groups])
    o4 = mk()
    s4 = S.CosineAnnealingLR(o4, T_max=10, eta_min=0.001)
    o4.param_groups[0]["initial_lr"] = 0.1
    s4b = catch(lambda: S.CosineAnnealingLR(o4, T_max=10, last_epoch=4))
    r["cos_resume"] = s4b.get_last_lr() if not isinstance(s4b, Exception) else s4b
    # MultiStepLR with unsorted/duplicate milestones
    o5 = mk()
    s5 = S.MultiStepLR(o5, milestones=[3, 1, 3], gamma=0.5)
    h = []
    for _ in range(5):
        o5.step(); s5.step(); h.append(s5.get_last_lr())
    r["ms"] = h
    r["ms_sd"] = s5.state_dict()
    # CyclicLR exp_range with Adam (no momentum) -> cycle_momentum error
    o6 = torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], lr=0.1)
    s6 = catch(lambda: S.CyclicLR(o6, 0.01, 0.1, step_size_up=2, mode="exp_range", gamma=0.9))
    r["cyc_adam"] = s6.get_last_lr() if not isinstance(s6, Exception) else s6
    o7 = torch.optim.Adagrad([torch.nn.Parameter(torch.ones(1))], lr=0.1)
    r["cyc_nomom"] = catch(lambda: S.CyclicLR(o7, 0.01, 0.1))
    s7 = S.CyclicLR(o7, [0.01], [0.1], cycle_momentum=False, step_size_up=1, step_size_down=3, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations")
    h = []
    for _ in range(6):
        o7.step(); s7.step(); h.append(s7.get_last_lr()[0])
    r["cyc_fn"] = h
    sd7 = s7.state_dict()
    r["cyc_sd_keys"] = sorted(sd7.keys())
    # SequentialLR milestones error
    o8 = mk()
    r["seq_bad"] = catch(lambda: S.SequentialLR(o8, [S.StepLR(o8, 1)], milestones=[1]))
    r["seq_bad2"] = catch(lambda: S.SequentialLR(o8, [S.StepLR(o8, 1), S.StepLR(mk(), 1)], milestones=[1]))
    # chaining with ReduceLROnPlateau in ChainedScheduler -> error?
    o9 = mk()
    r["chain_plateau"] = catch(lambda: S.ChainedScheduler([S.ReduceLROnPlateau(o9), S.StepLR(o9, 1)]).__class__.__name__)
    # plateau with lr tensor
    o10 = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=torch.tensor(0.1))
    s10 = S.ReduceLROnPlateau(o10, patience=0)
    for v in (1.0, 2.0, 3.0):
        o10.step(); s10.step(v)
    r["pl_tensor"] = (o10.param_groups[0]["lr"], s10.get_last_lr())
    # ExponentialLR with lr tensor
    o11 = torch.optim.Adam([torch.nn.Parameter(torch.ones(1))], lr=torch.tensor(0.1))
    s11 = S.ExponentialLR(o11, 0.5)
    o11.step(); s11.step()
    r["exp_tensor"] = (o11.param_groups[0]["lr"], s11.get_last_lr(), s11.base_lrs)
    # scheduler on non-optimizer
    r["non_opt"] = catch(lambda: S.StepLR(object(), 1))
    # get_last_lr before any step
    o12 = mk()
    r["last0"] = S.ExponentialLR(o12, 0.9).get_last_lr()
    # step_count / _step_count and optimizer._opt_called
    return r


def adafactor_prog(torch):
    r = {}
    for kw in ({}, dict(lr=0.05, weight_decay=0.1), dict(maximize=True, eps=(1e-30, 1e-3), d=2.0), dict(beta2_decay=-0.5)):
        torch.manual_seed(0)
        W = torch.nn.Parameter(torch.linspace(-1, 1, 12).reshape(3, 4))
        T3 = torch.nn.Parameter(torch.linspace(-1, 1, 24).reshape(2, 3, 4))
        b = torch.nn.Parameter(torch.linspace(0.1, 0.5, 4))
        o = torch.optim.Adafactor([W, T3, b], **kw)
        for i in range(4):
            o.zero_grad()
            (((W @ torch.tensor([1.0, 2.0, 0.5, 1.5])) ** 2).sum() + (T3 ** 3).sum() + (b * torch.arange(4.0)).sum()).backward()
            o.step()
        r[str(sorted(kw))] = {"W": W, "T3": T3, "b": b, "sd": o.state_dict(), "v": W._version}
    r["repr"] = repr(o)
    r["bad"] = catch(lambda: torch.optim.Adafactor([b], d=0.5))
    r["bad2"] = catch(lambda: torch.optim.Adafactor([b], beta2_decay=0.5))
    c = torch.nn.Parameter(torch.ones(2, dtype=torch.complex64))
    oc = torch.optim.Adafactor([c])
    (c.abs() ** 2).sum().backward()
    r["complex"] = catch(lambda: oc.step())
    return r


PROGRAMS = [custom_fn, hooks, errors, modes, functional, doublebackward, train_loop, state_roundtrip, schedulers,
            accum_clip, lbfgs, manual_sgd, custom_optimizer, optim_state, anomaly, views, func_basic,
            per_sample_grads, swa, saved_hooks, optim_more, gradcheck_prog, grad_misc,
            fn_edge, named_opt, sched_more, adafactor_prog]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_program(program):
    _run(program)
