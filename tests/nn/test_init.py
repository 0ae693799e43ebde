"""nn.init: gains, fans, the structure of deterministic inits and the statistics of random ones."""
import math

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import init

N = (400, 300)  # large enough for tight statistical bounds


def _fresh(*shape, requires_grad=False, dtype=None):
    p = nn.Parameter(ember.empty(*shape, dtype=dtype), requires_grad=requires_grad)
    return p


def test_calculate_gain():
    for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                 "sigmoid"):
        assert init.calculate_gain(name) == 1
    assert init.calculate_gain("tanh") == 5.0 / 3
    assert init.calculate_gain("relu") == math.sqrt(2.0)
    assert init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("leaky_relu") == math.sqrt(2.0 / (1 + 0.01 ** 2))
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2.0 / 1.04)
    assert init.calculate_gain("leaky_relu", 1) == 1.0
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)
    with pytest.raises(ValueError, match="Unsupported nonlinearity gelu"):
        init.calculate_gain("gelu")


def test_fan_in_and_fan_out():
    assert init._calculate_fan_in_and_fan_out(ember.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(ember.empty(8, 4, 3, 3)) == (36, 72)
    for shape in ((3,), ()):
        with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 "
                                             "dimensions"):
            init._calculate_fan_in_and_fan_out(ember.empty(*shape))
    with pytest.raises(ValueError, match=r"Mode fan not supported, please use one of \['fan_in', 'fan_out'\]"):
        init.kaiming_normal_(ember.empty(2, 2), mode="fan")


@pytest.mark.parametrize("requires_grad", [False, True])
def test_inits_are_in_place_leaves_without_graph(requires_grad):
    for fn, kwargs in [(init.uniform_, {}), (init.normal_, {}), (init.constant_, {"val": 2.0}), (init.ones_, {}),
                       (init.zeros_, {}), (init.eye_, {}), (init.xavier_uniform_, {}), (init.xavier_normal_, {}),
                       (init.kaiming_uniform_, {}), (init.kaiming_normal_, {}), (init.trunc_normal_, {}),
                       (init.orthogonal_, {}), (init.sparse_, {"sparsity": 0.5})]:
        p = _fresh(4, 3, requires_grad=requires_grad)
        ptr, version = p.data_ptr(), p._version
        assert fn(p, **kwargs) is p, fn.__name__
        assert p.data_ptr() == ptr and p.is_leaf and p.grad_fn is None and p.requires_grad == requires_grad
        assert p._version > version, fn.__name__
    p = _fresh(3, 3, 3, requires_grad=requires_grad)
    assert init.dirac_(p) is p and p.is_leaf


def test_constant_ones_zeros():
    assert init.constant_(ember.empty(2, 2), 3.5).tolist() == [[3.5, 3.5], [3.5, 3.5]]
    assert init.ones_(ember.empty(3)).tolist() == [1.0, 1.0, 1.0]
    assert init.zeros_(ember.ones(2, dtype=ember.float64)).tolist() == [0.0, 0.0]


def test_eye():
    np.testing.assert_array_equal(init.eye_(ember.empty(3, 5)).numpy(), np.eye(3, 5, dtype=np.float32))
    np.testing.assert_array_equal(init.eye_(ember.empty(4, 2)).numpy(), np.eye(4, 2, dtype=np.float32))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(ember.empty(2, 2, 2))


