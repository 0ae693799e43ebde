"""Ops whose NumPy primitive CuPy 14 lacks or computes differently (ufunc.at, ufunc.accumulate, implicit host
conversion, solve's broadcasting...), on the device against the CPU: values, gradients, devices of the results."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F


def _run(fn, arrays, dev, grad=True):
    ins = [ember.tensor(a, device=dev, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    out = fn(*ins)
    outs = list(out) if isinstance(out, tuple) else [out]
    grads = []
    diff = [o for o in outs if o.requires_grad]
    wanted = [t for t in ins if t.requires_grad]
    if diff and wanted:
        rng = np.random.default_rng(1)
        ws = [ember.tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=dev) for o in diff]
        grads = [g for g in ember.autograd.grad(diff, wanted, ws, allow_unused=True)]
    return outs + grads


def _same(fn, *arrays, gpu, grad=True, rtol=1e-12):
    cpu = _run(fn, arrays, "cpu", grad)
    dev = _run(fn, arrays, "cuda", grad)
    assert len(cpu) == len(dev)
    for c, d in zip(cpu, dev):
        if c is None:
            assert d is None
            continue
        assert type(d._data) is gpu.ndarray and d.dtype == c.dtype and d.shape == c.shape
        np.testing.assert_allclose(d.detach().cpu().numpy(), c.detach().numpy(), rtol=rtol, atol=1e-12, equal_nan=True)


_X = np.random.default_rng(0).standard_normal((4, 5)) / 3  # thirds: not exact in float32
_I = np.array([[0, 1, 0, 3, 3], [2, 2, 0, 1, 3]])


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "sum", "mean"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self, gpu):
    """amax/amin on CuPy's float atomics rounded float64 through float32, so the gradient's ties were lost (NaN)."""
    src = _X[:2].copy()
    src[0, 1] = src[0, 0]  # a tie
    _same(lambda x, s: x.scatter_reduce(1, ember.tensor(_I[:, :4], device=x.device), s, reduce,
                                        include_self=include_self), _X[:2, :4].copy(), src[:, :4], gpu=gpu)


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean"])
def test_index_reduce(reduce, gpu):
    x = _X.copy()
    x[1, 2] = 0.0
    _same(lambda a, s: a.index_reduce(0, ember.tensor([0, 2, 0, 0], device=a.device), s, reduce), x, _X[::-1].copy(),
          gpu=gpu)


def test_scatter_reduce_nan_and_integers(gpu):
    x = _X[:2].copy()
    x[1, 3] = np.nan
    _same(lambda a: a.scatter_reduce(1, ember.tensor(_I, device=a.device), a * 2, "amax"), x, gpu=gpu, grad=False)
    xi = (np.arange(10).reshape(2, 5) - 4).astype(np.int64)
    for reduce in ("prod", "amax", "amin", "sum"):
        _same(lambda a: a.scatter_reduce(1, ember.tensor(_I, device=a.device), a + 1, reduce), xi, gpu=gpu)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_ties_and_nan(name, gpu):
    x = np.array([[1.0, 3.0, 3.0, 2.0, np.nan, 5.0, 1.0], [4.0, 4.0, -1.0, 4.0, 7.0, 7.0, 0.0]])
    _same(lambda a: tuple(getattr(a, name)(1)), x, gpu=gpu)
    _same(lambda a: tuple(getattr(ember, name)(a, 0)), x.T.copy(), gpu=gpu)
    _same(lambda a: tuple(getattr(a, name)(0)), np.array([3, 1, 3, 5, 2]), gpu=gpu)


def test_logcumsumexp_wide_range(gpu):
    x = np.array([[-1000.0, 0.0, 1000.0, -np.inf, 3.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    _same(lambda a: a.logcumsumexp(1), x, gpu=gpu, grad=False)
    _same(lambda a: a.logcumsumexp(0), _X, gpu=gpu)


def test_embedding_bag_max(gpu):
    """The winning row was found by comparing with CuPy's float32-rounded maxima: none matched, and the gather
    took the sentinel index (index 6 is out of bounds for dimension 0 with size 6)."""
    w = np.random.default_rng(2).standard_normal((7, 3)) / 3
    w[5, 1] = w[4, 1]  # a tie inside a bag
    idx = np.array([1, 2, 4, 5, 4, 3])
    _same(lambda t: F.embedding_bag(ember.tensor(idx, device=t.device), t, ember.tensor([0, 2, 2], device=t.device),
                                    mode="max"), w, gpu=gpu)
    w[2, 0] = np.nan
    _same(lambda t: F.embedding_bag(ember.tensor(idx, device=t.device), t, ember.tensor([0, 2], device=t.device),
                                    mode="max"), w, gpu=gpu, grad=False)


@pytest.mark.parametrize("dtype", [ember.complex128, ember.complex64, ember.int8, ember.int16, ember.uint8,
                                   ember.float16])
def test_accumulating_writes_in_dtypes_without_atomics(dtype, gpu):
    """index_put_(accumulate=True) and index_add on dtypes CuPy's add.at refuses."""
    def run(dev):
        x = ember.zeros(4, 2, dtype=dtype, device=dev)
        v = ember.ones(3, 2, dtype=dtype, device=dev)
        x.index_put_((ember.tensor([0, 3, 0], device=dev),), v, accumulate=True)
        return x.index_add(0, ember.tensor([1, 1, 2], device=dev), v).cpu().numpy()
    np.testing.assert_array_equal(run("cuda"), run("cpu"))


