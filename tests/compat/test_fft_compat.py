"""ember.fft against PyTorch: values, dtypes, gradients (real and complex inputs), grad_fn names, errors."""
import numpy as np
import pytest

import ember
import ember.fft as F

torch = pytest.importorskip("torch")

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}
SHAPES = [(8,), (7,), (3, 6), (4, 5), (2, 3, 4), (1, 5, 2)]
NORMS = [None, "backward", "ortho", "forward"]


def _np(t):
    return t.detach().resolve_conj().numpy()


def _kwargs_1d(shape):
    nd = len(shape)
    out = [{"norm": nm} for nm in NORMS]
    out += [{"n": 1}, {"n": shape[-1] + 3}, {"n": max(1, shape[-1] - 2), "norm": "ortho"}, {"dim": 0}]
    if nd > 1:
        out += [{"dim": -2, "n": 5, "norm": "forward"}]
    return out


def _kwargs_nd(name, shape):
    nd = len(shape)
    out = [{"norm": nm} for nm in NORMS] if nd >= 2 or name.endswith("n") else []
    if nd >= 2:
        out += [{"s": (3, 7)}, {"s": (2, 2), "norm": "ortho"}, {"dim": (0, 1)}, {"dim": (1, 0), "s": (5, 3)},
                {"s": (-1, 4), "norm": "forward"}]
    if name.endswith("n"):
        out += [{"dim": 0}, {"s": (6,)}, {"dim": (-1,), "norm": "ortho"}]
        if nd == 3:
            out += [{"dim": (2, 0)}, {"s": (2, 3, 5)}, {}]
    return out


CASES = []
for _shape in SHAPES:
    for _name in ONE_D:
        CASES += [(_name, _shape, kw) for kw in _kwargs_1d(_shape)]
    for _name in N_D:
        CASES += [(_name, _shape, kw) for kw in _kwargs_nd(_name, _shape)]


def _inputs(name, shape, cplx, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if cplx:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _ids(case):
    return f"{case[0]}-{case[1]}-{case[2]}-{'complex' if case[3] else 'real'}"


CASES = [c + (cplx,) for c in CASES for cplx in ((False,) if c[0] in REAL_ONLY else (False, True))]


@pytest.mark.parametrize("case", CASES, ids=[_ids(c) for c in CASES])
def test_values_and_gradients(case):
    name, shape, kw, cplx = case
    a = _inputs(name, shape, cplx)
    te, tt = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    try:
        rt = getattr(torch.fft, name)(tt, **kw)
    except RuntimeError as e:  # too few points along a dim of size 1: the same error
        with pytest.raises(RuntimeError, match=str(e).replace("(", r"\(").replace(")", r"\)")):
            getattr(F, name)(te, **kw)
        return
    re = getattr(F, name)(te, **kw)
    assert str(re.dtype) == str(rt.dtype).replace("torch", "ember")
    np.testing.assert_allclose(_np(re), _np(rt), rtol=1e-10, atol=1e-10)
    assert re.grad_fn.name() == rt.grad_fn.name()
    rng = np.random.default_rng(1)
    w = rng.standard_normal(rt.shape) + (1j * rng.standard_normal(rt.shape) if rt.is_complex() else 0)
    # a real loss of a weighted output: |sum(w * y)|, so complex gradients follow torch's convention
    (ge,) = ember.autograd.grad((re * ember.tensor(w)).sum().abs(), te)
    (gt,) = torch.autograd.grad((rt * torch.tensor(w)).sum().abs(), tt)
    assert ge.dtype == te.dtype
    np.testing.assert_allclose(_np(ge), _np(gt), rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name,dt", [(n, dt) for n in ONE_D + N_D for dt in (
    "float32", "float64", "complex64", "complex128", "int64", "int32", "uint8", "bool")
    if not (n in REAL_ONLY and dt.startswith("complex"))])
