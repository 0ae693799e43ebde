"""nn.utils.prune: masks for known weights, the weight_orig / weight_mask mechanics, iterative pruning through a
PruningContainer, gradients, remove, is_pruned and torch's errors."""
import copy
import math
import pickle

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import prune


def _linear(w, bias=True):
    w = np.asarray(w, dtype=np.float32)
    m = nn.Linear(w.shape[1], w.shape[0], bias=bias)
    with ember.no_grad():
        m.weight.copy_(ember.tensor(w))
        if bias:
            m.bias.zero_()
    return m


W = [[0.1, -5.0, 0.3, 2.0],
     [-0.2, 4.0, -3.0, 0.05],
     [1.0, -0.4, 0.6, -6.0]]


def test_exported_as_submodule():
    import ember.nn.utils.prune as p
    assert p is nn.utils.prune is prune
    for name in ("BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
                 "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
                 "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
                 "remove", "is_pruned"):
        assert hasattr(prune, name)
    assert prune.L1Unstructured.PRUNING_TYPE == "unstructured"
    assert prune.LnStructured.PRUNING_TYPE == "structured"
    assert prune.CustomFromMask.PRUNING_TYPE == "global"


def test_l1_unstructured_keeps_largest_magnitudes():
    m = _linear(W)
    assert prune.l1_unstructured(m, "weight", amount=5) is m
    expected = (np.abs(np.array(W)) > 0.45).astype(np.float32)   # the 5 smallest |w| are below 0.45
    np.testing.assert_array_equal(m.weight_mask.numpy(), expected)
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.array(W, dtype=np.float32) * expected)
    assert m.weight_mask.dtype == ember.float32
    assert isinstance(m.weight_orig, nn.Parameter)
    assert "weight" not in m._parameters and "weight_mask" in m._buffers
    np.testing.assert_array_equal(m.weight_orig.detach().numpy(), np.array(W, dtype=np.float32))


def test_amount_fraction_rounds_like_torch():
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=0.3)   # round(0.3 * 12) = 4
    assert m.weight_mask.sum().item() == 8
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=0.0)
    assert m.weight_mask.sum().item() == 12
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=1.0)
    assert m.weight_mask.sum().item() == 0


def test_names_and_state_dict_keys():
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=2)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in m.named_buffers()] == ["weight_mask"]
    net = nn.Sequential(m, nn.ReLU())
    assert list(net.state_dict()) == ["0.bias", "0.weight_orig", "0.weight_mask"]
    fresh = _linear(np.zeros((3, 4)))
    prune.identity(fresh, "weight")
    fresh.load_state_dict(m.state_dict())
    np.testing.assert_array_equal(fresh.weight_mask.numpy(), m.weight_mask.numpy())
    fresh(ember.zeros(1, 4))
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), m.weight.detach().numpy())


def test_forward_recomputes_weight_and_gradients_reach_orig():
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=6)
    with ember.no_grad():
        m.weight_orig.mul_(2)   # a training step changes weight_orig; the hook recomputes weight before forward
    x = ember.tensor(np.arange(8, dtype=np.float32).reshape(2, 4))
    y = m(x)
    w = 2 * np.array(W, dtype=np.float32) * m.weight_mask.numpy()
    np.testing.assert_allclose(y.detach().numpy(), x.numpy() @ w.T, rtol=1e-6)
    y.sum().backward()
    g = m.weight_orig.grad.numpy()
    np.testing.assert_allclose(g, m.weight_mask.numpy() * x.numpy().sum(0)[None, :], rtol=1e-6)
    assert (g[m.weight_mask.numpy() == 0] == 0).all()


def test_ln_structured_zeroes_channels_by_norm():
    w = np.array([[1.0, 1.0, 1.0], [3.0, 0.0, 0.0], [0.5, 0.5, 2.0], [-2.0, -2.0, -2.0]], dtype=np.float32)
    # rows' L2 norms: 1.73, 3, 2.12, 3.46 -> prune rows 0 and 2
    m = _linear(w)
    prune.ln_structured(m, "weight", amount=2, n=2, dim=0)
    np.testing.assert_array_equal(m.weight_mask.numpy(), np.array([0, 1, 0, 1], np.float32)[:, None] * np.ones(3))
    # columns' L1 norms: 6.5, 3.5, 5 -> prune column 1
    m = _linear(w)
    prune.ln_structured(m, "weight", amount=1, n=1, dim=-1)
    np.testing.assert_array_equal(m.weight_mask.numpy(), np.ones((4, 1)) * np.array([1, 0, 1], np.float32))
    m = _linear(w)
    prune.ln_structured(m, "weight", amount=0.25, n=math.inf, dim=0)   # round(1) row: the one of max-abs 1
    np.testing.assert_array_equal(m.weight_mask.numpy()[:, 0], [0, 1, 1, 1])


