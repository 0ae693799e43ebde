"""grid_sample's 5-D (trilinear, nearest) and bicubic paths, and torch.grid_sampler*, against torch: values and
the gradients of input and grid (float64), every padding mode and both corner conventions."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

PADDING = ["zeros", "border", "reflection"]


def _run(lib, x, g, w, **kw):
    xt = lib.tensor(x, requires_grad=True)
    gt = lib.tensor(g, requires_grad=True)
    y = lib.nn.functional.grid_sample(xt, gt, **kw)
    (y * lib.tensor(w)).sum().backward()
    return [t.detach().numpy() for t in (y, xt.grad, gt.grad)]


def _check(x, g, **kw):
    w = np.cos(np.arange(int(np.prod(_run(torch, x, g, np.ones(1), **kw)[0].shape)))).reshape(
        _run(torch, x, g, np.ones(1), **kw)[0].shape)
    for a, b in zip(_run(ember, x, g, w, **kw), _run(torch, x, g, w, **kw)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDING)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_volumetric(mode, padding, align):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5, 6))
    g = rng.uniform(-1.3, 1.3, (2, 3, 2, 4, 3))
    _check(x, g, mode=mode, padding_mode=padding, align_corners=align)


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDING)
def test_bicubic(padding, align):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 6))
    g = rng.uniform(-1.4, 1.4, (2, 4, 3, 2))
    _check(x, g, mode="bicubic", padding_mode=padding, align_corners=align)


def test_grid_sampler_forms_and_errors():
    rng = np.random.default_rng(2)
    x, g = rng.standard_normal((1, 2, 4, 4)), rng.uniform(-1, 1, (1, 3, 3, 2))
    for interp in range(3):
        for pad in range(3):
            for fn in ("grid_sampler", "grid_sampler_2d"):
                got = getattr(ember, fn)(ember.tensor(x), ember.tensor(g), interp, pad, False).numpy()
                want = getattr(torch, fn)(torch.tensor(x), torch.tensor(g), interp, pad, False).numpy()
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    x3, g3 = rng.standard_normal((1, 2, 3, 3, 3)), rng.uniform(-1, 1, (1, 2, 2, 2, 3))
    np.testing.assert_allclose(ember.grid_sampler_3d(ember.tensor(x3), ember.tensor(g3), 0, 1, True).numpy(),
                               torch.grid_sampler_3d(torch.tensor(x3), torch.tensor(g3), 0, 1, True).numpy(),
                               rtol=1e-10, atol=1e-10)
    F = ember.nn.functional
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(ember.tensor(x3), ember.tensor(g3), mode="bicubic", align_corners=False)
    with pytest.raises(RuntimeError, match=r"expected grid to have size 3 in last dimension, but got grid with "
                                           r"sizes \[1, 2, 2, 2, 2\]"):
        F.grid_sample(ember.tensor(x3), ember.zeros(1, 2, 2, 2, 2, dtype=ember.float64), align_corners=False)
    with pytest.raises(RuntimeError, match="expected grid and input to have same batch size"):
        F.grid_sample(ember.zeros(2, 2, 3, 3), ember.zeros(1, 2, 2, 2), align_corners=False)
