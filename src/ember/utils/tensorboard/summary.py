"""Same as `torch.utils.tensorboard.summary`: the Summary protos that SummaryWriter writes, built from ember tensors,
NumPy arrays or numbers, with the tensorboard package's protobuf messages.
"""
import io
import sys
import warnings

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from ..._tensor import Tensor

__all__ = ["audio", "compute_curve", "custom_scalars", "figure_to_image", "histogram", "histogram_raw", "hparams",
           "image", "make_histogram", "make_image", "make_np", "pr_curve", "pr_curve_raw", "scalar", "text"]


def make_np(x):
    """A value SummaryWriter accepts (Tensor, NumPy array, Python or NumPy number) as a host NumPy array."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Tensor):
        return x.detach().cpu().numpy()
    if np.isscalar(x):
        return np.array([x])
    raise NotImplementedError(f"Got {type(x)}, but an ember Tensor, a NumPy array or a number is expected.")


def _host(x):
    """Like make_np, for arguments that may also be lists."""
    return make_np(x) if isinstance(x, Tensor) else np.asarray(x)


def _summary(tag, **value):
    return Summary(value=[Summary.Value(tag=tag, **value)])


def _plugin_metadata(name, content=b""):
    return SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=name, content=content))


# ---- scalars ----

def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    """One scalar: a simple_value, or with new_style a float (double_precision: double) tensor for the scalars
    plugin."""
    x = make_np(tensor).squeeze()
    if x.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {x.size} and "
                             f"{x.ndim} dimensions.")
    value = float(x)
    if not new_style:
        return _summary(name, simple_value=value)
    if double_precision:
        proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
    return _summary(name, tensor=proto, metadata=_plugin_metadata("scalars"))


# ---- histograms ----

_TENSORFLOW_BINS = []


def tensorflow_bins():
    """TensorFlow's default histogram edges: +-1e-12 growing by 1.1 per edge up to 1e20, and 0."""
    if not _TENSORFLOW_BINS:
        v, pos = 1e-12, []
        while v < 1e20:
            pos.append(v)
            v *= 1.1  # repeated products, not 1.1**k: these exact floats are the format's convention
        _TENSORFLOW_BINS.extend([-p for p in reversed(pos)] + [0] + pos)
    return _TENSORFLOW_BINS


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    """A histogram from precomputed statistics; bucket_limits are the buckets' right edges."""
    hist = HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                          bucket_limit=bucket_limits, bucket=bucket_counts)
    return _summary(name, histo=hist)


def histogram(name, values, bins, max_bins=None):
    """A histogram of values with NumPy's `bins` (a count, edges or a method name)."""
    return _summary(name, histo=make_histogram(make_np(values).astype(float), bins, max_bins))


def _merge_bins(counts, limits, group):
    """Sums every `group` neighbouring bins (the last group may be short)."""
    n = -(-len(counts) // group) * group
    counts = np.pad(counts, (0, n - len(counts))).reshape(-1, group).sum(axis=1)
    return counts, np.append(limits[:-1:group], limits[-1])


def make_histogram(values, bins, max_bins=None):
    """HistogramProto of a float array, trimmed to the span of its non-empty bins."""
    x = values.reshape(-1)
    if x.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(x, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _merge_bins(counts, limits, len(counts) // max_bins)
    filled = np.flatnonzero(counts)
    if filled.size == 0:
        raise ValueError(f"The histogram is empty: none of the {x.size} values lies within the bins")
    first, last = int(filled[0]), int(filled[-1])
    # TensorBoard keeps only right edges, so an empty bucket in front carries the first bin's left edge.
    counts = np.concatenate([[0], counts[first:last + 1]])
    limits = limits[first:last + 2]
    return HistogramProto(min=float(x.min()), max=float(x.max()), num=len(x), sum=float(x.sum()),
                          sum_squares=float(x.dot(x)), bucket_limit=limits.tolist(), bucket=counts.tolist())


# ---- images ----

def _grid(x, ncols=8):
    """NCHW images side by side, `ncols` to a row, as one CHW image (empty cells black)."""
    if x.shape[1] == 1:
        x = np.repeat(x, 3, axis=1)
    n, c, h, w = x.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    x = np.concatenate([x, np.zeros((nrows * ncols - n, c, h, w), x.dtype)])
    return x.reshape(nrows, ncols, c, h, w).transpose(2, 0, 3, 1, 4).reshape(c, nrows * h, ncols * w)


def convert_to_HWC(tensor, input_format):
    """An image array laid out as `input_format` (NCHW, CHW, HWC, HW... in any order) as HWC with 3 or 4
    channels."""
    fmt = input_format.upper()
    if len(set(fmt)) != len(fmt) or tensor.ndim != len(fmt) or set(fmt) - set("NCHW"):
        raise ValueError(f"an image array of shape {tuple(tensor.shape)} does not match dataformats "
                         f"'{input_format}'")
    if len(fmt) == 4:
        return _grid(tensor.transpose([fmt.index(d) for d in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 2:
        return np.repeat(tensor.transpose([fmt.index(d) for d in "HW"])[:, :, None], 3, axis=2)
    x = tensor.transpose([fmt.index(d) for d in "HWC"])
    if x.shape[2] == 1:
        x = np.repeat(x, 3, axis=2)
    if x.shape[2] not in (3, 4):
        raise ValueError(f"an image needs 1, 3 or 4 channels, got {x.shape[2]} (shape {tuple(tensor.shape)}, "
                         f"dataformats '{input_format}')")
    return x


def make_image(tensor, rescale=1):
    """Summary.Image of an HWC uint8 array, PNG-encoded."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("writing images needs Pillow: pip install pillow") from None

    height, width, channels = tensor.shape
    img = Image.fromarray(np.ascontiguousarray(tensor))
    if rescale != 1:
        img = img.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=buf.getvalue())


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    """An image: uint8 values as they are, any other dtype read as [0, 1] and scaled to [0, 255]."""
    x = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if x.dtype == np.uint8 else 255
    x = (x.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return _summary(tag, image=make_image(x, rescale=rescale))


def figure_to_image(figures, close=True):
    """A matplotlib figure (CHW uint8 RGB) or a list of them (NCHW), rendered with the Agg backend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgb = np.asarray(canvas.buffer_rgba())[:, :, :3].transpose(2, 0, 1).copy()
        plt = sys.modules.get("matplotlib.pyplot")  # a figure made without pyplot has nothing to close
        if close and plt is not None:
            plt.close(figure)
        return rgb

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


# ---- audio, text, layouts ----

def audio(tag, tensor, sample_rate=44100):
    """Mono audio in [-1, 1] as a 16-bit WAV."""
    import wave

    x = make_np(tensor).squeeze()
    if np.abs(x).max() > 1:
        warnings.warn("audio amplitude out of range, auto clipped.", stacklevel=3)
        x = x.clip(-1, 1)
    if x.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    pcm = (x * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    snd = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=pcm.shape[-1],
                        encoded_audio_string=buf.getvalue(), content_type="audio/wav")
    return _summary(tag, audio=snd)


def text(tag, text):
    """A string for the text plugin, under the tag `<tag>/text_summary`."""
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

    metadata = _plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return _summary(tag + "/text_summary", metadata=metadata, tensor=proto)


def custom_scalars(layout):
    """The custom scalars plugin's layout: {category: {chart: ['Multiline' or 'Margin', tags]}}."""
    from tensorboard.plugins.custom_scalar import layout_pb2

    categories = []
    for category, charts in layout.items():
        protos = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError(f"a Margin chart needs 3 tags (value, lower, upper), got {len(tags)}")
                series = layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])
                protos.append(layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[series])))
            else:
                protos.append(layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags)))
        categories.append(layout_pb2.Category(title=category, chart=protos))
    proto = TensorProto(dtype="DT_STRING", string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
                        tensor_shape=TensorShapeProto())
    return _summary("custom_scalars__config__", tensor=proto, metadata=_plugin_metadata("custom_scalars"))


