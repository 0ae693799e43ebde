"""nn embedding family: F.embedding, F.embedding_bag, F.one_hot, nn.Embedding, nn.EmbeddingBag."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from tests.helpers import assert_close

RNG = np.random.default_rng(0)
W = RNG.standard_normal((6, 3))
IDX = np.array([[0, 2, 2], [5, 1, 2]])
FLAT = np.array([1, 2, 4, 5, 4, 3, 2, 0])
OFFSETS = np.array([0, 2, 2, 5])


def _w(requires_grad=True):
    return ember.tensor(W.copy(), requires_grad=requires_grad)


def test_embedding_forward_is_row_gather():
    assert_close(F.embedding(ember.tensor(IDX), _w()), W[IDX])
    assert_close(F.embedding(ember.tensor(IDX.astype(np.int32)), _w()), W[IDX])


def test_embedding_grad_accumulates_repeated_rows_and_skips_padding():
    w = _w()
    F.embedding(ember.tensor(IDX), w, padding_idx=2).sum().backward()
    expected = np.zeros_like(W)
    for i in IDX.ravel():
        if i != 2:
            expected[i] += 1
    assert_close(w.grad, expected)


def test_embedding_scale_grad_by_freq():
    w = _w()
    F.embedding(ember.tensor(IDX), w, scale_grad_by_freq=True).sum().backward()
    expected = np.zeros_like(W)
    expected[np.unique(IDX)] = 1  # each distinct row gets count * (1 / count)
    assert_close(w.grad, expected)


def test_embedding_gradcheck_and_gradgradcheck():
    # padding_idx and scale_grad_by_freq deliberately change the gradient, so the check runs without them
    fn = lambda w: F.embedding(ember.tensor(IDX), w) ** 2
    assert gradcheck(fn, [_w()])
    assert gradgradcheck(fn, [_w()])


def test_embedding_max_norm_renorms_referenced_rows_in_place():
    w = ember.tensor(W * 3)
    out = F.embedding(ember.tensor([0, 1]), w, max_norm=1.0)
    norms = np.linalg.norm(w.numpy(), axis=1)
    assert np.all(norms[:2] <= 1.0 + 1e-6) and np.all(norms[2:] > 1.0)
    assert_close(out, w.numpy()[:2])


def test_embedding_errors():
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        F.embedding(ember.tensor([1.0]), _w())
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([6]), _w())
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(ember.tensor([1]), _w(), padding_idx=6)


def _bag_ref(mode, flat, offsets, padding_idx=None, psw=None):
    bounds = list(offsets) + [len(flat)]
    out = np.zeros((len(offsets), W.shape[1]))
    for b in range(len(offsets)):
        rows = [(i, k) for k, i in enumerate(flat[bounds[b]:bounds[b + 1]], bounds[b]) if i != padding_idx]
        if not rows:
            continue
        vals = np.stack([W[i] * (1 if psw is None else psw[k]) for i, k in rows])
        out[b] = {"sum": vals.sum(0), "mean": vals.mean(0), "max": vals.max(0)}[mode]
    return out


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_with_offsets(mode):
    out = F.embedding_bag(ember.tensor(FLAT), _w(), ember.tensor(OFFSETS), mode=mode, padding_idx=4)
    assert_close(out, _bag_ref(mode, FLAT, OFFSETS, padding_idx=4))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_and_include_last_offset(mode):
    assert_close(F.embedding_bag(ember.tensor(IDX), _w(), mode=mode), _bag_ref(mode, IDX.ravel(), [0, 3]))
    out = F.embedding_bag(ember.tensor(FLAT), _w(), ember.tensor(np.append(OFFSETS, 8)), mode=mode,
                          include_last_offset=True)
    assert_close(out, _bag_ref(mode, FLAT, OFFSETS))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradcheck(mode):
    fn = lambda w: F.embedding_bag(ember.tensor(FLAT), w, ember.tensor(OFFSETS), mode=mode)
    assert gradcheck(fn, [_w()])


def test_embedding_bag_per_sample_weights():
    psw = RNG.standard_normal(8)
    out = F.embedding_bag(ember.tensor(FLAT), _w(), ember.tensor(OFFSETS), mode="sum",
                          per_sample_weights=ember.tensor(psw))
    assert_close(out, _bag_ref("sum", FLAT, OFFSETS, psw=psw))
    fn = lambda w, p: F.embedding_bag(ember.tensor(FLAT), w, ember.tensor(OFFSETS), mode="sum",
                                      per_sample_weights=p)
    assert gradcheck(fn, [_w(), ember.tensor(psw, requires_grad=True)])


def test_embedding_bag_errors():
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(ember.tensor([1]), _w())
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(ember.tensor([[1]]), _w(), ember.tensor([0]))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(ember.tensor([1]), _w(), ember.tensor([0]), per_sample_weights=ember.ones(1))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(ember.tensor([1]), _w(), ember.tensor([0]), mode="foo")


def test_one_hot():
    out = F.one_hot(ember.tensor([0, 3, 1]))
    assert out.dtype == ember.int64 and out.tolist() == [[1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0]]
    assert F.one_hot(ember.tensor([[1], [0]]), 3).shape == (2, 1, 3)
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(ember.tensor([-1]))
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        F.one_hot(ember.tensor([3]), 2)
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of type LongTensor."):
        F.one_hot(ember.tensor([1.0]))


def test_embedding_module():
    m = nn.Embedding(10, 4, padding_idx=-1)
    assert m.padding_idx == 9 and m.weight[9].tolist() == [0, 0, 0, 0]
    assert list(m.state_dict()) == ["weight"]
    out = m(ember.tensor([[1, 9]]))
    assert out.shape == (1, 2, 4)
    out.sum().backward()
    assert m.weight.grad[9].tolist() == [0, 0, 0, 0] and m.weight.grad[1].tolist() == [1, 1, 1, 1]
    assert repr(m) == "Embedding(10, 4, padding_idx=9)"
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)


def test_embedding_from_pretrained():
    w = ember.tensor(W)
    m = nn.Embedding.from_pretrained(w)
    assert not m.weight.requires_grad
    assert nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad
    assert_close(m(ember.tensor([2])), W[[2]])
    bag = nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not bag.weight.requires_grad
    assert_close(bag(ember.tensor([[0, 1]])), W[:2].sum(0, keepdims=True))
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(ember.ones(3))


def test_embedding_bag_module():
    m = nn.EmbeddingBag(10, 3, mode="max", padding_idx=0)
    assert repr(m) == "EmbeddingBag(10, 3, mode='max', padding_idx=0)"
    assert m(ember.tensor([1, 2, 3]), ember.tensor([0, 1])).shape == (2, 3)


def test_embedding_double_backward_keeps_padding_and_frequency_scaling():
    w = _w()
    out = F.embedding(ember.tensor(IDX), w, padding_idx=0, scale_grad_by_freq=True)
    (gw,) = ember.autograd.grad((out ** 2).sum(), [w], create_graph=True)
    expected = np.zeros_like(W)
    for i in IDX.ravel():
        if i != 0:
            expected[i] += 2 * W[i] / (IDX == i).sum()
    assert_close(gw, expected)
    gw.sum().backward()
    assert w.grad[0].tolist() == [0.0, 0.0, 0.0]


def test_embedding_bag_offset_errors():
    w = ember.randn(10, 3)
    idx = ember.tensor([1, 2, 3, 4, 5, 6])
    with pytest.raises(RuntimeError, match=r"offsets\[0\] has to be 0, i.e., the first sequence in the mini-batch "
                                           r"has to start from position 0. However, got 2\n\[ torch.LongTensor\{\} \]"):
        F.embedding_bag(idx, w, ember.tensor([2, 4]))
    with pytest.raises(RuntimeError, match=r"offsets\[-1\] can not be greater than input's length 6 but got "
                                           r"offsets\[-1\] of 7"):
        F.embedding_bag(idx, w, ember.tensor([0, 2, 7]), include_last_offset=True)
    with pytest.raises(RuntimeError, match="but got torch.FloatTensor instead"):
        F.embedding_bag(idx, w, ember.tensor([0.0, 2.0]))
    # an offset equal to the input's length is an empty last bag; int32 offsets are accepted
    out = F.embedding_bag(idx, w, ember.tensor([0, 6], dtype=ember.int32))
    assert_close(out[0], w[1:7].mean(0))
    assert_close(out[1], np.zeros(3, np.float32))
