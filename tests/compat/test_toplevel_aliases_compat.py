"""torch's top-level functional spellings, window functions and stft/istft compared with torch itself."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember


def _pair(*shape, seed=0, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.1
    return ember.tensor(a), torch.tensor(a)


def _cmp(e, t, atol=1e-10):
    if isinstance(t, (tuple, list)):
        assert isinstance(e, tuple) and len(e) == len(t)
        for a, b in zip(e, t):
            _cmp(a, b, atol)
        return
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-7)


X1, X2 = _pair(2, 4, 9), _pair(2, 4, 6, 5)
W1, W2 = _pair(3, 4, 3, seed=1), _pair(2, 2, 3, 3, seed=1)
C4 = _pair(4, seed=2)
C4b = _pair(4, seed=3)

CASES = {
    "conv1d": lambda m, x, w: m.conv1d(x[0], w[0], None, 2, 1),
    "conv_transpose1d": lambda m, x, w: m.conv_transpose1d(x[0], w[0].transpose(0, 1), None, 2, 1, 1),
    "conv2d_groups": lambda m, x, w: m.conv2d(x[1], w[1], None, 1, 1, 1, 2),
    "layer_norm": lambda m, x, w: m.layer_norm(x[1], [6, 5], None, None, 1e-3, True),
    "group_norm": lambda m, x, w: m.group_norm(x[1], 2, w[2], w[3], 1e-5, True),
    "batch_norm": lambda m, x, w: m.batch_norm(x[1], w[2], w[3], None, None, True, 0.1, 1e-5, False),
    "instance_norm": lambda m, x, w: m.instance_norm(x[1], w[2], w[3], None, None, True, 0.1, 1e-5, False),
    "rms_norm": lambda m, x, w: m.rms_norm(x[1], [5], None, 1e-6),
    "max_pool1d": lambda m, x, w: m.max_pool1d(x[0], 2),
    "max_pool2d": lambda m, x, w: m.max_pool2d(x[1], 2, 1, 1, 1, True),
    "avg_pool1d": lambda m, x, w: m.avg_pool1d(x[0], 3, 2, 1, True, False),
    "adaptive_avg_pool1d": lambda m, x, w: m.adaptive_avg_pool1d(x[0], 4),
    "adaptive_max_pool1d": lambda m, x, w: m.adaptive_max_pool1d(x[0], 4),
    "pixel_shuffle": lambda m, x, w: m.pixel_shuffle(x[1], 2),
    "channel_shuffle": lambda m, x, w: m.channel_shuffle(x[1], 2),
    "cosine_similarity": lambda m, x, w: m.cosine_similarity(x[1], x[1] + 1, 3),
    "pairwise_distance": lambda m, x, w: m.pairwise_distance(x[0][0], x[0][1], 1.5, 1e-6, True),
    "pdist": lambda m, x, w: m.pdist(x[0][0], 3),
    "prelu": lambda m, x, w: m.prelu(x[1], w[2]),
    "selu": lambda m, x, w: m.selu(x[0]),
    "celu": lambda m, x, w: m.celu(x[0], 0.7),
    "threshold": lambda m, x, w: m.threshold(x[0], 0.2, -3.0),
    "hardshrink": lambda m, x, w: m.hardshrink(x[0], 0.4),
    "rrelu_eval": lambda m, x, w: m.rrelu(x[0], 0.1, 0.2),
    "constant_pad_nd": lambda m, x, w: m.constant_pad_nd(x[0], [1, 2, 2, 0], 1.5),
    "kl_div_default": lambda m, x, w: m.kl_div(x[0], x[0].abs()),
    "kl_div_mean": lambda m, x, w: m.kl_div(x[0], x[0].abs(), 1),
    "kl_div_log_target": lambda m, x, w: m.kl_div(x[0], x[0] * 0.5, 2, log_target=True),
    "bce_logits": lambda m, x, w: m.binary_cross_entropy_with_logits(x[0][..., :4], x[0][..., 1:5].sigmoid(), w[2],
                                                                     w[3].abs(), 1),
    "bce_logits_default": lambda m, x, w: m.binary_cross_entropy_with_logits(x[0], x[0].sigmoid()),
    "cosine_embedding_loss": lambda m, x, w: m.cosine_embedding_loss(x[0][0], x[0][1], x[0][0, :, 0].sign(), 0.1),
    "hinge_embedding_loss": lambda m, x, w: m.hinge_embedding_loss(x[0][0, 0], x[0][1, 0].sign(), 0.5, 2),
    "margin_ranking_loss": lambda m, x, w: m.margin_ranking_loss(x[0][0, 0], x[0][1, 0], x[0][0, 1].sign(), 0.2, 1),
    "poisson_nll_loss": lambda m, x, w: m.poisson_nll_loss(x[0], x[0].abs(), True, True, 1e-8, 1),
    "triplet_margin_loss": lambda m, x, w: m.triplet_margin_loss(x[0][0], x[0][1], x[0][0] * 2, 1.0, 2, 1e-6, True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_grad(name):
    fn = CASES[name]
    xs_e = [X1[0].clone().requires_grad_(), X2[0].clone().requires_grad_()]
    xs_t = [X1[1].clone().requires_grad_(), X2[1].clone().requires_grad_()]
    ws_e = [W1[0], W2[0], C4[0], C4b[0]]
    ws_t = [W1[1], W2[1], C4[1], C4b[1]]
    out_e, out_t = fn(ember, xs_e, ws_e), fn(torch, xs_t, ws_t)
    _cmp(out_e, out_t)
    first_e = out_e[0] if isinstance(out_e, tuple) else out_e
    first_t = out_t[0] if isinstance(out_t, tuple) else out_t
    if first_t.requires_grad:
        first_e.sum().backward()
        first_t.sum().backward()
        for a, b in zip(xs_e, xs_t):
            if b.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-9)


def test_embedding_and_ctc():
    we, wt = _pair(6, 3)
    we.requires_grad_(), wt.requires_grad_()
    idx = [0, 5, 2, 2]
    for pad in (-1, -2, 2):
        we.grad = wt.grad = None
        oe, ot = ember.embedding(we, ember.tensor(idx), pad), torch.embedding(wt, torch.tensor(idx), pad)
        _cmp(oe, ot)
        oe.sum().backward()
        ot.sum().backward()
        np.testing.assert_allclose(we.grad.numpy(), wt.grad.numpy())
    le, lt = _pair(6, 2, 5)
    le, lt = le.log_softmax(2), lt.log_softmax(2)
    for red in (0, 1, 2):
        _cmp(ember.ctc_loss(le, ember.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2], 0, red),
             torch.ctc_loss(lt, torch.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2], 0, red))


def test_dropout_flags_and_inplace_forms():
    x = ember.ones(50)
    assert ember.dropout(x, 0.3, False) is x
    with pytest.raises(TypeError):
        ember.dropout(x, 0.3)
    for name, args in [("selu_", ()), ("celu_", (0.5,)), ("threshold_", (0.1, 2.0)), ("rrelu_", ())]:
        e, t = _pair(3, 4)
        _cmp(getattr(ember, name)(e, *args), getattr(torch, name)(t, *args))
        _cmp(e, t)


def test_tensor_spellings():
    e, t = _pair(3)
    assert ember.get_device(e) == torch.get_device(t)
    assert ember.is_inference(e) == torch.is_inference(t)
    _cmp(ember.fill(e, 2.0), torch.fill(t, 2.0))
    ie, it = ember.tensor([12, 18]), torch.tensor([12, 18])
    _cmp(ember.gcd_(ie, ember.tensor([8, 12])), torch.gcd_(it, torch.tensor([8, 12])))
    _cmp(ember.lcm_(ie, ember.tensor([3, 5])), torch.lcm_(it, torch.tensor([3, 5])))
    fe, ft = _pair(3, positive=True)
    _cmp(ember.xlogy_(fe, fe + 1), torch.xlogy_(ft, ft + 1))
    _cmp(ember.ldexp_(fe, ember.tensor([1, 2, 3])), torch.ldexp_(ft, torch.tensor([1, 2, 3])))
    _cmp(ember.zero_(fe), torch.zero_(ft))


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
                                  "kaiser_window"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name, dtype):
    for length in (0, 1, 2, 5, 8, 33):
        for periodic in (True, False):
            e = getattr(ember, name)(length, periodic, dtype=getattr(ember, dtype))
            t = getattr(torch, name)(length, periodic, dtype=getattr(torch, dtype))
            _cmp(e, t, atol=1e-6 if dtype == "float32" else 1e-12)
    _cmp(ember.hamming_window(7, False, 0.5, 0.3, dtype=ember.float64),
         torch.hamming_window(7, False, 0.5, 0.3, dtype=torch.float64))
    _cmp(ember.kaiser_window(7, True, 4.0, dtype=ember.float64), torch.kaiser_window(7, True, 4.0,
                                                                                        dtype=torch.float64))
    assert getattr(ember, name)(4).dtype == ember.float32


STFT_CASES = [{"n_fft": 8}, {"n_fft": 8, "hop_length": 3, "win_length": 6}, {"n_fft": 9, "center": False},
              {"n_fft": 8, "normalized": True}, {"n_fft": 8, "onesided": False}, {"n_fft": 8, "pad_mode": "constant"},
              {"n_fft": 16, "hop_length": 4}]


@pytest.mark.parametrize("kw", STFT_CASES)
@pytest.mark.parametrize("shape", [(40,), (2, 41)])
def test_stft_istft(kw, shape):
    xe, xt = _pair(*shape)
    xe.requires_grad_(), xt.requires_grad_()
    wl = kw.get("win_length", kw["n_fft"])
    we, wt = ember.hann_window(wl, dtype=ember.float64), torch.hann_window(wl, dtype=torch.float64)
    se = ember.stft(xe, window=we, return_complex=True, **kw)
    st = torch.stft(xt, window=wt, return_complex=True, **kw)
    _cmp(se, st)
    se.abs().sum().backward()
    st.abs().sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), atol=1e-9)
    if kw.get("center", True):
        ikw = {k: v for k, v in kw.items() if k != "pad_mode"}
        ce, ct = se.detach().requires_grad_(), st.detach().requires_grad_()
        ye, yt = ember.istft(ce, window=we, length=shape[-1], **ikw), torch.istft(ct, window=wt, length=shape[-1],
                                                                                    **ikw)
        _cmp(ye, yt)
        (ye * ye).sum().backward()
        (yt * yt).sum().backward()
        np.testing.assert_allclose(ce.grad.numpy(), ct.grad.numpy(), atol=1e-9)


def test_stft_float32_and_errors():
    xe, xt = ember.randn(30), torch.randn(30)
    assert str(ember.stft(xe, 8, window=ember.hann_window(8), return_complex=True).dtype).endswith(
        str(torch.stft(xt, 8, window=torch.hann_window(8), return_complex=True).dtype).split(".")[1])
    for fn in (lambda m, x: m.stft(x, 8), lambda m, x: m.stft(x, 8, 0, window=m.ones(8), return_complex=True)):
        with pytest.raises(RuntimeError) as ee:
            fn(ember, xe)
        with pytest.raises(RuntimeError) as et:
            fn(torch, xt)
        assert str(ee.value).split(" : ")[-1] == str(et.value).split(" : ")[-1]
