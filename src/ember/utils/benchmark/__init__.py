"""ember.utils.benchmark: same as torch.utils.benchmark — `Timer` runs a statement repeatedly and returns a
`Measurement` (median, interquartile range, warnings); `Compare` lays several out as a table."""
from .common import Measurement, TaskSpec, select_unit, trim_sigfig
from .compare import Compare
from .timer import Language, Timer

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer", "select_unit", "trim_sigfig"]
