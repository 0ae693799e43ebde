"""bfloat16 on 'cuda': tensors, ops against the CPU's bfloat16 results, autocast, is_bf16_supported, and the dtypes
CuPy cannot hold (NOTE [ bfloat16 on CUDA ] in ember/_backend).

Without a GPU these run on the fake CuPy of tests/cuda/fake_cupy.py, declared to be CuPy 14 (the first CuPy with
bfloat16); on a GPU they run on real CuPy.
"""
import types

import ml_dtypes
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _backend, nn

NUMPY_BF16 = np.lib.NumpyVersion(np.__version__) >= "2.1.2"


@pytest.fixture
def cp(gpu):
    """A CuPy that holds bfloat16 (the fake stands for CuPy 14)."""
    if getattr(gpu, "IS_FAKE", False) and int(gpu.__version__.split(".")[0]) < 14:
        gpu.__version__ = "14.2.0+fake"
    if _backend.cupy_bf16_missing(gpu) is not None:
        pytest.skip(_backend.cupy_bf16_missing(gpu))
    return gpu


def _on_device(t, cp):
    return type(t._data) is cp.ndarray and t.device.type == "cuda"


def _bf16(*shape, seed=0):
    return ember.from_numpy(np.random.default_rng(seed).standard_normal(shape).astype(np.float32)).bfloat16()


# ------------------------------------------------------------------------------------------ tensors
@pytest.mark.parametrize("make", [
    lambda: ember.zeros(2, 3, dtype=ember.bfloat16, device="cuda"),
    lambda: ember.ones(2, 3, dtype=ember.bfloat16, device="cuda"),
    lambda: ember.full((2, 3), 1.5, dtype=ember.bfloat16, device="cuda"),
    lambda: ember.empty(2, 3, dtype=ember.bfloat16, device="cuda"),
    lambda: ember.arange(6, dtype=ember.bfloat16, device="cuda"),
    lambda: ember.tensor([[1.0, 2.0]], dtype=ember.bfloat16, device="cuda"),
    lambda: ember.randn(2, 3, dtype=ember.bfloat16, device="cuda"),
    lambda: ember.rand(2, 3, dtype=ember.bfloat16, device="cuda"),
    lambda: ember.zeros_like(ember.ones(2, device="cuda"), dtype=ember.bfloat16),
    lambda: ember.ones(2, device="cuda").bfloat16(),
    lambda: ember.ones(2, device="cuda").to(ember.bfloat16),
    lambda: ember.ones(2, dtype=ember.bfloat16).cuda(),
    lambda: ember.ones(2).to("cuda", ember.bfloat16),
])
def test_factories_and_moves_make_bfloat16_device_arrays(make, cp):
    t = make()
    assert _on_device(t, cp) and t.dtype is ember.bfloat16 and t._data.dtype == np.dtype(ml_dtypes.bfloat16)


def test_round_trip_keeps_every_value(cp):
    x = ember.tensor([0.0, -0.0, 1.0, -2.5, 3.140625, 1e-3, 65504.0, 3.3895e38, float("inf"), float("nan")],
                     dtype=ember.bfloat16)
    y = x.cuda()
    assert _on_device(y, cp) and y.dtype is ember.bfloat16
    back = y.cpu()
    assert type(back._data) is np.ndarray and back.dtype is ember.bfloat16
    np.testing.assert_array_equal(back.numpy().view(np.uint16), x.numpy().view(np.uint16))  # bit for bit
    f = ember.randn(5, 4)
    on = f.cuda().bfloat16()  # cast on the device
    np.testing.assert_array_equal(on.cpu().float().numpy(), f.bfloat16().float().numpy())
    assert on.float().dtype is ember.float32 and _on_device(on.float(), cp)
    np.testing.assert_array_equal(on.float().cpu().numpy(), f.bfloat16().float().numpy())
    assert on.half().dtype is ember.float16 and on.double().dtype is ember.float64