def test_ln_structured_conv_channels():
    conv = nn.Conv2d(2, 4, 3)
    with ember.no_grad():
        conv.weight.copy_(ember.arange(4, dtype=ember.float32).reshape(4, 1, 1, 1).expand(4, 2, 3, 3) + 1)
    prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
    mask = conv.weight_mask.numpy()
    assert mask.shape == (4, 2, 3, 3)
    np.testing.assert_array_equal(mask.reshape(4, -1).max(1), [0, 0, 1, 1])
    np.testing.assert_array_equal(mask.reshape(4, -1).min(1), [0, 0, 1, 1])


def test_importance_scores():
    m = _linear(W)
    scores = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    prune.l1_unstructured(m, "weight", amount=4, importance_scores=scores)
    np.testing.assert_array_equal(m.weight_mask.numpy().reshape(-1), [0] * 4 + [1] * 8)
    m = _linear(W)
    prune.ln_structured(m, "weight", amount=1, n=1, dim=0, importance_scores=-scores)   # |row 0| smallest
    np.testing.assert_array_equal(m.weight_mask.numpy()[:, 0], [0, 1, 1])
    with pytest.raises(AssertionError, match="importance_scores should have the same shape as parameter weight"):
        prune.l1_unstructured(_linear(W), "weight", amount=1, importance_scores=ember.ones(2, 2))


def test_iterative_pruning_acts_on_unpruned_entries():
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=4)
    first = m.weight_mask.numpy().copy()
    prune.l1_unstructured(m, "weight", amount=4)   # 4 more among the 8 left
    second = m.weight_mask.numpy()
    assert first.sum() == 8 and second.sum() == 4
    assert ((second == 1) <= (first == 1)).all()
    np.testing.assert_array_equal(second, (np.abs(np.array(W)) >= 3.0).astype(np.float32))
    prune.l1_unstructured(m, "weight", amount=0.5)   # half of the 4 left
    assert m.weight_mask.sum().item() == 2
    hooks = [h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert len(hooks[0]) == 3 and all(isinstance(h, prune.L1Unstructured) for h in hooks[0])
    assert hooks[0][0].amount == 4 and hooks[0]._tensor_name == "weight"
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_mask"]


def test_iterative_structured_skips_pruned_channels():
    w = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]], dtype=np.float32)
    m = _linear(w)
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)   # of the 3 channels left, drop the smallest
    np.testing.assert_array_equal(m.weight_mask.numpy()[:, 0], [0, 0, 1, 1])
    prune.l1_unstructured(m, "weight", amount=1)   # unstructured after structured: one more of the 4 left
    assert m.weight_mask.sum().item() == 3


def test_random_unstructured_counts_seeded():
    ember.manual_seed(0)
    m = _linear(np.ones((5, 8)))
    prune.random_unstructured(m, "weight", amount=0.25)
    assert m.weight_mask.sum().item() == 30
    prune.random_unstructured(m, "weight", amount=7)
    assert m.weight_mask.sum().item() == 23
    masks = []
    for _ in range(2):
        ember.manual_seed(3)
        m = _linear(np.ones((5, 8)))
        prune.random_unstructured(m, "weight", amount=10)
        masks.append(m.weight_mask.numpy())
    np.testing.assert_array_equal(masks[0], masks[1])


def test_random_structured_counts_seeded():
    ember.manual_seed(1)
    m = _linear(np.ones((6, 4)))
    prune.random_structured(m, "weight", amount=2, dim=0)
    mask = m.weight_mask.numpy()
    assert (mask.min(1) == mask.max(1)).all() and mask[:, 0].sum() == 4
    prune.random_structured(m, "weight", amount=0.5, dim=1)   # 2 of the 4 columns
    mask = m.weight_mask.numpy()
    assert mask.sum() == 8 and (mask.sum(0) > 0).sum() == 2 and (mask.sum(1) > 0).sum() == 4


