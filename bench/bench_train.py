"""Training steps of small models: zero_grad, forward, loss, backward and optimizer step, the same code for both
libraries (each model is built from `lib.nn`, float32 throughout; initial weights differ, shapes do not).

Also the peak memory of a training step: one fresh process per library runs a few steps and reports how far its
peak resident memory rose over the baseline taken right after `import`; see `memory_report`.

    python -m bench.bench_train [pattern] [--threads N] [--min-time S] [--memory NAME] [--no-memory]
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

from bench.runner import BENCHES, bench, memory_table, run

_ROOT = pathlib.Path(__file__).resolve().parents[1]


def _data(lib, shape, classes, seed=0):
    """A float32 input batch of `shape` and int64 class targets, the same values for both libraries."""
    rng = np.random.default_rng(seed)
    x = lib.from_numpy(rng.standard_normal(shape, dtype=np.float32))
    y = lib.from_numpy(rng.integers(0, classes, shape[0]))
    return x, y


COMPILED = [False]  # bench_compile: ember's model goes through ember.compile


def _step(lib, model, opt, x, y):
    """One training step on a fixed batch, as a zero-argument callable."""
    loss_fn = lib.nn.functional.cross_entropy
    if COMPILED[0] and lib.__name__ == "ember":
        model = lib.compile(model)

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    return step


@bench("train")
def mlp_sgd(lib):
    """MLP 784-1024-1024-10, batch 128, SGD with momentum."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _step(lib, model, opt, *_data(lib, (128, 784), 10))


