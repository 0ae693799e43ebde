"""Convolution, transposed convolution, unfold/fold: forward against a direct NumPy reference, gradients, modules."""
import itertools
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


# ---------------- direct references (loops over output positions) ----------------
def _tup(v, d):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * d


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    d = x.ndim - 2
    s, dil = _tup(stride, d), _tup(dilation, d)
    k = w.shape[2:]
    if padding == "same":
        tot = [dd * (kk - 1) for dd, kk in zip(dil, k)]
        widths = [(t // 2, t - t // 2) for t in tot]
    else:
        widths = [(p, p) for p in _tup(padding, d)]
    xp = np.pad(x, [(0, 0), (0, 0)] + widths)
    n, cin = x.shape[:2]
    cout = w.shape[0]
    cg, og = cin // groups, cout // groups
    osz = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(d)]
    y = np.zeros((n, cout, *osz))
    for o in itertools.product(*[range(m) for m in osz]):
        sl = tuple(slice(o[i] * s[i], o[i] * s[i] + dil[i] * (k[i] - 1) + 1, dil[i]) for i in range(d))
        patch = xp[(slice(None), slice(None)) + sl]  # (N, Cin, *K)
        for g in range(groups):
            pg = patch[:, g * cg:(g + 1) * cg].reshape(n, -1)
            wg = w[g * og:(g + 1) * og].reshape(og, -1)
            y[(slice(None), slice(g * og, (g + 1) * og)) + o] = pg @ wg.T
    if b is not None:
        y += b.reshape((-1,) + (1,) * d)
    return y


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    d = x.ndim - 2
    s, p, op, dil = _tup(stride, d), _tup(padding, d), _tup(output_padding, d), _tup(dilation, d)
    k = w.shape[2:]
    n, cin = x.shape[:2]
    cg, og = cin // groups, w.shape[1]
    full = [(x.shape[2 + i] - 1) * s[i] + dil[i] * (k[i] - 1) + 1 + op[i] for i in range(d)]
    y = np.zeros((n, og * groups, *full))
    for i in itertools.product(*[range(m) for m in x.shape[2:]]):
        for kk in itertools.product(*[range(m) for m in k]):
            pos = tuple(i[j] * s[j] + kk[j] * dil[j] for j in range(d))
            for g in range(groups):
                xv = x[(slice(None), slice(g * cg, (g + 1) * cg)) + i]  # (N, Cg)
                wv = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]  # (Cg, Og)
                y[(slice(None), slice(g * og, (g + 1) * og)) + pos] += xv @ wv
    crop = tuple(slice(p[j], p[j] + (x.shape[2 + j] - 1) * s[j] - 2 * p[j] + dil[j] * (k[j] - 1) + op[j] + 1)
                 for j in range(d))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * d)
    return y


def ref_unfold(x, k, dilation=1, padding=0, stride=1):
    k = _tup(k, 2)
    c = x.shape[1]
    w = np.eye(c * k[0] * k[1]).reshape(c * k[0] * k[1], c, *k)
    y = ref_conv(x, w, None, stride, padding, dilation)
    return y.reshape(x.shape[0], y.shape[1], -1)