# ---- precision-recall curves ----

def _pr_summary(tag, data, num_thresholds):
    """The pr_curves plugin's [6, num_thresholds] float tensor: tp, fp, tn, fn, precision, recall."""
    from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    data = np.asarray(data, dtype=float)
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in data.shape[:2]]))
    return _summary(tag, metadata=_plugin_metadata("pr_curves", content), tensor=proto)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """Counts and rates at thresholds i / (num_thresholds - 1): a prediction in [0, 1] counts as positive at every
    threshold up to the one below it."""
    weights = 1.0 if weights is None else _host(weights)
    bucket = np.floor(predictions * (num_thresholds - 1)).astype(np.int32)
    positive = labels.astype(np.float64)

    def per_bucket(w):
        return np.histogram(bucket, bins=num_thresholds, range=(0, num_thresholds - 1), weights=w * weights)[0]

    # at threshold i: every prediction in bucket i or above
    tp = np.cumsum(per_bucket(positive)[::-1])[::-1]
    fp = np.cumsum(per_bucket(1.0 - positive)[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    eps = 1e-7  # no division by zero where nothing is predicted positive
    return np.stack((tp, fp, tn, fn, tp / np.maximum(eps, tp + fp), tp / np.maximum(eps, tp + fn)))


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """A precision-recall curve of binary labels against predicted probabilities (at most 127 thresholds)."""
    num_thresholds = min(num_thresholds, 127)  # TensorBoard's plugin reads no more
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_summary(tag, data, num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A precision-recall curve from precomputed counts and rates, one value per threshold each."""
    data = np.stack([_host(x) for x in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, min(num_thresholds, 127))


# ---- hyperparameters ----

def _hparam_kind(v):
    """(field of struct Value, hparams DataType name, value) for one hyperparameter value."""
    if isinstance(v, str):
        return "string_value", "DATA_TYPE_STRING", v
    if isinstance(v, (int, float, np.integer, np.floating, np.bool_)):  # bools too, as torch: 1.0 and 0.0
        return "number_value", "DATA_TYPE_FLOAT64", float(v)
    if isinstance(v, (Tensor, np.ndarray)):
        return "number_value", "DATA_TYPE_FLOAT64", float(make_np(v).reshape(-1)[0])
    raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The hparams plugin's three summaries (experiment, session start info, session end info)."""
    from tensorboard.plugins.hparams import metadata as hp_meta
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")

    start, infos = SessionStartInfo(), []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        field, kind, value = _hparam_kind(v)
        setattr(start.hparams[k], field, value)
        domain = None
        if k in domains and not isinstance(v, (Tensor, np.ndarray)):
            domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[k]])
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    def summary(tag, **content):
        data = HParamsPluginData(version=hp_meta.PLUGIN_DATA_VERSION, **content).SerializeToString()
        return _summary(tag, metadata=_plugin_metadata(hp_meta.PLUGIN_NAME, data))

    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return (summary(hp_meta.EXPERIMENT_TAG, experiment=experiment),
            summary(hp_meta.SESSION_START_INFO_TAG, session_start_info=start),
            summary(hp_meta.SESSION_END_INFO_TAG,
                    session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))))
