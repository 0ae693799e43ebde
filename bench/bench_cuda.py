"""The `cuda` family: training steps and per-op launch cost on an NVIDIA GPU, ember vs PyTorch on the same GPU, and
the peak GPU memory of each training step. Registered only where both ember and the library it is compared with see
a GPU; elsewhere the family is empty and the table says so.

Every timed callable ends with `cuda.synchronize()`, so a time is the GPU's work and the host's, whichever is longer;
the launch benchmarks queue 100 ops before that one synchronization, so their times are dominated by the host's cost
per launch (per op: the time in ms divided by 100, in us times 10).

    python -m bench cuda/            # everything (timings, then peak memory)
    python -m bench.bench_cuda [pattern] [--min-time S] [--json FILE]
"""
import argparse
import gc

import numpy as np

from bench.bench_train import _resnet
from bench.runner import bench, memory_table, run


def _gpu_available():
    try:
        import ember
        return bool(ember.cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken CuPy install means no GPU benchmarks, not a crash of the runner
        return False


def _data(lib, shape, classes, seed=0):
    rng = np.random.default_rng(seed)
    x = lib.from_numpy(rng.standard_normal(shape, dtype=np.float32)).to("cuda")
    y = lib.from_numpy(rng.integers(0, classes, shape[0])).to("cuda")
    return x, y


def _train_step(lib, model, opt, x, y, amp_dtype=None):
    """One synchronized training step on a fixed batch; under autocast with `amp_dtype`, and with a GradScaler for
    float16 (as a float16 training loop has)."""
    loss_fn = lib.nn.functional.cross_entropy
    scaler = lib.amp.GradScaler("cuda") if amp_dtype is lib.float16 else None

    def step():
        opt.zero_grad()
        if amp_dtype is None:
            loss_fn(model(x), y).backward()
            opt.step()
        else:
            with lib.autocast("cuda", dtype=amp_dtype):
                loss = loss_fn(model(x), y)
            if scaler is None:
                loss.backward()
                opt.step()
            else:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
        lib.cuda.synchronize()
    return step


def _mlp(lib):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10))
    return model.to("cuda")


def _encoder(lib, d_model=512, heads=8, layers=4):
    nn = lib.nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
            self.head = nn.Linear(d_model, 10)

        def forward(self, x):
            return self.head(self.encoder(x).mean(dim=1))

    lib.manual_seed(0)
    return Encoder().to("cuda")


def _lstm(lib):
    nn = lib.nn

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(256, 512, num_layers=2, batch_first=True)
            self.head = nn.Linear(512, 10)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[:, -1])

    lib.manual_seed(0)
    return Recurrent().to("cuda")


def mlp_sgd(lib):
    """MLP 1024-4096-4096-10, batch 512, SGD with momentum."""
    model = _mlp(lib)
    return _train_step(lib, model, lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9),
                       *_data(lib, (512, 1024), 10))


def resnet_sgd(lib):
    """ResNet-style CNN (3 stages of 64/128/256 channels, BatchNorm, residuals) on 3x32x32, batch 128, SGD."""
    lib.manual_seed(0)
    model = _resnet(lib, widths=(64, 128, 256)).to("cuda")
    return _train_step(lib, model, lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                       *_data(lib, (128, 3, 32, 32), 10))


def _transformer(lib, amp_dtype=None):
    model = _encoder(lib)
    return _train_step(lib, model, lib.optim.AdamW(model.parameters(), lr=3e-4), *_data(lib, (32, 256, 512), 10),
                       amp_dtype=amp_dtype)


def transformer_adamw(lib):
    """TransformerEncoder of 4 layers (d_model 512, 8 heads, feed-forward 2048) on sequences of 256, batch 32,
    AdamW, float32."""
    return _transformer(lib)


def transformer_adamw_fp16(lib):
    """The same under float16 autocast with a GradScaler."""
    return _transformer(lib, lib.float16)


def transformer_adamw_bf16(lib):
    """The same under bfloat16 autocast."""
    return _transformer(lib, lib.bfloat16)


def lstm_adam(lib):
    """LSTM of 2 layers (input 256, hidden 512) on sequences of 64, batch 64, linear head on the last step; Adam."""
    model = _lstm(lib)
    return _train_step(lib, model, lib.optim.Adam(model.parameters(), lr=1e-3), *_data(lib, (64, 64, 256), 10))


