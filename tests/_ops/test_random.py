"""Random numbers: generators (seeding, state, independence), distributions, dtypes, shapes and errors."""
import pickle

import numpy as np
import pytest

import ember


def _np(t):
    return np.asarray(t.tolist())


# ----- generators -----

def test_generator_basics():
    g = ember.Generator()
    assert g.device == ember.device("cpu")
    assert g.initial_seed() == 67280421310721
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert ember.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1
    s = g.seed()
    assert 0 <= s < 2 ** 64 and g.initial_seed() == s
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        g.manual_seed(1.5)
    with pytest.raises(ValueError, match="Overflow"):
        g.manual_seed(2 ** 64)


def test_same_seed_same_numbers():
    for fn in (lambda g: ember.rand(5, generator=g), lambda g: ember.randn(2, 3, generator=g),
               lambda g: ember.randint(0, 100, (7,), generator=g), lambda g: ember.randperm(9, generator=g),
               lambda g: ember.normal(1.0, 2.0, (4,), generator=g),
               lambda g: ember.multinomial(ember.ones(6), 3, generator=g),
               lambda g: ember.empty(5).exponential_(generator=g)):
        a = fn(ember.Generator().manual_seed(7))
        b = fn(ember.Generator().manual_seed(7))
        c = fn(ember.Generator().manual_seed(8))
        assert a.tolist() == b.tolist()
        assert a.tolist() != c.tolist()


def test_generators_are_independent():
    g1, g2 = ember.Generator().manual_seed(1), ember.Generator().manual_seed(1)
    ref = [ember.rand(3, generator=g1).tolist() for _ in range(3)]
    got = []
    for _ in range(3):
        ember.rand(10)  # the default generator does not disturb g2
        ember.rand(4, generator=ember.Generator())
        got.append(ember.rand(3, generator=g2).tolist())
    assert got == ref


def test_default_generator_functions():
    assert ember.manual_seed(123) is ember.default_generator
    assert ember.initial_seed() == 123
    a = ember.rand(4)
    ember.manual_seed(123)
    assert ember.rand(4).tolist() == a.tolist()
    state = ember.get_rng_state()
    assert state.dtype is ember.uint8 and state.dim() == 1
    x = ember.randn(5)
    ember.set_rng_state(state)
    assert ember.randn(5).tolist() == x.tolist()
    s = ember.seed()
    assert ember.initial_seed() == s
    with pytest.raises(TypeError, match="RNG state must be a ember.ByteTensor"):
        ember.set_rng_state(ember.zeros(3))
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size"):
        ember.set_rng_state(ember.zeros(3, dtype=ember.uint8))


def test_state_round_trip_and_pickle():
    g = ember.Generator().manual_seed(99)
    ember.rand(3, generator=g)
    st = g.get_state()
    a = ember.rand(6, generator=g).tolist()
    h = ember.Generator().set_state(st)
    assert h.initial_seed() == 99
    assert ember.rand(6, generator=h).tolist() == a
    g.set_state(st)
    g2 = pickle.loads(pickle.dumps(g))
    assert ember.rand(6, generator=g2).tolist() == a


def test_fork_rng_restores_state():
    ember.manual_seed(5)
    expected = ember.rand(3).tolist()
    ember.manual_seed(5)
    with ember.random.fork_rng():
        ember.randn(7)
    assert ember.rand(3).tolist() == expected


def test_generator_type_checked():
    with pytest.raises(TypeError, match="expected ember.Generator"):
        ember.rand(2, generator=5)


# ----- distributions -----

N = 200_000


