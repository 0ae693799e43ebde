"""Interpolation, pixel/channel shuffles, grid sampling: loop references, gradcheck, gradgradcheck, modules."""
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def rand(*shape):
    return lambda rng: [rng.normal(size=shape)]


def _src(dst, n_in, n_out, align_corners, clamp=True):
    if align_corners:
        return dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    s = (n_in / n_out) * (dst + 0.5) - 0.5
    return max(s, 0.0) if clamp else s


def ref_bilinear(x, size, align_corners):
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + tuple(size))
    for i, j in np.ndindex(*size):
        sy, sx = _src(i, h, size[0], align_corners), _src(j, w, size[1], align_corners)
        y0, x0 = min(int(sy), h - 1), min(int(sx), w - 1)
        y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
        ly, lx = sy - y0, sx - x0
        out[..., i, j] = ((1 - ly) * ((1 - lx) * x[..., y0, x0] + lx * x[..., y0, x1])
                          + ly * ((1 - lx) * x[..., y1, x0] + lx * x[..., y1, x1]))
    return out


def ref_linear(x, n_out, align_corners):
    return ref_bilinear(x[..., None, :], (1, n_out), align_corners)[..., 0, :]


def ref_nearest(x, size, exact=False):
    nd = len(size)
    sp = x.shape[-nd:]
    idx = []
    for i in range(nd):
        dst = np.arange(size[i])
        src = np.floor((dst + 0.5) * sp[i] / size[i]) if exact else np.floor(dst * sp[i] / size[i])
        idx.append(np.minimum(src.astype(int), sp[i] - 1))
    return x[(Ellipsis,) + np.ix_(*idx)]


def ref_bicubic(x, size, align_corners):
    a = -0.75
    h, w = x.shape[-2:]

    def weights(t):
        near = lambda v: ((a + 2) * v - (a + 3)) * v * v + 1
        far = lambda v: ((a * v - 5 * a) * v + 8 * a) * v - 4 * a
        return [far(t + 1), near(t), near(1 - t), far(2 - t)]

    out = np.zeros(x.shape[:-2] + tuple(size))
    for i, j in np.ndindex(*size):
        sy = _src(i, h, size[0], align_corners, clamp=False)
        sx = _src(j, w, size[1], align_corners, clamp=False)
        fy, fx = math.floor(sy), math.floor(sx)
        wy, wx = weights(sy - fy), weights(sx - fx)
        for m in range(4):
            for n in range(4):
                yy, xx = min(max(fy - 1 + m, 0), h - 1), min(max(fx - 1 + n, 0), w - 1)
                out[..., i, j] += wy[m] * wx[n] * x[..., yy, xx]
    return out


