"""nn.Module, containers, Parameter and nn.init against PyTorch: reprs, key names, error messages, hook arguments
and init gains/statistics."""
import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as enn

torch = pytest.importorskip("torch")
tnn = torch.nn


def _lib(nn):
    return torch if nn is tnn else ember


def _text(s):
    return s.replace("torch.", "ember.").replace("ember.nn.modules.", "").replace("ember.nn.", "")


def _linear_class(nn):
    lib = _lib(nn)

    class Lin(nn.Module):
        def __init__(self, i, o, bias=True):
            super().__init__()
            self.in_features, self.out_features = i, o
            self.weight = nn.Parameter(lib.ones(o, i))
            if bias:
                self.bias = nn.Parameter(lib.zeros(o))
            else:
                self.register_parameter("bias", None)

        def forward(self, x):
            y = x @ self.weight.t()
            return y + self.bias if self.bias is not None else y

        def extra_repr(self):
            return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
    return Lin


def _models(nn):
    lib = _lib(nn)
    Lin = _linear_class(nn)

    class Multi(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running", lib.zeros(2))
            self.register_buffer("tmp", lib.zeros(1), persistent=False)
            self.body = nn.Sequential(Lin(2, 3), nn.Identity())

        def extra_repr(self):
            return "line one\nline two"

    return {
        "seq": lambda: nn.Sequential(Lin(3, 4), nn.Flatten(), nn.Sequential(Lin(4, 2, bias=False), nn.Identity())),
        "odict": lambda: nn.Sequential(OrderedDict([("fc", Lin(1, 1)), ("flat", nn.Flatten(0, 1))])),
        "list": lambda: nn.ModuleList([Lin(2, 2), Lin(2, 2), Lin(2, 2), Lin(2, 3), nn.Identity(), nn.Identity()]),
        "empty_list": lambda: nn.ModuleList(),
        "dict": lambda: nn.ModuleDict({"b": Lin(1, 2), "a": nn.Unflatten(1, (2, 2))}),
        "multi": Multi,
        "nested_list": lambda: nn.Sequential(nn.ModuleList([Lin(1, 1)] * 2), Multi()),
        "plist": lambda: nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(4), "str"]),
        "pdict": lambda: nn.ParameterDict({"b": nn.Parameter(lib.ones(2)), "a": lib.zeros(1, 2)}),
        "none_child": lambda: _with_none_child(nn),
    }


def _with_none_child(nn):
    m = nn.Module()
    m.add_module("gone", None)
    m.sub = nn.Identity()
    return m


