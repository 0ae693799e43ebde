"""ember.utils.tensorboard: what SummaryWriter writes, read back with the tensorboard package's own readers."""
import glob
import io
import os
import pathlib
import socket
import wave

import numpy as np
import pytest

import ember

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing import event_accumulator as ea
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.plugins.hparams import metadata as hp_meta
from tensorboard.util import tensor_util

from ember.utils.tensorboard import SummaryWriter, summary

ALL = {ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.IMAGES: 0, ea.AUDIO: 0, ea.TENSORS: 0, ea.COMPRESSED_HISTOGRAMS: 0}


def read(logdir):
    acc = ea.EventAccumulator(str(logdir), size_guidance=ALL)
    acc.Reload()
    return acc


def events(logdir):
    """Every event of the one event file in logdir, in order."""
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    return list(EventFileLoader(path).Load())


def scalars(logdir, tag):
    return [(e.step, e.value) for e in read(logdir).Scalars(tag)]


def decode_png(encoded):
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(encoded)))


# ---- scalars ----

def test_scalar_values_and_steps_from_every_kind_of_value(tmp_path):
    values = [ember.tensor(0.5), ember.tensor([1.5]), np.float32(2.5), np.array(3.5), np.array([4.5]), 5, 6.5,
              ember.tensor(7.5, dtype=ember.bfloat16), ember.tensor(8.5, requires_grad=True) * 1, np.int64(9)]
    with SummaryWriter(tmp_path) as w:
        for i, v in enumerate(values):
            w.add_scalar("loss", v, 10 * i)
    assert scalars(tmp_path, "loss") == [(10 * i, v) for i, v in enumerate([0.5, 1.5, 2.5, 3.5, 4.5, 5, 6.5, 7.5,
                                                                          8.5, 9])]


def test_scalar_step_and_walltime(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("x", 1.0)
        w.add_scalar("x", 2.0, ember.tensor(7), walltime=1234.5)
        w.add_scalar("x", 3.0, np.int32(8))
    got = read(tmp_path).Scalars("x")
    assert [(e.step, e.value) for e in got] == [(0, 1.0), (7, 2.0), (8, 3.0)]
    assert got[1].wall_time == 1234.5


@pytest.mark.parametrize("double", [False, True])
def test_new_style_scalar(tmp_path, double):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("acc", 0.1, 3, new_style=True, double_precision=double)
    acc = read(tmp_path)
    (e,) = acc.Tensors("acc")
    assert e.step == 3 and e.tensor_proto.dtype == (2 if double else 1)  # DT_DOUBLE / DT_FLOAT
    assert tensor_util.make_ndarray(e.tensor_proto) == (0.1 if double else np.float32(0.1))
    assert acc.SummaryMetadata("acc").plugin_data.plugin_name == "scalars"


def test_scalar_rejects_several_elements(tmp_path):
    with SummaryWriter(tmp_path) as w, pytest.raises(AssertionError, match="one element"):
        w.add_scalar("x", ember.ones(2))


def test_unsupported_value_type(tmp_path):
    with SummaryWriter(tmp_path) as w, pytest.raises(NotImplementedError, match="list"):
        w.add_scalar("x", [1.0])


def test_add_scalars_writes_one_sub_run_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalars("train/loss", {"a": step, "b": ember.tensor(10.0 * step)}, step)
        w.add_scalars("train/loss", {"a": 9}, 3, walltime=99.0)
    assert scalars(tmp_path / "train_loss_a", "train/loss") == [(0, 0), (1, 1), (2, 2), (3, 9)]
    assert scalars(tmp_path / "train_loss_b", "train/loss") == [(0, 0), (1, 10), (2, 20)]
    assert read(tmp_path / "train_loss_a").Scalars("train/loss")[-1].wall_time == 99.0
    assert read(tmp_path).Tags()["scalars"] == []  # nothing in the parent run itself
    assert len(glob.glob(str(tmp_path / "train_loss_a" / "events.*"))) == 1


# ---- histograms ----

def tensorflow_edges():
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-p for p in pos[::-1]] + [0.0] + pos


