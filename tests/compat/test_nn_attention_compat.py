"""Attention and transformers against torch: same weights in, same outputs, weights and input gradients out."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as F
from ember.nn._functional import attention as attn_impl

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _close(e, t, atol=1e-10, rtol=1e-7):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=rtol)


def _copy(tm, em):
    sd = {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    assert list(sd) == list(em.state_dict())
    result = em.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys


def _pair(a):
    return ember.tensor(a.copy(), requires_grad=a.dtype.kind == "f"), torch.tensor(a.copy(),
                                                                                   requires_grad=a.dtype.kind == "f")


@pytest.fixture(params=["direct", "tiled"])
def path(request, monkeypatch):
    if request.param == "tiled":
        monkeypatch.setattr(attn_impl, "_DIRECT_MAX", 0)
        monkeypatch.setattr(attn_impl, "_BLOCK_Q", 4)
        monkeypatch.setattr(attn_impl, "_BLOCK_K", 3)
    return request.param


SDPA_CASES = [
    {"L": 5, "S": 7},
    {"L": 5, "S": 7, "is_causal": True},
    {"L": 9, "S": 4, "is_causal": True},
    {"L": 5, "S": 7, "scale": 0.7},
    {"L": 6, "S": 6, "mask": "bool"},
    {"L": 6, "S": 8, "mask": "float"},
    {"L": 6, "S": 8, "mask": "bool_full_row"},
    {"L": 6, "S": 8, "mask": "bool_bcast"},
    {"L": 5, "S": 7, "hk": 1, "enable_gqa": True},
    {"L": 5, "S": 7, "hk": 1, "enable_gqa": True, "is_causal": True},
    {"L": 5, "S": 7, "dims": 3},
    {"L": 5, "S": 7, "dims": 2},
]


@pytest.mark.parametrize("case", SDPA_CASES, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sdpa_matches_torch(case, dtype, path):
    rng = np.random.default_rng(0)
    L, S, hk = case["L"], case["S"], case.get("hk", 3)
    lead = {4: (2, 3), 3: (3,), 2: ()}[case.get("dims", 4)]
    klead = lead[:-1] + (hk,) if lead else lead
    q, k, v = (rng.standard_normal(s).astype(dtype) for s in (lead + (L, 4), klead + (S, 4), klead + (S, 5)))
    mask = case.get("mask")
    m = None
    if mask == "bool":
        m = rng.random((L, S)) > 0.3
    elif mask == "float":
        m = rng.standard_normal((3, L, S)).astype(dtype)
    elif mask == "bool_full_row":
        m = rng.random((L, S)) > 0.3
        m[2] = False
    elif mask == "bool_bcast":
        m = rng.random((2, 1, 1, S)) > 0.3
    kw = {k_: case[k_] for k_ in ("is_causal", "scale", "enable_gqa") if k_ in case}
    (eq, tq), (ek, tk), (ev, tv) = _pair(q), _pair(k), _pair(v)
    em = None if m is None else ember.tensor(m)
    tmask = None if m is None else torch.tensor(m)
    eo = F.scaled_dot_product_attention(eq, ek, ev, attn_mask=em, **kw)
    to = TF.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask, **kw)
    assert eo.dtype == getattr(ember, str(to.dtype).split(".")[1])
    tol = {"atol": 1e-10, "rtol": 1e-7} if dtype == np.float64 else {"atol": 1e-5, "rtol": 1e-4}
    _close(eo, to, **tol)
    g = rng.standard_normal(tuple(to.shape)).astype(dtype)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    for e, t in ((eq, tq), (ek, tk), (ev, tv)):
        _close(e.grad, t.grad, **tol)


def test_sdpa_grad_fn_and_errors():
    q = torch.randn(1, 2, 3, 4, requires_grad=True)  # 4-D inputs take torch's flash kernel
    e = ember.tensor(q.detach().numpy(), requires_grad=True)
    assert F.scaled_dot_product_attention(e, e, e).grad_fn.name() == \
        TF.scaled_dot_product_attention(q, q, q).grad_fn.name()
    bad = [
        lambda m, f: f.scaled_dot_product_attention(m.randn(2, 3, 4), m.randn(2, 3, 4, dtype=m.float64),
                                                    m.randn(2, 3, 4)),
        lambda m, f: f.scaled_dot_product_attention(m.randn(2, 3, 4), m.randn(2, 3, 4), m.randn(2, 3, 4),
                                                    attn_mask=m.ones(3, 3, dtype=m.int64)),
    ]
    for fn in bad:
        with pytest.raises(RuntimeError) as te:
            fn(torch, TF)
        with pytest.raises(RuntimeError) as ee:
            fn(ember, F)
        assert str(ee.value) == str(te.value)


MHA_KWARGS = [{}, {"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True}, {"kdim": 5, "vdim": 6},
              {"batch_first": True}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3, "vdim": 4}]
MASKS = [(), ("kpm",), ("attn",), ("kpm", "attn"), ("attn3d",), ("bool_attn", "kpm")]


@pytest.mark.parametrize("kw", MHA_KWARGS, ids=str)
@pytest.mark.parametrize("masks", MASKS, ids=str)
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_torch(kw, masks, need_weights):
    torch.manual_seed(0)
    rng = np.random.default_rng(1)
    tm = torch.nn.MultiheadAttention(8, 2, **kw).double().eval()
    em = enn.MultiheadAttention(8, 2, **kw).double().eval()
    _copy(tm, em)
    L, S, N = 4, 6, 3
    q = rng.standard_normal((L, N, 8))
    k = rng.standard_normal((S, N, kw.get("kdim", 8)))
    v = rng.standard_normal((S, N, kw.get("vdim", 8)))
    if kw.get("batch_first"):
        q, k, v = (x.transpose(1, 0, 2).copy() for x in (q, k, v))
    targs, eargs = {}, {}
    if "kpm" in masks:
        kpm = rng.random((N, S)) > 0.7
        kpm[:, 0] = False
        targs["key_padding_mask"], eargs["key_padding_mask"] = torch.tensor(kpm), ember.tensor(kpm)
    if "attn" in masks:
        am = rng.standard_normal((L, S))
        targs["attn_mask"], eargs["attn_mask"] = torch.tensor(am), ember.tensor(am)
    if "bool_attn" in masks:
        am = np.triu(np.ones((L, S), bool), 1)
        targs["attn_mask"], eargs["attn_mask"] = torch.tensor(am), ember.tensor(am)
    if "attn3d" in masks:
        am = rng.standard_normal((N * 2, L, S))
        targs["attn_mask"], eargs["attn_mask"] = torch.tensor(am), ember.tensor(am)
    (eq, tq), (ek, tk), (ev, tv) = _pair(q), _pair(k), _pair(v)
    with warnings.catch_warnings(record=True) as twarn:
        warnings.simplefilter("always")  # both warn about mixed bool/float masks
        to, tw = tm(tq, tk, tv, need_weights=need_weights, **targs)
    with warnings.catch_warnings(record=True) as ewarn:
        warnings.simplefilter("always")
        eo, ew = em(eq, ek, ev, need_weights=need_weights, **eargs)
    assert [str(w.message) for w in ewarn] == [str(w.message) for w in twarn]
    _close(eo, to)
    if need_weights:
        _close(ew, tw)
        (to.sum() + (tw * tw).sum()).backward()
        (eo.sum() + (ew * ew).sum()).backward()
    else:
        assert ew is None and tw is None
        to.sum().backward()
        eo.sum().backward()
    for e, t in ((eq, tq), (ek, tk), (ev, tv)):
        _close(e.grad, t.grad)
    for (name, tp), ep in zip(tm.named_parameters(), em.parameters()):
        _close(ep.grad, tp.grad, atol=1e-9)


def test_multihead_attention_unbatched_and_per_head_weights():
    torch.manual_seed(0)
    tm = torch.nn.MultiheadAttention(8, 4).double().eval()
    em = enn.MultiheadAttention(8, 4).double().eval()
    _copy(tm, em)
    x = np.random.default_rng(2).standard_normal((5, 8))
    to, tw = tm(*[torch.tensor(x)] * 3, average_attn_weights=False)
    eo, ew = em(*[ember.tensor(x)] * 3, average_attn_weights=False)
    _close(eo, to)
    _close(ew, tw)


def test_reprs_and_defaults():
    torch.manual_seed(0)
    assert repr(enn.MultiheadAttention(8, 2, kdim=3)) == repr(torch.nn.MultiheadAttention(8, 2, kdim=3))
    assert repr(enn.TransformerEncoderLayer(8, 2, 16)) == repr(torch.nn.TransformerEncoderLayer(8, 2, 16))
    assert repr(enn.TransformerDecoderLayer(8, 2, 16, bias=False)) == \
        repr(torch.nn.TransformerDecoderLayer(8, 2, 16, bias=False))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(enn.Transformer(8, 2, 1, 1, 16)) == repr(torch.nn.Transformer(8, 2, 1, 1, 16))
    for name in ("embed_dim", "num_heads", "head_dim", "kdim", "vdim", "_qkv_same_embed_dim", "batch_first",
                 "dropout", "add_zero_attn"):
        assert getattr(enn.MultiheadAttention(8, 2, vdim=4), name) == getattr(torch.nn.MultiheadAttention(8, 2, vdim=4),
                                                                               name), name


def test_square_subsequent_mask_matches():
    np.testing.assert_array_equal(enn.Transformer.generate_square_subsequent_mask(5).numpy(),
                                  torch.nn.Transformer.generate_square_subsequent_mask(5).numpy())


LAYER_KWARGS = [{}, {"norm_first": True}, {"activation": "gelu"}, {"batch_first": True}, {"bias": False},
                {"layer_norm_eps": 1e-3}]


def _inputs(rng, batch_first, L, N=3, E=16):
    return rng.standard_normal((N, L, E) if batch_first else (L, N, E))


@pytest.mark.parametrize("kw", LAYER_KWARGS, ids=str)
def test_encoder_layer_matches_torch(kw):
    torch.manual_seed(0)
    rng = np.random.default_rng(3)
    tm = torch.nn.TransformerEncoderLayer(16, 4, 32, **kw).double().eval()
    em = enn.TransformerEncoderLayer(16, 4, 32, **kw).double().eval()
    _copy(tm, em)
    (ex, tx) = _pair(_inputs(rng, kw.get("batch_first"), 5))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
    kpm = np.zeros((3, 5), bool)
    kpm[1, 3:] = True
    for margs in ({}, {"src_mask": 1, "is_causal": True}, {"src_key_padding_mask": 1}, {"src_mask": 1}):
        targs = {"is_causal": margs["is_causal"]} if "is_causal" in margs else {}
        eargs = dict(targs)
        if "src_mask" in margs:
            targs["src_mask"], eargs["src_mask"] = mask, ember.tensor(mask.numpy())
        if "src_key_padding_mask" in margs:
            targs["src_key_padding_mask"] = torch.tensor(kpm)
            eargs["src_key_padding_mask"] = ember.tensor(kpm)
        ex.grad = None
        tx.grad = None
        to, eo = tm(tx, **targs), em(ex, **eargs)
        _close(eo, to, atol=1e-9)
        (to ** 2).sum().backward()
        (eo ** 2).sum().backward()
        _close(ex.grad, tx.grad, atol=1e-9)


@pytest.mark.parametrize("kw", LAYER_KWARGS, ids=str)
def test_decoder_layer_matches_torch(kw):
    torch.manual_seed(0)
    rng = np.random.default_rng(4)
    tm = torch.nn.TransformerDecoderLayer(16, 4, 32, **kw).double().eval()
    em = enn.TransformerDecoderLayer(16, 4, 32, **kw).double().eval()
    _copy(tm, em)
    (ex, tx) = _pair(_inputs(rng, kw.get("batch_first"), 5))
    (emem, tmem) = _pair(_inputs(rng, kw.get("batch_first"), 7))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
    mkpm = np.zeros((3, 7), bool)
    mkpm[0, 5:] = True
    to = tm(tx, tmem, tgt_mask=mask, tgt_is_causal=True, memory_key_padding_mask=torch.tensor(mkpm))
    eo = em(ex, emem, tgt_mask=ember.tensor(mask.numpy()), tgt_is_causal=True,
            memory_key_padding_mask=ember.tensor(mkpm))
    _close(eo, to, atol=1e-9)
    (to ** 2).sum().backward()
    (eo ** 2).sum().backward()
    _close(ex.grad, tx.grad, atol=1e-9)
    _close(emem.grad, tmem.grad, atol=1e-9)


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first):
    torch.manual_seed(0)
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(16, 4, 2, 2, 32, batch_first=batch_first).double().eval()
        em = enn.Transformer(16, 4, 2, 2, 32, batch_first=batch_first).double().eval()
    _copy(tm, em)
    (es, ts) = _pair(_inputs(rng, batch_first, 6, N=2))
    (et, tt) = _pair(_inputs(rng, batch_first, 5, N=2))
    kpm = np.zeros((2, 6), bool)
    kpm[1, 4:] = True
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
    to = tm(ts, tt, tgt_mask=mask, src_key_padding_mask=torch.tensor(kpm),
            memory_key_padding_mask=torch.tensor(kpm))
    eo = em(es, et, tgt_mask=ember.tensor(mask.numpy()), src_key_padding_mask=ember.tensor(kpm),
            memory_key_padding_mask=ember.tensor(kpm))
    _close(eo, to, atol=1e-9)
    to.pow(2).sum().backward()
    eo.pow(2).sum().backward()
    _close(es.grad, ts.grad, atol=1e-9)
    _close(et.grad, tt.grad, atol=1e-9)


def test_encoder_warning_text_matches():
    for kw in ({}, {"batch_first": True, "norm_first": True}, {"batch_first": True, "nhead": 1},
               {"batch_first": True, "activation": lambda x: x}):
        nhead = kw.pop("nhead", 2)
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter("always")
            torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, nhead, 16, **kw), 1)
        with warnings.catch_warnings(record=True) as ew:
            warnings.simplefilter("always")
            enn.TransformerEncoder(enn.TransformerEncoderLayer(8, nhead, 16, **kw), 1)
        assert [str(w.message) for w in ew] == [str(w.message) for w in tw]


@pytest.mark.parametrize("names", [["MATH"], ["FLASH_ATTENTION"], ["MATH", "FLASH_ATTENTION"],
                                   ["EFFICIENT_ATTENTION"], ["CUDNN_ATTENTION", "EFFICIENT_ATTENTION"]])
def test_sdpa_kernel_choice_as_torch(names):
    from torch.nn import attention as tattn

    from ember.nn import attention as eattn
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal((2, 2, 5, 4)) for _ in range(3)]
    results = []
    for lib, attn, fn in ((ember, eattn, F.scaled_dot_product_attention),
                          (torch, tattn, TF.scaled_dot_product_attention)):
        q, k, v = (lib.tensor(a, requires_grad=True) for a in arrays)
        with attn.sdpa_kernel([getattr(attn.SDPBackend, n) for n in names]):
            flags = (lib.backends.cuda.flash_sdp_enabled(), lib.backends.cuda.mem_efficient_sdp_enabled(),
                     lib.backends.cuda.math_sdp_enabled(), lib.backends.cuda.cudnn_sdp_enabled())
            try:
                y = fn(q, k, v, is_causal=True)
            except RuntimeError as e:
                results.append((flags, str(e)))
                continue
        y.sum().backward()
        results.append((flags, type(y.grad_fn).__name__, y.detach().numpy(), q.grad.numpy()))
    (ef, *e), (tf, *t) = results
    assert ef == tf
    assert e[0] == t[0]
    if len(e) > 1:
        np.testing.assert_allclose(e[1], t[1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(e[2], t[2], rtol=1e-10, atol=1e-12)