def ref_fold(x, size, k, dilation=1, padding=0, stride=1):
    k = _tup(k, 2)
    n, ck, _ = x.shape
    c = ck // (k[0] * k[1])
    s, p, dil = _tup(stride, 2), _tup(padding, 2), _tup(dilation, 2)
    osz = [(size[i] + 2 * p[i] - dil[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    cols = x.reshape(n, c, k[0], k[1], *osz)
    out = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]))
    for i, j in itertools.product(range(k[0]), range(k[1])):
        out[:, :, i * dil[0]:i * dil[0] + (osz[0] - 1) * s[0] + 1:s[0],
            j * dil[1]:j * dil[1] + (osz[1] - 1) * s[1] + 1:s[1]] += cols[:, :, i, j]
    return out[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


def _r(*shape):
    return lambda rng: rng.standard_normal(shape)


def _ins(*shapes):
    return lambda rng: [rng.standard_normal(s) for s in shapes]


SPECS = [
    OpSpec("conv1d", lambda x, w, b: F.conv1d(x, w, b), ref_conv, _ins((2, 3, 7), (4, 3, 3), (4,)), gradgrad=True),
    OpSpec("conv1d_stride_pad_dil", lambda x, w: F.conv1d(x, w, stride=2, padding=2, dilation=2),
           lambda x, w: ref_conv(x, w, None, 2, 2, 2), _ins((2, 3, 9), (4, 3, 3)), gradgrad=True),
    OpSpec("conv1d_same", lambda x, w: F.conv1d(x, w, padding="same"),
           lambda x, w: ref_conv(x, w, None, 1, "same"), _ins((2, 3, 6), (4, 3, 4))),
    OpSpec("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), lambda x, w, b: ref_conv(x, w, b, 1, 1),
           _ins((2, 3, 5, 6), (4, 3, 3, 3), (4,)), gradgrad=True),
    OpSpec("conv2d_all", lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
           lambda x, w, b: ref_conv(x, w, b, (2, 1), (1, 2), (1, 2), 2), _ins((2, 4, 6, 7), (6, 2, 3, 2), (6,)),
           gradgrad=True),
    # Cout <= Cin at stride 1: the input gradient is a conv with the flipped kernel
    OpSpec("conv2d_narrowing", lambda x, w: F.conv2d(x, w, padding=(1, 2), dilation=(1, 2), groups=2),
           lambda x, w: ref_conv(x, w, None, 1, (1, 2), (1, 2), 2), _ins((2, 6, 5, 5), (4, 3, 3, 2)), gradgrad=True),
    OpSpec("conv_transpose1d_widening", lambda x, w: F.conv_transpose1d(x, w, padding=1),
           lambda x, w: ref_conv_transpose(x, w, None, 1, 1), _ins((2, 3, 6), (3, 5, 3)), gradgrad=True),
    # padding > dilation*(k-1): the input gradient takes the col2im path even at stride 1
    OpSpec("conv2d_wide_pad", lambda x, w: F.conv2d(x, w, padding=(3, 1), groups=2),
           lambda x, w: ref_conv(x, w, None, 1, (3, 1), 1, 2), _ins((1, 4, 4, 3), (2, 2, 3, 2)), gradgrad=True),
    OpSpec("conv_transpose2d_stride1", lambda x, w: F.conv_transpose2d(x, w, padding=1, dilation=(2, 1), groups=2),
           lambda x, w: ref_conv_transpose(x, w, None, 1, 1, 0, 2, (2, 1)), _ins((2, 4, 4, 5), (4, 1, 3, 2)),
           gradgrad=True),
    OpSpec("conv2d_valid", lambda x, w: F.conv2d(x, w, padding="valid"), lambda x, w: ref_conv(x, w),
           _ins((1, 2, 4, 5), (3, 2, 2, 2))),
    OpSpec("conv2d_same_dil", lambda x, w: F.conv2d(x, w, padding="same", dilation=2),
           lambda x, w: ref_conv(x, w, None, 1, "same", 2), _ins((2, 2, 6, 5), (3, 2, 3, 2))),
    OpSpec("conv2d_depthwise", lambda x, w: F.conv2d(x, w, groups=3, stride=2),
           lambda x, w: ref_conv(x, w, None, 2, 0, 1, 3), _ins((2, 3, 7, 6), (6, 1, 3, 3))),
    OpSpec("conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=2, padding=1),
           lambda x, w, b: ref_conv(x, w, b, 2, 1), _ins((1, 2, 4, 5, 3), (3, 2, 2, 3, 2), (3,))),
    OpSpec("conv_transpose1d", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
           lambda x, w, b: ref_conv_transpose(x, w, b, 3, 1, 2), _ins((2, 3, 4), (3, 2, 3), (2,)), gradgrad=True),
    OpSpec("conv_transpose2d",
           lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                              groups=2, dilation=(1, 2)),
           lambda x, w, b: ref_conv_transpose(x, w, b, (2, 3), (1, 0), (1, 2), 2, (1, 2)),
           _ins((2, 4, 3, 3), (4, 3, 3, 2), (6,)), gradgrad=True),
    OpSpec("conv_transpose3d", lambda x, w: F.conv_transpose3d(x, w, stride=2),
           lambda x, w: ref_conv_transpose(x, w, None, 2), _ins((1, 2, 2, 3, 2), (2, 3, 2, 2, 2))),
    OpSpec("unfold", lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
           lambda x: ref_unfold(x, (2, 3), (1, 2), (1, 1), (2, 1)), _ins((2, 3, 5, 6)), gradgrad=True),
    OpSpec("fold", lambda x: F.fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
           lambda x: ref_fold(x, (5, 6), (2, 3), (1, 2), (1, 1), (2, 1)), _ins((2, 18, 12)), gradgrad=True),
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


def test_unbatched_input_and_dtype():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((3, 5, 5)).astype(np.float32), rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    y = F.conv2d(ember.tensor(x), ember.tensor(w))
    assert y.shape == (2, 3, 3) and y.dtype == ember.float32
    assert_close(y, ref_conv(x[None], w)[0], atol=1e-5, rtol=1e-4)


def test_grad_fn_name():
    x = ember.randn(1, 2, 4, 4, requires_grad=True)
    assert F.conv2d(x, ember.randn(3, 2, 3, 3)).grad_fn.name() == "ConvolutionBackward0"


def test_unfold_fold_roundtrip_counts_overlaps():
    x = ember.ones(1, 2, 4, 4)
    y = F.fold(F.unfold(x, 2, stride=1), (4, 4), 2, stride=1)
    counts = np.array([1, 2, 2, 1])
    assert_close(y, np.broadcast_to(np.outer(counts, counts), (1, 2, 4, 4)))


@pytest.mark.parametrize("call, msg", [
    (lambda: F.conv2d(ember.randn(1, 4, 28, 28), ember.randn(8, 3, 3, 3)),
     ("Given groups=1, weight of size [8, 3, 3, 3], expected input[1, 4, 28, 28] to have 3 channels, but got 4 "
     "channels instead")),
    (lambda: F.conv2d(ember.randn(1, 3, 2, 2), ember.randn(8, 3, 3, 3)),
     ("Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than "
     "actual input size")),
    (lambda: F.conv2d(ember.randn(3, 2), ember.randn(8, 3, 3, 3)),
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [3, 2]"),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(8, 3, 3, 3), ember.randn(3)),
     ("Given weight of size [8, 3, 3, 3], expected bias to be 1-dimensional with 8 elements, but got bias of size "
     "[3] instead")),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(8, 3, 3, 3), stride=(1, 2, 3)),
     ("expected stride to be a single integer value or a list of 2 values to match the convolution dimensions, but "
     "got stride=[1, 2, 3]")),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(8, 3, 3, 3), padding=-1),
     "negative padding is not supported"),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(8, 3, 3, 3), stride=0),
     "non-positive stride is not supported"),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(8, 3, 3, 3), padding="same", stride=2),
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5), ember.randn(8, 3, 3, 3), padding="foo"),
     "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5, dtype=ember.float64), ember.randn(8, 3, 3, 3)),
     "expected scalar type Double but found Float"),
    # a double input through a float layer with bias: torch compares the bias first
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5, dtype=ember.float64), ember.randn(8, 3, 3, 3), ember.randn(8)),
     "Input type (double) and bias type (float) should be the same"),
    (lambda: F.conv1d(ember.randn(1, 3, 5), ember.randn(8, 3, 3).half(), ember.randn(8).half()),
     "Input type (float) and bias type (c10::Half) should be the same"),
    (lambda: F.conv2d(ember.randn(1, 3, 5, 5, dtype=ember.float64), ember.randn(8, 3, 3, 3), ember.randn(8),
                      padding="same"),
     "expected scalar type Double but found Float"),
    (lambda: F.conv2d(ember.randn(1, 4, 5, 5), ember.randn(9, 2, 3, 3), groups=2),
     ("Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [[9, 2, 3, 3]] "
     "instead")),
    (lambda: F.conv_transpose2d(ember.randn(1, 4, 5, 5), ember.randn(3, 2, 3, 3)),
     ("Given transposed=1, weight of size [3, 2, 3, 3], expected input[1, 4, 5, 5] to have 3 channels, but got 4 "
     "channels instead")),
    (lambda: F.conv_transpose2d(ember.randn(1, 4, 5, 5), ember.randn(4, 2, 3, 3), stride=2, output_padding=2),
     ("output padding must be smaller than either stride or dilation, but got output_padding_height: 2 "
     "output_padding_width: 2 stride_height: 2 stride_width: 2 dilation_height: 1 dilation_width: 1")),
    (lambda: F.conv_transpose2d(ember.randn(1, 4, 1, 1), ember.randn(4, 2, 1, 1), padding=1),
     ("Given input size per channel: (1 x 1). Calculated output size per channel: (-1 x -1). Output size is too "
     "small")),
    (lambda: F.unfold(ember.randn(1, 4, 2, 2), 3),
     ("Given input with spatial size (2, 2), kernel_size=(3, 3), dilation=(1, 1), padding=(0, 0), calculated shape "
     "of the array of sliding blocks as (0, 0), but its components must be at least one.")),
    (lambda: F.fold(ember.randn(1, 9, 4), (3, 3), 2),
     ("Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
     "input.size(1)=9 and kernel_size=(2, 2).")),
])
def test_errors(call, msg):
    with pytest.raises(RuntimeError) as e:
        call()
    assert str(e.value) == msg


