"""ember.profiler: what is recorded, how it nests, schedules, tables, traces, and that nothing is left behind."""
import gzip
import json
import os
import re
import threading

import pytest

import ember
from ember._ops import _dispatch
from ember.autograd import engine, function, graph
from ember.autograd import profiler as aprof
from ember.profiler import (ProfilerAction, ProfilerActivity, profile, record_function, schedule,
                            supported_activities, tensorboard_trace_handler)
from ember.profiler import profiler as pmod

EVAL = "autograd::engine::evaluate_function: "


def _mlp():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 2))


def _run_mlp(m, x):
    with record_function("model_step"):
        m(x).sum().backward()


@pytest.fixture
def mlp_prof():
    m, x = _mlp(), ember.randn(3, 4)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        _run_mlp(m, x)
    return prof


def _by_key(prof, **kw):
    return {e.key: e for e in prof.key_averages(**kw)}


def _snapshot():
    nodes = {cls: cls.__dict__["apply"] for cls in aprof._classes(graph.Node) if "apply" in cls.__dict__}
    return ({op: op.fwd for op in _dispatch.OPS}, engine._SINGLE, nodes, function.Function.__dict__["apply"],
            list(_dispatch.ON_NEW_OP))


def _assert_restored(before):
    fwds, single, nodes, fapply, hooks = before
    assert all(op.fwd is fwd for op, fwd in fwds.items())
    assert engine._SINGLE is single is graph._SINGLE
    for cls, apply in nodes.items():
        assert cls.__dict__["apply"] is apply
    assert function.Function.__dict__["apply"] is fapply
    assert _dispatch.ON_NEW_OP == hooks == []
    assert aprof._ACTIVE[0] is None


def test_mlp_ops_and_backward_nodes_with_counts(mlp_prof):
    avg = _by_key(mlp_prof)
    expected = {
        "model_step": 1, "aten::addmm": 2, "aten::relu": 1, "aten::t": 2,
        "aten::sum": 3,  # the loss, then the two bias gradients
        "aten::mm": 3,  # two weight gradients, one input gradient (the first layer's input needs none)
        "aten::relu_backward": 1,
        EVAL + "AddmmBackward0": 2, "AddmmBackward0": 2,
        EVAL + "ReluBackward0": 1, "ReluBackward0": 1,
        EVAL + "SumBackward0": 1, "SumBackward0": 1,
        EVAL + "torch::autograd::AccumulateGrad": 4, "torch::autograd::AccumulateGrad": 4,
    }
    for key, count in expected.items():
        assert avg[key].count == count, key


def test_times_and_nesting(mlp_prof):
    events = mlp_prof.events()
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    assert all(a.time_range.start <= b.time_range.start for a, b in zip(events, events[1:]))
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        assert e.self_cpu_time_total == pytest.approx(e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))
        for c in e.cpu_children:
            assert c.cpu_parent is e
            assert e.time_range.start <= c.time_range.start and c.time_range.end <= e.time_range.end
    top = [e for e in events if e.cpu_parent is None]
    assert [e.name for e in top] == ["model_step"] and top[0].is_user_annotation
    # a backward formula's ops nest in the node, the node in the engine's range
    relu_bwd = next(e for e in events if e.name == "aten::relu_backward")
    assert relu_bwd.cpu_parent.name == "ReluBackward0"
    assert relu_bwd.cpu_parent.cpu_parent.name == EVAL + "ReluBackward0"
    for avg in mlp_prof.key_averages():
        assert 0 <= avg.self_cpu_time_total <= avg.cpu_time_total
        assert avg.cpu_time == pytest.approx(avg.cpu_time_total / avg.count)
    total = mlp_prof.key_averages().self_cpu_time_total
    assert total == pytest.approx(top[0].cpu_time_total)


def test_input_shapes(mlp_prof):
    grouped = mlp_prof.key_averages(group_by_input_shape=True)
    shapes = {(e.key, str(e.input_shapes)) for e in grouped}
    assert ("aten::addmm", "[[3, 4], [8, 4], [8]]") in shapes
    assert ("aten::addmm", "[[3, 8], [2, 8], [2]]") in shapes
    assert ("aten::relu", "[[3, 8]]") in shapes
    assert ("AddmmBackward0", "[[3, 2]]") in shapes  # a node's inputs are its incoming gradients
    assert all(e.input_shapes == "" for e in mlp_prof.key_averages())


