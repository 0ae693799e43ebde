"""nn.functional ops and nn modules on 'cuda' compared with the CPU: values, input and parameter gradients.

Without a GPU they run on the fake CuPy of tests/cuda/fake_cupy.py (NumPy underneath, as strict as CuPy about
host arrays); on a GPU they run on real CuPy.
"""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn


def R(*shape, lo=-1.0, hi=1.0, seed=0):
    """A float64 input (differentiable)."""
    return np.random.default_rng(seed + len(shape) + sum(shape)).uniform(lo, hi, shape)


def P(*shape, seed=0):
    """Positive float64 input in (0.1, 1)."""
    return R(*shape, lo=0.1, hi=0.9, seed=seed)


class I:
    """An integer input (not differentiable)."""

    def __init__(self, values):
        self.a = np.asarray(values, dtype=np.int64)


class C:
    """A constant float input that gets no gradient."""

    def __init__(self, a):
        self.a = np.asarray(a, dtype=np.float64)


def Ri(high, *shape, seed=0):
    return I(np.random.default_rng(seed + 7).integers(0, high, shape))


class Case:
    def __init__(self, name, fn, *inputs, module=None):
        self.name, self.fn, self.inputs, self.module = name, fn, inputs, module


def fcase(name, fn, *inputs):
    return Case(name, lambda m, *x: fn(*x), *inputs)


def mcase(name, make, *inputs, call=None):
    return Case(name, call or (lambda m, *x: m(*x)), *inputs, module=make)


ACTS = ["celu", "elu", "gelu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "leaky_relu", "logsigmoid",
        "mish", "relu", "relu6", "selu", "sigmoid", "silu", "softplus", "softshrink", "softsign", "tanh",
        "tanhshrink"]

