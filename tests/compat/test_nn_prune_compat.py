"""nn.utils.prune against real PyTorch: the same modules pruned by the deterministic methods give the same masks,
outputs, gradients, state_dict keys and error messages."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.utils.prune as TP  # noqa: E402

import ember  # noqa: E402
from ember.nn.utils import prune as EP  # noqa: E402


def _pair(make_e, make_t, seed=0):
    """The same module in both libraries, with distinct random weights (no magnitude ties)."""
    me, mt = make_e(), make_t()
    rng = np.random.default_rng(seed)
    for (ne, pe), (nt, pt) in zip(me.named_parameters(), mt.named_parameters()):
        assert ne == nt
        a = rng.standard_normal(tuple(pt.shape)).astype(np.float32)
        with ember.no_grad():
            pe.copy_(ember.tensor(a))
        with torch.no_grad():
            pt.copy_(torch.tensor(a))
    return me, mt


def _linear_pair(seed=0):
    return _pair(lambda: ember.nn.Linear(6, 5), lambda: torch.nn.Linear(6, 5), seed)


def _conv_pair(seed=0):
    return _pair(lambda: ember.nn.Conv2d(3, 4, 3), lambda: torch.nn.Conv2d(3, 4, 3), seed)


def _check_same(me, mt, x_shape, names=("weight",)):
    """Masks, pruned tensors, state_dict keys, outputs and the gradients reaching the `_orig` parameters."""
    assert list(me.state_dict()) == list(mt.state_dict())
    for name in names:
        np.testing.assert_array_equal(getattr(me, name + "_mask").numpy(), getattr(mt, name + "_mask").numpy())
    x = np.random.default_rng(7).standard_normal(x_shape).astype(np.float32)
    ye, yt = me(ember.tensor(x)), mt(torch.tensor(x))
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    (ye ** 2).sum().backward()
    (yt ** 2).sum().backward()
    for name in names:
        np.testing.assert_array_equal(getattr(me, name).detach().numpy(), getattr(mt, name).detach().numpy())
        ge, gt = getattr(me, name + "_orig").grad.numpy(), getattr(mt, name + "_orig").grad.numpy()
        np.testing.assert_allclose(ge, gt, rtol=1e-4, atol=1e-4)
        assert (ge[getattr(me, name + "_mask").numpy() == 0] == 0).all()


STEPS = {
    "l1_int": [("l1_unstructured", dict(amount=7))],
    "l1_float": [("l1_unstructured", dict(amount=0.45))],
    "l1_zero": [("l1_unstructured", dict(amount=0))],
    "ln_rows_l2": [("ln_structured", dict(amount=2, n=2, dim=0))],
    "ln_cols_l1": [("ln_structured", dict(amount=0.5, n=1, dim=-1))],
    "ln_inf": [("ln_structured", dict(amount=1, n=math.inf, dim=1))],
    "ln_fro": [("ln_structured", dict(amount=3, n="fro", dim=0))],
    "iterative": [("l1_unstructured", dict(amount=6)), ("ln_structured", dict(amount=1, n=2, dim=0)),
                  ("l1_unstructured", dict(amount=0.3)), ("ln_structured", dict(amount=2, n=1, dim=1)),
                  ("identity", {})],
}


@pytest.mark.parametrize("steps", list(STEPS.values()), ids=list(STEPS))
def test_linear_pruning_matches(steps):
    me, mt = _linear_pair()
    for fn, kw in steps:
        getattr(EP, fn)(me, "weight", **kw)
        getattr(TP, fn)(mt, "weight", **kw)
        np.testing.assert_array_equal(me.weight_mask.numpy(), mt.weight_mask.numpy())
    _check_same(me, mt, (3, 6))
    he = [type(h).__name__ for h in me._forward_pre_hooks.values()]
    ht = [type(h).__name__ for h in mt._forward_pre_hooks.values()]
    assert he == ht


@pytest.mark.parametrize("dim", [0, 1, -1, 3])
def test_conv_ln_structured_matches(dim):
    me, mt = _conv_pair(seed=dim + 5)
    EP.ln_structured(me, "weight", amount=1, n=2, dim=dim)
    TP.ln_structured(mt, "weight", amount=1, n=2, dim=dim)
    EP.l1_unstructured(me, "weight", amount=0.2)
    TP.l1_unstructured(mt, "weight", amount=0.2)
    _check_same(me, mt, (2, 3, 6, 6))


def test_importance_scores_match():
    me, mt = _linear_pair(seed=1)
    s = np.random.default_rng(3).standard_normal((5, 6)).astype(np.float32)
    EP.l1_unstructured(me, "weight", amount=10, importance_scores=ember.tensor(s))
    TP.l1_unstructured(mt, "weight", amount=10, importance_scores=torch.tensor(s))
    EP.ln_structured(me, "weight", amount=2, n=1, dim=1, importance_scores=ember.tensor(s * s))
    TP.ln_structured(mt, "weight", amount=2, n=1, dim=1, importance_scores=torch.tensor(s * s))
    _check_same(me, mt, (4, 6))


def test_custom_from_mask_and_bias_match():
    me, mt = _linear_pair(seed=2)
    m = (np.random.default_rng(4).random((5, 6)) > 0.4).astype(np.float32)
    EP.custom_from_mask(me, "weight", mask=ember.tensor(m))
    TP.custom_from_mask(mt, "weight", mask=torch.tensor(m))
    EP.l1_unstructured(me, "bias", amount=2)
    TP.l1_unstructured(mt, "bias", amount=2)
    EP.custom_from_mask(me, "weight", mask=ember.tensor(1 - m[::-1].copy()))
    TP.custom_from_mask(mt, "weight", mask=torch.tensor(1 - m[::-1].copy()))
    _check_same(me, mt, (3, 6), names=("weight", "bias"))


def test_global_unstructured_matches():
    (e1, t1), (e2, t2) = _linear_pair(seed=3), _conv_pair(seed=4)
    EP.l1_unstructured(e2, "weight", amount=20)
    TP.l1_unstructured(t2, "weight", amount=20)
    for amount in (40, 0.25):
        EP.global_unstructured([(e1, "weight"), (e1, "bias"), (e2, "weight")], EP.L1Unstructured, amount=amount)
        TP.global_unstructured([(t1, "weight"), (t1, "bias"), (t2, "weight")], TP.L1Unstructured, amount=amount)
    _check_same(e1, t1, (2, 6), names=("weight", "bias"))
    _check_same(e2, t2, (1, 3, 5, 5))


def test_remove_matches():
    me, mt = _linear_pair(seed=5)
    for lib, m in ((EP, me), (TP, mt)):
        lib.l1_unstructured(m, "weight", amount=9)
        lib.ln_structured(m, "weight", amount=1, n=2, dim=0)
        assert lib.is_pruned(m)
        lib.remove(m, "weight")
        assert not lib.is_pruned(m)
    assert list(me.state_dict()) == list(mt.state_dict())
    assert [n for n, _ in me.named_parameters()] == [n for n, _ in mt.named_parameters()]
    np.testing.assert_array_equal(me.weight.detach().numpy(), mt.weight.detach().numpy())


def _err(fe, ft, exc):
    with pytest.raises(exc) as ee:
        fe()
    with pytest.raises(exc) as et:
        ft()
    assert str(ee.value).replace("ember", "torch") == str(et.value)


def test_error_messages_match():
    me, mt = _linear_pair()
    for amount in (-1, 1.2, 31):
        _err(lambda: EP.l1_unstructured(me, "weight", amount=amount),
             lambda: TP.l1_unstructured(mt, "weight", amount=amount), ValueError)
    _err(lambda: EP.l1_unstructured(me, "weight", amount="x"),
         lambda: TP.l1_unstructured(mt, "weight", amount="x"), TypeError)
    _err(lambda: EP.ln_structured(me, "bias", amount=1, n=2, dim=0),
         lambda: TP.ln_structured(mt, "bias", amount=1, n=2, dim=0), ValueError)
    _err(lambda: EP.ln_structured(me, "weight", amount=1, n=2, dim=2),
         lambda: TP.ln_structured(mt, "weight", amount=1, n=2, dim=2), IndexError)
    _err(lambda: EP.remove(me, "weight"), lambda: TP.remove(mt, "weight"), ValueError)
    _err(lambda: EP.global_unstructured(3, EP.L1Unstructured, amount=1),
         lambda: TP.global_unstructured(3, TP.L1Unstructured, amount=1), TypeError)
    _err(lambda: EP.global_unstructured([(me, "weight")], EP.L1Unstructured, importance_scores=1, amount=1),
         lambda: TP.global_unstructured([(mt, "weight")], TP.L1Unstructured, importance_scores=1, amount=1),
         TypeError)
