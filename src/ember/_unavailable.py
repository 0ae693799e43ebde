"""Modules of torch that cannot work in ember (torch.hub, torch.export, torch.fx): importing them and their names
works, so programs that merely import them run; calling any of their names raises one RuntimeError that says what
to do instead."""


def unavailable(module, reason):
    """A module `__getattr__` for torch's `module`: every public name is a function that raises RuntimeError
    ("<module>.<name>: <reason>") when called."""
    def __getattr__(name):
        if name.startswith("_"):  # private names (and submodules being imported) are not stand-ins
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        def stand_in(*args, **kwargs):
            raise RuntimeError(f"{module}.{name}: {reason}")
        stand_in.__name__ = stand_in.__qualname__ = name
        stand_in.__doc__ = f"Not available in ember: {reason}"
        return stand_in
    return __getattr__
