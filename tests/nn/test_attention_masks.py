"""Multi-head attention with a key padding mask and an attention mask of different dtypes: torch's warning."""
import warnings

import pytest

import ember
from ember import nn
from ember.nn import functional as F

_MSG = "Support for mismatched key_padding_mask and attn_mask is deprecated. Use same type for both instead."


def _inputs():
    ember.manual_seed(0)
    x = ember.randn(3, 2, 8)
    kpm = ember.zeros(2, 3, dtype=ember.bool)
    kpm[0, 2] = True
    return x, kpm, ember.zeros(3, 3)


def _messages(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return [str(x.message) for x in w if issubclass(x.category, UserWarning)], out


@pytest.mark.parametrize("need_weights", [True, False])
def test_mixed_masks_warn_once(need_weights):
    x, kpm, am = _inputs()
    mha = nn.MultiheadAttention(8, 2)
    msgs, (out, _) = _messages(lambda: mha(x, x, x, key_padding_mask=kpm, attn_mask=am, need_weights=need_weights))
    assert msgs == [_MSG]
    # the result is that of the same masks given as floats
    same, (ref, _) = _messages(lambda: mha(x, x, x, key_padding_mask=ember.zeros(2, 3).masked_fill(kpm, float("-inf")),
                                           attn_mask=am, need_weights=need_weights))
    assert same == []
    assert ember.allclose(out, ref)
    msgs, _ = _messages(lambda: mha(x, x, x, key_padding_mask=kpm.float(), attn_mask=am.bool()))
    assert msgs == [_MSG]


def test_matching_or_single_masks_are_silent():
    x, kpm, am = _inputs()
    mha = nn.MultiheadAttention(8, 2)
    for kwargs in ({"key_padding_mask": kpm, "attn_mask": am.bool()}, {"key_padding_mask": kpm},
                   {"attn_mask": am}, {}):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            mha(x, x, x, **kwargs)


def test_functional_and_decoder_layer_warn():
    x, kpm, am = _inputs()
    mha = nn.MultiheadAttention(8, 2)
    msgs, _ = _messages(lambda: F.multi_head_attention_forward(
        x, x, x, 8, 2, mha.in_proj_weight, mha.in_proj_bias, None, None, False, 0.0, mha.out_proj.weight,
        mha.out_proj.bias, key_padding_mask=kpm, attn_mask=am))
    assert msgs == [_MSG]
    dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)
    assert _messages(lambda: dec(x, x, tgt_mask=am, tgt_key_padding_mask=kpm))[0] == [_MSG]
    assert _messages(lambda: dec(x, x, memory_mask=am, memory_key_padding_mask=kpm))[0] == [_MSG]


def test_integer_key_padding_mask_is_an_error_not_a_warning():
    x, kpm, am = _inputs()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AssertionError, match="only bool and floating types of key_padding_mask are supported"):
            nn.MultiheadAttention(8, 2)(x, x, x, key_padding_mask=kpm.long(), attn_mask=am)
