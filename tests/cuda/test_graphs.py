"""CUDA graphs (ember/cuda/graphs.py, NOTE [ CUDA graphs ]): capture and replay, the private memory pool, host
reads refused during capture, device checks of replays, whole training steps and make_graphed_callables.

Capturing needs a real GPU; what is decided on the host (errors, deferred checks, optimizers) runs everywhere.
"""
import copy

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember._backend import XP, deferred


def _real(gpu):
    if getattr(gpu, "IS_FAKE", False):
        pytest.skip("capturing a CUDA graph needs a GPU")


@pytest.fixture
def capturing(gpu):
    """The state during a capture, without capturing: where host decisions are checked."""
    deferred.CAPTURING[0] = []
    try:
        yield deferred.CAPTURING[0]
    finally:
        deferred.CAPTURING[0] = None


# ---------------- decided on the host ----------------

def test_host_reads_are_refused_while_capturing(capturing):
    x = ember.ones(3, device="cuda")
    assert ember.cuda.is_current_stream_capturing()
    for read in (lambda: x.sum().item(), lambda: x.cpu(), lambda: x.tolist(), lambda: repr(x),
                 lambda: ember.cuda.synchronize(), lambda: ember.cuda.current_stream().synchronize()):
        with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
            read()


def test_device_checks_made_while_capturing_go_to_the_graph(capturing):
    w = ember.randn(4, 2, device="cuda")
    F.embedding(ember.tensor([1, 7], device="cuda"), w)  # 7 is out of range: the check is recorded, not queued
    assert len(capturing) == 1 and not deferred._pending


def test_only_steps_without_host_state_may_be_captured(capturing):
    p = nn.Parameter(ember.ones(3, device="cuda"))
    p.grad = ember.ones(3, device="cuda")
    sgd = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    sgd.step()  # SGD: nothing on the host changes between steps once the momentum buffers exist
    with pytest.raises(RuntimeError, match="CUDA graph capture of step\\(\\) for an instance of Adam"):
        ember.optim.Adam([p], lr=0.1).step()


def test_make_graphed_callables_wants_tensor_arguments(gpu):
    with pytest.raises(TypeError, match="sample_args for each callable must contain only Tensors"):
        ember.cuda.make_graphed_callables(lambda x: x * 2, (3.0,))
    lin = nn.Linear(2, 2).to("cuda")
    lin.register_forward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Modules must not have hooks registered"):
        ember.cuda.make_graphed_callables(lin, (ember.ones(1, 2, device="cuda"),))


def test_replay_without_capture_and_double_capture_are_errors(gpu):
    g = ember.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="without a matching capture_begin"):
        g.capture_end()


# ---------------- on a GPU ----------------

def test_capture_and_replay(gpu):
    _real(gpu)
    x = ember.zeros(1000, device="cuda")
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        y = (x * 2 + 1).exp().sum()
    for k in range(3):
        x.copy_(ember.full((1000,), float(k) / 10, device="cuda"))
        g.replay()
        assert y.item() == pytest.approx(1000 * np.exp(2 * k / 10 + 1), rel=1e-5)


def test_memory_of_the_graph_is_private(gpu):
    _real(gpu)
    x = ember.arange(4096, dtype=ember.float32, device="cuda")
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        tmp = x * 3        # freed inside the capture: its memory stays the graph's
        y = tmp + 1
        del tmp
    others = [ember.full((4096,), -5.0, device="cuda") for _ in range(8)]  # eager allocations after capture
    g.replay()
    np.testing.assert_array_equal(y.cpu().numpy(), np.arange(4096, dtype=np.float32) * 3 + 1)
    assert all((o == -5.0).all().item() for o in others)
    g2 = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g2, pool=g.pool()):  # a shared pool
        z = y * 2
    g.replay()
    g2.replay()
    np.testing.assert_array_equal(z.cpu().numpy(), (np.arange(4096, dtype=np.float32) * 3 + 1) * 2)


def test_a_host_read_aborts_the_capture_cleanly(gpu):
    _real(gpu)
    x = ember.ones(8, device="cuda")
    g = ember.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="operation not permitted when stream is capturing"):
        with ember.cuda.graph(g):
            (x * 2).sum().item()
    assert not ember.cuda.is_current_stream_capturing()
    assert (x * 2).sum().item() == 16.0   # the GPU works as before
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="non-default stream"):
        ember.cuda.CUDAGraph().capture_begin()  # the current stream here is the default one


def test_device_checks_are_reported_after_a_replay(gpu):
    _real(gpu)
    w = ember.randn(5, 3, device="cuda")
    idx = ember.tensor([0, 1, 2], device="cuda")
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        out = F.embedding(idx, w)
    g.replay()
    ember.cuda.synchronize()  # all in range
    np.testing.assert_allclose(out.cpu().numpy(), w.cpu().numpy()[[0, 1, 2]])
    idx.copy_(ember.tensor([0, 9, 2], device="cuda"))
    g.replay()
    with pytest.raises(IndexError, match="index out of range"):
        ember.cuda.synchronize()


def _mlp_and_data():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).to("cuda")
    rng = np.random.default_rng(0)
    xs = [ember.tensor(rng.standard_normal((16, 8)), dtype=ember.float32, device="cuda") for _ in range(5)]
    ys = [ember.tensor(rng.integers(0, 3, 16), device="cuda") for _ in range(5)]
    return model, xs, ys


