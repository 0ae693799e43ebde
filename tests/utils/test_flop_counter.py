"""utils.flop_counter (NOTE [ Counting FLOPs ]): torch's formulas for products, convolutions and attention, forward
and backward, per module, and nothing left behind when the mode closes."""
import pytest

import ember
import ember.nn.functional as F
from ember.utils.flop_counter import FlopCounterMode


def _mlp():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(), ember.nn.Linear(16, 4))


def test_mlp_forward_and_backward():
    m = _mlp()
    with FlopCounterMode(display=False) as fc:
        m(ember.randn(5, 8)).sum().backward()
    # forward: 2*5*8*16 + 2*5*16*4; backward: layer 2's input and weight gradients, layer 1's weight gradient only
    assert fc.get_flop_counts()["Global"] == {"aten.addmm": 1280 + 640, "aten.mm": 640 + 640 + 1280}
    assert fc.get_total_flops() == 4480
    counts = fc.get_flop_counts()
    assert counts["Sequential"] == {"aten.addmm": 1920}
    assert counts["Sequential.0"] == {"aten.addmm": 1280} and counts["Sequential.2"] == {"aten.addmm": 640}


def test_products_as_torch_decomposes_them():
    with FlopCounterMode(display=False) as fc:
        ember.randn(3, 4, 5) @ ember.randn(5, 6)  # one mm of 12 rows
        ember.randn(2, 1, 4, 5) @ ember.randn(3, 5, 2)  # a bmm over the broadcast batch of 6
        ember.randn(5) @ ember.randn(5, 6)  # a vector-matrix product is an mm of one row
        ember.randn(6, 5) @ ember.randn(5)  # matrix-vector: not counted (torch neither)
        F.linear(ember.randn(2, 3, 4), ember.randn(5, 4))
    assert fc.get_flop_counts()["Global"] == {"aten.mm": 2 * 12 * 5 * 6 + 2 * 5 * 6 + 2 * 6 * 4 * 5,
                                              "aten.bmm": 6 * 2 * 4 * 5 * 2}


def test_convolutions_and_attention():
    x = ember.randn(2, 3, 8, 8, requires_grad=True)
    w = ember.randn(6, 1, 3, 3, requires_grad=True)
    with FlopCounterMode(display=False) as fc:
        F.conv2d(x, w, padding=1, groups=3).sum().backward()
    fwd = 2 * 2 * (6 * 1 * 3 * 3) * 64
    # backward: the input gradient (as the forward) and torch's weight-gradient formula (all 3 input channels)
    assert fc.get_flop_counts()["Global"] == {"aten.convolution": fwd, "aten.convolution_backward": fwd + 3 * fwd}
    q = ember.randn(2, 4, 16, 8, requires_grad=True)
    with FlopCounterMode(display=False) as fc:
        F.scaled_dot_product_attention(q, q, q).sum().backward()
    bh, s, d = 8, 16, 8
    counts = fc.get_flop_counts()["Global"]
    assert counts["aten._scaled_dot_product_flash_attention"] == bh * 2 * (2 * s * d * s)
    assert counts["aten._scaled_dot_product_flash_attention_backward"] == bh * 5 * (2 * s * d * s)
    assert len(counts) == 2  # the kernels the attention runs inside are not counted again


def test_the_table_and_what_the_mode_leaves_behind(capsys):
    from ember._ops import linalg
    fwd = linalg.MM.fwd
    with FlopCounterMode(depth=1) as fc:
        _mlp()(ember.randn(5, 8))
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["Module", "FLOP", "%", "Total"]
    assert "Global" in table and "Sequential " in table and "Sequential.0" not in table and "1.920K" in table
    assert "Sequential.0" in fc.get_table(depth=2)
    assert linalg.MM.fwd is fwd  # the counting wrappers are gone
    with FlopCounterMode(display=False):
        with pytest.raises(RuntimeError, match="do not nest"):
            FlopCounterMode(display=False).__enter__()
    with pytest.raises(NotImplementedError, match="custom_mapping"):
        FlopCounterMode(custom_mapping={"mm": None})
