"""Pooling: forward against loop references, float64 gradcheck, gradgradcheck, modules, errors."""
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def distinct(*shape):
    """Inputs without ties, so max pooling is differentiable at the test point."""
    def make(rng):
        n = math.prod(shape)
        return [(rng.permutation(n).reshape(shape) / n - 0.5) * 4]
    return make


def _out_len(size, k, s, p, d, ceil):
    num = size + 2 * p - d * (k - 1) - 1
    o = (num + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= size + p:
        o -= 1
    return o


def ref_max_pool(x, k, s, p, d=None, ceil=False):
    """Loop reference: returns (values, flat in-plane indices)."""
    nd = len(k)
    d = d or (1,) * nd
    sp = x.shape[-nd:]
    outs = [_out_len(sp[i], k[i], s[i], p[i], d[i], ceil) for i in range(nd)]
    lead = x.shape[:-nd]
    val = np.zeros(lead + tuple(outs), x.dtype)
    idx = np.zeros(lead + tuple(outs), np.int64)
    for l in np.ndindex(*lead):
        for o in np.ndindex(*outs):
            best, where = -np.inf, -1
            for j in np.ndindex(*k):
                pos = [o[i] * s[i] - p[i] + j[i] * d[i] for i in range(nd)]
                if all(0 <= pos[i] < sp[i] for i in range(nd)) and x[l + tuple(pos)] > best:
                    best, where = x[l + tuple(pos)], np.ravel_multi_index(pos, sp)
            val[l + o], idx[l + o] = best, where
    return val, idx


def ref_avg_pool(x, k, s, p, ceil=False, count_include_pad=True, divisor_override=None):
    nd = len(k)
    sp = x.shape[-nd:]
    outs = [_out_len(sp[i], k[i], s[i], p[i], 1, ceil) for i in range(nd)]
    lead = x.shape[:-nd]
    out = np.zeros(lead + tuple(outs), x.dtype)
    for o in np.ndindex(*outs):
        start = [o[i] * s[i] - p[i] for i in range(nd)]
        end = [min(start[i] + k[i], sp[i] + p[i]) for i in range(nd)]
        pool = math.prod(end[i] - start[i] for i in range(nd))
        lo = [max(v, 0) for v in start]
        hi = [min(end[i], sp[i]) for i in range(nd)]
        win = x[(Ellipsis,) + tuple(slice(lo[i], hi[i]) for i in range(nd))]
        div = divisor_override or (pool if count_include_pad else math.prod(hi[i] - lo[i] for i in range(nd)))
        out[(Ellipsis,) + o] = win.sum(axis=tuple(range(-nd, 0))) / div
    return out


def ref_adaptive(x, outs, reduce):
    nd = len(outs)
    sp = x.shape[-nd:]
    out = np.zeros(x.shape[:-nd] + tuple(outs), x.dtype)
    for o in np.ndindex(*outs):
        sl = tuple(slice(o[i] * sp[i] // outs[i], -(-(o[i] + 1) * sp[i] // outs[i])) for i in range(nd))
        out[(Ellipsis,) + o] = reduce(x[(Ellipsis,) + sl], axis=tuple(range(-nd, 0)))
    return out


SPECS = [
    OpSpec("max_pool1d", lambda x: F.max_pool1d(x, 3), lambda x: ref_max_pool(x, (3,), (3,), (0,))[0],
           distinct(2, 3, 10)),
    OpSpec("max_pool1d_pad_dil_ceil", lambda x: F.max_pool1d(x, 2, 2, 1, 2, ceil_mode=True),
           lambda x: ref_max_pool(x, (2,), (2,), (1,), (2,), True)[0], distinct(3, 11)),
    OpSpec("max_pool2d", lambda x: F.max_pool2d(x, 2), lambda x: ref_max_pool(x, (2, 2), (2, 2), (0, 0))[0],
           distinct(2, 2, 6, 5), gradgrad=True),
    OpSpec("max_pool2d_overlap", lambda x: F.max_pool2d(x, 3, 1, 1),
           lambda x: ref_max_pool(x, (3, 3), (1, 1), (1, 1))[0], distinct(1, 2, 5, 5)),
    OpSpec("max_pool2d_rect_ceil", lambda x: F.max_pool2d(x, (3, 2), (2, 1), (1, 0), ceil_mode=True),
           lambda x: ref_max_pool(x, (3, 2), (2, 1), (1, 0), None, True)[0], distinct(2, 6, 5)),
    OpSpec("max_pool3d", lambda x: F.max_pool3d(x, 2, 1, 1, dilation=(1, 2, 1)),
           lambda x: ref_max_pool(x, (2, 2, 2), (1, 1, 1), (1, 1, 1), (1, 2, 1))[0], distinct(1, 2, 3, 5, 4)),
    OpSpec("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1), lambda x: ref_avg_pool(x, (3,), (2,), (1,)),
           distinct(2, 3, 9)),
    OpSpec("avg_pool1d_exclude_ceil", lambda x: F.avg_pool1d(x, 4, 3, 2, True, False),
           lambda x: ref_avg_pool(x, (4,), (3,), (2,), True, False), distinct(2, 10)),
    OpSpec("avg_pool2d", lambda x: F.avg_pool2d(x, 2), lambda x: ref_avg_pool(x, (2, 2), (2, 2), (0, 0)),
           distinct(2, 2, 6, 5), gradgrad=True),
    OpSpec("avg_pool2d_pad_ceil", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
           lambda x: ref_avg_pool(x, (3, 3), (2, 2), (1, 1), True), distinct(1, 2, 6, 7), gradgrad=True),
    OpSpec("avg_pool2d_exclude_pad", lambda x: F.avg_pool2d(x, (2, 3), 1, (1, 1), count_include_pad=False),
           lambda x: ref_avg_pool(x, (2, 3), (1, 1), (1, 1), False, False), distinct(2, 4, 5)),
    OpSpec("avg_pool2d_divisor", lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=4),
           lambda x: ref_avg_pool(x, (3, 3), (2, 2), (1, 1), divisor_override=4), distinct(1, 2, 6, 6)),
    OpSpec("avg_pool3d", lambda x: F.avg_pool3d(x, 2, (1, 2, 2), 1, count_include_pad=False),
           lambda x: ref_avg_pool(x, (2, 2, 2), (1, 2, 2), (1, 1, 1), False, False), distinct(1, 2, 3, 4, 5)),
    OpSpec("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 4),
           lambda x: ref_adaptive(x, (4,), np.mean), distinct(2, 3, 10)),
    OpSpec("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
           lambda x: ref_adaptive(x, (3, 4), np.mean), distinct(2, 2, 7, 6), gradgrad=True),
    OpSpec("adaptive_avg_pool2d_up", lambda x: F.adaptive_avg_pool2d(x, (5, None)),
           lambda x: ref_adaptive(x, (5, 3), np.mean), distinct(2, 3, 3)),
    OpSpec("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, 2),
           lambda x: ref_adaptive(x, (2, 2, 2), np.mean), distinct(1, 2, 3, 5, 4)),
    OpSpec("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 4),
           lambda x: ref_adaptive(x, (4,), np.max), distinct(2, 3, 10)),
    OpSpec("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 4)),
           lambda x: ref_adaptive(x, (3, 4), np.max), distinct(2, 2, 7, 6), gradgrad=True),
    OpSpec("adaptive_max_pool3d", lambda x: F.adaptive_max_pool3d(x, (2, 3, 1)),
           lambda x: ref_adaptive(x, (2, 3, 1), np.max), distinct(1, 2, 3, 5, 4)),
    OpSpec("lp_pool2d", lambda x: F.lp_pool2d(x, 2.0, 2),
           lambda x: np.sqrt(ref_avg_pool(x ** 2, (2, 2), (2, 2), (0, 0)) * 4), distinct(2, 2, 4, 6)),
    OpSpec("lp_pool1d", lambda x: F.lp_pool1d(x, 3.0, 3, 2),
           lambda x: np.cbrt(ref_avg_pool(x ** 3, (3,), (2,), (0,)) * 3), lambda rng: [rng.uniform(0.5, 2, (2, 9))]),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


@pytest.mark.parametrize("args", [((3, 3), (2, 2), (1, 1), (1, 1), False), ((2, 3), (1, 2), (0, 1), (2, 1), True)])
def test_max_pool_indices(args):
    x = distinct(2, 3, 7, 8)(np.random.default_rng(0))[0]
    k, s, p, d, ceil = args
    out, idx = F.max_pool2d(ember.tensor(x), k, s, p, d, ceil_mode=ceil, return_indices=True)
    ref_val, ref_idx = ref_max_pool(x, k, s, p, d, ceil)
    assert idx.dtype == ember.int64
    np.testing.assert_array_equal(idx.numpy(), ref_idx)
    np.testing.assert_allclose(out.numpy(), ref_val)


def test_max_pool_grad_goes_to_argmax():
    x = ember.tensor([[[1.0, 5.0, 2.0, 2.5, 0.0]]], requires_grad=True)
    F.max_pool1d(x, 3, 1).sum().backward()  # windows: max 5, 5, 2.5
    np.testing.assert_array_equal(x.grad.numpy(), [[[0, 2, 0, 1, 0]]])


def test_max_pool_nan_propagates():
    x = ember.tensor([[[1.0, float("nan"), 2.0, 3.0]]])
    out, idx = F.max_pool1d(x, 2, return_indices=True)
    assert np.isnan(out.numpy()[0, 0, 0]) and out.numpy()[0, 0, 1] == 3.0
    np.testing.assert_array_equal(idx.numpy(), [[[1, 3]]])


def test_max_pool_integer_input():
    x = ember.tensor([[[1, 7, 3, -2]]])
    out = F.max_pool1d(x, 2, 1, padding=1)
    assert out.dtype == ember.int64
    np.testing.assert_array_equal(out.numpy(), [[[1, 7, 7, 3, -2]]])


def test_unbatched_and_batched_agree():
    x = ember.tensor(distinct(3, 6, 6)(np.random.default_rng(1))[0])
    assert_close(F.max_pool2d(x, 2), F.max_pool2d(x.unsqueeze(0), 2)[0].numpy())
    assert_close(F.avg_pool2d(x, 3, 1, 1), F.avg_pool2d(x.unsqueeze(0), 3, 1, 1)[0].numpy())


def test_max_unpool_inverts_pool():
    x = ember.tensor(distinct(2, 3, 6, 4)(np.random.default_rng(2))[0], requires_grad=True)
    out, idx = F.max_pool2d(x, 2, return_indices=True)
    up = F.max_unpool2d(out, idx, 2)
    assert up.shape == (2, 3, 6, 4)
    expected = np.zeros((2, 3, 6 * 4))
    np.put_along_axis(expected.reshape(6, 24), idx.numpy().reshape(6, -1), out.detach().numpy().reshape(6, -1), 1)
    np.testing.assert_allclose(up.detach().numpy(), expected.reshape(2, 3, 6, 4))
    assert up.grad_fn.name() == "MaxUnpool2DBackward0"
    up2 = F.max_unpool2d(out, idx, 2, output_size=(2, 3, 7, 5))
    assert up2.shape == (2, 3, 7, 5)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_gradcheck(nd):
    shape = (1, 2) + (4,) * nd
    x = ember.tensor(distinct(*shape)(np.random.default_rng(0))[0])
    out, idx = getattr(F, f"max_pool{nd}d")(x, 2, return_indices=True)
    inp = out.detach().requires_grad_(True)
    fn = getattr(F, f"max_unpool{nd}d")
    assert ember.autograd.gradcheck(lambda t: fn(t, idx, 2), [inp])
    assert ember.autograd.gradgradcheck(lambda t: fn(t, idx, 2), [inp])


def test_adaptive_max_indices():
    x = distinct(1, 2, 5, 7)(np.random.default_rng(0))[0]
    out, idx = F.adaptive_max_pool2d(ember.tensor(x), (2, 3), return_indices=True)
    flat = x.reshape(1, 2, -1)
    np.testing.assert_allclose(np.take_along_axis(flat, idx.numpy().reshape(1, 2, -1), -1).reshape(out.shape),
                               out.numpy())


def test_grad_fn_names():
    x = ember.randn(1, 2, 4, 4, requires_grad=True)
    assert F.max_pool2d(x, 2).grad_fn.name() == "MaxPool2DWithIndicesBackward0"
    assert F.avg_pool2d(x, 2).grad_fn.name() == "AvgPool2DBackward0"
    assert F.adaptive_avg_pool2d(x, 3).grad_fn.name() == "AdaptiveAvgPool2DBackward0"
    assert F.adaptive_max_pool2d(x, 3).grad_fn.name() == "AdaptiveMaxPool2DBackward0"


def test_no_graph_without_grad():
    x = ember.randn(1, 2, 4, 4)
    assert F.max_pool2d(x, 2).grad_fn is None and F.avg_pool2d(x, 2).grad_fn is None
    with ember.no_grad():
        out, idx = F.max_pool2d(x.requires_grad_(), 2, return_indices=True)
    assert out.grad_fn is None and idx.shape == (1, 2, 2, 2)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda x: F.max_pool2d(x[0, 0], 2), RuntimeError, "non-empty 3D or 4D (batch mode) tensor expected for input"),
    (lambda x: F.max_pool2d(x, 2, padding=2), RuntimeError, "pad should be at most half of effective kernel size"),
    (lambda x: F.avg_pool2d(x, 9), RuntimeError, "Output size is too small"),
    (lambda x: F.max_pool2d(x, 2, stride=0), RuntimeError, "stride should not be zero"),
    (lambda x: F.max_pool2d(x, (2, 2, 2)), RuntimeError, "kernel_size must either be a single int, or a tuple of two"),
    (lambda x: F.adaptive_avg_pool2d(x[0, 0, 0], 2), RuntimeError, "Expected 3D or 4D tensor, but got [8]"),
    (lambda x: F.avg_pool2d(x.int(), 2), NotImplementedError, "\"avg_pool2d\" not implemented for 'Int'"),
])
def test_errors(call, exc, msg):
    with pytest.raises(exc) as e:
        call(ember.randn(2, 3, 8, 8))
    assert msg in str(e.value)