def test_rand_and_randn_moments_and_dtypes():
    g = ember.Generator().manual_seed(0)
    u = ember.rand(N, generator=g)
    assert u.dtype is ember.float32
    a = _np(u)
    assert a.min() >= 0 and a.max() < 1
    assert abs(a.mean() - 0.5) < 0.005 and abs(a.std() - np.sqrt(1 / 12)) < 0.005
    z = _np(ember.randn(N, generator=g, dtype=ember.float64))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert ember.rand(2, dtype=ember.float16).dtype is ember.float16
    assert ember.randn(2, dtype=ember.bfloat16).dtype is ember.bfloat16
    c = ember.randn(N, dtype=ember.complex64, generator=g)
    assert c.dtype is ember.complex64
    ca = np.asarray(c.numpy())
    assert abs(np.mean(np.abs(ca) ** 2) - 1) < 0.02  # torch's complex normal: unit variance in total
    cu = np.asarray(ember.rand(1000, dtype=ember.complex128, generator=g).numpy())
    assert (cu.real >= 0).all() and (cu.imag < 1).all()
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.rand(2).dtype is ember.float64 and ember.randn(2).dtype is ember.float64
    finally:
        ember.set_default_dtype(ember.float32)


def test_rand_shapes_and_flags():
    assert ember.rand(2, 3).shape == (2, 3)
    assert ember.rand((2, 3)).shape == (2, 3)
    assert ember.randn([]).shape == ()
    assert ember.rand(ember.Size([4])).shape == (4,)
    t = ember.rand(2, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    out = ember.empty(1)
    assert ember.randn(3, out=out) is out and out.shape == (3,)


def test_randint():
    g = ember.Generator().manual_seed(1)
    t = ember.randint(3, 10, (N,), generator=g)
    assert t.dtype is ember.int64
    a = _np(t)
    assert a.min() == 3 and a.max() == 9
    assert np.all(np.abs(np.bincount(a - 3) / N - 1 / 7) < 0.005)
    assert ember.randint(10, (3,)).shape == (3,)
    assert ember.randint(10, size=(2,)).shape == (2,)
    assert ember.randint(low=2, high=4, size=(5,)).shape == (5,)
    f = ember.randint(10, (4,), dtype=ember.float32)
    assert f.dtype is ember.float32
    u8 = ember.randint(0, 256, (1000,), dtype=ember.uint8, generator=g)
    assert u8.dtype is ember.uint8 and _np(u8).max() > 200


@pytest.mark.parametrize("args,exc,match", [
    ((10, 3, (3,)), RuntimeError, "random_ expects 'from' to be less than 'to', but got from=10 >= to=3"),
    ((0, 257, (3,)), RuntimeError, "to - 1 is out of bounds for unsigned char"),
    ((10, 3), TypeError, "argument 'size' \\(position 2\\) must be tuple of ints, not int"),
    ((3.5, (2,)), TypeError, "argument 'high' \\(position 1\\) must be int, not float"),
    ((10,), TypeError, "invalid combination of arguments"),
])
def test_randint_errors(args, exc, match):
    kw = {"dtype": ember.uint8} if 257 in args else {}
    with pytest.raises(exc, match=match):
        ember.randint(*args, **kw)


def test_randperm():
    g = ember.Generator().manual_seed(2)
    for n in (0, 1, 5, 1000):
        p = ember.randperm(n, generator=g)
        assert p.dtype is ember.int64
        assert sorted(p.tolist()) == list(range(n))
    assert ember.randperm(4, dtype=ember.float32).dtype is ember.float32
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        ember.randperm(-1)


def test_normal_overloads():
    g = ember.Generator().manual_seed(3)
    mean = ember.full((N,), 2.0)
    a = _np(ember.normal(mean, 3.0, generator=g))
    assert abs(a.mean() - 2) < 0.03 and abs(a.std() - 3) < 0.03
    b = _np(ember.normal(-1.0, ember.full((N,), 0.5), generator=g))
    assert abs(b.mean() + 1) < 0.01 and abs(b.std() - 0.5) < 0.01
    c = ember.normal(ember.zeros(3, 1), ember.ones(4), generator=g)
    assert c.shape == (3, 4)
    d = ember.normal(2.0, 3.0, (2, 5), generator=g)
    assert d.shape == (2, 5) and d.dtype is ember.float32
    assert ember.normal(0.0, 1.0, size=(2,), dtype=ember.float64).dtype is ember.float64
    assert ember.normal(ember.zeros(2, dtype=ember.float64), ember.ones(2)).dtype is ember.float64
    assert ember.normal(ember.zeros(2), ember.ones(2, dtype=ember.float64)).dtype is ember.float32
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        ember.normal(0.0, -1.0, (2,))
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        ember.normal(ember.zeros(2), ember.tensor([-1.0, 1.0]))
    with pytest.raises(TypeError, match="normal\\(\\) received an invalid combination of arguments"):
        ember.normal(0, 1)
    with pytest.raises(NotImplementedError, match="normal_kernel_cpu"):
        ember.normal(ember.zeros(2, dtype=ember.int64), 1.0)


def test_sampling_gradients_are_zero():
    m = ember.zeros(3, requires_grad=True)
    s = ember.ones(3, requires_grad=True)
    y = ember.normal(m, s)
    assert y.grad_fn.name() == "NormalBackward3"
    y.sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3
    assert ember.normal(m, 1.0).grad_fn.name() == "NormalBackward1"
    assert ember.normal(0.0, s).grad_fn.name() == "NormalBackward2"
    p = ember.full((3,), 0.5, requires_grad=True)
    b = ember.bernoulli(p)
    assert b.grad_fn.name() == "BernoulliBackward0"
    b.sum().backward()
    assert p.grad.tolist() == [0.0] * 3
    assert ember.poisson(p).grad_fn.name() == "PoissonBackward0"


def test_bernoulli():
    g = ember.Generator().manual_seed(4)
    p = ember.full((N,), 0.3)
    a = _np(ember.bernoulli(p, generator=g))
    assert set(np.unique(a)) <= {0.0, 1.0} and abs(a.mean() - 0.3) < 0.005
    assert ember.bernoulli(ember.tensor([0.0, 1.0])).tolist() == [0.0, 1.0]
    q = ember.bernoulli(ember.zeros(N, dtype=ember.float64), 0.8, generator=g)
    assert q.dtype is ember.float64 and abs(_np(q).mean() - 0.8) < 0.005
    with pytest.raises(NotImplementedError, match="bernoulli_tensor_cpu_p_"):
        ember.bernoulli(ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
        ember.bernoulli(ember.tensor([2.0, 1.0]))


def test_multinomial():
    g = ember.Generator().manual_seed(5)
    probs = ember.tensor([0.1, 0.2, 0.7])
    s = ember.multinomial(probs, N, replacement=True, generator=g)
    assert s.dtype is ember.int64 and s.shape == (N,)
    freq = np.bincount(_np(s), minlength=3) / N
    assert np.all(np.abs(freq - [0.1, 0.2, 0.7]) < 0.005)
    rows = ember.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 2.0, 2.0]])
    r = ember.multinomial(rows, 6, replacement=True, generator=g)
    assert r.shape == (2, 6) and set(r.tolist()[0]) == {0} and set(r.tolist()[1]) <= {2, 3}
    w = ember.rand(20, 50, generator=g)
    nr = ember.multinomial(w, 50, generator=g)
    for row in nr.tolist():
        assert sorted(row) == list(range(50))  # no repeats without replacement
    assert sorted(ember.multinomial(ember.tensor([0.0, 1.0]), 2).tolist()) == [0, 1]
    first = _np(ember.multinomial(ember.tensor([[0.1, 0.9]]).expand(20000, 2).contiguous(), 1, generator=g))
    assert abs(first.mean() - 0.9) < 0.01  # the first draw follows the weights


