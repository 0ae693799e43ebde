"""Run under mpiexec by test_distributed.py: checks every collective's result on this rank; prints OK at the end."""
import datetime
import sys
import warnings

import numpy as np

import ember
import ember.distributed as dist


def check(cond, what):
    if not cond:
        raise AssertionError(f"rank {dist.get_rank()}: {what}")


def close(t, ref, what):
    check(np.allclose(t.numpy(), np.asarray(ref)), f"{what}: got {t.numpy()!r}, expected {ref!r}")


def main():
    check(not dist.is_initialized(), "initialised too early")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    check(dist.is_initialized() and dist.get_backend() == "gloo", "init")
    r, n = dist.get_rank(), dist.get_world_size()
    import os
    check(os.environ["RANK"] == str(r) and os.environ["LOCAL_RANK"] == str(r) and
          os.environ["WORLD_SIZE"] == str(n) == os.environ["LOCAL_WORLD_SIZE"], "torchrun's variables are set")
    try:
        dist.init_process_group("mpi")
        check(False, "second init accepted")
    except ValueError as e:
        check("twice" in str(e), "second init message")

    # all_reduce, every op, in place
    base = ember.tensor([1.0, 2.0, 3.0]) * (r + 1)
    ranks = np.arange(1, n + 1, dtype=np.float64)
    t = base.clone()
    dist.all_reduce(t)
    close(t, np.array([1, 2, 3]) * ranks.sum(), "all_reduce SUM")
    for op, f in ((dist.ReduceOp.PRODUCT, np.prod), (dist.ReduceOp.MIN, np.min), (dist.ReduceOp.MAX, np.max)):
        t = base.clone()
        dist.all_reduce(t, op=op)
        ref = np.array([1.0, 2, 3]) ** n * f(ranks) if op is dist.ReduceOp.PRODUCT else np.array([1, 2, 3]) * f(ranks)
        close(t, ref, str(op))
    t = base.clone()
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    close(t, np.array([1, 2, 3]) * ranks.mean(), "AVG")
    v0 = t._version
    dist.all_reduce(t)
    check(t._version == v0 + 1, "all_reduce bumps the version")
    # dtypes: int64, float64, float16, bfloat16, bool; a non-contiguous view
    for dt in (ember.int64, ember.float64, ember.float16, ember.bfloat16, ember.int32, ember.uint8):
        t = ember.full((2, 3), r + 1, dtype=dt)
        dist.all_reduce(t)
        check(t.dtype == dt, f"dtype kept {dt}")
        close(t.float(), np.full((2, 3), ranks.sum()), f"all_reduce {dt}")
    b = ember.tensor([r == 0, False])
    dist.all_reduce(b)
    check(b.tolist() == [True, False], "bool all_reduce")
    m = ember.zeros(4, 4)
    col = m[:, 1]
    col.fill_(r + 1.0)
    dist.all_reduce(col)
    close(m[:, 1], np.full(4, ranks.sum()), "non-contiguous view")
    close(m[:, 0], np.zeros(4), "rest of the base untouched")
    # async
    t = base.clone()
    w = dist.all_reduce(t, async_op=True)
    w.wait()
    check(w.is_completed() and w.is_success(), "work completed")
    close(t, np.array([1, 2, 3]) * ranks.sum(), "async all_reduce")
    # shape mismatch is reported, not a hang or garbage
    t = ember.zeros(3 + r)
    try:
        dist.all_reduce(t)
        check(n == 1, "mismatched shapes accepted")
    except RuntimeError as e:
        check("differ in shape" in str(e) and "rank 0: [3]" in str(e), f"mismatch message: {e}")

    # broadcast
    for src in range(n):
        t = ember.arange(4.0) * (r + 1)
        dist.broadcast(t, src=src)
        close(t, np.arange(4.0) * (src + 1), "broadcast")
    t = ember.arange(4.0) * (r + 1)
    dist.broadcast(t, src=n - 1, async_op=True).wait()
    close(t, np.arange(4.0) * n, "async broadcast")
    try:
        dist.broadcast(t)
        check(False, "broadcast without src")
    except ValueError as e:
        check("Must specify" in str(e), "broadcast message")

    # reduce
    t = ember.ones(3) * (r + 1)
    dist.reduce(t, dst=n - 1)
    if r == n - 1:
        close(t, np.full(3, ranks.sum()), "reduce at dst")
    else:
        close(t, np.full(3, r + 1.0), "reduce leaves the others")

    # all_gather, all_gather_into_tensor (cat and stack)
    out = [ember.zeros(2) for _ in range(n)]
    dist.all_gather(out, ember.tensor([r, 10.0 * r]))
    for i in range(n):
        close(out[i], [i, 10.0 * i], "all_gather")
    out = [ember.zeros(2, dtype=ember.int64) for _ in range(n)]
    dist.all_gather(out, ember.tensor([r, r]), async_op=True).wait()
    check([o.tolist() for o in out] == [[i, i] for i in range(n)], "async all_gather")
    o = ember.zeros(2 * n)
    dist.all_gather_into_tensor(o, ember.tensor([r, -r], dtype=ember.float32))
    close(o, np.ravel([[i, -i] for i in range(n)]), "all_gather_into_tensor")
    o = ember.zeros(n, 2)
    dist.all_gather_into_tensor(o, ember.tensor([r, -r], dtype=ember.float32))
    close(o, np.array([[i, -i] for i in range(n)]), "all_gather_into_tensor stacked")
    try:
        dist.all_gather_into_tensor(ember.zeros(3), ember.zeros(2))
        check(False, "bad sizes accepted")
    except ValueError as e:
        check("world_size times" in str(e), "all_gather_into_tensor message")

    # gather, scatter
    if r == 0:
        gl = [ember.zeros(3) for _ in range(n)]
        dist.gather(ember.full((3,), float(r)), gl, dst=0)
        for i in range(n):
            close(gl[i], np.full(3, float(i)), "gather")
        try:
            dist.gather(ember.zeros(3), dst=0)
        except ValueError as e:
            check("must be specified on destination" in str(e), "gather message")
        dist.gather(ember.zeros(3), [ember.zeros(3) for _ in range(n)], dst=0)  # keep the others in step
    else:
        dist.gather(ember.full((3,), float(r)), dst=0)
        try:
            dist.gather(ember.zeros(3), [ember.zeros(3)], dst=0)
        except ValueError as e:
            check("must NOT be specified" in str(e), "gather message 2")
        dist.gather(ember.zeros(3), dst=0)
    t = ember.zeros(2)
    sl = [ember.tensor([i, i * 2.0]) for i in range(n)] if r == 1 % n else None
    dist.scatter(t, sl, src=1 % n)
    close(t, [r, 2.0 * r], "scatter")

    # reduce_scatter, reduce_scatter_tensor
    o = ember.zeros(2)
    dist.reduce_scatter(o, [ember.tensor([i, r], dtype=ember.float32) for i in range(n)])
    close(o, [r * n, ranks.sum() - n], "reduce_scatter")
    o = ember.zeros(2)
    dist.reduce_scatter_tensor(o, ember.arange(2.0 * n) + r, op=dist.ReduceOp.AVG)
    close(o, np.arange(2.0 * n)[2 * r:2 * r + 2] + (n - 1) / 2, "reduce_scatter_tensor AVG")

    # all_to_all, all_to_all_single
    outs = [ember.zeros(2) for _ in range(n)]
    dist.all_to_all(outs, [ember.tensor([r, i], dtype=ember.float32) for i in range(n)])
    for j in range(n):
        close(outs[j], [j, r], "all_to_all")
    o = ember.zeros(n, 3)
    dist.all_to_all_single(o, ember.arange(3.0 * n).reshape(n, 3) + 100 * r)
    for j in range(n):
        close(o[j], np.arange(3.0) + 3 * r + 100 * j, "all_to_all_single")

    # point to point: a ring
    nxt, prv = (r + 1) % n, (r - 1) % n
    if n > 1:
        t = ember.zeros(3)
        if r % 2 == 0:
            dist.send(ember.full((3,), float(r)), dst=nxt, tag=7)
            got = dist.recv(t, src=prv, tag=7)
        else:
            got = dist.recv(t, src=prv, tag=7)
            dist.send(ember.full((3,), float(r)), dst=nxt, tag=7)
        check(got == prv, "recv returns the sender")
        close(t, np.full(3, float(prv)), "send/recv")
        t = ember.zeros(3)
        ws = [dist.isend(ember.full((3,), r + 0.5), dst=nxt), dist.irecv(t, src=prv)]
        for w in ws:
            w.wait()
        close(t, np.full(3, prv + 0.5), "isend/irecv")
        t = ember.zeros(2)
        ops = [dist.P2POp(dist.isend, ember.full((2,), float(r)), nxt), dist.P2POp(dist.irecv, t, prv)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        close(t, np.full(2, float(prv)), "batch_isend_irecv")
        try:
            dist.send(t, dst=r)
            check(False, "send to self")
        except ValueError as e:
            check("should not be the same" in str(e), "self send message")

    # objects
    objs = [None, None] if r else [{"a": 1}, "x"]
    dist.broadcast_object_list(objs, src=0)
    check(objs == [{"a": 1}, "x"], "broadcast_object_list")
    got = [None] * n
    dist.all_gather_object(got, ("rank", r))
    check(got == [("rank", i) for i in range(n)], "all_gather_object")
    got = [None] * n if r == 0 else None
    dist.gather_object(r * 3, got, dst=0)
    check(r != 0 or got == [i * 3 for i in range(n)], "gather_object")
    out = [None]
    dist.scatter_object_list(out, [f"o{i}" for i in range(n)] if r == 0 else None, src=0)
    check(out == [f"o{r}"], "scatter_object_list")

    # barrier, sub-groups (including a rank outside the group)
    dist.barrier()
    dist.barrier(async_op=True).wait()
    check(dist.barrier(async_op=True).wait(timeout=datetime.timedelta(seconds=30)), "wait with a timeout")
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=30))
    check(dist.get_process_group_ranks(None) == list(range(n)), "ranks of the world")
    sub = dist.new_group([0, n - 1] if n > 2 else [0])
    if r in ([0, n - 1] if n > 2 else [0]):
        check(dist.get_world_size(sub) == (2 if n > 2 else 1), "sub-group size")
        t = ember.ones(2) * (r + 1)
        dist.all_reduce(t, group=sub)
        close(t, np.full(2, (1 + n) if n > 2 else 1.0), "all_reduce in a sub-group")
        t = ember.zeros(1)
        if n > 2:
            if r == n - 1:
                t.fill_(5.0)
            dist.broadcast(t, src=n - 1, group=sub)  # src is a global rank
            close(t, [5.0], "sub-group broadcast from a global rank")
    else:
        check(sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1, "non-member")
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            check(dist.all_reduce(ember.ones(1), group=sub) is None, "non-member all_reduce")
        check(any("does not belong" in str(x.message) for x in rec), "non-member warning")
    dist.barrier()
    dist.destroy_process_group()
    check(not dist.is_initialized(), "destroyed")
    dist.init_process_group("mpi")  # a second life after destroy
    t = ember.ones(1)
    dist.all_reduce(t)
    close(t, [float(n)], "all_reduce after re-init")
    dist.destroy_process_group()
    print(f"OK rank {r}", flush=True)


if __name__ == "__main__":
    main()
    sys.exit(0)