def test_printing_item_and_tolist(cp):
    x = ember.tensor([[1.0, -2.5], [3.140625, 0.0078125]], dtype=ember.bfloat16)
    y = x.cuda()
    assert "device='cuda:0'" in repr(y) and "dtype=ember.bfloat16" in repr(y)
    assert str(y).replace(", device='cuda:0'", "") == str(x)
    assert y.tolist() == x.tolist() == [[1.0, -2.5], [3.140625, 0.0078125]]
    assert y[1, 0].item() == 3.140625


# ------------------------------------------------------------------------------------------ ops
OPS = {
    "add": lambda x, y, w: x + y,
    "sub_scalar": lambda x, y, w: x - 2.5,
    "mul_int": lambda x, y, w: 3 * x,
    "div": lambda x, y, w: x / (y.abs() + 1),
    "pow": lambda x, y, w: x.abs() ** 1.5,
    "exp": lambda x, y, w: x.exp(),
    "log": lambda x, y, w: (x.abs() + 0.5).log(),
    "tanh": lambda x, y, w: x.tanh(),
    "sigmoid": lambda x, y, w: x.sigmoid(),
    "relu": lambda x, y, w: F.relu(x),
    "gelu": lambda x, y, w: F.gelu(x),
    "silu": lambda x, y, w: F.silu(x),
    "clamp": lambda x, y, w: x.clamp(-0.5, 0.5),
    "where": lambda x, y, w: ember.where(x > 0, x, y),
    "eq": lambda x, y, w: x == y,
    "cat": lambda x, y, w: ember.cat([x, y]),
    "index": lambda x, y, w: x[ember.tensor([0, 2], device=x.device)],
    "matmul": lambda x, y, w: x @ y.t(),
    "mm": lambda x, y, w: ember.mm(x, w.t()),
    "bmm": lambda x, y, w: ember.bmm(x[None], y.t()[None]),
    "matmul_nd": lambda x, y, w: x.reshape(2, 2, 5) @ w.t(),
    "mv": lambda x, y, w: ember.mv(x, w[0]),
    "dot": lambda x, y, w: ember.dot(x[0], y[0]),
    "einsum": lambda x, y, w: ember.einsum("ij,kj->ik", x, w),
    "addmm": lambda x, y, w: ember.addmm(y[:, :3], x, w.t()),
    "linear": lambda x, y, w: F.linear(x, w),
    "linear_3d": lambda x, y, w: F.linear(x.reshape(2, 2, 5), w),
    "sum": lambda x, y, w: x.sum(),
    "sum_dim": lambda x, y, w: x.sum(1),
    "mean": lambda x, y, w: x.mean(0),
    "prod": lambda x, y, w: x.prod(1),
    "amax": lambda x, y, w: x.amax(1),
    "max_dim": lambda x, y, w: x.max(1).values,
    "argmax": lambda x, y, w: x.argmax(1),
    "std": lambda x, y, w: x.std(1),
    "norm": lambda x, y, w: x.norm(),
    "cumsum": lambda x, y, w: x.cumsum(1),
    "logsumexp": lambda x, y, w: x.logsumexp(1),
    "softmax": lambda x, y, w: F.softmax(x, 1),
    "log_softmax": lambda x, y, w: F.log_softmax(x, 1),
    "layer_norm": lambda x, y, w: F.layer_norm(x, (5,)),
    "mse_loss": lambda x, y, w: F.mse_loss(x, y),
    "cross_entropy": lambda x, y, w: F.cross_entropy(x, ember.tensor([0, 1, 2, 3], device=x.device)),
    "conv1d": lambda x, y, w: F.conv1d(x[None], w[:, :4, None]),
    "sdpa": lambda x, y, w: F.scaled_dot_product_attention(x[None], y[None], y[None]),
    "sort": lambda x, y, w: x.sort(1, descending=True).values,
    "argsort": lambda x, y, w: x.argsort(1),
    "topk": lambda x, y, w: x.topk(2, 1).indices,
    "kthvalue": lambda x, y, w: x.kthvalue(2, 1).values,
    "median": lambda x, y, w: x.median(),
    "median_dim": lambda x, y, w: x.median(1).indices,
    "mode": lambda x, y, w: x.round().mode(1).values,
    "unique": lambda x, y, w: x.round().unique(),
    "searchsorted": lambda x, y, w: ember.searchsorted(x.flatten().sort().values, y),
    # CuPy's where, clip, round and divmod kernels have no bfloat16 loop (they answer float32)
    "where_scalar": lambda x, y, w: ember.where(x > 0, x, 0.0),
    "masked_fill": lambda x, y, w: x.masked_fill(x > 0, -1.0),
    "clamp_tensor": lambda x, y, w: x.clamp(y, y + 1),
    "clamp_min": lambda x, y, w: x.clamp(min=0.1),
    "clip_": lambda x, y, w: x.clone().clip_(-0.2, 0.3),
    "round": lambda x, y, w: (x * 10).round(),
    "round_decimals": lambda x, y, w: x.round(decimals=1),
    "remainder": lambda x, y, w: x.remainder(0.3),
    "floor_divide": lambda x, y, w: x.floor_divide(0.3),
    "fmod": lambda x, y, w: x.fmod(0.3),
    "float_power": lambda x, y, w: x.abs().float_power(2),
    "isclose": lambda x, y, w: x.isclose(y, atol=0.5),
    "threshold": lambda x, y, w: F.threshold(x, 0.1, 2.0),
    "threshold_": lambda x, y, w: F.threshold(x.clone(), 0.1, 2.0, inplace=True),
    "hardswish": lambda x, y, w: F.hardswish(x * 4),
    "hardshrink": lambda x, y, w: F.hardshrink(x),
    "softshrink": lambda x, y, w: F.softshrink(x),
    "hardtanh": lambda x, y, w: F.hardtanh(x * 2),
    "relu6": lambda x, y, w: F.relu6(x * 8),
    "leaky_relu": lambda x, y, w: F.leaky_relu(x, 0.1),
    "elu": lambda x, y, w: F.elu(x),
    "nan_to_num": lambda x, y, w: (x / 0).nan_to_num(posinf=1.0, neginf=-1.0),
    "maximum": lambda x, y, w: ember.maximum(x, y),
    "sign": lambda x, y, w: x.sign(),
    "lerp": lambda x, y, w: x.lerp(y, 0.3),
    "cumprod": lambda x, y, w: x.cumprod(1),
    "var": lambda x, y, w: x.var(0),
    "tril": lambda x, y, w: x.tril(),
    "triu": lambda x, y, w: x.triu(1),
    "roll": lambda x, y, w: x.roll(1, 0),
    "gather": lambda x, y, w: x.gather(1, ember.tensor([[0], [1], [2], [4]], device=x.device)),
    # distinct indices: with repeated ones the devices may add in different orders, with different roundings
    "scatter_add": lambda x, y, w: x.scatter_add(1, ember.tensor([[0, 1], [1, 3], [2, 0], [4, 2]], device=x.device),
                                                 y[:, :2]),
    "index_add": lambda x, y, w: x.index_add(0, ember.tensor([3, 0, 1, 2], device=x.device), y),
    "max_pool1d": lambda x, y, w: F.max_pool1d(x[None], 2),
    "avg_pool1d": lambda x, y, w: F.avg_pool1d(x[None], 2),
    "batch_norm": lambda x, y, w: F.batch_norm(x, None, None, training=True),
    "group_norm": lambda x, y, w: F.group_norm(x[None], 2),
    "rms_norm": lambda x, y, w: F.rms_norm(x, (5,)),
    "embedding": lambda x, y, w: F.embedding(ember.tensor([2, 0, 2], device=x.device), x),
    "smooth_l1_loss": lambda x, y, w: F.smooth_l1_loss(x, y),
    "huber_loss": lambda x, y, w: F.huber_loss(x, y, delta=0.5),
}


