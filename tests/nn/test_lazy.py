"""UninitializedParameter / UninitializedBuffer, LazyModuleMixin and LazyLinear."""
import copy
import pickle

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter, is_lazy
from tests.helpers import assert_close


def test_uninitialized_parameter():
    p = UninitializedParameter()
    assert isinstance(p, Parameter) and is_lazy(p) and p.requires_grad
    assert repr(p) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter or buffer"):
        p.shape  # noqa: B018
    with pytest.raises(RuntimeError, match="Can't share memory on an uninitialized parameter"):
        p.share_memory_()
    assert not UninitializedParameter(requires_grad=False).requires_grad
    assert UninitializedParameter(dtype=ember.float64).dtype == ember.float64
    p.materialize((2, 3))
    assert type(p) is Parameter and not is_lazy(p)
    assert p.shape == (2, 3) and p.dtype == ember.float32 and p.requires_grad
    q = UninitializedParameter()
    q.materialize(4, dtype=ember.float64)
    assert q.shape == (4,) and q.dtype == ember.float64


def test_uninitialized_buffer():
    b = UninitializedBuffer()
    assert is_lazy(b) and isinstance(b, Buffer) and not b.requires_grad and b.persistent
    assert repr(b) == "<UninitializedBuffer>"
    b.materialize((3,))
    assert type(b) is ember.Tensor and b.shape == (3,)
    assert not UninitializedBuffer(persistent=False).persistent


def test_copy_and_pickle():
    p = UninitializedParameter(requires_grad=False, dtype=ember.float64)
    q = copy.deepcopy(p)
    assert type(q) is UninitializedParameter and q is not p and not q.requires_grad and q.dtype == ember.float64
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is UninitializedParameter and not r.requires_grad


def test_is_lazy_on_ordinary_tensors():
    assert not is_lazy(Parameter(ember.ones(2)))
    assert not is_lazy(ember.ones(2))


def test_lazy_linear_initializes_on_first_call():
    ember.manual_seed(0)
    m = nn.LazyLinear(4)
    assert isinstance(m, LazyModuleMixin) and m.has_uninitialized_params()
    assert repr(m) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    assert is_lazy(m.weight) and is_lazy(m.bias)
    x = ember.randn(2, 3)
    y = m(x)
    assert type(m) is nn.Linear
    assert m.in_features == 3 and m.weight.shape == (4, 3) and m.bias.shape == (4,)
    assert type(m.weight) is Parameter
    assert not m._forward_pre_hooks and not m._load_state_dict_pre_hooks
    np.testing.assert_allclose(y.detach().numpy(), x.numpy() @ m.weight.detach().numpy().T + m.bias.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    # torch's Linear init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for both
    bound = 1 / np.sqrt(3)
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
    assert np.abs(m.weight.detach().numpy()).max() > 0
    assert repr(m) == "Linear(in_features=3, out_features=4, bias=True)"
    m(x).sum().backward()
    assert m.weight.grad.shape == (4, 3)


def test_lazy_linear_no_bias_dtype_and_params():
    m = nn.LazyLinear(2, bias=False, dtype=ember.float64)
    assert m.bias is None
    assert len(list(m.parameters())) == 1
    m(ember.ones(5, 7, dtype=ember.float64))
    assert m.weight.shape == (2, 7) and m.weight.dtype == ember.float64


def test_lazy_state_dict_and_load():
    m = nn.LazyLinear(3)
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and all(is_lazy(v) for v in sd.values())
    src = nn.Linear(5, 3)
    m.load_state_dict(src.state_dict())
    assert type(m) is nn.LazyLinear  # still lazy until its first call
    assert m.weight.shape == (3, 5)
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
    x = ember.randn(2, 5)
    np.testing.assert_allclose(m(x).detach().numpy(), src(x).detach().numpy(), rtol=1e-6)
    assert type(m) is nn.Linear
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())  # no re-initialization


def test_lazy_in_sequential():
    net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(2))
    out = net(ember.randn(4, 6))
    assert out.shape == (4, 2)
    assert [tuple(p.shape) for p in net.parameters()] == [(8, 6), (8,), (2, 8), (2,)]


