"""ember.fft: forward against numpy.fft, dtypes, n/s padding and cropping, dims, out=, errors, and float64
gradcheck / gradgradcheck of every transform (real and complex inputs)."""
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.fft as F
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


# numpy has no hfft2/hfftn/ihfft2/ihfftn: by definition they are the c2r/r2c transforms of the other direction
def _np_hfftn(a, s=None, axes=None, norm=None):
    return np.fft.irfftn(np.conj(a), s=s, axes=axes, norm=_SWAP[norm])


def _np_ihfftn(a, s=None, axes=None, norm=None):
    return np.conj(np.fft.rfftn(a, s=s, axes=axes, norm=_SWAP[norm]))


_TWO_D = (-2, -1)
NP = {"fft": np.fft.fft, "ifft": np.fft.ifft, "rfft": np.fft.rfft, "irfft": np.fft.irfft, "hfft": np.fft.hfft,
      "ihfft": np.fft.ihfft, "fft2": np.fft.fft2, "ifft2": np.fft.ifft2, "fftn": np.fft.fftn, "ifftn": np.fft.ifftn,
      "rfft2": np.fft.rfft2, "irfft2": np.fft.irfft2, "rfftn": np.fft.rfftn, "irfftn": np.fft.irfftn,
      "hfft2": lambda a, s=None, axes=_TWO_D, norm=None: _np_hfftn(a, s, axes, norm), "hfftn": _np_hfftn,
      "ihfft2": lambda a, s=None, axes=_TWO_D, norm=None: _np_ihfftn(a, s, axes, norm), "ihfftn": _np_ihfftn}
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn", "ihfft2", "ihfftn"}
NORMS = [None, "backward", "ortho", "forward"]


def _np_kwargs(name, kw):
    """ember's keywords in numpy's spelling (dim -> axis / axes)."""
    kw = dict(kw)
    if "dim" in kw:
        d = kw.pop("dim")
        kw["axis" if name in ONE_D else "axes"] = d if name in ONE_D or isinstance(d, tuple) else (d,)
    elif "s" in kw:  # numpy 2 wants the axes spelled out with s (torch's default: the last len(s) dims)
        kw["axes"] = tuple(range(-len(kw["s"]), 0))
    return kw


def _real(shape):
    return lambda rng: [rng.standard_normal(shape)]


def _cplx(shape):
    return lambda rng: [rng.standard_normal(shape) + 1j * rng.standard_normal(shape)]


def _spec(name, kw, cplx, shape):
    def fn(x):
        return getattr(F, name)(x, **kw)

    def ref(a):
        return NP[name](a, **_np_kwargs(name, kw))
    label = f"{name}-{'complex' if cplx else 'real'}-{shape}-{kw}"
    return OpSpec(label, fn, ref, (_cplx if cplx else _real)(shape), gradgrad=True, atol=1e-10, rtol=1e-9)


def _variants(name):
    """keyword sets: every norm, padding, cropping, an odd and an even output size, explicit dims."""
    if name in ONE_D:
        return [({"norm": nm}, (3, 6)) for nm in NORMS] + [
            ({"n": 9}, (2, 6)), ({"n": 4}, (2, 6)), ({"n": 5, "norm": "ortho"}, (2, 6)), ({"dim": 0}, (5, 3)),
            ({"dim": -2, "n": 7, "norm": "forward"}, (4, 3)), ({}, (7,)), ({"n": 1}, (3, 4))]
    vs = [({"norm": nm}, (3, 4)) for nm in NORMS] + [
        ({"s": (4, 7)}, (3, 4)), ({"s": (2, 3)}, (3, 5)), ({"s": (5, 2), "norm": "ortho"}, (3, 4)),
        ({"dim": (0, 2)}, (3, 2, 4)), ({"dim": (2, 0), "s": (3, 4), "norm": "forward"}, (3, 2, 4))]
    if name.endswith("n"):
        vs += [({}, (2, 3, 4)), ({"dim": 1}, (3, 4)), ({"s": (5,)}, (3, 4)), ({"s": (-1, 6)}, (3, 4))]
    return vs


