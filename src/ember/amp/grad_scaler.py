"""GradScaler: loss scaling for float16 training, with the skip/backoff/growth rules of torch.amp.GradScaler."""
import warnings
from enum import Enum

import numpy as np

from .._backend import XP, host
from .._backend.kernels import Kernels

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Same as `torch.amp.GradScaler`. The scale and the growth tracker live in 1-element tensors on the device of
    the first scaled output, as in torch; an inf/NaN check is one pass per gradient."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("ember.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)  # torch's text, whichever spelling made the scaler
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = {}

    def _lazy_init_scale_growth_tracker(self, dev):
        from .._dtype import float32, int32
        from .._ops.creation import full
        self._scale = full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=dev)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def scale(self, outputs):
        """Same as `torch.amp.GradScaler.scale`: outputs (a tensor or nested iterables of tensors) times the scale."""
        if not self._enabled:
            return outputs
        if hasattr(outputs, "_data"):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device)

        def apply(val):
            if hasattr(val, "_data"):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, (list, tuple)):
                scaled = [apply(v) for v in val]
                return type(val)(scaled) if isinstance(val, tuple) and not hasattr(val, "_fields") else \
                    (type(val)(*scaled) if hasattr(val, "_fields") else scaled)
            if hasattr(val, "__iter__"):
                return map(apply, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """Multiplies every gradient by inv_scale in place; returns {device: found_inf tensor}."""
        from .._dtype import float16, float32
        from .._ops.creation import full
        found = {}
        factors = {}
        for group in optimizer.param_groups:
            for param in group["params"]:
                g = param.grad
                if g is None:
                    continue
                if not allow_fp16 and g.dtype is float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                dev = g.device
                key = str(dev)
                if key not in found:
                    found[key] = full((), 0.0, dtype=float32, device=dev)
                d = g._data
                if d.__class__ is inv_scale.__class__ and _KERNELS.available(d) and _KERNELS(
                        "unscale", d, (inv_scale.reshape(1), d, found[key]._data.reshape(1))):
                    continue  # one launch: the check and the multiplication
                factor = factors.get((d.__class__, d.dtype))
                if factor is None:
                    factor = factors[(d.__class__, d.dtype)] = _factor(inv_scale, d)
                d *= factor  # in place: the optimizer sees the unscaled gradient
                if d.__class__ is not np.ndarray:  # a device flag, no host sync per gradient
                    if d.dtype.kind in "fc":
                        f = found[key]._data
                        xp = XP[d.__class__]
                        xp.maximum(f, xp.logical_not(xp.isfinite(d).all()).astype(f.dtype), out=f)
                elif found[key]._data == 0 and not _all_finite(d):
                    found[key]._data[...] = 1.0
        return found

    def unscale_(self, optimizer):
        """Same as `torch.amp.GradScaler.unscale_`: divides the optimizer's gradients by the scale, once per step."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        opt_state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())
        if opt_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if opt_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        s = self._scale._data
        # on a GPU the inverse stays there: unscaling never waits for the device, as in torch
        inv_scale = 1.0 / (float(s.astype(np.float64)) if s.__class__ is np.ndarray else s.astype(np.float64))
        opt_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        opt_state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Same as `torch.amp.GradScaler.step`: unscales (unless done) and steps unless a gradient is inf/NaN;
        returns optimizer.step's result, or None when the step was skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        opt_state = self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())
        if opt_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if opt_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not opt_state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(float(v._data) for v in opt_state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        opt_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Same as `torch.amp.GradScaler.update`: backs the scale off after a skipped step, grows it after
        growth_interval clean steps in a row (or sets new_scale)."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale._data[...] = new_scale
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor "
                          "with requires_grad=False.")
                from .._dtype import float32
                if new_scale.dtype is not float32 or new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                scale._data[...] = new_scale._data.reshape(())
        else:
            found_infs = [f for st in self._per_optimizer_states.values()
                          for f in st["found_inf_per_device"].values()]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            if scale._data.__class__ is not np.ndarray and all(f._data.__class__ is scale._data.__class__
                                                                for f in found_infs):
                self._update_on_device(scale._data, tracker._data, [f._data for f in found_infs])
            elif sum(float(f._data) for f in found_infs):
                scale._data *= np.float32(self._backoff_factor)
                tracker._data[...] = 0
            else:
                grown = int(tracker._data) + 1
                if grown == self._growth_interval:
                    new = scale._data * np.float32(self._growth_factor)
                    if np.isfinite(new):
                        scale._data[...] = new
                    grown = 0
                tracker._data[...] = grown
        self._per_optimizer_states = {}

    def _update_on_device(self, scale, tracker, found_infs):
        """update()'s rules as device ops (torch's _amp_update_scale_): the host never waits for the GPU here."""
        xp = XP[scale.__class__]
        found = (found_infs[0] if len(found_infs) == 1 else xp.stack(found_infs).sum()) > 0
        grown = tracker + 1
        due = grown == self._growth_interval
        bigger = scale * np.float32(self._growth_factor)
        grow = due & xp.isfinite(bigger)
        new = xp.where(found, scale * np.float32(self._backoff_factor), xp.where(grow, bigger, scale))
        scale[...] = new
        tracker[...] = xp.where(found | due, 0, grown)

    def get_scale(self):
        """Same as `torch.amp.GradScaler.get_scale`: a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale._data)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker._data)

    def is_enabled(self):
        """Same as `torch.amp.GradScaler.is_enabled`."""
        return self._enabled

    def state_dict(self):
        """Same as `torch.amp.GradScaler.state_dict` (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Same as `torch.amp.GradScaler.load_state_dict`."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale._data[...] = state_dict["scale"]
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker._data[...] = state_dict["_growth_tracker"]

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning of an iteration, "
                                     "or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _make_kernel(xp, name, wide):
    # non-finite values seen before unscaling set the device flag (every writer writes 1), as torch's check does
    return xp.ElementwiseKernel("raw float64 inv", "T g, raw float32 found",
                                f"{wide} x = ({wide})g; if (!isfinite(x)) found[0] = 1.0f; g = (T)(x * ({wide})inv[0]);",
                                f"ember_unscale_{wide}")


_KERNELS = Kernels(_make_kernel)


def _factor(inv_scale, d):
    """inv_scale (a float, or a 0-dim float64 device array) as a multiplier of d's dtype on d's device."""
    if inv_scale.__class__ is float:
        return d.dtype.type(inv_scale)
    if inv_scale.__class__ is d.__class__:
        return inv_scale.astype(d.dtype)
    return d.dtype.type(float(host(inv_scale)))


def _all_finite(d):
    """True when array d holds no inf/NaN: one reduction (a sum is inf/NaN iff some element is), then a check."""
    if d.dtype.kind not in "fcV":
        return True
    s = d.sum(dtype=np.float64 if d.dtype.kind == "V" else None)
    return bool(np.isfinite(s)) or bool(np.isfinite(d).all())