@bench("train")
def cnn_adam(lib):
    """The classic MNIST CNN (conv 32, conv 64, max-pool, dropout, fc 128, dropout, fc 10) on 1x28x28, batch 64."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 32, 3), nn.ReLU(), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
        nn.Flatten(), nn.Linear(64 * 12 * 12, 128), nn.ReLU(), nn.Dropout(0.5), nn.Linear(128, 10))
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    return _step(lib, model, opt, *_data(lib, (64, 1, 28, 28), 10))


def _resnet(lib, widths=(16, 32, 64), blocks=2, classes=10):
    """A CIFAR-style ResNet: a 3x3 stem, stages of basic blocks (the first of each later stage halves the
    resolution, with a 1x1 projection on its skip), global average pooling and a linear head."""
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.skip = nn.Identity()
            if stride != 1 or cin != cout:
                self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = lib.relu(self.bn1(self.conv1(x)))
            return lib.relu(self.bn2(self.conv2(y)) + self.skip(x))

    layers = [nn.Conv2d(3, widths[0], 3, 1, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU()]
    cin = widths[0]
    for i, cout in enumerate(widths):
        for j in range(blocks):
            layers.append(BasicBlock(cin, cout, 2 if i > 0 and j == 0 else 1))
            cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


@bench("train")
def resnet_sgd(lib):
    """ResNet of 3 stages (16/32/64 channels, 2 basic blocks each) on 3x32x32, batch 32, SGD with momentum."""
    lib.manual_seed(0)
    model = _resnet(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    return _step(lib, model, opt, *_data(lib, (32, 3, 32, 32), 10))


@bench("train")
def transformer_adamw(lib):
    """TransformerEncoder of 4 layers (d_model 256, 4 heads, feed-forward 1024, batch_first) on sequences of 128,
    batch 16, mean-pooled into a linear head; AdamW."""
    nn = lib.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)
            self.head = nn.Linear(256, 10)

        def forward(self, x):
            return self.head(self.encoder(x).mean(dim=1))

    lib.manual_seed(0)
    model = Encoder()
    opt = lib.optim.AdamW(model.parameters(), lr=3e-4)
    return _step(lib, model, opt, *_data(lib, (16, 128, 256), 10))


@bench("train")
def lstm_adam(lib):
    """LSTM of 2 layers (input 128, hidden 256, batch_first) on sequences of 64, batch 32, with a linear head on the
    last step; Adam."""
    nn = lib.nn

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(128, 256, num_layers=2, batch_first=True)
            self.head = nn.Linear(256, 10)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[:, -1])

    lib.manual_seed(0)
    model = Recurrent()
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    return _step(lib, model, opt, *_data(lib, (32, 64, 128), 10))


# --- peak memory -------------------------------------------------------------------------------------------------

def _rss_kib(field):
    """A memory field of /proc/self/status (VmRSS, VmHWM) in KiB; None where there is no /proc."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak():
    """Reset the kernel's peak-RSS mark to the current RSS (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _maxrss_kib():
    """Peak resident memory since the process started, in KiB (ru_maxrss is in bytes on macOS)."""
    import resource
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss // 1024 if sys.platform == "darwin" else rss


def _memory_child(lib_name, name, threads, steps):
    """Run in a fresh process: import one library, take the baseline, run `steps` steps of benchmark `name`, print
    the growth of peak resident memory over the baseline as JSON (KiB)."""
    import gc
    import importlib
    lib = importlib.import_module(lib_name)
    lib.set_num_threads(threads)
    gc.collect()
    # the peak since start would include transient import-time memory: reset the mark where the kernel allows
    proc = _reset_peak() and _rss_kib("VmRSS") is not None
    base = _rss_kib("VmRSS") if proc else _maxrss_kib()
    step = BENCHES[name](lib)
    for _ in range(steps):
        step()
    peak = _rss_kib("VmHWM") if proc else _maxrss_kib()
    print(json.dumps({"baseline_kib": base, "peak_kib": peak, "growth_kib": peak - base}))


_MEMORY = ("train/transformer_adamw",)


def measure_memory(lib_name, name=_MEMORY[0], threads=1, steps=3):
    """Peak resident memory growth in MiB of `steps` training steps of benchmark `name` in a fresh process."""
    cmd = [sys.executable, "-m", "bench.bench_train", "--memory-child", lib_name, "--memory", name,
           "--threads", str(threads), "--steps", str(steps)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=_ROOT, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["growth_kib"] / 1024


def memory_report(names=_MEMORY, threads=1, steps=3):
    """Print peak memory growth per library and the ratio ember / torch, in the layout of the timing table."""
    return memory_table("peak memory growth of a training step", names,
                        lambda lib_name, name: measure_memory(lib_name, name, threads, steps))


def report(pattern="", threads=1):
    """The peak memory table for the memory benchmarks whose names contain `pattern` (none: nothing printed); for
    the runner to call after its timing table."""
    names = [n for n in _MEMORY if pattern in n]
    return memory_report(names, threads) if names else []


def main(argv=None):
    p = argparse.ArgumentParser(description="Training steps, ember vs PyTorch (ratio = ember / torch; < 1 is better)")
    p.add_argument("pattern", nargs="?", default="train/", help="run only benchmarks whose name contains this "
                   "(default train/, all of this module's)")
    p.add_argument("--threads", type=int, default=1, help="threads for both libraries (default 1)")
    p.add_argument("--min-time", type=float, default=0.2, help="seconds spent timing each benchmark per library")
    p.add_argument("--json", help="also write the timing results to this JSON file")
    p.add_argument("--memory", action="append", help="benchmark whose peak memory to measure "
                   "(repeatable; default train/transformer_adamw)")
    p.add_argument("--no-memory", action="store_true", help="skip the peak memory measurement")
    p.add_argument("--steps", type=int, default=3, help="training steps of the memory measurement")
    p.add_argument("--memory-child", choices=("ember", "torch"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    names = args.memory or list(_MEMORY)
    if args.memory_child:
        _memory_child(args.memory_child, names[0], args.threads, args.steps)
        return
    run(args.pattern, args.threads, args.min_time, args.json)
    if not args.no_memory:
        memory_report(names, args.threads, args.steps)


if __name__ == "__main__":
    main()
