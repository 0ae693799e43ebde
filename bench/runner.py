"""Side-by-side timing of ember and PyTorch: the same benchmark code runs against both libraries.

A benchmark is a function `bench(lib) -> callable`: it builds its inputs with `lib` (ember or torch, whose APIs are
the same) and returns the zero-argument callable to time. Times are medians over repeated runs, warm-up excluded,
with both libraries on the same number of threads.
"""
import argparse
import importlib
import importlib.util
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

BENCHES = {}


def bench(group):
    """Register a benchmark function under a group name."""
    def register(fn):
        BENCHES[f"{group}/{fn.__name__}"] = fn
        return fn
    return register


def _batch_size(fn, min_time, repeats):
    """Calls per timed batch, so that one batch lasts about min_time / repeats (after a warm-up)."""
    for _ in range(3):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t0 > min_time / repeats or n > 1_000_000:
            return n
        n *= 4


def _time_interleaved(fns, min_time=0.2, repeats=9):
    """Median seconds per call of each callable. Batches of the libraries alternate, so that both see the same
    machine conditions: on a shared machine that matters more than the number of repeats."""
    sizes = {k: _batch_size(f, min_time, repeats) for k, f in fns.items()}
    samples = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            n = sizes[k]
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            samples[k].append((time.perf_counter() - t0) / n)
    return {k: statistics.median(v) for k, v in samples.items()}


def _libraries(threads, only=None):
    libs = {}
    if only in (None, "ember"):
        import ember
        libs["ember"] = ember
    if only in (None, "torch"):
        try:
            import torch
            libs["torch"] = torch
        except ImportError:
            print("(PyTorch is not installed: ember's times only)", file=sys.stderr)
    for lib in libs.values():
        lib.set_num_threads(threads)
    return libs


def machine():
    import numpy
    info = {"python": platform.python_version(), "numpy": numpy.__version__, "machine": platform.machine(),
            "processor": platform.processor(), "cpus": os.cpu_count()}
    try:
        import torch
        info["torch"] = torch.__version__
    except ImportError:
        pass
    import ember
    info["ember"] = ember.__version__
    return info


def _load_benchmarks():
    return [importlib.import_module(f"bench.{path.stem}")
            for path in sorted(pathlib.Path(__file__).parent.glob("bench_*.py"))]


def _child(lib_name, pattern, threads, min_time):
    """One library alone in this process: print {benchmark: median seconds} as JSON (see `_time_isolated`)."""
    _load_benchmarks()
    libs = _libraries(threads, only=lib_name)
    times = {}
    for name, fn in BENCHES.items():
        if pattern in name and lib_name in libs:
            try:
                times[name] = _time_interleaved({lib_name: fn(libs[lib_name])}, min_time, repeats=5)[lib_name]
            except Exception as e:  # noqa: BLE001 - reported as a failed row by the parent
                times[name] = f"{type(e).__name__}: {e}"
    print(json.dumps(times))


def _time_isolated(pattern, threads, min_time, rounds):
    """{benchmark: {library: median seconds}}, each library timed in processes of its own, the libraries
    alternating for `rounds` rounds. Two libraries in one process disturb each other (a BLAS's idle threads spin
    while the other library runs); fresh processes also include each library's first-call costs exactly once."""
    samples = {}
    for _ in range(rounds):
        for lib_name in ("ember", "torch"):
            out = subprocess.run([sys.executable, "-m", "bench", "--child", lib_name, pattern,
                                  "--threads", str(threads), "--min-time", str(min_time)],
                                 capture_output=True, text=True, check=True, cwd=pathlib.Path(__file__).parents[1])
            for name, t in json.loads(out.stdout.strip().splitlines()[-1]).items():
                samples.setdefault(name, {}).setdefault(lib_name, []).append(t)
    return {name: {lib: (statistics.median(v) if all(isinstance(x, float) for x in v) else
                         next(x for x in v if isinstance(x, str))) for lib, v in libs.items()}
            for name, libs in samples.items()}


def run(pattern="", threads=1, min_time=0.2, json_path=None, isolated=3):
    # each file registers its benchmarks; one with a report(pattern, threads) adds a table of its own after ours
    modules = _load_benchmarks()
    libs = _libraries(threads)
    isolated_times = _time_isolated(pattern, threads, min_time, isolated) if isolated else {}
    rows = []
    print(f"{'benchmark':44s} | {'torch ms':>10s} | {'ember ms':>10s} | {'ratio':>6s}")
    print("-" * 80)
    for name, fn in BENCHES.items():
        if pattern not in name:
            continue
        try:
            if isolated:
                times = isolated_times[name]
                for value in times.values():
                    if isinstance(value, str):
                        raise RuntimeError(value)
            else:
                times = _time_interleaved({lib_name: fn(lib) for lib_name, lib in libs.items()}, min_time)
        except Exception as e:  # a missing op in one library should not stop the table
            print(f"{name:44s} | failed: {type(e).__name__}: {e}", flush=True)
            continue
        t, e = times.get("torch"), times["ember"]
        ratio = e / t if t else float("nan")
        rows.append({"name": name, "torch_ms": t and t * 1e3, "ember_ms": e * 1e3, "ratio": ratio})
        tstr = f"{t * 1e3:10.4f}" if t else f"{'-':>10s}"
        print(f"{name:44s} | {tstr} | {e * 1e3:10.4f} | {ratio:6.2f}", flush=True)
    for module in modules:
        if hasattr(module, "report"):
            module.report(pattern, threads)
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"machine": machine(), "threads": threads, "results": rows}, f, indent=2)
    return rows


def memory_table(title, names, measure):
    """Print `title | torch MiB | ember MiB | ratio` rows, measure(lib_name, name) giving MiB (torch only where it
    is installed), in the layout of the timing table; returns the rows."""
    has_torch = importlib.util.find_spec("torch") is not None
    print(f"\n{title:44s} | {'torch MiB':>10s} | {'ember MiB':>10s} | {'ratio':>6s}")
    print("-" * 80)
    rows = []
    for name in names:
        try:
            e = measure("ember", name)
            t = measure("torch", name) if has_torch else None
        except Exception as exc:  # noqa: BLE001 - one library failing should not hide the other rows
            print(f"{name:44s} | failed: {type(exc).__name__}: {exc}", flush=True)
            continue
        ratio = e / t if t else float("nan")
        rows.append({"name": name, "torch_mib": t, "ember_mib": e, "ratio": ratio})
        tstr = f"{t:10.1f}" if t is not None else f"{'-':>10s}"
        print(f"{name:44s} | {tstr} | {e:10.1f} | {ratio:6.2f}", flush=True)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description="ember vs PyTorch, side by side (ratio = ember / torch; < 1 is faster)")
    p.add_argument("pattern", nargs="?", default="", help="run only benchmarks whose name contains this")
    p.add_argument("--threads", type=int, default=1, help="threads for both libraries (default 1)")
    p.add_argument("--min-time", type=float, default=0.2, help="seconds spent timing each benchmark per library")
    p.add_argument("--json", help="also write the results, versions and machine to this JSON file")
    p.add_argument("--isolated", type=int, default=3, metavar="ROUNDS",
                   help="time each library in processes of its own, alternating for ROUNDS rounds (the median; "
                        "default 3); 0 times both in this process, batches interleaved")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child, args.pattern, args.threads, args.min_time)
    else:
        run(args.pattern, args.threads, args.min_time, args.json, args.isolated)


if __name__ == "__main__":
    main()
