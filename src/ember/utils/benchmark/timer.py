"""Timer: a statement run many times under the thread count asked for."""
import enum
import time
import timeit

from .common import Measurement, TaskSpec


class Language(enum.Enum):
    """Same as `torch.utils.benchmark.Language`: only Python statements can be timed in ember."""
    PYTHON = 0
    CPP = 1


class Timer:
    """Same as `torch.utils.benchmark.Timer` for Python statements (CPP ones raise)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=time.perf_counter, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("ember.utils.benchmark.Timer times Python statements only")
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=dict(globals or {}))

    def _run(self, number):
        import ember
        previous = ember.get_num_threads()
        ember.set_num_threads(self._task_spec.num_threads)
        try:
            return self._timer.timeit(number)
        finally:
            ember.set_num_threads(previous)

    def timeit(self, number=1000000):
        """One measurement of `number` runs (after one warm-up run)."""
        self._run(1)
        return Measurement(number, [self._run(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, block_time):
        """Runs per block so that a block lasts at least block_time seconds."""
        number = 1
        while True:
            if self._run(number) >= block_time:
                return number
            number *= 10

    def _blocks(self, number, min_run_time, max_run_time, stop, callback):
        times, total = [], 0.0
        while total < min_run_time or not stop(times):
            t = self._run(number)
            times.append(t)
            total += t
            if callback:
                callback(number, t)
            if max_run_time is not None and total > max_run_time:
                break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs until min_run_time has passed: a Measurement with one time per block."""
        number = self._block_size(1e-4)  # the timer's own cost stays negligible
        return Measurement(number, self._blocks(number, min_run_time, None, lambda _: True, callback),
                           self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks of runs until the interquartile range is below threshold times the median (or max_run_time)."""
        number = self._block_size(1e-2)  # few blocks: the spread is computed again after each

        def stop(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        return Measurement(number, self._blocks(number, min_run_time, max_run_time, stop, callback), self._task_spec)
