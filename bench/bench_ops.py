"""Op benchmarks: per-op overhead on small tensors and throughput on large ones."""
import numpy as np

from bench.runner import bench


def _t(lib, arr, requires_grad=False):
    return lib.tensor(arr, requires_grad=requires_grad)


_SMALL = np.random.default_rng(0).standard_normal(16).astype(np.float32)
_BIG = np.random.default_rng(1).standard_normal(4 * 1024 * 1024).astype(np.float32)


@bench("overhead")
def add_16(lib):
    a, b = _t(lib, _SMALL), _t(lib, _SMALL)
    return lambda: a + b


@bench("overhead")
def mul_scalar_16(lib):
    a = _t(lib, _SMALL)
    return lambda: a * 2.0


@bench("overhead")
def exp_16(lib):
    a = _t(lib, _SMALL)
    return lambda: lib.exp(a)


@bench("overhead")
def add_16_requires_grad(lib):
    a, b = _t(lib, _SMALL, True), _t(lib, _SMALL)
    return lambda: a + b


@bench("overhead")
def mul_16_requires_grad(lib):
    a, b = _t(lib, _SMALL, True), _t(lib, _SMALL, True)
    return lambda: a * b


@bench("overhead")
def inplace_add_16(lib):
    a, b = _t(lib, _SMALL), _t(lib, _SMALL)
    return lambda: a.add_(b)


@bench("overhead")
def getitem_int_16(lib):
    a = _t(lib, _SMALL.reshape(4, 4))
    return lambda: a[1]


@bench("large")
def exp_4M(lib):
    a = _t(lib, _BIG)
    return lambda: lib.exp(a)


@bench("large")
def add_4M(lib):
    a, b = _t(lib, _BIG), _t(lib, _BIG)
    return lambda: a + b


@bench("large")
def sum_4M(lib):
    a = _t(lib, _BIG)
    return lambda: a.sum()


@bench("large")
def matmul_1024(lib):
    rng = np.random.default_rng(2)
    a = _t(lib, rng.standard_normal((1024, 1024)).astype(np.float32))
    b = _t(lib, rng.standard_normal((1024, 1024)).astype(np.float32))
    return lambda: a @ b


@bench("large")
def index_rows_1000_of_10000x64(lib):
    rng = np.random.default_rng(3)
    a = _t(lib, rng.standard_normal((10000, 64)).astype(np.float32))
    idx = lib.tensor(rng.integers(0, 10000, 1000))
    return lambda: a[idx]


@bench("large")
def bool_mask_1M(lib):
    a = _t(lib, _BIG[: 1 << 20])
    m = a > 0
    return lambda: a[m]


@bench("large")
def cat_8x_256x256(lib):
    rng = np.random.default_rng(4)
    xs = [_t(lib, rng.standard_normal((256, 256)).astype(np.float32)) for _ in range(8)]
    return lambda: lib.cat(xs, dim=0)