FUNCTIONAL = [
    fcase("linear", F.linear, R(4, 5), R(3, 5), R(3)),
    fcase("bilinear", F.bilinear, R(4, 3), R(4, 2), R(5, 3, 2), R(5)),
    fcase("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), R(2, 3, 9), R(4, 3, 3), R(4)),
    fcase("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1, dilation=1), R(2, 3, 6, 5), R(4, 3, 3, 3), R(4)),
    fcase("conv2d_groups", lambda x, w: F.conv2d(x, w, stride=2, groups=2), R(2, 4, 7, 7), R(6, 2, 3, 3)),
    fcase("conv3d", lambda x, w, b: F.conv3d(x, w, b, padding=1), R(1, 2, 4, 4, 3), R(3, 2, 3, 3, 3), R(3)),
    fcase("conv_transpose1d", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2), R(2, 3, 5), R(3, 4, 3), R(4)),
    fcase("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
          R(2, 3, 4, 4), R(3, 2, 3, 3), R(2)),
    fcase("conv_transpose3d", lambda x, w: F.conv_transpose3d(x, w, stride=2), R(1, 2, 3, 3, 2), R(2, 3, 2, 2, 2)),
    fcase("max_pool1d", lambda x: F.max_pool1d(x, 3, 2, padding=1), R(2, 3, 9)),
    fcase("max_pool2d", lambda x: F.max_pool2d(x, 2), R(2, 3, 6, 6)),
    fcase("max_pool2d_indices", lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), R(2, 3, 7, 6)),
    fcase("max_pool3d", lambda x: F.max_pool3d(x, 2), R(1, 2, 4, 4, 4)),
    fcase("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, padding=1), R(2, 3, 9)),
    fcase("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), R(2, 3, 7, 6)),
    fcase("avg_pool3d", lambda x: F.avg_pool3d(x, 2), R(1, 2, 4, 4, 4)),
    fcase("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 4), R(2, 3, 9)),
    fcase("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), R(2, 3, 7, 5)),
    fcase("adaptive_avg_pool3d", lambda x: F.adaptive_avg_pool3d(x, 2), R(1, 2, 5, 4, 3)),
    fcase("adaptive_max_pool1d", lambda x: F.adaptive_max_pool1d(x, 4), R(2, 3, 9)),
    fcase("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True), R(2, 3, 7, 5)),
    fcase("adaptive_max_pool3d", lambda x: F.adaptive_max_pool3d(x, 2), R(1, 2, 5, 4, 3)),
    fcase("lp_pool2d", lambda x: F.lp_pool2d(x, 2, 2), P(2, 3, 4, 4)),
    fcase("max_unpool2d", lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2), R(1, 2, 4, 4)),
    fcase("batch_norm_train", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), R(4, 3, 5), R(3),
          R(3)),
    fcase("batch_norm_eval", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False), R(4, 3, 5),
          C(R(3)), C(P(3)), R(3), R(3)),
    fcase("layer_norm", lambda x, w, b: F.layer_norm(x, (5,), w, b), R(4, 3, 5), R(5), R(5)),
    fcase("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), R(2, 4, 5), R(4), R(4)),
    fcase("instance_norm", lambda x: F.instance_norm(x), R(2, 3, 6)),
    fcase("rms_norm", lambda x, w: F.rms_norm(x, (5,), w), R(4, 5), R(5)),
    fcase("local_response_norm", lambda x: F.local_response_norm(x, 3), R(2, 5, 4)),
    fcase("normalize", lambda x: F.normalize(x, dim=1), R(4, 5)),
    fcase("embedding", lambda i, w: F.embedding(i, w), Ri(6, 3, 4), R(6, 3)),
    fcase("embedding_padding", lambda i, w: F.embedding(i, w, padding_idx=0), I([[0, 2, 0], [1, 5, 5]]), R(6, 3)),
    fcase("embedding_bag_mean", lambda i, o, w: F.embedding_bag(i, w, o, mode="mean"), I([1, 2, 4, 5, 4, 3]),
          I([0, 2, 5]), R(6, 3)),
    fcase("embedding_bag_sum_2d", lambda i, w: F.embedding_bag(i, w, mode="sum"), Ri(6, 3, 4), R(6, 3)),
    fcase("embedding_bag_max", lambda i, o, w: F.embedding_bag(i, w, o, mode="max"), I([1, 2, 4, 5, 4, 3]),
          I([0, 2, 5]), R(6, 3)),
    fcase("one_hot", lambda i: F.one_hot(i, 5), Ri(5, 3, 2)),
    fcase("dropout_eval", lambda x: F.dropout(x, 0.5, training=False), R(3, 4)),
    fcase("dropout_p1", lambda x: F.dropout(x, 1.0), R(3, 4)),
    *[fcase(a, getattr(F, a), R(3, 7, lo=-3, hi=3)) for a in ACTS],
    fcase("threshold", lambda x: F.threshold(x, 0.1, 20.0), R(3, 4)),
    fcase("glu", lambda x: F.glu(x, -1), R(3, 6)),
    fcase("prelu", F.prelu, R(2, 3, 4), R(3)),
    fcase("rrelu_eval", lambda x: F.rrelu(x, training=False), R(3, 4)),
    fcase("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), R(3, 4)),
    fcase("softmax", lambda x: F.softmax(x, dim=1), R(3, 5)),
    fcase("softmin", lambda x: F.softmin(x, dim=0), R(3, 5)),
    fcase("log_softmax", lambda x: F.log_softmax(x, dim=-1), R(2, 3, 5)),
    fcase("gumbel_softmax_hard_shape", lambda x: F.gumbel_softmax(x, hard=True).sum(-1), R(3, 5)),
    fcase("cross_entropy_idx", F.cross_entropy, R(4, 5), Ri(5, 4)),
    fcase("cross_entropy_idx_ignore_smooth",
          lambda x, t: F.cross_entropy(x, t, ignore_index=1, label_smoothing=0.1), R(6, 5), I([0, 1, 2, 3, 4, 1])),
    fcase("cross_entropy_weight_2d", lambda x, t, w: F.cross_entropy(x, t, weight=w), R(2, 4, 3, 3), Ri(4, 2, 3, 3),
          C(P(4))),
    fcase("cross_entropy_probs", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.2), R(4, 5),
          C(np.full((4, 5), 0.2))),
    fcase("nll_loss", lambda x, t: F.nll_loss(x, t, reduction="sum"), R(4, 5), Ri(5, 4)),
    fcase("mse_loss", F.mse_loss, R(3, 4), R(3, 4, seed=1)),
    fcase("l1_loss", lambda a, b: F.l1_loss(a, b, reduction="none"), R(3, 4), R(3, 4, seed=1)),
    fcase("smooth_l1_loss", F.smooth_l1_loss, R(3, 4, lo=-3, hi=3), R(3, 4, seed=1)),
    fcase("huber_loss", lambda a, b: F.huber_loss(a, b, delta=0.5), R(3, 4, lo=-3, hi=3), R(3, 4, seed=1)),
    fcase("binary_cross_entropy", F.binary_cross_entropy, P(3, 4), C(P(3, 4, seed=2))),
    fcase("binary_cross_entropy_weight", lambda a, b, w: F.binary_cross_entropy(a, b, w), P(3, 4),
          C(P(3, 4, seed=2)), C(P(4))),
    fcase("bce_with_logits", lambda a, b, w: F.binary_cross_entropy_with_logits(a, b, pos_weight=w), R(3, 4),
          C(P(3, 4, seed=2)), C(P(4))),
    fcase("kl_div", lambda a, b: F.kl_div(a, b, reduction="batchmean"), R(3, 4), C(P(3, 4, seed=2))),
    fcase("kl_div_log_target", lambda a, b: F.kl_div(a, b, reduction="sum", log_target=True), R(3, 4), R(3, 4, seed=2)),
    fcase("poisson_nll_loss", F.poisson_nll_loss, R(3, 4), C(P(3, 4, seed=2))),
    fcase("poisson_nll_loss_full", lambda a, b: F.poisson_nll_loss(a, b, log_input=False, full=True), P(3, 4),
          C(P(3, 4, seed=2) * 4)),
    fcase("gaussian_nll_loss", F.gaussian_nll_loss, R(3, 4), R(3, 4, seed=2), P(3, 4, seed=3)),
    fcase("hinge_embedding_loss", F.hinge_embedding_loss, R(3, 4), C(np.sign(R(3, 4, seed=4)))),
    fcase("margin_ranking_loss", F.margin_ranking_loss, R(5), R(5, seed=1), C(np.sign(R(5, seed=4)))),
    fcase("soft_margin_loss", F.soft_margin_loss, R(3, 4), C(np.sign(R(3, 4, seed=4)))),
    fcase("multilabel_soft_margin_loss", F.multilabel_soft_margin_loss, R(3, 4), C(R(3, 4, seed=4) > 0)),
    fcase("multilabel_margin_loss", F.multilabel_margin_loss, R(3, 4), I([[3, 0, -1, 1], [0, 1, 2, 3],
                                                                          [1, -1, 0, 0]])),
    fcase("multi_margin_loss", lambda x, t: F.multi_margin_loss(x, t, p=2, margin=0.5), R(4, 5), Ri(5, 4)),
    fcase("cosine_embedding_loss", F.cosine_embedding_loss, R(3, 4), R(3, 4, seed=1), C(np.sign(R(3, seed=4)))),
    fcase("triplet_margin_loss", F.triplet_margin_loss, R(3, 4), R(3, 4, seed=1), R(3, 4, seed=2)),
    fcase("triplet_margin_with_distance_loss", F.triplet_margin_with_distance_loss, R(3, 4), R(3, 4, seed=1),
          R(3, 4, seed=2)),
    fcase("ctc_loss", lambda lp, t, il, tl: F.ctc_loss(lp.log_softmax(2), t, il, tl), R(8, 2, 5),
          I([[1, 2, 2], [3, 1, 0]]), I([8, 6]), I([3, 2])),
    fcase("ctc_loss_concat_sum", lambda lp, t, il, tl: F.ctc_loss(lp.log_softmax(2), t, il, tl, reduction="sum",
                                                                  zero_infinity=True),
          R(6, 2, 4), I([1, 2, 3, 3, 1, 2, 1, 2]), I([6, 3]), I([3, 5])),
    fcase("cosine_similarity", F.cosine_similarity, R(3, 4), R(3, 4, seed=1)),
    fcase("pairwise_distance", F.pairwise_distance, R(3, 4), R(3, 4, seed=1)),
    fcase("pdist", F.pdist, R(4, 3)),
    fcase("sdpa", F.scaled_dot_product_attention, R(2, 3, 5, 4), R(2, 3, 6, 4, seed=1), R(2, 3, 6, 4, seed=2)),
    fcase("sdpa_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), R(2, 5, 4),
          R(2, 5, 4, seed=1), R(2, 5, 4, seed=2)),
    fcase("sdpa_mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), R(2, 5, 4),
          R(2, 6, 4, seed=1), R(2, 6, 4, seed=2), R(5, 6, seed=3)),
    fcase("sdpa_bool_mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m > 0.3),
          R(2, 5, 4), R(2, 6, 4, seed=1), R(2, 6, 4, seed=2), C(R(5, 6, seed=3))),
    fcase("sdpa_long", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), R(1, 2, 700, 8),
          R(1, 2, 700, 8, seed=1), R(1, 2, 700, 8, seed=2)),
    fcase("sdpa_long_cross", F.scaled_dot_product_attention, R(1, 300, 8), R(1, 1100, 8, seed=1),
          R(1, 1100, 8, seed=2)),
    fcase("interpolate_nearest", lambda x: F.interpolate(x, scale_factor=2), R(2, 3, 4, 5)),
    fcase("interpolate_bilinear", lambda x: F.interpolate(x, size=(5, 7), mode="bilinear"), R(2, 3, 4, 5)),
    fcase("interpolate_bilinear_ac", lambda x: F.interpolate(x, size=(3, 8), mode="bilinear", align_corners=True),
          R(2, 3, 4, 5)),
    fcase("interpolate_bicubic", lambda x: F.interpolate(x, size=(6, 7), mode="bicubic"), R(1, 2, 4, 5)),
    fcase("interpolate_linear", lambda x: F.interpolate(x, size=7, mode="linear"), R(2, 3, 5)),
    fcase("interpolate_trilinear", lambda x: F.interpolate(x, scale_factor=2, mode="trilinear"), R(1, 2, 2, 3, 2)),
    fcase("interpolate_area", lambda x: F.interpolate(x, size=(2, 3), mode="area"), R(2, 3, 4, 6)),
    fcase("interpolate_nearest_exact", lambda x: F.interpolate(x, size=(3, 7), mode="nearest-exact"),
          R(2, 3, 4, 5)),
    fcase("grid_sample_bilinear", lambda x, g: F.grid_sample(x, g, align_corners=False), R(2, 3, 5, 4),
          R(2, 3, 6, 2, lo=-1.2, hi=1.2)),
    fcase("grid_sample_nearest_border", lambda x, g: F.grid_sample(x, g, mode="nearest", padding_mode="border",
                                                                   align_corners=True),
          R(2, 3, 5, 4), R(2, 3, 6, 2, lo=-1.2, hi=1.2)),
    fcase("grid_sample_reflection", lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False),
          R(1, 2, 5, 4), R(1, 3, 6, 2, lo=-1.5, hi=1.5)),
    fcase("affine_grid", lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False), R(2, 2, 3)),
    fcase("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), R(1, 8, 2, 3)),
    fcase("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), R(1, 2, 4, 6)),
    fcase("unfold", lambda x: F.unfold(x, 2, padding=1, stride=2), R(2, 3, 5, 4)),
    fcase("fold", lambda x: F.fold(x, (4, 5), 2), R(2, 12, 12)),
    fcase("pad_constant", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), R(2, 3, 4)),
    fcase("pad_reflect", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), R(2, 3, 4, 5)),
    fcase("pad_replicate", lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate"), R(2, 3, 4, 5)),
    fcase("pad_circular", lambda x: F.pad(x, (1, 2, 2, 1), mode="circular"), R(2, 3, 4, 5)),
    fcase("pad_reflect_3d", lambda x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="reflect"), R(1, 2, 3, 3, 3)),
    fcase("channel_shuffle", lambda x: F.channel_shuffle(x, 2), R(1, 4, 2, 2)),
]

