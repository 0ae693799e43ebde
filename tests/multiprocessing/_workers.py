"""Process entry points for the multiprocessing tests (spawned children import them from here)."""
import os
import signal

import ember
import ember.multiprocessing  # registers the tensor reducers in the child


def fill(t, value):
    t.fill_(value)


def fill_from_queue(q, done):
    t = q.get(timeout=30)
    t.fill_(7.0)
    done.put("ok")


def echo(q_in, q_out):
    # sends back every object it receives until None
    while True:
        obj = q_in.get(timeout=30)
        if obj is None:
            return
        q_out.put(obj)


def describe(q_in, q_out):
    # reports what arrived: types, flags and whether views still share one memory
    items = q_in.get(timeout=30)
    out = []
    for t in items:
        out.append((type(t).__name__, t.requires_grad, t.is_shared(), t.grad is None, str(t.dtype),
                    tuple(t.shape), t.stride(), t.data_ptr()))
    q_out.put(out)


def hogwild(rank, model, steps, lr):
    import ember.nn.functional as F
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        x = ember.randn(8, 4)
        y = x.sum(1, keepdim=True)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()


def add_rank(rank, t):
    t[rank] += rank + 1


def raise_value_error(rank):
    if rank == 1:
        raise ValueError(f"bad thing in rank {rank}")


def kill_self(rank):
    if rank == 0:
        os.kill(os.getpid(), signal.SIGKILL)


def exit_code(rank):
    if rank == 0:
        raise SystemExit(3)


def sleep_then_ok(rank, seconds):
    import time
    time.sleep(seconds)


def pool_double(t):
    t.mul_(2)
    return t


# ----- test guards -----
def guard():
    """Fails a test that hangs (instead of hanging the suite) and checks it leaves no child process running."""
    import multiprocessing as std_mp

    def on_alarm(signum, frame):
        raise TimeoutError("multiprocessing test took longer than 120 s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(120)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    for p in std_mp.active_children():
        p.join(10)
    left = std_mp.active_children()
    for p in left:
        p.kill()
        p.join()
    assert not left, f"child processes left running: {left}"


def shm_entries():
    # ours only: other processes on the machine (and multiprocessing's own semaphores) use /dev/shm as well
    names = os.listdir("/dev/shm") if os.path.isdir("/dev/shm") else []
    return {n for n in names if "ember" in n}


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def raise_long(rank):
    raise RuntimeError("x" * 200000)  # more than a pipe buffer holds


def raise_or_sleep(rank):
    import time
    if rank == 0:
        time.sleep(0.2)
        raise ValueError("rank 0 failed")
    time.sleep(60)


def put_and_exit(q):
    q.put(ember.ones(3))


def hold_many(q, out, n):
    # receives and keeps n tensors under a small descriptor limit; reports the error text
    import resource
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (open_fds() + 8, hard))
    kept = []
    try:
        for _ in range(n):
            kept.append(q.get(timeout=30))
        out.put("no error")
    except RuntimeError as e:
        out.put(str(e))
