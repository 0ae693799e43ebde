"""geqrf, householder_product and ormqr against torch: values and float64 gradients."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("shape", [(5, 5), (6, 4), (2, 1, 5, 3), (5, 0), (2, 5)])
def test_geqrf(shape):
    a = np.random.default_rng(0).standard_normal(shape)
    want = torch.geqrf(torch.from_numpy(a))
    got = ember.geqrf(ember.from_numpy(a))
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.numpy(), w.numpy(), atol=1e-12)


def _grads(lib, fn, arrays, g):
    ts = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *ts)
    (out * lib.tensor(g)).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in ts]


@pytest.mark.parametrize("shape,k", [((5, 5), 5), ((6, 4), 3), ((2, 1, 5, 3), 3)])
def test_householder_product(shape, k):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape), rng.standard_normal(shape[:-2] + (k,))]
    g = rng.standard_normal(shape)
    fn = lambda lib, a, t: lib.linalg.householder_product(a, t)  # noqa: E731
    (wo, wg), (go, gg) = _grads(torch, fn, arrays, g), _grads(ember, fn, arrays, g)
    np.testing.assert_allclose(go, wo, atol=1e-12)
    for w, e in zip(wg, gg):
        np.testing.assert_allclose(e, w, atol=1e-10)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr(left, transpose):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 3)),
              rng.standard_normal((2, 5, 4) if left else (2, 4, 5))]
    g = rng.standard_normal(arrays[2].shape)
    fn = lambda lib, a, t, c: lib.ormqr(a, t, c, left, transpose)  # noqa: E731
    (wo, wg), (go, gg) = _grads(torch, fn, arrays, g), _grads(ember, fn, arrays, g)
    np.testing.assert_allclose(go, wo, atol=1e-12)
    for w, e in zip(wg, gg):
        np.testing.assert_allclose(e, w, atol=1e-10)
