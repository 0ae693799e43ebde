"""nn.utils.parametrize and nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal), plus the legacy
hook-based nn.utils.weight_norm and nn.utils.spectral_norm."""
import copy
import pickle

import numpy as np
import pytest

import ember
from ember import nn
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.utils import parametrizations as P
from ember.nn.utils import parametrize


class Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


class Double(nn.Module):
    def forward(self, x):
        return 2 * x

    def right_inverse(self, y):
        return y / 2


class SumOfTwo(nn.Module):
    """A tensor parametrized by two originals (right_inverse returns a tuple)."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, w):
        return w / 4, 3 * w / 4


class NoInverse(nn.Module):
    def forward(self, x):
        return x * 3


def _linear(n_in=3, n_out=3, dtype=ember.float32):
    ember.manual_seed(0)
    return nn.Linear(n_in, n_out, dtype=dtype)


# ----- parametrize -----

def test_register_and_recompute():
    m = _linear()
    w0 = m.weight.detach().numpy().copy()
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert isinstance(m, nn.Linear)
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert "weight" not in m._parameters
    orig = m.parametrizations.weight.original
    assert isinstance(orig, nn.Parameter)
    np.testing.assert_array_equal(orig.detach().numpy(), np.triu(w0))  # right_inverse ran at registration
    w = m.weight
    np.testing.assert_allclose(w.detach().numpy(), np.triu(w0) + np.triu(w0, 1).T)
    assert m.weight is not w  # recomputed on each access
    # changes to the original show up in the next read
    with ember.no_grad():
        orig.fill_(1.0)
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.ones((3, 3)))


def test_gradient_flows_to_original():
    m = _linear()
    parametrize.register_parametrization(m, "weight", Symmetric())
    x = ember.randn(4, 3)
    m(x).sum().backward()
    g = m.parametrizations.weight.original.grad.numpy()
    gw = np.tile(x.sum(0).numpy(), (3, 1))  # d/dW of sum(x W^T)
    np.testing.assert_allclose(g, np.triu(gw) + np.tril(gw, -1).T, rtol=1e-5)
    assert m.bias.grad is not None


def test_state_dict_keys_and_round_trip():
    m = _linear()
    parametrize.register_parametrization(m, "weight", Symmetric())
    sd = m.state_dict()
    assert list(sd) == ["bias", "parametrizations.weight.original"]
    m2 = _linear()
    with ember.no_grad():
        m2.weight.zero_()
    parametrize.register_parametrization(m2, "weight", Symmetric())
    m2.load_state_dict(sd)
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]


def test_repr():
    m = _linear()
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert repr(m) == ("ParametrizedLinear(\n  in_features=3, out_features=3, bias=True\n"
                       "  (parametrizations): ModuleDict(\n    (weight): ParametrizationList(\n"
                       "      (0): Symmetric()\n    )\n  )\n)")


def test_right_inverse_on_registration_and_assignment():
    m = _linear()
    w0 = m.weight.detach().numpy().copy()
    orig_obj = m.weight
    parametrize.register_parametrization(m, "weight", Double())
    orig = m.parametrizations.weight.original
    assert orig is orig_obj  # the same Parameter, set_ to right_inverse's value
    np.testing.assert_allclose(orig.detach().numpy(), w0 / 2, rtol=1e-6)
    np.testing.assert_allclose(m.weight.detach().numpy(), w0, rtol=1e-6)
    m.weight = ember.ones(3, 3)
    np.testing.assert_allclose(orig.detach().numpy(), np.full((3, 3), 0.5))
    assert m.parametrizations.weight.original is orig


def test_assignment_without_right_inverse_raises():
    m = _linear()
    parametrize.register_parametrization(m, "weight", NoInverse())
    with pytest.raises(RuntimeError, match="parametrization NoInverse does not implement right_inverse."):
        m.weight = ember.ones(3, 3)


def test_tuple_right_inverse():
    m = _linear(4, 2)
    w0 = m.weight.detach().numpy().copy()
    parametrize.register_parametrization(m, "weight", SumOfTwo())
    plist = m.parametrizations.weight
    assert not plist.is_tensor and plist.ntensors == 2
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    np.testing.assert_allclose(plist.original0.detach().numpy(), w0 / 4, rtol=1e-6)
    np.testing.assert_allclose(plist.original1.detach().numpy(), 3 * w0 / 4, rtol=1e-6)
    assert isinstance(plist.original0, nn.Parameter) and plist.original0.requires_grad
    np.testing.assert_allclose(m.weight.detach().numpy(), w0, rtol=1e-6)
    m.weight = ember.full((2, 4), 4.0)
    np.testing.assert_allclose(plist.original0.detach().numpy(), np.ones((2, 4)))
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear
    np.testing.assert_allclose(m.weight.detach().numpy(), np.full((2, 4), 4.0))
    assert isinstance(m.weight, nn.Parameter)


def test_chained_parametrizations():
    m = _linear()
    w0 = m.weight.detach().numpy().copy()
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Double())
    assert len(m.parametrizations.weight) == 2
    np.testing.assert_allclose(m.weight.detach().numpy(), 2 * (np.triu(w0) + np.triu(w0, 1).T), rtol=1e-6)
    m.weight = 2 * ember.eye(3)
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().numpy(), np.eye(3))


def test_shape_and_dtype_checks():
    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    class ToDouble(nn.Module):
        def forward(self, x):
            return x.double()

    m = _linear()
    with pytest.raises(ValueError, match="may not change the shape of the tensor, unless `unsafe` flag is enabled"):
        parametrize.register_parametrization(m, "weight", Shrink())
    assert not parametrize.is_parametrized(m) and type(m) is nn.Linear
    with pytest.raises(ValueError, match="may not change the dtype"):
        parametrize.register_parametrization(m, "weight", ToDouble())
    parametrize.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (1, 3)
    m2 = _linear()
    parametrize.register_parametrization(m2, "weight", Double())
    with pytest.raises(ValueError, match=r"module.weight.shape: ember.Size\(\[3, 3\]\)"):
        parametrize.register_parametrization(m2, "weight", Shrink())


def test_errors():
    m = _linear()
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name "
                                         "'nope'"):
        parametrize.register_parametrization(m, "nope", Double())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="requires one or more modules"):
        parametrize.ParametrizationList([], m.weight)


def test_remove_parametrizations():
    m = _linear()
    parametrize.register_parametrization(m, "weight", Double())
    parametrize.register_parametrization(m, "bias", Double())
    w = m.weight.detach().numpy().copy()
    orig = m.parametrizations.weight.original
    parametrize.remove_parametrizations(m, "weight")
    assert parametrize.is_parametrized(m) and not parametrize.is_parametrized(m, "weight")
    assert m.weight is orig and isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(m.weight.detach().numpy(), w)
    b_orig = m.parametrizations.bias.original.detach().numpy().copy()
    parametrize.remove_parametrizations(m, "bias", leave_parametrized=False)
    np.testing.assert_allclose(m.bias.detach().numpy(), b_orig)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert list(m.state_dict()) == ["weight", "bias"]
    out = m(ember.ones(1, 3))
    assert out.shape == (1, 3)


def test_parametrized_buffer():
    m = nn.BatchNorm1d(3)
    parametrize.register_parametrization(m, "running_var", Double())
    assert "parametrizations.running_var.original" in m.state_dict()
    assert not isinstance(m.parametrizations.running_var.original, nn.Parameter)
    np.testing.assert_allclose(m.running_var.numpy(), np.ones(3))


def test_cached():
    m = _linear()
    parametrize.register_parametrization(m, "weight", Symmetric())
    with parametrize.cached():
        a = m.weight
        assert m.weight is a
        with parametrize.cached():
            assert m.weight is a
        assert m.weight is a
    assert m.weight is not a


def test_deepcopy_and_pickle():
    m = _linear()
    parametrize.register_parametrization(m, "weight", Symmetric())
    m2 = copy.deepcopy(m)
    assert type(m2).__name__ == "ParametrizedLinear"
    np.testing.assert_array_equal(m2.weight.detach().numpy(), m.weight.detach().numpy())
    assert m2.parametrizations.weight.original is not m.parametrizations.weight.original
    with ember.no_grad():
        m2.parametrizations.weight.original.zero_()
    assert np.abs(m.weight.detach().numpy()).sum() > 0
    # the mirror of the copy follows its registries
    m2.bias = nn.Parameter(ember.zeros(3))
    assert m2.bias is m2._parameters["bias"]
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only supported through"):
        pickle.dumps(m)
    seq = copy.deepcopy(nn.Sequential(m, nn.ReLU()))
    assert type(seq[0]).__name__ == "ParametrizedLinear" and seq[0].parametrizations.weight.original is not orig_of(m)
    np.testing.assert_array_equal(seq(ember.ones(1, 3)).detach().numpy(), nn.functional.relu(m(ember.ones(1, 3)))
                                  .detach().numpy())


def orig_of(m):
    return m.parametrizations.weight.original


def test_train_mode_propagates():
    m = _linear()
    m.eval()
    p = Double()
    parametrize.register_parametrization(m, "weight", p)
    assert not p.training
    m.train()
    assert p.training


def test_transfer_parametrizations_and_params():
    m = _linear()
    parametrize.register_parametrization(m, "weight", Double())
    other = _linear()
    parametrize.transfer_parametrizations_and_params(m, other)
    assert parametrize.is_parametrized(other, "weight")
    assert other.parametrizations.weight.original is m.parametrizations.weight.original
    np.testing.assert_array_equal(other.weight.detach().numpy(), m.weight.detach().numpy())


# ----- parametrizations.weight_norm -----

@pytest.mark.parametrize("dim", [0, 1, -1, None, -2])
def test_weight_norm_values(dim):
    m = nn.Conv2d(2, 3, 2, dtype=ember.float64)
    w = m.weight.detach().numpy().copy()
    P.weight_norm(m, dim=dim)
    g = m.parametrizations.weight.original0.detach().numpy()
    v = m.parametrizations.weight.original1.detach().numpy()
    np.testing.assert_array_equal(v, w)
    d = -1 if dim is None else dim
    if d == -1:
        ref_g = np.sqrt((w ** 2).sum())
    else:
        axes = tuple(i for i in range(4) if i != d % 4)
        ref_g = np.sqrt((w ** 2).sum(axis=axes, keepdims=True))
    np.testing.assert_allclose(g, ref_g, rtol=1e-12)
    np.testing.assert_allclose(m.weight.detach().numpy(), w, rtol=1e-12)
    with ember.no_grad():
        m.parametrizations.weight.original0.mul_(2.0)
    np.testing.assert_allclose(m.weight.detach().numpy(), 2 * w, rtol=1e-12)


def test_weight_norm_keys_and_gradcheck():
    m = nn.Linear(4, 3, dtype=ember.float64)
    P.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert m.parametrizations.weight.original0.shape == (3, 1)
    wn = m.parametrizations.weight[0]
    g = ember.rand(3, 1, dtype=ember.float64, requires_grad=True)
    v = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    assert gradcheck(wn, (g, v))
    assert gradgradcheck(wn, (g, v))
    x = ember.randn(2, 4, dtype=ember.float64)
    m(x).sum().backward()
    assert m.parametrizations.weight.original0.grad.shape == (3, 1)


def test_weight_norm_loads_legacy_checkpoint():
    legacy = nn.Linear(4, 3)
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.weight_norm(legacy)
    sd = legacy.state_dict()
    assert list(sd) == ["bias", "weight_g", "weight_v"]
    m = P.weight_norm(nn.Linear(4, 3))
    m.load_state_dict(sd)
    np.testing.assert_allclose(m.weight.detach().numpy(), legacy.weight.detach().numpy(), rtol=1e-6)


def test_weight_norm_remove():
    m = nn.Linear(4, 3)
    w = m.weight.detach().numpy().copy()
    P.weight_norm(m)
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and list(m.state_dict()) == ["bias", "weight"]  # re-registered last, as torch
    np.testing.assert_allclose(m.weight.detach().numpy(), w, rtol=1e-6)


# ----- parametrizations.spectral_norm -----

def _top_sv(w, dim=0):
    mat = np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)
    return np.linalg.svd(mat, compute_uv=False)[0]


def test_spectral_norm_converges_and_eval():
    ember.manual_seed(0)
    m = nn.Linear(6, 5, dtype=ember.float64)
    P.spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                                    "parametrizations.weight.0._v"]
    sn = m.parametrizations.weight[0]
    assert sn._u.shape == (5,) and sn._v.shape == (6,)
    for _ in range(50):
        w = m.weight
    assert _top_sv(w.detach().numpy()) == pytest.approx(1.0, rel=1e-6)
    orig = m.parametrizations.weight.original.detach().numpy()
    sigma = _top_sv(orig)
    np.testing.assert_allclose(w.detach().numpy(), orig / sigma, rtol=1e-6)
    m.eval()
    u = sn._u.numpy().copy()
    m.weight  # noqa: B018 - a read runs the parametrization
    np.testing.assert_array_equal(sn._u.numpy(), u)  # eval: no power iteration
    m.train()
    with ember.no_grad():
        m.parametrizations.weight.original.mul_(3.0)
    v = sn._v._version
    m.weight  # noqa: B018
    assert sn._v._version > v  # train: the buffers are updated in place


def test_spectral_norm_values_by_hand():
    ember.manual_seed(1)
    m = nn.Linear(3, 2, dtype=ember.float64)
    P.spectral_norm(m, n_power_iterations=2)
    sn = m.parametrizations.weight[0]
    w = m.parametrizations.weight.original.detach().numpy()
    u, v = sn._u.numpy().copy(), sn._v.numpy().copy()
    for _ in range(2):
        u = w @ v
        u /= np.linalg.norm(u)
        v = w.T @ u
        v /= np.linalg.norm(v)
    out = m.weight.detach().numpy()
    np.testing.assert_allclose(out, w / (u @ w @ v), rtol=1e-12)
    np.testing.assert_allclose(sn._u.numpy(), u, rtol=1e-12)


def test_spectral_norm_conv_transpose_dim_and_gradcheck():
    m = nn.ConvTranspose2d(2, 3, 2, dtype=ember.float64)
    P.spectral_norm(m)
    sn = m.parametrizations.weight[0]
    assert sn.dim == 1 and sn._u.shape == (3,) and sn._v.shape == (8,)
    sn.eval()
    w = ember.randn(2, 3, 2, 2, dtype=ember.float64, requires_grad=True)
    assert gradcheck(sn, (w,))
    assert gradgradcheck(sn, (w,))


def test_spectral_norm_errors_and_1d():
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        P.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        P.spectral_norm(nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        P.spectral_norm(nn.Linear(2, 2), name="nope")
    m = P.spectral_norm(nn.Linear(2, 2), name="bias")
    b = m.parametrizations.bias.original.detach().numpy()
    np.testing.assert_allclose(m.bias.detach().numpy(), b / np.linalg.norm(b), rtol=1e-6)


# ----- parametrizations.orthogonal -----

@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal(orthogonal_map, shape):
    ember.manual_seed(0)
    m = nn.Linear(shape[1], shape[0], dtype=ember.float64)
    P.orthogonal(m, orthogonal_map=orthogonal_map)
    w = m.weight.detach().numpy()
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)
    # assigning an orthogonal matrix stores it exactly
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((max(shape), min(shape))))[0]
    q = q if shape[0] >= shape[1] else q.T
    m.weight = ember.tensor(q)
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-10)
    m(ember.randn(2, shape[1], dtype=ember.float64)).sum().backward()
    assert m.parametrizations.weight.original.grad.shape == shape


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_gradcheck(orthogonal_map):
    m = nn.Linear(3, 4, dtype=ember.float64)
    P.orthogonal(m, orthogonal_map=orthogonal_map, use_trivialization=False)
    orth = m.parametrizations.weight[0]
    x = ember.randn(4, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(orth, (x,))


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
        P.orthogonal(nn.Linear(2, 2), name="bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", "householder"'):
        P.orthogonal(nn.Linear(2, 2), orthogonal_map="svd")
    m = P.orthogonal(nn.Linear(2, 2), use_trivialization=False)
    with pytest.raises(NotImplementedError, match="use_trivialization=False"):
        m.weight = ember.eye(2)


# ----- legacy hook-based weight_norm / spectral_norm -----

def test_legacy_weight_norm():
    m = nn.Linear(4, 3)
    w = m.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match="in favor of `torch.nn.utils.parametrizations.weight_norm`"):
        nn.utils.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(m.weight_g.detach().numpy(), np.linalg.norm(w, axis=1, keepdims=True), rtol=1e-6)
    with ember.no_grad():
        m.weight_g.mul_(2)
    m(ember.ones(1, 4))
    np.testing.assert_allclose(m.weight.detach().numpy(), 2 * w, rtol=1e-5)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"), \
            pytest.warns(FutureWarning):
        nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, nn.Parameter)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(m)


def test_legacy_spectral_norm():
    ember.manual_seed(0)
    m = nn.Linear(5, 4, dtype=ember.float64)
    nn.utils.spectral_norm(m)
    sd = m.state_dict()
    assert list(sd) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    for _ in range(50):
        m(ember.ones(1, 5, dtype=ember.float64))
    assert _top_sv(m.weight.detach().numpy()) == pytest.approx(1.0, rel=1e-6)
    m2 = nn.utils.spectral_norm(nn.Linear(5, 4, dtype=ember.float64))
    m2.load_state_dict(sd)
    m2.eval()
    m2(ember.ones(1, 5, dtype=ember.float64))
    np.testing.assert_allclose(m2.weight.detach().numpy(), m.weight.detach().numpy(), rtol=1e-10)
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        nn.utils.remove_spectral_norm(m)