@pytest.mark.parametrize("shape", [(4, 4, 3), (4, 6, 3, 5), (6, 2, 3, 3, 3)])
@pytest.mark.parametrize("groups", [1, 2])
def test_dirac_structure(shape, groups):
    w = init.dirac_(ember.empty(*shape), groups=groups).numpy()
    per = shape[0] // groups
    centre = tuple(s // 2 for s in shape[2:])
    expected = np.zeros(shape, np.float32)
    for g in range(groups):
        for d in range(min(per, shape[1])):
            expected[(g * per + d, d) + centre] = 1
    np.testing.assert_array_equal(w, expected)
    assert w.sum() == groups * min(per, shape[1])


def test_dirac_preserves_input_under_convolution_semantics():
    # with dirac weights, out channel c (within its group) is in channel c at the kernel centre
    w = init.dirac_(ember.empty(3, 3, 5)).numpy()
    x = np.random.default_rng(0).standard_normal((3, 9)).astype(np.float32)
    out = np.stack([sum(np.convolve(x[i], w[o, i][::-1], mode="same") for i in range(3)) for o in range(3)])
    np.testing.assert_allclose(out, x, atol=1e-6)


def test_dirac_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(ember.empty(2, 2))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(ember.empty(3, 2, 2), groups=2)


@pytest.fixture(autouse=True)
def _seeded():
    ember.manual_seed(0)


# Bounds are 6 standard errors of the estimate for the sample size: a correct sampler fails them about once in
# 500 million draws, while a wrong scale or shift of a few percent fails them.
def _uniform_check(t, bound):
    a = t.numpy()
    n = a.size
    std = bound / math.sqrt(3)
    assert a.min() >= -bound and a.max() <= bound
    assert a.min() < -0.98 * bound and a.max() > 0.98 * bound  # the whole interval is used
    assert abs(a.std() - std) < 6 * std * math.sqrt(0.8 / n)  # var of the sample std of a uniform: 0.8 s^2 / n
    assert abs(a.mean()) < 6 * std / math.sqrt(n)


def _normal_check(t, std, mean=0.0):
    a = t.numpy()
    n = a.size
    assert abs(a.std() - std) < 6 * std / math.sqrt(2 * n)
    assert abs(a.mean() - mean) < 6 * std / math.sqrt(n)


def test_uniform_and_normal():
    t = init.uniform_(ember.empty(*N), -2.0, 3.0)
    a = t.numpy()
    assert a.min() >= -2.0 and a.max() < 3.0 and abs(a.mean() - 0.5) < 0.02
    _normal_check(init.normal_(ember.empty(*N), 1.5, 0.5), 0.5, mean=1.5)


def test_xavier():
    fan_in, fan_out = N[1], N[0]
    _uniform_check(init.xavier_uniform_(ember.empty(*N), gain=2.0), 2.0 * math.sqrt(6.0 / (fan_in + fan_out)))
    _normal_check(init.xavier_normal_(ember.empty(*N), gain=0.5), 0.5 * math.sqrt(2.0 / (fan_in + fan_out)))
    w = ember.empty(64, 32, 3, 3)
    _normal_check(init.xavier_normal_(w), math.sqrt(2.0 / (32 * 9 + 64 * 9)))


def test_kaiming():
    fan_in, fan_out = N[1], N[0]
    gain = math.sqrt(2.0 / (1 + 5))
    _uniform_check(init.kaiming_uniform_(ember.empty(*N), a=math.sqrt(5)), gain * math.sqrt(3.0 / fan_in))
    _normal_check(init.kaiming_normal_(ember.empty(*N), mode="fan_out", nonlinearity="relu"),
                  math.sqrt(2.0) / math.sqrt(fan_out))
    _normal_check(init.kaiming_normal_(ember.empty(*N), a=0.2, mode="FAN_IN"),
                  math.sqrt(2.0 / 1.04) / math.sqrt(fan_in))
    _uniform_check(init.kaiming_uniform_(ember.empty(*N), nonlinearity="tanh"), 5.0 / 3 * math.sqrt(3.0 / fan_in))
    empty = ember.empty(0, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        assert init.kaiming_uniform_(empty) is empty
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_normal_(empty)


def _truncnorm_moments(mean, std, a, b):
    alpha, beta = (a - mean) / std, (b - mean) / std
    pdf = lambda x: math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    cdf = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))
    z = cdf(beta) - cdf(alpha)
    m = (pdf(alpha) - pdf(beta)) / z
    var = 1 + (alpha * pdf(alpha) - beta * pdf(beta)) / z - m * m
    return mean + std * m, std * math.sqrt(var)


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 1.5), (0.0, 1.0, 2.0, 3.0),
                                          (0.0, 1.0, -2.5, -1.5), (1.0, 0.02, 0.9, 1.1)])