def test_mixin_without_initialize_parameters():
    class Bad(LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = UninitializedParameter()

        def forward(self, x):
            return x

    with pytest.raises(NotImplementedError, match="initialize_parameters is not implemented for Bad"):
        Bad()(ember.ones(1))

    class Partial(Bad):
        def initialize_parameters(self, x):
            pass

    with pytest.raises(RuntimeError, match="module Partial has not been fully initialized"):
        Partial()(ember.ones(1))


@pytest.mark.parametrize(("cls", "base", "shape"), [("LazyConv1d", "Conv1d", (2, 3, 8)),
                                                    ("LazyConv2d", "Conv2d", (2, 3, 6, 5)),
                                                    ("LazyConv3d", "Conv3d", (3, 4, 4, 4))])
def test_lazy_conv(cls, base, shape):
    m = getattr(nn, cls)(4, 3, padding=1)
    assert m.has_uninitialized_params() and m.in_channels == 0
    x = ember.randn(*shape)
    y = m(x)
    assert type(m) is getattr(nn, base)
    in_ch = shape[1] if len(shape) == len(m.kernel_size) + 2 else shape[0]
    assert m.in_channels == in_ch and m.weight.shape == (4, in_ch, *m.kernel_size) and m.bias.shape == (4,)
    ref = getattr(nn, base)(in_ch, 4, 3, padding=1)
    ref.load_state_dict(m.state_dict())
    np.testing.assert_allclose(y.detach().numpy(), ref(x).detach().numpy(), rtol=1e-6)


def test_lazy_conv_groups_and_errors():
    m = nn.LazyConv2d(4, 3, groups=2, bias=False)
    m(ember.randn(1, 6, 5, 5))
    assert m.weight.shape == (4, 3, 3, 3) and m.bias is None
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(ember.randn(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(ember.randn(5, 5))


def test_lazy_module_conversion_before_init():
    m = nn.LazyLinear(3).double()
    assert is_lazy(m.weight) and m.weight.dtype == ember.float64
    y = m(ember.ones(2, 4, dtype=ember.float64))
    assert y.dtype == ember.float64 and m.weight.dtype == ember.float64 and m.weight.shape == (3, 4)


@pytest.mark.parametrize("name,final,x", [
    ("LazyBatchNorm1d", "BatchNorm1d", (4, 3)),
    ("LazyBatchNorm2d", "BatchNorm2d", (2, 3, 4, 4)),
    ("LazyBatchNorm3d", "BatchNorm3d", (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", "InstanceNorm1d", (2, 3, 5)),
    ("LazyInstanceNorm2d", "InstanceNorm2d", (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", "InstanceNorm3d", (2, 3, 2, 2, 2)),
])
def test_lazy_norms(name, final, x):
    m = getattr(nn, name)()
    assert repr(m) == f"{name}(0, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    x = ember.randn(*x)
    m(x)
    assert type(m).__name__ == final
    assert [tuple(p.shape) for p in m.parameters()] == [(3,), (3,)]
    assert_close(m.weight, np.ones(3, np.float32))
    assert m.running_var.shape == (3,)
    if final.startswith("Batch"):
        assert int(m.num_batches_tracked) == 1
        dims = (0,) + tuple(range(2, x.dim()))
        assert_close(m.running_mean, 0.1 * x.mean(dims).numpy(), atol=1e-6)


def test_lazy_norm_options_and_loading():
    m = nn.LazyBatchNorm1d(affine=False, momentum=None)
    assert list(m.state_dict()) == ["running_mean", "running_var", "num_batches_tracked"]
    m(ember.ones(2, 3))
    assert repr(m) == "BatchNorm1d(3, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=True)"
    m = nn.LazyInstanceNorm2d(affine=False, track_running_stats=False)
    assert list(m.state_dict()) == []
    m = nn.LazyBatchNorm2d()
    m.load_state_dict(nn.BatchNorm2d(5).state_dict())
    assert m.weight.shape == (5,) and m.running_mean.shape == (5,)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_lazy_conv_transpose(d):
    m = getattr(nn, f"LazyConvTranspose{d}d")(4, 3, stride=2, output_padding=1, bias=False)
    assert list(m.state_dict()) == ["weight"]
    y = m(ember.randn(2, 3, *([4] * d)))
    assert type(m).__name__ == f"ConvTranspose{d}d"
    assert m.in_channels == 3 and tuple(m.weight.shape) == (3, 4) + (3,) * d
    assert tuple(y.shape) == (2, 4) + (10,) * d
    g = nn.LazyConvTranspose2d(4, 3, groups=2)
    g(ember.randn(1, 2, 3, 3))
    assert tuple(g.weight.shape) == (2, 2, 3, 3) and tuple(g.bias.shape) == (4,)
