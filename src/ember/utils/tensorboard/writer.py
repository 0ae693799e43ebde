"""Same as `torch.utils.tensorboard.writer`: SummaryWriter and FileWriter, writing event files that TensorBoard reads
through the tensorboard package's EventFileWriter.
"""
import os
import time

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as _s

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Same as `torch.utils.tensorboard.writer.FileWriter`: Event protos into a new event file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        self.event_writer = EventFileWriter(os.fspath(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


def _not_implemented(method, why):
    raise NotImplementedError(f"SummaryWriter.{method} is not implemented in ember: {why}")


class SummaryWriter:
    """Same as `torch.utils.tensorboard.SummaryWriter`. add_graph, add_onnx_graph, add_embedding, add_video,
    add_mesh, add_image_with_boxes and add_tensor raise NotImplementedError."""

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120, filename_suffix=""):
        if not log_dir:
            import socket
            from datetime import datetime

            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname()
                                   + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.default_bins = _s.tensorflow_bins()
        # Closed writers are recreated on the next add_*, as in torch.
        self.file_writer = self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self):
        """The writer of log_dir itself, opened again after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard hides the events at or after a restart's step in earlier files of this run.
                step, self.purge_step = self.purge_step, None
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step, session_log=SessionLog(status=SessionLog.START)))
        return self.file_writer

    def get_logdir(self):
        """The directory event files are written to."""
        return self.log_dir

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(_s.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision),
                  global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Each tag's curve goes to its own run, `<log_dir>/<main_tag>_<tag>`, under the tag main_tag."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = root + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(run)
            if fw is None:
                fw = self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs, self.filename_suffix)
            fw.add_summary(_s.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(_s.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts,
                          global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(_s.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
                  global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        self._add(_s.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images as one grid image, 8 to a row."""
        self._add(_s.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """A matplotlib figure (or a list of them, as a grid) as an image; needs matplotlib."""
        dataformats = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, _s.figure_to_image(figure, close), global_step, walltime, dataformats=dataformats)

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        self._add(_s.audio(tag, snd_tensor, sample_rate=sample_rate), global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(_s.text(tag, text_string), global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """The hparams plugin's data and the metrics as scalars, in the sub-run `<log_dir>/<run_name>` (default:
        the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = _s.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        run = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=run) as w:
            for s in summaries:
                w.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_custom_scalars(self, layout):
        self._add(_s.custom_scalars(layout))

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self._add(_s.custom_scalars({category: {title: ["Multiline", tags]}}))

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._add(_s.custom_scalars({category: {title: ["Margin", tags]}}))

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        _not_implemented("add_graph", "it needs torch.jit's graph tracer, which ember does not have")

    def add_onnx_graph(self, prototxt):
        _not_implemented("add_onnx_graph", "ember has no ONNX graph support yet")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None, tag="default",
                      metadata_header=None):
        _not_implemented("add_embedding", "the projector plugin's files are not written yet")

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        _not_implemented("add_video", "GIF encoding through moviepy is not supported")

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None, global_step=None, walltime=None):
        _not_implemented("add_mesh", "the mesh plugin's summaries are not written yet")

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127, weights=None,
                     walltime=None):
        """A precision-recall curve: labels 0/1, predictions the probabilities of 1."""
        self._add(_s.pr_curve(tag, _s.make_np(labels), _s.make_np(predictions), num_thresholds, weights),
                  global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts, true_negative_counts,
                         false_negative_counts, precision, recall, global_step=None, num_thresholds=127,
                         weights=None, walltime=None):
        self._add(_s.pr_curve_raw(tag, true_positive_counts, false_positive_counts, true_negative_counts,
                                  false_negative_counts, precision, recall, num_thresholds, weights),
                  global_step, walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None, rescale=1,
                             dataformats="CHW", labels=None):
        _not_implemented("add_image_with_boxes", "drawing boxes is not supported; draw them into the image and "
                                                 "use add_image")

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        _not_implemented("add_tensor", "tensor summaries are not written yet")

    def flush(self):
        """Writes every pending event of this writer and its sub-runs to disk."""
        if self.all_writers is None:
            return
        for w in self.all_writers.values():
            w.flush()

    def close(self):
        if self.all_writers is None:
            return  # closing twice is fine
        for w in self.all_writers.values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()
