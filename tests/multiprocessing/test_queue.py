"""Tensors through Process arguments, Queues, Pipes and Pools of the fork and spawn contexts: same memory, no copy."""
import gc

import pytest

import ember
import ember.multiprocessing as mp

from . import _workers as W

guard = pytest.fixture(autouse=True)(W.guard)

METHODS = ["fork", "spawn"]


def _run(ctx, target, *args):
    p = ctx.Process(target=target, args=args)
    p.start()
    return p


def _finish(p):
    p.join(60)
    assert p.exitcode == 0, f"child exit code {p.exitcode}"


@pytest.mark.parametrize("method", METHODS + ["forkserver"])
def test_child_writes_parent_sees(method):
    ctx = mp.get_context(method)
    t = ember.zeros(4).share_memory_()
    _finish(_run(ctx, W.fill, t, 3.0))
    assert t.tolist() == [3.0] * 4


@pytest.mark.parametrize("method", METHODS)
def test_queue_moves_tensor_into_shared_memory(method):
    ctx = mp.get_context(method)
    q, done = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.fill_from_queue, q, done)
    t = ember.zeros(3)
    q.put(t)
    assert done.get(timeout=60) == "ok"
    _finish(p)
    assert t.is_shared()
    assert t.tolist() == [7.0] * 3  # the child wrote into the parent's memory


@pytest.mark.parametrize("method", METHODS)
def test_round_trip_keeps_memory_views_dtypes(method):
    ctx = mp.get_context(method)
    qi, qo = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.echo, qi, qo)
    base = ember.arange(12.0).reshape(3, 4).share_memory_()
    dtypes = [ember.float16, ember.bfloat16, ember.float32, ember.float64, ember.int8, ember.uint8, ember.int16,
              ember.int32, ember.int64, ember.bool, ember.complex64, ember.complex128]
    typed = [ember.ones(2, 3, dtype=dt) for dt in dtypes]
    qi.put((base, base[1], base[:, 1], base.t(), base[0, 2]))
    qi.put(typed)
    qi.put(ember.empty(0))
    views = qo.get(timeout=60)
    back = qo.get(timeout=60)
    empty = qo.get(timeout=60)
    qi.put(None)
    _finish(p)
    # sent back to its origin, a tensor maps the very same memory
    assert views[0].data_ptr() == base.data_ptr()
    assert views[1].data_ptr() == base.data_ptr() + 16
    assert views[2].stride() == (4,) and views[2].tolist() == [1.0, 5.0, 9.0]
    assert views[3].stride() == (1, 4) and views[3].shape == (4, 3)
    assert views[4].dim() == 0 and views[4].item() == 2.0
    views[1].fill_(-1.0)
    assert base[1].tolist() == [-1.0] * 4
    for t, dt in zip(back, dtypes):
        assert t.dtype == dt and t.shape == (2, 3) and t.is_shared()
        assert t.tolist() == ember.ones(2, 3, dtype=dt).tolist()
    assert empty.shape == (0,) and empty.dtype == ember.float32 and not empty.is_shared()  # as in torch


@pytest.mark.parametrize("method", METHODS)
def test_views_sent_together_share_memory_in_child(method):
    ctx = mp.get_context(method)
    qi, qo = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.describe, qi, qo)
    base = ember.arange(12.0).reshape(3, 4)
    qi.put([base, base[2], base[:, 3]])
    info = qo.get(timeout=60)
    _finish(p)
    ptrs = [i[-1] for i in info]
    assert ptrs[1] - ptrs[0] == 32 and ptrs[2] - ptrs[0] == 12
    assert [i[5] for i in info] == [(3, 4), (4,), (3,)]
    assert [i[6] for i in info] == [(4, 1), (1,), (4,)]


@pytest.mark.parametrize("method", METHODS)
def test_parameters_and_requires_grad(method):
    ctx = mp.get_context(method)
    qi, qo = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.describe, qi, qo)
    w = ember.nn.Parameter(ember.ones(2, 2))
    w.grad = ember.ones(2, 2)
    x = ember.ones(3, requires_grad=True)
    frozen = ember.nn.Parameter(ember.ones(1), requires_grad=False)
    qi.put([w, x, frozen, w.grad, ember.ones(2, dtype=ember.int64)])
    info = qo.get(timeout=60)
    _finish(p)
    assert [i[0] for i in info] == ["Parameter", "Tensor", "Parameter", "Tensor", "Tensor"]
    assert [i[1] for i in info] == [True, True, False, False, False]
    assert all(i[2] for i in info)  # all arrive in shared memory
    assert info[0][3]  # as in torch, .grad does not travel with its tensor; sent on its own it does
    assert info[3][4] == "ember.float32"


class Tagged(ember.Tensor):
    pass


