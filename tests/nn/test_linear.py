"""F.linear, F.bilinear and the Linear / Bilinear modules."""
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _shapes(*shapes):
    return lambda rng: [rng.standard_normal(s) for s in shapes]


SPECS = [
    OpSpec("linear_2d_bias", F.linear, lambda x, w, b: x @ w.T + b, _shapes((3, 4), (5, 4), (5,)), gradgrad=True),
    OpSpec("linear_2d", F.linear, lambda x, w: x @ w.T, _shapes((3, 4), (5, 4)), gradgrad=True),
    OpSpec("linear_3d_bias", F.linear, lambda x, w, b: x @ w.T + b, _shapes((2, 3, 4), (5, 4), (5,)),
           gradgrad=True),
    OpSpec("linear_4d", F.linear, lambda x, w: x @ w.T, _shapes((2, 1, 3, 4), (5, 4))),
    OpSpec("linear_vector_input", F.linear, lambda x, w, b: w @ x + b, _shapes((4,), (5, 4), (5,))),
    OpSpec("linear_vector_weight", F.linear, lambda x, w: x @ w, _shapes((3, 4), (4,))),
    OpSpec("linear_scalar_bias", F.linear, lambda x, w, b: x @ w.T + b, _shapes((3, 4), (5, 4), (1,))),
    OpSpec("bilinear", F.bilinear, lambda x1, x2, w, b: np.einsum("ni,oij,nj->no", x1, w, x2) + b,
           _shapes((3, 4), (3, 2), (5, 4, 2), (5,)), gradgrad=True),
    OpSpec("bilinear_batched", F.bilinear, lambda x1, x2, w: np.einsum("abi,oij,abj->abo", x1, w, x2),
           _shapes((2, 3, 4), (2, 3, 2), (5, 4, 2))),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


def test_linear_grad_fn_names():
    w = ember.randn(5, 4, requires_grad=True)
    b = ember.randn(5)
    assert F.linear(ember.randn(3, 4), w, b).grad_fn.name() == "AddmmBackward0"
    assert F.linear(ember.randn(3, 4), w).grad_fn.name() == "MmBackward0"
    assert F.linear(ember.randn(2, 3, 4), w, b).grad_fn.name() == "ViewBackward0"
    assert F.linear(ember.randn(2, 3, 4), w).grad_fn.name() == "UnsafeViewBackward0"
    assert F.linear(ember.randn(4), w).grad_fn.name() == "SqueezeBackward4"


def test_linear_only_computes_needed_gradients():
    x = ember.randn(3, 4)
    w = ember.randn(5, 4, requires_grad=True)
    F.linear(x, w).sum().backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.numpy().sum(0), (5, 1)), rtol=1e-5)


def test_linear_empty_batch():
    y = F.linear(ember.randn(0, 4), ember.randn(5, 4), ember.randn(5))
    assert y.shape == (0, 5)


def test_linear_bfloat16_keeps_dtype():
    x, w = ember.randn(3, 4), ember.randn(5, 4)
    y = F.linear(x.bfloat16(), w.bfloat16())
    assert y.dtype == ember.bfloat16
    np.testing.assert_allclose(y.float().numpy(), (x @ w.t()).numpy(), rtol=5e-2, atol=5e-2)


def test_linear_errors():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 5x5\)"):
        F.linear(ember.randn(3, 4), ember.randn(5, 5))
    # mat2 is the transposed weight: (in_features x out_features)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x100 and 256x32\)"):
        ember.nn.Linear(256, 32)(ember.randn(3, 2, 100))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: float != double"):
        F.linear(ember.randn(3, 4), ember.randn(5, 4).double())
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(5\) must match the existing size \(4\)"):
        F.linear(ember.randn(3, 4), ember.randn(5, 4), ember.randn(4))
    with pytest.raises(TypeError, match="linear\\(\\): argument 'input' \\(position 1\\) must be Tensor, not list"):
        F.linear([1.0], ember.randn(5, 4))


def test_bilinear_errors():
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input batch dimensions do not match at dim 0: got 3 and 2"):
        F.bilinear(ember.randn(3, 4), ember.randn(2, 2), ember.randn(5, 4, 2))
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 3 but expected 2"):
        F.bilinear(ember.randn(3, 4), ember.randn(3, 3), ember.randn(5, 4, 2))


def test_linear_module_init_bounds_and_forward():
    ember.manual_seed(0)
    m = nn.Linear(20, 30)
    bound = 1 / math.sqrt(20)
    assert m.weight.shape == (30, 20) and m.bias.shape == (30,)
    assert m.weight.abs().max().item() <= bound and m.bias.abs().max().item() <= bound
    assert m.weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.15)
    x = ember.randn(4, 20)
    assert_close(m(x), x.numpy() @ m.weight.detach().numpy().T + m.bias.detach().numpy(), atol=1e-5)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]


def test_linear_module_without_bias_dtype_and_reset_is_seeded():
    m = nn.Linear(3, 2, bias=False, dtype=ember.float64)
    assert m.bias is None and m.weight.dtype == ember.float64
    assert repr(m) == "Linear(in_features=3, out_features=2, bias=False)"
    ember.manual_seed(5)
    a = nn.Linear(3, 2).weight.detach().clone()
    ember.manual_seed(5)
    assert ember.equal(nn.Linear(3, 2).weight.detach(), a)


def test_linear_module_trains():
    ember.manual_seed(0)
    m = nn.Linear(2, 1)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    x = ember.randn(64, 2)
    y = x @ ember.tensor([[2.0], [-1.0]]) + 0.5
    for _ in range(300):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    assert loss.item() < 1e-4


def test_bilinear_module():
    ember.manual_seed(0)
    m = nn.Bilinear(3, 2, 4)
    bound = 1 / math.sqrt(3)
    assert m.weight.shape == (4, 3, 2) and m.weight.abs().max().item() <= bound
    x1, x2 = ember.randn(5, 3), ember.randn(5, 2)
    ref = np.einsum("ni,oij,nj->no", x1.numpy(), m.weight.detach().numpy(), x2.numpy()) + m.bias.detach().numpy()
    assert_close(m(x1, x2), ref, atol=1e-5)
    assert repr(m) == "Bilinear(in1_features=3, in2_features=2, out_features=4, bias=True)"


def test_linear_dtype_mismatch_messages_follow_addmm():
    w, b = ember.ones(3, 2), ember.ones(3)
    # with a bias torch runs addmm, which compares dtypes before shapes
    with pytest.raises(RuntimeError, match="^mat1 and mat2 must have the same dtype, but got Double and Float$"):
        F.linear(ember.ones(4, 5, dtype=ember.float64), w, b)
    with pytest.raises(RuntimeError, match="^self and mat2 must have the same dtype, but got Double and Float$"):
        F.linear(ember.ones(4, 2), w, b.double())
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype, but got: double != float"):
        F.linear(ember.ones(4, 2, dtype=ember.float64), w)
    with pytest.raises(NotImplementedError, match="\"addmm_impl_cpu_\" not implemented for 'Bool'"):
        F.linear(ember.ones(4, 2).bool(), w.bool())


def test_linear_on_integers():
    y = F.linear(ember.tensor([[1, 2]]), ember.tensor([[3, 4], [5, 6]]), ember.tensor([1, 1]))
    assert y.dtype == ember.int64
    assert y.tolist() == [[12, 18]]