def _small_mlp_step(lib):
    """The parts of a small-op training step: an MLP 64-256-256-10 on a batch of 32, SGD with momentum."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    model = model.to("cuda")
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = _data(lib, (32, 64), 10)

    def step():
        opt.zero_grad(set_to_none=False)
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def small_mlp_sgd(lib):
    """A small-op training step (MLP 64-256-256-10, batch 32, SGD momentum), eager: the host's cost per op."""
    step = _small_mlp_step(lib)

    def call():
        step()
        lib.cuda.synchronize()
    return call


def small_mlp_sgd_graphed(lib):
    """The same step captured whole into a CUDA graph (after warm-up on a side stream) and replayed: compare
    ember's replay with torch's eager step (cuda/small_mlp_sgd) too."""
    step = _small_mlp_step(lib)
    side = lib.cuda.Stream()
    side.wait_stream(lib.cuda.current_stream())
    with lib.cuda.stream(side):
        for _ in range(3):
            step()
    lib.cuda.current_stream().wait_stream(side)
    g = lib.cuda.CUDAGraph()
    with lib.cuda.graph(g):
        step()

    def call():
        g.replay()
        lib.cuda.synchronize()
    return call


def _launches(lib, op, requires_grad=False):
    """100 launches of `op` on 16-element float32 tensors, then one synchronization."""
    a = lib.ones(16, device="cuda", requires_grad=requires_grad)
    b = lib.ones(16, device="cuda")

    def call():
        for _ in range(100):
            op(a, b)
        lib.cuda.synchronize()
    return call


def add_x100(lib):
    return _launches(lib, lambda a, b: a + b)


def mul_scalar_x100(lib):
    return _launches(lib, lambda a, b: a * 2.0)


def sum_x100(lib):
    return _launches(lib, lambda a, b: a.sum())


def exp_x100(lib):
    return _launches(lib, lambda a, b: a.exp())


def mul_backward_x100(lib):
    """Forward and backward of (a * b).sum(): four kernels and the autograd engine per iteration."""
    return _launches(lib, lambda a, b: (a * b).sum().backward(), requires_grad=True)


TRAIN = (mlp_sgd, resnet_sgd, transformer_adamw, transformer_adamw_fp16, transformer_adamw_bf16, lstm_adam)
LAUNCH = (add_x100, mul_scalar_x100, sum_x100, exp_x100, mul_backward_x100, small_mlp_sgd, small_mlp_sgd_graphed)

if _gpu_available():
    for _fn in TRAIN + LAUNCH:
        bench("cuda")(_fn)


def peak_memory_mib(lib, fn, steps=3):
    """How far the GPU memory allocated by `lib` rises above what was allocated before the benchmark was built,
    at its peak over `steps` training steps (model, optimizer state and activations: what a step needs)."""
    gc.collect()
    lib.cuda.synchronize()
    base = lib.cuda.memory_allocated()
    lib.cuda.reset_peak_memory_stats()
    step = fn(lib)
    for _ in range(steps):
        step()
    peak = lib.cuda.max_memory_allocated() - base
    del step
    gc.collect()
    return peak / 2**20


def report(pattern="", threads=1):
    """The peak GPU memory table of the training steps whose names contain `pattern`, after the runner's timings."""
    names = [f"cuda/{fn.__name__}" for fn in TRAIN if pattern in f"cuda/{fn.__name__}"]
    if not names or not _gpu_available():
        return []
    import importlib
    by_name = {f"cuda/{fn.__name__}": fn for fn in TRAIN}
    return memory_table("peak GPU memory of a training step", names,
                        lambda lib_name, name: peak_memory_mib(importlib.import_module(lib_name), by_name[name]))


def main(argv=None):
    p = argparse.ArgumentParser(description="GPU training steps and launch cost, ember vs PyTorch (ratio = ember / "
                                "torch; < 1 is better)")
    p.add_argument("pattern", nargs="?", default="cuda/", help="run only benchmarks whose name contains this")
    p.add_argument("--min-time", type=float, default=0.2, help="seconds spent timing each benchmark per library")
    p.add_argument("--json", help="also write the timing results to this JSON file")
    args = p.parse_args(argv)
    if not _gpu_available():
        print("no GPU for ember (CuPy and an NVIDIA GPU are needed): the cuda benchmarks are skipped")
        return
    run(args.pattern, 1, args.min_time, args.json, isolated=0)


if __name__ == "__main__":
    main()
