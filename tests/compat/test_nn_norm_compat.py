"""Normalization, embedding and distance ops and modules against PyTorch: values, dtypes, gradients, running
statistics, reprs, state_dict keys and error messages."""
import numpy as np
import pytest

import ember
import ember.nn as enn
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional
tnn = torch.nn


def _run(fn_e, fn_t, arrays, dtype=np.float64, seed=0):
    """Runs both, backpropagates the same random cotangent, returns (ember out, torch out, grad pairs)."""
    es = [ember.tensor(a.astype(dtype) if a.dtype.kind == "f" else a, requires_grad=a.dtype.kind == "f")
          for a in arrays]
    ts = [torch.tensor(a.astype(dtype) if a.dtype.kind == "f" else a, requires_grad=a.dtype.kind == "f")
          for a in arrays]
    ye, yt = fn_e(*es), fn_t(*ts)
    g = np.random.default_rng(seed).standard_normal(tuple(yt.shape)).astype(dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    return ye, yt, [(e.grad, t.grad) for e, t in zip(es, ts) if t.grad is not None]


def _close(ye, yt, grads, dtype):
    tol = 1e-10 if dtype == np.float64 else 2e-4
    assert str(ye.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=tol, rtol=tol)
    for ge, gt in grads:
        assert ge is not None
        np.testing.assert_allclose(ge.numpy(), gt.numpy(), atol=tol, rtol=tol)


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _cases(F):
    rm, rv = np.linspace(-1, 1, 3), np.linspace(0.5, 2, 3)
    lib = torch if F is TF else ember
    return {
        "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [_r(4, 3, 5), _r(3), _r(3)]),
        "batch_norm_2d": (lambda x, w, b: F.batch_norm(x, None, None, w, b, True, 0.1, 1e-3),
                          [_r(3, 3, 4, 2), _r(3), _r(3)]),
        "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, lib.tensor(rm).to(x.dtype),
                                                                   lib.tensor(rv).to(x.dtype), w, b, False),
                            [_r(4, 3), _r(3), _r(3)]),
        "batch_norm_noaffine": (lambda x: F.batch_norm(x, None, None, training=True), [_r(5, 2, 3)]),
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (4, 5), w, b), [_r(3, 4, 5), _r(4, 5), _r(4, 5)]),
        "layer_norm_weight_only": (lambda x, w: F.layer_norm(x, [5], w), [_r(3, 5), _r(5)]),
        "rms_norm": (lambda x, w: F.rms_norm(x, (5,), w), [_r(3, 4, 5), _r(5)]),
        "rms_norm_eps": (lambda x: F.rms_norm(x, (4, 5), eps=1e-3), [_r(3, 4, 5)]),
        "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), [_r(3, 4, 3, 2), _r(4), _r(4)]),
        "group_norm_noaffine": (lambda x: F.group_norm(x, 3, eps=1e-2), [_r(2, 6, 4)]),
        "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [_r(2, 3, 4, 5), _r(3), _r(3)]),
        "instance_norm_eval": (lambda x: F.instance_norm(x, lib.tensor(rm), lib.tensor(rv), use_input_stats=False),
                               [_r(2, 3, 4)]),
        "local_response_norm": (lambda x: F.local_response_norm(x, 3, 0.5, 0.75, 2.0), [_r(2, 5, 4)]),
        "local_response_norm_5d": (lambda x: F.local_response_norm(x, 4), [_r(2, 6, 2, 3, 2)]),
        "normalize": (lambda x: F.normalize(x, 3.0, -1), [_r(3, 4)]),
        "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b, 0), [_r(3, 4), _r(3, 4, seed=1)]),
        "cosine_similarity_bcast": (lambda a, b: F.cosine_similarity(a, b), [_r(2, 3, 4), _r(1, 3, 4, seed=1)]),
        "pairwise_distance": (lambda a, b: F.pairwise_distance(a, b, 1.5, 1e-3, True), [_r(3, 4), _r(4, seed=1)]),
        "pdist": (lambda x: F.pdist(x, 3), [_r(5, 3)]),
        "embedding": (lambda w: F.embedding(lib.tensor([[0, 3, 3], [5, 1, 3]]), w, padding_idx=1,
                                            scale_grad_by_freq=True), [_r(6, 3)]),
        "embedding_bag_mean": (lambda w: F.embedding_bag(lib.tensor([1, 2, 4, 5, 4, 3]), w, lib.tensor([0, 2, 2]),
                                                         padding_idx=4), [_r(6, 3)]),
        "embedding_bag_max": (lambda w: F.embedding_bag(lib.tensor([1, 2, 4, 5, 4, 3]), w, lib.tensor([0, 2, 2, 6]),
                                                        mode="max", include_last_offset=True), [_r(6, 3)]),
        "embedding_bag_psw": (lambda w, p: F.embedding_bag(lib.tensor([[1, 2], [0, 5]]), w, mode="sum",
                                                           per_sample_weights=p), [_r(6, 3), _r(2, 2)]),
    }