def test_global_unstructured_across_modules():
    a = _linear([[0.1, 0.9], [0.2, 0.8]])
    b = _linear([[0.3, 0.05, 0.7]])
    prune.global_unstructured([(a, "weight"), (b, "weight")], pruning_method=prune.L1Unstructured, amount=3)
    np.testing.assert_array_equal(a.weight_mask.numpy(), [[0, 1], [0, 1]])   # 0.05, 0.1 and 0.2 go
    np.testing.assert_array_equal(b.weight_mask.numpy(), [[1, 0, 1]])
    assert isinstance(next(iter(a._forward_pre_hooks.values())), prune.CustomFromMask)
    # again, on the 4 left (a generator of pairs is fine): 0.3 and 0.7 go
    prune.global_unstructured(iter([(a, "weight"), (b, "weight")]), prune.L1Unstructured, amount=0.5)
    np.testing.assert_array_equal(a.weight_mask.numpy(), [[0, 1], [0, 1]])
    np.testing.assert_array_equal(b.weight_mask.numpy(), [[0, 0, 0]])
    assert isinstance(next(iter(b._forward_pre_hooks.values())), prune.PruningContainer)


def test_global_unstructured_importance_scores_and_errors():
    a = _linear([[0.1, 0.9], [0.2, 0.8]])
    b = _linear([[0.3, 0.05, 0.7]])
    scores = {(a, "weight"): ember.tensor([[9.0, 9.0], [9.0, 9.0]])}
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, importance_scores=scores,
                              amount=2)
    np.testing.assert_array_equal(a.weight_mask.numpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(b.weight_mask.numpy(), [[0, 0, 1]])
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        prune.global_unstructured(5, prune.L1Unstructured, amount=1)
    with pytest.raises(TypeError, match="importance_scores must be of type dict"):
        prune.global_unstructured([(a, "bias")], prune.L1Unstructured, importance_scores=[], amount=1)
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(a, "bias")], prune.LnStructured, amount=1, n=2, dim=0)


def test_custom_from_mask_and_identity():
    m = _linear(W)
    mask = ember.tensor([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]])
    prune.custom_from_mask(m, "weight", mask=mask)
    np.testing.assert_array_equal(m.weight_mask.numpy(), mask.numpy())
    assert m.weight_mask.dtype == ember.float32
    prune.custom_from_mask(m, "bias", mask=ember.tensor([0.0, 1.0, 1.0]))
    np.testing.assert_array_equal(m.bias.detach().numpy(), [0, 0, 0])
    assert list(m.state_dict()) == ["weight_orig", "bias_orig", "weight_mask", "bias_mask"]
    m = _linear(W)
    prune.identity(m, "weight")
    np.testing.assert_array_equal(m.weight_mask.numpy(), np.ones((3, 4)))
    prune.custom_from_mask(m, "weight", mask=mask)   # composes through a container
    np.testing.assert_array_equal(m.weight_mask.numpy(), mask.numpy())


def test_remove_makes_pruning_permanent():
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=5)
    prune.l1_unstructured(m, "weight", amount=1)
    mask = m.weight_mask.numpy().copy()
    assert prune.remove(m, "weight") is m
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.array(W, dtype=np.float32) * mask)
    assert list(m.state_dict()) == ["bias", "weight"]
    assert not hasattr(m, "weight_orig") and not hasattr(m, "weight_mask")
    assert not m._forward_pre_hooks and not prune.is_pruned(m)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        prune.remove(m, "weight")
    y = m(ember.ones(1, 4))
    y.sum().backward()
    assert m.weight.grad is not None


def test_is_pruned_looks_at_submodules():
    net = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Linear(3, 2)))
    assert not prune.is_pruned(net)
    prune.random_unstructured(net[1][0], "bias", amount=1)
    assert prune.is_pruned(net) and prune.is_pruned(net[1]) and not prune.is_pruned(net[0])
    net[1][0].register_forward_pre_hook(lambda mod, inp: None)
    prune.remove(net[1][0], "bias")
    assert not prune.is_pruned(net)