# ---------------- modules ----------------
def test_conv2d_module_init_and_forward():
    ember.manual_seed(0)
    m = nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2)
    assert m.weight.shape == (6, 2, 3, 3) and m.bias.shape == (6,)
    bound = 1 / math.sqrt(2 * 9)
    assert m.weight.abs().max().item() <= bound and m.bias.abs().max().item() <= bound
    assert m.kernel_size == (3, 3) and m.stride == (2, 2) and m.padding == (1, 1)
    x = ember.randn(2, 4, 7, 7)
    y = m(x)
    assert_close(y, ref_conv(x.numpy(), m.weight.detach().numpy(), m.bias.detach().numpy(), 2, 1, 1, 2),
                 atol=1e-5, rtol=1e-4)
    y.sum().backward()
    assert m.weight.grad.shape == m.weight.shape and m.bias.grad.shape == (6,)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv_padding_mode(mode):
    m = nn.Conv1d(2, 3, 3, padding=2, padding_mode=mode, bias=False).double()
    x = ember.randn(1, 2, 5, dtype=ember.float64)
    xp = np.pad(x.numpy(), [(0, 0), (0, 0), (2, 2)], mode={"reflect": "reflect", "replicate": "edge",
                                                           "circular": "wrap"}[mode])
    assert_close(m(x), ref_conv(xp, m.weight.detach().numpy()))


