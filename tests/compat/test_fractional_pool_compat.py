"""Fractional max pooling against real torch for equal _random_samples: values, indices, grads, modules, errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn
import torch.nn.functional as TF

import ember
import ember.nn as enn
import ember.nn.functional as EF

_FN = {2: (EF.fractional_max_pool2d, TF.fractional_max_pool2d), 3: (EF.fractional_max_pool3d, TF.fractional_max_pool3d)}


def _cases(nd, count, seed):
    """Random (input shape, kernel, output size) triples that torch accepts (its 3-d check is strict)."""
    rng = np.random.default_rng(seed)
    strict = 1 if nd == 3 else 0
    out = []
    while len(out) < count:
        sp = tuple(int(v) for v in rng.integers(1 + strict, 10, nd))
        k = tuple(int(rng.integers(1, n + 1 - strict)) for n in sp)
        o = tuple(int(rng.integers(1, n - ki + 2 - strict)) for n, ki in zip(sp, k))
        lead = (int(rng.integers(1, 3)), int(rng.integers(1, 4))) if rng.random() < 0.7 else (int(rng.integers(1, 4)),)
        out.append((lead + sp, k, o))
    return out


def _samples(shape, nd, rng, dtype, low=0.0, high=1.0):
    n = shape[0] if len(shape) == nd + 2 else int(rng.integers(1, 3))
    return rng.uniform(low, high, (n, shape[-nd - 1], nd)).astype(dtype)


def _both(nd, x, k, o, s, grad):
    """Run both libraries on the same arrays; returns (ember (out, idx), torch (out, idx), leaves)."""
    xe = ember.tensor(x, requires_grad=grad)
    xt = torch.tensor(x, requires_grad=grad)
    fe, ft = _FN[nd]
    ye = fe(xe, k, o, return_indices=True, _random_samples=ember.tensor(s))
    yt = ft(xt, k, o, return_indices=True, _random_samples=torch.tensor(s))
    return ye, yt, xe, xt


def _assert_same(ye, yt):
    assert tuple(ye[0].shape) == tuple(yt[0].shape)
    assert str(ye[0].dtype)[6:] == str(yt[0].dtype)[6:] and ye[1].dtype == ember.int64
    np.testing.assert_array_equal(ye[0].detach().float().numpy(), yt[0].detach().float().numpy())
    np.testing.assert_array_equal(ye[1].numpy(), yt[1].numpy())


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_indices_and_grads(nd, dtype):
    rng = np.random.default_rng(nd)
    for shape, k, o in _cases(nd, 40, seed=nd * 10 + (dtype == np.float64)):
        x = rng.standard_normal(shape).astype(dtype)
        s = _samples(shape, nd, rng, dtype)
        ye, yt, xe, xt = _both(nd, x, k, o, s, grad=True)
        _assert_same(ye, yt)
        w = rng.standard_normal(tuple(yt[0].shape)).astype(dtype)
        (ye[0] * ember.tensor(w)).sum().backward()
        (yt[0] * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("nd", [2, 3])
def test_ties_nan_and_inf(nd):
    rng = np.random.default_rng(5)
    for shape, k, o in _cases(nd, 30, seed=50 + nd):
        x = rng.integers(-2, 2, shape).astype(np.float32)
        x[rng.random(shape) < 0.1] = np.nan
        x[rng.random(shape) < 0.1] = -np.inf
        x[rng.random(shape) < 0.05] = np.inf
        ye, yt, _, _ = _both(nd, x, k, o, _samples(shape, nd, rng, np.float32), grad=False)
        _assert_same(ye, yt)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("nd", [2, 3])
def test_half_precision(dtype, nd):
    rng = np.random.default_rng(6)
    shape = (2, 3, 40, 37) if nd == 2 else (2, 2, 20, 17, 23)
    k, o = ((2, 3), (21, 13)) if nd == 2 else ((2, 3, 2), (9, 11, 7))
    xt = torch.tensor(rng.standard_normal(shape)).to(dtype)
    st = torch.tensor(rng.random((2, shape[1], nd))).to(dtype)
    fe, ft = _FN[nd]
    yt = ft(xt, k, o, return_indices=True, _random_samples=st)
    ye = fe(ember.tensor(xt.float().numpy()).to(getattr(ember, str(dtype)[6:])), k, o, return_indices=True,
            _random_samples=ember.tensor(st.float().numpy()).to(getattr(ember, str(dtype)[6:])))
    _assert_same(ye, yt)


@pytest.mark.parametrize("nd", [2, 3])
def test_samples_outside_the_unit_interval(nd):
    # torch's OpInfo passes samples from make_tensor, in [-9, 9]: the windows still fall inside the input
    rng = np.random.default_rng(7)
    for shape, k, o in _cases(nd, 30, seed=70 + nd):
        x = rng.standard_normal(shape)
        ye, yt, _, _ = _both(nd, x, k, o, _samples(shape, nd, rng, np.float64, -9, 9), grad=False)
        _assert_same(ye, yt)


def test_long_sequences_match():
    # long dimensions, where float32 rounding of the sequence matters
    rng = np.random.default_rng(8)
    for n, o, kk in [(2381, 1000, 1), (3000, 1499, 2), (1024, 511, 3), (777, 776, 2)]:
        x = rng.standard_normal((1, 4, 3, n)).astype(np.float32)
        s = rng.random((1, 4, 2)).astype(np.float32)
        ye, yt, _, _ = _both(2, x, (1, kk), (2, o), s, grad=False)
        _assert_same(ye, yt)


@pytest.mark.parametrize("nd", [2, 3])
def test_output_ratio_and_unbatched(nd):
    rng = np.random.default_rng(9)
    shape = (3, 9, 11) if nd == 2 else (2, 9, 8, 11)
    x = rng.standard_normal(shape)
    s = rng.random((1, shape[0], nd))
    ratio = (0.5, 0.6, 0.7)[:nd]
    fe, ft = _FN[nd]
    ye = fe(ember.tensor(x), 2, output_ratio=ratio, return_indices=True, _random_samples=ember.tensor(s))
    yt = ft(torch.tensor(x), 2, output_ratio=ratio, return_indices=True, _random_samples=torch.tensor(s))
    _assert_same(ye, yt)


@pytest.mark.parametrize("nd", [2, 3])
def test_double_backward(nd):
    rng = np.random.default_rng(10)
    shape = (2, 2, 7, 8) if nd == 2 else (2, 2, 6, 7, 6)
    k, o = (2,) * nd, (4,) * nd
    x = rng.permutation(int(np.prod(shape))).reshape(shape) / 100.0
    s = rng.random((2, 2, nd))
    fe, ft = _FN[nd]
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ge, gt = ember.tensor(rng.standard_normal((2, 2) + o), requires_grad=True), None
    gt = torch.tensor(ge.detach().numpy(), requires_grad=True)
    ye = fe(xe, k, o, _random_samples=ember.tensor(s))
    yt = ft(xt, k, o, _random_samples=torch.tensor(s))
    (dxe,) = ember.autograd.grad(ye, xe, ge, create_graph=True)
    (dxt,) = torch.autograd.grad(yt, xt, gt, create_graph=True)
    w = rng.standard_normal(shape)
    (dge,) = ember.autograd.grad((dxe * ember.tensor(w)).sum(), ge)
    (dgt,) = torch.autograd.grad((dxt * torch.tensor(w)).sum(), gt)
    np.testing.assert_allclose(dxe.detach().numpy(), dxt.detach().numpy())
    np.testing.assert_allclose(dge.numpy(), dgt.numpy())


@pytest.mark.parametrize("nd, kwargs, shape", [
    (2, {"kernel_size": 2, "output_ratio": 0.5}, (1, 3, 5, 7)),
    (2, {"kernel_size": (2, 3), "output_size": (4, 3), "return_indices": True}, (1, 3, 7, 6)),
    (2, {"kernel_size": 2, "output_ratio": 0.5, "return_indices": True}, (3, 5, 7)),
    (3, {"kernel_size": 2, "output_ratio": 0.5}, (2, 4, 5, 5, 5)),
    (3, {"kernel_size": (4, 2, 3), "output_size": (10, 3, 2), "return_indices": True}, (2, 4, 16, 7, 5)),
    (3, {"kernel_size": (2, 2, 2), "output_size": (4, 4, 4)}, (4, 7, 7, 7)),
])
def test_modules(nd, kwargs, shape):
    rng = np.random.default_rng(11)
    name = f"FractionalMaxPool{nd}d"
    s = rng.random((2, shape[-nd - 1], nd))
    m_t = getattr(tnn, name)(**kwargs, _random_samples=torch.tensor(s))
    m_e = getattr(enn, name)(**kwargs, _random_samples=ember.tensor(s))
    assert repr(m_e) == repr(m_t)
    assert list(m_e.state_dict()) == list(m_t.state_dict())
    m_e.load_state_dict({k: ember.tensor(v.numpy()) for k, v in m_t.state_dict().items()})
    x = rng.standard_normal(shape)
    xe, xt = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = m_e(xe), m_t(xt)
    if kwargs.get("return_indices"):
        _assert_same(ye, yt)
        ye, yt = ye[0], yt[0]
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())


def _error(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e).__name__, str(e)
    return None


def _f(nd, lib):
    return getattr((EF if lib is ember else TF), f"fractional_max_pool{nd}d")


ERRORS = {
    "no size": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2),
    "no size 3d": lambda L: _f(3, L)(L.randn(2, 3, 5, 6, 7), 2),
    "ratio 3-tuple": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, output_ratio=(0.5, 0.5, 0.5)),
    "ratio 1-tuple": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, output_ratio=(0.5,)),
    "ratio 3d 2-tuple": lambda L: _f(3, L)(L.randn(2, 3, 5, 6, 7), 2, output_ratio=(0.5, 0.5)),
    "input list": lambda L: _f(2, L)([[[[1.0]]]], 1, 1, _random_samples=L.rand(1, 1, 2)),
    "samples list": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), 2, 3, _random_samples=[[[0.1, 0.2]]]),
    "kernel float": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), 2.0, 3, _random_samples=L.rand(1, 1, 2)),
    "kernel None": lambda L: _f(3, L)(L.randn(1, 1, 6, 7, 5), None, 3, _random_samples=L.rand(1, 1, 3)),
    "kernel bool": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), True, 3, _random_samples=L.rand(1, 1, 2)),
    "kernel element 0 bool": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), (True, 2), 3, _random_samples=L.rand(1, 1, 2)),
    "output element 1 float": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), 2, (3, 3.5), _random_samples=L.rand(1, 1, 2)),
    "kernel 3 in 2d": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), (2, 2, 2), 3, _random_samples=L.rand(1, 1, 2)),
    "kernel 1-tuple": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), (2,), 3, _random_samples=L.rand(1, 1, 2)),
    "output 2 in 3d": lambda L: _f(3, L)(L.randn(1, 1, 6, 7, 5), 2, (3, 3), _random_samples=L.rand(1, 1, 3)),
    "kernel 2 in 3d": lambda L: _f(3, L)(L.randn(1, 1, 6, 7, 5), (2, 2), 3, _random_samples=L.rand(1, 1, 3)),
    "2-d input": lambda L: _f(2, L)(L.randn(6, 7), 2, 3, _random_samples=L.rand(1, 1, 2)),
    "2-d input, no samples": lambda L: _f(2, L)(L.randn(6, 7), 2, 3),
    "1-d input, no samples": lambda L: _f(2, L)(L.randn(7), 2, 3),
    "0-d input, no samples": lambda L: _f(2, L)(L.tensor(1.0), 2, 3),
    "5-d input": lambda L: _f(2, L)(L.randn(1, 1, 1, 6, 7), 2, 3, _random_samples=L.rand(1, 1, 2)),
    "3-d input 3d": lambda L: _f(3, L)(L.randn(6, 7, 8), 2, 3, _random_samples=L.rand(1, 6, 3)),
    "6-d input 3d": lambda L: _f(3, L)(L.randn(1, 1, 1, 6, 7, 8), 2, 3, _random_samples=L.rand(1, 1, 3)),
    "empty channels": lambda L: _f(2, L)(L.randn(2, 0, 6, 7), 2, 3, _random_samples=L.rand(2, 0, 2)),
    "empty height": lambda L: _f(2, L)(L.randn(2, 3, 0, 7), 2, 3, _random_samples=L.rand(2, 3, 2)),
    "empty depth 3d": lambda L: _f(3, L)(L.randn(1, 2, 6, 0, 5), 2, 3, _random_samples=L.rand(1, 2, 3)),
    "empty unbatched 3d": lambda L: _f(3, L)(L.randn(0, 6, 4, 5), 2, 3, _random_samples=L.rand(1, 0, 3)),
    "empty height unbatched": lambda L: _f(2, L)(L.randn(3, 0, 7), 2, 3, _random_samples=L.rand(1, 3, 2)),
    "pool height": lambda L: _f(2, L)(L.randn(1, 1, 5, 6), (2, 1), (5, 6), _random_samples=L.rand(1, 1, 2)),
    "pool width": lambda L: _f(2, L)(L.randn(1, 1, 5, 6), (1, 2), (5, 6), _random_samples=L.rand(1, 1, 2)),
    "pool time strict": lambda L: _f(3, L)(L.randn(1, 1, 4, 5, 6), 1, (4, 4, 5), _random_samples=L.rand(1, 1, 3)),
    "pool height 3d": lambda L: _f(3, L)(L.randn(1, 1, 4, 5, 6), 1, (3, 5, 5), _random_samples=L.rand(1, 1, 3)),
    "pool width 3d": lambda L: _f(3, L)(L.randn(1, 1, 4, 5, 6), 1, (3, 4, 6), _random_samples=L.rand(1, 1, 3)),
    "pool before samples": lambda L: _f(2, L)(L.randn(2, 2, 6, 7), 9, 3, _random_samples=L.rand(1, 1, 1)),
    "negative output": lambda L: _f(2, L)(L.randn(2, 2, 6, 7), 2, -1, _random_samples=L.rand(2, 2, 2)),
    "negative output unbatched": lambda L: _f(2, L)(L.randn(2, 6, 7), 2, (-1, 2), _random_samples=L.rand(1, 2, 2)),
    "negative output 3d": lambda L: _f(3, L)(L.randn(2, 2, 6, 7, 8), 2, (-6, 2, 3), _random_samples=L.rand(1, 1, 1)),
    "samples dtype": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, 3, _random_samples=L.rand(2, 3, 2, dtype=L.float64)),
    "samples dtype before ndim": lambda L: _f(3, L)(L.randn(1, 1, 6, 7, 8), 2, 3,
                                                    _random_samples=L.rand(1, 1, dtype=L.float64)),
    "samples ndim": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, 3, _random_samples=L.rand(3, 2)),
    "samples 4-d": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, 3, _random_samples=L.rand(2, 3, 2, 1)),
    "samples batch": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, 3, _random_samples=L.rand(1, 3, 2)),
    "samples batch before channels": lambda L: _f(3, L)(L.randn(2, 2, 6, 7, 8), 2, 3, _random_samples=L.rand(1, 1, 2)),
    "samples channels": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, 3, _random_samples=L.rand(2, 4, 2)),
    "samples last": lambda L: _f(2, L)(L.randn(2, 3, 6, 7), 2, 3, _random_samples=L.rand(2, 3, 3)),
    "samples last 3d": lambda L: _f(3, L)(L.randn(2, 3, 5, 5, 5), 2, 3, _random_samples=L.rand(2, 3, 2)),
    "samples empty batch unbatched": lambda L: _f(2, L)(L.randn(3, 6, 7), 2, 3, _random_samples=L.rand(0, 3, 2)),
    "samples require grad": lambda L: _f(2, L)(L.randn(1, 1, 6, 7), 2, 9, _random_samples=L.rand(1, 1, 2,
                                                                                                 requires_grad=True)),
    "int input, float samples": lambda L: _f(2, L)(L.ones(1, 1, 4, 4, dtype=L.int64), 2, 2,
                                                    _random_samples=L.rand(1, 1, 2)),
    "int input and samples": lambda L: _f(2, L)(L.ones(1, 1, 4, 4, dtype=L.int32), 2, 2,
                                                 _random_samples=L.zeros(1, 1, 2, dtype=L.int32)),
    "uint8 3d": lambda L: _f(3, L)(L.ones(1, 1, 4, 4, 4, dtype=L.uint8), 2, 2,
                                   _random_samples=L.zeros(1, 1, 3, dtype=L.uint8)),
    "bool input": lambda L: _f(2, L)(L.ones(1, 1, 4, 4, dtype=L.bool), 2, 2,
                                     _random_samples=L.zeros(1, 1, 2, dtype=L.bool)),
    "int input, no samples": lambda L: _f(3, L)(L.ones(1, 1, 4, 4, 4, dtype=L.int64), 2, 2),
    "module no size": lambda L: L.nn.FractionalMaxPool2d(2),
    "module no size 3d": lambda L: L.nn.FractionalMaxPool3d((2, 2, 2)),
    "module both": lambda L: L.nn.FractionalMaxPool3d(2, 3, 0.5),
    "module ratio": lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=(0.5, 1.5)),
    "module ratio 1-tuple": lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=(0.5,)),
    "module ratio 3d": lambda L: L.nn.FractionalMaxPool3d(2, output_ratio=0.0),
    "module kernel 3d": lambda L: L.nn.FractionalMaxPool3d((2, -1, 2), output_size=2),
    "module kernel 3d int": lambda L: L.nn.FractionalMaxPool3d(0, output_size=2),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    want = _error(ERRORS[name], torch)
    assert want is not None
    assert _error(ERRORS[name], ember) == want
