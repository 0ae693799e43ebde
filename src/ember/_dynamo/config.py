"""ember._dynamo.config: torch._dynamo.config's switches that ember.compile reads or that programs commonly set.

`recompile_limit` (alias `cache_size_limit`) bounds the programs one compiled function keeps (a guard set beyond it
runs eagerly, with a warning); `error_on_recompile` turns a second program into an error. The others are accepted
with torch's defaults and change nothing: ember always specializes shapes and falls back to eager where a capture
fails (so `suppress_errors` is in effect always). Setting or reading a name torch's config does not have raises
AttributeError, as in torch.
"""
import sys
import types

_DEFAULTS = {
    "recompile_limit": 8,
    "accumulated_recompile_limit": 256,
    "error_on_recompile": False,
    "suppress_errors": False,
    "verbose": False,
    "capture_scalar_outputs": False,
    "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True,
    "assume_static_by_default": True,
    "specialize_int": False,
    "specialize_float": False,
    "optimize_ddp": True,
    "guard_nn_modules": True,
    "force_parameter_static_shapes": True,
    "allow_unspec_int_on_nn_module": False,
}
_ALIASES = {"cache_size_limit": "recompile_limit", "accumulated_cache_size_limit": "accumulated_recompile_limit"}


class _Config(types.ModuleType):
    def __getattr__(self, name):  # only for names not set below: aliases and unknown names
        if name in _ALIASES:
            return getattr(self, _ALIASES[name])
        raise AttributeError(f"ember._dynamo.config.{name} does not exist")

    def __setattr__(self, name, value):
        name = _ALIASES.get(name, name)
        if name not in _DEFAULTS:
            raise AttributeError(f"ember._dynamo.config.{name} does not exist")
        super().__setattr__(name, value)


globals().update(_DEFAULTS)
sys.modules[__name__].__class__ = _Config