CASES = list(_cases(EF))


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_dtypes_and_grads(name, dtype):
    fe, arrays = _cases(EF)[name]
    ft, _ = _cases(TF)[name]
    _close(*_run(fe, ft, arrays, dtype), dtype)


@pytest.mark.parametrize("name", ["batch_norm_train", "layer_norm", "group_norm", "rms_norm", "instance_norm"])
def test_double_backward(name):
    fe, arrays = _cases(EF)[name]
    ft, _ = _cases(TF)[name]
    es = [ember.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ge = ember.autograd.grad((fe(*es) ** 3).sum(), es, create_graph=True)
    gt = torch.autograd.grad((ft(*ts) ** 3).sum(), ts, create_graph=True)
    sum(g.pow(2).sum() for g in ge).backward()
    sum(g.pow(2).sum() for g in gt).backward()
    for e, t in zip(es, ts):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=1e-9, rtol=1e-7)


def test_one_hot_matches():
    for a, n in (([0, 2, 1], -1), ([[1], [3]], 5)):
        e, t = EF.one_hot(ember.tensor(a), n), TF.one_hot(torch.tensor(a), n)
        assert e.dtype == ember.int64 and e.tolist() == t.tolist()


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and text are what is compared
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("call", [
    lambda F, L: F.batch_norm(L.ones(1, 3), None, None, training=True),
    lambda F, L: F.batch_norm(L.ones(2, 3, 4), L.zeros(4), L.ones(4), training=True),
    lambda F, L: F.layer_norm(L.ones(2, 3), (4,)),
    lambda F, L: F.layer_norm(L.ones(2, 3), (3,), L.ones(2)),
    lambda F, L: F.rms_norm(L.ones(2, 3), (2,)),
    lambda F, L: F.group_norm(L.ones(2, 3, 1), 2),
    lambda F, L: F.local_response_norm(L.ones(3, 2), 2),
    lambda F, L: F.pdist(L.ones(3)),
    lambda F, L: F.one_hot(L.tensor([-1])),
    lambda F, L: F.one_hot(L.tensor([3]), 2),
    lambda F, L: F.one_hot(L.tensor([1.0])),
    lambda F, L: F.one_hot(L.tensor([], dtype=L.long)),
    lambda F, L: F.embedding(L.tensor([5]), L.ones(3, 2)),
    lambda F, L: F.embedding(L.tensor([1]), L.ones(3, 2), padding_idx=5),
    lambda F, L: F.embedding(L.tensor([1.0]), L.ones(3, 2)),
    lambda F, L: F.embedding_bag(L.tensor([1]), L.ones(3, 2)),
    lambda F, L: F.embedding_bag(L.tensor([1]), L.ones(3, 2), L.tensor([0]), mode="max",
                                 per_sample_weights=L.ones(1)),
    lambda F, L: F.embedding_bag(L.tensor([1]), L.ones(3, 2), L.tensor([0]), mode="foo"),
])
def test_error_messages(call):
    e, t = _error(lambda: call(EF, ember)), _error(lambda: call(TF, torch))
    assert t is not None and e is not None
    assert e[0] == t[0]
    # torch's local_response_norm message carries stray source indentation: compare words
    assert e[1].replace("ember.", "torch.").split() == t[1].split()


# ----- modules -----

def _module_pairs():
    return [
        (lambda nn: nn.BatchNorm1d(3), (4, 3)),
        (lambda nn: nn.BatchNorm1d(3, momentum=None, affine=False), (4, 3, 2)),
        (lambda nn: nn.BatchNorm2d(3, eps=1e-3, momentum=0.3, bias=False), (2, 3, 4, 4)),
        (lambda nn: nn.BatchNorm3d(2, track_running_stats=False), (2, 2, 3, 2, 2)),
        (lambda nn: nn.InstanceNorm1d(3), (2, 3, 5)),
        (lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True), (2, 3, 4, 4)),
        (lambda nn: nn.InstanceNorm3d(2, momentum=0.5, track_running_stats=True), (2, 2, 3, 2, 2)),
        (lambda nn: nn.LayerNorm([4, 5], eps=1e-6), (2, 4, 5)),
        (lambda nn: nn.LayerNorm(5, elementwise_affine=False), (3, 5)),
        (lambda nn: nn.LayerNorm(5, bias=False), (3, 5)),
        (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
        (lambda nn: nn.GroupNorm(2, 4, affine=False), (3, 4, 5)),
        (lambda nn: nn.RMSNorm([5]), (3, 5)),
        (lambda nn: nn.RMSNorm(5, eps=1e-3, elementwise_affine=False), (3, 5)),
        (lambda nn: nn.LocalResponseNorm(3, k=2.0), (2, 4, 3)),
    ]


