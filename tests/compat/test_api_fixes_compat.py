"""Against PyTorch: range indexing, manual_seed/set_rng_state arguments, argument type errors, *_like memory
formats, legacy type constructors, Module.to(memory_format=...) and the mixed-mask attention warning."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _run(mod, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return eval(expr, {"torch": mod, "np": np}), None
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return None, e


def _norm(v):
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        d = v.detach().numpy()
        return ("T", str(v.dtype).split(".")[-1], d.shape, d.tolist())
    if isinstance(v, (tuple, list)):
        return type(v)(_norm(x) for x in v)
    return v


def check(expr):
    t, te = _run(torch, expr)
    e, ee = _run(ember, expr)
    if te is not None:
        assert ee is not None, f"{expr}: torch raised {te!r}, ember returned {e!r}"
        assert isinstance(ee, type(te)), f"{expr}: {te!r} vs {ee!r}"
        assert str(ee).replace("ember", "torch") == str(te), f"{expr}:\n{te}\n{ee}"
        return
    assert ee is None, f"{expr}: ember raised {ee!r}"
    assert _norm(e) == _norm(t), f"{expr}: {t} vs {e}"


X = "torch.arange(12.).reshape(3, 4)"
CASES = [
    f"{X}[range(3), torch.tensor([0, 2, 1])]", f"{X}[range(2)]", f"{X}[:, range(1, 3)]", f"{X}[range(0)]",
    f"{X}[range(-1, -3, -1)]", f"{X}[range(2), range(2)]", f"{X}[range(5)]", f"{X}[[range(2)]]",
    "(lambda y: (y.__setitem__(range(0, 4, 2), 7), y)[1])(torch.zeros(5))",
    "torch.manual_seed('1').initial_seed()", "torch.manual_seed(2.7).initial_seed()",
    "torch.manual_seed('1.5')", "torch.manual_seed(None)", "torch.manual_seed(-1).initial_seed()",
    "torch.set_rng_state([1, 2])", "torch.set_rng_state(None)", "torch.set_rng_state(torch.zeros(3))",
    "torch.relu(np.ones(2))", "torch.sigmoid(np.ones(2))", "torch.exp([1.])", "torch.sin(np.int64(1))",
    "torch.add(np.ones(2), 1)", "torch.mul(np.ones(2), torch.ones(2))", "torch.add(torch.ones(2), [1.])",
    "torch.add(None, 1)", "torch.add(1, 2)", "torch.mul(2., 3)", "torch.sub(1, 2)", "torch.div(1, 2)",
    "torch.floor_divide(7, 2)", "torch.maximum(torch.ones(2), np.ones(2))", "torch.rsub(np.ones(2), 1)", "torch.remainder(2, 3)",
    "torch.floor_divide(np.ones(2), 2)", "torch.true_divide(np.ones(2), 2)", "torch.remainder(np.ones(2), 2)",
    "torch.arange(3, requires_grad=True)", "torch.randperm(3, requires_grad=True)",
    "torch.FloatTensor()", "torch.FloatTensor(torch.Size([2, 3])).shape", "torch.FloatTensor(2.5)",
    "torch.LongTensor([1, 2])", "torch.FloatTensor(2, 3).shape", "torch.LongTensor(torch.ones(2))",
    "torch.FloatTensor(None)", "torch.FloatTensor('a')", "torch.FloatTensor(np.int64(3)).shape",
    "torch.FloatTensor(2, True).shape", "torch.FloatTensor(torch.ones(2), device='cpu')",
    "torch.ones(2).layout is torch.strided",
    "torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()",
    "torch.empty(2, 3, memory_format=torch.channels_last)",
]


@pytest.mark.parametrize("expr", CASES)
def test_same_as_torch(expr):
    check(expr)


@pytest.mark.parametrize("fn", ["empty_like", "zeros_like", "ones_like", "rand_like", "randn_like"])
@pytest.mark.parametrize("src", [
    "torch.ones(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)", "torch.ones(3, 4).t()",
    "torch.ones(2, 3, 4).permute(2, 0, 1)", "torch.ones(2, 3, 4, 5)[:, :, ::2]", "torch.ones(6, 4).t()[::2]",
    "torch.ones(3, 1).expand(3, 4)", "torch.ones(2, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d)",
])
@pytest.mark.parametrize("fmt", ["", ", memory_format=torch.contiguous_format", ", memory_format=torch.channels_last"])
def test_like_strides(fn, src, fmt):
    check(f"torch.{fn}({src}{fmt}).stride()")


def test_module_to_channels_last():
    for mod in (torch, ember):
        mod.manual_seed(0)
    tm = torch.nn.Conv2d(3, 4, 3)
    em = ember.nn.Conv2d(3, 4, 3)
    tm.register_buffer("b", torch.ones(1, 2, 3, 4))
    em.register_buffer("b", ember.ones(1, 2, 3, 4))
    tm.to(memory_format=torch.channels_last)
    em.to(memory_format=ember.channels_last)
    assert em.weight.stride() == tm.weight.stride() and em.b.stride() == tm.b.stride()
    assert em.bias.stride() == tm.bias.stride()


def test_mixed_mask_warning():
    x = np.random.default_rng(0).standard_normal((3, 2, 8)).astype(np.float32)
    kpm = np.zeros((2, 3), bool)
    kpm[0, 2] = True
    got = []
    for mod in (torch, ember):
        mha = mod.nn.MultiheadAttention(8, 2)
        q = mod.tensor(x)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            mha(q, q, q, key_padding_mask=mod.tensor(kpm), attn_mask=mod.zeros(3, 3))
        got.append([(x.category, str(x.message)) for x in w])
    assert got[0] == got[1] and len(got[0]) == 1


def test_cuda_amp_names():
    for mod in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = mod.cuda.amp.autocast(enabled=False)
            s = mod.cuda.amp.GradScaler(enabled=False)
        assert type(a).__name__ == "autocast" and type(a).__module__.endswith("cuda.amp.autocast_mode")
        assert type(s).__name__ == "GradScaler" and type(s).__module__.endswith("cuda.amp.grad_scaler")
