"""Same as `torch.autograd.profiler_util`: the events a profiler recorded, their averages, torch's summary table and
the Chrome trace export."""
import enum
import gzip
import json
import os
import time

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


class DeviceType(enum.Enum):
    """Same as `torch.autograd.DeviceType` (the devices ember's profiler knows of)."""
    CPU = 0
    CUDA = 1


def _format_time(time_us, unit=None):
    """torch's rendering of a time in microseconds: '47.020us', '1.226ms', '2.500s'."""
    if unit == "s" or unit is None and time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms" or unit is None and time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_us):
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


class Interval:
    """A time range in microseconds."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


class _FormattedTimes:
    """The derived times and their strings that events and averages share. No device times: see the README."""
    device_time_total = self_device_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = device_memory_usage = self_device_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = is_remote = is_legacy = False
    use_device = None
    overload_name = ""
    scope = 0

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cuda_time = device_time

    @property
    def cuda_time_total(self):
        return self.device_time_total

    @property
    def self_cuda_time_total(self):
        return self.self_device_time_total

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self):
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self):
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self):
        return _format_time(self.self_device_time_total)


class FunctionEvent(_FormattedTimes):
    """Same as `torch.autograd.profiler_util.FunctionEvent`: one recorded range (an op, a backward node, a
    record_function block), times in microseconds."""

    def __init__(self, id, name, thread, start_us, end_us, input_shapes=None, stack=None, is_user_annotation=False,
                 trace_name=None, device_type=DeviceType.CPU):
        self.id = id
        self.name = name
        self.trace_name = trace_name or name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.stack = stack if stack is not None else []
        self.is_user_annotation = is_user_annotation
        self.device_type = device_type
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.kernels = []

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def append_cpu_child(self, child):
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        self.cpu_parent = parent

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes} cpu_children={[c.id for c in self.cpu_children]}>")


class FunctionEventAvg(_FormattedTimes):
    """Same as `torch.autograd.profiler_util.FunctionEventAvg`: the sum of events sharing a key (`count` calls)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.input_shapes = None
        self.stack = None
        self.cpu_children = None
        self.cpu_parent = None
        self.is_user_annotation = False
        self.device_type = DeviceType.CPU

    def add(self, other):
        """Fold an event (or another average) into this one."""
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.cpu_children = other.cpu_children
            self.cpu_parent = other.cpu_parent
            self.is_user_annotation = other.is_user_annotation
            self.device_type = other.device_type
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes}>")


def build_events(raw, threads):
    """FunctionEvents of raw records (name, start ns, end ns, thread ident, shapes, stack, is user annotation),
    sorted by start, each linked to its parent and children: on one thread, a range that lies within another is
    its child (ties: the one recorded later, which exited later, is the outer)."""
    order = sorted(range(len(raw)), key=lambda i: (raw[i][3], raw[i][1], -raw[i][2], -i))
    events = []
    stack = []
    thread = None
    for i in order:
        name, t0, t1, ident, shapes, frames, user = raw[i]
        trace_name = name
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"
        ev = FunctionEvent(0, name, threads.get(ident, ident), t0 / 1000, t1 / 1000, shapes, frames, user,
                           trace_name)
        ev._ns = (t0, t1)
        if ident != thread:
            stack = []
            thread = ident
        while stack and (t0 >= stack[-1]._ns[1] or t1 > stack[-1]._ns[1]):
            stack.pop()
        if stack:
            ev.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(ev)
        stack.append(ev)
        events.append(ev)
    events.sort(key=lambda e: e._ns[0])
    for k, ev in enumerate(events, 1):
        ev.id = k
    return events


