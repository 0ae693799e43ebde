"""ember.multiprocessing compared with torch.multiprocessing: names, strategies, errors, what survives a queue."""
import pickle
from multiprocessing.reduction import ForkingPickler

import pytest

import ember
import ember.multiprocessing as emp
from tests.multiprocessing import _workers as W

torch = pytest.importorskip("torch")
import torch.multiprocessing as tmp

guard = pytest.fixture(autouse=True)(W.guard)


def test_same_public_names():
    assert emp.__all__ == tmp.__all__
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException", "SpawnContext"):
        assert hasattr(emp, name) and hasattr(tmp, name)


def test_sharing_strategies_match():
    assert emp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert emp.get_sharing_strategy() == tmp.get_sharing_strategy()


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value)


def test_non_leaf_error_matches():
    e = _error(lambda: ForkingPickler.dumps(ember.ones(2, requires_grad=True) * 2))
    t = _error(lambda: ForkingPickler.dumps(torch.ones(2, requires_grad=True) * 2))
    assert e == t


def _round_trip(lib, obj):
    ctx = (emp if lib is ember else tmp).get_context("fork")
    qi, qo = ctx.Queue(), ctx.Queue()
    p = ctx.Process(target=W.describe, args=(qi, qo))
    p.start()
    qi.put(obj)
    info = qo.get(timeout=60)
    p.join(60)
    assert p.exitcode == 0
    return info


def _objects(lib):
    w = lib.nn.Parameter(lib.ones(2, 3))
    w.grad = lib.ones(2, 3)
    x = lib.arange(12.0).reshape(3, 4)
    leaf = lib.ones(3, requires_grad=True)
    leaf.grad = lib.ones(3)
    frozen = lib.nn.Parameter(lib.ones(1), requires_grad=False)
    return [w, x, x[1], x[:, 2], x.t(), leaf, frozen, lib.ones(2, dtype=lib.int16), lib.ones(2, dtype=lib.bfloat16),
            lib.zeros(0), lib.tensor(3.0)]


def test_queue_round_trip_matches_torch():
    e = _round_trip(ember, _objects(ember))
    t = _round_trip(torch, _objects(torch))
    # type, requires_grad, is_shared, grad is None, dtype, shape, stride (pointers differ)
    strip = [(i[0], i[1], i[2], i[3], i[4].split(".")[-1], i[5], i[6]) for i in e]
    tstrip = [(i[0], i[1], i[2], i[3], i[4].split(".")[-1], i[5], i[6]) for i in t]
    assert strip == tstrip
    # views of one tensor arrive at the same relative addresses
    assert [i[7] - e[1][7] for i in e[1:5]] == [i[7] - t[1][7] for i in t[1:5]]


def test_sending_moves_into_shared_memory_like_torch():
    for lib in (ember, torch):
        x = lib.ones(3)
        assert not x.is_shared()
        ForkingPickler.dumps(x)
        assert x.is_shared()


def test_raised_exception_format_matches():
    with pytest.raises(emp.ProcessRaisedException) as e:
        emp.start_processes(W.raise_value_error, nprocs=2, start_method="fork")
    with pytest.raises(tmp.ProcessRaisedException) as t:
        tmp.start_processes(W.raise_value_error, nprocs=2, start_method="fork")
    el, tl = str(e.value).splitlines(), str(t.value).splitlines()
    assert el[:4] == tl[:4] and el[-1] == tl[-1]
    assert e.value.error_index == t.value.error_index == 1


@pytest.mark.parametrize("fn", [W.kill_self, W.exit_code])
def test_exited_exception_matches(fn):
    with pytest.raises(emp.ProcessExitedException) as e:
        emp.start_processes(fn, nprocs=1, start_method="fork")
    with pytest.raises(tmp.ProcessExitedException) as t:
        tmp.start_processes(fn, nprocs=1, start_method="fork")
    assert str(e.value) == str(t.value)
    assert (e.value.exit_code, e.value.signal_name, e.value.error_index) == \
        (t.value.exit_code, t.value.signal_name, t.value.error_index)
    r = pickle.loads(pickle.dumps(e.value))
    assert (r.msg, r.exit_code, r.signal_name) == (e.value.msg, e.value.exit_code, e.value.signal_name)


def test_join_timeout_matches():
    for lib in (emp, tmp):
        ctx = lib.start_processes(W.sleep_then_ok, args=(0.5,), nprocs=1, join=False, start_method="fork")
        assert ctx.join(timeout=0.01) is False
        while not ctx.join(timeout=5):
            pass
        assert ctx.join() is True
