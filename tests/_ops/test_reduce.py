"""Reductions and scans: forward against NumPy, gradcheck, double backward, dtypes, ties, zeros, empty tensors."""
import numpy as np
import pytest

import ember
from ember.autograd import grad, gradcheck, gradgradcheck
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad

NAN = float("nan")


def _x(*shape):
    return lambda rng: [rng.standard_normal(shape)]


def _pos(*shape):
    return lambda rng: [rng.uniform(0.5, 2.0, shape)]


def _with_nans(*shape):
    def make(rng):
        a = rng.standard_normal(shape)
        a.reshape(-1)[::5] = NAN
        return [a]
    return make


def _with_zeros(*shape, every=3):
    def make(rng):
        a = rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)
        a.reshape(-1)[::every] = 0.0
        return [a]
    return make


def _fixed(*arrays):
    return lambda rng: [np.array(a, dtype=np.float64) for a in arrays]


# ---------------- NumPy references ----------------
def _np_lower_median(a, axis=None):
    if axis is None:
        a, axis = a.reshape(-1), 0
    s = np.sort(a, axis=axis)
    return np.take(s, (a.shape[axis] - 1) // 2, axis=axis)


def _np_median_dim(a, axis, keepdims=False):
    order = np.argsort(a, axis=axis, kind="stable")
    k = (a.shape[axis] - 1) // 2
    idx = np.take(order, [k], axis=axis)
    v = np.take_along_axis(a, idx, axis)
    if not keepdims:
        v, idx = v.squeeze(axis), idx.squeeze(axis)
    return v, idx


def _np_cumext(a, axis, ufunc):
    v = ufunc.accumulate(a, axis=axis)
    pos = np.arange(a.shape[axis]).reshape([-1 if i == axis else 1 for i in range(a.ndim)])
    idx = np.maximum.accumulate(np.where(a == v, pos, 0), axis=axis)
    return v, idx


def _np_mode(a, axis):
    am = np.moveaxis(a, axis, -1)
    vals, idxs = [], []
    for row in am.reshape(-1, am.shape[-1]):
        u, c = np.unique(row, return_counts=True)
        v = u[np.argmax(c)]
        vals.append(v)
        idxs.append(np.nonzero(row == v)[0][-1])
    return np.array(vals).reshape(am.shape[:-1]), np.array(idxs).reshape(am.shape[:-1])


def _np_norm(a, p, axis=None, keepdims=False):
    x = np.abs(a)
    if p == np.inf:
        return x.max(axis=axis, keepdims=keepdims)
    if p == -np.inf:
        return x.min(axis=axis, keepdims=keepdims)
    if p == 0:
        return (x != 0).sum(axis=axis, keepdims=keepdims).astype(a.dtype)
    return (x ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


def _np_var(a, axis=None, ddof=1, keepdims=False):
    return np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)


Q3 = np.array([0.1, 0.5, 0.95])

SPECS = [
    # sum / mean / nansum / nanmean
    OpSpec("sum", lambda x: x.sum(), np.sum, _x(3, 4), gradgrad=True),
    OpSpec("sum_dim", lambda x: ember.sum(x, 1), lambda a: a.sum(1), _x(3, 4, 5), gradgrad=True),
    OpSpec("sum_neg_dim", lambda x: x.sum(-1), lambda a: a.sum(-1), _x(3, 4, 5)),
    OpSpec("sum_dims_keepdim", lambda x: x.sum((0, -1), keepdim=True), lambda a: a.sum((0, 2), keepdims=True),
           _x(3, 4, 5), gradgrad=True),
    OpSpec("sum_0d", lambda x: x.sum(0), lambda a: a, lambda rng: [np.array(1.5)]),
    OpSpec("mean", lambda x: x.mean(), np.mean, _x(3, 4), gradgrad=True),
    OpSpec("mean_dim", lambda x: ember.mean(x, 2), lambda a: a.mean(2), _x(3, 4, 5), gradgrad=True),
    OpSpec("mean_dims_keepdim", lambda x: x.mean([1, 2], True), lambda a: a.mean((1, 2), keepdims=True),
           _x(3, 4, 5)),
    OpSpec("nansum", lambda x: ember.nansum(x), np.nansum, _with_nans(3, 4)),
    OpSpec("nansum_dim", lambda x: x.nansum(1, keepdim=True), lambda a: np.nansum(a, 1, keepdims=True),
           _with_nans(3, 4)),
    OpSpec("nanmean", lambda x: ember.nanmean(x), np.nanmean, _with_nans(3, 4)),
    OpSpec("nanmean_dim", lambda x: x.nanmean(0), lambda a: np.nanmean(a, 0), _with_nans(3, 4)),
    # prod
    OpSpec("prod", lambda x: x.prod(), np.prod, _pos(3, 4), gradgrad=True),
    OpSpec("prod_dim", lambda x: ember.prod(x, 1), lambda a: a.prod(1), _x(3, 4, 2), gradgrad=True),
    OpSpec("prod_keepdim", lambda x: x.prod(-1, True), lambda a: a.prod(-1, keepdims=True), _x(3, 4)),
    OpSpec("prod_one_zero", lambda x: x.prod(), np.prod, _fixed([2.0, 0.0, 3.0, -1.5]), gradgrad=True),
    OpSpec("prod_two_zeros", lambda x: x.prod(), np.prod, _fixed([2.0, 0.0, 3.0, 0.0]), gradgrad=True),
    OpSpec("prod_dim_zeros", lambda x: x.prod(1), lambda a: a.prod(1), _with_zeros(4, 5, every=3), gradgrad=True),
    # max / min family
    OpSpec("max", lambda x: x.max(), np.max, _x(3, 4)),
    OpSpec("min", lambda x: ember.min(x), np.min, _x(3, 4)),
    OpSpec("max_dim", lambda x: tuple(ember.max(x, 1)), lambda a: (a.max(1), a.argmax(1)), _x(3, 4, 5)),
    OpSpec("max_dim_keepdim", lambda x: tuple(x.max(-1, keepdim=True)),
           lambda a: (a.max(-1, keepdims=True), a.argmax(-1, keepdims=True)), _x(3, 4)),
    OpSpec("min_dim", lambda x: tuple(x.min(0)), lambda a: (a.min(0), a.argmin(0)), _x(3, 4)),
    OpSpec("amax", lambda x: x.amax(), np.max, _x(3, 4)),
    OpSpec("amax_dims", lambda x: ember.amax(x, (0, 2)), lambda a: a.max((0, 2)), _x(3, 4, 5)),
    OpSpec("amin_keepdim", lambda x: x.amin(1, True), lambda a: a.min(1, keepdims=True), _x(3, 4, 5)),
    OpSpec("argmax", lambda x: x.argmax(), np.argmax, _x(3, 4), grad=False),
    OpSpec("argmax_dim", lambda x: ember.argmax(x, 1, True), lambda a: a.argmax(1, keepdims=True), _x(3, 4),
           grad=False),
    OpSpec("argmin_dim", lambda x: x.argmin(-1), lambda a: a.argmin(-1), _x(3, 4, 5), grad=False),
    OpSpec("aminmax", lambda x: tuple(ember.aminmax(x)), lambda a: (a.min(), a.max()), _x(3, 4)),
    OpSpec("aminmax_dim", lambda x: tuple(x.aminmax(dim=1, keepdim=True)),
           lambda a: (a.min(1, keepdims=True), a.max(1, keepdims=True)), _x(3, 4)),
    # var / std
    OpSpec("var", lambda x: x.var(), lambda a: _np_var(a), _x(3, 4), gradgrad=True),
    OpSpec("var_dim", lambda x: ember.var(x, 1), lambda a: _np_var(a, 1), _x(3, 4, 5), gradgrad=True),
    OpSpec("var_dims_keepdim_c0", lambda x: x.var((0, 2), keepdim=True, correction=0),
           lambda a: _np_var(a, (0, 2), 0, True), _x(3, 4, 5), gradgrad=True),
    OpSpec("var_unbiased_false", lambda x: x.var(0, False), lambda a: _np_var(a, 0, 0), _x(3, 4)),
    OpSpec("std", lambda x: x.std(), lambda a: np.std(a, ddof=1), _x(3, 4), gradgrad=True),
    OpSpec("std_dim_keepdim", lambda x: ember.std(x, -1, keepdim=True),
           lambda a: np.std(a, -1, ddof=1, keepdims=True), _x(3, 4)),
    OpSpec("std_correction2", lambda x: x.std(1, correction=2), lambda a: np.std(a, 1, ddof=2), _x(3, 5)),
    OpSpec("var_mean", lambda x: ember.var_mean(x, 1), lambda a: (_np_var(a, 1), a.mean(1)), _x(3, 4)),
    OpSpec("std_mean", lambda x: ember.std_mean(x, correction=0),
           lambda a: (np.std(a), a.mean()), _x(3, 4)),
    # logsumexp
    OpSpec("logsumexp", lambda x: x.logsumexp(1), lambda a: np.log(np.exp(a).sum(1)), _x(3, 4), gradgrad=True),
    OpSpec("logsumexp_dims_keepdim", lambda x: ember.logsumexp(x, (0, 1), keepdim=True),
           lambda a: np.log(np.exp(a).sum((0, 1), keepdims=True)), _x(3, 4, 2), gradgrad=True),
    OpSpec("logsumexp_large", lambda x: x.logsumexp(0), lambda a: 1000 + np.log(np.exp(a - 1000).sum(0)),
           lambda rng: [1000 + rng.standard_normal((4, 3))]),
    # norm
    OpSpec("norm", lambda x: x.norm(), np.linalg.norm, _x(3, 4), gradgrad=True),
    OpSpec("norm_dim", lambda x: ember.norm(x, dim=1), lambda a: _np_norm(a, 2, 1), _x(3, 4, 5), gradgrad=True),
    OpSpec("norm_p1", lambda x: x.norm(p=1, dim=(0, 2), keepdim=True),
           lambda a: _np_norm(a, 1, (0, 2), True), _x(3, 4, 5)),
    OpSpec("norm_inf", lambda x: x.norm(float("inf"), 1), lambda a: _np_norm(a, np.inf, 1), _x(3, 4)),
    OpSpec("norm_ninf", lambda x: x.norm(-float("inf")), lambda a: _np_norm(a, -np.inf), _x(3, 4)),
    OpSpec("norm_p3", lambda x: x.norm(3, 0), lambda a: _np_norm(a, 3, 0), _x(3, 4), gradgrad=True),
    OpSpec("norm_p05", lambda x: x.norm(0.5), lambda a: _np_norm(a, 0.5), _x(3, 4)),
    OpSpec("norm_p0", lambda x: x.norm(0), lambda a: _np_norm(a, 0), _x(3, 4), grad=False),
    OpSpec("norm_fro_dims", lambda x: x.norm("fro", (1, 2)), lambda a: np.sqrt((a * a).sum((1, 2))),
           _x(3, 4, 5)),
    # all / any / count_nonzero
    OpSpec("all", lambda x: (x > -1.0).all(), lambda a: (a > -1.0).all(), _x(3, 4), grad=False),
    OpSpec("any_dim", lambda x: ember.any(x > 1.0, 1), lambda a: (a > 1.0).any(1), _x(3, 4), grad=False),
    OpSpec("all_dims_keepdim", lambda x: x.all((0, 1), keepdim=True),
           lambda a: a.all((0, 1), keepdims=True), _with_zeros(3, 4, 2, every=7), grad=False),
    OpSpec("count_nonzero", lambda x: ember.count_nonzero(x), np.count_nonzero, _with_zeros(3, 4), grad=False),
    OpSpec("count_nonzero_dims", lambda x: x.count_nonzero((0, 2)), lambda a: np.count_nonzero(a, (0, 2)),
           _with_zeros(3, 4, 2), grad=False),
    # scans
    OpSpec("cumsum", lambda x: x.cumsum(1), lambda a: np.cumsum(a, 1), _x(3, 4), gradgrad=True),
    OpSpec("cumsum_neg", lambda x: ember.cumsum(x, -1), lambda a: np.cumsum(a, -1), _x(2, 3, 4)),
    OpSpec("cumprod", lambda x: x.cumprod(0), lambda a: np.cumprod(a, 0), _x(4, 3), gradgrad=True),
    OpSpec("cumprod_zeros", lambda x: ember.cumprod(x, 1), lambda a: np.cumprod(a, 1), _with_zeros(4, 5, every=3),
           gradgrad=True),
    OpSpec("cumprod_zeros_1d", lambda x: x.cumprod(0), lambda a: np.cumprod(a),
           _fixed([2.0, 0.0, 3.0, 0.0, 5.0, -1.5]), gradgrad=True),
    OpSpec("cummax", lambda x: tuple(x.cummax(1)), lambda a: _np_cumext(a, 1, np.maximum), _x(3, 5)),
    OpSpec("cummin", lambda x: tuple(ember.cummin(x, 0)), lambda a: _np_cumext(a, 0, np.minimum), _x(5, 3)),
    OpSpec("logcumsumexp", lambda x: x.logcumsumexp(1), lambda a: np.logaddexp.accumulate(a, 1), _x(3, 5),
           gradgrad=True),
    OpSpec("logcumsumexp_dim0", lambda x: ember.logcumsumexp(x, 0), lambda a: np.logaddexp.accumulate(a, 0),
           _x(5, 2)),
    # order statistics
    OpSpec("median", lambda x: x.median(), _np_lower_median, _x(3, 4)),
    OpSpec("median_odd", lambda x: ember.median(x), np.median, _x(3, 5)),
    OpSpec("median_dim", lambda x: tuple(x.median(1)), lambda a: _np_median_dim(a, 1), _x(3, 4)),
    OpSpec("median_dim_keepdim", lambda x: tuple(ember.median(x, 0, True)),
           lambda a: _np_median_dim(a, 0, True), _x(5, 3)),
    OpSpec("nanmedian", lambda x: x.nanmedian(), lambda a: _np_lower_median(a[~np.isnan(a)]), _with_nans(3, 4)),
    OpSpec("nanmedian_dim", lambda x: x.nanmedian(1).values,
           lambda a: np.array([_np_lower_median(r[~np.isnan(r)]) for r in a]), _with_nans(3, 5)),
    OpSpec("mode", lambda x: tuple(x.mode()), lambda a: _np_mode(a, -1),
           lambda rng: [rng.integers(0, 3, (4, 6)).astype(np.float64)], grad=False),
    OpSpec("mode_dim0", lambda x: tuple(ember.mode(x, 0, True)),
           lambda a: tuple(np.expand_dims(r, 0) for r in _np_mode(a, 0)),
           lambda rng: [rng.integers(0, 3, (6, 4)).astype(np.float64)], grad=False),
    OpSpec("quantile", lambda x: x.quantile(0.3), lambda a: np.quantile(a, 0.3), _x(3, 4)),
    OpSpec("quantile_q_dim", lambda x: ember.quantile(x, ember.tensor(Q3, dtype=x.dtype), 1),
           lambda a: np.quantile(a, Q3, 1), _x(3, 5)),
    OpSpec("quantile_keepdim", lambda x: x.quantile(ember.tensor(Q3, dtype=x.dtype), 0, True),
           lambda a: np.quantile(a, Q3, 0, keepdims=True), _x(5, 3)),
    OpSpec("quantile_lower", lambda x: x.quantile(0.3, 1, interpolation="lower"),
           lambda a: np.quantile(a, 0.3, 1, method="lower"), _x(3, 5)),
    OpSpec("quantile_higher", lambda x: x.quantile(0.3, 1, interpolation="higher"),
           lambda a: np.quantile(a, 0.3, 1, method="higher"), _x(3, 5)),
    OpSpec("quantile_nearest", lambda x: x.quantile(0.375, 1, interpolation="nearest"),
           lambda a: np.quantile(a, 0.375, 1, method="nearest"), _x(3, 5)),
    OpSpec("quantile_midpoint", lambda x: x.quantile(0.3, 1, interpolation="midpoint"),
           lambda a: np.quantile(a, 0.3, 1, method="midpoint"), _x(3, 5)),
    OpSpec("nanquantile", lambda x: x.nanquantile(0.4, 1), lambda a: np.nanquantile(a, 0.4, 1), _with_nans(3, 5)),
]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward(spec, dtype):
    check_forward(spec, dtype)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


# ---------------- result dtypes ----------------
def _t(values, dtype):
    return ember.tensor(values).to(dtype)


@pytest.mark.parametrize("dt", [ember.bool, ember.uint8, ember.int8, ember.int32, ember.int64])
def test_integer_sums_and_products_are_int64(dt):
    x = _t([[1, 0, 1], [1, 1, 1]], dt)
    for r in (x.sum(), x.sum(1), x.prod(), x.prod(0), x.nansum(), x.cumsum(0), x.cumprod(1)):
        assert r.dtype is ember.int64
    assert x.sum().item() == 5 and x.prod().item() == 0
    assert x.sum(dtype=ember.int32).dtype is ember.int32


@pytest.mark.parametrize("dt", [ember.int32, ember.bool])
def test_mean_of_integers_raises_torchs_error(dt):
    name = "Int" if dt is ember.int32 else "Bool"
    with pytest.raises(RuntimeError, match=f"mean\\(\\): could not infer output dtype. Input dtype must be either a "
                                           f"floating point or complex dtype. Got: {name}"):
        _t([1, 2], dt).mean()
    assert _t([1, 2], dt).mean(dtype=ember.float64).dtype is ember.float64


def test_index_and_logical_results():
    x = ember.tensor([[1.0, -2.0, 3.0], [0.0, 5.0, -6.0]])
    assert x.argmax().dtype is ember.int64 and x.argmax().item() == 4
    assert x.max(1).indices.dtype is ember.int64
    assert x.all().dtype is ember.bool and not x.all().item()
    assert x.any(1).dtype is ember.bool
    u = x.abs().to(ember.uint8)
    assert u.all().dtype is ember.uint8 and u.any(0).dtype is ember.uint8
    assert x.count_nonzero().dtype is ember.int64 and x.count_nonzero().item() == 5
    assert x.max().dtype is ember.float32 and x.to(ember.int32).amax().dtype is ember.int32
    assert x.to(ember.int32).logsumexp(0).dtype is ember.float32


def test_complex_var_std_norm_are_real():
    z = ember.tensor([1 + 1j, 2 - 1j, -1 + 0.5j])
    for r in (z.var(), z.std(), z.norm()):
        assert r.dtype is ember.float32
    assert_close(z.var(), np.var(np.array([1 + 1j, 2 - 1j, -1 + 0.5j]), ddof=1), rtol=1e-5)


@pytest.mark.parametrize("dt", [ember.float16, ember.bfloat16])
def test_half_precision_accumulates_in_float32(dt):
    x = ember.full((5000,), 0.1, dtype=dt)
    for r, expected in ((x.sum(), 500.0), (x.mean(), 0.1), (x.cumsum(0)[-1], 500.0), (x.norm(), np.sqrt(50.0)),
                        (x.std(), 0.0), (x.logsumexp(0), np.log(5000) + 0.1)):
        assert r.dtype is dt
        assert abs(r.float().item() - expected) <= 0.01 * max(1.0, abs(expected))


def test_float32_scans_accumulate_in_double():
    assert ember.ones(20_000_000).cumsum(0)[-1].item() == 20_000_000.0


# ---------------- ties, zeros, NaN ----------------
def _grad_of(fn, values):
    x = ember.tensor(values, dtype=ember.float64, requires_grad=True)
    y = fn(x)
    y = y[0] if isinstance(y, tuple) else y
    y.sum().backward()
    return x.grad.numpy()


def test_amax_and_max_spread_gradient_over_ties():
    np.testing.assert_allclose(_grad_of(lambda x: x.amax(), [1.0, 3.0, 3.0, 3.0]), [0, 1 / 3, 1 / 3, 1 / 3])
    np.testing.assert_allclose(_grad_of(lambda x: x.max(), [[1.0, 3.0], [3.0, 0.0]]), [[0, 0.5], [0.5, 0]])
    np.testing.assert_allclose(_grad_of(lambda x: x.amin(1), [[1.0, 1.0], [2.0, 0.0]]), [[0.5, 0.5], [0, 1]])
    np.testing.assert_allclose(_grad_of(lambda x: ember.aminmax(x).max, [2.0, 2.0, 1.0]), [0.5, 0.5, 0])
    np.testing.assert_allclose(_grad_of(lambda x: x.median(), [1.0, 2.0, 2.0, 3.0]), [0, 0.5, 0.5, 0])


def test_max_dim_gradient_goes_to_the_first_index():
    x = ember.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    r = x.max(1)
    assert isinstance(r, ember.return_types.max)
    assert r.indices.tolist() == [1, 0]
    np.testing.assert_allclose(_grad_of(lambda t: t.max(1), x.tolist()), [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_allclose(_grad_of(lambda t: t.min(1), x.tolist()), [[1, 0, 0], [0, 0, 1]])


def test_nan_selects_in_max_and_poisons_amax_gradients():
    assert np.isnan(ember.tensor([1.0, NAN, 3.0]).max().item())
    assert ember.tensor([1.0, NAN, 3.0]).argmax().item() == 1
    np.testing.assert_allclose(_grad_of(lambda x: x.max(), [NAN, 2.0, NAN, NAN]), [1 / 3, 0, 1 / 3, 1 / 3])
    assert np.isnan(_grad_of(lambda x: x.amax(), [NAN, 2.0, 1.0])).all()


def test_prod_gradient_with_zeros():
    np.testing.assert_allclose(_grad_of(lambda x: x.prod(), [2.0, 0.0, 3.0]), [0, 6, 0])
    np.testing.assert_allclose(_grad_of(lambda x: x.prod(), [2.0, 0.0, 0.0]), [0, 0, 0])
    np.testing.assert_allclose(_grad_of(lambda x: x.prod(), [2.0, 3.0, 4.0]), [12, 8, 6])
    np.testing.assert_allclose(_grad_of(lambda x: x.prod(1), [[2.0, 0.0], [0.0, 0.0]]), [[0, 2], [0, 0]])


def test_cumprod_gradient_with_zeros():
    np.testing.assert_allclose(_grad_of(lambda x: x.cumprod(0), [2.0, 0.0, 3.0, 0.0, 5.0]), [1, 8, 0, 0, 0])


def test_cummax_ties_take_the_latest_index_and_its_gradient():
    r = ember.tensor([1.0, 3.0, 3.0, 1.0, 3.0, 1.0]).cummax(0)
    assert isinstance(r, ember.return_types.cummax)
    assert r.indices.tolist() == [0, 1, 2, 2, 4, 4]
    np.testing.assert_allclose(_grad_of(lambda x: x.cummax(0), [1.0, 3.0, 3.0, 2.0]), [1, 1, 2, 0])
    assert ember.tensor([3.0, 1.0, 1.0, 3.0]).cummin(0).indices.tolist() == [0, 1, 2, 2]
    assert ember.tensor([1.0, NAN, 3.0]).cummax(0).indices.tolist() == [0, 1, 1]


def test_norm_and_std_gradients_at_zero():
    for p in (2, 1, float("inf"), 3, 0.5, -1):
        np.testing.assert_array_equal(_grad_of(lambda x, p=p: x.norm(p), [0.0, 0.0, 0.0]), [0, 0, 0])
    np.testing.assert_allclose(_grad_of(lambda x: x.norm(0.5), [0.0, 1.0, 2.0]),
                               [0, 2.414213562373095, 1.7071067811865472])
    np.testing.assert_allclose(_grad_of(lambda x: x.norm(float("inf")), [2.0, -1.0, -2.0]), [0.5, 0, -0.5])
    np.testing.assert_array_equal(_grad_of(lambda x: x.std(), [1.0, 1.0]), [0, 0])
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    x.norm(0).backward()
    assert x.grad is None


def test_logsumexp_edge_values():
    assert ember.tensor([-np.inf, -np.inf]).logsumexp(0).item() == -np.inf
    assert ember.tensor([np.inf, 1.0]).logsumexp(0).item() == np.inf
    assert np.isnan(ember.tensor([1.0, NAN]).logsumexp(0).item())
    assert ember.empty(3, 0).logsumexp(1).tolist() == [-np.inf] * 3
    assert ember.tensor([-np.inf, -np.inf]).logcumsumexp(0).tolist() == [-np.inf, -np.inf]


def test_median_mode_and_quantile_nan_and_ties():
    assert ember.tensor([1.0, 2.0, 2.0, 2.0, 3.0]).median(0).indices.item() == 2
    assert ember.tensor([2.0, 2.0, 1.0, 2.0, 3.0]).median(0).indices.item() == 1
    r = ember.tensor([1.0, NAN, 3.0]).median(0)
    assert np.isnan(r.values.item()) and r.indices.item() == 1
    r = ember.tensor([NAN, NAN]).nanmedian(0)
    assert np.isnan(r.values.item()) and r.indices.item() == 0
    r = ember.tensor([2.0, 1.0, 2.0, 1.0, 3.0]).mode()
    assert isinstance(r, ember.return_types.mode) and r.values.item() == 1.0 and r.indices.item() == 3
    assert np.isnan(ember.tensor([1.0, NAN, 3.0]).quantile(0.5).item())
    assert ember.tensor([1.0, NAN, 3.0]).nanquantile(0.5).item() == 2.0
    assert ember.tensor([0.0, 1, 2, 3]).quantile(ember.tensor([1 / 6, 0.5, 5 / 6]),
                                                 interpolation="nearest").tolist() == [0, 2, 2]


def test_quantile_shapes():
    x = ember.zeros(2, 3, 4)
    q = ember.tensor([0.25, 0.75])
    assert x.quantile(0.5).shape == ()
    assert x.quantile(q).shape == (2,)
    assert x.quantile(q, keepdim=True).shape == (2, 1, 1, 1)
    assert x.quantile(q, 1).shape == (2, 2, 4)
    assert x.quantile(0.5, 1, keepdim=True).shape == (2, 1, 4)
    assert x.quantile(ember.tensor(0.5), -1).shape == (2, 3)
    assert x.quantile(ember.tensor([])).shape == (0,)


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_gradient_with_respect_to_q(fn):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5))
    q = ember.tensor([0.1, 0.55, 0.9], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda b: getattr(ember, fn)(ember.tensor(x), b, dim=1), (q,))
    x[1, 2] = np.nan  # nanquantile skips it; quantile's row is NaN and gives q no gradient (not a NaN one)
    xt = ember.tensor(x)
    # linear interpolation between the sorted neighbours: d/dq = (n_valid - 1) * (hi - lo); output (q, row)
    (g,) = grad(getattr(ember, fn)(xt, q, dim=1)[0, 1], q)
    row = np.sort(x[1][~np.isnan(x[1])]) if fn == "nanquantile" else None
    want = 0.0 if row is None else (len(row) - 1) * (row[1] - row[0])
    np.testing.assert_allclose(g.numpy(), [want, 0, 0], atol=1e-12)


# ---------------- empty and zero-dim tensors ----------------
def test_empty_reductions_values():
    e = ember.empty(0)
    assert e.sum().item() == 0 and e.prod().item() == 1 and np.isnan(e.mean().item())
    assert np.isnan(e.median().item()) and e.norm().item() == 0 and e.count_nonzero().item() == 0
    assert e.all().item() and not e.any().item()
    assert ember.empty(0, 3).max(1).values.shape == (0,)
    assert ember.empty(0, 3).amax(1).shape == (0,)
    assert ember.empty(3, 0).prod(1).tolist() == [1.0] * 3
    assert ember.empty(0, 3).cummax(0).values.shape == (0, 3)


@pytest.mark.parametrize("fn, exc, msg", [
    (lambda e: e.max(), RuntimeError, r"max\(\): Expected reduction dim to be specified for input.numel\(\) == 0"),
    (lambda e: e.amin(), RuntimeError, r"amin\(\): Expected reduction dim to be specified"),
    (lambda e: e.reshape(0, 1).max(0), IndexError, r"max\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda e: e.reshape(0, 1).amax((1, 0)), IndexError, r"amax\(\): Expected reduction dim 0 to have non-zero"),
    (lambda e: e.argmax(), IndexError, r"argmax\(\): Expected reduction dim to be specified"),
    (lambda e: e.aminmax(), RuntimeError, r"aminmax\(\): cannot compute aminmax over an empty dimension"),
    (lambda e: e.median(0), IndexError, r"median\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda e: e.mode(), IndexError, r"mode\(\): Expected reduction dim 0 to have non-zero size"),
    (lambda e: e.quantile(0.5), RuntimeError, r"quantile\(\) input tensor must be non-empty"),
    (lambda e: e.norm(float("inf")), RuntimeError, r"cannot compute the inf norm on an empty tensor"),
])
def test_empty_reduction_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn(ember.empty(0))


def test_zero_dim_inputs():
    s = ember.tensor(5.0)
    assert s.sum(0).item() == 5 and s.max(0).indices.item() == 0 and s.argmax(0, True).shape == ()
    assert s.cumsum(-1).item() == 5 and s.median(0, True).values.item() == 5 and s.mode().indices.item() == 0
    assert s.logcumsumexp(0).item() == 5 and s.prod(0).item() == 5 and s.norm(dim=0).item() == 5
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1"):
        s.sum(1)


# ---------------- arguments and errors ----------------
def test_argument_errors():
    x = ember.ones(2, 3)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.sum((0, -2))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.amax((0, 3))
    with pytest.raises(TypeError):
        x.prod((0, 1))
    with pytest.raises(TypeError):
        ember.logsumexp(x, None)
    with pytest.raises(RuntimeError, match="std and var only support floating point and complex dtypes"):
        x.long().std()
    with pytest.raises(RuntimeError, match="argmax\\(\\): does not support bool input"):
        x.bool().argmax()
    with pytest.raises(RuntimeError, match="quantile\\(\\) q must be in the range \\[0, 1\\] but got 1.5"):
        x.quantile(1.5)
    with pytest.raises(RuntimeError, match="q tensor must be same dtype as the input tensor"):
        x.quantile(ember.tensor([0.5], dtype=ember.float64))
    with pytest.raises(RuntimeError, match="interpolation must be one of linear, lower, higher, midpoint or nearest"):
        x.quantile(0.5, interpolation="foo")
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor"):
        x.long().norm()
    with pytest.raises(RuntimeError, match="nanmean\\(\\): expected input to have floating point"):
        x.long().nanmean()


def test_var_overloads_and_dof_warning():
    a = np.arange(6.0).reshape(2, 3) ** 2
    x = ember.tensor(a)
    assert_close(x.var(True), np.var(a, ddof=1))
    assert_close(x.std(False), np.std(a))
    assert_close(x.var(1, False, True), np.var(a, 1, keepdims=True))
    assert_close(ember.var(x, dim=0, correction=0.5), a.var(0) * 2 / 1.5)
    with pytest.warns(UserWarning, match="var\\(\\): degrees of freedom is <= 0"):
        assert np.isnan(ember.tensor([1.0]).var().item())
    with pytest.warns(UserWarning, match="std\\(\\): degrees of freedom is <= 0"):
        assert ember.tensor([1.0, 2.0]).std(correction=3).item() == np.inf


def test_norm_variants():
    a = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
    x = ember.tensor(a)
    assert_close(x.norm(), np.linalg.norm(a))
    assert_close(x.norm(p="fro", dim=(0, 1)), np.linalg.norm(a))
    assert_close(ember.norm(x, 2, 1, True), np.linalg.norm(a, axis=1, keepdims=True))
    assert_close(x.norm(p=ember.tensor(1.0)), np.abs(a).sum())
    assert x.half().norm(dtype=ember.float32).dtype is ember.float32
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order abc not supported."):
        x.norm(p="abc")
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        x.norm(p="nuc", dim=1)


def test_max_with_tensor_is_elementwise():
    a = ember.tensor([[1.0, 5.0], [3.0, -1.0]])
    b = ember.tensor([2.0, 2.0])
    assert ember.max(a, b).tolist() == [[2.0, 5.0], [3.0, 2.0]]
    assert a.min(b).tolist() == [[1.0, 2.0], [2.0, -1.0]]
    assert ember.max(a, other=b).tolist() == [[2.0, 5.0], [3.0, 2.0]]


def test_all_any_with_empty_dim_list_reduce_nothing():
    x = ember.tensor([[1.0, 0.0], [2.0, 3.0]])
    assert x.all(()).tolist() == [[True, False], [True, True]]
    assert x.any(dim=(0, 1)).item()


# ---------------- out=, in-place, grad_fn names, graph ----------------
def test_out_arguments():
    x = ember.tensor([[1.0, 5.0, 2.0], [3.0, -1.0, 4.0]])
    out = ember.empty(2)
    assert ember.sum(x, 1, out=out) is out and out.tolist() == [8.0, 6.0]
    vals, idx = ember.empty(3), ember.empty(3, dtype=ember.int64)
    r = ember.max(x, 0, out=(vals, idx))
    assert r.values is vals and idx.tolist() == [1, 0, 1]
    o = ember.empty(0)
    ember.cumsum(x, 1, out=o)
    assert o.tolist() == [[1.0, 6.0, 8.0], [3.0, 2.0, 6.0]]


def test_inplace_scans():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert x.cumsum_(0) is x and x.tolist() == [1.0, 3.0, 6.0]
    x.cumprod_(0)
    assert x.tolist() == [1.0, 3.0, 18.0]


def test_grad_fn_names():
    x = ember.ones(2, 3, requires_grad=True)
    names = {
        "SumBackward0": x.sum(), "SumBackward1": x.sum(0), "MeanBackward0": x.mean(), "MeanBackward1": x.mean(1),
        "ProdBackward0": x.prod(), "ProdBackward1": x.prod(0), "MaxBackward1": x.max(), "MaxBackward0": x.max(1)[0],
        "AmaxBackward0": x.amax(), "StdBackward0": x.std(), "VarBackward0": x.var(0),
        "LogsumexpBackward0": x.logsumexp(0), "LinalgVectorNormBackward0": x.norm(), "CumsumBackward0": x.cumsum(0),
        "CumprodBackward0": x.cumprod(0), "CummaxBackward0": x.cummax(0)[0], "MedianBackward0": x.median(),
        "MedianBackward1": x.median(0)[0], "ModeBackward0": x.mode()[0], "LogcumsumexpBackward0": x.logcumsumexp(1),
    }
    for name, y in names.items():
        assert y.grad_fn.name() == name


def test_no_graph_and_indices_do_not_require_grad():
    x = ember.ones(2, 3, requires_grad=True)
    r = x.max(1)
    assert r.values.requires_grad and not r.indices.requires_grad
    assert not x.argmax().requires_grad and not x.all().requires_grad
    with ember.no_grad():
        assert x.sum().grad_fn is None


def test_second_derivatives_of_selected_values():
    x = ember.tensor([[1.0, 3.0], [2.0, -1.0]], dtype=ember.float64, requires_grad=True)
    for fn in (lambda t: (t.max(1).values ** 2).sum(), lambda t: (t.cummax(1).values ** 2).sum(),
               lambda t: (t.median(0).values ** 3).sum(), lambda t: (t.quantile(0.3, 1) ** 2).sum()):
        assert gradgradcheck(fn, (x,))


def test_double_backward_of_var_matches_formula():
    x = ember.tensor([1.0, 2.0, 4.0], dtype=ember.float64, requires_grad=True)
    (g,) = grad(x.var(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), (np.array([1.0, 2.0, 4.0]) - 7 / 3))
    (h,) = grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), [0, 0, 0], atol=1e-12)


def test_gradcheck_through_max_with_keepdim_and_aminmax():
    x = ember.tensor(np.random.default_rng(3).standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: t.max(0, keepdim=True)[0], (x,))
    assert gradcheck(lambda t: tuple(t.aminmax(dim=1)), (x,))
    assert gradcheck(lambda t: ember.std_mean(t, 1), (x,))


def test_numpy_argument_names_axis_and_keepdims():
    # torch's argument parser takes numpy's names for dim and keepdim
    x = ember.arange(12.0).reshape(3, 4)
    assert x.sum(axis=1, keepdims=True).tolist() == [[6.0], [22.0], [38.0]]
    assert ember.mean(x, axis=0).tolist() == [4.0, 5.0, 6.0, 7.0]
    assert x.max(axis=1).indices.tolist() == [3, 3, 3] and ember.min(x, axis=0, keepdims=True).values.shape == (1, 4)
    assert x.argmax(axis=0).tolist() == [2, 2, 2, 2] and x.amax(axis=(0, 1)).item() == 11.0
    assert x.prod(axis=1)[0].item() == 0.0 and (x > 5).any(axis=1).tolist() == [False, True, True]
    assert x.std(axis=0, keepdims=True).shape == (1, 4) and x.var(axis=1).shape == (3,)
    assert x.median(axis=1).values.tolist() == [1.0, 5.0, 9.0] and x.logsumexp(axis=1).shape == (3,)
    assert x.cumsum(axis=1)[0].tolist() == [0.0, 1.0, 3.0, 6.0] and ember.cumprod(x, axis=0).shape == (3, 4)
    assert x.nansum(axis=0).tolist() == [12.0, 15.0, 18.0, 21.0] and x.count_nonzero(axis=1).tolist() == [3, 4, 4]
    assert ember.cat([x, x], axis=1).shape == (3, 8) and ember.stack([x, x], axis=2).shape == (3, 4, 2)
    assert ember.concatenate([x, x], axis=0).shape == (6, 4)
    assert x.softmax(axis=1).sum(1).tolist() == pytest.approx([1.0] * 3)
    assert x.log_softmax(axis=0).shape == (3, 4) and ember.softmax(x, axis=0).shape == (3, 4)
    assert x.sort(axis=0, descending=True).values[0].tolist() == [8.0, 9.0, 10.0, 11.0]
    assert x.argsort(axis=1).shape == (3, 4) and x.topk(1, axis=0).values.tolist() == [[8.0, 9.0, 10.0, 11.0]]
    assert x.unsqueeze(axis=0).shape == (1, 3, 4) and x[None].squeeze(axis=0).shape == (3, 4)
    assert len(x.chunk(2, axis=1)) == 2 and len(x.unbind(axis=1)) == 4
    with pytest.raises(TypeError, match="cumsum\\(\\) missing 1 required positional argument: 'dim'"):
        x.cumsum()
    with pytest.raises(TypeError, match="unsqueeze\\(\\) missing 1 required positional argument: 'dim'"):
        x.unsqueeze()


def test_reductions_of_python_sequences_raise_torchs_type_error():
    for fn, arg in ((ember.sum, [ember.ones(2)]), (ember.mean, [1.0, 2.0]), (ember.max, [1, 2]), (ember.min, (1, 2))):
        with pytest.raises(TypeError, match=f"{fn.__name__}\\(\\): argument 'input' \\(position 1\\) must be Tensor, "
                                            f"not {type(arg).__name__}"):
            fn(arg)