@pytest.mark.parametrize("name", list(OPS))
def test_ops_match_the_cpus_bfloat16_results(name, cp):
    x, y, w = _bf16(4, 5, seed=1), _bf16(4, 5, seed=2), _bf16(3, 5, seed=3)
    want = OPS[name](x, y, w)
    got = OPS[name](x.cuda(), y.cuda(), w.cuda())
    assert _on_device(got, cp) and got.dtype is want.dtype
    np.testing.assert_array_equal(got.cpu().float().numpy(), want.float().numpy())


def test_linear_with_bias_matches_the_cpu_within_one_rounding(cp):
    # the GPU rounds the product to bfloat16 before adding the bias; the CPU rounds once
    x, w, b = _bf16(6, 5, seed=1), _bf16(3, 5, seed=2), _bf16(3, seed=3)
    want, got = F.linear(x, w, b), F.linear(x.cuda(), w.cuda(), b.cuda())
    assert _on_device(got, cp) and got.dtype is ember.bfloat16
    p, r = (x.float() @ w.float().t()).numpy(), want.float().numpy()
    # bfloat16's unit roundoff is 2^-8: |got - want| <= u |p| + u |got| + u |want|
    assert (np.abs(got.cpu().float().numpy() - r) <= 2 ** -8 * (np.abs(p) + 2 * np.abs(r) + 1e-6)).all()