def test_modules_forward_and_repr():
    x = ember.tensor(distinct(2, 3, 8, 8)(np.random.default_rng(0))[0])
    pairs = [(nn.MaxPool2d(3, 2, 1), lambda t: F.max_pool2d(t, 3, 2, 1)),
             (nn.AvgPool2d(2, count_include_pad=False), lambda t: F.avg_pool2d(t, 2)),
             (nn.AdaptiveAvgPool2d((2, None)), lambda t: F.adaptive_avg_pool2d(t, (2, 8))),
             (nn.AdaptiveMaxPool2d(3), lambda t: F.adaptive_max_pool2d(t, 3)),
             (nn.LPPool2d(2, 2), lambda t: F.lp_pool2d(t, 2.0, 2)),
             (nn.MaxPool1d(2), lambda t: F.max_pool1d(t[0], 2)), (nn.AvgPool1d(3), lambda t: F.avg_pool1d(t[0], 3))]
    for module, fn in pairs:
        inp = x[0] if isinstance(module, (nn.MaxPool1d, nn.AvgPool1d)) else x
        assert_close(module(inp), fn(x).numpy())
    pool = nn.MaxPool2d(2, return_indices=True)
    out, idx = pool(x)
    assert_close(nn.MaxUnpool2d(2)(out, idx), F.max_unpool2d(out, idx, 2).numpy())
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool1d(2)) == "AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.MaxUnpool2d(2)) == "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(nn.AdaptiveMaxPool1d(3, True)) == "AdaptiveMaxPool1d(output_size=3)"
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)"