@pytest.mark.parametrize("inp,kw,exc,match", [
    ([0.1, 0.9], {"num_samples": 3}, RuntimeError, "cannot sample n_sample > prob_dist.size\\(-1\\) samples"),
    ([-0.1, 0.9], {"num_samples": 1}, RuntimeError, "probability tensor contains either `inf`, `nan` or element < 0"),
    ([0.0, 0.0], {"num_samples": 1}, RuntimeError, "invalid multinomial distribution \\(sum of probabilities <= 0\\)"),
    ([0.0, 1.0], {"num_samples": 0}, RuntimeError, "cannot sample n_sample <= 0 samples"),
    ([1, 1], {"num_samples": 1}, RuntimeError, "multinomial only supports floating-point dtypes for input, got: Long"),
    (1.0, {"num_samples": 1}, RuntimeError, "prob_dist must be 1 or 2 dim"),
])
def test_multinomial_errors(inp, kw, exc, match):
    with pytest.raises(exc, match=match):
        ember.multinomial(ember.tensor(inp), **kw)


def test_poisson():
    g = ember.Generator().manual_seed(6)
    r = ember.poisson(ember.full((N,), 4.0), generator=g)
    assert r.dtype is ember.float32
    a = _np(r)
    assert abs(a.mean() - 4) < 0.03 and abs(a.var() - 4) < 0.1 and (a == np.round(a)).all()
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        ember.poisson(ember.tensor([-1.0]))


