"""nn.Module: registration, the attribute mirror, naming and recursion, state_dict, conversion, hooks, repr."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.modules.module import _IncompatibleKeys


class Lin(nn.Module):
    def __init__(self, i, o, bias=True):
        super().__init__()
        self.in_features, self.out_features = i, o
        self.weight = nn.Parameter(ember.arange(float(o * i)).reshape(o, i))
        if bias:
            self.bias = nn.Parameter(ember.zeros(o))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        y = x @ self.weight.t()
        return y + self.bias if self.bias is not None else y

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Lin(2, 3)
        self.act = nn.Identity()
        self.fc2 = Lin(3, 1)
        self.register_buffer("steps", ember.tensor(0))
        self.register_buffer("cache", ember.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


_REGISTRIES = ("_parameters", "_buffers", "_modules")


def assert_mirrored(root):
    """Every registered value is the same object in the instance dict, and nothing stale is left there."""
    for m in root.modules():
        d = vars(m)
        registered = set()
        for reg in _REGISTRIES:
            for k, v in d[reg].items():
                assert k in d and d[k] is v, (reg, k)
                registered.add(k)
        for k, v in d.items():
            if isinstance(v, (nn.Parameter, nn.Module)):
                assert k in registered, k


# ----- registration -----

def test_setattr_registers_parameters_buffers_modules():
    m = Net()
    assert list(m._parameters) == [] and list(m._modules) == ["fc1", "act", "fc2"]
    assert list(m._buffers) == ["steps", "cache"] and m._non_persistent_buffers_set == {"cache"}
    assert list(m.fc1._parameters) == ["weight", "bias"]
    m.extra = ember.ones(1)  # a plain tensor is a plain attribute
    assert "extra" not in m._buffers and m.extra.tolist() == [1.0]
    m.steps = ember.tensor(5)  # a tensor assigned to a buffer name replaces the buffer
    assert m._buffers["steps"].item() == 5 and m.steps.item() == 5
    m.cache = ember.ones(2)  # and keeps its persistence
    assert "cache" in m._non_persistent_buffers_set
    assert_mirrored(m)


def test_reassigning_names_across_kinds():
    m = Net()
    m.fc1 = nn.Parameter(ember.ones(1))  # a module name becomes a parameter
    assert "fc1" not in m._modules and m._parameters["fc1"] is m.fc1
    with pytest.raises(TypeError, match="cannot assign 'tests.nn.test_module.Lin' as parameter 'fc1'"):
        m.fc1 = Lin(1, 1)
    del m.fc1
    m.fc1 = Lin(1, 1)
    assert "fc1" not in m._parameters and isinstance(m.fc1, Lin)
    m.plain = 3
    m.plain = nn.Parameter(ember.ones(1))  # a plain attribute becomes a parameter
    assert m._parameters["plain"] is m.plain
    m.steps = nn.Identity()
    assert "steps" not in m._buffers and m._modules["steps"] is m.steps
    m.fc2 = None  # None keeps the registration
    assert "fc2" in m._modules and m.fc2 is None
    m.fc1.weight = None
    assert m.fc1._parameters["weight"] is None and m.fc1.weight is None
    assert_mirrored(m)


def test_register_methods_and_errors():
    m = nn.Module()
    m.register_parameter("w", nn.Parameter(ember.ones(2)))
    m.register_buffer("b", ember.zeros(1))
    m.register_buffer("nothing", None)
    m.register_module("child", nn.Identity())
    m.add_module("other", None)
    assert m.w is m._parameters["w"] and m.b is m._buffers["b"] and m.child is m._modules["child"]
    assert m.nothing is None and m.other is None
    with pytest.raises(KeyError, match="attribute 'w' already exists"):
        m.register_buffer("w", ember.ones(1))
    with pytest.raises(KeyError, match="already exists"):
        m.add_module("b", nn.Identity())
    with pytest.raises(TypeError, match=r"cannot assign 'ember.FloatTensor' as parameter 'w' \(torch.nn.Parameter "
                                        r"or None expected\)"):
        m.w = ember.ones(2)
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'child'"):
        m.child = 1
    with pytest.raises(TypeError, match="cannot assign 'str' as buffer 'b'"):
        m.b = "x"
    with pytest.raises(TypeError, match=r"cannot assign 'ember.FloatTensor' object to parameter 'q' "
                                        r"\(torch.nn.Parameter or None required\)"):
        m.register_parameter("q", ember.ones(1))
    p = nn.Parameter(ember.ones(1))
    p._grad_fn = (ember.ones(1, requires_grad=True) * 2).grad_fn  # a parameter that is not a leaf
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'r'"):
        m.register_parameter("r", p)
    assert_mirrored(m)


def test_half_constructed_module_errors():
    class BadParam(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(ember.ones(1))

    class BadModule(nn.Module):
        def __init__(self):
            self.m = nn.Identity()

    class BadBuffer(nn.Module):
        def __init__(self):
            self.register_buffer("b", ember.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        BadParam()
    with pytest.raises(AttributeError, match=r"cannot assign module before Module.__init__\(\) call"):
        BadModule()
    with pytest.raises(AttributeError, match=r"cannot assign buffer before Module.__init__\(\) call"):
        BadBuffer()


def test_init_arguments_and_missing_forward():
    with pytest.raises(TypeError, match=r"Module.__init__\(\) got an unexpected keyword argument 'x'"):
        nn.Module(x=1)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        nn.Module(1)

    class NoForward(nn.Module):
        pass
    with pytest.raises(NotImplementedError, match=r'Module \[NoForward\] is missing the required "forward" function'):
        NoForward()(ember.ones(1))


def test_delattr_and_dir():
    m = Net()
    del m.fc1
    del m.steps
    del m.cache
    assert "fc1" not in m._modules and "steps" not in m._buffers and "cache" not in m._non_persistent_buffers_set
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'fc1'"):
        m.fc1  # noqa: B018
    m.tag = 1
    del m.tag
    with pytest.raises(AttributeError):
        del m.tag
    lin = Lin(1, 1)
    keys = dir(lin)
    assert {"weight", "bias", "forward", "training", "in_features"} <= set(keys) and keys == sorted(keys)
    assert_mirrored(m)


# ----- NOTE [ Attribute mirror ] -----

def test_mirror_is_a_plain_instance_attribute():
    m = Net()
    assert vars(m)["fc1"] is m._modules["fc1"]
    assert vars(m.fc1)["weight"] is m.fc1._parameters["weight"]
    assert vars(m)["steps"] is m._buffers["steps"]


def test_mirror_follows_direct_registry_writes():
    m = Net()
    p = nn.Parameter(ember.ones(1))
    m._parameters["direct"] = p
    assert m.direct is p
    del m._parameters["direct"]
    assert not hasattr(m, "direct")
    m._buffers.update({"u": ember.ones(1)})
    assert m.u is m._buffers["u"]
    assert m._buffers.pop("u") is not None and not hasattr(m, "u")
    m._modules.setdefault("s", nn.Identity())
    assert isinstance(m.s, nn.Identity)
    m._modules.popitem()
    assert not hasattr(m, "s")
    m.fc1._parameters.clear()
    assert not hasattr(m.fc1, "weight") and not hasattr(m.fc1, "bias")
    m._modules |= {"t": nn.Identity()}
    assert isinstance(m.t, nn.Identity)
    assert_mirrored(m)


def test_mirror_follows_registry_replacement():
    m = Net()
    m._modules = OrderedDict(a=nn.Identity())  # what Sequential.__delitem__ does
    assert not hasattr(m, "fc1") and isinstance(m.a, nn.Identity)
    m._modules["b"] = nn.Identity()
    assert isinstance(m.b, nn.Identity)
    assert_mirrored(m)


def test_mirror_after_pickle_and_deepcopy():
    m = Net()
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert_mirrored(clone)
        clone.fc1 = Lin(1, 1)
        assert clone.fc1 is clone._modules["fc1"]
        assert m.fc1.in_features == 2  # the original is untouched
    state = m.__getstate__()
    assert "fc1" not in state and type(state["_modules"]) is dict


def test_mirror_after_to_and_load_state_dict():
    m = Net()
    w = m.fc1.weight
    m.double()
    assert m.fc1.weight is w and w.dtype == ember.float64
    m.to(ember.float32)
    assert m.steps is m._buffers["steps"] and m.steps.dtype == ember.int64
    sd = {k: v + 1 if v.is_floating_point() else v for k, v in m.state_dict().items()}
    m.load_state_dict(sd, assign=True)
    assert m.fc1.weight is not w and isinstance(m.fc1.weight, nn.Parameter)
    assert_mirrored(m)


def test_getattr_fallback_reads_registries():
    m = Net()
    del vars(m)["fc1"]  # even a lost mirror entry is still found through __getattr__
    assert m.fc1 is m._modules["fc1"]


# ----- naming and recursion -----

def test_named_members_and_prefixes():
    m = Net()
    assert [n for n, _ in m.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in m.named_parameters(prefix="net")] == ["net.fc1.weight", "net.fc1.bias", "net.fc2.weight",
                                                                "net.fc2.bias"]
    assert list(m.named_parameters(recurse=False)) == []
    assert [n for n, _ in m.named_buffers()] == ["steps", "cache"]
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in m.named_modules(prefix="root")] == ["root", "root.fc1", "root.act", "root.fc2"]
    assert next(iter(m.parameters())) is m.fc1.weight
    assert list(m.children())[1] is m.act and next(iter(m.buffers())) is m.steps


def test_shared_parameters_and_modules_listed_once():
    shared = Lin(2, 2)
    m = nn.Sequential(shared, nn.Identity(), shared)
    m[1].w = shared.weight
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(m.named_parameters(remove_duplicate=False))) == 5
    assert [n for n, _ in m.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert len(list(m.children())) == 2
    assert len(m.state_dict()) == 5  # state_dict lists every name


def test_get_submodule_parameter_buffer():
    m = nn.Sequential(Net())
    assert m.get_submodule("") is m and m.get_submodule("0.fc1") is m[0].fc1
    assert m.get_parameter("0.fc2.bias") is m[0].fc2.bias
    assert m.get_buffer("0.steps") is m[0].steps
    with pytest.raises(AttributeError, match="Net has no attribute `fc3`"):
        m.get_submodule("0.fc3")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        m.get_submodule("0.fc1.weight")
    with pytest.raises(AttributeError, match="`steps` is not an nn.Parameter"):
        m.get_parameter("0.steps")
    with pytest.raises(AttributeError, match="`bias` is not a buffer"):
        m.get_buffer("0.fc1.bias")
    m.set_submodule("0.act", Lin(3, 3))
    assert isinstance(m[0].act, Lin)


# ----- state_dict -----

def test_state_dict_contents():
    m = Net()
    sd = m.state_dict()
    assert type(sd) is OrderedDict
    assert list(sd) == ["steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    w = sd["fc1.weight"]
    assert type(w) is ember.Tensor and not w.requires_grad and w.data_ptr() == m.fc1.weight.data_ptr()
    assert sd._metadata == OrderedDict([("", {"version": 1}), ("fc1", {"version": 1}), ("act", {"version": 1}),
                                        ("fc2", {"version": 1})])
    kept = m.state_dict(keep_vars=True)
    assert kept["fc1.weight"] is m.fc1.weight
    dest = {}
    assert m.state_dict(destination=dest, prefix="p.") is dest and "p.fc2.bias" in dest
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        m.state_dict(dest, "q.")
    m.fc2.bias = None
    assert "fc2.bias" not in m.state_dict()


def test_load_state_dict_round_trip_in_place():
    src, dst = Net(), Net()
    with ember.no_grad():
        for p in src.parameters():
            p.add_(1)
    src.steps = ember.tensor(7)
    w = dst.fc1.weight
    version = w._version
    result = dst.load_state_dict(src.state_dict())
    assert result == _IncompatibleKeys([], []) and repr(result) == "<All keys matched successfully>"
    assert dst.fc1.weight is w and w.is_leaf and w.grad_fn is None and w.requires_grad
    assert w._version > version
    for (n, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)
        assert a.data_ptr() != b.data_ptr()


def _snapshot(m):
    return {k: v.clone() for k, v in m.state_dict().items()}


def test_load_state_dict_errors_list_every_key_and_change_nothing():
    m = Net()
    before = _snapshot(m)
    sd = {k: v + 5 for k, v in m.state_dict().items()}
    sd["fc1.weight"] = ember.ones(4, 2)
    sd["fc2.weight"] = ember.ones(1, 1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    assert str(info.value) == (
        "Error(s) in loading state_dict for Net:\n"
        "\tsize mismatch for fc1.weight: copying a param with shape ember.Size([4, 2]) from checkpoint, the shape "
        "in current model is ember.Size([3, 2]).\n"
        "\tsize mismatch for fc2.weight: copying a param with shape ember.Size([1, 1]) from checkpoint, the shape "
        "in current model is ember.Size([1, 3]).")
    for k, v in m.state_dict().items():  # the valid keys were not copied either
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())
    del sd["fc1.bias"]
    sd["fc1.extra"] = ember.ones(1)
    sd["zzz"] = ember.ones(1)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict(sd)
    lines = str(info.value).split("\n\t")
    assert lines[0] == "Error(s) in loading state_dict for Net:"
    assert lines[1] == 'Missing key(s) in state_dict: "fc1.bias". '
    assert lines[2] == 'Unexpected key(s) in state_dict: "zzz", "fc1.extra". '
    assert len(lines) == 5
    for k, v in m.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())


def test_load_state_dict_non_strict():
    m = Net()
    result = m.load_state_dict({"fc1.bias": ember.ones(3), "junk": ember.ones(1)}, strict=False)
    assert result.missing_keys == ["steps", "fc1.weight", "fc2.weight", "fc2.bias"]
    assert result.unexpected_keys == ["junk"]
    assert m.fc1.bias.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="size mismatch for fc1.bias"):
        m.load_state_dict({"fc1.bias": ember.ones(2)}, strict=False)
    with pytest.raises(RuntimeError, match='While copying the parameter named "fc1.bias", expected torch.Tensor'):
        m.load_state_dict({"fc1.bias": [1.0, 2.0, 3.0]}, strict=False)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        m.load_state_dict([("fc1.bias", ember.ones(3))])


def test_load_state_dict_casts_and_copies_without_graph():
    m = Lin(2, 1)
    with ember.enable_grad():
        m.load_state_dict({"weight": ember.tensor([[1.5, 2.5]], dtype=ember.float64), "bias": ember.tensor([3.0])})
    assert m.weight.dtype == ember.float32 and m.weight.tolist() == [[1.5, 2.5]]
    assert m.weight.is_leaf and m.weight.grad_fn is None


def test_load_state_dict_assign_and_legacy_scalars():
    m = Lin(2, 1)
    new_w = ember.ones(1, 2, dtype=ember.float64)
    m.load_state_dict({"weight": new_w, "bias": ember.zeros(1)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.dtype == ember.float64 and m.weight.requires_grad
    assert m.weight.data_ptr() == new_w.data_ptr()

    class Scalar(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("s", ember.tensor(0.0))
    s = Scalar()
    s.load_state_dict({"s": ember.tensor([4.0])})  # a 1-element 1-D value loads into a 0-dim buffer
    assert s.s.item() == 4.0


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.config = {"k": 1}

        def get_extra_state(self):
            return dict(self.config)

        def set_extra_state(self, state):
            self.config = state

    a, b = WithExtra(), WithExtra()
    a.config = {"k": 2}
    sd = a.state_dict()
    assert sd["_extra_state"] == {"k": 2}
    b.load_state_dict(sd)
    assert b.config == {"k": 2}
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict({})
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        Net().load_state_dict({**Net().state_dict(), "_extra_state": 1})


def test_state_dict_and_load_hooks():
    m = Net()
    log = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix)))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(("post", len(sd))))
    m._register_state_dict_hook(lambda mod, sd, prefix, meta: OrderedDict(only=1))
    assert m.state_dict() == OrderedDict(only=1)  # the private hook may replace the result, as in torch
    assert log == [("pre", ""), ("post", 5)]

    def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        if prefix + "old_bias" in sd:
            sd[prefix + "bias"] = sd.pop(prefix + "old_bias")
    m.fc2.register_load_state_dict_pre_hook(lambda mod, *args: rename(mod, *args))
    n = Net()
    sd = n.state_dict()
    sd["fc2.old_bias"] = sd.pop("fc2.bias") + 3
    seen = []
    m.register_load_state_dict_post_hook(lambda mod, keys: seen.append(list(keys.missing_keys)))
    m.load_state_dict(sd)
    assert m.fc2.bias.tolist() == [3.0] and seen == [[]]

    def forgive(mod, keys):
        keys.missing_keys.clear()
    m.register_load_state_dict_post_hook(forgive)
    sd.pop("steps")
    m.load_state_dict(sd)  # a post hook may clear the missing keys before strict checks them


# ----- modes, gradients, conversion -----

def test_train_eval():
    m = Net()
    assert m.training and m.fc1.training
    assert m.eval() is m and not m.training and not m.fc1.training and not m.act.training
    m.train()
    assert m.fc2.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train(1)


def test_requires_grad_and_zero_grad():
    m = Net()
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    m(ember.ones(4, 2)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    g = m.fc1.weight.grad
    m.zero_grad(set_to_none=False)
    assert m.fc1.weight.grad is g and not g.any().item()
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


def test_to_keeps_parameter_identity_and_converts_floating_only():
    m = Net()
    m(ember.ones(1, 2)).sum().backward()
    w, g = m.fc1.weight, m.fc1.weight.grad
    assert m.to(ember.float64) is m
    assert m.fc1.weight is w and w.dtype == ember.float64 and w.requires_grad and w.is_leaf
    assert w.grad is g and g.dtype == ember.float64
    assert m.steps.dtype == ember.int64  # integer buffers keep their dtype
    m(ember.ones(1, 2, dtype=ember.float64)).sum().backward()  # gradients accumulate in the new dtype
    assert w.grad.dtype == ember.float64
    m.to("cpu", ember.float32, non_blocking=True)
    assert w.dtype == ember.float32
    m.to(ember.ones(1, dtype=ember.float64))
    assert w.dtype == ember.float64
    m.to(dtype=ember.float16)
    assert w.dtype == ember.float16
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                        "dtype=ember.int32"):
        m.to(ember.int32)


def test_dtype_shortcuts_and_type():
    m = Net()
    assert m.double().fc1.weight.dtype == ember.float64
    assert m.half().fc2.bias.dtype == ember.float16
    assert m.bfloat16().fc2.bias.dtype == ember.bfloat16
    assert m.float().fc2.bias.dtype == ember.float32 and m.steps.dtype == ember.int64
    assert m.type(ember.float64).steps.dtype == ember.float64  # type() converts every tensor, as torch
    assert m.cpu() is m and m.share_memory() is m


def test_to_empty_and_apply():
    m = Net()
    m.to_empty(device="cpu")
    assert m.fc1.weight.shape == (3, 2)
    order = []
    assert m.apply(lambda mod: order.append(type(mod).__name__)) is m
    assert order == ["Lin", "Identity", "Lin", "Net"]


# ----- calling and hooks -----

def test_call_passes_args_and_kwargs():
    class KW(nn.Module):
        def forward(self, x, *, scale=1):
            return x * scale
    assert KW()(ember.ones(1), scale=3).item() == 3.0


def test_forward_pre_hooks():
    m = Lin(2, 1)
    log = []
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append(("a", mod, args)))
    m.register_forward_pre_hook(lambda mod, args: log.append(("b", len(args))), prepend=True)
    x = ember.ones(1, 2)
    m(x)
    assert [e[0] for e in log] == ["b", "a"] and log[1][1] is m and log[1][2][0] is x
    h1.remove()
    h1.remove()  # removing twice is harmless
    log.clear()
    m.register_forward_pre_hook(lambda mod, args: args[0] * 2)  # a single value replaces the args
    assert m(x).item() == 2.0
    m._forward_pre_hooks.clear()
    m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 3,), kwargs), with_kwargs=True)
    assert m(x).item() == 3.0
    m._forward_pre_hooks.clear()
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple of \\(new_args, new_kwargs"):
        m(x)


def test_forward_hooks():
    m = Lin(2, 1)
    x = ember.ones(1, 2)
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append((args[0] is x, out.item())))
    h = m.register_forward_hook(lambda mod, args, out: out + 10)
    assert m(x).item() == 11.0 and seen == [(True, 1.0)]
    with h:
        pass
    assert m(x).item() == 1.0  # the handle removed its hook on leaving the with block
    m.register_forward_hook(lambda mod, args, kwargs, out: out * kwargs.get("k", 1), with_kwargs=True)

    class KW(nn.Module):
        def forward(self, x, k=1):
            return x
    kw = KW()
    kw.register_forward_hook(lambda mod, args, kwargs, out: out * kwargs["k"], with_kwargs=True, prepend=True)
    assert kw(ember.ones(1), k=4).item() == 4.0


def test_always_call_hooks_run_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    m = Boom()
    log = []
    m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, args, out: log.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(ember.ones(1))
    assert log == [("always", None)]
    m.register_forward_hook(lambda mod, args, out: 1 / 0, always_call=True)
    with pytest.warns(UserWarning, match="module forward hook with ``always_call=True`` raised an exception"), \
            pytest.raises(ValueError, match="boom"):
        m(ember.ones(1))


def test_global_forward_hooks():
    from ember.nn.modules import module as mm
    log = []
    h1 = mm.register_module_forward_pre_hook(lambda mod, args: log.append(("pre", type(mod).__name__)))
    h2 = mm.register_module_forward_hook(lambda mod, args, out: log.append(("post", type(mod).__name__)))
    try:
        nn.Sequential(nn.Identity())(ember.ones(1))
    finally:
        h1.remove()
        h2.remove()
    assert log == [("pre", "Sequential"), ("pre", "Identity"), ("post", "Identity"), ("post", "Sequential")]
    nn.Identity()(ember.ones(1))
    assert len(log) == 4


class Scale(nn.Module):
    """y = x * w + z * z, plus x.sum(): two tensor outputs and a non-tensor one."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(ember.tensor([2.0, 3.0]))

    def forward(self, x, z, tag):
        return x * self.w + z * z, x.sum(), tag