def test_nested_record_function_and_decorator():
    @record_function("decorated")
    def work(a):
        return ember.exp(a)

    a = ember.ones(5)
    with profile() as prof:
        with record_function("outer"):
            a + a
            with record_function("inner", "some args"):
                work(a)
    ev = {e.name: e for e in prof.events()}
    assert ev["inner"].cpu_parent is ev["outer"] and ev["decorated"].cpu_parent is ev["inner"]
    assert ev["aten::exp"].cpu_parent is ev["decorated"] and ev["aten::add"].cpu_parent is ev["outer"]
    outer = ev["outer"]
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - ev["aten::add"].cpu_time_total
                                                      - ev["inner"].cpu_time_total)
    assert all(ev[n].is_user_annotation for n in ("outer", "inner", "decorated"))
    assert not ev["aten::add"].is_user_annotation
    assert work.__name__ == "work"
    with record_function("no profiler"):  # records nothing, raises nothing
        work(a)
    assert "no profiler" not in {e.name for e in prof.events()}


def test_nothing_left_behind():
    before = _snapshot()
    m, x = _mlp(), ember.randn(3, 4)
    with profile(record_shapes=True, with_stack=True):
        _run_mlp(m, x)
    _assert_restored(before)
    with pytest.raises(ValueError, match="boom"):
        with profile():
            ember.ones(2) * 2
            raise ValueError("boom")
    _assert_restored(before)
    p = profile()
    p.start()
    assert ember.ones(2).exp().sum().item() > 0
    p.stop()
    _assert_restored(before)
    assert [e.name for e in p.events()] == ["aten::exp", "aten::sum"]


def test_op_made_while_recording_is_timed_and_restored():
    def twice(x):
        return x * 2

    with profile() as prof:
        op = _dispatch.Op("twice_op", twice)
        y = _dispatch.dispatch1(op, ember.ones(3))
    assert y.tolist() == [2.0, 2.0, 2.0]
    assert "aten::twice_op" in {e.name for e in prof.events()}
    assert op.fwd is twice


def test_op_made_from_another_ops_forward_while_recording():
    # what a module imported while recording does: Op(name, OTHER.fwd, ...) must get OTHER's plain forward
    exp_op = next(op for op in _dispatch.OPS if op.name == "exp")
    plain = exp_op.fwd
    with profile() as prof:
        op = _dispatch.Op("my_exp", exp_op.fwd)
        _dispatch.dispatch1(op, ember.zeros(2))
    assert op.fwd is plain and exp_op.fwd is plain
    assert [e.name for e in prof.events()] == ["aten::my_exp"]


def test_function_apply_kept_from_while_recording():
    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with profile():
        apply = Twice.apply
    with profile() as prof:
        apply(ember.ones(2))
    assert [e.name for e in prof.events()] == ["Twice", "aten::mul"]
    assert apply(ember.ones(2)).tolist() == [2.0, 2.0]


def test_profilers_do_not_nest():
    before = _snapshot()
    with profile():
        with pytest.raises(RuntimeError, match="already recording"):
            with profile():
                pass
    _assert_restored(before)


