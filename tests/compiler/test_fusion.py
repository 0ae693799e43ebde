"""Elementwise fusion of compiled programs (NOTE [ Elementwise fusion ]): runs of elementwise steps become one
generated kernel with the steps' results, forward and backward; without numba the program is left as it was."""
import numpy as np
import pytest

import ember
from ember._backend import jit
from ember.compiler import _fusion, _region

pytestmark = pytest.mark.skipif(not jit.ENABLED[0], reason="numba is not installed or EMBER_JIT=0")


def _ops(f, part="fwd"):
    (prog,) = [p for p in f.cache.values() if isinstance(p, _region._Program)]
    return [step[0].name for step in getattr(prog, part)]


def _arith(x, w):
    y = x
    for _ in range(4):
        y = (y * w - 0.25) / 1.5 + y * y
    return y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_arithmetic_fuses_and_agrees_with_numpy_bit_for_bit(dtype):
    f = ember.compile(_arith)
    rng = np.random.default_rng(0)
    w = ember.tensor(rng.standard_normal((3, 5)).astype(dtype))
    for _ in range(3):
        x = ember.tensor(rng.standard_normal((3, 5)).astype(dtype))
        np.testing.assert_array_equal(f(x, w).numpy(), _arith(x, w).numpy())  # + - * / in the same order
    assert _ops(f) == ["fused_elementwise"]


def test_forward_and_backward_fuse_with_eager_gradients():
    def chain(x, w):
        y = x
        for _ in range(6):
            y = (y * w + 0.1).tanh() - y * 0.5
        return y.sum()
    f = ember.compile(chain)
    rng = np.random.default_rng(1)
    w = ember.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    for _ in range(3):
        x = ember.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
        got, = ember.autograd.grad(f(x, w), [x])
        want, = ember.autograd.grad(chain(x, w), [x])
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert _ops(f) == ["fused_elementwise", "sum"]
    assert "fused_elementwise" in _ops(f, "bwd")


def test_what_does_not_fuse():
    def mixed(x, b):
        y = (x * 2 + 1) * 3  # (4, 3): fused
        z = y + b            # broadcast of b (3,): its own step
        return (z.exp() - 1).abs() > 2  # comparison: not fused
    f = ember.compile(mixed)
    x, b = ember.randn(4, 3), ember.randn(3)
    f(x, b)
    assert f(x, b).tolist() == mixed(x, b).tolist()
    assert _ops(f) == ["fused_elementwise", "add", "fused_elementwise", "gt"]

    jit.ENABLED[0] = False
    try:
        g = ember.compile(mixed)
        g(x, b)
        assert "fused_elementwise" not in _ops(g)
    finally:
        jit.ENABLED[0] = True


def test_kernels_compile_in_memory_where_the_cache_cannot_be_written(monkeypatch):
    def unwritable():
        raise PermissionError("read-only")
    monkeypatch.setattr(_fusion, "_cache_dir", unwritable)
    monkeypatch.setattr(_fusion, "_KERNELS", {})
    f = ember.compile(lambda x: (x * 3.0 - 1.0) * x)
    x = ember.randn(5)
    np.testing.assert_array_equal(f(x).numpy(), ((x * 3.0 - 1.0) * x).numpy())
    assert _ops(f) == ["fused_elementwise"]
