"""Optimizer steps: the parameters of an MLP 784-1024-1024-10 with random gradients, and many small tensors."""
import numpy as np

from bench.runner import bench

_MLP = [(1024, 784), (1024,), (1024, 1024), (1024,), (10, 1024), (10,)]
# a model of many small layers (norms, biases, small projections): per-parameter overhead dominates
_SMALL = [(64, 64), (64,), (64,)] * 60


def _params(lib, shapes, seed=0):
    rng = np.random.default_rng(seed)
    ps = []
    for s in shapes:
        p = lib.tensor(rng.standard_normal(s).astype(np.float32) * 0.05, requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(s).astype(np.float32))
        ps.append(p)
    return ps


def _step(lib, shapes, name, **kwargs):
    opt = getattr(lib.optim, name)(_params(lib, shapes), **kwargs)
    return opt.step


@bench("optim")
def sgd_momentum_mlp(lib):
    return _step(lib, _MLP, "SGD", lr=0.01, momentum=0.9)


@bench("optim")
def adam_mlp(lib):
    return _step(lib, _MLP, "Adam", lr=1e-3)


@bench("optim")
def adamw_mlp(lib):
    return _step(lib, _MLP, "AdamW", lr=1e-3)


@bench("optim")
def adam_amsgrad_mlp(lib):
    return _step(lib, _MLP, "Adam", lr=1e-3, amsgrad=True)


@bench("optim")
def rmsprop_mlp(lib):
    return _step(lib, _MLP, "RMSprop", lr=1e-3)


@bench("optim")
def sgd_momentum_180_small(lib):
    return _step(lib, _SMALL, "SGD", lr=0.01, momentum=0.9)


@bench("optim")
def adam_180_small(lib):
    return _step(lib, _SMALL, "Adam", lr=1e-3)


@bench("optim")
def zero_grad_mlp(lib):
    opt = lib.optim.SGD(_params(lib, _MLP), lr=0.01)
    params = [p for g in opt.param_groups for p in g["params"]]
    grads = [p.grad for p in params]

    def run():
        for p, g in zip(params, grads):
            p.grad = g
        opt.zero_grad()
    return run