def test_custom_function():
    class Sq(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = ember.randn(3, requires_grad=True)
    with profile() as prof:
        Sq.apply(x).sum().backward()
    ev = {e.name: e for e in prof.events()}
    assert [c.name for c in ev["Sq"].cpu_children] == ["aten::mul"]
    assert ev["SqBackward"].cpu_parent is ev[EVAL + "SqBackward"]
    assert any(c.name == "aten::mul" for c in ev["SqBackward"].cpu_children)


def test_threads_are_kept_apart():
    def work():
        with record_function("in_thread"):
            ember.ones(4).exp()

    with profile() as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        ember.ones(4).sin()
    ev = {e.name: e for e in prof.events()}
    assert ev["aten::exp"].cpu_parent is ev["in_thread"]
    assert ev["in_thread"].thread != ev["aten::sin"].thread


@pytest.mark.parametrize("kw, actions", [
    (dict(wait=1, warmup=1, active=2, repeat=1, skip_first=1), "NNWRSNNN"),
    (dict(wait=1, warmup=1, active=2), "NWRSNWRS"),
    (dict(wait=0, warmup=1, active=1, repeat=2), "WSWSNNNN"),
    (dict(wait=2, warmup=1, active=1, skip_first_wait=1), "WSNNWSNN"),
])
def test_schedule_actions(kw, actions):
    names = {"N": ProfilerAction.NONE, "W": ProfilerAction.WARMUP, "R": ProfilerAction.RECORD,
             "S": ProfilerAction.RECORD_AND_SAVE}
    fn = schedule(**kw)
    assert [fn(i) for i in range(len(actions))] == [names[c] for c in actions]


def test_schedule_checks():
    with pytest.warns(UserWarning, match="won't be using warmup"):
        fn = schedule(wait=0, warmup=0, active=1)
    assert fn(3) is ProfilerAction.RECORD_AND_SAVE
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(wait=0, warmup=1, active=0)
    with pytest.raises(AssertionError, match="non-negative"):
        schedule(wait=0, warmup=1, active=1)(-1)


def _scheduled_loop(prof, n):
    x = ember.ones(3)
    for i in range(n):
        ember.add(x, i)
        with record_function(f"it{i}"):
            ember.mul(x, 2)
        prof.step()


def test_profile_follows_schedule():
    seen = []

    def ready(p):
        seen.append((p.step_num, sorted({e.key for e in p.key_averages()})))

    sched = schedule(wait=1, warmup=1, active=2, repeat=2)
    with profile(schedule=sched, on_trace_ready=ready, acc_events=False) as prof:
        assert prof.current_action is ProfilerAction.NONE
        pmod._WARNED_CLEARS[0] = True  # the second cycle's warning is tested below
        _scheduled_loop(prof, 10)
    common = ["ProfilerStep*", "aten::add", "aten::mul"]
    assert seen == [(4, sorted(common + ["it2", "it3"])), (8, sorted(common + ["it6", "it7"]))]
    assert sorted({e.key for e in prof.key_averages()}) == sorted(common + ["it6", "it7"])
    steps = [e for e in prof.events() if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#6", "ProfilerStep#7"]
    assert all(e.cpu_parent is None for e in steps)


def test_second_cycle_warns_once(monkeypatch):
    monkeypatch.setattr(pmod, "_WARNED_CLEARS", [False])
    with pytest.warns(UserWarning, match="clears events at the end of each cycle"):
        with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2)) as prof:
            _scheduled_loop(prof, 4)


def test_acc_events_keeps_cycles():
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2), acc_events=True) as prof:
        _scheduled_loop(prof, 4)
    assert {"it1", "it3"} <= {e.key for e in prof.key_averages()}
    assert "it0" not in {e.key for e in prof.key_averages()}


def test_without_schedule_every_step_is_recorded_and_ready_once():
    calls = []
    with profile(on_trace_ready=calls.append) as prof:
        _scheduled_loop(prof, 3)
    assert calls == [prof]
    keys = {e.key for e in prof.key_averages()}
    assert {"it0", "it1", "it2"} <= keys and "ProfilerStep*" not in keys
    assert prof.step_num == 3


def test_table(mlp_prof):
    table = mlp_prof.key_averages().table(sort_by="cpu_time_total", row_limit=100)
    lines = table.splitlines()
    assert re.split(r"\s{2,}", lines[1].strip()) == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                                                     "CPU time avg", "# of Calls"]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert lines[-1].startswith("Self CPU time total: ")
    rows = [line for line in lines[3:-2]]
    assert rows[0].split()[0] == "model_step" and rows[0].split()[3] == "100.00%"
    addmm = next(r for r in rows if r.split()[0] == "aten::addmm")
    assert addmm.split()[-1] == "2"
    assert any(r.strip().startswith("autograd::engine::evaluate_function: torch::autograd...") for r in rows)
    assert len({len(line) for line in lines[:-1]}) == 1  # every row as wide as the rules
    by_count = mlp_prof.key_averages().table(sort_by="count", row_limit=2).splitlines()
    assert len(by_count) == 7 and by_count[3].split()[-1] == "4" and by_count[4].split()[-1] == "4"
    shaped = mlp_prof.key_averages(group_by_input_shape=True).table(sort_by="self_cpu_time_total")
    assert "Input Shapes" in shaped.splitlines()[1]
    assert any(line.endswith("[[3, 4], [8, 4], [8]]  ") for line in shaped.splitlines())
    assert str(mlp_prof.key_averages()) == mlp_prof.key_averages().table()
    assert "ms" in mlp_prof.key_averages().table(time_unit="ms").splitlines()[3]


