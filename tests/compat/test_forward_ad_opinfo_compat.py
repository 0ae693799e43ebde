"""Forward-mode AD over PyTorch's OpInfo database: for every op torch differentiates in forward mode, the tangent
ember carries for its first float64 samples (the input dual, a random tangent) is torch's. The ops left out are
listed with the reason."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import ember  # noqa: E402
import ember.autograd.forward_ad as efwd  # noqa: E402

from . import opinfo_harness as H  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

KNOWN = {
    "as_strided_scatter": "partial views of the same storage (ember copies, by design)",
    "nn.functional.max_unpool1d": "samples with repeated indices: which write wins is undefined",
    "nn.functional.max_unpool2d": "samples with repeated indices: which write wins is undefined",
    "nn.functional.max_unpool3d": "samples with repeated indices: which write wins is undefined",
    "logcumsumexp": "a sample of values 1e4 apart: the tangents differ where exp underflows",
    "linalg.cholesky": "a non-symmetric tangent of a symmetric input: torch reads its lower triangle",
    "linalg.cholesky_ex": "a non-symmetric tangent of a symmetric input: torch reads its lower triangle",
    "linalg.eigh": "a non-symmetric tangent of a symmetric input: torch reads its lower triangle",
    "linalg.eig": "eigenvectors are defined up to a phase each: their tangents follow the phase chosen",
}


def _torch_tangents(op, sample, tangent):
    """torch's tangents of the sample's outputs, or None where torch cannot take them."""
    import torch.autograd.forward_ad as tfwd
    try:
        with tfwd.dual_level():
            out = op.op(tfwd.make_dual(sample.input.detach().clone(), torch.from_numpy(tangent)), *sample.args,
                        **sample.kwargs)
            return [tfwd.unpack_dual(o).tangent for o in H._flat(out, []) if isinstance(o, torch.Tensor)]
    except Exception:  # noqa: BLE001 - torch's limits are not ember's failures
        return None


def _check(op, fn, sample, k):
    tangent = np.random.default_rng(k).standard_normal(tuple(sample.input.shape))
    want = _torch_tangents(op, sample, tangent)
    if want is None:
        return
    args = H.to_ember([list(sample.args), dict(sample.kwargs)])
    with efwd.dual_level():
        x = ember.tensor(sample.input.detach().numpy().copy())
        out = fn(efwd.make_dual(x, ember.tensor(tangent)), *args[0], **args[1])
        got = [efwd.unpack_dual(o).tangent for o in H._flat(out, []) if isinstance(o, ember.Tensor)]
    for a, b in zip(got, want):
        if b is None:
            continue
        b = b.resolve_conj()
        b = torch.zeros_like(b) if b._is_zerotensor() else b
        assert a is not None, "no tangent"
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


def _samples(op, count):
    """(ember's callable, op's first float64 samples), or None where ember has no such op or torch no samples."""
    try:
        fn = H.ember_callable(op)
    except AttributeError:
        return None
    if fn is None or "float64" not in {str(d).split(".")[1] for d in op.supported_dtypes("cpu")}:
        return None
    torch.manual_seed(0)
    try:
        return fn, list(op.sample_inputs("cpu", torch.float64, requires_grad=False))[:count]
    except Exception:  # noqa: BLE001 - torch's own sample generator failing is not ember's failure
        return None


def _result(op):
    prepared = _samples(op, 4)
    if prepared is None:
        return None
    fn, samples = prepared
    for k, s in enumerate(samples):
        if not isinstance(s.input, torch.Tensor) or not s.input.dtype.is_floating_point:
            continue
        try:
            _check(op, fn, s, k)
        except H.NotCompared:
            return None
        except Exception as e:  # noqa: BLE001 - reported with the op's name
            return f"sample {k}: {type(e).__name__}: {str(e).strip()[:200]}"
    return "ok"


def _sweep(supported, result, known):
    """result(op) over the OpInfos with `supported` set: every op but those in `known` must answer 'ok'."""
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in H.load():
            if getattr(op, supported):
                r = result(op)
                if r is not None:
                    results[H.op_id(op)] = r
    bad = {k: v for k, v in results.items() if v != "ok" and k not in known}
    assert not bad, bad
    assert len(results) > 400


def test_forward_ad_matches_torch_over_opinfo():
    _sweep("supports_forward_ad", _result, KNOWN)


SYMMETRIC = {
    "linalg.eigh": "a non-symmetric direction for a symmetric input: its lower triangle is what the op reads",
    "linalg.eigvalsh": "a non-symmetric direction for a symmetric input: its lower triangle is what the op reads",
    "linalg.pinv.hermitian": "a non-symmetric direction for a symmetric input: its lower triangle is what the op reads",
}


def _hvp_result(op):
    """'ok', None (not compared) or why func.jvp(func.grad(f)) differs from reverse over reverse on op's samples."""
    prepared = _samples(op, 3)
    if prepared is None:
        return None
    fn, samples = prepared
    for k, s in enumerate(samples):
        if not isinstance(s.input, torch.Tensor) or not s.input.dtype.is_floating_point or not s.input.numel():
            continue
        try:
            args = H.to_ember([list(s.args), dict(s.kwargs)])
        except H.NotCompared:
            continue
        rng = np.random.default_rng(k)
        x0 = s.input.detach().numpy().copy()
        v = ember.tensor(rng.standard_normal(x0.shape))
        try:
            floats = [o for o in H._flat(fn(ember.tensor(x0), *args[0], **args[1]), [])
                      if isinstance(o, ember.Tensor) and o.dtype.is_floating_point]
        except Exception:  # noqa: BLE001 - the forward's own failures are the OpInfo harness's business
            continue
        ws = [ember.tensor(rng.standard_normal(tuple(o.shape))) for o in floats]
        if not ws:
            continue

        def f(x):
            out = [o for o in H._flat(fn(x, *args[0], **args[1]), [])
                   if isinstance(o, ember.Tensor) and o.dtype.is_floating_point]
            return sum((o * w).sum() for o, w in zip(out, ws))
        try:  # the reference: reverse over reverse (skipped where the op has no second derivative)
            x = ember.tensor(x0, requires_grad=True)
            g, = ember.autograd.grad(f(x), x, create_graph=True, allow_unused=True)
            if g is None or not g.requires_grad:
                continue
            want, = ember.autograd.grad((g * v).sum(), x, allow_unused=True)
        except Exception:  # noqa: BLE001
            continue
        try:
            _, got = ember.func.jvp(ember.func.grad(f), (ember.tensor(x0),), (v,))
            np.testing.assert_allclose(got.detach().numpy(), 0 if want is None else want.detach().numpy(),
                                       rtol=1e-6, atol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported with the op's name
            return f"sample {k}: {type(e).__name__}: {str(e).strip()[:200]}"
    return "ok"


def test_forward_over_reverse_matches_reverse_over_reverse_over_opinfo():
    """Hessian-vector products through forward mode (func.jvp of func.grad, the backward run as recorded ops that
    carry tangents) equal those of reverse over reverse."""
    _sweep("supports_fwgrad_bwgrad", _hvp_result, SYMMETRIC)