@pytest.mark.parametrize("method", METHODS)
def test_subclass_keeps_type_and_attributes(method):
    ctx = mp.get_context(method)
    qi, qo = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.echo, qi, qo)
    t = ember.ones(2).as_subclass(Tagged)
    t.tag = "hello"
    qi.put(t)
    r = qo.get(timeout=60)
    qi.put(None)
    _finish(p)
    assert type(r) is Tagged and r.tag == "hello" and r.data_ptr() == t.data_ptr()


@pytest.mark.parametrize("method", METHODS)
def test_pipe_and_simple_queue(method):
    ctx = mp.get_context(method)
    a, b = ctx.Pipe()
    t = ember.zeros(2)
    a.send(t)
    r = b.recv()
    r.fill_(4.0)
    assert t.tolist() == [4.0, 4.0]
    sq = ctx.SimpleQueue()
    sq.put(t)
    assert sq.get().data_ptr() == t.data_ptr()
    a.close(), b.close(), sq.close()


@pytest.mark.parametrize("method", METHODS)
def test_pool(method):
    ctx = mp.get_context(method)
    ts = [ember.full((3,), float(i)).share_memory_() for i in range(4)]
    with ctx.Pool(2) as pool:
        out = pool.map(W.pool_double, ts)
    assert [t.tolist() for t in ts] == [[0.0] * 3, [2.0] * 3, [4.0] * 3, [6.0] * 3]
    assert [o.data_ptr() for o in out] == [t.data_ptr() for t in ts]


def test_non_leaf_refused_on_a_queue():
    q = mp.get_context("spawn").SimpleQueue()
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="call detach"):
        q.put(x + 1)
    q.close()


def test_nothing_left_behind():
    shm = W.shm_entries()
    gc.collect()
    fds = W.open_fds()
    ctx = mp.get_context("spawn")
    qi, qo = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.echo, qi, qo)
    for _ in range(3):
        qi.put(ember.ones(5))
        r = qo.get(timeout=60)
        assert r.is_shared()
    del r
    qi.put(None)
    _finish(p)
    qi.close(), qo.close()
    qi.join_thread(), qo.join_thread()
    del qi, qo, p
    gc.collect()
    assert W.shm_entries() == shm
    assert W.open_fds() <= fds + 2  # the resource sharer's listener and the resource tracker's pipe may stay


def test_sender_gone_gives_clear_error():
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = _run(ctx, W.put_and_exit, q)
    _finish(p)  # the anti-pattern: the producer is joined before its tensor was received
    with pytest.raises(RuntimeError, match="keep the producing process alive"):
        q.get(timeout=60)
    q.close()
    q.join_thread()


def test_out_of_descriptors_message():
    ctx = mp.get_context("fork")
    q, out = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.hold_many, q, out, 30)
    ts = [ember.full((2,), float(i)) for i in range(30)]
    for t in ts:
        q.put(t)
    msg = out.get(timeout=60)
    _finish(p)
    assert "too many open files" in msg and "ulimit -n" in msg
    q.close(), out.close()
    q.join_thread(), out.join_thread()


@pytest.mark.parametrize("method", METHODS)
def test_without_memfd_files_are_unlinked(method, monkeypatch):
    # systems without memfd_create use unlinked files in /dev/shm: same behaviour, nothing named left
    from ember._backend import shared_memory as _shared
    monkeypatch.setattr(_shared, "_HAVE_MEMFD", False)
    shm = W.shm_entries()
    ctx = mp.get_context(method)
    t = ember.zeros(4).share_memory_()
    assert W.shm_entries() == shm
    _finish(_run(ctx, W.fill, t, 5.0))
    q, done = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.fill_from_queue, q, done)
    u = ember.zeros(2)
    q.put(u)
    assert done.get(timeout=60) == "ok"
    _finish(p)
    assert t.tolist() == [5.0] * 4 and u.tolist() == [7.0] * 2
    assert W.shm_entries() == shm


@pytest.mark.parametrize("method", METHODS)
def test_regions_of_one_storage_round_trip(method):
    from ember._backend import shared_memory as _shared
    ctx = mp.get_context(method)
    qi, qo = ctx.Queue(), ctx.Queue()
    p = _run(ctx, W.echo, qi, qo)
    arena = _shared.BatchArena()
    arena.predict = 4096
    arena.begin()
    x = ember.from_numpy(arena.alloc((2, 3), "float32"))
    y = ember.from_numpy(arena.alloc(4, "int64"))
    arena.end()
    x.copy_(ember.arange(6.0).reshape(2, 3))
    y.copy_(ember.arange(4))
    qi.put((x, x[1], y))
    x2, x2row, y2 = qo.get(timeout=60)
    qi.put(None)
    _finish(p)
    assert x2.data_ptr() == x.data_ptr() and y2.data_ptr() == y.data_ptr()  # the same mapping: sent back home
    assert x2row.storage_offset() == 3 and y2.storage_offset() == 0
    x2[0, 0] = 9.0
    assert x[0, 0].item() == 9.0
    assert y2.tolist() == [0, 1, 2, 3]
    assert isinstance(_shared.holder_of(y2._data), _shared.SharedRegion)
