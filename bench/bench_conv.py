"""Convolution and pooling benchmarks: forward, and forward + backward (a training step's share), on small-CNN
shapes."""
import numpy as np

from bench.runner import bench


def _t(lib, shape, seed, requires_grad, scale=1.0):
    arr = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    return lib.tensor(arr, requires_grad=requires_grad)


def _conv(lib, shape, cout, stride=1, k=3, backward=False):
    x = _t(lib, shape, 0, backward)
    w = _t(lib, (cout, shape[1], k, k), 1, backward, 0.1)
    b = _t(lib, (cout,), 2, backward)
    conv2d = lib.nn.functional.conv2d
    pad = k // 2
    if not backward:
        return lambda: conv2d(x, w, b, stride=stride, padding=pad)

    def step():
        y = conv2d(x, w, b, stride=stride, padding=pad)
        y.backward(y)
        x.grad = w.grad = b.grad = None
    return step


def _pool(lib, shape, fn, backward=False):
    x = _t(lib, shape, 0, backward)
    F = lib.nn.functional
    op = {"max2": lambda t: F.max_pool2d(t, 2), "avg2": lambda t: F.avg_pool2d(t, 2),
          "max3s2": lambda t: F.max_pool2d(t, 3, 2, 1), "gap": lambda t: F.adaptive_avg_pool2d(t, 1)}[fn]
    if not backward:
        return lambda: op(x)

    def step():
        y = op(x)
        y.backward(y)
        x.grad = None
    return step


_CONVS = {"16x32x32_to16": ((32, 16, 32, 32), 16, 1, 3), "32x16x16_to32": ((32, 32, 16, 16), 32, 1, 3),
          "64x8x8_to64": ((32, 64, 8, 8), 64, 1, 3), "16x32x32_to32_s2": ((32, 16, 32, 32), 32, 2, 3),
          "32x26x26_to64_n64": ((64, 32, 26, 26), 64, 1, 3), "64x16x16_to64_1x1": ((32, 64, 16, 16), 64, 1, 1)}
_POOLS = {"max2": (32, 32, 16, 16), "avg2": (32, 32, 16, 16), "max3s2": (32, 32, 16, 16), "gap": (64, 32, 28, 28)}


def _register():
    # one forward and one forward + backward benchmark per shape, named after it
    for name, (shape, cout, stride, k) in _CONVS.items():
        for backward in (False, True):
            def fn(lib, shape=shape, cout=cout, stride=stride, k=k, backward=backward):
                return _conv(lib, shape, cout, stride, k, backward)
            fn.__name__ = f"conv2d_{name}_{'fwd_bwd' if backward else 'fwd'}"
            bench("conv")(fn)
    for name, shape in _POOLS.items():
        for backward in (False, True):
            def fn(lib, shape=shape, name=name, backward=backward):
                return _pool(lib, shape, name, backward)
            fn.__name__ = f"pool_{name}_{'x'.join(map(str, shape[1:]))}_{'fwd_bwd' if backward else 'fwd'}"
            bench("pool")(fn)


_register()
