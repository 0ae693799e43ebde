"""ember.profiler against torch.profiler on the same program: the same structure (columns, names, nesting,
schedules, trace layout), not the same times."""
import json
import re

import pytest

import ember

torch = pytest.importorskip("torch")
import torch.profiler  # noqa: E402  (after the skip)

EVAL = "autograd::engine::evaluate_function: "


def _profile(lib, **kw):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
    x = lib.randn(3, 4)
    P = lib.profiler
    with P.profile(activities=[P.ProfilerActivity.CPU], **kw) as prof:
        with P.record_function("model_step"):
            with P.record_function("forward"):
                y = m(x).sum()
            y.backward()
    return prof


@pytest.fixture(scope="module")
def both():
    return _profile(ember, record_shapes=True), _profile(torch, record_shapes=True)


def _header(table):
    return re.split(r"\s{2,}", table.splitlines()[1].strip())


def test_table_columns(both):
    e, t = both
    for kw in ({}, {"group_by_input_shape": True}):
        et = e.key_averages(**kw).table(sort_by="cpu_time_total")
        tt = t.key_averages(**kw).table(sort_by="cpu_time_total")
        assert _header(et) == _header(tt)
        assert et.splitlines()[-1].startswith("Self CPU time total: ")
        assert tt.splitlines()[-1].startswith("Self CPU time total: ")
    assert "Input Shapes" in _header(e.key_averages(group_by_input_shape=True).table())


def test_names_in_both(both):
    e, t = both
    ekeys = {a.key for a in e.key_averages()}
    tkeys = {a.key for a in t.key_averages()}
    shared = {"model_step", "forward", "aten::addmm", "aten::relu", "aten::mm", "aten::sum", "aten::t",
              "AddmmBackward0", EVAL + "AddmmBackward0", "ReluBackward0", EVAL + "ReluBackward0",
              "SumBackward0", EVAL + "SumBackward0", "torch::autograd::AccumulateGrad",
              EVAL + "torch::autograd::AccumulateGrad"}
    assert shared <= ekeys and shared <= tkeys
    for key in ("model_step", "forward", "aten::addmm", EVAL + "AddmmBackward0", "torch::autograd::AccumulateGrad"):
        ea = next(a for a in e.key_averages() if a.key == key)
        ta = next(a for a in t.key_averages() if a.key == key)
        assert ea.count == ta.count, key


def test_nesting_in_both(both):
    for prof in both:
        ev = prof.events()
        step = next(x for x in ev if x.name == "model_step")
        fwd = next(x for x in ev if x.name == "forward")
        assert fwd.cpu_parent is step
        node = next(x for x in ev if x.name == "AddmmBackward0")
        assert node.cpu_parent.name == EVAL + "AddmmBackward0"
        addmm = next(x for x in ev if x.name == "aten::addmm")
        parent = addmm.cpu_parent
        while parent is not None and parent.name != "forward":
            parent = parent.cpu_parent
        assert parent is fwd
        for x in ev:
            assert x.self_cpu_time_total <= x.cpu_time_total + 1e-6


def test_event_attributes(both):
    names = ("key", "count", "cpu_time_total", "self_cpu_time_total", "cpu_time", "input_shapes", "stack",
             "device_time_total", "self_device_time_total", "cpu_time_total_str", "self_cpu_time_total_str",
             "is_user_annotation", "cpu_parent")
    for prof in both:
        avg = prof.key_averages()[0]
        assert all(hasattr(avg, n) for n in names)
        ev = prof.events()[0]
        assert all(hasattr(ev, n) for n in names + ("name", "id", "thread", "time_range", "cpu_children"))
        assert ev.time_range.elapsed_us() == pytest.approx(ev.cpu_time_total)


def test_shapes_in_both(both):
    e, t = both
    eshapes = {(a.key, str(a.input_shapes)) for a in e.key_averages(group_by_input_shape=True)}
    tshapes = {(a.key, str(a.input_shapes)) for a in t.key_averages(group_by_input_shape=True)}
    for entry in (("aten::relu", "[[3, 8]]"), ("AddmmBackward0", "[[3, 2]]")):
        assert entry in eshapes and entry in tshapes


def test_chrome_trace_layout(both, tmp_path):
    required = {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"}
    for lib, prof in zip(("ember", "torch"), both):
        path = tmp_path / f"{lib}.json"
        prof.export_chrome_trace(str(path))
        trace = json.loads(path.read_text())
        xs = [x for x in trace["traceEvents"] if x.get("ph") == "X" and x.get("cat") in ("cpu_op", "user_annotation")]
        assert xs and all(required <= set(x) for x in xs)
        cats = {x["name"]: x["cat"] for x in xs}
        assert cats["model_step"] == "user_annotation" and cats["aten::addmm"] == "cpu_op"
        assert "Input Dims" in next(x for x in xs if x["name"] == "aten::relu")["args"]
        assert trace["displayTimeUnit"] == "ms"


@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2, repeat=1, skip_first=1),
                                dict(wait=1, warmup=2, active=3), dict(wait=2, warmup=1, active=1, skip_first_wait=1),
                                dict(wait=0, warmup=1, active=1, repeat=3)])
def test_schedule_same_actions(kw):
    es, ts = ember.profiler.schedule(**kw), torch.profiler.schedule(**kw)
    assert [es(i).name for i in range(20)] == [ts(i).name for i in range(20)]
    assert [a.value for a in ember.profiler.ProfilerAction if a.name != "DEVICE_STOPPED"] == \
        [a.value for a in torch.profiler.ProfilerAction if a.name != "DEVICE_STOPPED"]


def _scheduled(lib):
    seen = []

    def ready(p):
        seen.append((p.step_num, sorted({a.key for a in p.key_averages()} & {"ProfilerStep*", "it0", "it1", "it2",
                                                                             "it3", "it4", "it5", "it6"})))
    P = lib.profiler
    x = lib.ones(3)
    with P.profile(schedule=P.schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready,
                   acc_events=True) as prof:
        for i in range(7):
            with P.record_function(f"it{i}"):
                x * 2
            prof.step()
    return seen


def test_scheduled_cycles_same():
    assert _scheduled(ember) == _scheduled(torch)


def test_profiler_namespace():
    for name in ("profile", "schedule", "record_function", "tensorboard_trace_handler", "supported_activities",
                 "ProfilerAction", "ProfilerActivity"):
        assert hasattr(ember.profiler, name) and hasattr(torch.profiler, name)
    assert {a.name: a.value for a in ember.profiler.ProfilerActivity} == \
        {a.name: int(a) for a in torch.profiler.ProfilerActivity.__members__.values()}
