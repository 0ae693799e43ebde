"""F.pad and the padding modules: forward against np.pad, gradients, errors, reprs."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad

_NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def ref_pad(x, pad, mode="constant", value=0.0):
    """np.pad with torch's pad order (last dim first); negative constant pads crop."""
    nd = len(pad) // 2
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(nd)][::-1]
    crop = tuple(slice(max(-lo, 0), x.shape[x.ndim - nd + j] - max(-hi, 0)) for j, (lo, hi) in enumerate(pairs))
    x = x[(Ellipsis,) + crop]
    widths = [(0, 0)] * (x.ndim - nd) + [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode=_NP_MODE[mode])


def _r(*shape):
    return lambda rng: [rng.standard_normal(shape)]


SPECS = [
    OpSpec("constant_1d", lambda x: F.pad(x, (1, 2), value=1.5), lambda x: ref_pad(x, (1, 2), value=1.5),
           _r(2, 3, 4), gradgrad=True),
    OpSpec("constant_crop", lambda x: F.pad(x, (1, -2, 0, 1)), lambda x: ref_pad(x, (1, -2, 0, 1)), _r(2, 3, 4)),
    OpSpec("constant_3d", lambda x: F.pad(x, (1, 2, 2, 0, 0, 1)), lambda x: ref_pad(x, (1, 2, 2, 0, 0, 1)),
           _r(2, 3, 4, 2)),
]
for _mode in ("reflect", "replicate", "circular"):
    SPECS += [
        OpSpec(f"{_mode}_1d", lambda x, m=_mode: F.pad(x, (2, 3), m), lambda x, m=_mode: ref_pad(x, (2, 3), m),
               _r(2, 3, 5), gradgrad=True),
        OpSpec(f"{_mode}_2d", lambda x, m=_mode: F.pad(x, (2, 1, 1, 0), m),
               lambda x, m=_mode: ref_pad(x, (2, 1, 1, 0), m), _r(2, 3, 4, 5), gradgrad=True),
        OpSpec(f"{_mode}_3d_unbatched", lambda x, m=_mode: F.pad(x, (1, 1, 2, 0, 0, 1), m),
               lambda x, m=_mode: ref_pad(x, (1, 1, 2, 0, 0, 1), m), _r(2, 3, 4, 4)),
    ]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_negative_pads_in_modes():
    x = ember.arange(5.0).reshape(1, 1, 5)
    assert_close(F.pad(x, (-1, 2), "circular"), [[[1.0, 2, 3, 4, 1, 2]]])
    assert_close(F.pad(x, (-1, 2), "reflect"), [[[1.0, 2, 3, 4, 3, 2]]])
    assert_close(F.pad(x, (-1, 2), "replicate"), [[[1.0, 2, 3, 4, 4, 4]]])


def test_reflect_gradient_accumulates_on_mirrored_elements():
    x = ember.zeros(1, 1, 3, requires_grad=True)
    F.pad(x, (2, 2), "reflect").sum().backward()
    assert_close(x.grad, [[[2.0, 3.0, 2.0]]])


def test_integer_constant_pad_keeps_dtype():
    y = F.pad(ember.ones(2, 3, dtype=ember.int64), (1, 1), value=2.7)
    assert y.dtype == ember.int64
    assert_close(y, np.array([[2, 1, 1, 1, 2]] * 2))


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: F.pad(ember.randn(3), (1, 1), mode="reflect"), NotImplementedError,
     "Padding size 2 is not supported for 1D input tensor."),
    (lambda: F.pad(ember.randn(1, 1, 3), (3, 3), mode="reflect"), RuntimeError,
     ("Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, 3) at "
     "dimension 2 of input [1, 1, 3]")),
    (lambda: F.pad(ember.randn(1, 1, 3), (4, 3), mode="circular"), RuntimeError,
     "Padding value causes wrapping around more than once."),
    (lambda: F.pad(ember.randn(1, 3, 3), (1,)), RuntimeError, "Padding length must be divisible by 2"),
    (lambda: F.pad(ember.randn(1, 3, 3), (1,) * 8), RuntimeError,
     ("Padding length should be less than or equal to two times the input dimension but got padding length 8 and "
     "input of dimension 3")),
    (lambda: F.pad(ember.randn(1, 3, 3), (1, 1), mode="foo"), NotImplementedError, "Unrecognised padding mode foo"),
    (lambda: F.pad(ember.randn(1, 1, 3), (1, 1), mode="replicate", value=2), RuntimeError,
     'Padding mode "replicate" doesn\'t take in value argument'),
    (lambda: F.pad(ember.randn(1, 3, 3), (-5, 1)), RuntimeError, "narrow(): length must be non-negative."),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc) as e:
        call()
    assert str(e.value).split("\n")[0] == msg


@pytest.mark.parametrize("cls, arg, expected", [
    (nn.ZeroPad1d, 2, "ZeroPad1d((2, 2))"),
    (nn.ZeroPad2d, 2, "ZeroPad2d((2, 2, 2, 2))"),
    (nn.ZeroPad3d, (1, 2, 3, 4, 5, 6), "ZeroPad3d((1, 2, 3, 4, 5, 6))"),
    (nn.ReflectionPad2d, 2, "ReflectionPad2d((2, 2, 2, 2))"),
    (nn.ReplicationPad3d, 1, "ReplicationPad3d((1, 1, 1, 1, 1, 1))"),
    (nn.CircularPad1d, (1, 2), "CircularPad1d((1, 2))"),
])
def test_module_reprs(cls, arg, expected):
    assert repr(cls(arg)) == expected


def test_constant_pad_modules():
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    x = ember.randn(2, 3, 4)
    assert_close(nn.ConstantPad2d((1, 0, 2, 1), -1.0)(x), ref_pad(x.numpy(), (1, 0, 2, 1), value=-1.0))
    assert_close(nn.ZeroPad1d(1)(x), ref_pad(x.numpy(), (1, 1)))


@pytest.mark.parametrize("mode, classes", [
    ("reflect", (nn.ReflectionPad1d, nn.ReflectionPad2d, nn.ReflectionPad3d)),
    ("replicate", (nn.ReplicationPad1d, nn.ReplicationPad2d, nn.ReplicationPad3d)),
    ("circular", (nn.CircularPad1d, nn.CircularPad2d, nn.CircularPad3d)),
])
def test_mode_pad_modules(mode, classes):
    for d, cls in enumerate(classes, 1):
        x = ember.randn(2, 3, *(4,) * d)
        assert_close(cls(1)(x), ref_pad(x.numpy(), (1, 1) * d, mode))
