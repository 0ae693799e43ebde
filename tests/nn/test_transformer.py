"""Transformer, TransformerEncoder(Layer), TransformerDecoder(Layer)."""
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from tests.helpers import assert_close


def _np(t):
    return t.detach().numpy()


def _layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _ref_encoder_layer(layer, x):
    """Post-norm encoder layer, ReLU, eval mode, (L, N, E), in NumPy."""
    p = {k: v.numpy() for k, v in layer.state_dict().items()}
    L, N, E = x.shape
    H = layer.self_attn.num_heads
    hd = E // H
    qkv = x @ p["self_attn.in_proj_weight"].T + p["self_attn.in_proj_bias"]
    q, k, v = (qkv[..., i * E:(i + 1) * E].reshape(L, N, H, hd).transpose(1, 2, 0, 3) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    a = (w @ v).transpose(2, 0, 1, 3).reshape(L, N, E)
    a = a @ p["self_attn.out_proj.weight"].T + p["self_attn.out_proj.bias"]
    x = _layer_norm(x + a, p["norm1.weight"], p["norm1.bias"])
    f = np.maximum(x @ p["linear1.weight"].T + p["linear1.bias"], 0) @ p["linear2.weight"].T + p["linear2.bias"]
    return _layer_norm(x + f, p["norm2.weight"], p["norm2.bias"])


def test_encoder_layer_matches_numpy():
    layer = nn.TransformerEncoderLayer(8, 2, 16).double().eval()
    x = np.random.default_rng(0).standard_normal((5, 3, 8))
    assert_close(layer(ember.tensor(x)), _ref_encoder_layer(layer, x), atol=1e-10)


def test_encoder_layer_state_dict_keys():
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    assert list(layer.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
        "norm2.weight", "norm2.bias"]
    assert layer.activation_relu_or_gelu == 1
    assert nn.TransformerEncoderLayer(8, 2, activation="gelu").activation_relu_or_gelu == 2
    assert nn.TransformerEncoderLayer(8, 2, activation=ember.tanh).activation_relu_or_gelu == 0
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not swish"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")


@pytest.mark.parametrize("kw", [{}, {"norm_first": True}, {"batch_first": True}, {"activation": "gelu"},
                                {"bias": False}])
def test_layers_shapes_and_grads(kw):
    enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **kw)
    dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **kw)
    x = ember.randn(4, 3, 8, requires_grad=True)
    mem = ember.randn(6, 3, 8) if not kw.get("batch_first") else ember.randn(4, 6, 8)
    y = dec(enc(x), mem)
    assert tuple(y.shape) == (4, 3, 8)
    y.sum().backward()
    assert x.grad is not None and float(x.grad.abs().sum()) > 0
    for name, p in list(enc.named_parameters()) + list(dec.named_parameters()):
        assert p.grad is not None, name


def test_encoder_layer_gradcheck():
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0).double()
    x = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    kpm = ember.tensor([[False, False, True], [False, False, False]])
    # a bool causal mask: a float one with a bool padding mask draws torch's deprecation warning
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64).isinf()
    assert ember.autograd.gradcheck(lambda x: layer(x, src_mask=mask, src_key_padding_mask=kpm), (x,))


def test_decoder_layer_gradcheck():
    layer = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double()
    x = ember.randn(3, 2, 4, dtype=ember.float64, requires_grad=True)
    mem = ember.randn(5, 2, 4, dtype=ember.float64, requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64)
    assert ember.autograd.gradcheck(lambda x, m: layer(x, m, tgt_mask=mask, tgt_is_causal=True), (x, mem))


def test_generate_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.dtype == ember.float32
    inf = float("-inf")
    assert_close(m, np.array([[0, inf, inf], [0, 0, inf], [0, 0, 0]], dtype=np.float32))
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=ember.float64).dtype == ember.float64


def test_encoder_stack_clones_and_causal_detection():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_tensor is False because "
                                         "encoder_layer.self_attn.batch_first was not True"):
        enc = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8))
    assert len(enc.layers) == 3 and enc.layers[0] is not enc.layers[1]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    assert_close(enc.layers[1].linear1.weight, _np(layer.linear1.weight))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1)
        nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
    x = ember.randn(5, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    a = enc(x, mask=mask)
    b = enc(x, mask=mask, is_causal=True)
    c = enc(x, mask=ember.ones(5, 5, dtype=ember.bool).triu(1))
    for other in (b, c):
        assert_close(other, _np(a), atol=1e-5)
    # The causal rule changes the result.
    assert not np.allclose(_np(enc(x)), _np(a), atol=1e-4)
    # A padded key does not influence the others.
    kpm = ember.tensor([[False] * 4 + [True], [False] * 5])
    x2 = x.clone()
    x2[4, 0] = 100.0
    assert_close(enc(x2, src_key_padding_mask=kpm)[:4, 0], _np(enc(x, src_key_padding_mask=kpm)[:4, 0]), atol=1e-5)


def test_transformer_full_model():
    with pytest.warns(UserWarning, match="enable_nested_tensor"):  # torch warns here too
        model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16,
                               dropout=0.0)
    keys = list(model.state_dict())
    assert keys[0] == "encoder.layers.0.self_attn.in_proj_weight"
    assert "decoder.layers.1.multihead_attn.out_proj.bias" in keys and keys[-1] == "decoder.norm.bias"
    # xavier init for every matrix
    assert model.encoder.layers[0].linear1.weight.abs().max().item() <= np.sqrt(6 / 24) + 1e-6
    src, tgt = ember.randn(6, 2, 8), ember.randn(4, 2, 8)
    out = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(4))
    assert tuple(out.shape) == (4, 2, 8)
    # Causal decoding: the first output position ignores later target tokens.
    tgt2 = tgt.clone()
    tgt2[3] = 5.0
    out2 = model(src, tgt2, tgt_mask=model.generate_square_subsequent_mask(4))
    assert_close(out2[:3], _np(out[:3]), atol=1e-5)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(src, ember.randn(4, 3, 8))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(ember.randn(6, 2, 4), ember.randn(4, 2, 4))


def test_dropout_train_eval():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.5)
    x = ember.randn(4, 2, 8)
    layer.eval()
    a = layer(x)
    assert_close(layer(x), _np(a))
    layer.train()
    assert not np.allclose(_np(layer(x)), _np(a))


def _mask_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w]


def test_mismatched_mask_types_warn_once_per_canonicalization():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = nn.TransformerEncoderLayer(8, 2, 16, 0.0)
        enc = nn.TransformerEncoder(layer, 2)
    x = ember.randn(5, 2, 8)
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    pad = ember.zeros(2, 5, dtype=ember.bool)
    msg = "Support for mismatched src_key_padding_mask and {} is deprecated. Use same type for both instead."
    assert _mask_warnings(lambda: enc(x, causal, pad)) == [msg.format("mask")]
    assert _mask_warnings(lambda: layer(x, causal, pad)) == [msg.format("src_mask")]
    assert _mask_warnings(lambda: enc(x, causal.isinf(), pad)) == []
    assert _mask_warnings(lambda: enc(x, src_key_padding_mask=pad)) == []
    with pytest.raises(AssertionError, match="only bool and floating types of mask are supported"):
        enc(x, ember.zeros(5, 5, dtype=ember.int64))