def test_modules_have_no_parameters():
    for m in (nn.MaxPool3d(2), nn.AvgPool3d(2), nn.AdaptiveAvgPool3d(1), nn.AdaptiveMaxPool3d(1), nn.LPPool3d(2, 2),
              nn.MaxUnpool3d(2), nn.MaxUnpool1d(2), nn.AdaptiveAvgPool1d(1)):
        assert list(m.parameters()) == []


def test_all_ndims_share_batched_path():
    for nd in (1, 2, 3):
        x = ember.tensor(distinct(*((2, 2) + (4,) * nd))(np.random.default_rng(nd))[0])
        out = getattr(F, f"max_pool{nd}d")(x, 2)
        ref = ref_max_pool(x.numpy(), (2,) * nd, (2,) * nd, (0,) * nd)[0]
        np.testing.assert_allclose(out.numpy(), ref)


# ---------------- tiled windows (stride == kernel, divisible sizes): the reshape paths ----------------
TILED = [
    (lambda x: F.avg_pool2d(x, 2), (2, 3, 4, 6), lambda a: a.reshape(2, 3, 2, 2, 3, 2).mean((3, 5))),
    (lambda x: F.avg_pool2d(x, (5, 4)), (2, 3, 10, 8), lambda a: a.reshape(2, 3, 2, 5, 2, 4).mean((3, 5))),
    (lambda x: F.avg_pool1d(x, 3), (2, 3, 9), lambda a: a.reshape(2, 3, 3, 3).mean(3)),
    (lambda x: F.adaptive_avg_pool2d(x, 1), (2, 3, 5, 7), lambda a: a.mean((2, 3), keepdims=True)),
    (lambda x: F.adaptive_avg_pool2d(x, (2, 1)), (3, 4, 6), lambda a: a.reshape(3, 2, 2, 6).mean((2, 3))[..., None]),
    (lambda x: F.adaptive_avg_pool3d(x, (1, 2, 1)), (1, 2, 3, 4, 5),
     lambda a: a.reshape(1, 2, 3, 2, 2, 5).mean((2, 4, 5))[:, :, None, :, None]),
]