MODULES = [
    mcase("Linear", lambda: nn.Linear(5, 3), R(4, 5)),
    mcase("Conv2d", lambda: nn.Conv2d(3, 4, 3, padding=1, bias=True), R(2, 3, 5, 5)),
    mcase("Conv2d_reflect", lambda: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), R(2, 2, 5, 4)),
    mcase("Conv1d_circular", lambda: nn.Conv1d(2, 3, 3, padding=1, padding_mode="circular"), R(2, 2, 7)),
    mcase("ConvTranspose2d", lambda: nn.ConvTranspose2d(3, 2, 3, stride=2), R(2, 3, 4, 4)),
    mcase("BatchNorm1d", lambda: nn.BatchNorm1d(3), R(4, 3)),
    mcase("BatchNorm2d", lambda: nn.BatchNorm2d(3), R(4, 3, 2, 2),
          call=lambda m, x: m(x) + m.running_mean.sum() + m.running_var.sum()),
    mcase("BatchNorm2d_eval", lambda: nn.BatchNorm2d(3).eval(), R(4, 3, 2, 2)),
    mcase("LayerNorm", lambda: nn.LayerNorm(5), R(4, 5)),
    mcase("GroupNorm", lambda: nn.GroupNorm(2, 4), R(2, 4, 3)),
    mcase("InstanceNorm2d_affine", lambda: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
          R(2, 3, 3, 3)),
    mcase("RMSNorm", lambda: nn.RMSNorm(5), R(4, 5)),
    mcase("Embedding", lambda: nn.Embedding(6, 3, max_norm=1.0), Ri(6, 2, 4)),
    mcase("EmbeddingBag", lambda: nn.EmbeddingBag(6, 3, mode="mean"), Ri(6, 2, 4)),
    mcase("PReLU", lambda: nn.PReLU(3), R(2, 3, 4)),
    mcase("Bilinear", lambda: nn.Bilinear(3, 2, 4), R(4, 3), R(4, 2)),
    mcase("MultiheadAttention", lambda: nn.MultiheadAttention(8, 2), R(5, 2, 8), R(6, 2, 8, seed=1),
          R(6, 2, 8, seed=2)),
    mcase("MultiheadAttention_batch_first_mask", lambda: nn.MultiheadAttention(8, 2, batch_first=True, kdim=6,
                                                                                vdim=5),
          R(2, 5, 8), R(2, 6, 6, seed=1), R(2, 6, 5, seed=2),
          call=lambda m, q, k, v: m(q, k, v, key_padding_mask=ember.tensor([[False] * 5 + [True]] * 2,
                                                                           device=q.device))),
    mcase("TransformerEncoderLayer", lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), R(5, 2, 8)),
    mcase("TransformerEncoderLayer_norm_first_gelu",
          lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", norm_first=True,
                                             batch_first=True), R(2, 5, 8),
          call=lambda m, x: m(x, is_causal=True, src_mask=nn.Transformer.generate_square_subsequent_mask(
              5, device=x.device, dtype=x.dtype))),
    mcase("TransformerEncoder_bool_padding_mask", lambda: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2, enable_nested_tensor=False),
          R(2, 5, 8),
          call=lambda m, x: m(x, src_key_padding_mask=ember.tensor([[False] * 4 + [True], [False] * 5],
                                                                   device=x.device))),
    mcase("Transformer", lambda: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0, batch_first=True), R(2, 5, 8),
          R(2, 4, 8, seed=1),
          call=lambda m, s, t: m(s, t, tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, device=s.device),
                                 tgt_is_causal=True)),
    mcase("EmbeddingBag_psw_padding", lambda: nn.EmbeddingBag(6, 3, mode="sum", padding_idx=1),
          I([1, 2, 4, 5, 1, 3]), I([0, 2, 5]), R(6),
          call=lambda m, i, o, w: m(i, o, per_sample_weights=w)),
    mcase("TransformerDecoderLayer", lambda: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), R(4, 2, 8),
          R(5, 2, 8, seed=1)),
    mcase("LSTM", lambda: nn.LSTM(4, 5, num_layers=2), R(6, 3, 4), call=lambda m, x: m(x)),
    mcase("LSTM_bidir_proj", lambda: nn.LSTM(4, 6, bidirectional=True, proj_size=3, batch_first=True), R(3, 6, 4)),
    mcase("GRU", lambda: nn.GRU(4, 5, num_layers=2, bidirectional=True), R(6, 3, 4), R(4, 3, 5, seed=1)),
    mcase("RNN_relu", lambda: nn.RNN(4, 5, nonlinearity="relu"), R(6, 3, 4)),
    mcase("LSTM_packed", lambda: nn.LSTM(4, 5, bidirectional=True), R(6, 3, 4),
          call=lambda m, x: nn.utils.rnn.pad_packed_sequence(m(nn.utils.rnn.pack_padded_sequence(
              x, [6, 4, 2]))[0])[0]),
    mcase("GRU_packed_unsorted", lambda: nn.GRU(4, 5), R(6, 3, 4),
          call=lambda m, x: nn.utils.rnn.pad_packed_sequence(m(nn.utils.rnn.pack_padded_sequence(
              x, ember.tensor([2, 6, 4]), enforce_sorted=False))[0])[0]),
    mcase("LSTMCell", lambda: nn.LSTMCell(4, 5), R(3, 4)),
    mcase("GRUCell", lambda: nn.GRUCell(4, 5), R(3, 4)),
    mcase("Upsample", lambda: nn.Upsample(scale_factor=2, mode="bilinear"), R(1, 2, 3, 3)),
    mcase("MaxPool2d", lambda: nn.MaxPool2d(2, ceil_mode=True), R(1, 2, 5, 5)),
    mcase("AdaptiveAvgPool2d", lambda: nn.AdaptiveAvgPool2d(1), R(1, 2, 5, 5)),
    mcase("Dropout_eval", lambda: nn.Dropout(0.3).eval(), R(3, 4)),
    mcase("Sequential_mlp", lambda: nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2)), R(4, 5)),
    mcase("ZeroPad2d", lambda: nn.ZeroPad2d(1), R(1, 2, 3, 3)),
    mcase("ReflectionPad1d", lambda: nn.ReflectionPad1d(2), R(1, 2, 5)),
    mcase("CrossEntropyLoss", lambda: nn.CrossEntropyLoss(label_smoothing=0.1), R(4, 5), Ri(5, 4)),
    mcase("CTCLoss", lambda: nn.CTCLoss(blank=0), R(7, 2, 4), I([[1, 2], [3, 3]]), I([7, 5]), I([2, 2]),
          call=lambda m, x, *a: m(x.log_softmax(-1), *a)),
]


