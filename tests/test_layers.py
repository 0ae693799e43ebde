"""The core is a stack of layers (README, "Layout"): a module imports only from its own layer or the ones below,
anywhere in the file (imports inside functions included), so that the path of an op reads top-down."""
import ast
import pathlib
import re

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

# (pattern on the dotted module name, layer); the first match decides, modules matching none are not checked
LAYERS = [
    (r"ember\.(_version|_threads|_unavailable|return_types|_dtype|_device|autograd\.grad_mode)", 0),
    (r"ember\._backend(\..*)?", 1),
    (r"ember\.(autograd\.(graph|engine|anomaly_mode)|_ops\._dispatch|_view_autograd|_autocast)", 2),
    (r"ember\.(_tensor|_tensor_str)", 3),
    (r"ember\._ops\..*", 4),
]
NAMES = ["leaves (dtypes, devices, grad mode)", "arrays (_backend)", "graph recording and backward, dispatch, views",
         "the Tensor class", "op families"]


def layer(module):
    for pattern, n in LAYERS:
        if re.fullmatch(pattern, module):
            return n
    return None


def _module_name(path):
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path, module):
    """(line, imported module) for every import in the file, at any depth; `from a import b` counts as a.b where
    that is a module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                is_module = (SRC / sub.replace(".", "/")).with_suffix(".py").exists() or \
                    (SRC / sub.replace(".", "/")).is_dir()
                yield node.lineno, sub if is_module else base


def violations():
    found = []
    for path in sorted((SRC / "ember").rglob("*.py")):
        module = _module_name(path)
        own = layer(module)
        if own is None:
            continue
        for line, target in _imported(path, module):
            if not target.startswith("ember"):
                continue
            theirs = layer(target)
            if theirs is None or theirs > own:
                where = NAMES[theirs] if theirs is not None else "above the core"
                found.append(f"{module}:{line} ({NAMES[own]}) imports {target} ({where})")
    return found


def test_the_core_imports_only_downwards():
    assert violations() == []


@pytest.mark.parametrize("module,expected", [("ember._dtype", 0), ("ember._backend.jit", 1),
                                             ("ember._ops._dispatch", 2), ("ember._tensor", 3),
                                             ("ember._ops.binary", 4), ("ember.nn.functional", None)])
def test_layers_are_assigned(module, expected):
    assert layer(module) == expected