def test_sorts_take_bfloat16_keys_in_float32_with_nan(cp):
    x = ember.tensor([[3.0, float("nan"), 1.0, 2.0, 1.0, -0.5]], dtype=ember.bfloat16)
    for t in (x, x.cuda()):
        assert t.sort(1).values.tolist()[0][:5] == [-0.5, 1.0, 1.0, 2.0, 3.0]
        assert t.sort(1).indices.tolist() == [[5, 2, 4, 3, 0, 1]]
        assert t.argsort(1, descending=True).tolist() == [[1, 0, 3, 2, 4, 5]]
        assert t.topk(2, 1).indices.tolist() == [[1, 0]]
        assert t.nanmedian().item() == 1.0 and np.isnan(t.median().item())
        assert t.unique().tolist()[:4] == [-0.5, 1.0, 2.0, 3.0] and t.unique().dtype is ember.bfloat16


def test_sorts_never_hand_bfloat16_to_cupy(cp, monkeypatch):
    """CuPy's Thrust/CUB sorts have no bfloat16 ("Unsupported dtype ID"): the fake refuses it as they do."""
    if not getattr(cp, "IS_FAKE", False):
        pytest.skip("checks what reaches the stand-in for CuPy")
    sorts = {np.sort, np.argsort, np.partition, np.argpartition, np.unique, np.searchsorted, np.lexsort}
    inner = cp.ndarray.__array_function__

    def strict(self, func, types, args, kwargs):
        if func in sorts and any(getattr(a, "dtype", None) == np.dtype(ml_dtypes.bfloat16) for a in args):
            raise TypeError("Unsupported dtype ID")
        return inner(self, func, types, args, kwargs)

    monkeypatch.setattr(cp.ndarray, "__array_function__", strict)
    x = _bf16(4, 9, seed=4).cuda()
    x.sort(1), x.argsort(0, descending=True), x.topk(2, 1), x.topk(8, 1), x.kthvalue(3, 1), x.median(), x.median(1)
    x.nanmedian(0), x.round().mode(1), x.round().unique(), x.round().unique(dim=0), x.msort()
    ember.searchsorted(x.flatten().sort().values, x[0])
    with pytest.raises(TypeError, match="Unsupported dtype ID"):  # the stand-in does refuse
        np.argsort(x._data)