@pytest.mark.parametrize("name", list(_models(tnn)))
def test_repr_and_keys_match_torch(name):
    t, e = _models(tnn)[name](), _models(enn)[name]()
    assert repr(e) == _text(repr(t))
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_modules()] == [n for n, _ in t.named_modules()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert list(e.state_dict()._metadata) == list(t.state_dict()._metadata)


def _errors(nn, fn):
    try:
        fn(nn)
    except Exception as ex:  # noqa: BLE001 - the type and text are what is compared
        return type(ex).__name__, _text(str(ex))
    return None


def _bad_init(nn):
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(_lib(nn).ones(1))
    Bad()


def _bad_init_module(nn):
    class Bad(nn.Module):
        def __init__(self):
            self.m = nn.Identity()
    Bad()


def _bad_init_buffer(nn):
    class Bad(nn.Module):
        def __init__(self):
            self.register_buffer("b", _lib(nn).ones(1))
    Bad()


def _assign(name, value):
    def run(nn):
        lib = _lib(nn)
        m = _linear_class(nn)(2, 2)
        m.register_buffer("buf", lib.ones(1))
        m.child = nn.Identity()
        setattr(m, name, value(nn, lib))
    return run


def _load(sd_fn, strict=True):
    def run(nn):
        lib = _lib(nn)
        m = nn.Sequential(_linear_class(nn)(2, 3), _linear_class(nn)(3, 1))
        m.load_state_dict(sd_fn(lib), strict=strict)
    return run


_ERROR_CASES = {
    "param_before_init": _bad_init,
    "module_before_init": _bad_init_module,
    "buffer_before_init": _bad_init_buffer,
    "tensor_as_param": _assign("weight", lambda nn, lib: lib.ones(2, 2)),
    "int_as_param": _assign("weight", lambda nn, lib: 3),
    "tensor_as_module": _assign("child", lambda nn, lib: lib.ones(1)),
    "str_as_buffer": _assign("buf", lambda nn, lib: "x"),
    "dotted_param": lambda nn: nn.Module().register_parameter("a.b", None),
    "empty_param": lambda nn: nn.Module().register_parameter("", None),
    "int_name_param": lambda nn: nn.Module().register_parameter(1, None),
    "dotted_buffer": lambda nn: nn.Module().register_buffer("a.b", None),
    "dotted_module": lambda nn: nn.Module().add_module("a.b", None),
    "empty_module": lambda nn: nn.Module().add_module("", None),
    "not_module": lambda nn: nn.Module().add_module("x", 3),
    "existing_attr": lambda nn: nn.Module().register_parameter("training", None),
    "tensor_to_register_parameter": lambda nn: nn.Module().register_parameter("w", _lib(nn).ones(1)),
    "non_tensor_buffer": lambda nn: nn.Module().register_buffer("b", [1]),
    "no_forward": lambda nn: nn.Module()(1),
    "missing_attr": lambda nn: nn.Module().nothing,
    "get_submodule": lambda nn: nn.Sequential(nn.Identity()).get_submodule("0.x"),
    "get_submodule_not_module": lambda nn: _linear_class(nn)(1, 1).get_submodule("weight"),
    "get_parameter": lambda nn: nn.Sequential(_linear_class(nn)(1, 1)).get_parameter("0.w"),
    "get_parameter_not_param": lambda nn: _with_buffer(nn).get_parameter("b"),
    "get_buffer_not_buffer": lambda nn: _linear_class(nn)(1, 1).get_buffer("weight"),
    "train_non_bool": lambda nn: nn.Module().train(1),
    "to_int_dtype": lambda nn: nn.Module().to(_lib(nn).int32),
    "size_mismatch_all_keys": _load(lambda lib: {"0.weight": lib.ones(2, 2), "0.bias": lib.ones(4),
                                                 "1.weight": lib.ones(1, 3), "1.bias": lib.ones(1)}),
    "missing_unexpected": _load(lambda lib: {"0.weight": lib.ones(3, 2), "x": lib.ones(1), "1.y.z": lib.ones(1),
                                             "1.weight": lib.ones(1, 3)}),
    "non_strict_still_checks_shapes": _load(lambda lib: {"0.weight": lib.ones(1)}, strict=False),
    "non_tensor_value": _load(lambda lib: {"0.weight": [1.0], "0.bias": lib.ones(3), "1.weight": lib.ones(1, 3),
                                           "1.bias": lib.ones(1)}),
    "not_a_mapping": lambda nn: nn.Module().load_state_dict([("a", 1)]),
    "seq_index": lambda nn: nn.Sequential(nn.Identity())[3],
    "seq_add": lambda nn: nn.Sequential() + nn.ModuleList(),
    "seq_mul": lambda nn: nn.Sequential() * 0,
    "seq_insert": lambda nn: nn.Sequential().insert(2, nn.Identity()),
    "modulelist_index": lambda nn: nn.ModuleList([nn.Identity()])[-2],
    "modulelist_extend": lambda nn: nn.ModuleList().extend(3),
    "moduledict_update": lambda nn: nn.ModuleDict().update([("a", nn.Identity(), 1)]),
    "moduledict_update_elem": lambda nn: nn.ModuleDict().update([3]),
    "paramlist_call": lambda nn: nn.ParameterList()(1),
    "paramlist_extend": lambda nn: nn.ParameterList().extend(_lib(nn).ones(2)),
    "paramdict_key": lambda nn: nn.ParameterDict()[1],
    "paramdict_call": lambda nn: nn.ParameterDict()(1),
    "unflatten_size": lambda nn: nn.Unflatten(1, 4),
    "unflatten_elem": lambda nn: nn.Unflatten(1, (2, 2.0)),
    "full_then_nonfull": lambda nn: _mixed_hooks(nn),
    "calculate_gain": lambda nn: nn.init.calculate_gain("gelu"),
    "gain_param": lambda nn: nn.init.calculate_gain("leaky_relu", True),
    "fan_1d": lambda nn: nn.init.xavier_uniform_(_lib(nn).ones(3)),
    "fan_mode": lambda nn: nn.init.kaiming_uniform_(_lib(nn).ones(3, 3), mode="fan"),
    "eye_3d": lambda nn: nn.init.eye_(_lib(nn).ones(3, 3, 3)),
    "dirac_2d": lambda nn: nn.init.dirac_(_lib(nn).ones(3, 3)),
    "dirac_groups": lambda nn: nn.init.dirac_(_lib(nn).ones(3, 3, 3), groups=2),
    "orthogonal_1d": lambda nn: nn.init.orthogonal_(_lib(nn).ones(3)),
    "sparse_3d": lambda nn: nn.init.sparse_(_lib(nn).ones(3, 3, 3), 0.1),
}


def _with_buffer(nn):
    m = nn.Module()
    m.register_buffer("b", _lib(nn).ones(1))
    return m


def _mixed_hooks(nn):
    m = nn.Identity()
    m.register_full_backward_hook(lambda *a: None)
    m.register_backward_hook(lambda *a: None)


@pytest.mark.parametrize("case", list(_ERROR_CASES))
def test_errors_match_torch(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _errors(tnn, _ERROR_CASES[case])
        got = _errors(enn, _ERROR_CASES[case])
    assert expected is not None
    assert got == expected


def test_calculate_gain_matches_torch():
    names = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
             "sigmoid", "tanh", "relu", "leaky_relu", "selu"]
    for n in names:
        assert enn.init.calculate_gain(n) == tnn.init.calculate_gain(n)
    for slope in (0, 0.2, 1, 3.5):
        assert enn.init.calculate_gain("leaky_relu", slope) == tnn.init.calculate_gain("leaky_relu", slope)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (4, 3, 2, 2), (2, 1, 1, 1, 5)])
