"""Pooling, interpolation and vision helpers against real torch: values, index outputs, grads, reprs, errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn
import torch.nn.functional as TF

import ember
import ember.nn as enn
import ember.nn.functional as EF


def _distinct(shape, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / n - 0.5 + rng.normal(0, 1e-3, shape)).astype(dtype)


def _run(efn, tfn, x, dtype=np.float64, grad=True, atol=1e-6):
    """Run the same call in both libraries; compare outputs (and grads of a weighted sum)."""
    xe = ember.tensor(x.astype(dtype), requires_grad=grad)
    xt = torch.tensor(x.astype(dtype), requires_grad=grad)
    ye, yt = efn(xe), tfn(xt)
    ye_t = ye if isinstance(ye, tuple) else (ye,)
    yt_t = yt if isinstance(yt, tuple) else (yt,)
    assert len(ye_t) == len(yt_t)
    for a, b in zip(ye_t, yt_t):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype)[6:] == str(b.dtype)[6:]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=atol, rtol=1e-5)
    if grad:
        w = np.random.default_rng(1).normal(size=tuple(yt_t[0].shape)).astype(dtype)
        (ye_t[0] * ember.tensor(w)).sum().backward()
        (yt_t[0] * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=atol, rtol=1e-5)


MAX_CASES = [
    (1, (2, 3, 11), {"kernel_size": 3}),
    (1, (3, 10), {"kernel_size": 2, "stride": 1, "padding": 1, "dilation": 2, "ceil_mode": True}),
    (2, (2, 3, 9, 8), {"kernel_size": 2}),
    (2, (2, 3, 9, 8), {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 1)}),
    (2, (2, 3, 10, 9), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    (2, (3, 10, 11), {"kernel_size": 2, "stride": 3, "dilation": 2, "ceil_mode": True}),
    (2, (1, 2, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2}),
    (3, (2, 2, 5, 6, 7), {"kernel_size": 2, "stride": (1, 2, 2), "padding": 1, "ceil_mode": True}),
    (3, (2, 6, 5, 7), {"kernel_size": (3, 2, 2)}),
]


@pytest.mark.parametrize("nd,shape,kw", MAX_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool(nd, shape, kw, dtype):
    x = _distinct(shape)
    name = f"max_pool{nd}d"
    _run(lambda t: getattr(EF, name)(t, return_indices=True, **kw),
         lambda t: getattr(TF, name)(t, return_indices=True, **kw), x, dtype)


@pytest.mark.parametrize("nd,shape,kw", [c for c in MAX_CASES if "dilation" not in c[2]])
def test_max_unpool(nd, shape, kw):
    x = _distinct(shape)
    name = f"max_pool{nd}d"
    y, i = getattr(TF, name)(torch.tensor(x), return_indices=True, **kw)
    kw = {k: v for k, v in kw.items() if k in ("kernel_size", "stride", "padding")}
    kw["output_size"] = x.shape[-nd:]
    un = f"max_unpool{nd}d"
    _run(lambda t: getattr(EF, un)(t, ember.tensor(i.numpy()), **kw),
         lambda t: getattr(TF, un)(t, i, **kw), y.numpy())


AVG_CASES = [
    (1, (2, 3, 11), {"kernel_size": 3}),
    (1, (3, 10), {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True, "count_include_pad": False}),
    (2, (2, 3, 9, 8), {"kernel_size": 2}),
    (2, (2, 3, 9, 8), {"kernel_size": (3, 2), "stride": (2, 1), "padding": (1, 1)}),
    (2, (2, 3, 10, 9), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    (2, (2, 3, 10, 9), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
    (2, (3, 10, 11), {"kernel_size": 3, "stride": 2, "padding": 1, "divisor_override": 5}),
    (3, (2, 2, 5, 6, 7), {"kernel_size": 2, "stride": (1, 2, 2), "padding": 1, "ceil_mode": True}),
    (3, (2, 6, 5, 7), {"kernel_size": (3, 2, 2), "padding": 1, "count_include_pad": False}),
]


@pytest.mark.parametrize("nd,shape,kw", AVG_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool(nd, shape, kw, dtype):
    x = _distinct(shape)
    name = f"avg_pool{nd}d"
    _run(lambda t: getattr(EF, name)(t, **kw), lambda t: getattr(TF, name)(t, **kw), x, dtype)


ADAPTIVE = [(1, (2, 3, 11), 4), (1, (3, 7), 7), (1, (3, 5), 9), (2, (2, 3, 9, 8), (4, 3)), (2, (3, 10, 7), (3, None)),
            (2, (1, 2, 5, 5), 7), (3, (2, 2, 5, 6, 7), (2, 3, 4)), (3, (2, 6, 5, 7), 3)]


@pytest.mark.parametrize("nd,shape,size", ADAPTIVE)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive(nd, shape, size, dtype):
    x = _distinct(shape)
    _run(lambda t: getattr(EF, f"adaptive_avg_pool{nd}d")(t, size),
         lambda t: getattr(TF, f"adaptive_avg_pool{nd}d")(t, size), x, dtype)
    _run(lambda t: getattr(EF, f"adaptive_max_pool{nd}d")(t, size, True),
         lambda t: getattr(TF, f"adaptive_max_pool{nd}d")(t, size, True), x, dtype)


@pytest.mark.parametrize("nd,norm,kw", [(1, 2.0, {"kernel_size": 3, "stride": 2}), (2, 1.5, {"kernel_size": 2}),
                                        (2, 3.0, {"kernel_size": (3, 2), "stride": 1, "ceil_mode": True}),
                                        (3, 2.0, {"kernel_size": 2})])
def test_lp_pool(nd, norm, kw):
    x = np.abs(_distinct((2, 3) + (6,) * nd)) + 0.1
    name = f"lp_pool{nd}d"
    _run(lambda t: getattr(EF, name)(t, norm, **kw), lambda t: getattr(TF, name)(t, norm, **kw), x)


INTERP = [
    ((2, 3, 7), {"scale_factor": 2.5, "mode": "nearest"}),
    ((2, 3, 7), {"size": 4, "mode": "nearest"}),
    ((2, 3, 7), {"size": 13, "mode": "nearest-exact"}),
    ((2, 3, 7), {"scale_factor": 1.7, "mode": "linear"}),
    ((2, 3, 7), {"size": 12, "mode": "linear", "align_corners": True}),
    ((2, 3, 5, 6), {"scale_factor": 2, "mode": "nearest"}),
    ((2, 3, 5, 6), {"scale_factor": (1.5, 0.7), "mode": "nearest"}),
    ((2, 3, 5, 6), {"size": (8, 3), "mode": "nearest-exact"}),
    ((2, 3, 5, 6), {"scale_factor": 2, "mode": "bilinear"}),
    ((2, 3, 5, 6), {"scale_factor": 1.3, "mode": "bilinear", "recompute_scale_factor": True}),
    ((2, 3, 5, 6), {"size": (7, 4), "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 6), {"size": (1, 9), "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 6), {"scale_factor": 1.5, "mode": "bicubic"}),
    ((2, 3, 5, 6), {"size": (9, 4), "mode": "bicubic", "align_corners": True}),
    ((2, 3, 5, 6), {"size": (3, 4), "mode": "area"}),
    ((2, 3, 9, 6), {"scale_factor": 0.5, "mode": "area"}),
    ((1, 2, 3, 4, 5), {"scale_factor": 2, "mode": "trilinear"}),
    ((1, 2, 3, 4, 5), {"size": (2, 6, 3), "mode": "trilinear", "align_corners": True}),
    ((1, 2, 3, 4, 5), {"scale_factor": (2, 1.5, 0.6), "mode": "nearest"}),
    ((1, 2, 3, 4, 5), {"size": (2, 2, 2), "mode": "area"}),
    # torch's linear kernels copy unchanged dimensions
    ((1, 2, 8), {"scale_factor": 1.1, "mode": "nearest-exact"}),
    ((1, 2, 5), {"scale_factor": 1.1, "mode": "linear"}),
    ((1, 2, 5, 4), {"scale_factor": 1.1, "mode": "bilinear"}),
    ((1, 2, 5, 4), {"scale_factor": (1.1, 1.5), "mode": "bicubic"}),
    ((1, 2, 5, 6, 4), {"scale_factor": (1.1, 2, 1.3), "mode": "trilinear"}),
    ((1, 2, 5, 6), {"size": (1, 1), "mode": "area"}),
]


@pytest.mark.parametrize("shape,kw", INTERP)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_interpolate(shape, kw, dtype):
    x = _distinct(shape)
    _run(lambda t: EF.interpolate(t, **kw), lambda t: TF.interpolate(t, **kw), x, dtype,
         atol=1e-5 if dtype == np.float32 else 1e-6)


@pytest.mark.parametrize("shape,kw", [((1, 2, 5), {"scale_factor": 1.1, "mode": "nearest"}),
                                      ((1, 2, 3), {"scale_factor": 2.3, "mode": "nearest"})])
def test_nearest_without_shortcuts(shape, kw):
    # torch's nearest forward samples with 1/scale_factor even when the size is unchanged or doubled; its
    # backward takes shortcuts for those two sizes (so its gradient is not the forward's transpose). ember's
    # gradient is the transpose of its forward: compare forward only.
    _run(lambda t: EF.interpolate(t, **kw), lambda t: TF.interpolate(t, **kw), _distinct(shape), grad=False)


@pytest.mark.parametrize("fn,arg,shape", [("pixel_shuffle", 2, (2, 8, 3, 4)), ("pixel_shuffle", 3, (9, 2, 2)),
                                          ("pixel_unshuffle", 2, (2, 3, 4, 6)), ("pixel_unshuffle", 3, (1, 6, 3)),
                                          ("channel_shuffle", 3, (2, 6, 3, 2)), ("channel_shuffle", 2, (2, 4, 5))])
def test_shuffles(fn, arg, shape):
    x = _distinct(shape)
    _run(lambda t: getattr(EF, fn)(t, arg), lambda t: getattr(TF, fn)(t, arg), x)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 5, 6))
    grid = rng.uniform(-1.6, 1.6, size=(2, 4, 7, 2))
    xe, ge = ember.tensor(x, requires_grad=True), ember.tensor(grid, requires_grad=True)
    xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    ye = EF.grid_sample(xe, ge, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    yt = TF.grid_sample(xt, gt, mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=1e-10)
    w = rng.normal(size=tuple(yt.shape))
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(ge.grad.numpy(), gt.grad.numpy(), atol=1e-8)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 1, 3), (2, 3, 2, 4, 5)])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.filterwarnings("ignore:Since version 1.3.0")
def test_affine_grid(size, align_corners):
    theta = np.random.default_rng(0).normal(size=(2, 2, 3) if len(size) == 4 else (2, 3, 4))
    _run(lambda t: EF.affine_grid(t, size, align_corners=align_corners),
         lambda t: TF.affine_grid(t, size, align_corners=align_corners), theta)


MODULES = [
    ("MaxPool2d", (2,), {}), ("MaxPool1d", (3, 2, 1, 2, True, True), {}), ("MaxPool3d", ((2, 2, 2),), {}),
    ("MaxPool2d", (3,), {"stride": 1, "padding": 1, "ceil_mode": True}),
    ("AvgPool2d", (3,), {}), ("AvgPool1d", (2,), {}), ("AvgPool3d", (2,), {"divisor_override": 3}),
    ("AvgPool2d", ((2, 3), 1, 1, True, False, 2), {}),
    ("MaxUnpool2d", (2,), {}), ("MaxUnpool1d", (2, 1, 0), {}), ("MaxUnpool3d", (3, 2), {}),
    ("AdaptiveAvgPool2d", ((3, None),), {}), ("AdaptiveAvgPool1d", (4,), {}), ("AdaptiveAvgPool3d", (2,), {}),
    ("AdaptiveMaxPool1d", (3, True), {}), ("AdaptiveMaxPool2d", ((2, 3),), {}), ("AdaptiveMaxPool3d", (1,), {}),
    ("LPPool2d", (2, 3), {}), ("LPPool1d", (1.5, 2, 1), {}), ("LPPool3d", (2, 2), {"ceil_mode": True}),
    ("Upsample", (), {"scale_factor": 2}), ("Upsample", (), {"size": (3, 4), "mode": "bilinear", "align_corners": True}),
    ("Upsample", (), {"scale_factor": (2, 3), "mode": "bicubic"}),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}), ("UpsamplingBilinear2d", (), {"size": 4}),
    ("PixelShuffle", (2,), {}), ("PixelUnshuffle", (3,), {}), ("ChannelShuffle", (2,), {}),
]


@pytest.mark.parametrize("name,args,kw", MODULES)
def test_module_repr(name, args, kw):
    assert repr(getattr(enn, name)(*args, **kw)) == repr(getattr(tnn, name)(*args, **kw))


@pytest.mark.parametrize("name,args,shape", [
    ("MaxPool2d", (3, 2, 1), (2, 3, 8, 8)), ("AvgPool1d", (3, 2, 1), (2, 3, 9)), ("AdaptiveMaxPool2d", ((2, 3),),
                                                                                   (2, 3, 8, 7)),
    ("AdaptiveAvgPool3d", (2,), (1, 2, 5, 4, 3)), ("LPPool2d", (2, 2), (2, 3, 6, 6)),
    ("Upsample", (None, 2, "bilinear"), (2, 3, 4, 5)), ("PixelShuffle", (2,), (2, 8, 3, 3)),
    ("ChannelShuffle", (2,), (2, 4, 3, 3))])
def test_module_forward(name, args, shape):
    x = np.abs(_distinct(shape)) + 0.1
    _run(getattr(enn, name)(*args), getattr(tnn, name)(*args), x)


ERRORS = [
    lambda F, x: F.max_pool2d(x[0, 0], 2),
    lambda F, x: F.max_pool2d(x, 2, padding=2),
    lambda F, x: F.max_pool2d(x, 9),
    lambda F, x: F.avg_pool2d(x, 9),
    lambda F, x: F.avg_pool2d(x, 2, padding=2),
    lambda F, x: F.max_pool2d(x, 2, stride=0),
    lambda F, x: F.max_pool2d(x, (2, 2, 2)),
    lambda F, x: F.adaptive_avg_pool2d(x[0, 0, 0], 2),
    lambda F, x: F.adaptive_max_pool2d(x, (2, 2, 2)),
    lambda F, x: F.interpolate(x, scale_factor=2, mode="linear"),
    lambda F, x: F.interpolate(x, scale_factor=2, align_corners=True),
    lambda F, x: F.interpolate(x, mode="nearest"),
    lambda F, x: F.interpolate(x, size=3, scale_factor=2),
    lambda F, x: F.interpolate(x, size=(3, 3, 3)),
    lambda F, x: F.interpolate(x, scale_factor=2, mode="foo"),
    lambda F, x: F.interpolate(x, size=3, recompute_scale_factor=True),
    lambda F, x: F.pixel_shuffle(x, 3),
    lambda F, x: F.pixel_unshuffle(x, 3),
    lambda F, x: F.pixel_shuffle(x[0, 0], 2),
    lambda F, x: F.channel_shuffle(x, 2),
    lambda F, x: F.grid_sample(x, x, mode="foo"),
    lambda F, x: F.grid_sample(x, x, padding_mode="foo"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    x = np.random.default_rng(0).normal(size=(2, 3, 8, 8))
    with pytest.raises(Exception) as te:
        ERRORS[case](TF, torch.tensor(x))
    with pytest.raises(type(te.value)) as ee:
        ERRORS[case](EF, ember.tensor(x))
    assert str(ee.value) == str(te.value)