def test_matmul_falls_back_to_float32_where_cupys_bfloat16_gemm_raises(cp, monkeypatch):
    if not getattr(cp, "IS_FAKE", False):
        pytest.skip("simulates a cuBLAS without bfloat16 GEMM")
    monkeypatch.setattr(_backend, "_native_bf16_gemm", [True])
    inner = cp.matmul

    def no_bf16_gemm(a, b, *args, **kwargs):
        if a.dtype == np.dtype(ml_dtypes.bfloat16):
            raise TypeError("dtype is not supported: bfloat16")
        return inner(a, b, *args, **kwargs)

    monkeypatch.setattr(cp, "matmul", no_bf16_gemm)
    x, w = _bf16(4, 5, seed=1), _bf16(3, 5, seed=2)
    got = x.cuda() @ w.cuda().t()
    assert _on_device(got, cp) and got.dtype is ember.bfloat16
    np.testing.assert_array_equal(got.cpu().float().numpy(), (x @ w.t()).float().numpy())
    assert _backend._native_bf16_gemm == [False]  # decided once
    np.testing.assert_array_equal(F.linear(x.cuda(), w.cuda()).cpu().float().numpy(), F.linear(x, w).float().numpy())


def test_training_step_in_bfloat16_matches_the_cpu(cp):
    def run(device):
        ember.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 8), nn.GELU(), nn.Linear(8, 3)).bfloat16().to(device)
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        x, target = _bf16(6, 5, seed=7).to(device), ember.tensor([0, 1, 2, 0, 1, 2], device=device)
        loss = F.cross_entropy(model(x).float(), target)
        loss.backward()
        opt.step()
        return loss, [p for p in model.parameters()]

    (lc, pc), (lg, pg) = run("cpu"), run("cuda")
    assert all(_on_device(p, cp) and p.dtype is ember.bfloat16 and p.grad.dtype is ember.bfloat16 for p in pg)
    np.testing.assert_allclose(lg.item(), lc.item(), rtol=1e-2)
    for a, b in zip(pg, pc):
        np.testing.assert_allclose(a.detach().cpu().float().numpy(), b.detach().float().numpy(), rtol=2e-2,
                                   atol=2e-2)


# ------------------------------------------------------------------------------------------ autocast
def test_autocast_on_cuda_runs_matmuls_in_bfloat16_and_keeps_float32_ops(cp):
    x, w = ember.randn(4, 5, device="cuda"), ember.randn(3, 5, device="cuda")
    img, k = ember.randn(1, 2, 6, 6, device="cuda"), ember.randn(3, 2, 3, 3, device="cuda")
    with ember.autocast("cuda", dtype=ember.bfloat16):
        assert ember.is_autocast_enabled("cuda") and ember.get_autocast_dtype("cuda") is ember.bfloat16
        lower = [x @ w.t(), ember.mm(x, w.t()), ember.bmm(x[None], w.t()[None]), F.linear(x, w),
                 F.linear(x, w, ember.zeros(3, device="cuda")), ember.addmm(ember.zeros(4, 3, device="cuda"), x, w.t()),
                 F.conv2d(img, k), F.conv1d(img[:, :, 0], k[:, :, 0])]
        assert all(_on_device(r, cp) and r.dtype is ember.bfloat16 for r in lower)
        low = (x @ w.t())
        target = ember.tensor([0, 1, 2, 0], device="cuda")
        kept = [F.softmax(low, 1), F.log_softmax(low, 1), low.exp(), ember.log(low), low.rsqrt(), low.sum(),
                low.sum(1), low.prod(), low.cumsum(1), low.logsumexp(1), low ** 2, low.pow(low), low.norm(),
                ember.linalg.vector_norm(low), ember.cdist(low, low), F.layer_norm(low, (3,)), F.mse_loss(low, low),
                F.cross_entropy(low, target), F.softplus(low)]
        assert all(_on_device(r, cp) and r.dtype is ember.float32 for r in kept)
        assert low.sum(dtype=ember.bfloat16).dtype is ember.bfloat16  # an explicit dtype wins
        assert (low + 1).dtype is ember.bfloat16 and low.relu().dtype is ember.bfloat16  # not on a list
        assert low.clone().exp_().dtype is ember.bfloat16  # in-place ops keep their tensor's dtype
    assert (x @ w.t()).dtype is ember.float32
    # the same product as the CPU's autocast computes
    with ember.autocast("cpu", dtype=ember.bfloat16):
        want = x.cpu() @ w.cpu().t()
    np.testing.assert_array_equal(lower[0].cpu().float().numpy(), want.float().numpy())


