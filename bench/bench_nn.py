"""nn.functional kernel benchmarks: forward + backward on typical training shapes (float32)."""
import numpy as np

from bench.runner import bench

_RNG = np.random.default_rng(7)
_ARR = {s: _RNG.standard_normal(s).astype(np.float32)
        for s in [(16, 128, 256), (128, 1024), (128, 1000), (32, 16, 32, 32), (32, 64, 8, 8)]}
_GRAD = {s: _RNG.standard_normal(s).astype(np.float32) for s in _ARR}


def _leaves(*tensors):
    """Resets the leaves' .grad after each step, as a training loop's zero_grad() does."""
    def clear():
        for t in tensors:
            t.grad = None
    return clear


def _layer_norm(shape):
    def make(lib):
        n = shape[-1]
        x = lib.tensor(_ARR[shape], requires_grad=True)
        w = lib.tensor(np.full(n, 1.1, np.float32), requires_grad=True)
        b = lib.tensor(np.zeros(n, np.float32), requires_grad=True)
        gy = lib.tensor(_GRAD[shape])
        F, clear = lib.nn.functional, _leaves(x, w, b)

        def step():
            F.layer_norm(x, (n,), w, b).backward(gy)
            clear()
        return step
    return make


def _batch_norm(shape):
    """Training-mode batch norm (batch statistics, running statistics updated), forward and backward."""
    def make(lib):
        c = shape[1]
        x = lib.tensor(_ARR[shape], requires_grad=True)
        w = lib.tensor(np.full(c, 1.1, np.float32), requires_grad=True)
        b = lib.tensor(np.zeros(c, np.float32), requires_grad=True)
        rm, rv = lib.zeros(c), lib.ones(c)
        gy = lib.tensor(_GRAD[shape])
        F, clear = lib.nn.functional, _leaves(x, w, b)

        def step():
            F.batch_norm(x, rm, rv, w, b, training=True).backward(gy)
            clear()
        return step
    return make


def _activation(name, shape, **kwargs):
    def make(lib):
        x = lib.tensor(_ARR[shape], requires_grad=True)
        gy = lib.tensor(_GRAD[shape])
        fn, clear = getattr(lib.nn.functional, name), _leaves(x)

        def step():
            fn(x, **kwargs).backward(gy)
            clear()
        return step
    return make


def _register(name, make):
    make.__name__ = name
    bench("nn")(make)


_register("layer_norm_16x128x256_fwd_bwd", _layer_norm((16, 128, 256)))
_register("layer_norm_128x1024_fwd_bwd", _layer_norm((128, 1024)))
_register("batch_norm_32x16x32x32_fwd_bwd", _batch_norm((32, 16, 32, 32)))
_register("batch_norm_32x64x8x8_fwd_bwd", _batch_norm((32, 64, 8, 8)))
_register("gelu_128x1024_fwd_bwd", _activation("gelu", (128, 1024)))
_register("gelu_tanh_128x1024_fwd_bwd", _activation("gelu", (128, 1024), approximate="tanh"))
_register("elu_128x1024_fwd_bwd", _activation("elu", (128, 1024)))
_register("softplus_128x1024_fwd_bwd", _activation("softplus", (128, 1024)))


@bench("nn")
def gelu_128x1024_fwd(lib):
    x = lib.tensor(_ARR[(128, 1024)])
    F = lib.nn.functional
    return lambda: F.gelu(x)


@bench("nn")
def cross_entropy_128x1000_fwd_bwd(lib):
    x = lib.tensor(_ARR[(128, 1000)], requires_grad=True)
    t = lib.tensor(np.random.default_rng(8).integers(0, 1000, 128))
    F, clear = lib.nn.functional, _leaves(x)

    def step():
        F.cross_entropy(x, t).backward()
        clear()
    return step