def _flat(out):
    if isinstance(out, ember.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return []


def _host(t):
    return t.detach().cpu().numpy()


def _check_on_device(t, gpu):
    assert type(t._data) is gpu.ndarray, f"result is a {type(t._data).__name__}, not a device array"
    assert t.device.type == "cuda"


def _tols(gpu):
    if getattr(gpu, "IS_FAKE", False):
        return {"rtol": 1e-7, "atol": 1e-9}
    return {"rtol": 1e-6, "atol": 1e-8}


def _run(case, dev):
    ember.manual_seed(0)
    if dev != "cpu":
        ember.cuda.manual_seed(0)
    mod = None
    if case.module is not None:
        mod = case.module().double().to(dev)
    ins = []
    for x in case.inputs:
        if isinstance(x, (I, C)):
            ins.append(ember.tensor(x.a, device=dev))
        else:
            ins.append(ember.tensor(x, device=dev, requires_grad=True))
    outs = [o for o in _flat(case.fn(mod, *ins))]
    params = list(mod.parameters()) if mod is not None else []
    wanted = [t for t in ins + params if t.requires_grad]
    diff = [o for o in outs if o.requires_grad]
    grads = []
    if diff and wanted:
        rng = np.random.default_rng(1)
        ws = [ember.tensor(rng.standard_normal(o.shape), dtype=o.dtype, device=dev) for o in diff]
        grads = ember.autograd.grad(diff, wanted, ws, allow_unused=True)
    buffers = list(mod.buffers()) if mod is not None else []
    return outs, list(grads), buffers


def _compare(cpu, dev, gpu):
    assert len(cpu) == len(dev)
    for c, d in zip(cpu, dev):
        assert (c is None) == (d is None)
        if c is None:
            continue
        _check_on_device(d, gpu)
        assert d.dtype == c.dtype and d.shape == c.shape
        np.testing.assert_allclose(_host(d), _host(c), equal_nan=True, **_tols(gpu))


def _id(c):
    return c.name if isinstance(c, Case) else c.values[0].name


@pytest.mark.parametrize("case", FUNCTIONAL + MODULES, ids=_id)
def test_matches_cpu(case, gpu):
    """Forward values, gradients of inputs and parameters, and module buffers equal the CPU run's."""
    cpu = _run(case, "cpu")
    dev = _run(case, "cuda")
    for c, d in zip(cpu, dev):
        _compare(c, d, gpu)


@pytest.mark.parametrize("fn, shape_of", [
    (lambda x: F.dropout(x, 0.4), lambda s: s),
    (lambda x: F.dropout2d(x, 0.4), lambda s: s[:2] + (1, 1)),
    (lambda x: F.dropout1d(x.flatten(2), 0.4).reshape(x.shape), lambda s: s[:2] + (1, 1)),
    (lambda x: F.dropout3d(x.unsqueeze(-1), 0.4).squeeze(-1), lambda s: s[:2] + (1, 1)),
])
def test_dropout_train_on_device(fn, shape_of, gpu):
    """Masks are drawn on the device: kept units are scaled by 1/(1-p), the gradient is the same mask."""
    x = ember.tensor(R(8, 6, 5, 4) + 2.0, device="cuda", requires_grad=True)
    y = fn(x)
    _check_on_device(y, gpu)
    y.sum().backward()
    _check_on_device(x.grad, gpu)
    ratio = _host(y) / _host(x)
    assert np.all(np.isclose(ratio, 0) | np.isclose(ratio, 1 / 0.6))
    np.testing.assert_allclose(_host(x.grad), ratio)
    assert 0.2 < np.isclose(ratio, 0).mean() < 0.6


def test_dropout_inplace_and_alpha_on_device(gpu):
    x = ember.tensor(R(50, 40) + 2.0, device="cuda")
    y = F.dropout(x.clone(), 0.5, inplace=True)
    _check_on_device(y, gpu)
    a = F.alpha_dropout(x, 0.3, training=True)
    _check_on_device(a, gpu)
    f = F.feature_alpha_dropout(x.reshape(5, 10, 40), 0.3, training=True)
    _check_on_device(f, gpu)
    m = nn.Dropout(0.5).to("cuda")
    _check_on_device(m(x), gpu)
    r = F.rrelu(x - 2.5, training=True)
    _check_on_device(r, gpu)


def test_dropout_reproducible_with_cuda_seed(gpu):
    x = ember.ones(20, 30, device="cuda")
    ember.cuda.manual_seed(5)
    a = F.dropout(x, 0.5)
    ember.cuda.manual_seed(5)
    b = F.dropout(x, 0.5)
    np.testing.assert_array_equal(_host(a), _host(b))


def test_module_to_cuda_moves_everything(gpu):
    m = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.LazyLinear(4))
    m(ember.randn(2, 2, 5, 5))
    m.to("cuda")
    for t in list(m.parameters()) + list(m.buffers()):
        _check_on_device(t, gpu)
    out = m(ember.randn(2, 2, 5, 5, device="cuda"))
    _check_on_device(out, gpu)
    m.cpu()
    assert all(type(p._data) is np.ndarray for p in m.parameters())


