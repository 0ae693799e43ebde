import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _autocast


def test_lower_precision_ops_run_in_bfloat16_and_others_keep_their_dtype():
    x = ember.randn(4, 3)
    w = ember.randn(5, 3)
    with ember.autocast("cpu"):
        assert ember.is_autocast_enabled("cpu")
        assert F.linear(x, w).dtype is ember.bfloat16
        assert (x @ w.t()).dtype is ember.bfloat16
        assert ember.mm(x, w.t()).dtype is ember.bfloat16
        assert ember.bmm(x[None], w.t()[None]).dtype is ember.bfloat16
        assert ember.addmm(ember.zeros(4, 5), x, w.t()).dtype is ember.bfloat16
        assert ember.baddbmm(ember.zeros(1, 4, 5), x[None], w.t()[None]).dtype is ember.bfloat16
        assert F.conv2d(ember.randn(1, 2, 5, 5), ember.randn(3, 2, 3, 3)).dtype is ember.bfloat16
        q = ember.randn(1, 2, 4, 8)
        assert F.scaled_dot_product_attention(q, q, q).dtype is ember.bfloat16
        assert (x + x).dtype is ember.float32  # not on any list
        d = ember.randn(3, 3, dtype=ember.float64)
        assert (d @ d).dtype is ember.float64  # float64 is never cast
        assert ember.trace(x[:3].bfloat16()).dtype is ember.float32  # fp32 list
        low = x.bfloat16()
        assert F.mse_loss(low, low).dtype is ember.float32
        assert F.cross_entropy(low, ember.tensor([0, 1, 2, 0])).dtype is ember.float32
        assert F.nll_loss(low, ember.tensor([0, 1, 2, 0])).dtype is ember.float32
        assert F.binary_cross_entropy_with_logits(low, low.sigmoid()).dtype is ember.float32
        assert F.prelu(x, ember.tensor([0.25])).dtype is ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")
    assert (x @ w.t()).dtype is ember.float32


def test_values_match_the_computation_in_bfloat16():
    x = ember.randn(8, 16)
    w = ember.randn(4, 16)
    with ember.autocast("cpu"):
        y = F.linear(x, w)
    expected = (x.bfloat16().float() @ w.bfloat16().float().t()).bfloat16()
    np.testing.assert_array_equal(y.float().numpy(), expected.float().numpy())


def test_gradients_come_back_in_the_parameters_dtype():
    lin = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        out = lin(x)
    assert out.dtype is ember.bfloat16
    out.float().sum().backward()
    assert lin.weight.grad.dtype is ember.float32 and x.grad.dtype is ember.float32
    np.testing.assert_allclose(lin.bias.grad.numpy(), [4.0, 4.0])
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.tile(x.detach().bfloat16().float().numpy().sum(0), (2, 1)),
                               rtol=1e-2)


def test_float16_region_and_nesting_restore_the_outer_state():
    x = ember.randn(2, 2)
    with ember.autocast("cpu", dtype=ember.float16):
        assert (x @ x).dtype is ember.float16
        with ember.autocast("cpu", enabled=False):
            assert (x @ x).dtype is ember.float32
            with ember.autocast("cpu", dtype=ember.bfloat16):
                assert (x @ x).dtype is ember.bfloat16
            assert not ember.is_autocast_enabled("cpu")
        assert (x @ x).dtype is ember.float16
        assert ember.get_autocast_dtype("cpu") is ember.float16
    assert ember.get_autocast_dtype("cpu") is ember.bfloat16
    assert not _autocast.AUTOCAST[0]


def test_state_is_restored_when_the_region_raises():
    with pytest.raises(ValueError):
        with ember.autocast("cpu"):
            raise ValueError("boom")
    assert not ember.is_autocast_enabled("cpu") and not _autocast.AUTOCAST[0] and _autocast.NESTING[0] == 0