def test_fan_in_and_fan_out_match_torch(shape):
    assert enn.init._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
        tnn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


@pytest.mark.parametrize("shape", [(4, 6, 3), (6, 4, 5), (4, 2, 3, 3), (4, 2, 1, 3, 3)])
@pytest.mark.parametrize("groups", [1, 2])
def test_dirac_matches_torch(shape, groups):
    e = enn.init.dirac_(ember.empty(*shape), groups=groups)
    t = tnn.init.dirac_(torch.empty(*shape), groups=groups)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_eye_matches_torch(shape):
    np.testing.assert_array_equal(enn.init.eye_(ember.empty(*shape)).numpy(),
                                  tnn.init.eye_(torch.empty(*shape)).numpy())


_INIT_STATS = [
    ("xavier_uniform_", {"gain": 2.0}),
    ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_normal_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("trunc_normal_", {"mean": 0.5, "std": 2.0, "a": -1.0, "b": 1.5}),
    ("trunc_normal_", {"mean": 0.0, "std": 1.0, "a": 2.0, "b": 3.0}),
    ("orthogonal_", {"gain": 1.5}),
    ("sparse_", {"sparsity": 0.3, "std": 0.1}),
    ("uniform_", {"a": -3.0, "b": 1.0}),
    ("normal_", {"mean": 1.0, "std": 3.0}),
]