@pytest.mark.parametrize("case", range(len(TILED)))
def test_tiled_pooling_values_and_grads(case):
    fn, shape, ref = TILED[case]
    a = np.random.default_rng(case).standard_normal(shape)
    x = ember.tensor(a, requires_grad=True)
    np.testing.assert_allclose(fn(x).detach().numpy(), ref(a), rtol=1e-12, atol=1e-12)
    assert ember.autograd.gradcheck(fn, (x,))
    assert ember.autograd.gradgradcheck(fn, (x,))
    assert fn(ember.tensor(a.astype(np.float32))).dtype == ember.float32


def test_avg_pool_of_int64_divides_with_truncation_as_torch():
    x = ember.tensor([[[-5, -2, 3, 4, 7, -9]]])
    assert F.avg_pool1d(x, 2).tolist() == [[[-3, 3, -1]]]
    assert F.avg_pool1d(x, 3, padding=1).tolist() == [[[-2, 4]]]
    assert F.avg_pool2d(x.view(1, 1, 2, 3), (2, 1)).tolist() == [[[[0, 2, -3]]]]
    assert F.avg_pool3d(x.view(1, 1, 1, 2, 3), (1, 2, 1)).tolist() == [[[[[0, 2, -3]]]]]


def test_pooling_of_other_integer_types_is_refused_as_torch():
    x = ember.ones(1, 1, 4, dtype=ember.int32)
    with pytest.raises(NotImplementedError, match="\"avg_pool2d\" not implemented for 'Int'"):
        F.avg_pool1d(x, 2)
    with pytest.raises(NotImplementedError, match="\"avg_pool3d_out_frame\" not implemented for 'Byte'"):
        F.avg_pool3d(ember.ones(1, 1, 2, 2, 2, dtype=ember.uint8), 2)
    with pytest.raises(NotImplementedError, match="\"adaptive_avg_pool2d\" not implemented for 'Long'"):
        F.adaptive_avg_pool1d(x.long(), 2)
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        F.adaptive_avg_pool1d(x.long(), 1)