def ref_area(x, size):
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + tuple(size))
    for i, j in np.ndindex(*size):
        ys = slice(i * h // size[0], -(-(i + 1) * h // size[0]))
        xs = slice(j * w // size[1], -(-(j + 1) * w // size[1]))
        out[..., i, j] = x[..., ys, xs].mean(axis=(-2, -1))
    return out


def ref_pixel_shuffle(x, r):
    c, h, w = x.shape[-3:]
    out = np.zeros(x.shape[:-3] + (c // (r * r), h * r, w * r))
    for ch, y, z in np.ndindex(*out.shape[-3:]):
        out[..., ch, y, z] = x[..., ch * r * r + (y % r) * r + (z % r), y // r, z // r]
    return out


def ref_pixel_unshuffle(x, r):
    c, h, w = x.shape[-3:]
    out = np.zeros(x.shape[:-3] + (c * r * r, h // r, w // r))
    for ch, y, z in np.ndindex(*x.shape[-3:]):
        out[..., ch * r * r + (y % r) * r + (z % r), y // r, z // r] = x[..., ch, y, z]
    return out


def ref_channel_shuffle(x, g):
    c = x.shape[1]
    return x[:, [(i % g) * (c // g) + i // g for i in range(c)]]


def ref_grid_sample(x, grid, align_corners):
    """Bilinear, zeros padding."""
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])
    for b, i, j in np.ndindex(n, *grid.shape[1:3]):
        gx, gy = grid[b, i, j]
        if align_corners:
            px, py = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
        else:
            px, py = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
        x0, y0 = math.floor(px), math.floor(py)
        for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
            if 0 <= yy < h and 0 <= xx < w:
                out[b, :, i, j] += (1 - abs(px - xx)) * (1 - abs(py - yy)) * x[b, :, yy, xx]
    return out


def ref_affine_grid(theta, size, align_corners):
    _n, _, h, w = size

    def base(k):
        v = np.linspace(-1, 1, k) if k > 1 else np.zeros(1)
        return v if align_corners else v * (k - 1) / k
    xs, ys = np.meshgrid(base(w), base(h))
    pts = np.stack([xs, ys, np.ones_like(xs)], -1)  # (h, w, 3)
    return np.einsum("hwk,nck->nhwc", pts, theta)


SPECS = [
    OpSpec("nearest1d", lambda x: F.interpolate(x, size=11), lambda x: ref_nearest(x, (11,)), rand(2, 3, 5)),
    OpSpec("nearest2d_down", lambda x: F.interpolate(x, size=(3, 4)), lambda x: ref_nearest(x, (3, 4)),
           rand(2, 2, 7, 9)),
    OpSpec("nearest2d_scale", lambda x: F.interpolate(x, scale_factor=2), lambda x: ref_nearest(x, (8, 10)),
           rand(1, 2, 4, 5)),
    OpSpec("nearest_exact", lambda x: F.interpolate(x, size=(7, 3), mode="nearest-exact"),
           lambda x: ref_nearest(x, (7, 3), True), rand(1, 2, 4, 5)),
    OpSpec("nearest3d", lambda x: F.interpolate(x, size=(2, 5, 3)), lambda x: ref_nearest(x, (2, 5, 3)),
           rand(1, 2, 3, 4, 5)),
    OpSpec("linear", lambda x: F.interpolate(x, size=9, mode="linear"), lambda x: ref_linear(x, 9, False),
           rand(2, 3, 5)),
    OpSpec("linear_align", lambda x: F.interpolate(x, size=4, mode="linear", align_corners=True),
           lambda x: ref_linear(x, 4, True), rand(2, 3, 7)),
    OpSpec("bilinear", lambda x: F.interpolate(x, size=(7, 5), mode="bilinear"),
           lambda x: ref_bilinear(x, (7, 5), False), rand(2, 2, 4, 6), gradgrad=True),
    OpSpec("bilinear_align", lambda x: F.interpolate(x, size=(3, 8), mode="bilinear", align_corners=True),
           lambda x: ref_bilinear(x, (3, 8), True), rand(1, 2, 5, 4), gradgrad=True),
    OpSpec("bicubic", lambda x: F.interpolate(x, size=(7, 5), mode="bicubic"),
           lambda x: ref_bicubic(x, (7, 5), False), rand(1, 2, 4, 6)),
    OpSpec("bicubic_align", lambda x: F.interpolate(x, size=(3, 8), mode="bicubic", align_corners=True),
           lambda x: ref_bicubic(x, (3, 8), True), rand(1, 2, 5, 4)),
    OpSpec("trilinear", lambda x: F.interpolate(x, size=(3, 1, 4), mode="trilinear", align_corners=True),
           None, rand(1, 2, 2, 3, 5)),
    OpSpec("area", lambda x: F.interpolate(x, size=(3, 4), mode="area"), lambda x: ref_area(x, (3, 4)),
           rand(2, 2, 7, 9)),
    OpSpec("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), lambda x: ref_pixel_shuffle(x, 2), rand(2, 8, 3, 2)),
    OpSpec("pixel_shuffle_unbatched", lambda x: F.pixel_shuffle(x, 3), lambda x: ref_pixel_shuffle(x, 3),
           rand(9, 2, 2)),
    OpSpec("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), lambda x: ref_pixel_unshuffle(x, 2),
           rand(2, 3, 4, 6)),
    OpSpec("channel_shuffle", lambda x: F.channel_shuffle(x, 3), lambda x: ref_channel_shuffle(x, 3),
           rand(2, 6, 3, 2)),
    OpSpec("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False),
           lambda x, g: ref_grid_sample(x, g, False),
           lambda rng: [rng.normal(size=(2, 3, 4, 5)), rng.uniform(-1.3, 1.3, (2, 3, 6, 2))]),
    OpSpec("grid_sample_align", lambda x, g: F.grid_sample(x, g, align_corners=True),
           lambda x, g: ref_grid_sample(x, g, True),
           lambda rng: [rng.normal(size=(1, 2, 5, 4)), rng.uniform(-1.3, 1.3, (1, 4, 3, 2))]),
    OpSpec("affine_grid", lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False),
           lambda t: ref_affine_grid(t, (2, 3, 4, 5), False), rand(2, 2, 3)),
    OpSpec("affine_grid_align", lambda t: F.affine_grid(t, (1, 1, 3, 2), align_corners=True),
           lambda t: ref_affine_grid(t, (1, 1, 3, 2), True), rand(1, 2, 3)),
]


@pytest.mark.parametrize("spec", [s for s in SPECS if s.ref is not None], ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_padding_gradcheck(padding_mode, mode):
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.normal(size=(1, 2, 4, 5)), requires_grad=True)
    g = ember.tensor(rng.uniform(-1.7, 1.7, (1, 3, 3, 2)), requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding_mode, align_corners=False), [x, g])


def ref_grid_sample_3d(x, grid, align_corners):
    """Trilinear, zeros padding."""
    n, c, d, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:4])
    for b, i, j, k in np.ndindex(n, *grid.shape[1:4]):
        p = []
        for v, size in zip(grid[b, i, j, k], (w, h, d)):
            p.append((v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2)
        px, py, pz = p
        for zz in (math.floor(pz), math.floor(pz) + 1):
            for yy in (math.floor(py), math.floor(py) + 1):
                for xx in (math.floor(px), math.floor(px) + 1):
                    if 0 <= zz < d and 0 <= yy < h and 0 <= xx < w:
                        wt = (1 - abs(px - xx)) * (1 - abs(py - yy)) * (1 - abs(pz - zz))
                        out[b, :, i, j, k] += wt * x[b, :, zz, yy, xx]
    return out


@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_volumetric_matches_trilinear_reference(align):
    rng = np.random.default_rng(3)
    x, g = rng.normal(size=(2, 2, 3, 4, 5)), rng.uniform(-1.2, 1.2, (2, 2, 3, 2, 3))
    got = F.grid_sample(ember.tensor(x), ember.tensor(g), align_corners=align).numpy()
    np.testing.assert_allclose(got, ref_grid_sample_3d(x, g, align), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_bicubic_and_volumetric_gradcheck(padding_mode):
    rng = np.random.default_rng(4)
    x = ember.tensor(rng.normal(size=(1, 2, 4, 5)), requires_grad=True)
    g = ember.tensor(rng.uniform(-1.3, 1.3, (1, 2, 3, 2)), requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, mode="bicubic", padding_mode=padding_mode,
                                                               align_corners=False), [x, g])
    x3 = ember.tensor(rng.normal(size=(1, 2, 3, 3, 4)), requires_grad=True)
    g3 = ember.tensor(rng.uniform(-1.3, 1.3, (1, 2, 2, 1, 3)), requires_grad=True)
    for mode in ("bilinear", "nearest"):
        assert ember.autograd.gradcheck(lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding_mode,
                                                                   align_corners=True), [x3, g3])


def test_grid_sample_bicubic_at_the_pixels_is_the_input():
    x = ember.randn(1, 2, 4, 5, dtype=ember.float64)
    theta = ember.tensor([[[1.0, 0, 0], [0, 1.0, 0]]], dtype=ember.float64)
    grid = F.affine_grid(theta, (1, 2, 4, 5), align_corners=True)
    y = F.grid_sample(x, grid, mode="bicubic", align_corners=True)
    np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=1e-12, atol=1e-12)


def test_grid_sample_identity_grid_reproduces_input():
    x = ember.randn(2, 3, 4, 5, dtype=ember.float64)
    theta = ember.tensor([[[1.0, 0, 0], [0, 1.0, 0]]] * 2, dtype=ember.float64)
    for align in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=align)
        assert_close(F.grid_sample(x, grid, align_corners=align), x.numpy(), atol=1e-12)


def test_reflection_and_border_values():
    x = ember.tensor(np.arange(4.0).reshape(1, 1, 1, 4))
    grid = ember.tensor([[[[-1.5, 0.0], [1.5, 0.0]]]])  # beyond both edges
    border = F.grid_sample(x, grid, padding_mode="border", align_corners=True)
    np.testing.assert_allclose(border.numpy().ravel(), [0.0, 3.0])
    refl = F.grid_sample(x, grid, padding_mode="reflection", align_corners=True)
    np.testing.assert_allclose(refl.numpy().ravel(), [0.75, 2.25])


def test_scale_factor_uses_given_scale():
    # torch samples with 1/scale_factor (not in/out) unless recompute_scale_factor=True
    x = ember.tensor(np.arange(5.0).reshape(1, 1, 5))
    y = F.interpolate(x, scale_factor=1.5, mode="linear")
    src = np.maximum((np.arange(7) + 0.5) / 1.5 - 0.5, 0)
    np.testing.assert_allclose(y.numpy().ravel(), np.minimum(src, 4), atol=1e-6)
    z = F.interpolate(x, scale_factor=1.5, mode="linear", recompute_scale_factor=True)
    np.testing.assert_allclose(z.numpy(), ref_linear(x.numpy(), 7, False), atol=1e-6)


def test_interpolate_errors():
    x = ember.randn(1, 2, 4, 4)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D input"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, 3, 2)
    with pytest.raises(RuntimeError, match="divisible by the square of upscale_factor"):
        F.pixel_shuffle(x, 2)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
        F.channel_shuffle(x, 3)


def test_align_corners_none_warns_for_grid_ops():
    x = ember.randn(1, 1, 3, 3)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        grid = F.affine_grid(ember.randn(1, 2, 3), (1, 1, 3, 3))
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, grid)


def test_grad_fn_names():
    x = ember.randn(1, 2, 3, 3, requires_grad=True)
    assert F.interpolate(x, scale_factor=2).grad_fn.name() == "UpsampleNearest2DBackward0"
    assert F.interpolate(x, scale_factor=2, mode="bilinear").grad_fn.name() == "UpsampleBilinear2DBackward0"
    assert F.interpolate(x, scale_factor=2, mode="bicubic").grad_fn.name() == "UpsampleBicubic2DBackward0"


def test_modules():
    x = ember.randn(2, 4, 3, 3)
    assert_close(nn.Upsample(scale_factor=2)(x), F.interpolate(x, scale_factor=2).numpy())
    assert_close(nn.UpsamplingBilinear2d(size=5)(x),
                 F.interpolate(x, size=5, mode="bilinear", align_corners=True).numpy())
    assert_close(nn.UpsamplingNearest2d(size=(4, 6))(x), F.interpolate(x, size=(4, 6)).numpy())
    assert_close(nn.PixelShuffle(2)(x), F.pixel_shuffle(x, 2).numpy())
    assert_close(nn.PixelUnshuffle(3)(x), F.pixel_unshuffle(x, 3).numpy())
    assert_close(nn.ChannelShuffle(2)(x), F.channel_shuffle(x, 2).numpy())
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.UpsamplingBilinear2d(size=4)) == "UpsamplingBilinear2d(size=4, mode='bilinear')"
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    assert F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2).numpy().tolist() == x.numpy().tolist()


@pytest.mark.filterwarnings("ignore:`nn.functional.upsample")
def test_upsample_aliases():
    x = ember.randn(1, 1, 2, 3)
    with pytest.warns(UserWarning, match="`nn.functional.upsample` is deprecated"):
        F.upsample(x, scale_factor=2)
    assert_close(F.upsample(x, scale_factor=2), F.interpolate(x, scale_factor=2).numpy())
    assert_close(F.upsample_nearest(x, size=4), F.interpolate(x, size=4).numpy())
    assert_close(F.upsample_bilinear(x, size=4), F.interpolate(x, size=4, mode="bilinear", align_corners=True).numpy())


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
def test_grid_sample_grid_grad_is_zero_on_the_clamped_border(padding_mode):
    # torch treats a sample exactly on the image border as clamped: no gradient reaches that grid coordinate
    img = ember.arange(12, dtype=ember.float64).reshape(1, 1, 4, 3)
    grid = ember.tensor([[[[1.0, 0.2], [-1.0, 0.3], [0.5, 1.0], [0.5, -1.0], [0.3, 0.3]]]], dtype=ember.float64,
                        requires_grad=True)
    F.grid_sample(img, grid, padding_mode=padding_mode, align_corners=True).sum().backward()
    # d/dx of the image is 1 per column, d/dy 3 per row; unnormalizing scales by (size - 1) / 2
    expected = np.array([[0.0, 4.5], [0.0, 4.5], [1.0, 0.0], [1.0, 0.0], [1.0, 4.5]])
    assert_close(grid.grad.reshape(-1, 2), expected)


def test_affine_grid_errors_print_the_size_as_given():
    theta = ember.zeros(2, 2, 3)
    with pytest.raises(ValueError, match=r"for size \(1, 2, 4, 3\)\. Got ember\.Size\(\[2, 3\]\)\."):
        F.affine_grid(theta[0], (1, 2, 4, 3), align_corners=False)
    with pytest.raises(ValueError, match=r"Got \[1, 2, 0, 3\]"):
        F.affine_grid(theta[:1], [1, 2, 0, 3], align_corners=False)
    with pytest.raises(NotImplementedError, match=r"Got size \(2, 2, 4\)\."):
        F.affine_grid(theta, (2, 2, 4), align_corners=False)
    # a batch size different from theta's fails like torch's batched matmul
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: "
                                           r"\[1, 3\] but got: \[2, 3\]\."):
        F.affine_grid(theta, (1, 2, 4, 3), align_corners=False)