SPECS = [_spec(name, kw, cplx, shape) for name in ONE_D + N_D for kw, shape in _variants(name)
         for cplx in ((False,) if name in REAL_ONLY else (False, True))
         if "s" not in kw or -1 not in kw["s"]]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_forward(spec):
    check_forward(spec, np.float64)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if "norm" not in s.name or "ortho" in s.name], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_s_minus_one_keeps_the_input_size():
    x = np.random.default_rng(1).standard_normal((3, 4))
    assert_close(F.fftn(ember.tensor(x), s=(-1, 6)), np.fft.fftn(x, s=(3, 6), axes=(0, 1)), atol=1e-12)
    assert_close(F.irfftn(ember.tensor(x + 0j), s=(-1, 5)), np.fft.irfftn(x + 0j, s=(3, 5), axes=(0, 1)), atol=1e-12)
    assert_close(F.irfftn(ember.tensor(x + 0j), s=(2, -1)), np.fft.irfftn(x + 0j, s=(2, 6), axes=(0, 1)), atol=1e-12)


def test_empty_dims_is_a_complex_copy():
    x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    r = F.fftn(x, dim=())
    assert r.dtype is ember.complex64
    assert_close(r, np.array([[1, 2], [3, 4]], np.complex64))
    assert F.fftn(ember.tensor(2.5)).dtype is ember.complex64
    z = ember.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    r = F.ifftn(z, dim=())
    assert r is not z and r.grad_fn.name() == "FftC2CBackward0"
    r.real.sum().backward()
    assert_close(z.grad, [1 + 0j, 1 + 0j])


# ---------------- dtypes ----------------
@pytest.mark.parametrize("name", ONE_D + N_D)
@pytest.mark.parametrize("single", [True, False])
def test_result_dtypes(name, single):
    real_in = ember.randn(4, 6, dtype=ember.float32 if single else ember.float64)
    cplx = ember.complex64 if single else ember.complex128
    out_real = name in ("irfft", "hfft", "irfft2", "irfftn", "hfft2", "hfftn")
    expected = (ember.float32 if single else ember.float64) if out_real else cplx
    assert getattr(F, name)(real_in).dtype is expected
    if name not in REAL_ONLY:
        assert getattr(F, name)(real_in.to(cplx)).dtype is expected


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "rfftn", "hfftn", "ihfft"])
def test_float32_values(name):
    x = np.random.default_rng(2).standard_normal((5, 8))
    r = getattr(F, name)(ember.tensor(x.astype(np.float32)))
    assert_close(r, NP[name](x), atol=1e-5, rtol=1e-4)


def test_integer_and_bool_inputs_use_the_default_dtype():
    i = ember.tensor([1, 2, 3, 4])
    assert F.fft(i).dtype is ember.complex64
    assert_close(F.fft(i), np.fft.fft([1.0, 2, 3, 4]))
    assert F.rfft(ember.tensor([True, False, True])).dtype is ember.complex64
    assert F.irfft(i).dtype is ember.float32
    old = ember.get_default_dtype()
    ember.set_default_dtype(ember.float64)
    try:
        assert F.fftn(i).dtype is ember.complex128
        assert F.ihfft(i).dtype is ember.complex128
    finally:
        ember.set_default_dtype(old)


@pytest.mark.parametrize("dt,tname", [("float16", "Half"), ("bfloat16", "BFloat16")])
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "ihfftn"])
def test_half_precision_is_refused(dt, tname, name):
    with pytest.raises(RuntimeError, match=f"^Unsupported dtype {tname}$"):
        getattr(F, name)(ember.ones(4, dtype=getattr(ember, dt)))