def test_trunc_normal(mean, std, a, b):
    t = init.trunc_normal_(ember.empty(*N), mean, std, a, b)
    x = t.numpy()
    assert x.min() >= a and x.max() <= b
    m, s = _truncnorm_moments(mean, std, a, b)
    assert abs(x.mean() - m) < 0.01 * s + 1e-6
    assert abs(x.std() - s) < 0.02 * s


def test_trunc_normal_far_tail():
    with pytest.warns(UserWarning, match="mean is more than 2 std from \\[a, b\\] in nn.init.trunc_normal_"):
        x = init.trunc_normal_(ember.empty(*N), a=5.0, b=6.0).numpy()
    m, s = _truncnorm_moments(0.0, 1.0, 5.0, 6.0)
    assert x.min() >= 5.0 and x.max() <= 6.0 and abs(x.mean() - m) < 0.01 and abs(x.std() - s) < 0.02 * s


@pytest.mark.parametrize("shape", [(30, 50), (50, 30), (20, 20), (6, 3, 2, 2)])
def test_orthogonal(shape):
    w = init.orthogonal_(ember.empty(*shape), gain=2.0).numpy().reshape(shape[0], -1).astype(np.float64)
    rows, cols = w.shape
    gram = w @ w.T if rows <= cols else w.T @ w
    np.testing.assert_allclose(gram, 4.0 * np.eye(min(rows, cols)), atol=1e-4)


def test_orthogonal_errors_and_empty():
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(ember.empty(3))
    e = ember.empty(0, 3)
    assert init.orthogonal_(e) is e


def test_sparse():
    w = init.sparse_(ember.empty(*N), sparsity=0.25, std=0.5).numpy()
    zeros_per_col = (w == 0).sum(axis=0)
    assert (zeros_per_col == math.ceil(0.25 * N[0])).all()
    nz = w[w != 0]
    assert abs(nz.std() - 0.5) < 0.02
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(ember.empty(2, 2, 2), 0.1)


def test_generator_makes_inits_reproducible():
    for fn, kwargs in [(init.uniform_, {}), (init.normal_, {}), (init.xavier_uniform_, {}),
                       (init.xavier_normal_, {}), (init.kaiming_uniform_, {}), (init.kaiming_normal_, {}),
                       (init.trunc_normal_, {}), (init.orthogonal_, {}), (init.sparse_, {"sparsity": 0.3})]:
        a = fn(ember.empty(6, 5), generator=ember.Generator().manual_seed(3), **kwargs).numpy()
        b = fn(ember.empty(6, 5), generator=ember.Generator().manual_seed(3), **kwargs).numpy()
        c = fn(ember.empty(6, 5), generator=ember.Generator().manual_seed(4), **kwargs).numpy()
        np.testing.assert_array_equal(a, b, err_msg=fn.__name__)
        assert not np.array_equal(a, c), fn.__name__


def test_other_dtypes():
    for dt in (ember.float64, ember.float16, ember.bfloat16):
        t = init.orthogonal_(ember.empty(8, 8, dtype=dt))
        assert t.dtype == dt
        t = init.trunc_normal_(ember.empty(50, 50, dtype=dt), std=0.02)
        assert t.dtype == dt and abs(t.float().std().item() - 0.88 * 0.02) < 0.004
        assert init.kaiming_uniform_(ember.empty(4, 4, dtype=dt)).dtype == dt


def test_deprecated_aliases():
    with pytest.warns(FutureWarning, match="`nn.init.uniform` is now deprecated in favor of `nn.init.uniform_`"):
        init.uniform(ember.empty(2))
    with pytest.warns(FutureWarning, match="nn.init.xavier_normal_"):
        init.xavier_normal(ember.empty(2, 2))
