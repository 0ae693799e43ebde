"""Training-style loops keep memory flat: graphs and saved tensors are released by reference counting alone."""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import Function


class Tanhish(Function):
    """x / (1 + |x|), saving its input and output (custom functions must not leak either)."""

    @staticmethod
    def forward(ctx, x):
        y = x / (x.abs() + 1)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, _ = ctx.saved_tensors
        d = x.abs() + 1
        return g / (d * d)


@pytest.fixture
def no_gc():
    """Reference cycles would survive here: everything must be freed by reference counting."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def _model():
    rng = np.random.default_rng(0)
    w1 = ember.tensor(rng.standard_normal((8, 16)) * 0.1, dtype=ember.float32, requires_grad=True)
    w2 = ember.tensor(rng.standard_normal((16, 1)) * 0.1, dtype=ember.float32, requires_grad=True)
    x = ember.tensor(rng.standard_normal((32, 8)), dtype=ember.float32)
    target = ember.tensor(rng.standard_normal((32, 1)), dtype=ember.float32)
    return w1, w2, x, target


def _step(w1, w2, x, target, lr=0.01):
    h = Tanhish.apply(x @ w1)
    out = (h * 2).exp() @ w2
    loss = ((out - target) * (out - target)).mean()
    loss.backward()
    with ember.no_grad():
        for w in (w1, w2):
            w.sub_(w.grad * lr)
            w.grad = None
    return loss.item()


def test_nodes_are_freed_after_backward_and_drop(no_gc):
    w1, w2, x, target = _model()
    h = Tanhish.apply(x @ w1)
    out = (h * 2).exp() @ w2
    loss = ((out - target) * (out - target)).mean()
    nodes = [weakref.ref(t.grad_fn) for t in (h, out, loss)]
    del h, out
    loss.backward()
    del loss
    assert all(n() is None for n in nodes)


def test_saved_tensors_are_released_by_backward(no_gc):
    w1, _, x, _ = _model()
    h = (x @ w1).exp()      # saved by the multiplication below
    y = Tanhish.apply(h)    # saved by the custom function (its input and output)
    loss = (h * y).sum()
    saved = [weakref.ref(h), weakref.ref(y)]
    del h, y
    assert all(s() is not None for s in saved)  # the graph keeps them for backward
    loss.backward()
    assert all(s() is None for s in saved)  # backward released them while loss (and its graph) lives on
    assert loss.grad_fn is not None


def test_retain_graph_keeps_saved_tensors_until_the_graph_goes(no_gc):
    w1, _, x, _ = _model()
    h = (x @ w1).exp()
    loss = (h * h).sum()
    ref = weakref.ref(h)
    del h
    loss.backward(retain_graph=True)
    assert ref() is not None
    loss.backward()
    assert ref() is None


def _fill_tuple_free_lists():
    """CPython keeps up to 2000 freed small tuples of each size for reuse. Some allocation paths bypass those free
    lists while frees refill them, so they grow by about one tuple per training step until full: bounded, but
    tracemalloc counts it as growth. Filling them first leaves only real growth to measure."""
    junk = [tuple([i] * n) for n in range(1, 4) for i in range(2000)]
    del junk


def _growth(step, warmup=50, iterations=200):
    """Bytes still allocated after `iterations` more steps than after the warm-up."""
    tracemalloc.start()
    try:
        _fill_tuple_free_lists()
        for _ in range(warmup):  # caches, lazily imported modules, first-use allocations
            step()
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(iterations):
            step()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return after - before


def test_training_loop_memory_is_flat(no_gc):
    w1, w2, x, target = _model()
    losses = []
    growth = _growth(lambda: losses.append(_step(w1, w2, x, target)))
    assert losses[-1] < losses[0]  # it trains
    assert growth < 32 * 1024, f"memory grew by {growth} bytes over 200 iterations"


def test_autograd_grad_loop_memory_is_flat(no_gc):
    w1, w2, x, target = _model()

    def step():
        h = Tanhish.apply(x @ w1)
        loss = ((h @ w2 - target) * (h @ w2 - target)).mean()
        g1, g2 = ember.autograd.grad(loss, (w1, w2), create_graph=True)
        penalty = (g1 * g1).sum() + (g2 * g2).sum()
        penalty.backward()
        w1.grad = w2.grad = None

    growth = _growth(step)
    assert growth < 32 * 1024, f"memory grew by {growth} bytes over 200 iterations"


def test_growth_measure_catches_a_leak(no_gc):
    w1, w2, x, target = _model()
    kept = []

    def leaky_step():
        h = (x @ w1).exp()
        loss = (h @ w2).sum()
        loss.backward()
        kept.append(loss)  # the graph of every step stays alive
        w1.grad = w2.grad = None

    assert _growth(leaky_step) > 32 * 1024
