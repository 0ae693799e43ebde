"""Convolution, fold/unfold and padding against real PyTorch: values, dtypes, gradients, reprs and errors."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn.functional as TF

import ember
import ember.nn.functional as F
from ember import nn


def _run(fe, ft, shapes, dtype=np.float64, seed=0, **kw):
    """Forward and all input gradients of fe (ember) and ft (torch) on the same random inputs."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    xe = [ember.tensor(a, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about padding='same' with even kernels
        ye, yt = fe(*xe, **kw), ft(*xt, **kw)
    assert ye.shape == tuple(yt.shape)
    assert str(ye.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    tol = 1e-10 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=tol, rtol=tol)
    g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    for a, b in zip(xe, xt):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=tol, rtol=tol)


CONV = [
    ("conv1d", [(2, 4, 9), (6, 4, 3), (6,)], {"stride": 2, "padding": 1}),
    ("conv1d", [(2, 4, 9), (6, 4, 3)], {"padding": "same", "dilation": 2}),
    ("conv1d", [(4, 9), (6, 2, 3)], {"groups": 2, "padding": "valid"}),
    ("conv2d", [(2, 4, 7, 8), (6, 2, 3, 2), (6,)], {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2), "groups": 2}),
    ("conv2d", [(2, 4, 9, 6), (6, 4, 4, 3)], {"padding": "same"}),
    ("conv2d", [(3, 3, 8, 8), (6, 1, 3, 3), (6,)], {"groups": 3, "stride": 3}),
    ("conv2d", [(3, 7, 8), (5, 3, 2, 2)], {}),
    ("conv3d", [(2, 2, 5, 6, 4), (3, 2, 2, 3, 2), (3,)], {"stride": 2, "padding": 1}),
    ("conv3d", [(1, 4, 4, 4, 4), (4, 2, 3, 3, 3)], {"padding": "same", "groups": 2, "dilation": (1, 2, 1)}),
    ("conv_transpose1d", [(2, 4, 5), (4, 3, 3)], {"stride": 3, "padding": 1, "output_padding": 2}),
    ("conv_transpose2d", [(2, 4, 5, 6), (4, 3, 3, 2), (6,)],
     {"stride": (2, 3), "padding": (1, 2), "output_padding": (1, 2), "groups": 2}),
    ("conv_transpose2d", [(2, 4, 5, 6), (4, 3, 3, 2), (6,)],
     {"stride": (2, 3), "padding": (0, 1), "output_padding": (1, 0), "groups": 2, "dilation": 2}),
    ("conv_transpose2d", [(4, 5, 6), (4, 3, 3, 3)], {}),
    ("conv_transpose3d", [(1, 2, 3, 4, 3), (2, 3, 2, 2, 3), (3,)], {"stride": 2, "padding": (0, 1, 0)}),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, shapes, kw", CONV)
def test_conv_matches_torch(name, shapes, kw, dtype):
    _run(getattr(F, name), getattr(TF, name), shapes, dtype, **kw)


@pytest.mark.parametrize("kw", [{"kernel_size": 2}, {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1,
                                                              "stride": (2, 1)}])
def test_unfold_fold_match_torch(kw):
    _run(F.unfold, TF.unfold, [(2, 3, 6, 7)], **kw)
    n = TF.unfold(torch.zeros(2, 3, 6, 7), **kw).shape
    _run(F.fold, TF.fold, [tuple(n)], output_size=(6, 7), **kw)


PAD = [
    ((2, 3, 4), (1, 2), "constant", 1.5),
    ((2, 3, 4), (1, -2, 0, 1), "constant", None),
    ((2, 3, 4, 5), (1, 2, 2, 0, -1, 1), "constant", None),
    ((2, 3, 5), (-1, 2), "reflect", None),
    ((2, 3, 5), (-1, 2), "replicate", None),
    ((2, 3, 5), (-1, 2), "circular", None),
]
for _m in ("reflect", "replicate", "circular"):
    PAD += [((2, 3, 5), (2, 3), _m, None), ((3, 5, 4), (2, 3, 1, 0), _m, None),
            ((2, 3, 5, 4, 4), (2, 3, 1, 0, 1, 3), _m, None), ((3, 4, 4, 4), (1, 1, 0, 2, 3, 1), _m, None)]


@pytest.mark.parametrize("shape, pad, mode, value", PAD)
def test_pad_matches_torch(shape, pad, mode, value):
    kw = {} if value is None else {"value": value}
    _run(lambda x: F.pad(x, pad, mode, **kw), lambda x: TF.pad(x, pad, mode, **kw), [shape])


def _copy_params(me, mt):
    for (_, pe), (_, pt) in zip(me.named_parameters(), mt.named_parameters()):
        pt.data = torch.from_numpy(pe.detach().numpy().copy())


