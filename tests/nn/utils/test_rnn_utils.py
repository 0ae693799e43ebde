"""ember.nn.utils.rnn: packing, padding, round trips, gradients, errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def _padded(rng, lengths, batch_first=False, feat=2):
    T = max(lengths)
    x = np.zeros((len(lengths), T, feat))
    for b, n in enumerate(lengths):
        x[b, :n] = rng.standard_normal((n, feat))
    return x if batch_first else x.transpose(1, 0, 2).copy()


def _ref_pack(x, lengths, batch_first):
    """Packed data by hand: for each t, the sequences (in decreasing length, stable) that are still running."""
    if batch_first:
        x = x.transpose(1, 0, 2)
    order = sorted(range(len(lengths)), key=lambda b: -lengths[b])
    rows, bs = [], []
    for t in range(max(lengths)):
        run = [b for b in order if lengths[b] > t]
        bs.append(len(run))
        rows += [x[t, b] for b in run]
    return np.stack(rows), bs, order


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 3, 3, 1], True), ([2, 4, 2, 4, 3], False), ([3], True)])
def test_pack_values_and_round_trip(batch_first, lengths, enforce_sorted):
    rng = np.random.default_rng(0)
    x = _padded(rng, lengths, batch_first)
    p = pack_padded_sequence(ember.tensor(x), lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    data, bs, order = _ref_pack(x, lengths, batch_first)
    assert isinstance(p, PackedSequence) and isinstance(p, tuple)
    np.testing.assert_array_equal(p.data.numpy(), data)
    assert p.batch_sizes.tolist() == bs and p.batch_sizes.dtype == ember.int64
    if enforce_sorted:
        assert p.sorted_indices is None and p.unsorted_indices is None
    else:
        assert p.sorted_indices.tolist() == order
        assert p.unsorted_indices.tolist() == np.argsort(order).tolist()
    y, lens = pad_packed_sequence(p, batch_first=batch_first)
    np.testing.assert_array_equal(y.numpy(), x)
    assert lens.tolist() == lengths and lens.dtype == ember.int64


def test_pad_packed_padding_value_and_total_length():
    rng = np.random.default_rng(1)
    x = _padded(rng, [3, 1])
    p = pack_padded_sequence(ember.tensor(x), [3, 1])
    y, _ = pad_packed_sequence(p, padding_value=-1.0, total_length=5)
    assert tuple(y.shape) == (5, 2, 2)
    np.testing.assert_array_equal(y.numpy()[:3, 0], x[:3, 0])
    np.testing.assert_array_equal(y.numpy()[1:, 1], -1.0)
    np.testing.assert_array_equal(y.numpy()[3:], -1.0)
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest sequence in "
                                         "input, but got total_length=2 and max sequence length being 3"):
        pad_packed_sequence(p, total_length=2)


def test_pack_lengths_as_tensor():
    x = ember.randn(3, 2, 1)
    p = pack_padded_sequence(x, ember.tensor([3, 2]))
    assert p.batch_sizes.tolist() == [2, 2, 1]


def test_pack_errors():
    x = ember.randn(4, 5, 2)
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                                           "is True. You can pass `enforce_sorted=False`"):
        pack_padded_sequence(x, [2, 4, 2, 4, 3])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0, but found an element in "
                                           "'lengths' that is <= 0"):
        pack_padded_sequence(x, [4, 3, 0, 0, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 3 "
                                           r"\(batch_size=5\)"):
        pack_padded_sequence(x, [4, 3, 2])
    with pytest.raises(RuntimeError, match="exceeds the padded length"):
        pack_padded_sequence(x, [5, 4, 4, 4, 4])
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted"):
        pack_sequence([ember.ones(2), ember.ones(3)])


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_pad_gradcheck(batch_first):
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((3, 4, 2) if batch_first else (4, 3, 2)), requires_grad=True)
    lengths = [2, 4, 1]

    def fn(x):
        p = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
        return p.data, pad_packed_sequence(p, batch_first=batch_first, padding_value=3.0, total_length=5)[0]
    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])
    p = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
    assert p.data.grad_fn.name() == "PackPaddedSequenceBackward0"


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    rng = np.random.default_rng(3)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 5, 3)]
    y = pad_sequence([ember.tensor(s) for s in seqs], batch_first=batch_first, padding_value=7.0, padding_side=side)
    ref = np.full((3, 5, 2), 7.0)
    for b, s in enumerate(seqs):
        if side == "right":
            ref[b, :len(s)] = s
        else:
            ref[b, 5 - len(s):] = s
    np.testing.assert_array_equal(y.numpy(), ref if batch_first else ref.transpose(1, 0, 2))
    ts = [ember.tensor(s, requires_grad=True) for s in seqs]
    assert gradcheck(lambda *a: pad_sequence(a, batch_first=batch_first, padding_side=side), ts)
    assert gradgradcheck(lambda *a: pad_sequence(a, batch_first=batch_first, padding_side=side), ts)


def test_pad_sequence_errors_and_dtype():
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        pad_sequence([])
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right, but got middle."):
        pad_sequence([ember.zeros(2, 3)], padding_side="middle")
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                           r"non-singleton dimension 1"):
        pad_sequence([ember.zeros(2, 3), ember.zeros(2, 4)])
    y = pad_sequence([ember.ones(2, dtype=ember.int64), ember.ones(3, dtype=ember.int64)])
    assert y.dtype == ember.int64 and y.tolist() == [[1, 1], [1, 1], [0, 1]]
    assert tuple(pad_sequence(ember.ones(3, 2)).shape) == (2, 3)


def test_pack_sequence_unpack_unpad():
    rng = np.random.default_rng(4)
    seqs = [ember.tensor(rng.standard_normal((n, 3))) for n in (2, 4, 1)]
    p = pack_sequence(seqs, enforce_sorted=False)
    assert p.batch_sizes.tolist() == [3, 2, 1, 1]
    out = unpack_sequence(p)
    assert len(out) == 3
    for a, b in zip(out, seqs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    padded = pad_sequence(seqs)
    back = unpad_sequence(padded, ember.tensor([2, 4, 1]))
    for a, b in zip(back, seqs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(padded.shape) == (4, 3, 3)   # the input is left as it was
    back = unpad_sequence(pad_sequence(seqs, batch_first=True), [2, 4, 1], batch_first=True)
    np.testing.assert_array_equal(back[1].numpy(), seqs[1].numpy())


def test_invert_permutation():
    assert invert_permutation(None) is None
    perm = ember.tensor([2, 0, 3, 1])
    inv = invert_permutation(perm)
    assert inv.tolist() == [1, 3, 0, 2] and inv.dtype == ember.int64


def test_packed_sequence_methods():
    p = pack_sequence([ember.ones(2), ember.ones(3)], enforce_sorted=False)
    d = p.double()
    assert isinstance(d, PackedSequence) and d.data.dtype == ember.float64
    assert d.sorted_indices.dtype == ember.int64 and d.batch_sizes is p.batch_sizes
    assert p.to(ember.float32) is p
    assert p.cpu() is p
    assert p.to("cpu").data is p.data
    assert p.long().data.dtype == ember.int64
    assert p.half().data.dtype == ember.float16
    assert not p.is_cuda
    _data, _batch_sizes, _sorted_indices, unsorted_indices = p
    assert unsorted_indices.tolist() == [1, 0]
    q = PackedSequence(p.data, p.batch_sizes, p.sorted_indices)
    assert q.unsorted_indices.tolist() == [1, 0]
    r = PackedSequence((p.data, p.batch_sizes))
    assert r.sorted_indices is None and r.batch_sizes is p.batch_sizes