def test_full_backward_hook_arguments():
    m = Scale()
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append((mod, gi, go)))
    x = ember.tensor([1.0, 1.0], requires_grad=True)
    z = ember.tensor([1.0, 2.0], requires_grad=True)
    y, _s, tag = m(x, z, "t")
    assert tag == "t"
    (y * ember.tensor([1.0, 10.0])).sum().backward()
    [(mod, gi, go)] = calls
    assert mod is m and len(gi) == 3 and len(go) == 3
    assert go[0].tolist() == [1.0, 10.0] and go[1] is None and go[2] is None  # s unused, tag not a tensor
    assert gi[0].tolist() == [2.0, 30.0] and gi[1].tolist() == [2.0, 40.0] and gi[2] is None
    assert x.grad.tolist() == [2.0, 30.0] and z.grad.tolist() == [2.0, 40.0]


def test_full_backward_hook_replaces_grad_input_and_pre_hook_grad_output():
    m = Scale()
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2, go[1], go[2]))
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 100, gi[1], gi[2]))
    x = ember.tensor([1.0, 1.0], requires_grad=True)
    z = ember.tensor([1.0, 2.0])
    y, _, _ = m(x, z, None)
    y.sum().backward()
    assert x.grad.tolist() == [104.0, 106.0]  # (1 * 2) * w, then + 100
    assert m.w.grad.tolist() == [2.0, 2.0]  # the doubled grad_output reached the parameter too
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="Backward hook returned an invalid number of grad_input, got 1, but "
                                           "expected 3"):
        m(x, z, None)[0].sum().backward()


