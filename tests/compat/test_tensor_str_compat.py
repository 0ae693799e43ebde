"""repr(tensor) against PyTorch, string for string ("torch." replaced by "ember.")."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

SHAPES = [(), (1,), (5,), (0,), (0, 3), (2, 0, 3), (3, 4), (2, 3, 4), (30,), (7, 13), (1001,), (40, 40), (3, 400),
          (11, 11, 11), (2, 2, 2, 2), (100,), (1, 1, 1), (6, 1), (1, 25)]
SCALES = [1, 1e-5, 1e5, 1e9, 1e-9, 1e3, 0.5, 123.456]
SPECIALS = [[np.inf, -np.inf, np.nan, 0.0, -0.0, 1.5], [np.nan], [np.inf], [-0.0], [0.0, 0.0], [1e-5, 1.0],
            [1.0, 2.0, np.inf], [123456789.0, 1.0], [1e8, 1], [1e-4, 1], [-1.5, 2.25], [0.1, 0.01, 0.001],
            [100000.0, 1.0], [1000.0, 1.0], [1001.0, 1.0], [-0.0, 1.0], [0.99995, 1.0], [9.99995, -9.99995],
            [1e16, 1.0], [65504.0, -65504.0], [3.0, -7.0, np.nan], [1e-300, 1e300]]


def check(arr, torch_dtype=None, ember_dtype=None):
    arr = np.asarray(arr)
    t = torch.from_numpy(arr.copy())
    e = ember.from_numpy(arr.copy())
    if torch_dtype is not None:
        t, e = t.to(torch_dtype), e.to(ember_dtype)
    expected = repr(t).replace("torch.", "ember.")
    assert repr(e) == expected, f"\n{expected}\n{e!r}"
    assert str(e) == expected


def _cases(shape, scale, seed):
    rng = np.random.default_rng(seed)
    x = np.asarray(rng.standard_normal(shape) * scale)
    y = np.asarray(rng.standard_normal(shape))
    return x, y, rng


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("scale", SCALES)
def test_float_tensors(shape, scale):
    x, _y, _ = _cases(shape, scale, 0)
    check(x.astype(np.float32))
    check(x)
    check(np.asarray(np.round(x)).astype(np.float32))
    with np.errstate(over="ignore"):
        check(x.astype(np.float16))
    check(x.astype(np.float32), torch.bfloat16, ember.bfloat16)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("scale", [1, 1e-5, 1e5, 1e9])
def test_complex_tensors(shape, scale):
    x, y, _ = _cases(shape, scale, 1)
    check(np.asarray(x + 1j * y * scale).astype(np.complex64))
    check(np.asarray(x + 1j * y).astype(np.complex128))
    check(np.asarray(np.round(x) - 1j * np.round(y)).astype(np.complex64))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_int_and_bool_tensors(shape):
    rng = np.random.default_rng(2)
    check(np.asarray(rng.integers(-1000, 1000, shape)))
    check(np.asarray(rng.integers(-2 ** 62, 2 ** 62, shape)))
    check(np.asarray(rng.integers(0, 255, shape)).astype(np.uint8))
    check(np.asarray(rng.integers(-5, 5, shape)).astype(np.int32))
    check(np.asarray(rng.integers(-100, 100, shape)).astype(np.int8))
    check(np.asarray(rng.integers(-100, 100, shape)).astype(np.int16))
    check(np.asarray(rng.random(shape) > 0.5))


@pytest.mark.parametrize("values", SPECIALS, ids=str)
def test_special_values(values):
    with np.errstate(invalid="ignore", over="ignore"):
        a = np.array(values)
        check(a.astype(np.float32))
        check(a)
        check(a.astype(np.float16))
        check(a + 1j * a[::-1])
        check(a.astype(np.float32).reshape(-1, 1))


@pytest.mark.parametrize("seed", range(40))
def test_random_shapes_and_ranges(seed):
    rng = np.random.default_rng(100 + seed)
    ndim = int(rng.integers(0, 5))
    shape = tuple(int(s) for s in rng.integers(1, 9 if ndim > 2 else 40, ndim))
    scale = 10.0 ** rng.uniform(-10, 10)
    x = np.asarray(rng.standard_normal(shape) * scale)
    if rng.random() < 0.3:
        x = np.abs(x)
    if rng.random() < 0.3 and x.size:
        x.flat[int(rng.integers(0, x.size))] = rng.choice([np.inf, -np.inf, np.nan, 0.0])
    check(x.astype(np.float32))
    check(x)
    check(np.asarray(x + 1j * x[..., ::-1] if x.ndim else x - 2j).astype(np.complex64))


OPTIONS = [{"precision": 2}, {"precision": 8}, {"precision": 0}, {"threshold": 5}, {"threshold": 50, "edgeitems": 1},
           {"edgeitems": 0, "threshold": 3}, {"linewidth": 40}, {"linewidth": 200}, {"linewidth": 1},
           {"profile": "short"}, {"profile": "full"}, {"sci_mode": True}, {"sci_mode": False},
           {"precision": 3, "sci_mode": True, "linewidth": 60}, {"profile": "short", "precision": 6}]


@pytest.mark.parametrize("opts", OPTIONS, ids=str)
def test_print_options(opts):
    rng = np.random.default_rng(3)
    try:
        torch.set_printoptions(**opts)
        ember.set_printoptions(**opts)
        for shape in [(), (7,), (20,), (4, 9), (3, 4, 5), (1200,), (50, 50), (0, 2)]:
            x = np.asarray(rng.standard_normal(shape) * 100)
            check(x.astype(np.float32))
            check(np.asarray(rng.integers(-50, 50, shape)))
            check(np.asarray(x * 1e-6))
            check(np.asarray(x + 1j).astype(np.complex64))
    finally:
        torch.set_printoptions(profile="default")
        ember.set_printoptions(profile="default")


def test_suffixes_requires_grad_and_grad_fn():
    for shape in [(), (3,), (2, 3), (30,), (12, 12)]:
        a = np.random.default_rng(4).standard_normal(shape)
        for dt_t, dt_e in ((torch.float32, ember.float32), (torch.float64, ember.float64)):
            t = torch.tensor(a, dtype=dt_t, requires_grad=True)
            e = ember.tensor(a, dtype=dt_e, requires_grad=True)
            assert repr(e) == repr(t).replace("torch.", "ember.")
            assert repr(e + e) == repr(t + t).replace("torch.", "ember.")
            assert repr(e * 2) == repr(t * 2).replace("torch.", "ember.")
            assert repr(e.exp()) == repr(t.exp()).replace("torch.", "ember.")


def test_suffix_wrapping_at_linewidth():
    # a long last line pushes dtype= and grad_fn= onto their own lines
    for n in (5, 8, 9, 10, 11, 12):
        a = np.arange(n, dtype=np.float64) * 1.123456
        t = torch.tensor(a, requires_grad=True)
        e = ember.tensor(a, requires_grad=True)
        assert repr(e * 3) == repr(t * 3).replace("torch.", "ember.")
        check(np.arange(n, dtype=np.int16) * 1000)


def test_default_dtype_float64():
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    try:
        check(np.array([1.5, 2.0], np.float32))
        check(np.array([1.5, 2.0]))
        check(np.array([1 + 1j], np.complex64))
        check(np.array([1 + 1j], np.complex128))
        check(np.zeros((0,), np.float32))
        check(np.zeros((0,)))
    finally:
        torch.set_default_dtype(torch.float32)
        ember.set_default_dtype(ember.float32)


def test_empty_tensors():
    for shape in [(0,), (0, 3), (2, 0), (1, 0, 2)]:
        for dt in (np.float32, np.float64, np.int64, np.int32, np.bool_, np.complex64, np.float16):
            check(np.zeros(shape, dt))


def test_creation_results_print_alike():
    for expr in ("torch.arange(12).reshape(3, 4)", "torch.linspace(0, 1, 7)", "torch.eye(3, dtype=torch.int32)",
                 "torch.full((2, 2), 7.5, dtype=torch.float16)", "torch.tensor([[True], [False]])",
                 "torch.zeros(3, requires_grad=True)", "torch.tensor(-0.0)", "torch.tensor(3 + 4j)",
                 "torch.arange(2000.).reshape(40, 50)", "torch.logspace(-10, 10, 5, dtype=torch.float64)"):
        assert repr(eval(expr, {"torch": ember})) == repr(eval(expr, {"torch": torch})).replace("torch.", "ember.")