def test_conv_transpose_module_output_size():
    m = nn.ConvTranspose2d(3, 4, 3, stride=2)
    x = ember.randn(2, 3, 5, 5)
    assert m(x).shape == (2, 4, 11, 11)
    assert m(x, output_size=(12, 12)).shape == (2, 4, 12, 12)
    assert m(x, output_size=[2, 4, 12, 11]).shape == (2, 4, 12, 11)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(x, output_size=(14, 14))


def test_module_constructor_errors():
    with pytest.raises(ValueError, match="groups must be a positive integer"):
        nn.Conv2d(2, 2, 3, groups=0)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 2, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(2, 3, 3, groups=2)
    with pytest.raises(ValueError, match="Invalid padding string 'foo'"):
        nn.Conv2d(2, 3, 3, padding="foo")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(2, 3, 3, padding_mode="bad")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect")


def test_reprs():
    assert repr(nn.Conv1d(3, 6, 3, groups=3)) == "Conv1d(3, 6, kernel_size=(3,), stride=(1,), groups=3)"
    assert repr(nn.Conv2d(3, 4, 3, padding="same", padding_mode="reflect", bias=False)) == (
        "Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, bias=False, padding_mode=reflect)")
    assert repr(nn.ConvTranspose2d(3, 4, 3, output_padding=1, stride=2, dilation=2)) == (
        "ConvTranspose2d(3, 4, kernel_size=(3, 3), stride=(2, 2), dilation=(2, 2), output_padding=(1, 1))")
    assert repr(nn.Fold(3, 2)) == "Fold(output_size=3, kernel_size=2, dilation=1, padding=0, stride=1)"
    assert repr(nn.Unfold((2, 3))) == "Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1)"


