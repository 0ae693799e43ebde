"""ember.masked: NumPy references (fill masked-out elements with the identity, then reduce), gradients, fully
masked slices, dtypes and mask broadcasting."""
import inspect

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

M = ember.masked
RNG = np.random.default_rng(1)
X = RNG.permutation(60).reshape(3, 4, 5) / 11.0 - 2.5  # distinct values: no ties
MASKS = [
    RNG.random((3, 4, 5)) < 0.5,
    np.array([True, False, True, True, False]),  # broadcasts over the leading dims
    np.ones((3, 4, 5), bool),
]
INF = np.inf


def _t(a, grad=False):
    return ember.tensor(a, dtype=ember.float64, requires_grad=grad)


def _fill(m, v):
    return np.where(np.broadcast_to(m, X.shape), X, v)


REDUCTIONS = [  # (name, kwargs, numpy reference of (filled-or-masked x, mask, dim))
    ("sum", {}, lambda m, d: _fill(m, 0).sum(d)),
    ("prod", {}, lambda m, d: _fill(m, 1).prod(d)),
    ("amax", {}, lambda m, d: _fill(m, -INF).max(d)),
    ("amin", {}, lambda m, d: _fill(m, INF).min(d)),
    ("logsumexp", {}, lambda m, d: np.log(np.exp(_fill(m, -INF)).sum(d))),
    ("mean", {}, lambda m, d: _fill(m, 0).sum(d) / np.broadcast_to(m, X.shape).sum(d)),
]


