"""save and load of a ~100 MB state dict (20 float32 tensors of 5 MiB) to and from a file, the same code for both
libraries; also the peak memory of each, measured in a fresh process per library (see `memory_report`).

ember's save is atomic (temp file, fsync, rename) and its load checks every storage's CRC-32; torch does neither,
so these times include that extra safety.

    python -m bench.bench_serialization [--min-time S] [--no-memory]
"""
import argparse
import atexit
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from bench.runner import BENCHES, _libraries, _time_interleaved, bench, memory_table

_ROOT = pathlib.Path(__file__).resolve().parents[1]
TENSORS = 20
SHAPE = (1280, 1024)  # 5 MiB of float32
_DIR = []


def _dir():
    # one temporary folder per process, made on first use and removed at exit
    if not _DIR:
        _DIR.append(tempfile.mkdtemp(prefix="ember_bench_ser_"))
        atexit.register(shutil.rmtree, _DIR[0], True)
    return _DIR[0]


def _state_dict(lib):
    rng = np.random.default_rng(0)
    return {f"layer{i}.weight": lib.from_numpy(rng.standard_normal(SHAPE, dtype=np.float32)) for i in range(TENSORS)}


def _path(lib, what):
    return os.path.join(_dir(), f"{lib.__name__}_{what}.pt")


@bench("serialization")
def save_100mb(lib):
    sd = _state_dict(lib)
    path = _path(lib, "save")
    return lambda: lib.save(sd, path)


@bench("serialization")
def load_100mb(lib):
    path = _path(lib, "load")
    lib.save(_state_dict(lib), path)
    return lambda: lib.load(path)


# --- peak memory ---------------------------------------------------------------------------------------------------

def _rss_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _memory_child(lib_name, what, path):
    """In a fresh process: the growth of peak resident memory (KiB) over the baseline taken just before one save
    (with the state dict already built) or one load, as JSON. "prepare" only writes the file that "load" reads (in
    a process of its own, so that the load's process starts without freed memory left from building it)."""
    import gc
    import importlib
    lib = importlib.import_module(lib_name)
    lib.set_num_threads(1)
    if what == "prepare":
        lib.save(_state_dict(lib), path)
        return
    sd = _state_dict(lib) if what == "save" else None
    _ = lib.save, lib.load  # ember imports its serialization module on first use: not part of the measured growth
    gc.collect()
    _reset_peak()
    base = _rss_kib("VmRSS")
    out = lib.save(sd, path) if what == "save" else lib.load(path)
    peak = _rss_kib("VmHWM")
    del out
    print(json.dumps({"baseline_kib": base, "peak_kib": peak, "growth_kib": peak - base}))


def _child(lib_name, what, path):
    cmd = [sys.executable, "-m", "bench.bench_serialization", "--memory-child", lib_name, what, path]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=_ROOT, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}")
    return proc.stdout


def measure_memory(lib_name, what):
    """Peak resident memory growth in MiB of one save or load of the state dict, in a fresh process."""
    path = os.path.join(_dir(), f"{lib_name}_memory.pt")
    if what == "load":
        _child(lib_name, "prepare", path)
    out = _child(lib_name, what, path)
    os.unlink(path)
    return json.loads(out.strip().splitlines()[-1])["growth_kib"] / 1024


def memory_report(whats=("save", "load"), repeats=3):
    """Peak memory growth (median of `repeats` fresh processes) per library and the ratio ember / torch."""
    import statistics

    def measure(lib_name, name):
        what = name.split("/")[1].split("_")[0]
        return statistics.median(measure_memory(lib_name, what) for _ in range(repeats))
    return memory_table("peak memory growth of save / load (100 MB)", [f"serialization/{w}_100mb" for w in whats],
                        measure)


def report(pattern="", threads=1):
    """The peak memory table for the benchmarks whose names contain `pattern`, for the runner to call after its
    timing table."""
    whats = [w for w in ("save", "load") if pattern in f"serialization/{w}_100mb"]
    return memory_report(whats) if whats else []


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--min-time", type=float, default=1.0, help="seconds of timing per benchmark and library")
    p.add_argument("--no-memory", action="store_true", help="skip the peak memory measurement")
    p.add_argument("--memory-child", nargs=3, metavar=("LIB", "WHAT", "PATH"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.memory_child:
        _memory_child(*args.memory_child)
        return
    libs = _libraries(1)
    print(f"{TENSORS} float32 tensors of {SHAPE}: median time (ratio = ember / torch; < 1 is faster)")
    print(f"{'benchmark':44s} | {'torch ms':>10s} | {'ember ms':>10s} | {'ratio':>6s}")
    print("-" * 80)
    for name in ("serialization/save_100mb", "serialization/load_100mb"):
        times = _time_interleaved({k: BENCHES[name](lib) for k, lib in libs.items()}, args.min_time, repeats=7)
        t, e = times.get("torch"), times["ember"]
        tstr = f"{t * 1e3:10.1f}" if t else f"{'-':>10s}"
        ratio = f"{e / t:6.2f}" if t else f"{'-':>6s}"
        print(f"{name:44s} | {tstr} | {e * 1e3:10.1f} | {ratio}", flush=True)
    if not args.no_memory:
        memory_report()


if __name__ == "__main__":
    main()