def test_autocast_gradients_come_back_in_float32(cp):
    lin = nn.Linear(5, 2).cuda()
    x = ember.randn(3, 5, device="cuda")
    with ember.autocast("cuda", dtype=ember.bfloat16):
        out = lin(x)
        loss = F.mse_loss(out, ember.zeros(3, 2, device="cuda"))
    assert out.dtype is ember.bfloat16 and loss.dtype is ember.float32
    loss.backward()
    assert lin.weight.grad.dtype is ember.float32 and _on_device(lin.weight.grad, cp)


# ------------------------------------------------------------------------------------------ support
def test_is_bf16_supported(cp):
    assert ember.cuda.is_bf16_supported() is True  # natively from compute capability 8.0, else emulated
    native = ember.cuda.get_device_capability()[0] >= 8
    assert ember.cuda.is_bf16_supported(including_emulation=False) is native
    if getattr(cp, "IS_FAKE", False):
        assert native  # the stand-in reports compute capability 8.0


def test_older_cupy_has_no_bfloat16(fake_gpu):
    fake_gpu.__version__ = "13.6.0"
    msg = r"bfloat16 tensors on device cuda need CuPy 14 or newer .*CuPy 13\.6\.0 has no bfloat16"
    with pytest.raises(RuntimeError, match=msg):
        ember.zeros(2, dtype=ember.bfloat16, device="cuda")
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, dtype=ember.bfloat16).cuda()
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, device="cuda").to(ember.bfloat16)
    assert ember.cuda.is_bf16_supported() is False
    with pytest.raises(RuntimeError, match="Current CUDA Device does not support bfloat16. Please switch dtype to "
                                           "float16."):
        ember.autocast("cuda", dtype=ember.bfloat16)
    assert ember.ones(2, device="cuda").half().dtype is ember.float16  # the rest of the GPU works


def test_what_cupy_needs_for_bfloat16(monkeypatch):
    assert _backend.cupy_bf16_missing(types.SimpleNamespace(__version__="13.6.0")) == \
        "CuPy 13.6.0 has no bfloat16 (CuPy 14 or newer has)"
    assert "CuPy 0 has no bfloat16" in _backend.cupy_bf16_missing(types.SimpleNamespace())
    monkeypatch.setattr(np, "__version__", "2.1.2")
    assert _backend.cupy_bf16_missing(types.SimpleNamespace(__version__="14.0.0rc1")) is None
    monkeypatch.setattr(np, "__version__", "2.0.2")
    assert _backend.cupy_bf16_missing(types.SimpleNamespace(__version__="14.2.0")) == \
        "CuPy's bfloat16 needs NumPy 2.1.2 or newer (NumPy 2.0.2 is installed)"


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "int4"])
def test_float8_and_other_ml_dtypes_are_refused_on_cuda_by_name(name, fake_gpu):
    a = np.zeros(3, getattr(ml_dtypes, name))
    msg = f"{name} tensors are not supported on device cuda: CuPy has no {name} type"
    with pytest.raises(TypeError, match=msg):
        _backend.to_device(a, ember.device("cuda"))
    with pytest.raises(TypeError, match=msg):
        _backend.check_cuda_dtype(a.dtype)
    _backend.check_cuda_dtype(np.dtype(np.float16))
