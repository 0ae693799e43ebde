"""ember's SummaryWriter against torch's: the same calls give the same events, as the tensorboard package reads them."""
import glob
import io
import os

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytest.importorskip("tensorboard")
from google.protobuf.json_format import MessageToDict
from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
from tensorboard.compat.proto.event_pb2 import Event
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
from torch.utils.tensorboard import SummaryWriter as TorchWriter

from ember.utils.tensorboard import SummaryWriter as EmberWriter

RNG = np.random.default_rng(0)
WEIGHTS = RNG.normal(size=(40, 30)).astype(np.float32)
IMG = RNG.random((3, 8, 6), dtype=np.float32)
BATCH = RNG.integers(0, 256, (11, 1, 4, 5), dtype=np.uint8)
PIXELS = RNG.integers(0, 256, (5, 7, 3), dtype=np.uint8)


def log(lib, writer):
    """The same program for torch and ember: `lib` is the framework module."""
    t = lib.from_numpy
    for step in range(3):
        writer.add_scalar("loss", t(np.array(1.0 / (step + 1), np.float32)), step)
        writer.add_scalar("lr", 0.1 * step, step, new_style=True)
        writer.add_scalar("lr64", 0.1 * step, step, new_style=True, double_precision=True)
        writer.add_scalars("run/acc", {"train": step * 0.5, "val": t(np.array([step * 0.25]))}, step, walltime=5.0)
        writer.add_histogram("w", t(WEIGHTS * (step + 1)), step)
    writer.add_histogram("w10", t(WEIGHTS), bins=10)
    writer.add_histogram("wauto", WEIGHTS, bins="auto", max_bins=7)
    writer.add_image("img", t(IMG), 1)
    writer.add_image("hwc", PIXELS, dataformats="HWC")
    writer.add_image("hw", IMG[0], dataformats="HW")
    writer.add_images("batch", t(BATCH))
    writer.add_text("note", "step **one**", 1)
    writer.add_audio("snd", t(np.linspace(-1, 1, 50)[None]), 2, sample_rate=16000)
    writer.add_pr_curve("pr", t(BATCH[:, 0, 0, 0] % 2), t(IMG.reshape(-1)[:11]), 1, num_thresholds=9)
    writer.add_pr_curve_raw("prraw", [3, 1], [2, 0], [0, 2], [0, 2], [0.6, 1.0], [1.0, 1 / 3], 2, num_thresholds=2)
    writer.add_custom_scalars({"c": {"m": ["Margin", ["a", "b", "c"]], "l": ["Multiline", ["loss"]]}})
    writer.add_hparams({"lr": 0.1, "n": 4, "opt": "sgd", "w": t(np.array([0.5])), "flag": False},
                       {"loss": 0.3}, {"opt": ["sgd", "adam"]}, run_name="hp", global_step=3)


def normalize_value(v):
    from PIL import Image

    d = MessageToDict(v)
    if v.HasField("image"):
        del d["image"]["encodedImageString"]  # PNG bytes may differ between encoders; the pixels may not
        d["pixels"] = np.asarray(Image.open(io.BytesIO(v.image.encoded_image_string))).tolist()
    if v.metadata.plugin_data.plugin_name == "hparams":
        del d["metadata"]["pluginData"]["content"]
        d["hparams"] = MessageToDict(HParamsPluginData.FromString(v.metadata.plugin_data.content))
    return d


def read_runs(root):
    """{run directory relative to root: [(step, what, normalized content)]} without wall times, as written (the
    raw loader: TensorBoard's own loader would turn every summary into a tensor)."""
    runs = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "events.out.tfevents.*"), recursive=True)):
        out = []
        for e in map(Event.FromString, RawEventFileLoader(path).Load()):
            if e.HasField("summary"):
                out += [(e.step, "summary", normalize_value(v)) for v in e.summary.value]
            else:
                out.append((e.step, e.WhichOneof("what"), MessageToDict(e).get(e.WhichOneof("what"))))
        runs[os.path.relpath(os.path.dirname(path), root)] = out
    return runs


def test_same_events_as_torch(tmp_path):
    with TorchWriter(str(tmp_path / "torch")) as w:
        log(torch, w)
    with EmberWriter(str(tmp_path / "ember")) as w:
        log(ember, w)
    want, got = read_runs(tmp_path / "torch"), read_runs(tmp_path / "ember")
    assert sorted(got) == sorted(want) == [".", "hp", "run_acc_train", "run_acc_val"]
    for run in want:
        assert len(got[run]) == len(want[run]), run
        for g, w in zip(got[run], want[run], strict=True):
            assert g == w, (run, w[:2])


def test_purge_step_as_torch(tmp_path):
    for name, writer in [("torch", TorchWriter), ("ember", EmberWriter)]:
        with writer(str(tmp_path / name), purge_step=4) as w:
            w.add_scalar("x", 1.0, 4)
    assert read_runs(tmp_path / "ember") == read_runs(tmp_path / "torch")