def test_init_on_device(gpu):
    w = ember.empty(5, 6, device="cuda")
    for fn in [nn.init.uniform_, nn.init.normal_, nn.init.xavier_uniform_, nn.init.xavier_normal_,
               nn.init.kaiming_uniform_, nn.init.kaiming_normal_, nn.init.trunc_normal_, nn.init.orthogonal_,
               nn.init.ones_, nn.init.zeros_, nn.init.eye_, lambda t: nn.init.constant_(t, 0.3),
               lambda t: nn.init.sparse_(t, 0.5)]:
        r = fn(w)
        _check_on_device(w, gpu)
        assert r is w
    c = ember.empty(4, 4, 3, 3, device="cuda")
    nn.init.dirac_(c)
    _check_on_device(c, gpu)
    np.testing.assert_array_equal(_host(c)[:, :, 1, 1], np.eye(4))
    m = nn.Linear(3, 4, device="cuda")
    _check_on_device(m.weight, gpu)
    _check_on_device(m.bias, gpu)
    lstm = nn.LSTM(3, 4, device="cuda")
    assert all(type(p._data) is gpu.ndarray for p in lstm.parameters())


def _train(dev, make, x, y, opt_name, steps=4):
    ember.manual_seed(0)
    model = make().to(dev)
    opt = (ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if opt_name == "sgd"
           else ember.optim.Adam(model.parameters(), lr=0.01))
    xt, yt = ember.tensor(x, device=dev), ember.tensor(y, device=dev)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [_host(p) for p in model.parameters()], model