def test_like_functions():
    x = ember.ones(2, 3, dtype=ember.float64)
    assert ember.rand_like(x).dtype is ember.float64 and ember.rand_like(x).shape == (2, 3)
    assert ember.randn_like(x, dtype=ember.float32).dtype is ember.float32
    r = ember.randint_like(x, 5, 10)
    assert r.dtype is ember.float64 and ((_np(r) >= 5) & (_np(r) < 10)).all()
    assert (_np(ember.randint_like(x, 3)) < 3).all()
    assert (_np(ember.randint_like(ember.ones(4), high=2)) < 2).all()
    with pytest.raises(NotImplementedError, match="check_uniform_bounds"):
        ember.rand_like(ember.ones(2, dtype=ember.int64))


# ----- in-place samplers -----

def test_inplace_samplers_moments():
    g = ember.Generator().manual_seed(7)
    x = ember.empty(N)
    a = _np(x.uniform_(-2, 4, generator=g))
    assert a.min() >= -2 and a.max() < 4 and abs(a.mean() - 1) < 0.02
    a = _np(x.normal_(3, 0.5, generator=g))
    assert abs(a.mean() - 3) < 0.01 and abs(a.std() - 0.5) < 0.01
    a = _np(x.bernoulli_(0.25, generator=g))
    assert abs(a.mean() - 0.25) < 0.005
    a = _np(x.exponential_(2.0, generator=g))
    assert a.min() >= 0 and abs(a.mean() - 0.5) < 0.01
    a = _np(x.geometric_(0.25, generator=g))
    assert a.min() >= 1 and abs(a.mean() - 4) < 0.05
    a = _np(x.cauchy_(1.0, 2.0, generator=g))
    assert abs(np.median(a) - 1) < 0.05
    a = _np(x.log_normal_(0.0, 0.5, generator=g))
    assert a.min() > 0 and abs(np.log(a).mean()) < 0.01 and abs(np.log(a).std() - 0.5) < 0.01
    a = _np(x.random_(3, 7, generator=g))
    assert a.min() == 3 and a.max() == 6
    a = _np(x.random_(5, generator=g))
    assert a.min() == 0 and a.max() == 4
    a = _np(x.random_(generator=g))
    assert a.min() >= 0 and a.max() <= 2 ** 24 and a.max() > 2 ** 23
    p = ember.rand(N, generator=g)
    b = _np(ember.empty(N).bernoulli_(p, generator=g))
    assert abs(b.mean() - 0.5) < 0.01


