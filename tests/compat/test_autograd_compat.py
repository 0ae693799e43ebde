"""ember.autograd extras against PyTorch: custom Functions, hooks, grad modes, functional, gradcheck verdicts."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember

LIBS = (ember, torch)
RNG = np.random.default_rng(0)
XA = RNG.standard_normal((2, 3))
YA = RNG.standard_normal(3)
ZA = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)


def _np(t):
    return t.detach().numpy()


def _structure(r):
    """Nested tuples of (shape, values, requires_grad), comparable across the two libraries."""
    if isinstance(r, tuple):
        return tuple(_structure(e) for e in r)
    return {"shape": tuple(r.shape), "values": _np(r), "requires_grad": r.requires_grad}


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert a["shape"] == b["shape"] and a["requires_grad"] == b["requires_grad"], (a, b)
    np.testing.assert_allclose(a["values"], b["values"], rtol=1e-7, atol=1e-9)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e).replace("torch.", "").replace("ember.", "")
    return None


# ----- custom Functions -----

def _functions(lib):
    F = lib.autograd.Function

    class Cube(F):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x * ctx.k, None

    class Two(F):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            a, b = x * 2, x * 3
            ctx.mark_non_differentiable(b)
            return a, b, (x * 4).long(), 7

        @staticmethod
        def backward(ctx, ga, gb, gi, g7):
            ctx.seen = tuple(None if g is None else (str(g.dtype).split(".")[-1], g.tolist())
                             for g in (ga, gb, gi, g7))
            return ga * 2, None

    class AddOne(F):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 5

    class WrongCount(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g

    class NonNone(F):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    class Setup(F):
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * ctx.k + out * 0, None

    return {"Cube": Cube, "Two": Two, "AddOne": AddOne, "WrongCount": WrongCount, "NonNone": NonNone,
            "Setup": Setup}


def _custom_function_report(lib):
    fns = _functions(lib)
    x = lib.tensor(YA, requires_grad=True)
    rep = {}
    y = fns["Cube"].apply(x, 2.0)
    rep["cube_name"] = y.grad_fn.name()
    rep["cube_out"] = _np(y)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    rep["cube_grad"], rep["cube_gradgrad"] = _np(g), _np(gg)
    for materialize in (True, False):
        a, b, i, seven = fns["Two"].apply(x, materialize)
        rep[f"two_flags_{materialize}"] = (a.requires_grad, b.requires_grad, i.requires_grad, seven)
        a.sum().backward()
        rep[f"two_seen_{materialize}"] = a.grad_fn.seen
    h = x * 1
    fns["AddOne"].apply(h)
    rep["dirty"] = (h.grad_fn.name(), h._version)
    rep["dirty_leaf"] = _error(lambda: fns["AddOne"].apply(lib.tensor(YA, requires_grad=True)))
    rep["wrong_count"] = _error(lambda: fns["WrongCount"].apply(x, 2.0).sum().backward())
    rep["non_none"] = _error(lambda: fns["NonNone"].apply(x, 2.0).sum().backward())
    x.grad = None
    fns["Setup"].apply(x).sum().backward()
    rep["setup_grad"] = _np(x.grad)
    y = fns["Cube"].apply(x, 1.0)
    y.sum().backward()
    rep["freed"] = _error(lambda: y.grad_fn.saved_tensors)
    return rep


def test_custom_functions_match_torch():
    e, t = _custom_function_report(ember), _custom_function_report(torch)
    assert e.keys() == t.keys()
    for k in e:
        if isinstance(e[k], np.ndarray):
            np.testing.assert_allclose(e[k], t[k], rtol=1e-12, err_msg=k)
        else:
            assert e[k] == t[k], k


# ----- hooks and grad modes -----

def _hook_log(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    log = []
    y.register_hook(lambda g: log.append(("t1", g.tolist())))
    y.register_hook(lambda g: log.append(("t2", g.tolist())) or g * 10)
    y.retain_grad()
    y.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].tolist(), go[0].tolist())))
    x.register_hook(lambda g: log.append(("leaf", g.tolist())) or g + 1)
    x.register_post_accumulate_grad_hook(lambda t: log.append(("acc", t.grad.tolist())))
    (y * y).sum().backward()
    log.append(("grads", y.grad.tolist(), x.grad.tolist()))
    return log


def test_hook_order_and_values_match_torch():
    assert _hook_log(ember) == _hook_log(torch)


def _grad_mode_log(lib):
    log = []
    with lib.no_grad():
        log.append(lib.is_grad_enabled())
        with lib.enable_grad():
            log.append(lib.is_grad_enabled())
        with lib.inference_mode(False):
            log.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
    with lib.inference_mode():
        log.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
    with lib.set_grad_enabled(False):
        log.append(lib.is_grad_enabled())
    log.append(lib.is_grad_enabled())

    @lib.no_grad
    def bare():
        return lib.is_grad_enabled()

    @lib.inference_mode
    def inf():
        return lib.is_inference_mode_enabled()

    @lib.no_grad()
    def gen():
        yield lib.is_grad_enabled()
        yield lib.is_grad_enabled()

    g = gen()
    log += [bare(), inf(), next(g), lib.is_grad_enabled(), next(g)]
    return log


def test_grad_modes_match_torch():
    assert _grad_mode_log(ember) == _grad_mode_log(torch)


def test_anomaly_message_matches_torch():
    msgs = []
    for lib in LIBS:
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([0.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = a / b
                err = _error(lambda y=y: (y * 0).sum().backward())
        msgs.append((err[0], err[1].splitlines()[0]))
    assert msgs[0] == msgs[1] == ("RuntimeError", "Function 'DivBackward0' returned nan values in its 0th output.")


# ----- functional -----

def _fns(lib):
    return {
        "reduce": (lambda x: x.exp().sum(1), lambda: (lib.tensor(XA),)),
        "pair": (lambda x, y: (x * y, (y * y).sum()), lambda: (lib.tensor(XA), lib.tensor(YA))),
        "linear_unused": (lambda x, y: x * 2, lambda: (lib.tensor(YA), lib.tensor(YA))),
    }


def _scalar_fns(lib):
    return {
        "cube": (lambda x: (x * x * x).sum(), lambda: (lib.tensor(YA),)),
        "mixed": (lambda x, y: (x * x * y).sum() + (y * y * y).sum(), lambda: (lib.tensor(YA), lib.tensor(YA[::-1].copy()))),
        "linear": (lambda x: (x * 2).sum(), lambda: (lib.tensor(YA),)),
    }


def _call(lib, kind, fn, args, create_graph, as_tuple):
    F = lib.autograd.functional
    inputs = args if as_tuple else args[0]
    if kind == "jacobian":
        return F.jacobian(fn, inputs, create_graph=create_graph)
    if kind == "hessian":
        return F.hessian(fn, inputs, create_graph=create_graph)
    v = tuple(a * 0.5 + 1 for a in args)
    v = v if as_tuple else v[0]
    return getattr(F, kind)(fn, inputs, v, create_graph=create_graph)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("kind", ["jacobian", "jvp", "vjp_scalar"])
@pytest.mark.parametrize("name", ["reduce", "pair", "linear_unused"])
def test_functional_matches_torch(kind, name, create_graph):
    results = []
    for lib in LIBS:
        fn, make = _fns(lib)[name]
        args = make()
        if kind == "vjp_scalar":
            out = fn(*args)
            outs = out if isinstance(out, tuple) else (out,)
            v = tuple(lib.ones_like(o) for o in outs)
            res = lib.autograd.functional.vjp(fn, args if len(args) > 1 else args[0],
                                              v if isinstance(out, tuple) else v[0], create_graph=create_graph)
        else:
            res = _call(lib, kind, fn, args, create_graph, len(args) > 1)
        results.append(_structure(res))
    _same(*results)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("kind", ["hessian", "hvp", "vhp", "vjp"])
@pytest.mark.parametrize("name", ["cube", "mixed", "linear"])
def test_second_order_functional_matches_torch(kind, name, create_graph):
    results = []
    for lib in LIBS:
        fn, make = _scalar_fns(lib)[name]
        args = make()
        if kind == "vjp":
            res = lib.autograd.functional.vjp(fn, args if len(args) > 1 else args[0], create_graph=create_graph)
        else:
            res = _call(lib, kind, fn, args, create_graph, len(args) > 1)
        results.append(_structure(res))
    _same(*results)


@pytest.mark.parametrize("case", [
    lambda F, t: F.jacobian(lambda a, b: a * 2, (t(YA), t(YA)), strict=True),
    lambda F, t: F.hessian(lambda a: (a * 2).sum(), t(YA), strict=True),
    lambda F, t: F.vjp(lambda a: a.exp().sum(1), t(XA)),
    lambda F, t: F.jvp(lambda a: a.exp().sum(1), t(XA)),
    lambda F, t: F.vjp(lambda a: (a, a), t(YA), (t(YA),)),
    lambda F, t: F.hvp(lambda a: a * a, t(YA), t(YA)),
    lambda F, t: F.jacobian(lambda a: a, (t(YA), 3)),
    lambda F, t: F.jacobian(lambda a: a, t(YA), strategy="forward-mode"),
])
def test_functional_errors_match_torch(case):
    errors = [_error(lambda lib=lib: case(lib.autograd.functional, lib.tensor)) for lib in LIBS]
    assert errors[0] is not None
    assert errors[0] == errors[1]


# ----- gradcheck verdicts -----

def _planted(lib, kind):
    """Custom functions with correct or subtly wrong complex gradients."""
    F = lib.autograd.Function

    class Square(F):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            if kind == "right":
                return g * 2 * z.conj()
            if kind == "no_conj":
                return g * 2 * z
            return (g * 2 * z.conj()).conj()  # "conj_result"

    class AbsSq(F):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return (z * z.conj()).real

        @staticmethod
        def backward(ctx, g):
            (z,) = ctx.saved_tensors
            if kind == "right":
                return g * 2 * z
            if kind == "no_conj":
                return g * 2 * z.conj()
            return g * z  # half

    class RealToComplex(F):
        @staticmethod
        def forward(ctx, x):
            ctx.c = lib.tensor(ZA)
            return x * ctx.c

        @staticmethod
        def backward(ctx, g):
            if kind == "right":
                return (g * ctx.c.conj()).real
            if kind == "no_conj":
                return (g * ctx.c).real
            return (g * ctx.c.conj()).imag

    return Square.apply, AbsSq.apply, RealToComplex.apply


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("kind", ["right", "no_conj", "conj_result"])
@pytest.mark.parametrize("which", [0, 1, 2], ids=["square", "abs_sq", "real_to_complex"])
def test_complex_gradcheck_verdicts_match_torch(kind, which, fast_mode):
    verdicts = []
    for lib in LIBS:
        fn = _planted(lib, kind)[which]
        z = lib.tensor(ZA if which < 2 else YA, requires_grad=True)
        verdicts.append(lib.autograd.gradcheck(fn, (z,), raise_exception=False, fast_mode=fast_mode))
    assert verdicts[0] == verdicts[1]


@pytest.mark.parametrize("fn", [
    lambda lib, z: z * z * z,
    lambda lib, z: (z * z.conj()).real,
    lambda lib, z: z.abs(),
    lambda lib, z: z.exp() * z,
    lambda lib, z: (z.real * z.imag, z * 2),
    lambda lib, z: z / (z.conj() + 3),
], ids=["cube", "abs_sq", "abs", "z_exp_z", "parts", "ratio"])
def test_complex_builtin_gradcheck_verdicts_match_torch(fn):
    verdicts = []
    for lib in LIBS:
        z = lib.tensor(ZA, requires_grad=True)
        verdicts.append((lib.autograd.gradcheck(lambda t, lib=lib: fn(lib, t), (z,), raise_exception=False),
                         lib.autograd.gradgradcheck(lambda t, lib=lib: fn(lib, t), (z,), raise_exception=False)))
    assert verdicts[0] == verdicts[1] == (True, True)


def test_gradcheck_error_messages_match_torch():
    errors = []
    for lib in LIBS:
        F = lib.autograd.Function

        class Wrong(F):
            @staticmethod
            def forward(ctx, x, y):
                return x * y, x + y

            @staticmethod
            def backward(ctx, ga, gb):
                return ga + gb, ga * 2 + gb

        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.tensor([3.0, 4.0], dtype=lib.float64, requires_grad=True)
        err = _error(lambda lib=lib, x=x, y=y, fn=Wrong.apply: lib.autograd.gradcheck(fn, (x, y)))
        errors.append((err[0], err[1].splitlines()[0]))
    assert errors[0] == errors[1] == ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,")


def test_gradcheck_undefined_grad_verdicts_match_torch():
    verdicts = []
    for lib in LIBS:
        F = lib.autograd.Function

        class Invents(F):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                if ga is None and gb is None:
                    return None
                if gb is None:
                    return ga * 2 if bool((ga != 0).any()) else ga + 1
                if ga is None:
                    return gb * 3
                return ga * 2 + gb * 3

        x = lib.tensor(YA, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            verdicts.append((lib.autograd.gradcheck(Invents.apply, (x,), raise_exception=False),
                             lib.autograd.gradcheck(Invents.apply, (x,), check_undefined_grad=False)))
    assert verdicts[0] == verdicts[1] == (False, True)


def test_non_double_warning_matches_torch():
    msgs = []
    for lib in LIBS:
        x = lib.tensor(YA.astype(np.float32), requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.autograd.gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2, raise_exception=False)
        msgs.append([str(w.message) for w in caught if "double precision" in str(w.message)])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1


# ----- in-place ops on views, .grad assignment, conversions -----

def _inplace_cases(lib):
    def nonleaf(n=4):
        return lib.ones(n, requires_grad=True) * 1

    def nograd_view(base):
        with lib.no_grad():
            return base[:2]

    def stale(leaf):
        x = leaf * 1
        v = x[:2]
        x.mul_(3)
        v.mul_(2)
        x.sum().backward()
        return leaf.grad

    def copy_slices():
        a = lib.ones(3)
        w = lib.tensor([2.0, 3.0], requires_grad=True)
        a[:2].mul_(w)
        a.sum().backward()
        return (type(a.grad_fn).__name__, w.grad)

    def detached():
        x = lib.ones(3, requires_grad=True)
        d = x.detach()
        d.mul_(lib.full((3,), 2.0, requires_grad=True))
        return (x.grad_fn, type(d.grad_fn).__name__)

    return {
        "leaf_view_of_view": lambda: lib.arange(6.).reshape(2, 3).requires_grad_()[0].add_(1),
        "leaf_view_flat": lambda: lib.arange(6.).reshape(2, 3).requires_grad_().view(-1).zero_(),
        "detached_leaf": lambda: lib.ones(3).detach().requires_grad_().add_(1),
        "detached_mul": detached,
        "copy_slices": copy_slices,
        "stale_view": lambda: stale(lib.ones(4, requires_grad=True)),
        "split": lambda: nonleaf().split(2)[0].mul_(2),
        "split_leaf": lambda: lib.ones(4, requires_grad=True).split(2)[1].clamp_(0),
        "chunk": lambda: nonleaf().chunk(2)[1].mul_(2),
        "unbind": lambda: nonleaf().unbind()[2].mul_(2),
        "split_with_sizes": lambda: nonleaf().split_with_sizes([1, 3])[1].copy_(lib.zeros(3)),
        "view_of_split": lambda: nonleaf().split(2)[1].view(2).mul_(2),
        "tensor_split": lambda: nonleaf().tensor_split(2)[1].mul_(2),
        "nograd_view": lambda: nograd_view(nonleaf(3)).clamp_(0),
        "nograd_view_leaf": lambda: nograd_view(lib.ones(3, requires_grad=True)).copy_(lib.zeros(2)),
        "expand_grad": lambda: (lib.ones(1, requires_grad=True) * 1).expand(3).add_(1),
        "expand_plain": lambda: lib.ones(1).expand(3).clamp_(0),
        "expand_other_grad": lambda: lib.ones(1).expand(3).mul_(lib.ones(3, requires_grad=True)),
        "expand_copy": lambda: (lib.ones(1, requires_grad=True) * 1).expand(3).copy_(lib.zeros(3)),
        "grad_size": lambda: setattr(lib.ones(2, requires_grad=True), "grad", lib.ones(3)),
        "grad_dtype": lambda: setattr(lib.ones(2, requires_grad=True), "grad", lib.ones(2, dtype=lib.float64)),
        "grad_dtype_int": lambda: setattr(lib.ones(2, requires_grad=True), "grad", lib.ones(3, dtype=lib.int64)),
        "asarray": lambda: np.asarray(lib.ones(2, requires_grad=True)),
        "asarray_nonleaf": lambda: np.asarray(lib.ones(2, requires_grad=True) * 2),
    }


@pytest.mark.parametrize("case", sorted(_inplace_cases(ember)))
def test_inplace_on_views_and_conversions_match(case):
    results = []
    for lib in LIBS:
        out = []
        err = _error(lambda out=out, lib=lib: out.append(_inplace_cases(lib)[case]()))
        if err is None and out and isinstance(out[0], lib.Tensor):
            err = ("value", out[0].tolist())
        elif err is None and out and isinstance(out[0], tuple):
            err = ("value", tuple(o.tolist() if isinstance(o, lib.Tensor) else o for o in out[0]))
        results.append(err)
    assert results[0] == results[1]


@pytest.mark.parametrize("conv", [float, complex, int, bool])
def test_scalar_conversion_warnings_match(conv):
    seen = []
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            value = conv(lib.tensor([1.5], requires_grad=True))
        seen.append((value, [(r.category, str(r.message).split(" (Triggered")[0]) for r in w]))
    # torch warns once per process: compare with its first warning only
    assert seen[0][0] == seen[1][0]
    assert seen[0][1][:1] == seen[1][1][:1] or (not seen[1][1] and conv in (float, complex))


def test_every_hook_handle_is_utils_hooks_removable_handle():
    for lib in LIBS:
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        handles = [x.register_hook(lambda g: g), y.register_hook(lambda g: g),
                   y.grad_fn.register_hook(lambda gi, go: None), y.grad_fn.register_prehook(lambda go: None),
                   x.register_post_accumulate_grad_hook(lambda t: None),
                   lib.nn.Linear(2, 2).register_forward_pre_hook(lambda *a: None)]
        assert all(type(h) is lib.utils.hooks.RemovableHandle for h in handles), lib.__name__
        assert all(isinstance(h.id, int) for h in handles)