def _mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.LayerNorm(16), nn.Dropout(0.0), nn.Linear(16, 3))


def _cnn():
    # no bias before BatchNorm: its gradient is 0 up to rounding, which Adam would scale up to full steps
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 4, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
@pytest.mark.parametrize("make, xshape", [(_mlp, (16, 6)), (_cnn, (8, 2, 8, 8))], ids=["mlp", "cnn"])
def test_training_loop_matches_cpu(make, xshape, opt_name, gpu):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(xshape).astype(np.float32)
    y = rng.integers(0, 3, xshape[0])
    cpu_losses, cpu_params, _ = _train("cpu", make, x, y, opt_name)
    dev_losses, dev_params, model = _train("cuda", make, x, y, opt_name)
    for p in model.parameters():
        _check_on_device(p, gpu)
    tol = {"rtol": 1e-5, "atol": 1e-6} if getattr(gpu, "IS_FAKE", False) else {"rtol": 1e-3, "atol": 1e-4}
    np.testing.assert_allclose(dev_losses, cpu_losses, **tol)
    for c, d in zip(cpu_params, dev_params):
        np.testing.assert_allclose(d, c, **tol)
    assert cpu_losses[-1] < cpu_losses[0]


def test_rnn_utils_on_device(gpu):
    seqs = [ember.randn(n, 3, device="cuda", requires_grad=True) for n in (4, 2, 3)]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    _check_on_device(padded, gpu)
    packed = nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
    _check_on_device(packed.data, gpu)
    assert packed.batch_sizes.device.type == "cpu"  # as torch: batch sizes stay on the host
    out, lengths = nn.utils.rnn.pad_packed_sequence(packed, batch_first=True)
    _check_on_device(out, gpu)
    assert lengths.tolist() == [4, 2, 3]
    np.testing.assert_array_equal(_host(out), _host(padded))
    out.sum().backward()
    for s in seqs:
        _check_on_device(s.grad, gpu)
    back = nn.utils.rnn.unpad_sequence(padded, lengths, batch_first=True)
    assert all(type(b._data) is gpu.ndarray for b in back)


