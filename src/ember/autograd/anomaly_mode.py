"""Anomaly detection: the engine checks every backward result for NaN and, when a node's backward fails, warns
where that node's forward ran (as torch does) before the error propagates."""
import functools
import warnings

from .graph import _ANOMALY

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]


def is_anomaly_enabled():
    """Same as `torch.is_anomaly_enabled`."""
    return _ANOMALY[0]


def is_anomaly_check_nan_enabled():
    """Same as `torch.is_anomaly_check_nan_enabled`."""
    return _ANOMALY[1]


def set_anomaly_enabled(enabled, check_nan=True):
    """Same as `torch.set_anomaly_enabled`."""
    _ANOMALY[0] = bool(enabled)
    _ANOMALY[1] = bool(check_nan)


class _AnomalyContext:
    """Restores the anomaly flags on exit; also usable as a decorator."""

    def __exit__(self, *exc):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def decorated(*args, **kwargs):
            with self._clone():
                return fn(*args, **kwargs)
        return decorated


class detect_anomaly(_AnomalyContext):
    """Same as `torch.autograd.detect_anomaly`: a context manager (and decorator) turning anomaly detection on."""

    def __init__(self, check_nan=True):
        self.prev = _ANOMALY[0]
        self.check_nan = check_nan
        self.prev_check_nan = _ANOMALY[1]
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = _ANOMALY[0]
        self.prev_check_nan = _ANOMALY[1]
        set_anomaly_enabled(True, self.check_nan)

    def _clone(self):
        clone = object.__new__(detect_anomaly)  # the warning was given when the decorator was made
        clone.check_nan = self.check_nan
        return clone


class set_detect_anomaly(_AnomalyContext):
    """Same as `torch.autograd.set_detect_anomaly`: takes effect on construction, so it also works as a plain
    call; as a context manager it restores the previous state on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = _ANOMALY[0]
        self.prev_check_nan = _ANOMALY[1]
        self.mode = mode
        self.check_nan = check_nan
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __call__(self, fn):
        set_anomaly_enabled(self.prev, self.prev_check_nan)  # decorating must not switch the mode here
        return super().__call__(fn)

    def _clone(self):
        return set_detect_anomaly(self.mode, self.check_nan)