# ---------------- out= ----------------
def test_out():
    x = ember.randn(3, 4)
    out = ember.empty(0, dtype=ember.complex64)
    r = F.fft(x, out=out)
    assert r is out and out.shape == (3, 4)
    assert_close(out, F.fft(x))
    out64 = ember.empty(3, 6, dtype=ember.float64)
    F.irfft(x.to(ember.complex64), out=out64)
    assert_close(out64, F.irfft(x.to(ember.complex64)).double(), atol=1e-6)
    o = ember.empty(3, 3, dtype=ember.complex128)
    F.rfftn(x, out=o)
    assert_close(o, np.fft.rfftn(x.numpy()), atol=1e-5)


@pytest.mark.parametrize("name,fname,kind", [
    ("fft", "fft", "complex"), ("ifft", "ifft", "complex"), ("fft2", "fftn", "complex"), ("ifftn", "fftn", "complex"),
    ("rfft", "rfft", "complex"), ("ihfft", "ihfft", "complex"), ("rfft2", "rfftn", "complex"),
    ("ihfft2", "ihfftn", "complex"), ("irfft", "irfft", "floating point"), ("hfft", "hfft", "floating point"),
    ("irfft2", "irfftn", "floating point"), ("hfftn", "hfftn", "floating point")])
def test_out_dtype_kind_errors(name, fname, kind):
    bad = ember.empty(0, dtype=ember.float32 if kind == "complex" else ember.complex64)
    with pytest.raises(RuntimeError, match=f"^{fname} expects a {kind} output tensor, but got "):
        getattr(F, name)(ember.randn(4, 4), out=bad)
    with pytest.raises(RuntimeError, match="expects a .* output tensor, but got Long"):
        getattr(F, name)(ember.randn(4, 4), out=ember.empty(0, dtype=ember.int64))