def test_dtypes(name, dt):
    a = np.random.default_rng(2).standard_normal((4, 6)) * 3
    if dt.startswith("complex"):
        a = a + 0.5j
    a = a.astype(dt)
    re, rt = getattr(F, name)(ember.tensor(a)), getattr(torch.fft, name)(torch.tensor(a))
    assert str(re.dtype) == str(rt.dtype).replace("torch", "ember")
    tol = 1e-4 if re.dtype in (ember.float32, ember.complex64) else 1e-10
    np.testing.assert_allclose(_np(re), _np(rt), rtol=tol, atol=tol * 10)


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 -- the exception type and message are what is compared
        return type(e).__name__, str(e)
    return "ok", (str(r.dtype).split(".")[-1], tuple(r.shape))


def _error_cases(lib):
    """The same calls for ember and for torch: each a thunk, compared by what it returns or raises."""
    x, z = lib.randn(4, 5), lib.randn(4, 5).to(lib.complex64)
    f = lib.fft
    return [
        lambda: f.fft(x.half()), lambda: f.rfft(x.bfloat16()), lambda: f.fft(x, norm="bad"),
        lambda: f.fft(x, n=0), lambda: f.fft(x, n=-1), lambda: f.fft(x, dim=2), lambda: f.fft(lib.tensor(1.0)),
        lambda: f.fftn(lib.tensor(1.0)), lambda: f.rfftn(lib.tensor(1.0)), lambda: f.irfftn(lib.tensor(1.0 + 0j)),
        lambda: f.fftn(x, dim=(0, 0)), lambda: f.fftn(x, s=(3,), dim=(0, 1)), lambda: f.fftn(x, s=(3, 3, 3)),
        lambda: f.fftn(x, s=(-1, 3)), lambda: f.fftn(x, s=(0, 3)), lambda: f.fftn(x, s=(-2, 3)),
        lambda: f.fftn(x, dim=()), lambda: f.rfftn(x, dim=()), lambda: f.rfft(z), lambda: f.ihfft(z),
        lambda: f.rfftn(z), lambda: f.ihfftn(z), lambda: f.ihfft2(z), lambda: f.rfft2(z), lambda: f.irfft(x, n=0),
        lambda: f.irfft(lib.randn(1)), lambda: f.irfftn(lib.randn(3, 1)), lambda: f.hfftn(lib.randn(3, 1)),
        lambda: f.fft(x, out=lib.empty(0)), lambda: f.fft(x, out=lib.empty(0, dtype=lib.complex128)),
        lambda: f.rfft(x, out=lib.empty(0)), lambda: f.irfft(x, out=lib.empty(0, dtype=lib.complex64)),
        lambda: f.irfft(x, out=lib.empty(0, dtype=lib.float64)), lambda: f.ihfft(x, out=lib.empty(0)),
        lambda: f.ifft(x.double(), out=lib.empty(0, dtype=lib.complex64)),
        lambda: f.fft2(x, out=lib.empty(0, dtype=lib.int64)), lambda: f.hfft2(x, out=lib.empty(0, dtype=z.dtype)),
        lambda: f.fft(x.clone().requires_grad_(), out=lib.empty(0, dtype=lib.complex64)),
        lambda: f.fftn(x.clone().requires_grad_(), out=lib.empty(0, dtype=lib.complex64)),
        lambda: f.fftn(x, dim=5), lambda: f.fftn(x, dim=-3), lambda: f.fft2(lib.randn(3)),
        lambda: f.fft2(x, s=(3,)), lambda: f.fft(lib.arange(4)), lambda: f.irfft(lib.arange(4)),
        lambda: f.fft(lib.tensor([True, False])), lambda: f.fft([1.0, 2.0]), lambda: f.fft(x, 3.5),
        lambda: f.fftfreq(5, dtype=lib.int64), lambda: f.rfftfreq(5, dtype=lib.int64), lambda: f.fftfreq(-1),
        lambda: f.rfftfreq(-5), lambda: f.fftshift(lib.tensor(3.0)), lambda: f.fftshift(x, dim=[]),
        lambda: f.fftshift(x, dim=5), lambda: f.ifftshift(x, dim=(0, 0)), lambda: f.fft(x, np.int64(3)),
        lambda: f.fft(x, True), lambda: f.fftn(x, s=[np.int64(3), 2]), lambda: f.fftn(x, dim=np.int64(0)),
        lambda: f.irfft(z, n=7, dim=0), lambda: f.hfft(z, n=1), lambda: f.ihfftn(x, s=(2, 2), dim=(1, 0)),
    ]