def test_fold_unfold_modules():
    x = ember.randn(2, 3, 4, 5)
    u = nn.Unfold(2, padding=1)(x)
    assert_close(u, ref_unfold(x.numpy(), 2, 1, 1, 1), atol=1e-6)
    assert_close(nn.Fold((4, 5), 2, padding=1)(u), ref_fold(u.numpy(), (4, 5), 2, 1, 1, 1), atol=1e-5)


def test_empty_batch():
    x = ember.zeros(0, 4, 5, 5, requires_grad=True)
    w = ember.randn(6, 2, 3, 3, requires_grad=True)
    y = F.conv2d(x, w, groups=2)
    assert y.shape == (0, 6, 3, 3)
    y.sum().backward()
    assert_close(w.grad, np.zeros((6, 2, 3, 3)))
    assert F.conv_transpose2d(ember.zeros(0, 4, 5, 5), ember.randn(4, 3, 3, 3), groups=2).shape == (0, 6, 7, 7)


def test_integer_conv_is_exact():
    rng = np.random.default_rng(0)
    x, w = rng.integers(-5, 5, (2, 3, 5, 5)), rng.integers(-5, 5, (4, 3, 3, 3))
    y = F.conv2d(ember.tensor(x), ember.tensor(w), padding=1)
    assert y.dtype == ember.int64
    assert_close(y, ref_conv(x, w, None, 1, 1).astype(np.int64))


def test_non_contiguous_input():
    rng = np.random.default_rng(2)
    a, w = rng.standard_normal((2, 9, 8, 3)), rng.standard_normal((4, 3, 3, 3))
    x = ember.tensor(a).permute(0, 3, 1, 2)[:, :, 1:7]
    assert_close(F.conv2d(x, ember.tensor(w)), ref_conv(a.transpose(0, 3, 1, 2)[:, :, 1:7], w))


# ---------------- fast paths: the flat-grid stride-1 kernels against the im2col kernels ----------------
GRID_CASES = [
    ("conv2d", (2, 4, 6, 5), (6, 4, 3, 3), {"padding": 1}),
    ("conv2d", (2, 4, 5, 5), (6, 2, 3, 2), {"padding": "same", "dilation": (2, 1), "groups": 2}),
    ("conv2d", (3, 4, 4, 6), (5, 4, 1, 1), {}),
    ("conv2d", (2, 3, 4, 4), (4, 3, 1, 1), {"padding": 1}),  # the grid is larger than input + padding
    ("conv1d", (2, 3, 9), (4, 3, 4), {"padding": 2}),
    ("conv3d", (1, 2, 4, 3, 5), (3, 2, 2, 3, 2), {"padding": 1}),
    ("conv_transpose2d", (2, 4, 5, 4), (4, 3, 3, 3), {"padding": 1}),
    ("conv_transpose2d", (2, 4, 5, 4), (4, 2, 3, 2),
     {"padding": (2, 1), "output_padding": 1, "dilation": 2, "groups": 2}),
]


def _conv_all_grads(fn, xa, wa, kw, need):
    x = ember.tensor(xa, requires_grad=need[0])
    w = ember.tensor(wa, requires_grad=need[1])
    y = getattr(F, fn)(x, w, **kw)
    g = ember.tensor(np.random.default_rng(5).standard_normal(tuple(y.shape)))
    y.backward(g)
    return [y.detach().numpy()] + [t.grad.numpy() for t, n in zip((x, w), need) if n]


