"""torch.hub, torch.export, torch.fx, torch.nested, torch.library and torch.onnx in ember: importable, and every name raises one clear error when called."""
import importlib

import pytest


@pytest.mark.parametrize("module, names, says", [
    ("ember.hub", ["load", "load_state_dict_from_url", "list"], "does not download"),
    ("ember.fx", ["symbolic_trace", "GraphModule", "Tracer"], "no symbolic tracing"),
    ("ember.export", ["export", "load", "save"], "no exported-program format"),
    ("ember.nested", ["nested_tensor", "as_nested_tensor"], "no nested"),
    ("ember.library", ["custom_op", "Library", "register_fake"], "no operator registry"),
    ("ember.onnx", ["dynamo_export"], "through ember.onnx.export only"),
])
def test_names_import_and_raise_on_use(module, names, says):
    mod = importlib.import_module(module)
    torch_name = module.replace("ember.", "torch.")
    for name in names:
        fn = getattr(mod, name)  # `from torch.hub import load` works
        assert fn.__name__ == name and says in fn.__doc__
        with pytest.raises(RuntimeError, match=rf"^{torch_name}\.{name}: .*{says}"):
            fn("anything", key=1)


def test_dunder_lookups_are_attribute_errors():
    import ember.fx
    assert not hasattr(ember.fx, "__path__")  # importlib and inspect see a plain module
    with pytest.raises(AttributeError, match="'torch.fx' has no attribute '__wrapped__'"):
        ember.fx.__wrapped__  # noqa: B018
    with pytest.raises(AttributeError, match="'torch.fx' has no attribute '_private'"):
        ember.fx._private  # noqa: B018 - private names (submodules being imported) are not stand-ins


def test_onnx_export_state_is_answered():
    import ember.onnx
    assert ember.onnx.is_in_onnx_export() is False
