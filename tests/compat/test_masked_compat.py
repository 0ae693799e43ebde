"""ember.masked against torch.masked: values and float64 gradients of every function on the same inputs and masks."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember

RNG = np.random.default_rng(0)
X = RNG.permutation(24).reshape(2, 3, 4) / 7.0 - 1.5  # distinct values: no ties for amax/median/argmax
Y = RNG.standard_normal((2, 3, 4))
MASKS = {
    "none": None,
    "full": RNG.random((2, 3, 4)) < 0.6,
    "bcast": np.array([True, False, True, True]),
    "empty_row": np.array([[True, False, True, False], [False] * 4, [True] * 4]),
}
# masks with no fully masked slice along the last dims: gradients stay finite
GRAD_MASKS = ("none", "bcast", "full", "empty_row")

CASES = {
    "sum": lambda M, x, m: M.sum(x, -1, mask=m),
    "sum_all": lambda M, x, m: M.sum(x, mask=m),
    "sum_dims_keep": lambda M, x, m: M.sum(x, (0, 2), keepdim=True, mask=m),
    "prod": lambda M, x, m: M.prod(x, 2, mask=m),
    "prod_dims": lambda M, x, m: M.prod(x, (0, 2), mask=m),
    "amax": lambda M, x, m: M.amax(x, -1, mask=m),
    "amin": lambda M, x, m: M.amin(x, (1, 2), mask=m),
    "argmax": lambda M, x, m: M.argmax(x, -1, mask=m),
    "argmin": lambda M, x, m: M.argmin(x, 1, keepdim=True, mask=m),
    "mean": lambda M, x, m: M.mean(x, -1, mask=m),
    "mean_all": lambda M, x, m: M.mean(x, mask=m),
    "median": lambda M, x, m: M.median(x, -1, mask=m),
    "norm2": lambda M, x, m: M.norm(x, 2.0, -1, mask=m),
    "norm1": lambda M, x, m: M.norm(x, 1.0, (1, 2), mask=m),
    "norm_inf": lambda M, x, m: M.norm(x, float("inf"), -1, mask=m),
    "norm_ninf": lambda M, x, m: M.norm(x, -float("inf"), -1, mask=m),
    "norm3": lambda M, x, m: M.norm(x, 3.0, -1, keepdim=True, mask=m),
    "var": lambda M, x, m: M.var(x, -1, mask=m),
    "var_biased": lambda M, x, m: M.var(x, (0, 2), unbiased=False, mask=m),
    "var_corr": lambda M, x, m: M.var(x, -1, correction=2, keepdim=True, mask=m),
    "std": lambda M, x, m: M.std(x, -1, mask=m),
    "logsumexp": lambda M, x, m: M.logsumexp(x, -1, mask=m),
    "cumsum": lambda M, x, m: M.cumsum(x, -1, mask=m),
    "cumprod": lambda M, x, m: M.cumprod(x, 1, mask=m),
    "softmax": lambda M, x, m: M.softmax(x, -1, mask=m),
    "log_softmax": lambda M, x, m: M.log_softmax(x, -1, mask=m),
    "softmin": lambda M, x, m: M.softmin(x, -1, mask=m),
    "normalize": lambda M, x, m: M.normalize(x, 2.0, -1, mask=m),
    "normalize1": lambda M, x, m: M.normalize(x, 1.0, -1, mask=m),
    "logaddexp": lambda M, x, m: M.logaddexp(x, x * 0.5 + 1, input_mask=m,
                                             other_mask=None if m is None else ~m),
}
NO_GRAD = {"argmax", "argmin"}


def _run(lib, name, mask_name, grad):
    x = lib.tensor(X, dtype=lib.float64, requires_grad=grad)
    m = MASKS[mask_name]
    out = CASES[name](lib.masked, x, None if m is None else lib.tensor(m))
    if not grad:
        return out.detach().numpy(), None
    w = lib.tensor(Y[..., : out.shape[-1]] if out.dim() == 3 else np.linspace(0.5, 1.5, out.numel()).reshape(
        tuple(out.shape)), dtype=lib.float64)
    (lib.where(lib.isfinite(out), out, 0) * w).sum().backward()
    return out.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize("name", list(CASES))
def test_values_match_torch(name, mask_name):
    got, _ = _run(ember, name, mask_name, False)
    want, _ = _run(torch, name, mask_name, False)
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mask_name", GRAD_MASKS)
@pytest.mark.parametrize("name", sorted(set(CASES) - NO_GRAD))
def test_grads_match_torch(name, mask_name):
    got_v, got_g = _run(ember, name, mask_name, True)
    want_v, want_g = _run(torch, name, mask_name, True)
    np.testing.assert_allclose(got_v, want_v, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-9, atol=1e-12)


def test_signatures_match_torch():
    import inspect
    for name in ember.masked.__all__:
        want = [(p.name, p.kind, p.default) for p in inspect.signature(getattr(torch.masked, name)).parameters.values()]
        got = [(p.name, p.kind, p.default) for p in inspect.signature(getattr(ember.masked, name)).parameters.values()]
        assert got == want, name