def _copy_state(me, mt):
    for k, v in me.state_dict().items():
        mt.state_dict()[k].copy_(torch.from_numpy(np.array(v.detach().numpy())))


@pytest.mark.parametrize("i", range(len(_module_pairs())))
def test_module_repr_state_and_training(i):
    make, shape = _module_pairs()[i]
    me, mt = make(enn), make(tnn).double()
    me = me.double()
    assert repr(me) == repr(mt)
    assert list(me.state_dict()) == list(mt.state_dict())
    for k, v in mt.state_dict().items():
        assert str(me.state_dict()[k].dtype).split(".")[-1] == str(v.dtype).split(".")[-1], k
    _copy_state(me, mt)
    for step in range(3):
        xa = _r(*shape, seed=step)
        ye, yt = me(ember.tensor(xa)), mt(torch.tensor(xa))
        np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), atol=1e-10)
    for k, v in mt.state_dict().items():
        np.testing.assert_allclose(me.state_dict()[k].numpy(), v.numpy(), atol=1e-12, err_msg=k)
    me.eval()
    mt.eval()
    xa = _r(*shape, seed=9)
    np.testing.assert_allclose(me(ember.tensor(xa)).detach().numpy(), mt(torch.tensor(xa)).detach().numpy(),
                               atol=1e-10)


def test_default_initialization_matches():
    for make in (lambda nn: nn.BatchNorm2d(4), lambda nn: nn.LayerNorm(3), lambda nn: nn.GroupNorm(1, 2),
                 lambda nn: nn.RMSNorm(3)):
        me, mt = make(enn), make(tnn)
        for k, v in mt.state_dict().items():
            np.testing.assert_array_equal(me.state_dict()[k].numpy(), v.numpy())


@pytest.mark.parametrize("make", [
    lambda nn: nn.Embedding(10, 3),
    lambda nn: nn.Embedding(10, 3, padding_idx=-2, max_norm=1.5, norm_type=1.0, scale_grad_by_freq=True),
    lambda nn: nn.EmbeddingBag(10, 3),
    lambda nn: nn.EmbeddingBag(10, 3, max_norm=2.0, mode="sum", padding_idx=3, scale_grad_by_freq=True),
    lambda nn: nn.CosineSimilarity(dim=0),
    lambda nn: nn.PairwiseDistance(p=1.0),
])
def test_sparse_and_distance_reprs(make):
    assert repr(make(enn)) == repr(make(tnn))


def test_embedding_max_norm_matches():
    w = _r(6, 3) * 3
    we, wt = ember.tensor(w.copy()), torch.tensor(w.copy())
    idx = [[0, 2], [2, 5]]
    ye = EF.embedding(ember.tensor(idx), we, max_norm=2.0, norm_type=1.5)
    yt = TF.embedding(torch.tensor(idx), wt, max_norm=2.0, norm_type=1.5)
    np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-12)
    np.testing.assert_allclose(we.numpy(), wt.numpy(), rtol=1e-12)


def test_embedding_module_padding_matches():
    me, mt = enn.Embedding(5, 2, padding_idx=2), tnn.Embedding(5, 2, padding_idx=2)
    assert me.weight[2].tolist() == mt.weight[2].tolist() == [0.0, 0.0]
    mt.weight.data = torch.from_numpy(me.weight.detach().numpy().copy())
    idx = [[2, 1, 2], [0, 4, 4]]
    me(ember.tensor(idx)).pow(2).sum().backward()
    mt(torch.tensor(idx)).pow(2).sum().backward()
    np.testing.assert_allclose(me.weight.grad.numpy(), mt.weight.grad.numpy(), rtol=1e-6)


def test_batchnorm_input_dim_errors_match():
    for make, shape in ((lambda nn: nn.BatchNorm1d(3), (2, 3, 4, 5)), (lambda nn: nn.BatchNorm2d(3), (2, 3)),
                        (lambda nn: nn.InstanceNorm1d(3), (3,)), (lambda nn: nn.InstanceNorm3d(3), (2, 3))):
        e = _error(lambda make=make, shape=shape: make(enn)(ember.ones(*shape)))
        t = _error(lambda make=make, shape=shape: make(tnn)(torch.ones(*shape)))
        assert e == t
