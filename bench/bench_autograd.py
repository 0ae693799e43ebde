"""Autograd benchmarks: graph recording and backward on chains of small ops."""
import numpy as np

from bench.runner import bench

_SMALL = np.random.default_rng(0).standard_normal(16).astype(np.float32)


def _chain(lib, rounds):
    """rounds x (mul, add, tanh, mul, sub) on a 16-element tensor, then backward."""
    x = lib.tensor(_SMALL, requires_grad=True)

    def step():
        y = x
        for _ in range(rounds):
            y = (y * 1.01 + 0.1).tanh() - y * 0.5
        y.sum().backward()
        x.grad = None
    return step


@bench("autograd")
def chain_100_small_ops_fwd_bwd(lib):
    return _chain(lib, 25)


@bench("autograd")
def chain_1000_small_ops_fwd_bwd(lib):
    """A long graph: what Python's garbage collector costs while it is alive shows here."""
    return _chain(lib, 250)


@bench("autograd")
def mlp_like_fwd_bwd_64x256(lib):
    rng = np.random.default_rng(5)
    x = lib.tensor(rng.standard_normal((64, 256)).astype(np.float32))
    w1 = lib.tensor(rng.standard_normal((256, 256)).astype(np.float32) * 0.05, requires_grad=True)
    w2 = lib.tensor(rng.standard_normal((256, 10)).astype(np.float32) * 0.05, requires_grad=True)

    def step():
        h = (x @ w1).tanh()
        loss = (h @ w2).exp().mean()
        loss.backward()
        w1.grad = None
        w2.grad = None
    return step


def _forward_ad(lib):
    """The library's autograd.forward_ad module (imported by name: torch and ember lay it out alike)."""
    import importlib
    return importlib.import_module(lib.__name__ + ".autograd.forward_ad")


@bench("autograd")
def jvp_forward_mode_mlp_64x256(lib):
    """Forward-mode AD: the tangent of an MLP (Linear-ReLU-Linear-Tanh-Linear) for one input direction."""
    fwd = _forward_ad(lib)
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.Tanh(), nn.Linear(512, 10))
    rng = np.random.default_rng(6)
    x = lib.tensor(rng.standard_normal((64, 256)).astype(np.float32))
    t = lib.tensor(rng.standard_normal((64, 256)).astype(np.float32))

    def step():
        with fwd.dual_level():
            return fwd.unpack_dual(model(fwd.make_dual(x, t))).tangent
    return step


@bench("autograd")
def jvp_forward_mode_100_small_ops(lib):
    """Forward-mode AD through a chain of 100 small elementwise ops (the formulas' per-op cost)."""
    fwd = _forward_ad(lib)
    x = lib.tensor(_SMALL)
    t = lib.tensor(_SMALL[::-1].copy())

    def step():
        with fwd.dual_level():
            y = fwd.make_dual(x, t)
            for _ in range(25):
                y = (y * 1.01 + 0.1).tanh() - y * 0.5
            return fwd.unpack_dual(y).tangent
    return step
