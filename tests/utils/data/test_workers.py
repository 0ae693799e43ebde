"""DataLoader with worker processes. Every loader here has a timeout (or runs in a subprocess with one), so that a
regression fails instead of hanging the suite."""
import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ember
from ember.utils.data import DataLoader

from . import _datasets as D

# on a machine with fewer CPUs than workers, torch's "excessive worker creation" warning is expected
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create:UserWarning")

LIMIT = 20  # seconds: any single wait in these tests beyond this is a bug
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _children():
    """Pids of live child processes of this process (from /proc, so nothing is reaped or cached)."""
    me, kids = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me and fields[0] != "Z" and not _is_helper(entry):
                kids.append(int(entry))
    return kids


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _is_helper(pid):
    """multiprocessing's own long-lived helpers (the resource tracker started by spawn), not workers."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
    except OSError:
        return False
    return b"resource_tracker" in cmd or b"forkserver" in cmd


def _wait_no_children(limit=5.0):
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        multiprocessing.active_children()  # reaps finished ones
        if not _children():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(autouse=True)
def no_leaked_workers():
    yield
    gc.collect()
    assert _wait_no_children(), f"worker processes left alive: {_children()}"


def _loader(ds, **kw):
    kw.setdefault("timeout", LIMIT)
    return DataLoader(ds, **kw)


def _flat(batches):
    return [b.tolist() if isinstance(b, ember.Tensor) else b for b in batches]


def test_order_with_workers_equals_without():
    ref = [(x.tolist(), i.tolist()) for x, i in DataLoader(D.Squares(23), batch_size=3)]
    got = [(x.tolist(), i.tolist()) for x, i in _loader(D.Squares(23), batch_size=3, num_workers=2)]
    assert got == ref


def test_shuffled_order_same_with_and_without_workers():
    ember.manual_seed(0)
    ref = _flat(DataLoader(range(17), batch_size=4, shuffle=True))
    ember.manual_seed(0)
    got = _flat(_loader(range(17), batch_size=4, shuffle=True, num_workers=2))
    assert got == ref


def test_in_order_false_yields_ready_batches_first():
    ds = D.Slow(delay=0.6, n=6, slow_index=0)
    got = _flat(_loader(ds, batch_size=1, num_workers=2, in_order=False))
    assert sorted(x[0] for x in got) == list(range(6))
    assert got[0] != [0]
    assert _flat(_loader(D.Slow(n=6), batch_size=1, num_workers=2)) == [[i] for i in range(6)]


def test_worker_seeding_differs_per_worker_and_is_reproducible():
    def run():
        ember.manual_seed(123)
        return [b for b in _loader(D.RandomDraws(), batch_size=None, num_workers=2)]
    a, b = run(), run()
    assert a == b
    by_worker = {w: [r for r in a if r["worker"] == w] for w in (0, 1)}
    assert len(by_worker[0]) == 4 and len(by_worker[1]) == 4
    for key in ("ember", "random", "numpy"):
        assert by_worker[0][0][key] != by_worker[1][0][key], key
    ember.manual_seed(124)
    c = [b for b in _loader(D.RandomDraws(), batch_size=None, num_workers=2)]
    assert c[0]["numpy"] != a[0]["numpy"] and c[0]["random"] != a[0]["random"]


def test_worker_info_fields_and_seed():
    ember.manual_seed(7)
    got = list(_loader(D.InfoRecords(), batch_size=None, num_workers=2))
    ember.manual_seed(7)
    base = int(ember.empty((), dtype=ember.int64).random_().item())  # the iterator's first draw
    assert sorted({tuple(r) for r in got}) == [(0, 2, base, True), (1, 2, base + 1, True)]


def test_worker_info_and_init_fn():
    infos = list(_loader(D.Range(0, 6), batch_size=None, num_workers=2, worker_init_fn=D.record_worker_info))
    assert sorted(infos) == list(range(6))  # sharded through get_worker_info: each item exactly once


def test_iterable_dataset_without_sharding_duplicates():
    got = list(_loader(D.Range(0, 3, shard=False), batch_size=None, num_workers=2))
    assert sorted(got) == [0, 0, 1, 1, 2, 2]


def test_iterable_dataset_batches_with_workers():
    got = _flat(_loader(D.Range(0, 10), batch_size=2, num_workers=2))
    assert sorted(x for b in got for x in b) == list(range(10))
    dropped = _flat(_loader(D.Range(0, 10), batch_size=3, num_workers=2, drop_last=True))
    assert all(len(b) == 3 for b in dropped) and len(dropped) == 2  # each worker: 5 items -> one full batch


def test_worker_exception_reraised_with_traceback():
    with pytest.raises(ValueError) as info:
        list(_loader(D.FailAt(5), batch_size=2, num_workers=2))
    msg = str(info.value)
    assert "Caught ValueError in DataLoader worker process 0." in msg
    assert "Original Traceback (most recent call last):" in msg and "bad index 5" in msg
    assert "__getitem__" in msg


def test_worker_keyerror_message_readable():
    with pytest.raises(KeyError) as info:
        list(_loader(D.FailAt(1, KeyError), batch_size=1, num_workers=1))
    assert "Caught KeyError in DataLoader worker process 0." in str(info.value)
    assert "\\n" not in str(info.value)


def test_worker_init_fn_error():
    def boom(worker_id):
        raise ValueError("init failed")
    with pytest.raises(ValueError, match="(?s)Caught ValueError in DataLoader worker process .*init failed"):
        list(_loader(range(4), num_workers=1, worker_init_fn=boom))


def test_killed_worker_detected_quickly():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly") as info:
        list(_loader(D.KillAt(3), batch_size=1, num_workers=2))
    assert time.monotonic() - t0 < 10
    assert "SIGKILL" in str(info.value)


def test_timeout():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.5 seconds"):
        next(iter(DataLoader(D.Slow(delay=5.0), num_workers=1, timeout=0.5)))
    assert time.monotonic() - t0 < 4


def test_early_break_and_gc_leave_no_workers():
    it = iter(_loader(D.Squares(50), batch_size=2, num_workers=2))
    next(it)
    assert len(_children()) == 2
    del it
    gc.collect()
    assert _wait_no_children()
    for x in _loader(D.Squares(50), batch_size=2, num_workers=2):
        break
    del x
    gc.collect()
    assert _wait_no_children()


def test_exhausted_iterator_shuts_workers_down_at_once():
    it = iter(_loader(range(4), batch_size=2, num_workers=2))
    assert len(list(it)) == 2
    assert _wait_no_children()  # while `it` is still referenced


def test_persistent_workers_reused_across_epochs():
    dl = _loader(D.WorkerPid(), batch_size=10, num_workers=2, persistent_workers=True)
    pids1 = {p for b in _flat(dl) for p in b}
    for _ in dl:  # an epoch broken off early
        break
    pids2 = {p for b in _flat(dl) for p in b}
    assert pids1 == pids2 and len(pids1) == 2
    assert len(list(dl)) == 10
    del dl
    gc.collect()
    assert _wait_no_children()


def test_persistent_workers_results_repeat():
    dl = _loader(D.Squares(9), batch_size=2, num_workers=2, persistent_workers=True)
    first = [i.tolist() for _, i in dl]
    assert [i.tolist() for _, i in dl] == first == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]


def test_spawn_context():
    got = [i.tolist() for _, i in _loader(D.Squares(6), batch_size=3, num_workers=1,
                                          multiprocessing_context="spawn")]
    assert got == [[0, 1, 2], [3, 4, 5]]


def _run_script(tmp_path, body, limit=60):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=limit, env=env,
                          cwd=str(tmp_path), check=False)


def test_spawn_without_main_guard_explains(tmp_path):
    r = _run_script(tmp_path, """
        from ember.utils.data import DataLoader
        from tests.utils.data._datasets import Squares
        for batch in DataLoader(Squares(4), num_workers=1, multiprocessing_context="spawn", timeout=30):
            pass
    """)
    assert r.returncode != 0
    assert "if __name__ == '__main__':" in r.stderr
    assert "exited unexpectedly" in r.stderr


def test_workers_exit_when_parent_is_killed(tmp_path):
    r = _run_script(tmp_path, """
        import os, signal
        from ember.utils.data import DataLoader
        from tests.utils.data._datasets import WorkerPid
        if __name__ == "__main__":
            dl = DataLoader(WorkerPid(), batch_size=50, num_workers=2, persistent_workers=True, timeout=30)
            pids = sorted(set(sum((b.tolist() for b in dl), [])))
            print(" ".join(map(str, pids)), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert r.returncode == -signal.SIGKILL
    pids = [int(p) for p in r.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
        time.sleep(0.1)
    assert not [p for p in pids if _running(p)]


def test_worker_batches_arrive_in_shared_memory():
    from ember._backend import shared_memory as _shared
    if not hasattr(_shared, "empty_shared"):
        pytest.skip("ember.multiprocessing has no shared-memory allocator")
    x, i = next(iter(_loader(D.Squares(8), batch_size=4, num_workers=1)))
    assert x.is_shared() and i.tolist() == [0, 1, 2, 3]
    assert x[:, 0].tolist() == [0.0, 1.0, 4.0, 9.0]
    x0, _ = next(iter(DataLoader(D.Squares(8), batch_size=4)))
    assert not x0.is_shared()  # the main process stacks into ordinary memory


def test_persistent_workers_reseeded_each_epoch():
    ember.manual_seed(11)
    dl = _loader(D.RandomDraws(), batch_size=None, num_workers=2, persistent_workers=True)
    e1, e2 = list(dl), list(dl)
    assert [r["numpy"] for r in e1] != [r["numpy"] for r in e2]
    ember.manual_seed(11)
    dl2 = _loader(D.RandomDraws(), batch_size=None, num_workers=2, persistent_workers=True)
    assert list(dl2) == e1 and list(dl2) == e2


def test_worker_batch_tensors_share_one_memory_file():
    from ember._backend import shared_memory as _shared
    batches = list(_loader(D.Squares(16), batch_size=4, num_workers=1))
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    for x, i in batches:  # images and labels travel in one file
        assert _shared.storage_of(x._data) is _shared.storage_of(i._data)
        assert x.is_shared() and i.is_shared()
        assert x.storage_offset() == 0 and i.storage_offset() == 0  # each still a storage of its own
        assert x[:, 1].tolist() == [float(v * v) for v in i.tolist()]


def test_batch_that_cannot_be_sent_raises_and_later_batches_are_intact():
    # the worker pickles a batch itself: a failure half way (after the tensors' descriptors went out) reaches the
    # main process as an error, and the next batch does not pick up the failed one's memory
    it = iter(_loader(D.UnpicklableAt(4, bad=1), batch_size=None, num_workers=1))
    x, i = next(it)
    assert (x.tolist(), i) == ([0.0, 0.0], 0)
    with pytest.raises(Exception, match="in DataLoader worker process 0"):
        next(it)
    for k in (2, 3):
        x, i = next(it)
        assert (x.tolist(), i) == ([float(k)] * 2, k) and x.is_shared()
    del it
