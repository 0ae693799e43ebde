"""Run an unmodified PyTorch program on ember: `import torch` and every `torch.*` import resolve to ember's modules.

    python -m ember.run train.py --epochs 3        # a script, with its own arguments
    python -m ember.run -m package.train --lr 0.1  # a module, as python -m runs it

From Python (a notebook, say): `ember.run.install()`, after which `import torch` gives ember in this process
(`uninstall()` undoes it), or `ember.run.run_path("train.py", ["--epochs", "3"])`.

It is an explicit opt-in, scoped to the process that asks for it. It never replaces a torch that is already
imported (that is an error), and where a real torch is installed it says on stderr that ember stands in for it.
`torch.X` maps to `ember.X` module by module; a torch module ember has no counterpart of raises a
ModuleNotFoundError that names it, so `try: import torch._inductor except ImportError:` fallbacks keep working.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys

__all__ = ["install", "uninstall", "installed", "run_path", "run_module", "main"]


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `torch` and `torch.*` and loads them as the ember modules of the same path."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        name = "ember" + fullname[len("torch"):]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:  # a dependency of an ember module is missing: that is the error to show
                raise
            raise ModuleNotFoundError(f"No module named '{fullname}': ember (standing in for torch through "
                                      f"ember.run) has no counterpart of {fullname}", name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(module, "__path__"),
                                              loader_state=module)

    def create_module(self, spec):
        return spec.loader_state  # the ember module itself: `torch.nn is ember.nn`

    def exec_module(self, module):
        pass  # already imported as ember's


_ALIAS = _Alias()


def installed():
    """Whether `import torch` resolves to ember in this process."""
    return _ALIAS in sys.meta_path


def install():
    """Make `import torch` (and `torch.*`) resolve to ember in this process. Raises RuntimeError if a torch module
    is imported already: the program would see two different torches."""
    if installed():
        return
    real = sys.modules.get("torch")
    if real is not None and not getattr(real, "__name__", "").startswith("ember"):
        raise RuntimeError(f"torch is already imported in this process (from {getattr(real, '__file__', '?')}): "
                           "ember.run cannot stand in for it; call ember.run.install() before anything imports "
                           "torch, or run the program with `python -m ember.run program.py`")
    if importlib.util.find_spec("torch") is not None:
        print("ember.run: `import torch` resolves to ember in this process (the installed torch is not used)",
              file=sys.stderr)
    sys.meta_path.insert(0, _ALIAS)


def uninstall():
    """Undo install(): later `import torch` finds the installed torch, if any. Modules imported as torch.* so far
    are forgotten (the program that imported them keeps its references)."""
    if not installed():
        return
    sys.meta_path.remove(_ALIAS)
    for name in [n for n, m in sys.modules.items() if (n == "torch" or n.startswith("torch."))
                 and getattr(m, "__name__", "").startswith("ember")]:
        del sys.modules[name]


def _with_argv(argv0, args, fn):
    install()
    saved = sys.argv
    sys.argv = [argv0, *args]
    try:
        return fn()
    finally:
        sys.argv = saved


def run_path(path, args=()):
    """Run the script at `path` as `__main__`, with `sys.argv` = [path, *args], the script's folder first on
    sys.path (as `python path` has it) and torch resolving to ember; returns its globals."""
    path = str(path)
    folder = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, folder)
    try:
        return _with_argv(path, args, lambda: runpy.run_path(path, run_name="__main__"))
    finally:
        if folder in sys.path:
            sys.path.remove(folder)


def run_module(name, args=()):
    """Run module `name` as `python -m name` would, with torch resolving to ember; returns its globals."""
    return _with_argv(name, args, lambda: runpy.run_module(name, run_name="__main__", alter_sys=True))


_USAGE = "usage: python -m ember.run (program.py | -m module) [arguments of the program ...]"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE + "\n\nRuns an unmodified PyTorch program with `import torch` resolving to ember.",
              file=sys.stderr if not argv else sys.stdout)
        return 0 if argv else 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        run_module(argv[1], argv[2:])
    else:
        run_path(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    from ember.run import main as _main  # the importable module holds the state, not this __main__ copy
    sys.exit(_main())