def test_decorator_form():
    @ember.autocast("cpu")
    def f(a):
        return a @ a

    assert f(ember.randn(2, 2)).dtype is ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")

    @ember.amp.autocast("cpu")
    def recurse(a, n):
        return a @ a if n == 0 else recurse(a, n - 1)

    assert recurse(ember.randn(2, 2), 3).dtype is ember.bfloat16
    assert not ember.is_autocast_enabled("cpu")


def test_weight_casts_are_cached_within_a_region_and_dropped_after():
    w = ember.randn(3, 3, requires_grad=True)
    x = ember.randn(2, 3)
    with ember.autocast("cpu"):
        F.linear(x, w)
        F.linear(x, w)
        assert len(_autocast._cache) == 1
        cast = _autocast._cache[id(w)][1]
        assert F.linear(x, w).grad_fn.next_functions[1][0] is cast.grad_fn or cast.dtype is ember.bfloat16
    assert len(_autocast._cache) == 0
    with ember.autocast("cpu", cache_enabled=False):
        F.linear(x, w)
        assert len(_autocast._cache) == 0


def test_cache_sees_in_place_updates_of_the_weight():
    w = ember.ones(2, 2, requires_grad=True)
    x = ember.ones(1, 2)
    with ember.autocast("cpu"):
        a = F.linear(x, w)
        with ember.no_grad():
            w.mul_(2)
        b = F.linear(x, w)
    assert a.float().tolist() == [[2.0, 2.0]] and b.float().tolist() == [[4.0, 4.0]]


def test_unsupported_dtype_and_missing_cuda_disable_with_a_warning():
    with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes of ember.bfloat16, ember.float16"):
        with ember.autocast("cpu", dtype=ember.float32):
            assert not ember.is_autocast_enabled("cpu")
    if not ember.cuda.is_available():
        with pytest.warns(UserWarning, match="^CUDA is not available or torch_xla is imported. Disabling autocast.$"):
            with ember.autocast("cuda"):
                assert not ember.is_autocast_enabled("cuda")


def test_bad_device_type():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember.autocast(1)
    with pytest.raises(RuntimeError):
        ember.autocast("not-a-device")


def test_flag_functions():
    assert ember.is_autocast_cache_enabled()
    ember.set_autocast_enabled("cpu", True)
    try:
        assert ember.is_autocast_enabled("cpu")
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.bfloat16
    finally:
        ember.set_autocast_enabled("cpu", False)
    assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.float32
    assert ember.get_autocast_dtype("cuda") is ember.float16


def test_deprecated_spellings_warn_and_work():
    with pytest.warns(FutureWarning, match=r"ember.cpu.amp.autocast\(args...\)` is deprecated"):
        ctx = ember.cpu.amp.autocast()
    assert type(ctx).__name__ == "autocast" and type(ctx).__module__ == "ember.cpu.amp.autocast_mode"
    with ctx:
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.bfloat16


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_the_state():
    seen = {}

    class Square(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, ember.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = ember.is_autocast_enabled("cpu")
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = ember.randn(3, dtype=ember.bfloat16, requires_grad=True)
    with ember.autocast("cpu"):
        y = Square.apply(x)
    y.sum().backward()
    assert seen["fwd"] == (ember.float32, False) and seen["bwd"] is False
    assert x.grad.dtype is ember.bfloat16


def test_training_a_small_model_under_autocast_reduces_the_loss():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(8, 32), ember.nn.ReLU(), ember.nn.Linear(32, 1))
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    x = ember.randn(64, 8)
    y = x[:, :1] * 2 - x[:, 1:2]
    losses = []
    for _ in range(60):
        with ember.autocast("cpu"):
            out = model(x)
        loss = F.mse_loss(out.float(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype is ember.float32 for p in model.parameters())
    assert losses[-1] < 0.2 * losses[0]


def test_no_warnings_on_the_plain_path():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ember.autocast("cpu"):
            ember.ones(2, 2) @ ember.ones(2, 2)