@pytest.mark.parametrize("name,kwargs", _INIT_STATS)
def test_init_statistics_match_torch(name, kwargs):
    shape = (300, 200)
    e = getattr(enn.init, name)(ember.empty(*shape), **kwargs).numpy()
    t = getattr(tnn.init, name)(torch.empty(*shape), **kwargs).numpy()
    assert abs(e.mean() - t.mean()) < 0.05 * max(t.std(), 1e-3) + 0.01 * abs(t.mean())
    assert abs(e.std() - t.std()) < 0.03 * t.std()
    assert e.min() >= t.min() - 0.05 * t.std() - 1e-6 if name in ("trunc_normal_", "uniform_", "xavier_uniform_",
                                                                    "kaiming_uniform_") else True
    assert np.isclose((e == 0).mean(), (t == 0).mean(), atol=0.01)


def _hook_trace(nn):
    """Full backward (pre-)hook arguments for a module with mixed tensor/non-tensor inputs and outputs."""
    lib = _lib(nn)
    log = []

    class M(nn.Module):
        def forward(self, x, y, k):
            return x * k + y * y, x.sum(), "tag"

    m = M()
    # the logged gradients are copies: the engine may reuse a gradient's memory for .grad afterwards
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", _copies(go))))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", _copies(gi), _copies(go))))
    x = lib.arange(3.0, requires_grad=True)
    results = []
    for y_requires in (False, True):
        y = lib.ones(3, requires_grad=y_requires)
        a, b, _ = m(x, y, 3.0)
        (a * lib.arange(3.0)).sum().backward()
        results.append(x.grad.clone())
        a, b, _ = m(x, y, 2.0)
        (a.sum() + 5 * b).backward()
    return log, results


def _copies(grads):
    return tuple(g if g is None else g.clone() for g in grads)


def _as_lists(obj):
    if isinstance(obj, (tuple, list)):
        return [_as_lists(o) for o in obj]
    if obj is None or isinstance(obj, str):
        return obj
    return obj.detach().tolist()


def test_full_backward_hook_arguments_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_log, t_res = _hook_trace(tnn)
        e_log, e_res = _hook_trace(enn)
    assert _as_lists(e_log) == _as_lists(t_log)
    assert _as_lists(e_res) == _as_lists(t_res)


def _hook_no_input_grad(nn):
    lib = _lib(nn)
    log = []
    m = _linear_class(nn)(2, 1)
    m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m(lib.ones(1, 2)).sum().backward()
    return log, [str(x.message) for x in w]


def test_full_backward_hook_without_input_grad_matches_torch():
    t_log, t_warn = _hook_no_input_grad(tnn)
    e_log, e_warn = _hook_no_input_grad(enn)
    assert _as_lists(e_log) == _as_lists(t_log)
    assert e_warn == t_warn


def _forward_hooks_trace(nn):
    lib = _lib(nn)
    log = []
    m = _linear_class(nn)(2, 2)
    m.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
    m.register_forward_pre_hook(lambda mod, args, kw: log.append(("pre_kw", sorted(kw))), with_kwargs=True,
                                prepend=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("post", out.shape[-1])))
    m.register_forward_hook(lambda mod, args, kw, out: log.append(("post_kw", sorted(kw))), with_kwargs=True)
    m(lib.ones(1, 2))
    return log


def test_forward_hook_order_matches_torch():
    assert _forward_hooks_trace(enn) == _forward_hooks_trace(tnn)


def test_incompatible_keys_repr_matches_torch():
    for nn in (tnn, enn):
        lib = _lib(nn)
        m = _linear_class(nn)(2, 2)
        ok = m.load_state_dict(m.state_dict())
        partial = m.load_state_dict({"weight": lib.ones(2, 2), "x": lib.ones(1)}, strict=False)
        if nn is tnn:
            expected = (repr(ok), repr(partial), str(partial))
        else:
            assert (repr(ok), repr(partial), str(partial)) == expected
