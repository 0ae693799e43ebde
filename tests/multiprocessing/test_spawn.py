"""spawn / start_processes / ProcessContext, and Hogwild training on a shared model."""
import pickle
import time

import pytest

import ember
import ember.multiprocessing as mp

from . import _workers as W

guard = pytest.fixture(autouse=True)(W.guard)

METHODS = ["fork", "spawn"]


@pytest.mark.parametrize("method", METHODS)
def test_start_processes_shared_tensor(method):
    t = ember.zeros(3).share_memory_()
    assert mp.start_processes(W.add_rank, args=(t,), nprocs=3, start_method=method) is None
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_spawn_returns_context_when_not_joining():
    ctx = mp.spawn(W.sleep_then_ok, args=(0.5,), nprocs=2, join=False)
    assert isinstance(ctx, mp.ProcessContext)
    assert len(ctx.pids()) == 2
    assert ctx.join(timeout=0.01) is False  # still running
    deadline = time.monotonic() + 60
    while not ctx.join(timeout=1):
        assert time.monotonic() < deadline
    assert ctx.join() is True  # and again once done
    assert all(p.exitcode == 0 for p in ctx.processes)


def test_spawn_propagates_child_exception():
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.spawn(W.raise_value_error, nprocs=2)
    e = info.value
    assert e.error_index == 1
    msg = str(e)
    assert msg.startswith("\n\n-- Process 1 terminated with the following error:\nTraceback (most recent call last):")
    assert "ValueError: bad thing in rank 1" in msg
    assert "raise_value_error" in msg  # the child's own traceback
    r = pickle.loads(pickle.dumps(e))
    assert type(r) is mp.ProcessRaisedException and r.error_index == 1 and r.error_pid == e.error_pid


def test_killed_child_reports_signal():
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with signal SIGKILL") as info:
        mp.start_processes(W.kill_self, nprocs=2, start_method="fork")
    e = info.value
    assert e.error_index == 0 and e.signal_name == "SIGKILL" and e.exit_code == -9
    r = pickle.loads(pickle.dumps(e))
    assert (r.error_index, r.exit_code, r.signal_name) == (0, -9, "SIGKILL")


def test_exit_code_reported():
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as info:
        mp.start_processes(W.exit_code, nprocs=1, start_method="fork")
    assert info.value.exit_code == 3 and info.value.signal_name is None


def test_failure_stops_the_other_processes():
    ctx = mp.start_processes(W.raise_or_sleep, nprocs=3, join=False, start_method="fork")
    t0 = time.monotonic()
    with pytest.raises(mp.ProcessRaisedException, match="rank 0 failed"):
        while not ctx.join(timeout=30, grace_period=1):
            pass
    assert time.monotonic() - t0 < 20
    assert not any(p.is_alive() for p in ctx.processes)
    assert [p.exitcode for p in ctx.processes][1:] == [-15, -15]  # SIGTERM


def test_long_traceback_does_not_deadlock():
    with pytest.raises(mp.ProcessRaisedException, match="x{1000}"):
        mp.start_processes(W.raise_long, nprocs=1, start_method="fork")


def test_spawn_warns_on_other_start_method():
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        mp.spawn(W.sleep_then_ok, args=(0,), nprocs=1, start_method="fork")


def test_spawn_context_deprecated_name():
    with pytest.warns(UserWarning, match="SpawnContext is renamed to ProcessContext"):
        c = mp.SpawnContext([], [])
    assert c.join() is True


@pytest.mark.parametrize("method", METHODS)
def test_hogwild(method):
    ember.manual_seed(0)
    model = ember.nn.Linear(4, 1)
    model.share_memory()
    before = [p.detach().clone() for p in model.parameters()]
    mp.start_processes(W.hogwild, args=(model, 20, 0.05), nprocs=2, start_method=method)
    after = list(model.parameters())
    assert all(not ember.equal(a, b) for a, b in zip(after, before))
    # both workers fitted y = sum(x): the shared weights moved towards ones
    err_before = (before[0] - 1).abs().sum().item()
    err_after = (after[0].detach() - 1).abs().sum().item()
    assert err_after < err_before
    assert all(isinstance(p, ember.nn.Parameter) and p.is_shared() for p in model.parameters())