def test_lstsq_results_stay_on_the_device(gpu):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    for driver in ("gelsd", "gelsy"):
        cpu = ember.linalg.lstsq(ember.tensor(a), ember.tensor(b), driver=driver)
        dev = ember.linalg.lstsq(ember.tensor(a, device="cuda"), ember.tensor(b, device="cuda"), driver=driver)
        for c, d in zip(cpu, dev):
            assert type(d._data) is gpu.ndarray and d.dtype == c.dtype and d.shape == c.shape
            np.testing.assert_allclose(d.cpu().numpy(), c.numpy(), rtol=1e-10, atol=1e-12)


def test_solve_broadcasts_batches(gpu):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    _same(lambda x, y: ember.linalg.solve(x, y), a, rng.standard_normal((2, 3, 4)), gpu=gpu, rtol=1e-10)
    _same(lambda x, y: ember.linalg.solve(x, y), np.stack([a, a.T]), rng.standard_normal((3, 1)), gpu=gpu,
          rtol=1e-10)
    for dev in ("cpu", "cuda"):  # the same error on both
        with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\)"):
            ember.linalg.solve(ember.tensor(np.stack([a, a, a]), device=dev),
                               ember.tensor(np.ones((2, 3, 1)), device=dev))


def test_polygamma_on_the_device(gpu):
    _same(lambda a: ember.polygamma(2, a), np.array([0.5, 1.5, 3.0]), gpu=gpu, rtol=1e-10)
    _same(lambda a: a.digamma(), np.array([0.5, 1.5, 3.0]), gpu=gpu, rtol=1e-10)


def test_host_values_written_into_device_tensors(gpu):
    b = ember.zeros(4, device="cuda")
    b[1:3] = ember.tensor([5.0, 6.0])  # a basic slice: CuPy fills it with host scalars only
    b[ember.tensor([0, 3])] = ember.tensor([1.0, 2.0])  # an index array
    b[..., :1] += ember.tensor(1.0)  # a 0-dim CPU tensor goes with any device
    assert type(b._data) is gpu.ndarray and b.tolist() == [2.0, 5.0, 6.0, 2.0]
    c = ember.zeros(3)
    c[1:] = ember.tensor([7.0, 8.0], device="cuda")  # and the other way
    assert type(c._data) is np.ndarray and c.tolist() == [0.0, 7.0, 8.0]