def expected_buckets(x, bins):
    """TensorBoard's buckets: the non-empty span of NumPy's histogram, an empty bucket in front."""
    counts, edges = np.histogram(x, bins=bins)
    nz = np.flatnonzero(counts)
    return [0] + counts[nz[0]:nz[-1] + 1].tolist(), edges[nz[0]:nz[-1] + 2].tolist()


def histo(logdir, tag):
    return [(e.step, e.histogram_value) for e in read(logdir).Histograms(tag)]


@pytest.mark.parametrize("bins", ["tensorflow", 10, "auto", [-3.0, -1.0, 0.0, 0.5, 1.0, 3.0]])
def test_histogram_against_numpy(tmp_path, bins):
    x = np.random.default_rng(0).normal(size=500).clip(-2.9, 2.9)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", ember.tensor(x.astype(np.float32)).reshape(20, 25), 4, bins=bins)
    ((step, h),) = histo(tmp_path, "w")
    x = x.astype(np.float32).astype(float)
    counts, limits = expected_buckets(x, tensorflow_edges() if bins == "tensorflow" else bins)
    assert step == 4 and list(h.bucket) == counts and list(h.bucket_limit) == limits
    assert (h.min, h.max, h.num) == (x.min(), x.max(), 500) and sum(h.bucket) == 500
    assert h.sum == pytest.approx(x.sum()) and h.sum_squares == pytest.approx((x * x).sum())