def test_out_with_grad_is_refused():
    x = ember.randn(4, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^_fft_r2c\(\): functions with out=\.\.\. arguments don't support"):
        F.rfft(x, out=ember.empty(0, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match=r"^_fft_c2c\(\): functions with out=\.\.\. arguments don't support"):
        F.fftn(x, out=ember.empty(0, dtype=ember.complex64))


def test_inverse_real_out_needs_the_exact_dtype():
    with pytest.raises(RuntimeError, match="^Found dtype ComplexFloat but expected ComplexDouble$"):
        F.ifft(ember.randn(4, dtype=ember.float64), out=ember.empty(0, dtype=ember.complex64))


# ---------------- errors ----------------
ERRORS = [
    (lambda: F.fft(ember.randn(4), norm="bad"), RuntimeError, 'Invalid normalization mode: "bad"'),
    (lambda: F.fft(ember.randn(4), n=0), RuntimeError, r"Invalid number of data points \(0\) specified"),
    (lambda: F.rfft(ember.randn(4), n=-1), RuntimeError, r"Invalid number of data points \(-1\) specified"),
    (lambda: F.irfft(ember.randn(1)), RuntimeError, r"Invalid number of data points \(0\) specified"),
    (lambda: F.irfftn(ember.randn(3, 1)), RuntimeError, r"Invalid number of data points \(0\) specified"),
    (lambda: F.fftn(ember.randn(4, 5), s=(0, 3)), RuntimeError, r"Invalid number of data points \(0\) specified"),
    (lambda: F.fft(ember.randn(4, 5), dim=2), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: F.fft(ember.tensor(1.0)), IndexError, "Dimension specified as -1 but tensor has no dimensions"),
    (lambda: F.fft2(ember.randn(3)), IndexError,
     r"Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)"),
    (lambda: F.fftn(ember.randn(4, 5), dim=(0, 0)), RuntimeError, "FFT dims must be unique"),
    (lambda: F.fftn(ember.randn(4, 5), s=(3,), dim=(0, 1)), RuntimeError,
     "When given, dim and shape arguments must have the same length"),
    (lambda: F.fft2(ember.randn(4, 5), s=(3,)), RuntimeError,
     "When given, dim and shape arguments must have the same length"),
    (lambda: F.fftn(ember.randn(4, 5), s=(3, 3, 3)), RuntimeError,
     "Got shape with 3 values but input tensor only has 2 dimensions."),
    (lambda: F.rfftn(ember.tensor(1.0)), RuntimeError, "rfftn must transform at least one axis"),
    (lambda: F.irfftn(ember.tensor(1.0 + 0j)), RuntimeError, "irfftn must transform at least one axis"),
    (lambda: F.rfft(ember.randn(4).to(ember.complex64)), RuntimeError,
     "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda: F.ihfft(ember.randn(4).to(ember.complex128)), RuntimeError,
     "ihfft expects a real input tensor, but got ComplexDouble"),
    (lambda: F.rfft2(ember.randn(4, 4).to(ember.complex64)), RuntimeError,
     "rfftn expects a real-valued input tensor, but got ComplexFloat"),
    (lambda: F.ihfftn(ember.randn(4, 4).to(ember.complex64)), RuntimeError,
     "Only supports floating-point dtypes, but found: ComplexFloat"),
    (lambda: F.fft([1.0, 2.0]), TypeError, r"fft_fft\(\): argument 'input' \(position 1\) must be Tensor, not list"),
    (lambda: F.fft(ember.randn(4), 3.5), TypeError, r"fft_fft\(\): argument 'n' \(position 2\) must be int, not float"),
    (lambda: F.fftfreq(5, dtype=ember.int64), RuntimeError, "fftfreq requires a floating point or complex dtype"),
    (lambda: F.rfftfreq(5, dtype=ember.int32), RuntimeError, "rfftfreq requires a floating point or complex dtype"),
    (lambda: F.fftfreq(-1), RuntimeError, r"Trying to create tensor with negative dimension -1: \[-1\]"),
    (lambda: F.fftshift(ember.tensor(3.0)), RuntimeError, "`shifts` required"),
    (lambda: F.ifftshift(ember.randn(3), dim=()), RuntimeError, "`shifts` required"),
    (lambda: F.fftshift(ember.randn(3, 4), dim=5), IndexError, "Dimension out of range"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn, exc, msg = ERRORS[i]
    with pytest.raises(exc, match=msg):
        fn()


# ---------------- autograd details ----------------
@pytest.mark.parametrize("name,cplx,node", [
    ("fft", True, "FftC2CBackward0"), ("fft", False, "FftR2CBackward0"), ("ifft", False, "ConjBackward0"),
    ("fftn", False, "FftC2CBackward0"), ("rfft", False, "FftR2CBackward0"), ("rfftn", False, "FftR2CBackward0"),
    ("irfft", True, "FftC2RBackward0"), ("hfft", True, "FftC2RBackward0"), ("hfftn", True, "FftC2RBackward0"),
    ("ihfft", False, "ConjBackward0"), ("ihfftn", False, "FftC2CBackward0")])
def test_grad_fn_names(name, cplx, node):
    x = ember.randn(3, 4, dtype=ember.complex64 if cplx else ember.float32, requires_grad=True)
    assert getattr(F, name)(x).grad_fn.name() == node
    with ember.no_grad():
        assert getattr(F, name)(x).grad_fn is None


def test_rfft_gradient_doubles_the_mirrored_bins():
    # d/dx sum(real(rfft(x))) for n = 6: each real input sees the real parts of bins 0..3 once
    x = ember.tensor(np.arange(6.0), requires_grad=True)
    F.rfft(x).real.sum().backward()
    expected = np.real(np.exp(-2j * np.pi * np.outer(np.arange(6), np.arange(4)) / 6)).sum(1)
    assert_close(x.grad, expected, atol=1e-12)
    # irfft's gradient: bins 1..n - (n//2 + 1) count twice (they stand for their mirror too)
    z = ember.tensor(np.zeros(4) + 0j, requires_grad=True)
    F.irfft(z, n=6).sum().backward()
    assert_close(z.grad, np.array([1.0, 0, 0, 0]) + 0j, atol=1e-12)


# ---------------- frequencies ----------------
@pytest.mark.parametrize("n", [1, 2, 5, 6, 9])
@pytest.mark.parametrize("d", [1.0, 0.1, 2.5])
def test_fftfreq(n, d):
    assert_close(F.fftfreq(n, d, dtype=ember.float64), np.fft.fftfreq(n, d), atol=1e-12)
    assert_close(F.rfftfreq(n, d, dtype=ember.float64), np.fft.rfftfreq(n, d), atol=1e-12)
    assert F.fftfreq(n, d).dtype is ember.float32
    assert_close(F.fftfreq(n, d), np.fft.fftfreq(n, d).astype(np.float32), atol=1e-6)


def test_fftfreq_options():
    t = F.fftfreq(4, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.device.type == "cpu"
    with pytest.raises(NotImplementedError, match="\"arange_cpu\" not implemented for 'ComplexFloat'"):
        F.rfftfreq(4, dtype=ember.complex64)
    assert F.fftfreq(4, dtype=ember.float16).dtype is ember.float16
    assert_close(F.fftfreq(4, dtype=ember.bfloat16), [0.0, 0.25, -0.5, -0.25])
    out = ember.empty(2, dtype=ember.float64)
    assert F.fftfreq(5, 0.5, out=out) is out
    assert_close(out, np.fft.fftfreq(5, 0.5), atol=1e-12)
    assert np.isnan(F.fftfreq(3, 0).numpy()[0])
    assert F.rfftfreq(-3).shape == (0,)
    assert F.fftfreq(0).shape == (0,)
    assert np.isnan(F.rfftfreq(0).numpy()).all() and F.rfftfreq(0).shape == (1,)  # 0 * (1/0), as torch gives


# ---------------- shifts ----------------
@pytest.mark.parametrize("shape,dim", [((5,), None), ((4, 5), None), ((4, 5), 1), ((4, 5), (0,)), ((3, 4, 5), (-1, 0))])
def test_shifts(shape, dim):
    a = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    assert_close(F.fftshift(ember.tensor(a), dim), np.fft.fftshift(a, dim))
    assert_close(F.ifftshift(ember.tensor(a), dim), np.fft.ifftshift(a, dim))
    assert_close(F.ifftshift(F.fftshift(ember.tensor(a), dim), dim), a)


def test_shift_gradients():
    x = ember.randn(3, 5, dtype=ember.float64, requires_grad=True)
    from ember.autograd import gradcheck, gradgradcheck
    assert gradcheck(lambda t: F.fftshift(t, 1), (x,))
    assert gradgradcheck(lambda t: F.ifftshift(t), (x,))


# ---------------- import cost and devices ----------------
def test_scipy_fft_is_imported_on_first_use():
    code = ("import sys, ember, ember.fft; assert 'scipy.fft' not in sys.modules; "
            "ember.fft.fft(ember.ones(2)); assert 'scipy.fft' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def _real_gpu():
    try:
        import cupy
    except ImportError:
        return False
    return not getattr(cupy, "IS_FAKE", False) and ember.cuda.is_available()


@pytest.mark.cuda
@pytest.mark.skipif(not _real_gpu(), reason="needs CuPy and an NVIDIA GPU")
@pytest.mark.parametrize("name", ONE_D + N_D)
def test_gpu_matches_cpu(name):
    x = np.random.default_rng(3).standard_normal((4, 6))
    a = x if name in REAL_ONLY else x + 1j * x[::-1]
    cpu = ember.tensor(a, requires_grad=True)
    gpu = ember.tensor(a, device="cuda", requires_grad=True)
    rc, rg = getattr(F, name)(cpu, norm="ortho"), getattr(F, name)(gpu, norm="ortho")
    assert rg.device.type == "cuda"
    assert_close(rg, rc.detach().numpy(), atol=1e-10)
    rc.abs().sum().backward()
    rg.abs().sum().backward()
    assert_close(gpu.grad, cpu.grad.numpy(), atol=1e-8)
