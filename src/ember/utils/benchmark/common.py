"""Measurements: the times of one benchmarked statement and what describes it."""
import dataclasses
import math
import statistics


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was measured: the statement, its setup and the labels that place it in a `Compare` table."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self):
        """The label (with the sub-label), or else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n" + "\n".join(
            "  " + line for line in self.stmt.splitlines())

    def summarize(self):
        """The title, description and setup, as a Measurement's repr shows them."""
        lines = [self.title, self.description or ""]
        if self.setup != "pass":
            setup = self.setup.splitlines()
            lines += [f"setup: {setup[0]}"] if len(setup) == 1 else ["setup:"] + ["  " + s for s in setup]
        return "\n".join(line for line in lines if line)


def select_unit(t):
    """(unit, scale) to show a time t in seconds: ns, us, ms or s."""
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        if t < scale * 1000:
            return unit, scale
    return "s", 1.0


def trim_sigfig(x, n):
    """x rounded to n significant figures."""
    if x == 0:
        return 0.0
    magnitude = int(math.ceil(math.log10(abs(x))))
    return round(x, n - magnitude) if n - magnitude > 0 else float(round(x, n - magnitude))


class Measurement:
    """Same as `torch.utils.benchmark.Measurement`: raw_times[i] is the time of number_per_run runs."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata

    def __getattr__(self, name):  # stmt, label, num_threads, ... come from the task spec
        if name != "task_spec" and name in TaskSpec.__dataclass_fields__:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def _quartiles(self):
        t = sorted(self.times)
        if len(t) == 1:
            return t[0], t[0], t[0]
        q1, q2, q3 = statistics.quantiles(t, n=4, method="inclusive")
        return q1, q2, q3

    @property
    def median(self):
        return self._quartiles()[1]

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def iqr(self):
        q1, _, q3 = self._quartiles()
        return q3 - q1

    @property
    def significant_figures(self):
        """How many figures of the median the spread supports (1 to 4)."""
        n = len(self.times)
        if n < 2:
            return 4
        spread = statistics.stdev(self.times) / math.sqrt(n) * 2.576  # a 99% interval of the mean
        return max(1, min(4, int(math.floor(math.log10(abs(self.median) / spread))) if spread else 4))

    def meets_confidence(self, threshold=0.1):
        return self.iqr / self.median < threshold if self.median else True

    @property
    def _warnings(self):
        if len(self.times) >= 4 and self.median and not self.meets_confidence(0.1):
            return [f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of the median "
                    "measurement.\n           This suggests significant environmental influence."]
        return []

    @property
    def has_warnings(self):
        return bool(self._warnings)

    def __repr__(self):
        n = len(self.times)
        unit, scale = select_unit(self.median)
        q1, med, q3 = self._quartiles()
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{med / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {(q3 - q1) / scale:.2f} {unit} ({q1 / scale:.2f} to {q3 / scale:.2f})")
        threads = self.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        lines += self._warnings
        return "\n".join(lines)

    @staticmethod
    def merge(measurements):
        """Measurements of the same task merged into one (their times pooled per run)."""
        groups = {}
        for m in measurements:
            groups.setdefault(m.task_spec, []).append(m)
        return [Measurement(1, [t for m in ms for t in m.times], spec) for spec, ms in groups.items()]