ERRS = list(zip(_error_cases(ember), _error_cases(torch)))


@pytest.mark.parametrize("i", range(len(ERRS)))
def test_errors_and_result_types(i):
    got, want = _outcome(ERRS[i][0]), _outcome(ERRS[i][1])
    assert got == want


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6, 7, 10])
@pytest.mark.parametrize("d", [1.0, 0.3, 2, -0.5])
@pytest.mark.parametrize("dt", [None, "float64", "float16", "bfloat16", "complex64", "complex128"])
def test_freqs(n, d, dt):
    for name in ("fftfreq", "rfftfreq"):
        kw = {} if dt is None else {"dtype": getattr(ember, dt)}
        tkw = {} if dt is None else {"dtype": getattr(torch, dt)}
        if dt is not None and dt.startswith("complex"):  # torch's arange has no complex kernel
            fe, ft = getattr(F, name), getattr(torch.fft, name)
            assert _outcome(lambda: fe(n, d, **kw)) == _outcome(lambda: ft(n, d, **tkw))  # noqa: B023
            continue
        re, rt = getattr(F, name)(n, d, **kw), getattr(torch.fft, name)(n, d, **tkw)
        assert str(re.dtype) == str(rt.dtype).replace("torch", "ember")
        np.testing.assert_array_equal(re.to(ember.complex128 if re.is_complex() else ember.float64).numpy(),
                                      rt.to(torch.complex128 if rt.is_complex() else torch.float64).numpy())


def test_freq_options():
    for lib in (ember, torch):
        t = lib.fft.fftfreq(4, requires_grad=True)
        assert t.requires_grad and t.is_leaf
    np.testing.assert_array_equal(F.fftfreq(5, 0).numpy(), torch.fft.fftfreq(5, 0).numpy())


@pytest.mark.parametrize("shape,dim", [((5,), None), ((4, 6), None), ((4, 5), 0), ((4, 5), (1,)),
                                       ((3, 4, 5), (-1, 0)), ((3, 4, 5), [1, 1]), ((0, 3), None)])
def test_shifts(shape, dim):
    a = np.random.default_rng(4).standard_normal(shape)
    for name in ("fftshift", "ifftshift"):
        te, tt = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        re, rt = getattr(F, name)(te, dim), getattr(torch.fft, name)(tt, dim)
        np.testing.assert_array_equal(re.detach().numpy(), rt.detach().numpy())
        w = np.arange(re.numel(), dtype=np.float64).reshape(re.shape)
        (re * ember.tensor(w)).sum().backward()
        (rt * torch.tensor(w)).sum().backward()
        np.testing.assert_array_equal(te.grad.numpy(), tt.grad.numpy())


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_double_backward(name):
    a = _inputs(name, (3, 4), name not in REAL_ONLY, seed=5)
    te, tt = ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    res = []
    for lib, t in ((ember, te), (torch, tt)):
        y = getattr(lib.fft, name)(t, norm="ortho")
        (g,) = lib.autograd.grad((y * y.conj() if y.is_complex() else y * y).real.sum() if y.is_complex()
                                 else (y * y).sum(), t, create_graph=True)
        (gg,) = lib.autograd.grad((g.abs() ** 2).sum(), t)
        res.append((_np(g), _np(gg)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-9, atol=1e-10)