def test_histogram_trims_empty_ends_but_keeps_empty_middle(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", np.array([2.5, 2.6, 7.5]), bins=np.arange(11.0))
    ((_, h),) = histo(tmp_path, "h")
    assert list(h.bucket) == [0, 2, 0, 0, 0, 0, 1] and list(h.bucket_limit) == [2, 3, 4, 5, 6, 7, 8]


def test_histogram_max_bins_merges_neighbours(tmp_path):
    x = np.arange(10.0) + 0.5
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", x, bins=np.arange(11.0), max_bins=5)
        w.add_histogram("odd", x, 1, bins=np.arange(11.0), max_bins=3)  # groups of 3; the last holds one bin
    ((_, h),) = histo(tmp_path, "h")
    assert list(h.bucket) == [0, 2, 2, 2, 2, 2] and list(h.bucket_limit) == [0, 2, 4, 6, 8, 10]
    ((_, h),) = histo(tmp_path, "odd")
    assert list(h.bucket) == [0, 3, 3, 3, 1] and list(h.bucket_limit) == [0, 3, 6, 9, 10]


def test_histogram_raw(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_histogram_raw("r", min=0, max=3, num=6, sum=9, sum_squares=19, bucket_limits=[1, 2, 3],
                            bucket_counts=[1, 2, 3], global_step=2)
        with pytest.raises(ValueError, match="bucket_limits"):
            w.add_histogram_raw("r", 0, 3, 6, 9, 19, [1, 2], [1, 2, 3])
    ((step, h),) = histo(tmp_path, "r")
    assert step == 2 and list(h.bucket) == [1, 2, 3] and list(h.bucket_limit) == [1, 2, 3] and h.num == 6


def test_histogram_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("h", ember.zeros(0))
        with pytest.raises(ValueError, match="empty"):
            w.add_histogram("h", np.array([5.0]), bins=[0.0, 1.0])


# ---- images ----

def image_events(logdir, tag):
    return [(e.step, e.width, e.height, decode_png(e.encoded_image_string)) for e in read(logdir).Images(tag)]


def test_image_chw_float_tensor(tmp_path):
    x = np.random.default_rng(1).random((3, 4, 5), dtype=np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_image("img", ember.tensor(x), 2)
    ((step, width, height, px),) = image_events(tmp_path, "img")
    assert (step, width, height) == (2, 5, 4)
    np.testing.assert_array_equal(px, (x * 255).astype(np.uint8).transpose(1, 2, 0))


def test_image_hwc_uint8_and_rgba(tmp_path):
    rng = np.random.default_rng(2)
    rgb, rgba = rng.integers(0, 256, (6, 7, 3), dtype=np.uint8), rng.integers(0, 256, (6, 7, 4), dtype=np.uint8)
    with SummaryWriter(tmp_path) as w:
        w.add_image("rgb", rgb, dataformats="HWC")
        w.add_image("rgba", ember.from_numpy(rgba), dataformats="HWC")
    np.testing.assert_array_equal(image_events(tmp_path, "rgb")[0][3], rgb)
    np.testing.assert_array_equal(image_events(tmp_path, "rgba")[0][3], rgba)


def test_image_grayscale_becomes_rgb_and_values_are_clipped(tmp_path):
    x = np.array([[-0.5, 0.0], [0.5, 2.0]])
    with SummaryWriter(tmp_path) as w:
        w.add_image("hw", x, dataformats="HW")
        w.add_image("chw1", x[None], dataformats="CHW")
    want = np.repeat(np.array([[0, 0], [127, 255]], np.uint8)[:, :, None], 3, axis=2)
    np.testing.assert_array_equal(image_events(tmp_path, "hw")[0][3], want)
    np.testing.assert_array_equal(image_events(tmp_path, "chw1")[0][3], want)


def test_add_images_lays_a_grid_eight_to_a_row(tmp_path):
    x = np.random.default_rng(3).integers(0, 256, (10, 3, 2, 3), dtype=np.uint8)
    with SummaryWriter(tmp_path) as w:
        w.add_images("batch", ember.from_numpy(x), 1)
        w.add_images("nhwc", x.transpose(0, 2, 3, 1), dataformats="NHWC")
    ((step, width, height, px),) = image_events(tmp_path, "batch")
    assert (step, width, height) == (1, 8 * 3, 2 * 2)
    for i in range(10):
        r, c = divmod(i, 8)
        np.testing.assert_array_equal(px[2 * r:2 * r + 2, 3 * c:3 * c + 3], x[i].transpose(1, 2, 0))
    assert not px[2:, 6:].any()  # the empty cells of the last row are black
    np.testing.assert_array_equal(image_events(tmp_path, "nhwc")[0][3], px)


def test_image_shape_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(ValueError, match=r"\(3, 4\).*'CHW'"):
            w.add_image("bad", np.zeros((3, 4)))
        with pytest.raises(ValueError, match="1, 3 or 4 channels"):
            w.add_image("bad", np.zeros((2, 4, 4)))


def test_figure(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1), dpi=50)
    fig.patch.set_facecolor((1.0, 0.0, 0.0))
    with SummaryWriter(tmp_path) as w:
        w.add_figure("fig", fig, 3)
        w.add_figure("figs", [fig, fig])
    ((step, width, height, px),) = image_events(tmp_path, "fig")
    assert (step, width, height) == (3, 100, 50) and (px == [255, 0, 0]).all()
    assert image_events(tmp_path, "figs")[0][1:3] == (200, 50)


# ---- text, audio, layouts ----

def test_text(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "héllo **world**", 5)
    acc = read(tmp_path)
    (e,) = acc.Tensors("notes/text_summary")
    assert e.step == 5 and tensor_util.make_ndarray(e.tensor_proto).tolist() == ["héllo **world**".encode()]
    assert list(acc.PluginTagToContent("text")) == ["notes/text_summary"]


def test_audio(tmp_path):
    x = np.sin(np.linspace(0, 20, 400))
    with SummaryWriter(tmp_path) as w:
        w.add_audio("snd", ember.tensor(x[None]), 1, sample_rate=8000)
    (e,) = read(tmp_path).Audio("snd")
    assert e.step == 1 and e.sample_rate == 8000 and e.length_frames == 400 and e.content_type == "audio/wav"
    with wave.open(io.BytesIO(e.encoded_audio_string)) as f:
        assert (f.getnchannels(), f.getframerate()) == (1, 8000)
        pcm = np.frombuffer(f.readframes(400), "<i2")
    np.testing.assert_array_equal(pcm, (x * 32767).astype(np.int16))


def test_custom_scalars(tmp_path):
    from tensorboard.plugins.custom_scalar import layout_pb2

    with SummaryWriter(tmp_path) as w:
        w.add_custom_scalars({"Loss": {"both": ["Multiline", ["train", "val"]], "band": ["Margin", ["m", "lo", "hi"]]}})
    (e,) = read(tmp_path).Tensors("custom_scalars__config__")
    layout = layout_pb2.Layout.FromString(e.tensor_proto.string_val[0])
    (cat,) = layout.category
    assert cat.title == "Loss" and [c.title for c in cat.chart] == ["both", "band"]
    assert list(cat.chart[0].multiline.tag) == ["train", "val"]
    assert (cat.chart[1].margin.series[0].value, cat.chart[1].margin.series[0].upper) == ("m", "hi")


# ---- hyperparameters ----

def test_hparams_sub_run(tmp_path):
    hp = {"lr": 0.01, "layers": 3, "opt": "adam", "wd": ember.tensor(0.5), "skip": None, "bn": True}
    with SummaryWriter(tmp_path) as w:
        w.add_hparams(hp, {"acc": 0.9, "loss": ember.tensor(0.25)}, {"opt": ["adam", "sgd"]}, run_name="trial",
                      global_step=7)
    acc = read(tmp_path / "trial")
    content = acc.PluginTagToContent(hp_meta.PLUGIN_NAME)
    exp = hp_meta.parse_experiment_plugin_data(content[hp_meta.EXPERIMENT_TAG])
    start = hp_meta.parse_session_start_info_plugin_data(content[hp_meta.SESSION_START_INFO_TAG])
    end = hp_meta.parse_session_end_info_plugin_data(content[hp_meta.SESSION_END_INFO_TAG])
    assert [(i.name, i.type) for i in exp.hparam_infos] == [("lr", 3), ("layers", 3), ("opt", 1), ("wd", 3),
                                                            ("bn", 3)]  # FLOAT64 = 3, STRING = 1
    assert [v.string_value for v in exp.hparam_infos[2].domain_discrete.values] == ["adam", "sgd"]
    assert [m.name.tag for m in exp.metric_infos] == ["acc", "loss"]
    assert {k: v.WhichOneof("kind") and getattr(v, v.WhichOneof("kind")) for k, v in start.hparams.items()} == {
        "lr": 0.01, "layers": 3, "opt": "adam", "wd": 0.5, "bn": 1.0}
    assert end.status == 1  # STATUS_SUCCESS
    assert scalars(tmp_path / "trial", "acc") == [(7, pytest.approx(0.9))]
    assert scalars(tmp_path / "trial", "loss") == [(7, 0.25)]


def test_hparams_default_run_name_and_errors(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"a": 1}, {"m": 2})
        with pytest.raises(TypeError, match="dictionary"):
            w.add_hparams([("a", 1)], {"m": 2})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[a\]"):
            w.add_hparams({"a": 1}, {"m": 2}, {"a": ["x"]})
        with pytest.raises(ValueError, match="value should be one of"):
            w.add_hparams({"a": [1]}, {"m": 2})
    (run,) = [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)]
    assert float(run) > 0  # the time it was written


