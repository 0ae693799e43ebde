"""nn.utils (clipping, parameter vectors, parametrize, parametrizations, legacy norms) and lazy modules against
real PyTorch: values, returned norms, state_dict keys, reprs and error messages."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember
from ember import nn
from ember.nn.utils import parametrizations as EP
from ember.nn.utils import parametrize as EZ

TP = torch.nn.utils.parametrizations
TZ = torch.nn.utils.parametrize


def _pair(shapes, dtypes, seed=0, scale=2.0):
    """The same parameters with the same gradients in ember and torch."""
    rng = np.random.default_rng(seed)
    pe, pt = [], []
    for s, dt in zip(shapes, dtypes):
        a = rng.standard_normal(s).astype(dt)
        g = (scale * rng.standard_normal(s)).astype(dt)
        e = nn.Parameter(ember.tensor(a))
        e.grad = ember.tensor(g.copy())
        t = torch.nn.Parameter(torch.tensor(a))
        t.grad = torch.tensor(g.copy())
        pe.append(e)
        pt.append(t)
    return pe, pt


def _dt(t):
    return str(t.dtype).split(".")[-1]


def _copy_state(src_ember, dst_torch):
    sd = dst_torch.state_dict()
    for k, v in src_ember.state_dict().items():
        sd[k].copy_(torch.from_numpy(v.detach().numpy().copy()))


def _load_into_ember(src_torch, dst_ember):
    dst_ember.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in src_torch.state_dict().items()})


def _repr(m):
    return repr(m).replace("torch.", "ember.")


# ----- clipping -----

CLIP = [
    ([(3, 4), (5,)], [np.float32, np.float32]),
    ([(3, 4), (5,), (2, 3, 2)], [np.float64] * 3),
    ([(6,), (2, 2)], [np.float32, np.float64]),
    ([(7,)], [np.float16]),
    ([(0,), (3,)], [np.float32, np.float32]),
]


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, 0.0, math.inf, -math.inf, "inf"])
@pytest.mark.parametrize(("shapes", "dtypes"), CLIP)
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(shapes, dtypes, norm_type, max_norm):
    pe, pt = _pair(shapes, dtypes)
    if (0,) in shapes and float(norm_type) in (math.inf, -math.inf):
        _err(lambda: nn.utils.clip_grad_norm_(pe, max_norm, norm_type),
             lambda: torch.nn.utils.clip_grad_norm_(pt, max_norm, norm_type), RuntimeError)
        return
    te = nn.utils.clip_grad_norm_(pe, max_norm, norm_type)
    tt = torch.nn.utils.clip_grad_norm_(pt, max_norm, norm_type)
    assert _dt(te) == _dt(tt) and te.shape == tuple(tt.shape)
    tol = 1e-2 if np.float16 in dtypes else 1e-5
    np.testing.assert_allclose(te.item(), tt.item(), rtol=tol)
    for a, b in zip(pe, pt):
        assert _dt(a.grad) == _dt(b.grad)
        np.testing.assert_allclose(a.grad.numpy().astype(np.float64), b.grad.numpy().astype(np.float64),
                                   rtol=tol, atol=tol * 1e-2)


def test_clip_grad_norm_nonfinite_message():
    pe, pt = _pair([(3,)], [np.float32])
    pe[0].grad[1] = float("nan")
    pt[0].grad[1] = float("nan")
    with pytest.raises(RuntimeError) as ee:
        nn.utils.clip_grad_norm_(pe, 1.0, 3, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as et:
        torch.nn.utils.clip_grad_norm_(pt, 1.0, 3, error_if_nonfinite=True)
    assert str(ee.value) == str(et.value)
    te = nn.utils.clip_grad_norm_(pe, 1.0)
    tt = torch.nn.utils.clip_grad_norm_(pt, 1.0)
    assert math.isnan(te.item()) and math.isnan(tt.item())
    np.testing.assert_array_equal(np.isnan(pe[0].grad.numpy()), np.isnan(pt[0].grad.numpy()))


def test_empty_and_total_norm():
    assert nn.utils.clip_grad_norm_([], 1.0).item() == torch.nn.utils.clip_grad_norm_([], 1.0).item()
    assert _dt(nn.utils.get_total_norm([])) == _dt(torch.nn.utils.get_total_norm([]))
    pe, pt = _pair([(4, 3), (2,)], [np.float64, np.float64])
    for p in (2.0, 1.0, math.inf):
        te = nn.utils.get_total_norm([q.grad for q in pe], p)
        tt = torch.nn.utils.get_total_norm([q.grad for q in pt], p)
        np.testing.assert_allclose(te.item(), tt.item(), rtol=1e-12)
    nn.utils.clip_grads_with_norm_(pe, 1.5, ember.tensor(7.0, dtype=ember.float64))
    torch.nn.utils.clip_grads_with_norm_(pt, 1.5, torch.tensor(7.0, dtype=torch.float64))
    for a, b in zip(pe, pt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("clip_value", [0.1, 1, 5.0])
def test_clip_grad_value(clip_value):
    pe, pt = _pair([(3, 4), (5,)], [np.float32, np.float64])
    assert nn.utils.clip_grad_value_(pe, clip_value) is None
    torch.nn.utils.clip_grad_value_(pt, clip_value)
    for a, b in zip(pe, pt):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


# ----- parameters_to_vector / vector_to_parameters -----

def test_parameter_vectors():
    pe, pt = _pair([(3, 4), (5,), (2, 1, 2)], [np.float32] * 3)
    ve, vt = nn.utils.parameters_to_vector(pe), torch.nn.utils.parameters_to_vector(pt)
    np.testing.assert_array_equal(ve.detach().numpy(), vt.detach().numpy())
    assert ve.grad_fn.name() == vt.grad_fn.name()
    new = np.arange(ve.numel(), dtype=np.float32)
    nn.utils.vector_to_parameters(ember.tensor(new), pe)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), pt)
    for a, b in zip(pe, pt):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    for bad in (1, [1.0], np.zeros(3)):
        with pytest.raises(TypeError) as ee:
            nn.utils.vector_to_parameters(bad, pe)
        with pytest.raises(TypeError) as et:
            torch.nn.utils.vector_to_parameters(bad, pt)
        assert str(ee.value) == str(et.value)


# ----- parametrize -----

def _sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

        def right_inverse(self, a):
            return a.triu()
    return Symmetric()


def _split(lib):
    class Split(lib.nn.Module):
        def forward(self, a, b):
            return a * b

        def right_inverse(self, w):
            return w.sign() + 2, w / (w.sign() + 2)
    return Split()


def _shrink(lib):
    class Shrink(lib.nn.Module):
        def forward(self, x):
            return x[:1]
    return Shrink()


def test_register_parametrization_matches_torch():
    e, t = nn.Linear(3, 3), torch.nn.Linear(3, 3)
    _copy_state(e, t)
    EZ.register_parametrization(e, "weight", _sym(ember))
    TZ.register_parametrization(t, "weight", _sym(torch))
    assert _repr(e) == _repr(t)
    assert type(e).__name__ == type(t).__name__
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    for k in e.state_dict():
        np.testing.assert_allclose(e.state_dict()[k].numpy(), t.state_dict()[k].numpy(), rtol=1e-6)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(e.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), rtol=1e-5, atol=1e-6)
    w = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)
    e.weight = ember.tensor(w)
    t.weight = torch.tensor(w)
    np.testing.assert_allclose(e.parametrizations.weight.original.detach().numpy(),
                               t.parametrizations.weight.original.detach().numpy())
    EZ.remove_parametrizations(e, "weight", leave_parametrized=False)
    TZ.remove_parametrizations(t, "weight", leave_parametrized=False)
    assert _repr(e) == _repr(t) and list(e.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy())


def test_tuple_right_inverse_matches_torch():
    e, t = nn.Linear(4, 2), torch.nn.Linear(4, 2)
    _copy_state(e, t)
    EZ.register_parametrization(e, "weight", _split(ember))
    TZ.register_parametrization(t, "weight", _split(torch))
    assert list(e.state_dict()) == list(t.state_dict())
    for k in e.state_dict():
        np.testing.assert_allclose(e.state_dict()[k].numpy(), t.state_dict()[k].numpy(), rtol=1e-6)
    EZ.remove_parametrizations(e, "weight")
    TZ.remove_parametrizations(t, "weight")
    assert list(e.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-6)


def _err(fn_e, fn_t, exc=ValueError):
    with pytest.raises(exc) as ee:
        fn_e()
    with pytest.raises(exc) as et:
        fn_t()
    assert str(ee.value).replace("ember.", "torch.") == str(et.value)


def test_parametrize_errors_match_torch():
    e, t = nn.Linear(3, 3), torch.nn.Linear(3, 3)
    _err(lambda: EZ.register_parametrization(e, "weight", _shrink(ember)),
         lambda: TZ.register_parametrization(t, "weight", _shrink(torch)))
    _err(lambda: EZ.remove_parametrizations(e, "weight"), lambda: TZ.remove_parametrizations(t, "weight"))
    EZ.register_parametrization(e, "weight", _sym(ember))
    TZ.register_parametrization(t, "weight", _sym(torch))
    _err(lambda: EZ.register_parametrization(e, "weight", _shrink(ember)),
         lambda: TZ.register_parametrization(t, "weight", _shrink(torch)))
    _err(lambda: EZ.register_parametrization(e, "nope", _sym(ember)),
         lambda: TZ.register_parametrization(t, "nope", _sym(torch)))


# ----- parametrizations -----

@pytest.mark.parametrize("dim", [0, 1, -1, -2, None])
@pytest.mark.parametrize("kind", ["Linear", "Conv2d", "ConvTranspose1d"])
def test_weight_norm_matches_torch(kind, dim):
    make = {"Linear": lambda lib: lib.nn.Linear(5, 4), "Conv2d": lambda lib: lib.nn.Conv2d(2, 3, 2),
            "ConvTranspose1d": lambda lib: lib.nn.ConvTranspose1d(2, 3, 2)}[kind]
    e, t = make(ember), make(torch)
    _copy_state(e, t)
    EP.weight_norm(e, dim=dim)
    TP.weight_norm(t, dim=dim)
    assert _repr(e) == _repr(t)
    se, st = e.state_dict(), t.state_dict()
    assert list(se) == list(st)
    for k in se:
        assert se[k].shape == tuple(st[k].shape)
        np.testing.assert_allclose(se[k].numpy(), st[k].numpy(), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-5, atol=1e-7)
    e.weight.sum().backward()
    t.weight.sum().backward()
    for i in (0, 1):
        a = getattr(e.parametrizations.weight, f"original{i}").grad.numpy()
        b = getattr(t.parametrizations.weight, f"original{i}").grad.numpy()
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kind", ["Linear", "Conv2d", "ConvTranspose2d"])
@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_spectral_norm_matches_torch(kind, n_power_iterations):
    make = {"Linear": lambda lib: lib.nn.Linear(5, 4), "Conv2d": lambda lib: lib.nn.Conv2d(2, 3, 2),
            "ConvTranspose2d": lambda lib: lib.nn.ConvTranspose2d(2, 3, 2)}[kind]
    e, t = make(ember).double(), make(torch).double()
    _copy_state(e, t)
    EP.spectral_norm(e, n_power_iterations=n_power_iterations)
    TP.spectral_norm(t, n_power_iterations=n_power_iterations)
    assert _repr(e) == _repr(t)
    assert list(e.state_dict()) == list(t.state_dict())
    _copy_state(e, t)  # the same u and v
    for _ in range(3):
        we, wt = e.weight, t.weight
        np.testing.assert_allclose(we.detach().numpy(), wt.detach().numpy(), rtol=1e-10)
    for k in e.state_dict():
        np.testing.assert_allclose(e.state_dict()[k].numpy(), t.state_dict()[k].numpy(), rtol=1e-10, atol=1e-12)
    e.eval()
    t.eval()
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-10)
    e.weight.pow(2).sum().backward()
    t.weight.pow(2).sum().backward()
    np.testing.assert_allclose(e.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), rtol=1e-8)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_matches_torch(orthogonal_map, use_trivialization, shape):
    e = nn.Linear(shape[1], shape[0]).double()
    t = torch.nn.Linear(shape[1], shape[0]).double()
    _copy_state(e, t)
    EP.orthogonal(e, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    TP.orthogonal(t, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
    assert list(e.state_dict()) == list(t.state_dict())
    if use_trivialization and shape[0] == shape[1]:
        np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), atol=1e-10)
    _load_into_ember(t, e)  # the same originals (and base): the same forward
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), atol=1e-10)
    e.weight.sum().backward()
    t.weight.sum().backward()
    np.testing.assert_allclose(e.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), atol=1e-8)


def test_parametrizations_errors_match_torch():
    _err(lambda: EP.spectral_norm(nn.Linear(2, 2), n_power_iterations=0),
         lambda: TP.spectral_norm(torch.nn.Linear(2, 2), n_power_iterations=0))
    _err(lambda: EP.spectral_norm(nn.Linear(2, 2), dim=3), lambda: TP.spectral_norm(torch.nn.Linear(2, 2), dim=3),
         IndexError)
    _err(lambda: EP.orthogonal(nn.Linear(2, 2), name="bias"), lambda: TP.orthogonal(torch.nn.Linear(2, 2), name="bias"))
    _err(lambda: EP.orthogonal(nn.Linear(2, 2), orthogonal_map="x"),
         lambda: TP.orthogonal(torch.nn.Linear(2, 2), orthogonal_map="x"))


# ----- legacy hook-based norms -----

def test_legacy_weight_norm_matches_torch():
    e, t = nn.Conv1d(2, 3, 2), torch.nn.Conv1d(2, 3, 2)
    _copy_state(e, t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.weight_norm(e, dim=1)
        torch.nn.utils.weight_norm(t, dim=1)
    assert list(e.state_dict()) == list(t.state_dict())
    x = np.random.default_rng(0).standard_normal((2, 2, 5)).astype(np.float32)
    np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    nn.utils.remove_weight_norm(e)
    torch.nn.utils.remove_weight_norm(t)
    assert list(e.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-5, atol=1e-7)


def test_legacy_spectral_norm_matches_torch():
    e, t = nn.Linear(5, 4).double(), torch.nn.Linear(5, 4).double()
    _copy_state(e, t)
    nn.utils.spectral_norm(e)
    torch.nn.utils.spectral_norm(t)
    assert list(e.state_dict()) == list(t.state_dict())
    assert e.state_dict()._metadata == t.state_dict()._metadata
    _copy_state(e, t)
    x = np.random.default_rng(0).standard_normal((2, 5))
    for _ in range(3):
        np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-10)
    nn.utils.remove_spectral_norm(e)
    torch.nn.utils.remove_spectral_norm(t)
    assert list(e.state_dict()) == list(t.state_dict())
    np.testing.assert_allclose(e.weight.detach().numpy(), t.weight.detach().numpy(), rtol=1e-10)


# ----- lazy modules -----

def test_lazy_linear_matches_torch():
    e, t = nn.LazyLinear(4), torch.nn.LazyLinear(4)
    assert _repr(e) == _repr(t)
    assert repr(e.weight) == repr(t.weight)
    assert list(e.state_dict()) == list(t.state_dict())
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    e(ember.tensor(x))
    t(torch.tensor(x))
    assert type(e).__name__ == type(t).__name__ and _repr(e) == _repr(t)
    assert e.weight.shape == tuple(t.weight.shape)
    e2, t2 = nn.LazyLinear(4, bias=False), torch.nn.LazyLinear(4, bias=False)
    assert _repr(e2) == _repr(t2)
    _err(lambda: nn.parameter.UninitializedParameter().shape, lambda: torch.nn.parameter.UninitializedParameter().shape,
         RuntimeError)


@pytest.mark.parametrize(("cls", "shape", "kw"), [("LazyConv1d", (2, 3, 8), {"stride": 2}),
                                                  ("LazyConv2d", (2, 4, 6, 5), {"padding": 1, "groups": 2}),
                                                  ("LazyConv3d", (3, 4, 4, 4), {"bias": False})])
def test_lazy_conv_matches_torch(cls, shape, kw):
    e, t = getattr(nn, cls)(4, 3, **kw), getattr(torch.nn, cls)(4, 3, **kw)
    assert _repr(e) == _repr(t)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    e(ember.tensor(x))
    t(torch.tensor(x))
    assert type(e).__name__ == type(t).__name__ and _repr(e) == _repr(t)
    _load_into_ember(t, e)
    np.testing.assert_allclose(e(ember.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-5)


# ----- fusion and stateless -----

def test_fuse_conv_bn_matches_torch():
    e_conv, t_conv = nn.Conv2d(3, 4, 3).double(), torch.nn.Conv2d(3, 4, 3).double()
    e_bn, t_bn = nn.BatchNorm2d(4).double(), torch.nn.BatchNorm2d(4).double()
    rng = np.random.default_rng(0)
    _copy_state(e_conv, t_conv)
    for name in ("weight", "bias", "running_mean"):
        getattr(e_bn, name).data = ember.tensor(rng.standard_normal(4))
    e_bn.running_var.data = ember.tensor(rng.uniform(0.5, 2.0, 4))
    _copy_state(e_bn, t_bn)
    for m in (e_conv, t_conv, e_bn, t_bn):
        m.eval()
    fe = nn.utils.fuse_conv_bn_eval(e_conv, e_bn)
    ft = torch.nn.utils.fuse_conv_bn_eval(t_conv, t_bn)
    assert _repr(fe) == _repr(ft)
    for k in ("weight", "bias"):
        np.testing.assert_allclose(getattr(fe, k).detach().numpy(), getattr(ft, k).detach().numpy(), rtol=1e-12)
        assert getattr(fe, k).requires_grad == getattr(ft, k).requires_grad


def test_functional_call_matches_torch():
    e, t = nn.Linear(3, 2), torch.nn.Linear(3, 2)
    w = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    x = np.ones((1, 3), dtype=np.float32)
    ye = nn.utils.stateless._functional_call(e, {"weight": ember.tensor(w)}, ember.tensor(x))
    yt = torch.func.functional_call(t, {"weight": torch.tensor(w)}, torch.tensor(x))
    np.testing.assert_allclose((ye - e.bias).detach().numpy(), (yt - t.bias).detach().numpy(), rtol=1e-6)
    _err(lambda: nn.utils.stateless._functional_call(e, {"x": ember.ones(1)}, ember.tensor(x), strict=True),
         lambda: torch.func.functional_call(t, {"x": torch.ones(1)}, torch.tensor(x), strict=True), RuntimeError)