def test_sdpa_and_mha_dropout_on_device(gpu):
    q = ember.randn(2, 4, 6, 8, device="cuda", requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.3)
    _check_on_device(out, gpu)
    out.sum().backward()
    _check_on_device(q.grad, gpu)
    mha = nn.MultiheadAttention(8, 2, dropout=0.5).to("cuda")
    x = ember.randn(5, 2, 8, device="cuda")
    y, w = mha(x, x, x)
    _check_on_device(y, gpu)
    _check_on_device(w, gpu)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_lstm_steps_fused_on_a_gpu_match_cpu(bias, dtype, gpu):
    """On a GPU each LSTM step's gate math is one kernel (nn/_functional/_lstm_cuda.py): outputs, final states and
    every gradient agree with the CPU's ufunc chains; with initial states, ragged packed batches and both
    directions."""
    from ember.nn._functional import _lstm_cuda
    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 4, 6))
    h0, c0 = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 4, 8))
    results = []
    for dev in ("cpu", "cuda"):
        ember.manual_seed(0)
        m = nn.LSTM(6, 8, bidirectional=True, bias=bias).to(dev, dtype)
        xs = ember.tensor(x, dtype=dtype, device=dev, requires_grad=True)
        state = tuple(ember.tensor(s, dtype=dtype, device=dev, requires_grad=True) for s in (h0, c0))
        packed = nn.utils.rnn.pack_padded_sequence(xs, [9, 7, 7, 2])
        out, (hn, cn) = m(packed, state)
        y = nn.utils.rnn.pad_packed_sequence(out)[0]
        (y.square().sum() + hn.sum() * 0.5 + cn.square().sum()).backward()
        results.append([_host(t) for t in (y, hn, cn, xs.grad, state[0].grad, state[1].grad)]
                       + [_host(p.grad) for p in m.parameters()])
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == ember.float32 else {"rtol": 1e-10, "atol": 1e-12}
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, **tol)
    if not getattr(gpu, "IS_FAKE", False):  # the fake CuPy compiles no kernels: there the chains ran
        assert not _lstm_cuda.KERNELS.broken and {k[1] for k in _lstm_cuda.KERNELS.built} == {"forward", "backward"}