def test_hparams_summary_for_the_writers_own_run(tmp_path):
    # the usual way to keep hparams beside the training curves instead of in a sub-run
    with SummaryWriter(tmp_path) as w:
        for s in summary.hparams({"lr": 0.1}, {"loss": None}):
            w.file_writer.add_summary(s)
    assert set(read(tmp_path).PluginTagToContent("hparams")) == {
        hp_meta.EXPERIMENT_TAG, hp_meta.SESSION_START_INFO_TAG, hp_meta.SESSION_END_INFO_TAG}


# ---- the writer ----

def test_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    logdir = w.get_logdir()
    assert logdir.startswith("runs" + os.sep) and logdir.endswith("_" + socket.gethostname() + "_lr0.1")
    assert len(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))) == 1


def test_flush_makes_events_readable_before_close(tmp_path):
    w = SummaryWriter(tmp_path, flush_secs=3600)
    w.add_scalar("x", 1.0, 0)
    w.flush()
    assert scalars(tmp_path, "x") == [(0, 1.0)]
    w.close()


def test_close_twice_and_reopen_on_next_write(tmp_path):
    w = SummaryWriter(str(tmp_path), filename_suffix=".v2")
    w.add_scalar("x", 1.0, 0)
    w.close()
    w.close()
    assert w.all_writers is None
    w.add_scalar("x", 2.0, 1)  # opens a second event file
    w.close()
    files = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    assert len(files) == 2 and all(f.endswith(".v2") for f in files)
    assert scalars(tmp_path, "x") == [(0, 1.0), (1, 2.0)]