@pytest.mark.parametrize("case", GRID_CASES, ids=lambda c: f"{c[0]}{c[1]}{c[3]}")
@pytest.mark.parametrize("need", [(True, True), (True, False), (False, True)])
def test_grid_path_matches_im2col_path(monkeypatch, case, need):
    from ember.nn._functional import conv as conv_mod
    fn, xs, ws, kw = case
    rng = np.random.default_rng(3)
    xa, wa = rng.standard_normal(xs), rng.standard_normal(ws)
    fast = _conv_all_grads(fn, xa, wa, kw, need)
    monkeypatch.setattr(conv_mod, "_GRID_WASTE", 0)  # every conv takes the im2col kernels
    slow = _conv_all_grads(fn, xa, wa, kw, need)
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a, b, atol=1e-10, rtol=1e-10)


def test_weight_grad_without_saved_columns(monkeypatch):
    from ember.nn._functional import conv as conv_mod
    rng = np.random.default_rng(4)
    xa, wa = rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3))
    for kw in ({"padding": 1}, {"stride": 2, "padding": 1}):
        kept = _conv_all_grads("conv2d", xa, wa, kw, (True, True))
        monkeypatch.setattr(conv_mod, "_SAVE_BYTES", 0)
        dropped = _conv_all_grads("conv2d", xa, wa, kw, (True, True))
        monkeypatch.undo()
        for a, b in zip(kept, dropped):
            np.testing.assert_allclose(a, b, atol=1e-10, rtol=1e-10)


def test_grid_path_gradgradcheck_1x1_and_groups():
    rng = np.random.default_rng(6)
    for xs, ws, kw in [((2, 4, 3, 3), (2, 4, 1, 1), {}), ((1, 4, 4, 3), (4, 2, 3, 3), {"padding": 1, "groups": 2})]:
        x = ember.tensor(rng.standard_normal(xs), requires_grad=True)
        w = ember.tensor(rng.standard_normal(ws), requires_grad=True)
        assert ember.autograd.gradgradcheck(lambda a, b, kw=kw: F.conv2d(a, b, **kw), (x, w))


PHASE_CASES = [
    ("conv2d", (2, 4, 7, 6), (6, 4, 3, 3), {"stride": 2, "padding": 1}),
    ("conv2d", (2, 4, 7, 8), (6, 2, 3, 2), {"stride": (3, 2), "padding": (1, 0), "groups": 2}),
    ("conv2d", (2, 3, 6, 6), (4, 3, 1, 1), {"stride": 2}),  # phases without a kernel tap get no gradient
    ("conv1d", (2, 3, 11), (4, 3, 5), {"stride": 3, "padding": 2}),
    ("conv3d", (1, 2, 5, 4, 6), (3, 2, 3, 2, 3), {"stride": (2, 1, 2), "padding": 1}),
    ("conv_transpose2d", (2, 4, 3, 4), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    ("conv_transpose1d", (2, 4, 5), (4, 2, 4), {"stride": 3, "padding": 2, "output_padding": 1, "groups": 2}),
]


@pytest.mark.parametrize("case", PHASE_CASES, ids=lambda c: f"{c[0]}{c[1]}{c[3]}")
def test_strided_input_grad_phases_match_col2im(monkeypatch, case):
    from ember.nn._functional import conv as conv_mod
    fn, xs, ws, kw = case
    rng = np.random.default_rng(7)
    xa, wa = rng.standard_normal(xs), rng.standard_normal(ws)
    fast = _conv_all_grads(fn, xa, wa, kw, (True, True))
    monkeypatch.setattr(conv_mod, "_PHASES", False)
    slow = _conv_all_grads(fn, xa, wa, kw, (True, True))
    for a, b in zip(fast, slow):
        np.testing.assert_allclose(a, b, atol=1e-10, rtol=1e-10)
    x = ember.tensor(xa, requires_grad=True)
    w = ember.tensor(wa, requires_grad=True)
    monkeypatch.undo()
    assert ember.autograd.gradgradcheck(lambda a, b: getattr(F, fn)(a, b, **kw), (x, w))


def test_unfold_of_an_empty_batch():
    assert F.unfold(ember.randn(0, 2, 4, 4), 2).shape == (0, 8, 9)
