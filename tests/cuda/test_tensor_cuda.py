"""Tensors on 'cuda': creation, moves, dtypes, random streams, autograd and errors (fake CuPy without a GPU)."""
import sys

import numpy as np
import pytest

import ember


def _on_device(t, cp):
    return type(t._data) is cp.ndarray and t.device.type == "cuda"


@pytest.mark.parametrize("make", [
    lambda: ember.zeros(2, 3, device="cuda"),
    lambda: ember.ones(2, 3, device="cuda"),
    lambda: ember.full((2, 3), 1.5, device="cuda"),
    lambda: ember.empty(2, 3, device="cuda"),
    lambda: ember.arange(6, device="cuda"),
    lambda: ember.tensor([[1.0, 2.0]], device="cuda"),
    lambda: ember.randn(2, 3, device="cuda"),
    lambda: ember.rand(2, 3, device="cuda"),
    lambda: ember.randint(0, 5, (2, 3), device="cuda"),
    lambda: ember.zeros_like(ember.ones(2, device="cuda")),
    lambda: ember.eye(3, device="cuda"),
    lambda: ember.linspace(0, 1, 5, device="cuda"),
])
def test_factories_make_device_arrays(make, gpu):
    assert _on_device(make(), gpu)


def test_moves_and_device_attributes(gpu):
    x = ember.arange(6.0).reshape(2, 3)
    y = x.cuda()
    assert _on_device(y, gpu) and y.is_cuda and y.get_device() == 0
    assert str(y.device) == "cuda:0" and y.device == ember.device("cuda", 0)
    assert _on_device(x.to("cuda:0"), gpu) and _on_device(x.to(ember.device("cuda")), gpu)
    back = y.cpu()
    assert type(back._data) is np.ndarray and back.device.type == "cpu"
    np.testing.assert_array_equal(back.numpy(), x.numpy())
    assert y.to("cuda") is y
    assert y.tolist() == x.tolist() and y[1, 2].item() == 5.0
    z = y.to(ember.float16)
    assert _on_device(z, gpu) and z.dtype is ember.float16


def test_default_device(gpu):
    ember.set_default_device("cuda")
    try:
        assert _on_device(ember.zeros(3), gpu) and _on_device(ember.tensor([1, 2]), gpu)
    finally:
        ember.set_default_device(None)
    assert ember.zeros(3).device.type == "cpu"


def test_tensor_from_device_array_copies(gpu):
    a = gpu.arange(3.0)
    t = ember.tensor(a, device="cuda")
    assert _on_device(t, gpu) and t.tolist() == [0.0, 1.0, 2.0]


def test_cuda_random_is_reproducible_and_on_device(gpu):
    ember.cuda.manual_seed(123)
    a = ember.randn(4, 5, device="cuda")
    u = ember.rand(3, device="cuda")
    ember.cuda.manual_seed(123)
    b = ember.randn(4, 5, device="cuda")
    v = ember.rand(3, device="cuda")
    assert _on_device(a, gpu) and _on_device(u, gpu)
    np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy())
    np.testing.assert_array_equal(u.cpu().numpy(), v.cpu().numpy())
    c = ember.randn(4, 5, device="cuda")
    assert not np.array_equal(c.cpu().numpy(), b.cpu().numpy())
    ember.manual_seed(7)  # seeds every device
    d = ember.randn(3, device="cuda")
    ember.manual_seed(7)
    np.testing.assert_array_equal(d.cpu().numpy(), ember.randn(3, device="cuda").cpu().numpy())


def test_cuda_generator_object(gpu):
    g = ember.Generator(device="cuda").manual_seed(5)
    a = ember.randn(3, device="cuda", generator=g)
    g.manual_seed(5)
    assert _on_device(a, gpu)
    np.testing.assert_array_equal(a.cpu().numpy(), ember.randn(3, device="cuda", generator=g).cpu().numpy())
    assert _on_device(ember.randperm(5, device="cuda"), gpu)
    p = ember.tensor([0.1, 0.2, 0.7], device="cuda")
    assert _on_device(ember.multinomial(p, 2), gpu)
    assert _on_device(ember.bernoulli(p), gpu)
    x = ember.empty(4, device="cuda").uniform_(0, 1)
    assert _on_device(x, gpu) and bool(((x >= 0) & (x < 1)).all())
    x.normal_()
    assert _on_device(x, gpu)