def test_amount_errors():
    for bad in (-1, -0.1, 1.5):
        with pytest.raises(ValueError, match=rf"amount={bad} should either be a float in the range \[0, 1\] or a "
                                             r"non-negative integer"):
            prune.L1Unstructured(bad)
    with pytest.raises(TypeError, match="Invalid type for amount: 0.5. Must be int or float."):
        prune.RandomUnstructured("0.5")
    m = _linear(W)
    with pytest.raises(ValueError, match="amount=13 should be smaller than the number of parameters to prune=12"):
        prune.l1_unstructured(m, "weight", amount=13)
    assert list(m.state_dict()) == ["weight", "bias"] and not m._forward_pre_hooks   # left as it was
    with pytest.raises(ValueError, match="amount=4 should be smaller than the number of parameters to prune=3"):
        prune.ln_structured(m, "weight", amount=4, n=2, dim=0)


def test_failed_repruning_leaves_module_unchanged():
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=2)
    hook = next(iter(m._forward_pre_hooks.values()))
    mask = m.weight_mask.numpy().copy()
    with pytest.raises(ValueError, match="should be smaller than the number of parameters"):
        prune.l1_unstructured(m, "weight", amount=11)   # only 10 left
    with pytest.raises(ValueError, match="should either be a float"):
        prune.l1_unstructured(m, "weight", amount=-3)
    assert list(m._forward_pre_hooks.values()) == [hook]
    np.testing.assert_array_equal(m.weight_mask.numpy(), mask)
    prune.l1_unstructured(m, "weight", amount=2)
    container = next(iter(m._forward_pre_hooks.values()))
    with pytest.raises(ValueError):
        prune.l1_unstructured(m, "weight", amount=9)
    assert len(container) == 2 and list(m._forward_pre_hooks.values()) == [container]


def test_structured_errors():
    m = _linear(W)
    with pytest.raises(ValueError, match="Structured pruning can only be applied to multidimensional tensors"):
        prune.ln_structured(m, "bias", amount=1, n=2, dim=0)
    with pytest.raises(IndexError, match="Invalid index 2 for tensor of size"):
        prune.random_structured(m, "weight", amount=1, dim=2)
    assert list(m.state_dict()) == ["weight", "bias"]


def test_pruning_method_prune_and_container():
    t = ember.tensor([[1.0, -4.0], [0.5, 3.0]])
    np.testing.assert_array_equal(prune.L1Unstructured(amount=2).prune(t).numpy(), [[0, -4], [0, 3]])
    out = prune.L1Unstructured(amount=1).prune(t, importance_scores=ember.tensor([[5.0, 5.0], [5.0, 0.1]]))
    np.testing.assert_array_equal(out.numpy(), [[1, -4], [0.5, 0]])
    with pytest.raises(AssertionError, match="importance_scores should have the same shape as tensor t"):
        prune.L1Unstructured(amount=1).prune(t, importance_scores=ember.ones(3))
    a, b = prune.L1Unstructured(1), prune.L1Unstructured(1)
    a._tensor_name, b._tensor_name = "weight", "bias"
    c = prune.PruningContainer(a)
    assert c._tensor_name == "weight" and list(c) == [a]
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter named 'weight'"):
        c.add_pruning_method(b)
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)

    class NoDim(prune.BasePruningMethod):
        PRUNING_TYPE = "structured"

        def compute_mask(self, t, default_mask):
            return default_mask

    m = _linear(W)
    prune.identity(m, "weight")
    with pytest.raises(AttributeError, match="need to have the attribute `dim` defined"):
        NoDim.apply(m, "weight")


def test_custom_subclass_apply():
    class KeepPositive(prune.BasePruningMethod):
        PRUNING_TYPE = "unstructured"

        def compute_mask(self, t, default_mask):
            return default_mask * (t > 0).to(default_mask.dtype)

    m = _linear(W)
    method = KeepPositive.apply(m, "weight")
    assert isinstance(method, KeepPositive) and method._tensor_name == "weight"
    np.testing.assert_array_equal(m.weight_mask.numpy(), (np.array(W) > 0).astype(np.float32))


def test_copy_and_pickle_of_pruned_module():
    m = _linear(W)
    prune.l1_unstructured(m, "weight", amount=3)
    with pytest.raises(RuntimeError, match="graph leaves"):   # as torch: weight is computed from weight_orig
        copy.deepcopy(m)
    clones = [pickle.loads(pickle.dumps(m))]
    with ember.no_grad():
        m(ember.ones(1, 4))
    clones.append(copy.deepcopy(m))
    for clone in clones:
        assert prune.is_pruned(clone)
        with ember.no_grad():
            clone.weight_orig.fill_(1.0)
        clone(ember.ones(1, 4))
        np.testing.assert_array_equal(clone.weight.detach().numpy(), m.weight_mask.numpy())
