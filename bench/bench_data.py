"""DataLoader throughput: an epoch over N in-memory 3x32x32 float32 images with int labels, batch 64, in the main
process and with 2 worker processes (started per epoch, and persistent). Run: python -m bench.bench_data"""
import argparse
import importlib

import numpy as np

from bench.runner import _libraries, _time_interleaved, bench

N = 2048
BATCH = 64
_IMAGES = np.random.default_rng(0).standard_normal((N, 3, 32, 32)).astype(np.float32)
_LABELS = np.random.default_rng(1).integers(0, 10, N)


class Images:
    """A map-style dataset (duck-typed, so the same class serves both libraries): (image tensor, int label)."""

    def __init__(self, lib_name):
        self.lib_name = lib_name
        self.from_numpy = importlib.import_module(lib_name).from_numpy

    def __getstate__(self):
        return self.lib_name

    def __setstate__(self, lib_name):
        self.__init__(lib_name)

    def __len__(self):
        return N

    def __getitem__(self, i):
        return self.from_numpy(_IMAGES[i]), int(_LABELS[i])


def _epoch(lib, num_workers, persistent=False):
    dl = lib.utils.data.DataLoader(Images(lib.__name__), batch_size=BATCH, shuffle=True, num_workers=num_workers,
                                   persistent_workers=persistent)

    def run():
        for _ in dl:
            pass
    return run


@bench("data")
def epoch_workers0(lib):
    return _epoch(lib, 0)


@bench("data")
def epoch_workers2(lib):
    return _epoch(lib, 2)


@bench("data")
def epoch_workers2_persistent(lib):
    return _epoch(lib, 2, persistent=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--min-time", type=float, default=2.0, help="seconds of timing per benchmark and library")
    args = p.parse_args(argv)
    libs = _libraries(1)
    print(f"{N} images 3x32x32, batch {BATCH}: time per epoch (ratio = ember / torch; < 1 is faster)")
    print(f"{'benchmark':28s} | {'torch ms':>9s} | {'ember ms':>9s} | {'ratio':>5s} | {'ember samples/s':>15s}")
    for name, fn in ((n, f) for n, f in _BENCHES.items()):
        times = _time_interleaved({k: fn(lib) for k, lib in libs.items()}, args.min_time, repeats=5)
        t, e = times.get("torch"), times["ember"]
        tstr = f"{t * 1e3:9.1f}" if t else f"{'-':>9s}"
        ratio = f"{e / t:5.2f}" if t else "  -  "
        print(f"{name:28s} | {tstr} | {e * 1e3:9.1f} | {ratio} | {N / e:15.0f}", flush=True)


_BENCHES = {"epoch_workers0": epoch_workers0, "epoch_workers2": epoch_workers2,
            "epoch_workers2_persistent": epoch_workers2_persistent}

if __name__ == "__main__":
    main()