@pytest.mark.parametrize("dim", [2, (0, 2), None])
@pytest.mark.parametrize("mi", range(len(MASKS)))
@pytest.mark.parametrize("name,kw,ref", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
def test_reductions_match_numpy(name, kw, ref, mi, dim):
    m = MASKS[mi]
    with np.errstate(divide="ignore", invalid="ignore"):
        want = ref(m, dim)
    got = getattr(M, name)(_t(X), dim, mask=ember.tensor(m), **kw)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    kept = getattr(M, name)(_t(X), dim, keepdim=True, mask=ember.tensor(m), **kw)
    assert kept.dim() == 3 and kept.numel() == np.size(want)


@pytest.mark.parametrize("mi", range(len(MASKS)))
def test_var_std_norm_median_match_numpy(mi):
    m = MASKS[mi]
    mb = np.broadcast_to(m, X.shape)
    for i, j in np.ndindex(3, 4):
        vals = X[i, j][mb[i, j]]
        with np.errstate(invalid="ignore", divide="ignore"):
            want_var = np.var(vals, ddof=1) if vals.size > 1 else np.nan
        got = M.var(_t(X), 2, mask=ember.tensor(m))[i, j].item()
        np.testing.assert_allclose(got, want_var, rtol=1e-12)
        np.testing.assert_allclose(M.std(_t(X), 2, correction=0, mask=ember.tensor(m))[i, j].item(),
                                   np.std(vals) if vals.size else np.nan, rtol=1e-12)
        np.testing.assert_allclose(M.norm(_t(X), 3.0, 2, mask=ember.tensor(m))[i, j].item(),
                                   np.sum(np.abs(vals) ** 3) ** (1 / 3), rtol=1e-12)
        want_med = np.sort(vals)[(vals.size - 1) // 2] if vals.size else np.nan
        np.testing.assert_allclose(M.median(_t(X), 2, mask=ember.tensor(m))[i, j].item(), want_med)
        am = M.argmax(_t(X), 2, mask=ember.tensor(m))[i, j].item()
        assert vals.size == 0 or X[i, j, int(am)] == vals.max()


@pytest.mark.parametrize("mi", range(len(MASKS)))
def test_normalizations_match_numpy(mi):
    m = MASKS[mi]
    mb = np.broadcast_to(m, X.shape)
    e = np.exp(_fill(m, -INF) - _fill(m, -INF).max(-1, keepdims=True))
    np.testing.assert_allclose(M.softmax(_t(X), -1, mask=ember.tensor(m)).numpy(), e / e.sum(-1, keepdims=True))
    e = np.exp(-_fill(m, INF) + _fill(m, INF).min(-1, keepdims=True))
    np.testing.assert_allclose(M.softmin(_t(X), -1, mask=ember.tensor(m)).numpy(), e / e.sum(-1, keepdims=True))
    np.testing.assert_allclose(M.cumsum(_t(X), 1, mask=ember.tensor(m)).numpy(), np.cumsum(_fill(m, 0), 1))
    np.testing.assert_allclose(M.cumprod(_t(X), 1, mask=ember.tensor(m)).numpy(), np.cumprod(_fill(m, 1), 1))
    nrm = np.sqrt((_fill(m, 0) ** 2).sum(-1, keepdims=True))
    np.testing.assert_allclose(M.normalize(_t(X), 2.0, -1, mask=ember.tensor(m)).numpy(),
                               _fill(m, 0) / np.maximum(nrm, 1e-12))
    other = X[::-1].copy()
    want = np.logaddexp(np.where(mb, X, -INF), np.where(~mb, other, -INF))
    np.testing.assert_allclose(M.logaddexp(_t(X), _t(other), input_mask=ember.tensor(m),
                                           other_mask=ember.tensor(~m)).numpy(), want)


def test_fully_masked_slices():
    x = _t([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    m = ember.tensor([[True, False, True], [False, False, False]])
    assert M.sum(x, 1, mask=m).tolist() == [4.0, 0.0]
    assert M.prod(x, 1, mask=m).tolist() == [3.0, 1.0]
    assert M.amax(x, 1, mask=m).tolist() == [3.0, -INF]
    assert M.amin(x, 1, mask=m).tolist() == [1.0, INF]
    assert M.logsumexp(x, 1, mask=m)[1].item() == -INF
    assert M.norm(x, 2.0, 1, mask=m)[1].item() == 0.0
    assert M.norm(x, -INF, 1, mask=m)[1].item() == INF
    for f in (M.mean, M.median, M.var, M.std):
        assert np.isnan(f(x, 1, mask=m)[1].item())
    for f in (M.softmax, M.log_softmax, M.softmin):
        out = f(x, 1, mask=m)
        assert np.isnan(out[1].numpy()).all() and np.isfinite(out[0, 0].item())
    assert M.softmax(x, 1, mask=m)[0, 1].item() == 0.0
    assert M.normalize(x, 2.0, 1, mask=m)[1].tolist() == [0.0, 0.0, 0.0]
    assert M.cumsum(x, 1, mask=m)[1].tolist() == [0.0, 0.0, 0.0]
    assert M.logaddexp(x, x, input_mask=m, other_mask=m)[1].tolist() == [-INF] * 3


def test_integer_inputs_dtype_and_mask_forms():
    xi = ember.tensor([[1, 2], [3, 4]])
    mi = ember.tensor([[True, False], [False, False]])
    assert M.amax(xi, 1, mask=mi).tolist() == [1, ember.iinfo(ember.int64).min]
    assert M.amin(xi, 1, mask=mi).tolist() == [1, ember.iinfo(ember.int64).max]
    assert M.sum(xi, 1, mask=mi).tolist() == [1, 0]
    x = _t([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    assert M.argmax(x, 1, mask=ember.tensor([True, False, True])).dtype == ember.float64  # torch: input's dtype
    assert M.sum(x, 1, mask=ember.tensor([[1, 0, 1], [0, 1, 0]])).tolist() == [4.0, 5.0]  # non-bool masks
    assert M.mean(x.float(), 1, dtype=ember.float64).dtype == ember.float64
    assert M.sum(x, 1).tolist() == [2.0, 3.0]  # no mask: the plain reduction
    assert M.var(x, 1, mask=ember.tensor([True, True, False]), correction=3).tolist() == [INF, INF]


def test_signatures():
    sig = inspect.signature
    assert str(sig(M.sum)) == "(input, dim=None, *, keepdim=False, dtype=None, mask=None)"
    assert str(sig(M.softmax)) == "(input, dim, *, dtype=None, mask=None)"
    assert str(sig(M.norm)) == "(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None)"
    assert str(sig(M.var)) == ("(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, "
                               "mask=None)")
    assert str(sig(M.normalize)) == "(input, ord, dim, *, eps=1e-12, dtype=None, mask=None)"
    assert str(sig(M.logaddexp)) == "(input, other, *, dtype=None, input_mask=None, other_mask=None)"


GRAD_FNS = {
    "sum": lambda x, m: M.sum(x, (0, 2), mask=m),
    "prod": lambda x, m: M.prod(x, 2, mask=m),
    "amax": lambda x, m: M.amax(x, 2, mask=m),
    "amin": lambda x, m: M.amin(x, (1, 2), mask=m),
    "mean": lambda x, m: M.mean(x, 2, mask=m),
    "median": lambda x, m: M.median(x, 2, mask=m),
    "norm": lambda x, m: M.norm(x, 2.0, 2, mask=m),
    "var": lambda x, m: M.var(x, 2, mask=m),
    "std": lambda x, m: M.std(x, 2, mask=m),
    "logsumexp": lambda x, m: M.logsumexp(x, 2, mask=m),
    "cumsum": lambda x, m: M.cumsum(x, 2, mask=m),
    "cumprod": lambda x, m: M.cumprod(x, 2, mask=m),
    "softmax": lambda x, m: M.softmax(x, 2, mask=m),
    "log_softmax": lambda x, m: ember.where(m, M.log_softmax(x, 2, mask=m), 0),  # -inf where masked
    "softmin": lambda x, m: M.softmin(x, 2, mask=m),
    "normalize": lambda x, m: M.normalize(x, 2.0, 2, mask=m),
    "logaddexp": lambda x, m: M.logaddexp(x, x * 0.5, input_mask=m, other_mask=None),
}


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_gradcheck(name):
    x = _t(X[:2, :2, :4], grad=True)
    m = ember.tensor(np.array([True, False, True, True]))  # no fully masked slice
    assert gradcheck(lambda x: GRAD_FNS[name](x, m), (x,))
    x.grad = None
    out = GRAD_FNS[name](x, m)
    if name not in ("log_softmax", "logaddexp"):
        out.sum().backward()
        assert np.all(x.grad.numpy()[..., 1] == 0)  # masked-out elements get no gradient