def test_autograd_gradients_stay_on_device(gpu):
    x = ember.randn(3, 4, device="cuda", requires_grad=True)
    w = ember.randn(4, 2, device="cuda", requires_grad=True)
    ((x @ w).tanh().sum() * 2).backward()
    assert _on_device(x.grad, gpu) and _on_device(w.grad, gpu)
    g1 = x.grad.clone()
    ((x @ w).tanh().sum() * 2).backward()  # accumulation
    np.testing.assert_allclose(x.grad.cpu().numpy(), 2 * g1.cpu().numpy())
    xc = x.detach().cpu().requires_grad_()
    ((xc @ w.detach().cpu()).tanh().sum() * 2).backward()
    np.testing.assert_allclose(g1.cpu().numpy(), xc.grad.numpy(), rtol=1e-5, atol=1e-6)  # GPU tanh/GEMM roundings


def test_inplace_on_view_with_grad(gpu):
    x = ember.randn(3, 4, device="cuda", requires_grad=True)
    y = x.clone()
    y[0].mul_(3)
    y[:, 1] += 1
    y.sum().backward()
    assert _on_device(x.grad, gpu)
    expected = np.ones((3, 4))
    expected[0] = 3
    np.testing.assert_allclose(x.grad.cpu().numpy(), expected)


def test_unused_output_gradient_is_zero_on_device(gpu):
    x = ember.randn(3, device="cuda", requires_grad=True)
    (g,) = ember.autograd.grad(x.sum() * 0 + x[0], [x])
    assert _on_device(g, gpu)
    np.testing.assert_array_equal(g.cpu().numpy(), [1.0, 0.0, 0.0])
    x = ember.randn(2, 2, device="cuda", requires_grad=True)
    first, _ = x.unbind(0)
    first.sum().backward()  # the unused output's gradient is zero-filled by the engine
    assert _on_device(x.grad, gpu)
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [[1.0, 1.0], [0.0, 0.0]])


def test_zero_dim_cpu_tensor_mixes_like_a_scalar(gpu):
    x = ember.ones(3, device="cuda")
    s = ember.tensor(2.0)
    for r in (x * s, s * x, x + s, ember.maximum(x, s)):
        assert _on_device(r, gpu)
    np.testing.assert_array_equal((x * s).cpu().numpy(), [2.0, 2.0, 2.0])


def test_cross_device_errors(gpu):
    a, b = ember.ones(3), ember.ones(3, device="cuda")
    msg = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    for fn in (lambda: a + b, lambda: b + a, lambda: a * b, lambda: ember.matmul(b, a), lambda: ember.dot(a, b),
               lambda: ember.where(b > 0, b, a), lambda: b.add_(a), lambda: ember.cat([b, a]),
               lambda: ember.stack([a, b]), lambda: b.gather(0, ember.tensor([0, 1])),
               lambda: b.masked_fill(a > 0, 1.0), lambda: ember.addcmul(b, a, b)):
        with pytest.raises(RuntimeError, match=msg):
            fn()


def test_copies_from_the_host_are_allowed(gpu):
    b = ember.zeros(3, device="cuda")
    b.copy_(ember.arange(3.0))
    b[1:] = ember.tensor([5.0, 6.0])  # as torch: a CPU value is copied to the device
    assert _on_device(b, gpu) and b.tolist() == [0.0, 5.0, 6.0]
    assert _on_device(b[ember.tensor([0, 2])], gpu)  # CPU index tensors index device tensors


def test_print_and_repr(gpu):
    t = ember.tensor([1.0, 2.5], device="cuda")
    assert repr(t) == "tensor([1.0000, 2.5000], device='cuda:0')"
    assert "device='cuda:0'" in str(ember.zeros(2, 3, device="cuda", requires_grad=True))


def test_numpy_of_cuda_tensor_raises(gpu):
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        ember.ones(2, device="cuda").numpy()


def test_fake_gpu_fixture_installs(fake_gpu):
    assert sys.modules["cupy"] is fake_gpu and ember.cuda.is_available()
    assert ember.cuda.device_count() == 1


def test_fake_gpu_fixture_restores():
    # runs after the test above: the fake must be gone for every other test
    assert not getattr(sys.modules.get("cupy"), "IS_FAKE", False)
    from ember import _backend
    assert all(getattr(c, "__module__", "") != "tests.cuda.fake_cupy" for c in _backend.XP)
