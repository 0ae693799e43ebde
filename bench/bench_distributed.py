"""Distributed benchmarks (a standalone script: they need several processes, which bench.runner does not start).

    python -m bench.bench_distributed                 # ember, and PyTorch (gloo) when installed
    python -m bench.bench_distributed --lib ember --steps 5

1. DDP scaling: one training step (forward, backward with bucketed gradient all-reduce, SGD) of a 4-layer
   TransformerEncoder (d_model 256, 4 heads, feed-forward 1024, seq 128, batch 16 in total) on 1 process and on
   2 processes (batch 8 each), one BLAS thread per process; plus 1 process with 2 threads, the fair baseline on a
   2-core machine. Efficiency = t(1 process) / (2 * t(2 processes)).
2. all_reduce bandwidth of float32 tensors of 1-100 MB on 2 processes: algorithm bandwidth (size / time) and bus
   bandwidth (2 (n-1)/n size / time, the figure NCCL's tests report).

Each configuration is one `mpiexec` job of this module in --worker mode; rank 0 prints one JSON line.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

_PORT = 29531


def _lib(name):
    if name == "torch":
        import torch
        return torch
    import ember
    return ember


def _init(lib, name):
    if name == "torch":
        os.environ.setdefault("RANK", os.environ.get("PMI_RANK", "0"))
        os.environ.setdefault("WORLD_SIZE", os.environ.get("PMI_SIZE", "1"))
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(_PORT))
    lib.distributed.init_process_group("gloo")
    return lib.distributed.get_rank(), lib.distributed.get_world_size()


def _sync_time(lib, fn, steps):
    """Median seconds of fn over `steps` runs, each the slowest rank's time (a barrier before each)."""
    dist = lib.distributed
    times = []
    for _ in range(steps):
        dist.barrier()
        t0 = time.perf_counter()
        fn()
        t = lib.tensor([time.perf_counter() - t0], dtype=lib.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        times.append(t.item())
    return statistics.median(times)


def worker_ddp(name, steps, threads):
    lib = _lib(name)
    lib.set_num_threads(threads)
    _, world = _init(lib, name)
    nn = lib.nn
    lib.manual_seed(0)
    layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.0, batch_first=True)
    model = nn.parallel.DistributedDataParallel(nn.TransformerEncoder(layer, 4, enable_nested_tensor=False))
    opt = lib.optim.SGD(model.parameters(), lr=1e-3)
    x = lib.randn(16 // world, 128, 256)

    def step():
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    step()
    step()
    t = _sync_time(lib, step, steps)
    lib.distributed.destroy_process_group()
    return {"procs": world, "threads": threads, "step_s": t}


def worker_allreduce(name, sizes_mb, repeats):
    lib = _lib(name)
    lib.set_num_threads(1)
    _, world = _init(lib, name)
    rows = []
    for mb in sizes_mb:
        t = lib.ones(int(mb * 1024 * 1024 // 4))
        lib.distributed.all_reduce(t)
        secs = _sync_time(lib, lambda t=t: lib.distributed.all_reduce(t), repeats)
        nbytes = t.numel() * 4
        rows.append({"mb": mb, "s": secs, "algbw_GBs": nbytes / secs / 1e9,
                     "busbw_GBs": 2 * (world - 1) / world * nbytes / secs / 1e9})
    lib.distributed.destroy_process_group()
    return {"procs": world, "rows": rows}


def _job(n, lib, *args, timeout=300):
    mpiexec = shutil.which("mpiexec")
    cmd = [mpiexec, "-n", str(n), sys.executable, "-m", "bench.bench_distributed", "--worker", "--lib", lib,
           *map(str, args)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, env=env)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"benchmark job failed ({' '.join(cmd)}):\n{p.stdout}\n{p.stderr}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lib", default=None, help="ember or torch (default: both, torch when installed)")
    p.add_argument("--steps", type=int, default=3, help="timed DDP steps per configuration")
    p.add_argument("--sizes-mb", default="1,10,100")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", choices=["ddp", "allreduce"], default=None)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--kind", default="ddp", help=argparse.SUPPRESS)
    p.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    sizes = [float(s) for s in a.sizes_mb.split(",")]
    if a.worker:
        out = worker_ddp(a.lib, a.steps, a.threads) if a.kind == "ddp" else \
            worker_allreduce(a.lib, sizes, a.repeats)
        if int(os.environ.get("PMI_RANK", "0")) == 0:
            print(json.dumps(out), flush=True)
        return
    if shutil.which("mpiexec") is None:
        raise SystemExit("needs mpiexec (pip install mpich mpi4py)")
    libs = [a.lib] if a.lib else ["ember"] + (["torch"] if _has_torch() else [])
    print(f"machine: {os.cpu_count()} CPU cores")
    for lib in libs:
        if a.only in (None, "ddp"):
            one = _job(1, lib, "--kind", "ddp", "--steps", a.steps, "--threads", 1)["step_s"]
            one2 = _job(1, lib, "--kind", "ddp", "--steps", a.steps, "--threads", 2)["step_s"]
            two = _job(2, lib, "--kind", "ddp", "--steps", a.steps, "--threads", 1)["step_s"]
            print(f"[{lib}] DDP TransformerEncoder step (batch 16 total): 1 proc x 1 thread {one * 1e3:.0f} ms, "
                  f"1 proc x 2 threads {one2 * 1e3:.0f} ms, 2 procs x 1 thread {two * 1e3:.0f} ms; "
                  f"speedup vs 1 proc x 1 thread {one / two:.2f}x (efficiency {one / (2 * two):.0%}), "
                  f"vs 1 proc x 2 threads {one2 / two:.2f}x")
        if a.only in (None, "allreduce"):
            res = _job(2, lib, "--kind", "allreduce", "--sizes-mb", a.sizes_mb, "--repeats", a.repeats)
            for r in res["rows"]:
                print(f"[{lib}] all_reduce float32 {r['mb']:g} MB on 2 procs: {r['s'] * 1e3:.2f} ms, "
                      f"algbw {r['algbw_GBs']:.2f} GB/s, busbw {r['busbw_GBs']:.2f} GB/s")


def _has_torch():
    import importlib.util
    return importlib.util.find_spec("torch") is not None


if __name__ == "__main__":
    main()