def test_full_backward_hook_tensor_input_without_grad_gets_zeros():
    m = Scale()
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append(gi))
    x = ember.tensor([1.0, 1.0], requires_grad=True)
    z = ember.tensor([1.0, 2.0])
    m(x, z, 0)[0].sum().backward()
    assert calls[0][0].tolist() == [2.0, 3.0] and calls[0][1].tolist() == [0.0, 0.0] and calls[0][2] is None


def test_full_backward_hook_when_no_input_requires_grad():
    m = Scale()
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append((gi, go)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect to "
                                         "module outputs since no inputs require gradients"):
        m(ember.ones(2), ember.ones(2), 0)[0].sum().backward()
    [(gi, go)] = calls
    assert gi == (None, None, None) and go[0].tolist() == [1.0, 1.0]
    assert m.w.grad.tolist() == [1.0, 1.0]


def test_full_backward_hook_not_called_without_grad_and_removable():
    m = Scale()
    calls = []
    h = m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    with ember.no_grad():
        y = m(ember.ones(2, requires_grad=True), ember.ones(2), 0)[0]
    assert not y.requires_grad
    h.remove()
    x = ember.ones(2, requires_grad=True)
    m(x, ember.ones(2), 0)[0].sum().backward()
    assert calls == [] and x.grad.tolist() == [2.0, 3.0]