class EventList(list):
    """Same as `torch.autograd.profiler_util.EventList`: a list of events with tables and exports."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._metadata = {}

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch's summary table of these events, one row each (sort_by: an attribute such as 'cpu_time_total',
        'self_cpu_time_total' or 'count', largest first)."""
        return _build_table(self, sort_by, header, row_limit, max_src_column_width, max_name_column_width,
                            max_shapes_column_width, top_level_events_only, time_unit)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False):
        """One FunctionEventAvg per name (and input shapes / first stack frames, when grouped by them)."""
        stats = {}
        for ev in self:
            key = (ev.key, str(ev.input_shapes) if group_by_input_shapes else None,
                   tuple(ev.stack[:group_by_stack_n]) if group_by_stack_n > 0 else None)
            avg = stats.get(key)
            if avg is None:
                avg = stats[key] = FunctionEventAvg()
            avg.add(ev)
        out = EventList(stats.values(), use_device=self._use_device, profile_memory=self._profile_memory,
                        with_flops=self._with_flops)
        for avg in out:
            avg.stack = list(avg.stack[:group_by_stack_n]) if avg.stack else []
            if not group_by_input_shapes:
                avg.input_shapes = ""
        return out

    def total_average(self):
        """The sum of all events, under the key 'Total'."""
        total = FunctionEventAvg()
        for ev in self:
            total.add(ev)
        total.key = "Total"
        return total

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total", "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """Write one line per event with a stack (record it with with_stack=True): its frames, outermost first,
        joined by ';', then the metric as whole microseconds (the collapsed format flame graph tools read)."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError(f"metric should be one of: {self.supported_export_stacks_metrics()}")
        attr = _device_attr(metric)
        clean = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for ev in self:
                value = int(getattr(ev, attr))
                if ev.stack and value > 0:
                    f.write(";".join(s.translate(clean) for s in reversed(ev.stack)) + f" {value}\n")

    def export_chrome_trace(self, path):
        """Write the events as Chrome trace-event JSON (complete 'X' events, times in microseconds), which
        chrome://tracing, Perfetto and TensorBoard's profiler open; a path ending in '.gz' is gzipped."""
        trace = _chrome_trace(self, self._metadata, path)
        data = json.dumps(trace).encode()
        if path.endswith(".gz"):
            data = gzip.compress(data)
        with open(path, "wb") as f:
            f.write(data)


def _device_attr(name):
    return name.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")


def _chrome_trace(events, metadata, path):
    pid = os.getpid()
    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}},
           {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "args": {"labels": "CPU"}}]
    for tid in dict.fromkeys(ev.thread for ev in events):
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": f"thread {tid} (python)"}})
    for ev in events:
        args = {"External id": ev.id}
        if ev.input_shapes:
            args["Input Dims"] = ev.input_shapes
        if ev.stack:
            args["Call stack"] = ";".join(ev.stack)
        out.append({"ph": "X", "cat": "user_annotation" if ev.is_user_annotation else "cpu_op",
                    "name": ev.trace_name, "pid": pid, "tid": ev.thread, "ts": round(ev.time_range.start, 3),
                    "dur": round(ev.time_range.elapsed_us(), 3), "args": args})
    trace = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
             # the events' times count from the zero of time.perf_counter; this is that zero on the epoch clock
             "baseTimeNanoseconds": time.time_ns() - time.perf_counter_ns()}
    trace.update(metadata)
    trace["traceEvents"] = out
    trace["traceName"] = path
    return trace


def _build_table(events, sort_by, header, row_limit, max_src_column_width, max_name_column_width,
                 max_shapes_column_width, top_level_events_only, time_unit):
    """torch's table layout: right-aligned columns two spaces apart between dashed rules, then the self CPU
    total."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attr = _device_attr(sort_by)
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_stack = any(e.stack for e in events)
    name_w = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    cols = [("Name", name_w, ">")] + [(h, 12, ">") for h in (
        "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls")]
    if has_shapes:
        shapes_w = max(len(str(e.input_shapes)) for e in events) + 4
        if max_shapes_column_width is not None:
            shapes_w = min(shapes_w, max_shapes_column_width)
        cols.append(("Input Shapes", shapes_w, ">"))
    if has_stack:
        cols.append(("Source Location", max_src_column_width, "<"))
    row_format = "".join(f"{{:{align}{w}}}  " for _, w, align in cols)
    rule = "".join("-" * w + "  " for _, w, _ in cols)
    total = sum(e.self_cpu_time_total for e in events)

    lines = []
    if header is not None:
        lines += ["=" * len(rule), header]
    if top_level_events_only:
        lines += ["=" * len(rule), "This report only display top-level operations statistics"]
    lines += [rule, row_format.format(*(h for h, _, _ in cols)), rule]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        row = [_clip(e.key, max_name_column_width), _format_time_share(e.self_cpu_time_total, total),
               _format_time(e.self_cpu_time_total, time_unit), _format_time_share(e.cpu_time_total, total),
               _format_time(e.cpu_time_total, time_unit), _format_time(e.cpu_time, time_unit), str(e.count)]
        if has_shapes:
            row.append(_clip(str(e.input_shapes), max_shapes_column_width))
        frames = list(e.stack or ())
        if has_stack:
            row.append(_clip(frames.pop(0) if frames else "", max_src_column_width))
        lines.append(row_format.format(*row))
        for frame in frames:  # further stack frames on lines of their own, under Source Location
            lines.append(row_format.format(*([""] * (len(cols) - 1)), _clip(frame, max_src_column_width)))
    lines += [rule, f"Self CPU time total: {_format_time(total, time_unit)}"]
    return "\n".join(lines) + "\n"


def _clip(text, width):
    if width is not None and len(text) >= width - 3:
        return text[:width - 3] + "..."
    return text