@pytest.mark.parametrize("ctor", [
    lambda nn_: nn_.Conv1d(4, 6, 3, stride=2, padding=1, groups=2),
    lambda nn_: nn_.Conv2d(3, 4, 3, padding="same", padding_mode="reflect", bias=False),
    lambda nn_: nn_.Conv2d(3, 4, (3, 2), padding=2, padding_mode="circular", dilation=(2, 1)),
    lambda nn_: nn_.Conv2d(3, 4, 3, padding=1, padding_mode="replicate"),
    lambda nn_: nn_.Conv3d(2, 4, 2, stride=(1, 2, 1), padding="valid"),
    lambda nn_: nn_.ConvTranspose1d(4, 6, 3, stride=2, output_padding=1, groups=2),
    lambda nn_: nn_.ConvTranspose2d(3, 4, 3, output_padding=1, stride=2, dilation=2),
    lambda nn_: nn_.ConvTranspose3d(2, 2, 2, stride=2, bias=False),
])
def test_conv_modules_match_torch(ctor):
    me, mt = ctor(nn), ctor(torch.nn)
    assert repr(me) == repr(mt)
    assert [tuple(p.shape) for p in me.parameters()] == [tuple(p.shape) for p in mt.parameters()]
    _copy_params(me, mt)
    nd = len(mt.kernel_size)
    shape = (2, mt.in_channels) + (6,) * nd
    _run(me, mt, [shape], np.float32)


def test_conv_init_bounds_match_torch():
    # both draw U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias
    me, mt = nn.Conv2d(8, 16, 3), torch.nn.Conv2d(8, 16, 3)
    bound = 1 / np.sqrt(8 * 9)
    we, wt = np.abs(me.weight.detach().numpy()), np.abs(mt.weight.detach().numpy())
    assert wt.max() <= bound and bound * 0.98 < we.max() <= bound
    assert abs(we.mean() - wt.mean()) < 0.1 * bound
    assert float(me.bias.detach().abs().max()) <= bound


def test_conv_transpose_output_size_matches_torch():
    me, mt = nn.ConvTranspose2d(3, 4, 3, stride=3), torch.nn.ConvTranspose2d(3, 4, 3, stride=3)
    _copy_params(me, mt)
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 4)).astype(np.float32)
    ye, yt = me(ember.tensor(x), output_size=(13, 14)), mt(torch.tensor(x), output_size=(13, 14))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=1e-5)


@pytest.mark.parametrize("ctor", [
    lambda nn_: nn_.ZeroPad1d(2), lambda nn_: nn_.ZeroPad2d((1, 2, 3, 4)), lambda nn_: nn_.ZeroPad3d(1),
    lambda nn_: nn_.ConstantPad1d(2, 3.5), lambda nn_: nn_.ConstantPad2d(1, 0), lambda nn_: nn_.ConstantPad3d(1, -1.0),
    lambda nn_: nn_.ReflectionPad1d((1, 2)), lambda nn_: nn_.ReflectionPad2d(2), lambda nn_: nn_.ReflectionPad3d(1),
    lambda nn_: nn_.ReplicationPad1d(3), lambda nn_: nn_.ReplicationPad2d((1, 0, 2, 1)),
    lambda nn_: nn_.ReplicationPad3d(1), lambda nn_: nn_.CircularPad1d(2), lambda nn_: nn_.CircularPad2d(1),
    lambda nn_: nn_.CircularPad3d((1, 0, 1, 0, 0, 1)),
    lambda nn_: nn_.Fold((5, 6), 2), lambda nn_: nn_.Unfold((2, 3), padding=1),
])
def test_module_reprs_match_torch(ctor):
    assert repr(ctor(nn)) == repr(ctor(torch.nn))


@pytest.mark.parametrize("call", [
    lambda F_, t: F_.conv2d(t.randn(1, 4, 28, 28), t.randn(8, 3, 3, 3)),
    lambda F_, t: F_.conv2d(t.randn(1, 3, 2, 2), t.randn(8, 3, 3, 3)),
    lambda F_, t: F_.conv2d(t.randn(1, 3, 2), t.randn(8, 3, 3, 3)),
    lambda F_, t: F_.conv1d(t.randn(1, 3, 2, 2, 2), t.randn(8, 3, 3)),
    lambda F_, t: F_.conv2d(t.randn(1, 3, 5, 5), t.randn(8, 3, 3, 3), t.randn(3)),
    lambda F_, t: F_.conv3d(t.randn(1, 3, 5, 5, 5), t.randn(8, 3, 3, 3, 3), stride=(1, 2)),
    lambda F_, t: F_.conv2d(t.randn(1, 3, 5, 5), t.randn(8, 3, 3, 3), padding="same", stride=2),
    lambda F_, t: F_.conv2d(t.randn(1, 4, 5, 5), t.randn(9, 2, 3, 3), groups=2),
    lambda F_, t: F_.conv_transpose2d(t.randn(1, 4, 5, 5), t.randn(3, 2, 3, 3)),
    lambda F_, t: F_.conv_transpose2d(t.randn(1, 4, 1, 1), t.randn(4, 2, 1, 1), padding=1),
    lambda F_, t: F_.unfold(t.randn(1, 4, 2, 2), 3),
    lambda F_, t: F_.fold(t.randn(1, 8, 5), (3, 3), 2),
    lambda F_, t: F_.pad(t.randn(3), (1, 1), mode="reflect"),
    lambda F_, t: F_.pad(t.randn(1, 1, 3), (3, 3), mode="reflect"),
    lambda F_, t: F_.pad(t.randn(1, 1, 3), (4, 3), mode="circular"),
    lambda F_, t: F_.pad(t.randn(1, 3, 3), (1,)),
    lambda F_, t: F_.pad(t.randn(1, 3, 3), (1, 1), mode="foo"),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as et:
        call(TF, torch)
    with pytest.raises(Exception) as ee:
        call(F, ember)
    assert type(ee.value) is type(et.value)
    assert str(ee.value) == str(et.value)
