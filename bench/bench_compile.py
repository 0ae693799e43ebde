"""ember.compile (NOTE [ Compiled regions ]): ember's compiled code against torch's eager code, the workloads of
bench_autograd and bench_train with ember's function or model compiled (compare with those rows for the gain over
ember's eager runs). The first call (capture + verification) is not timed: `first_call` reports it."""
import time

from bench import bench_autograd, bench_train
from bench.runner import bench


def _compiled(lib, fn):
    return fn if lib.__name__ != "ember" else lib.compile(fn)


@bench("compile")
def chain_1000_small_ops_fwd_bwd(lib):
    """bench_autograd's chain of 1000 small ops with its backward, the chain compiled."""
    x = lib.tensor(bench_autograd._SMALL, requires_grad=True)

    def chain(y):
        for _ in range(250):
            y = (y * 1.01 + 0.1).tanh() - y * 0.5
        return y.sum()
    f = _compiled(lib, chain)

    def step():
        f(x).backward()
        x.grad = None
    return step


def _train(lib, build):
    """A bench_train workload with its model compiled."""
    bench_train.COMPILED[0] = True
    try:
        return build(lib)
    finally:
        bench_train.COMPILED[0] = False


@bench("compile")
def mlp_sgd(lib):
    return _train(lib, bench_train.mlp_sgd)


@bench("compile")
def cnn_adam(lib):
    return _train(lib, bench_train.cnn_adam)


@bench("compile")
def transformer_adamw(lib):
    return _train(lib, bench_train.transformer_adamw)


def first_call(lib):
    """Seconds of the first call (capture + verification) of each compiled workload above."""
    out = {}
    for name, fn in (("chain", chain_1000_small_ops_fwd_bwd), ("mlp", mlp_sgd), ("cnn", cnn_adam),
                     ("transformer", transformer_adamw)):
        step = fn(lib)
        t = time.perf_counter()
        step()
        out[name] = time.perf_counter() - t
    return out