def test_backward_hook_kinds_cannot_mix():
    m = Scale()
    m.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        m.register_backward_hook(lambda *a: None)


def test_non_full_backward_hook_fires_on_output_node():
    m = Lin(2, 1)
    calls = []
    m.register_backward_hook(lambda mod, gi, go: calls.append((mod, len(go))))
    m(ember.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == [(m, 1)]


def test_hooks_survive_deepcopy():
    m = Lin(2, 1)
    m.register_forward_hook(lambda mod, args, out: out * 0)
    c = copy.deepcopy(m)
    assert c(ember.ones(1, 2)).item() == 0.0


# ----- repr -----

def test_repr_nested():
    m = nn.Sequential(Lin(3, 4), nn.Sequential(Lin(4, 2, bias=False), nn.Identity()))
    assert repr(m) == (
        "Sequential(\n"
        "  (0): Lin(in_features=3, out_features=4, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): Lin(in_features=4, out_features=2, bias=False)\n"
        "    (1): Identity()\n"
        "  )\n"
        ")")


def test_repr_multiline_extra_and_children():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = nn.Identity()

        def extra_repr(self):
            return "a=1\nb=2"
    assert repr(Two()) == "Two(\n  a=1\n  b=2\n  (sub): Identity()\n)"
    assert repr(nn.Module()) == "Module()"


def test_modules_are_found_under_torchs_module_paths():
    import ember.nn.modules.activation as activation
    import ember.nn.modules.linear as linear
    assert activation.MultiheadAttention is nn.MultiheadAttention
    assert type(nn.MultiheadAttention(4, 2).out_proj) is linear.NonDynamicallyQuantizableLinear
    assert issubclass(linear.NonDynamicallyQuantizableLinear, nn.Linear)