def test_context_manager_closes(tmp_path):
    with SummaryWriter(pathlib.Path(tmp_path)) as w:
        w.add_scalar("x", 1.0)
    assert w.file_writer is None
    assert [e.WhichOneof("what") for e in events(tmp_path)] == ["file_version", "summary"]


def test_purge_step_hides_later_steps_of_a_crashed_run(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for i in range(10):
            w.add_scalar("loss", float(i), i)
    with SummaryWriter(tmp_path, purge_step=5) as w:
        for i in range(5, 8):
            w.add_scalar("loss", 100.0 + i, i)
    assert scalars(tmp_path, "loss") == [(i, float(i)) for i in range(5)] + [(i, 100.0 + i) for i in range(5, 8)]


def test_add_graph_is_not_implemented(tmp_path):
    with SummaryWriter(tmp_path) as w, pytest.raises(NotImplementedError, match="SummaryWriter.add_graph"):
        w.add_graph(ember.nn.Linear(2, 2), ember.zeros(1, 2))


# ---- precision-recall curves ----

def pr_data(logdir, tag):
    (e,) = read(logdir).Tensors(tag)
    return e.step, tensor_util.make_ndarray(e.tensor_proto)


def test_pr_curve_counts_at_each_threshold(tmp_path):
    rng = np.random.default_rng(4)
    labels, preds, weights = rng.integers(0, 2, 200), rng.random(200), rng.random(200)
    with SummaryWriter(tmp_path) as w:
        w.add_pr_curve("pr", ember.tensor(labels), ember.tensor(preds), 3, num_thresholds=11)
        w.add_pr_curve("weighted", labels, preds, num_thresholds=500, weights=ember.tensor(weights))
    step, data = pr_data(tmp_path, "pr")
    assert step == 3 and data.shape == (6, 11)
    # a prediction counts as positive at threshold i when floor(p * 10) >= i
    bucket = np.floor(preds * 10)
    tp = np.array([(labels * (bucket >= i)).sum() for i in range(11)])
    fp = np.array([((1 - labels) * (bucket >= i)).sum() for i in range(11)])
    np.testing.assert_array_equal(data[:4], [tp, fp, fp[0] - fp, tp[0] - tp])
    np.testing.assert_allclose(data[4], tp / np.maximum(tp + fp, 1e-7), rtol=1e-6)
    np.testing.assert_allclose(data[5], tp / tp[0], rtol=1e-6)
    _, data = pr_data(tmp_path, "weighted")
    assert data.shape == (6, 127)  # TensorBoard's maximum
    np.testing.assert_allclose(data[0, 0], (labels * weights).sum(), rtol=1e-6)
    assert read(tmp_path).PluginTagToContent("pr_curves").keys() == {"pr", "weighted"}


def test_pr_curve_raw(tmp_path):
    rows = [[5, 3, 1], [4, 1, 0], [0, 3, 4], [0, 2, 4], [0.55, 0.75, 1.0], [1.0, 0.6, 0.2]]
    with SummaryWriter(tmp_path) as w:
        w.add_pr_curve_raw("raw", *rows[:5], ember.tensor(rows[5]), global_step=1, num_thresholds=3)
    step, data = pr_data(tmp_path, "raw")
    assert step == 1
    np.testing.assert_allclose(data, rows, rtol=1e-6)
