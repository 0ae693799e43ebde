"""The compiled CPU kernels (numba) and the NumPy paths beside them: both against loop references, and the switch
that turns the kernels off (NOTE [ Compiled CPU kernels ])."""
import copy
import os
import subprocess
import sys

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import jit

PATHS = [pytest.param(True, id="jit"), pytest.param(False, id="numpy")]


@pytest.fixture(params=PATHS)
def path(request):
    """Run a test once through the compiled kernels (skipped without numba) and once through NumPy."""
    if request.param and not jit.ENABLED[0]:
        pytest.skip("numba is not installed or EMBER_JIT=0")
    before = jit.ENABLED[0]
    jit.ENABLED[0] = request.param
    yield request.param
    jit.ENABLED[0] = before


def ref_max_pool2d(x, k, s, p, d, outs):
    """torch's loop: the window's first element inside the input starts as the winner at -inf; a later element
    wins when it is greater or NaN."""
    h_in, w_in = x.shape[-2:]
    val = np.empty(x.shape[:-2] + outs, x.dtype)
    idx = np.empty(x.shape[:-2] + outs, np.int64)
    for lead in np.ndindex(*x.shape[:-2]):
        for oh, ow in np.ndindex(*outs):
            rows = [h for h in range(oh * s[0] - p[0], oh * s[0] - p[0] + k[0] * d[0], d[0]) if 0 <= h < h_in]
            cols = [w for w in range(ow * s[1] - p[1], ow * s[1] - p[1] + k[1] * d[1], d[1]) if 0 <= w < w_in]
            best, at = -np.inf, rows[0] * w_in + cols[0]
            for h in rows:
                for w in cols:
                    v = x[lead + (h, w)]
                    if v > best or np.isnan(v):
                        best, at = v, h * w_in + w
            val[lead + (oh, ow)], idx[lead + (oh, ow)] = best, at
    return val, idx


GEOMETRIES = [  # kernel, stride, padding, dilation, ceil_mode
    ((2, 2), (2, 2), (0, 0), (1, 1), False),
    ((3, 3), (2, 2), (1, 1), (1, 1), True),
    ((3, 2), (1, 2), (1, 0), (2, 1), False),
    ((1, 3), (1, 1), (0, 1), (1, 1), False),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k,s,p,d,ceil", GEOMETRIES)
def test_max_pool2d_values_indices_and_gradient(path, dtype, k, s, p, d, ceil):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 7, 8)).astype(dtype)
    x[rng.random(x.shape) < 0.3] = -np.inf   # ties with the padding value
    x[0, 1, 2, 3] = x[1, 2, 5, 0] = np.nan
    t = ember.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(t, k, s, p, d, ceil, return_indices=True)
    want, want_idx = ref_max_pool2d(x, k, s, p, d, tuple(out.shape[-2:]))
    np.testing.assert_array_equal(out.detach().numpy(), want)
    np.testing.assert_array_equal(idx.numpy(), want_idx)
    g = rng.standard_normal(out.shape).astype(dtype)
    out.backward(ember.tensor(g))
    grad = np.zeros((6, 56), dtype)
    np.add.at(grad, (np.arange(6)[:, None], want_idx.reshape(6, -1)), g.reshape(6, -1))  # overlapping windows add
    np.testing.assert_allclose(x_grad := t.grad.numpy(), grad.reshape(x.shape), rtol=1e-5, atol=1e-6)
    assert x_grad.dtype == dtype


def test_max_pool2d_padding_never_wins_a_tie(path):
    x = ember.tensor([[[[-np.inf, -np.inf], [-np.inf, 1.0]]]])
    out, idx = F.max_pool2d(x, 3, 1, 1, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), [[[[1.0, 1.0], [1.0, 1.0]]]])
    x = ember.tensor([[[[-np.inf, -np.inf], [-np.inf, -np.inf]]]])
    out, idx = F.max_pool2d(x, 2, 1, 1, return_indices=True)
    # every window's first element inside the input, not a padding position
    np.testing.assert_array_equal(idx.numpy(), [[[[0, 0, 1], [0, 0, 1], [2, 2, 3]]]])