def test_inplace_samplers_dtypes_versions_and_errors():
    ints = ember.zeros(1000, dtype=ember.int64)
    v = ints._version
    ints.random_()
    assert ints._version == v + 1 and ints.dtype is ember.int64 and _np(ints).max() > 2 ** 40
    b = ember.zeros(100, dtype=ember.bool).random_()
    assert b.dtype is ember.bool and set(b.tolist()) == {True, False}
    i8 = ember.zeros(500, dtype=ember.int8).random_(-5, 5)
    assert _np(i8).min() == -5 and _np(i8).max() == 4
    assert ember.zeros(10, dtype=ember.int64).bernoulli_(0.5).dtype is ember.int64
    h = ember.zeros(10, dtype=ember.float16).normal_()
    assert h.dtype is ember.float16
    with pytest.raises(NotImplementedError, match="check_uniform_bounds"):
        ember.ones(2, dtype=ember.int64).uniform_()
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0, but found lambda=0"):
        ember.ones(2).exponential_(0)
    with pytest.raises(RuntimeError, match="geometric_ expects p to be in \\(0, 1\\), but got p=0"):
        ember.ones(2).geometric_(0)
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in \\[0, 1\\], but got p=1.5"):
        ember.ones(2).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        ember.ones(2, requires_grad=True).uniform_()


def test_inplace_samplers_in_no_grad_and_graph():
    w = ember.empty(3, 4, requires_grad=True)
    with ember.no_grad():
        w.uniform_(-0.1, 0.1)
        w.normal_(0, 0.02)
    assert w.requires_grad and w.is_leaf and w.grad_fn is None
    x = ember.ones(3, requires_grad=True)
    names = {}
    for call, name in (("uniform_()", "UniformBackward0"), ("normal_()", "NormalBackward0"),
                       ("bernoulli_()", "BernoulliBackward2"), ("random_(0, 4)", "RandomBackward2"),
                       ("exponential_()", "ExponentialBackward0"), ("geometric_(0.5)", "GeometricBackward0"),
                       ("cauchy_()", "CauchyBackward0"), ("log_normal_()", "LogNormalBackward0")):
        y = x * 1
        eval("y." + call)
        names[call] = y.grad_fn.name()
        assert names[call] == name
    y = x * 1
    y.uniform_()
    (y * 3).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_inplace_sampler_on_view_writes_base():
    base = ember.zeros(4, 5)
    row = ember.from_numpy(base.numpy()[2])
    row.uniform_(1, 2)
    a = base.numpy()
    assert (a[2] >= 1).all() and (a[[0, 1, 3]] == 0).all()


def test_cuda_generator_error_is_clear():
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy present")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        ember.rand(2, device="cuda")


def test_dropout_keep_masks_are_bernoulli_to_48_bits():
    """NOTE [ Dropout masks from 16 bits ]: 16 raw bits per element decide, the elements that draw the boundary
    value decide with 32 more bits against the rest of 1 - p."""
    from types import SimpleNamespace

    from ember._ops.random import _CPUEngine

    p = 0.3
    k, rest = divmod((1 - p) * 65536, 1.0)
    cut = int(rest * 2**32)

    class Bits:
        def __init__(self):
            lanes = np.array([k - 1, k, k, k + 1], np.uint16)
            self.draws = [lanes.view(np.uint64), np.array([cut - 1, cut], np.uint64) << np.uint64(32)]

        def random_raw(self, n):
            out = self.draws.pop(0)
            assert out.size == n
            return out

    eng = _CPUEngine.__new__(_CPUEngine)
    eng.g = SimpleNamespace(bit_generator=Bits())
    assert eng.keep((2, 2), p).tolist() == [[True, True], [False, False]]

    ember.manual_seed(0)
    from ember._ops.random import _engine
    mask = _engine(None, ember.device("cpu")).keep((1000, 1000), p)
    assert mask.dtype == np.bool_ and mask.shape == (1000, 1000)
    assert abs(mask.mean() - 0.7) < 5 * np.sqrt(0.21 / mask.size)
    y = ember.nn.functional.dropout(ember.ones(1000, 1000), p)
    assert abs((y.numpy() != 0).mean() - 0.7) < 5 * np.sqrt(0.21 / 1e6)
    np.testing.assert_allclose(np.unique(y.numpy()), [0.0, 1 / 0.7], rtol=1e-6)