def test_a_whole_training_step_captured_trains_as_eager_steps(gpu):
    _real(gpu)
    model, xs, ys = _mlp_and_data()
    eager = copy.deepcopy(model)
    opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    eager_opt = ember.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
    static_x, static_y = xs[0].clone(), ys[0].clone()

    def step(m, o, x, y):
        o.zero_grad(set_to_none=False)
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        o.step()
        return loss

    side = ember.cuda.Stream()
    side.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(side):  # warm-up: buffers and gradients exist before capture
        for k in range(2):
            step(model, opt, xs[k], ys[k])
            step(eager, eager_opt, xs[k], ys[k])
    ember.cuda.current_stream().wait_stream(side)
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        static_loss = step(model, opt, static_x, static_y)
    for k in range(2, 5):
        static_x.copy_(xs[k])
        static_y.copy_(ys[k])
        g.replay()
        want = step(eager, eager_opt, xs[k], ys[k])
        assert static_loss.item() == pytest.approx(want.item(), rel=1e-5)
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)


def test_make_graphed_callables_matches_eager(gpu):
    _real(gpu)
    model, xs, ys = _mlp_and_data()
    eager = copy.deepcopy(model)
    sample = ember.randn(16, 8, device="cuda", requires_grad=True)
    graphed = ember.cuda.make_graphed_callables(model, (sample,))
    assert graphed is model
    for x, y in zip(xs[:3], ys[:3]):
        x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
        F.cross_entropy(graphed(x1), y).backward()
        F.cross_entropy(eager(x2), y).backward()
        np.testing.assert_allclose(x1.grad.cpu().numpy(), x2.grad.cpu().numpy(), rtol=1e-5, atol=1e-6)
    for p, q in zip(model.parameters(), eager.parameters()):  # parameter gradients accumulate as eager ones do
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy(), rtol=1e-5, atol=1e-6)
    model.eval()  # another training state: the original forward runs
    np.testing.assert_allclose(model(xs[0]).detach().cpu().numpy(), eager(xs[0]).detach().cpu().numpy(), rtol=1e-5)

    def fn(a, b):
        return (a * b).sum(), a - b

    a, b = (ember.randn(4, device="cuda", requires_grad=True) for _ in range(2))
    gfn = ember.cuda.make_graphed_callables(fn, (a, b))
    a2, b2 = (ember.randn(4, device="cuda", requires_grad=True) for _ in range(2))
    s, d = gfn(a2, b2)
    (s + d.sum()).backward()
    np.testing.assert_allclose(a2.grad.cpu().numpy(), b2.detach().cpu().numpy() + 1, rtol=1e-6)
    np.testing.assert_allclose(b2.grad.cpu().numpy(), a2.detach().cpu().numpy() - 1, rtol=1e-6)


@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((2, 5, 7), (7, 3)), ((2, 5, 7), (2, 7, 3)), ((7,), (7, 3)),
                                    ((5, 7), (7,)), ((3, 1, 5, 7), (2, 7, 4))], ids=str)
def test_products_captured_by_ember_kernel(shapes, gpu):
    """CuPy cannot capture cuBLAS: during a capture ember's matrix products run as its own kernel, same values."""
    _real(gpu)
    rng = np.random.default_rng(0)
    a = ember.tensor(rng.standard_normal(shapes[0]), dtype=ember.float32, device="cuda")
    b = ember.tensor(rng.standard_normal(shapes[1]), dtype=ember.float32, device="cuda")
    g = ember.cuda.CUDAGraph()
    with ember.cuda.graph(g):
        y = ember.matmul(a, b)
    g.replay()
    want = np.matmul(a.cpu().numpy().astype(np.float64), b.cpu().numpy().astype(np.float64))
    assert y.shape == want.shape
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-5, atol=1e-5)


def test_matmul_outside_a_capture_is_numpys(gpu):
    from ember._backend import matmul
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(matmul(a, b), np.full((2, 4), 3.0, np.float32))


class _GemmByIndex:
    """captured_gemm's kernel body computed by NumPy over the same flat indices (the wrapper's packing and batch
    offsets are what is checked; the CUDA source runs in test_products_captured_by_ember_kernel)."""

    def available(self, arr):
        return True

    def __call__(self, name, like, args):
        a, b, m, k, n, a_batch, b_batch, out = args
        a, b = np.asarray(a.get()), np.asarray(b.get())
        i = np.arange(out.size)
        row, col, batch = (i // n) % m, i % n, i // (m * n)
        p = np.arange(k)
        vals = (a[(batch * a_batch + row * k)[:, None] + p] * b[(batch * b_batch + col)[:, None] + p * n]).sum(1)
        out[...] = XP[out.__class__].asarray(vals.reshape(out.shape))  # written on the device, as the kernel does
        return True


@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((2, 5, 7), (7, 3)), ((2, 5, 7), (2, 7, 3)), ((7,), (7, 3)),
                                    ((5, 7), (7,)), ((3, 1, 5, 7), (2, 7, 4)), ((4, 7), (2, 7, 3))], ids=str)
def test_captured_product_layout(shapes, fake_gpu, monkeypatch):
    from ember._backend import captured_gemm
    monkeypatch.setattr(captured_gemm, "KERNELS", _GemmByIndex())
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    got = captured_gemm.matmul(ember.tensor(a, device="cuda")._data, ember.tensor(b, device="cuda")._data)
    np.testing.assert_allclose(got.get(), np.matmul(a, b), rtol=1e-12)
