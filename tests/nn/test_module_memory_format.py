"""nn.Module.to(memory_format=...): 4-D and 5-D parameters, their gradients and buffers change layout."""
import pytest

import ember
from ember import nn


def _model():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Linear(2, 2))
    m.register_buffer("b4", ember.ones(1, 2, 3, 4))
    m.register_buffer("bi", ember.ones(1, 2, 3, 4, dtype=ember.int64))
    return m


def test_to_channels_last_converts_4d_parameters_grads_and_buffers():
    m = _model()
    w = m[0].weight
    before = w.detach().clone()
    w.grad = ember.ones(4, 3, 3, 3)
    assert m.to(memory_format=ember.channels_last) is m
    assert m[0].weight is w  # identity kept, data swapped
    assert w.stride() == (27, 1, 9, 3) and w.is_contiguous(memory_format=ember.channels_last)
    assert ember.equal(w.detach(), before)
    assert w.grad.stride() == (27, 1, 9, 3)
    assert m.b4.stride() == (24, 1, 8, 2) and m.bi.stride() == (24, 1, 8, 2)
    assert m.bi.dtype == ember.int64
    # other ranks keep their layout
    assert m[2].weight.stride() == (2, 1) and m[0].bias.stride() == (1,)
    assert w.is_leaf and w.requires_grad


def test_to_dtype_and_memory_format_together_and_back():
    m = _model()
    m.to(ember.float64, memory_format=ember.channels_last)
    assert m[0].weight.dtype == ember.float64 and m[0].weight.stride() == (27, 1, 9, 3)
    assert m.bi.dtype == ember.int64
    m.to(memory_format=ember.contiguous_format)
    assert m[0].weight.stride() == (27, 9, 3, 1)
    c = nn.Conv2d(2, 2, 2).to("cpu", memory_format=ember.channels_last)
    assert c.weight.stride() == (8, 1, 4, 2)
    assert nn.Conv2d(2, 2, 2).to(memory_format=ember.preserve_format).weight.stride() == (8, 4, 2, 1)


def test_to_channels_last_3d():
    c = nn.Conv3d(2, 2, 2).to(memory_format=ember.channels_last_3d)
    assert c.weight.stride() == (16, 1, 8, 4, 2)


def test_to_memory_format_errors():
    with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
        nn.Conv3d(2, 2, 2).to(memory_format=ember.channels_last)
    with pytest.raises(RuntimeError, match="^required rank 5 tensor to use channels_last_3d format$"):
        nn.Conv2d(2, 2, 2).to(memory_format=ember.channels_last_3d)
    with pytest.raises(TypeError, match=r"^to\(\) received an invalid combination of arguments - got "
                                        r"\(memory_format=str, \), but expected one of:"):
        nn.Conv2d(2, 2, 2).to(memory_format="x")