def test_chrome_trace(mlp_prof, tmp_path):
    path = str(tmp_path / "trace.json")
    mlp_prof.add_metadata("run", "mlp")
    mlp_prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    assert trace["run"] == "mlp"
    xs = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == len(mlp_prof.events())
    for e in xs:
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and e["dur"] >= 0 and e["ts"] > 0
    names = {e["name"]: e for e in xs}
    assert names["model_step"]["cat"] == "user_annotation" and names["aten::addmm"]["cat"] == "cpu_op"
    assert names["model_step"]["dur"] == pytest.approx(mlp_prof.events()[0].cpu_time_total, abs=1e-3)
    assert EVAL + "AddmmBackward0" in names
    assert [e["args"]["Input Dims"] for e in xs if e["name"] == "aten::relu"] == [[[3, 8]]]
    assert any(e["ph"] == "M" and e["name"] == "thread_name" for e in trace["traceEvents"])
    gz = str(tmp_path / "trace.json.gz")
    mlp_prof.export_chrome_trace(gz)
    with gzip.open(gz) as f:
        assert json.load(f)["traceEvents"] == trace["traceEvents"]


def test_tensorboard_trace_handler(tmp_path):
    out = tmp_path / "logs"
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
                 on_trace_ready=tensorboard_trace_handler(str(out), worker_name="w0")) as prof:
        _scheduled_loop(prof, 3)
    files = os.listdir(out)
    assert len(files) == 1 and re.fullmatch(r"w0\.\d+\.pt\.trace\.json", files[0])
    with open(out / files[0]) as f:
        assert any(e["name"] == "it1" for e in json.load(f)["traceEvents"])
    with profile(on_trace_ready=tensorboard_trace_handler(str(out), use_gzip=True)):
        ember.ones(2).exp()
    gz = [f for f in os.listdir(out) if f.endswith(".pt.trace.json.gz")]
    assert len(gz) == 1 and gz[0].startswith(f"{os.uname().nodename}_{os.getpid()}.")


def test_with_stack_and_export_stacks(tmp_path):
    def user_fn(a):
        return a.exp()

    with profile(with_stack=True) as prof:
        user_fn(ember.ones(8))
    exp = next(e for e in prof.events() if e.name == "aten::exp")
    assert re.match(r".*test_profiler\.py\(\d+\): user_fn$", exp.stack[0])
    assert all("/ember/" not in frame for frame in exp.stack)
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), "self_cpu_time_total")
    lines = path.read_text().splitlines()
    assert lines and all(re.fullmatch(r"\S+ \d+", line) for line in lines)
    grouped = prof.key_averages(group_by_stack_n=2)
    assert all(len(e.stack) <= 2 for e in grouped)
    assert "Source Location" in grouped.table().splitlines()[1]
    with pytest.raises(ValueError, match="metric should be one of"):
        prof.export_stacks(str(path), "count")


def test_activities_and_errors():
    assert ProfilerActivity.CPU in supported_activities()
    assert [a.value for a in (ProfilerActivity.CPU, ProfilerActivity.CUDA)] == [0, 2]
    p = profile(activities=[ProfilerActivity.CPU], use_cuda=True)
    assert ProfilerActivity.CUDA in p.activities
    with pytest.raises(RuntimeError, match="nothing has been recorded yet"):
        p.key_averages()
    with pytest.raises(NotImplementedError, match="execution traces"):
        profile(execution_trace_observer=object())
    assert ember.profiler.profile is profile


def test_autograd_profiler_spelling():
    from ember.autograd.profiler import profile as old_profile
    from ember.autograd.profiler import record_function as old_rf
    assert old_rf is record_function and ember.autograd.profiler.profile is old_profile
    before = _snapshot()
    with old_profile(record_shapes=True) as prof:
        with old_rf("block"):
            ember.ones(3) + 1
    _assert_restored(before)
    assert [e.name for e in prof.function_events] == ["block", "aten::add"]
    assert prof.key_averages()[0].key == "block"
    assert prof.total_average().count == 2
    assert prof.self_cpu_time_total == pytest.approx(prof.function_events[0].cpu_time_total)
    assert "aten::add" in prof.table()
    with old_profile(enabled=False) as off:
        ember.ones(3) + 1
    with pytest.raises(RuntimeError, match="didn't finish"):
        off.key_averages()
