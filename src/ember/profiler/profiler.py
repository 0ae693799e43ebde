"""Same as `torch.profiler.profiler`: the `profile` context manager with schedules and trace handlers."""
import enum
import json
import os
import warnings

from ..autograd import profiler as _prof

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "schedule", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """Same as `torch.profiler.ProfilerActivity`. ember times every activity on the host: see `profile`."""
    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """Same as `torch.profiler.ProfilerAction`: what the profiler does during a step."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """Same as `torch.profiler.supported_activities`: CPU, and CUDA where a GPU is available."""
    from .. import cuda
    acts = {ProfilerActivity.CPU}
    if cuda.is_available():
        acts.add(ProfilerActivity.CUDA)
    return acts


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Same as `torch.profiler.schedule`: the function from step number to ProfilerAction. After `skip_first`
    steps, cycles of `wait` idle, `warmup` and `active` recorded steps repeat `repeat` times (0: without end); the
    last active step of a cycle is RECORD_AND_SAVE. With skip_first_wait=1 the first cycle skips its wait."""
    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod = step % num_steps
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
                             f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
                             f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results", UserWarning, stacklevel=2)
    return schedule_fn


def _default_schedule_fn(_):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """Same as `torch.profiler.tensorboard_trace_handler`: an on_trace_ready handler writing each trace to
    `dir_name/<worker_name>.<time ns>.pt.trace.json[.gz]` (worker_name defaults to '<hostname>_<pid>'), the files
    TensorBoard's profiler plugin reads."""
    import socket
    import time

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))
    return handler_fn


_WARNED_CLEARS = [False]


class profile:
    """Same as `torch.profiler.profile`: a context manager (or start()/stop()) recording every op at ember's
    dispatch point as aten::<op>, the backward nodes the engine runs, custom Functions and record_function ranges;
    `step()` advances the `schedule`, and `on_trace_ready(prof)` runs at the end of each recorded cycle.

    Times are host-side (CPU) times, also for CUDA tensors (ops are timed as they are queued; no kernel times).
    profile_memory, with_flops and with_modules are accepted and record nothing; with_stack records Python stacks.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            (self.activities.add if use_cuda else self.activities.discard)(ProfilerActivity.CUDA)
        if execution_trace_observer is not None:
            raise NotImplementedError("ember.profiler does not write execution traces (execution_trace_observer); "
                                      "export_chrome_trace() writes the timeline")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.acc_events = acc_events
        self.on_trace_ready = on_trace_ready
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn = None
        self.profiler = None
        self._metadata = {}
        A = ProfilerAction
        prep, start, stop, ready = self.prepare_trace, self.start_trace, self.stop_trace, self._trace_ready
        self.action_map = {
            (A.NONE, A.NONE): [], (A.NONE, A.WARMUP): [prep], (A.NONE, A.RECORD): [prep, start],
            (A.NONE, A.RECORD_AND_SAVE): [prep, start],
            (A.WARMUP, A.NONE): [_warner("Incorrect schedule: WARMUP followed by NONE"), start, stop],
            (A.WARMUP, A.WARMUP): [], (A.WARMUP, A.RECORD): [start], (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [_warner("Incorrect schedule: RECORD followed by NONE"), stop],
            (A.RECORD, A.WARMUP): [_warner("Incorrect schedule: RECORD followed by WARMUP"), stop],
            (A.RECORD, A.RECORD): [], (A.RECORD, A.RECORD_AND_SAVE): [],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prep],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prep, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prep, start],
            (A.WARMUP, None): [start, stop], (A.RECORD, None): [stop, ready], (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _prof.record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self):
        if self.record_steps and self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self):
        """Signal that the next step starts: the schedule decides what the profiler does in it."""
        if self.record_steps and self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = _prof.record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _transit_action(self, prev, cur):
        for action in self.action_map.get((prev, cur), ()):
            action()

    def prepare_trace(self):
        """Swap the timing functions in (a warm-up: what they record before start_trace is dropped)."""
        if self.profiler is not None and not self.acc_events and not _WARNED_CLEARS[0]:
            _WARNED_CLEARS[0] = True
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only events from the current "
                          "cycle will be reported. To keep events across cycles, set acc_events=True.",
                          UserWarning, stacklevel=2)
        if self.profiler is None or not self.acc_events:
            self.profiler = _prof.profile(use_device="cuda" if ProfilerActivity.CUDA in self.activities else None,
                                          record_shapes=self.record_shapes, with_flops=self.with_flops,
                                          profile_memory=self.profile_memory, with_stack=self.with_stack,
                                          with_modules=self.with_modules, acc_events=self.acc_events)
            self.profiler._metadata = self._metadata
        self.profiler._prepare_trace()

    def start_trace(self):
        self.profiler._start_trace()

    def stop_trace(self):
        self.profiler._stop_trace()

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _finished(self):
        if self.profiler is None or self.profiler.function_events is None:
            raise RuntimeError("ember.profiler: nothing has been recorded yet (events are available once a "
                               "recorded cycle ends: at stop(), or in on_trace_ready)")
        return self.profiler

    def events(self):
        """The recorded events (FunctionEvent objects, ordered by start time)."""
        return self._finished().function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events averaged by name (and by input shapes / the first stack frames, when grouped so)."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path):
        """Write the events as Chrome trace-event JSON (chrome://tracing, Perfetto); '.gz' paths are gzipped."""
        return self._finished().export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write the collapsed stacks of the events for flame graph tools (as in torch, only events recorded
        with_stack=True have stacks: without it the file is empty)."""
        return self._finished().export_stacks(path, metric)

    def add_metadata(self, key, value):
        """Add a string entry to the top level of the exported trace."""
        self._metadata[key] = str(value)

    def add_metadata_json(self, key, value):
        """Add an entry given as JSON text to the top level of the exported trace."""
        self._metadata[key] = json.loads(value)


def _warner(message):
    return lambda: warnings.warn(message, UserWarning, stacklevel=4)