def ref_conv2d_input_grad(g, w, stride, padding, dilation, in_size):
    """Loop reference of the input gradient of conv2d (groups 1): each output gradient element sent back through
    every kernel tap."""
    n, _, oh_n, ow_n = g.shape
    cin, kh, kw = w.shape[1:]
    gx = np.zeros((n, cin, in_size[0] + 2 * padding[0], in_size[1] + 2 * padding[1]), g.dtype)
    for oh, ow, i, j in np.ndindex(oh_n, ow_n, kh, kw):
        h, v = oh * stride[0] + i * dilation[0], ow * stride[1] + j * dilation[1]
        gx[:, :, h, v] += g[:, :, oh, ow] @ w[:, :, i, j]
    return gx[:, :, padding[0]:padding[0] + in_size[0], padding[1]:padding[1] + in_size[1]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cin,cout,k,stride,padding,dilation", [
    (2, 6, (3, 3), (1, 1), (0, 0), (1, 1)),   # Cout > Cin: GEMM + col2im
    (3, 5, (2, 3), (2, 1), (1, 0), (1, 2)),
    (1, 4, (3, 2), (1, 2), (1, 1), (2, 1)),
])
def test_conv2d_input_gradient_through_col2im(path, monkeypatch, dtype, cin, cout, k, stride, padding, dilation):
    from ember.nn._functional import conv
    monkeypatch.setattr(conv, "_PHASES", False)  # strided gradients through col2im as well
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((3, cin, 9, 8)).astype(dtype), requires_grad=True)
    w = rng.standard_normal((cout, cin) + k).astype(dtype)
    y = F.conv2d(x, ember.tensor(w), stride=stride, padding=padding, dilation=dilation)
    g = rng.standard_normal(y.shape).astype(dtype)
    (gx,) = ember.autograd.grad(y, x, ember.tensor(g))
    want = ref_conv2d_input_grad(g, w, stride, padding, dilation, (9, 8))
    np.testing.assert_allclose(gx.numpy(), want, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_the_environment_switch_turns_the_kernels_off():
    code = "from ember._backend import jit; print(jit.enabled())"
    env = dict(os.environ, EMBER_JIT="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_tanh32_is_float32_accurate_and_keeps_nan_and_infinities():
    if not jit.ENABLED[0]:
        pytest.skip("numba is not installed or EMBER_JIT=0")
    import numba

    from ember.nn._functional._jit_rnn import tanh32

    @numba.njit
    def apply(x, out):
        for i in range(x.size):
            out[i] = tanh32(x[i])

    x = np.concatenate([np.linspace(-12, 12, 400001, dtype=np.float32),
                        np.geomspace(1e-30, 1, 2001, dtype=np.float32),
                        np.array([0.0, -0.0, 8.99, 9.0, 9.01, 40.0], np.float32)])
    out = np.empty_like(x)
    apply(x, out)
    exact = np.tanh(x.astype(np.float64))
    ulp = np.abs(out - exact) / np.spacing(np.abs(exact).astype(np.float32))
    assert ulp.max() <= 8
    special = np.array([np.nan, np.inf, -np.inf], np.float32)
    apply(special, out[:3])
    np.testing.assert_array_equal(out[:3], [np.nan, 1.0, -1.0])


@pytest.mark.parametrize("bias,lengths", [(True, None), (False, None), (True, [7, 5, 5, 2])])
def test_lstm_float32_steps_match_float64(path, bias, lengths):
    """The float32 LSTM (its gate math compiled or in NumPy) against the same model in float64, which always runs
    NumPy: outputs, final states and every gradient."""
    def run(dtype):
        ember.manual_seed(0)
        m = ember.nn.LSTM(16, 32, num_layers=2, batch_first=True, bias=bias, bidirectional=True).to(dtype)
        x = ember.tensor(np.random.default_rng(2).standard_normal((4, 7, 16)), dtype=dtype, requires_grad=True)
        inp = x if lengths is None else ember.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
        out, (h, c) = m(inp)
        if lengths is not None:
            out = ember.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0]
        (out.square().sum() + h.sum() + 2 * c.sum()).backward()
        return [out, h, c, x.grad] + [p.grad for p in m.parameters()]

    for got, want in zip(run(ember.float32), run(ember.float64)):
        assert got.dtype == ember.float32
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_training_statistics_and_backward(path, affine):
    """Batch norm with batch statistics (its compiled kernels or NumPy) against a NumPy reference, and its
    backward by finite differences in float64."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 5, 6)) * 2 + 1
    bn = ember.nn.BatchNorm2d(3, affine=affine).double()
    if affine:
        with ember.no_grad():
            bn.weight.copy_(ember.tensor(rng.standard_normal(3)))
            bn.bias.copy_(ember.tensor(rng.standard_normal(3)))
    y = bn(ember.tensor(x))
    mean, var = x.mean((0, 2, 3), keepdims=True), x.var((0, 2, 3), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5)
    if affine:
        want = want * bn.weight.detach().numpy().reshape(1, 3, 1, 1) + bn.bias.detach().numpy().reshape(1, 3, 1, 1)
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.var((0, 2, 3), ddof=1), rtol=1e-12)
    params = [p for p in bn.parameters()]
    assert ember.autograd.gradcheck(lambda t, *p: bn(t) * ember.arange(3.0, dtype=ember.float64).reshape(1, 3, 1, 1),
                                    [ember.tensor(x[:, :, :2, :3], requires_grad=True), *params])
    g = rng.standard_normal(x.shape)
    grads = []
    for dtype in (np.float32, np.float64):  # float32's gradients against float64's
        m = copy.deepcopy(bn).to(ember.float32 if dtype == np.float32 else ember.float64)
        xt = ember.tensor(x.astype(dtype), requires_grad=True)
        grads.append(ember.autograd.grad(m(xt), [xt, *m.parameters()], ember.tensor(g.astype(dtype))))
    for a, b in zip(*grads):
        assert a.dtype == ember.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)
