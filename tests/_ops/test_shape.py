"""Shape, view and joining ops: forward against NumPy, float64 gradcheck, gradgradcheck for a subset, errors."""
import numpy as np
import pytest

import ember
from tests.helpers import OpSpec, assert_close, check_forward, check_grad, check_gradgrad


def _r(*shape):
    return lambda rng: [rng.standard_normal(shape)]


def _rr(*shapes):
    return lambda rng: [rng.standard_normal(s) for s in shapes]


def _c(*shape):
    return lambda rng: [rng.standard_normal(shape) + 1j * rng.standard_normal(shape)]


def _np_diag_embed(x, offset=0, d1=-2, d2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
    idx = np.arange(x.shape[-1])
    rows, cols = (idx, idx + offset) if offset >= 0 else (idx - offset, idx)
    out[..., rows, cols] = x
    return np.moveaxis(out, (-2, -1), (d1, d2))


def _np_unfold(x, dim, size, step):
    xm = np.moveaxis(x, dim, -1)
    count = (xm.shape[-1] - size) // step + 1
    windows = np.stack([xm[..., i * step:i * step + size] for i in range(count)], -2)
    return np.moveaxis(windows, -2, dim % x.ndim)


def _np_tensor_split(x, ios, dim=0):
    return tuple(np.array_split(x, ios, axis=dim))


VIEW_SPECS = [
    OpSpec("view", lambda x: x.view(6, 4), lambda x: x.reshape(6, 4), _r(2, 3, 4), gradgrad=True),
    OpSpec("view_infer", lambda x: x.view(-1, 4), lambda x: x.reshape(-1, 4), _r(2, 3, 4)),
    OpSpec("view_tuple", lambda x: x.view((4, 6)), lambda x: x.reshape(4, 6), _r(2, 3, 4)),
    OpSpec("view_as", lambda x, y: x.view_as(y), lambda x, y: x.reshape(y.shape), _rr((2, 6), (3, 4)),
           nondiff=(1,)),
    OpSpec("reshape", lambda x: ember.reshape(x, (3, -1)), lambda x: x.reshape(3, -1), _r(2, 3, 4)),
    OpSpec("reshape_copy", lambda x: x.transpose(0, 2).reshape(-1), lambda x: x.transpose(2, 1, 0).reshape(-1),
           _r(2, 3, 4), gradgrad=True),
    OpSpec("reshape_as", lambda x, y: x.reshape_as(y), lambda x, y: x.reshape(y.shape), _rr((2, 6), (3, 4)),
           nondiff=(1,)),
    OpSpec("flatten", lambda x: ember.flatten(x), lambda x: x.reshape(-1), _r(2, 3, 4)),
    OpSpec("flatten_range", lambda x: x.flatten(1, 2), lambda x: x.reshape(2, 12), _r(2, 3, 4)),
    OpSpec("flatten_0d", lambda x: x.flatten(), lambda x: x.reshape(1), _r()),
    OpSpec("unflatten", lambda x: x.unflatten(1, (2, -1)), lambda x: x.reshape(3, 2, 2), _r(3, 4)),
    OpSpec("ravel", lambda x: ember.ravel(x.t()), lambda x: x.T.ravel(), _r(3, 4)),
    OpSpec("transpose", lambda x: ember.transpose(x, 0, 2), lambda x: x.transpose(2, 1, 0), _r(2, 3, 4),
           gradgrad=True),
    OpSpec("swapaxes", lambda x: ember.swapaxes(x, -1, 0), lambda x: np.swapaxes(x, -1, 0), _r(2, 3, 4)),
    OpSpec("swapdims", lambda x: x.swapdims(1, 2), lambda x: np.swapaxes(x, 1, 2), _r(2, 3, 4)),
    OpSpec("t", lambda x: ember.t(x), lambda x: x.T, _r(3, 4)),
    OpSpec("t_1d", lambda x: x.t(), lambda x: x, _r(3)),
    OpSpec("T", lambda x: x.T, lambda x: x.T, _r(3, 4)),
    OpSpec("mT", lambda x: x.mT, lambda x: np.swapaxes(x, -1, -2), _r(2, 3, 4)),
    OpSpec("H_real", lambda x: x.H, lambda x: x.T, _r(3, 4)),
    OpSpec("mH_complex", lambda x: x.mH, lambda x: np.conj(np.swapaxes(x, -1, -2)), _c(2, 3, 4)),
    OpSpec("adjoint", lambda x: ember.adjoint(x), lambda x: np.conj(np.swapaxes(x, -1, -2)), _c(3, 2)),
    OpSpec("permute", lambda x: ember.permute(x, (2, 0, 1)), lambda x: x.transpose(2, 0, 1), _r(2, 3, 4)),
    OpSpec("permute_method", lambda x: x.permute(1, -1, 0), lambda x: x.transpose(1, 2, 0), _r(2, 3, 4)),
    OpSpec("movedim", lambda x: ember.movedim(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), _r(2, 3, 4)),
    OpSpec("moveaxis_tuple", lambda x: x.moveaxis((0, 1), (2, 0)), lambda x: np.moveaxis(x, (0, 1), (2, 0)),
           _r(2, 3, 4)),
    OpSpec("expand", lambda x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4)), _r(3, 1),
           gradgrad=True),
    OpSpec("expand_keep", lambda x: x.expand(-1, 4), lambda x: np.broadcast_to(x, (3, 4)), _r(3, 1)),
    OpSpec("expand_as", lambda x, y: x.expand_as(y), lambda x, y: np.broadcast_to(x, y.shape), _rr((4,), (3, 4)),
           nondiff=(1,)),
    OpSpec("broadcast_to", lambda x: ember.broadcast_to(x, (2, 3)), lambda x: np.broadcast_to(x, (2, 3)), _r(3)),
    OpSpec("broadcast_tensors", lambda x, y: ember.broadcast_tensors(x, y),
           lambda x, y: tuple(np.broadcast_arrays(x, y)), _rr((3, 1), (4,)), gradgrad=True),
    OpSpec("meshgrid_ij", lambda x, y: ember.meshgrid(x, y, indexing="ij"),
           lambda x, y: tuple(np.meshgrid(x, y, indexing="ij")), _rr((3,), (4,))),
    OpSpec("meshgrid_xy", lambda x, y, z: ember.meshgrid([x, y, z], indexing="xy"),
           lambda x, y, z: tuple(np.meshgrid(x, y, z, indexing="xy")), _rr((3,), (4,), (2,))),
    OpSpec("squeeze", lambda x: ember.squeeze(x), lambda x: np.squeeze(x), _r(1, 3, 1, 2)),
    OpSpec("squeeze_dim", lambda x: x.squeeze(2), lambda x: np.squeeze(x, 2), _r(1, 3, 1, 2)),
    OpSpec("squeeze_dim_noop", lambda x: x.squeeze(1), lambda x: x, _r(1, 3, 1, 2)),
    OpSpec("squeeze_dims", lambda x: x.squeeze((0, -2)), lambda x: np.squeeze(x, (0, 2)), _r(1, 3, 1, 2)),
    OpSpec("unsqueeze", lambda x: ember.unsqueeze(x, 1), lambda x: x[:, None], _r(3, 2), gradgrad=True),
    OpSpec("unsqueeze_neg", lambda x: x.unsqueeze(-1), lambda x: x[..., None], _r(3, 2)),
    OpSpec("atleast_1d", lambda x: ember.atleast_1d(x), lambda x: np.atleast_1d(x), _r()),
    OpSpec("atleast_2d", lambda x: ember.atleast_2d(x), lambda x: np.atleast_2d(x), _r(3)),
    OpSpec("atleast_3d", lambda x: ember.atleast_3d(x), lambda x: np.atleast_3d(x), _r(3)),
    OpSpec("atleast_3d_2d", lambda x: ember.atleast_3d(x), lambda x: np.atleast_3d(x), _r(2, 3)),
    OpSpec("atleast_2d_many", lambda x, y: ember.atleast_2d(x, y), lambda x, y: tuple(np.atleast_2d(x, y)),
           _rr((), (3,))),
    OpSpec("narrow", lambda x: ember.narrow(x, 1, 1, 2), lambda x: x[:, 1:3], _r(3, 4), gradgrad=True),
    OpSpec("narrow_neg_start", lambda x: x.narrow(-1, -2, 2), lambda x: x[:, 2:], _r(3, 4)),
    OpSpec("select", lambda x: ember.select(x, 1, 2), lambda x: x[:, 2], _r(3, 4), gradgrad=True),
    OpSpec("select_neg", lambda x: x.select(0, -1), lambda x: x[-1], _r(3, 4)),
    OpSpec("select_1d", lambda x: x.select(0, 1), lambda x: x[1], _r(3)),
    OpSpec("unbind", lambda x: ember.unbind(x, 1), lambda x: tuple(np.moveaxis(x, 1, 0)), _r(2, 3),
           gradgrad=True),
    OpSpec("unbind_partial", lambda x: x.unbind()[1], lambda x: x[1], _r(3, 2)),
    OpSpec("split", lambda x: ember.split(x, 2, 1), lambda x: tuple(np.split(x, [2, 4], 1)), _r(2, 5),
           gradgrad=True),
    OpSpec("split_sizes", lambda x: x.split([1, 3, 1]), lambda x: tuple(np.split(x, [1, 4])), _r(5, 2)),
    OpSpec("split_partial", lambda x: x.split(2)[1], lambda x: x[2:4], _r(5, 2)),
    OpSpec("chunk", lambda x: ember.chunk(x, 3, -1), lambda x: tuple(np.split(x, [3, 6], -1)), _r(2, 7)),
    OpSpec("tensor_split_sections", lambda x: ember.tensor_split(x, 3), lambda x: _np_tensor_split(x, 3),
           _r(7, 2)),
    OpSpec("tensor_split_indices", lambda x: x.tensor_split([1, 4], dim=1),
           lambda x: _np_tensor_split(x, [1, 4], 1), _r(2, 6)),
    OpSpec("hsplit", lambda x: ember.hsplit(x, 2), lambda x: tuple(np.hsplit(x, 2)), _r(3, 4)),
    OpSpec("vsplit", lambda x: ember.vsplit(x, [1]), lambda x: tuple(np.vsplit(x, [1])), _r(3, 4)),
    OpSpec("dsplit", lambda x: ember.dsplit(x, 2), lambda x: tuple(np.dsplit(x, 2)), _r(2, 3, 4)),
    OpSpec("diagonal", lambda x: ember.diagonal(x), lambda x: np.diagonal(x), _r(3, 4), gradgrad=True),
    OpSpec("diagonal_offset", lambda x: x.diagonal(1, 0, 2), lambda x: np.diagonal(x, 1, 0, 2), _r(3, 2, 4)),
    OpSpec("diagonal_neg", lambda x: x.diagonal(-1, -1, 0), lambda x: np.diagonal(x, -1, -1, 0), _r(3, 2, 4)),
    OpSpec("diagonal_empty", lambda x: x.diagonal(5), lambda x: np.diagonal(x, 5), _r(3, 4)),
    OpSpec("unfold", lambda x: x.unfold(1, 3, 2), lambda x: _np_unfold(x, 1, 3, 2), _r(2, 8), gradgrad=True),
    OpSpec("unfold_overlap", lambda x: x.unfold(0, 4, 1), lambda x: _np_unfold(x, 0, 4, 1), _r(6, 2)),
    OpSpec("unfold_few_windows", lambda x: x.unfold(-1, 5, 1), lambda x: _np_unfold(x, -1, 5, 1), _r(6)),
    OpSpec("real", lambda x: ember.real(x), np.real, _c(2, 3), gradgrad=True),
    OpSpec("real_of_real", lambda x: x.real, lambda x: x, _r(2, 3)),
    OpSpec("imag", lambda x: x.imag, np.imag, _c(2, 3), gradgrad=True),
    OpSpec("view_as_real", lambda x: ember.view_as_real(x), lambda x: np.stack([x.real, x.imag], -1), _c(2, 3),
           gradgrad=True),
    OpSpec("view_as_complex", lambda x: ember.view_as_complex(x), lambda x: x[..., 0] + 1j * x[..., 1],
           _r(3, 2), gradgrad=True),
    OpSpec("alias_copy", lambda x: ember.alias_copy(x), lambda x: x, _r(2, 3)),
    OpSpec("clone", lambda x: ember.clone(x), lambda x: x, _r(2, 3)),
]

COPY_SPECS = [
    OpSpec("cat", lambda x, y: ember.cat([x, y]), lambda x, y: np.concatenate([x, y]), _rr((2, 3), (4, 3)),
           gradgrad=True),
    OpSpec("cat_dim", lambda x, y, z: ember.cat((x, y, z), dim=-1), lambda x, y, z: np.concatenate([x, y, z], -1),
           _rr((2, 1), (2, 3), (2, 2))),
    OpSpec("cat_skips_empty_1d", lambda x, y: ember.cat([x, y], 1), lambda x, y: x, _rr((2, 3), (0,))),
    OpSpec("concat", lambda x, y: ember.concat([x, y], 1), lambda x, y: np.concatenate([x, y], 1),
           _rr((2, 3), (2, 1))),
    OpSpec("concatenate", lambda x, y: ember.concatenate([x, y]),
           lambda x, y: np.concatenate([x, y]), _rr((1, 3), (2, 3))),
    OpSpec("stack", lambda x, y: ember.stack([x, y], 1), lambda x, y: np.stack([x, y], 1), _rr((2, 3), (2, 3)),
           gradgrad=True),
    OpSpec("stack_last", lambda x, y: ember.stack((x, y), -1), lambda x, y: np.stack([x, y], -1),
           _rr((2, 3), (2, 3))),
    OpSpec("hstack", lambda x, y: ember.hstack([x, y]), lambda x, y: np.hstack([x, y]), _rr((2, 3), (2, 1))),
    OpSpec("hstack_1d", lambda x, y: ember.hstack([x, y]), lambda x, y: np.hstack([x, y]), _rr((2,), (3,))),
    OpSpec("vstack", lambda x, y: ember.vstack([x, y]), lambda x, y: np.vstack([x, y]), _rr((3,), (2, 3))),
    OpSpec("row_stack", lambda x, y: ember.row_stack([x, y]), lambda x, y: np.vstack([x, y]), _rr((3,), (3,))),
    OpSpec("dstack", lambda x, y: ember.dstack([x, y]), lambda x, y: np.dstack([x, y]), _rr((2, 3), (2, 3, 2))),
    OpSpec("column_stack", lambda x, y: ember.column_stack([x, y]), lambda x, y: np.column_stack([x, y]),
           _rr((3,), (3, 2))),
    OpSpec("flip", lambda x: ember.flip(x, (0, 2)), lambda x: np.flip(x, (0, 2)), _r(2, 3, 4), gradgrad=True),
    OpSpec("flip_method", lambda x: x.flip(-1), lambda x: np.flip(x, -1), _r(2, 3)),
    OpSpec("fliplr", lambda x: ember.fliplr(x), np.fliplr, _r(2, 3)),
    OpSpec("flipud", lambda x: x.flipud(), np.flipud, _r(2, 3)),
    OpSpec("roll", lambda x: ember.roll(x, (1, -2), (0, 1)), lambda x: np.roll(x, (1, -2), (0, 1)), _r(3, 4),
           gradgrad=True),
    OpSpec("roll_flat", lambda x: x.roll(5), lambda x: np.roll(x, 5), _r(3, 4)),
    OpSpec("rot90", lambda x: ember.rot90(x), np.rot90, _r(3, 4), gradgrad=True),
    OpSpec("rot90_k2", lambda x: x.rot90(2, (1, 2)), lambda x: np.rot90(x, 2, (1, 2)), _r(2, 3, 4)),
    OpSpec("rot90_k3", lambda x: x.rot90(-1), lambda x: np.rot90(x, -1), _r(3, 4)),
    OpSpec("rot90_k0", lambda x: x.rot90(4), lambda x: x, _r(3, 4)),
    OpSpec("repeat", lambda x: x.repeat(2, 1, 3), lambda x: np.tile(x, (2, 1, 3)), _r(2, 3), gradgrad=True),
    OpSpec("repeat_zero", lambda x: x.repeat(0, 2), lambda x: np.tile(x, (0, 2)), _r(2, 3)),
    OpSpec("tile", lambda x: ember.tile(x, (2,)), lambda x: np.tile(x, 2), _r(2, 3)),
    OpSpec("tile_method", lambda x: x.tile(2, 1, 2), lambda x: np.tile(x, (2, 1, 2)), _r(2, 3)),
    OpSpec("repeat_interleave", lambda x: ember.repeat_interleave(x, 2), lambda x: np.repeat(x, 2),
           _r(2, 3)),
    OpSpec("repeat_interleave_dim", lambda x: x.repeat_interleave(3, dim=1), lambda x: np.repeat(x, 3, 1),
           _r(2, 3), gradgrad=True),
    OpSpec("repeat_interleave_tensor", lambda x: x.repeat_interleave(ember.tensor([2, 0, 1]), dim=0),
           lambda x: np.repeat(x, [2, 0, 1], 0), _r(3, 2), gradgrad=True),
    OpSpec("tril", lambda x: ember.tril(x), np.tril, _r(2, 3, 4), gradgrad=True),
    OpSpec("tril_k", lambda x: x.tril(-1), lambda x: np.tril(x, -1), _r(4, 3)),
    OpSpec("triu", lambda x: ember.triu(x, 1), lambda x: np.triu(x, 1), _r(3, 4), gradgrad=True),
    OpSpec("diag_1d", lambda x: ember.diag(x), np.diag, _r(3), gradgrad=True),
    OpSpec("diag_1d_offset", lambda x: ember.diag(x, -2), lambda x: np.diag(x, -2), _r(3)),
    OpSpec("diag_2d", lambda x: x.diag(), np.diag, _r(3, 4), gradgrad=True),
    OpSpec("diag_2d_offset", lambda x: x.diag(1), lambda x: np.diag(x, 1), _r(3, 4)),
    OpSpec("diag_embed", lambda x: ember.diag_embed(x), _np_diag_embed, _r(2, 3), gradgrad=True),
    OpSpec("diag_embed_dims", lambda x: x.diag_embed(1, 0, 2), lambda x: _np_diag_embed(x, 1, 0, 2), _r(2, 3)),
    OpSpec("diag_embed_neg", lambda x: x.diag_embed(-1, 2, 0), lambda x: _np_diag_embed(x, -1, 2, 0), _r(2, 3)),
    OpSpec("diagflat", lambda x: ember.diagflat(x, 1), lambda x: np.diagflat(x, 1), _r(2, 2)),
    OpSpec("contiguous", lambda x: x.t().contiguous(), lambda x: x.T, _r(2, 3)),
]

SPECS = VIEW_SPECS + COPY_SPECS


@pytest.mark.parametrize("spec", SPECS, ids=repr)
def test_forward(spec):
    check_forward(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.arrays()[0].dtype.kind != "c"], ids=repr)
def test_forward_float32(spec):
    check_forward(spec, np.float32)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.grad], ids=repr)
def test_gradcheck(spec):
    check_grad(spec)


@pytest.mark.parametrize("spec", [s for s in SPECS if s.gradgrad], ids=repr)
def test_gradgradcheck(spec):
    check_gradgrad(spec)


@pytest.mark.skipif(not hasattr(ember.Tensor, "index_add"), reason="needs Tensor.index_add")
def test_as_strided_forward_and_grad():
    spec = OpSpec("as_strided", lambda x: ember.as_strided(x, (3, 2), (1, 2), 1),
                  lambda x: np.lib.stride_tricks.as_strided(x[1:], (3, 2), (8, 16)), _r(8))
    check_forward(spec)
    check_grad(spec)


# ----- dtypes, special results -----

@pytest.mark.parametrize("dtypes,expected", [
    ((ember.float32, ember.int64), ember.float32),
    ((ember.bool, ember.int32), ember.int32),
    ((ember.int8, ember.uint8), ember.int16),
    ((ember.float16, ember.float64), ember.float64),
    ((ember.float32, ember.complex64), ember.complex64),
])
def test_cat_and_stack_promote_dtypes(dtypes, expected):
    xs = [ember.ones(2, 3, dtype=d) for d in dtypes]
    assert ember.cat(xs).dtype is expected
    assert ember.stack(xs).dtype is expected


def test_cat_gradient_is_cast_back_to_each_input_dtype():
    a = ember.ones(2, dtype=ember.float32, requires_grad=True)
    b = ember.ones(3, dtype=ember.float64, requires_grad=True)
    (ember.cat([a, b]) * ember.arange(5.0, dtype=ember.float64)).sum().backward()
    assert a.grad.dtype is ember.float32 and b.grad.dtype is ember.float64
    assert_close(a.grad, [0.0, 1.0])
    assert_close(b.grad, [2.0, 3.0, 4.0])


def test_cat_of_only_empty_tensors_and_empty_promotion():
    r = ember.cat([ember.tensor([]), ember.tensor([])])
    assert r.shape == (0,) and r.dtype is ember.float32
    assert ember.cat([ember.tensor([], dtype=ember.int64), ember.ones(2, 3, dtype=ember.int32)]).dtype is ember.int64


def test_cat_out():
    out = ember.empty(4, 2)
    r = ember.cat([ember.ones(2, 2), ember.zeros(2, 2)], out=out)
    assert r is out
    assert_close(out, np.r_[np.ones((2, 2)), np.zeros((2, 2))])


def test_split_of_empty_and_oversized_and_chunk_counts():
    assert [t.shape for t in ember.zeros(0).split(0)] == [(0,)]
    assert [t.shape for t in ember.zeros(3).split(5)] == [(3,)]
    assert [t.shape for t in ember.arange(10).chunk(4)] == [(3,), (3,), (3,), (1,)]
    assert [t.shape for t in ember.arange(6).chunk(4)] == [(2,), (2,), (2,)]
    assert [t.shape for t in ember.zeros(0).chunk(2)] == [(0,), (0,)]


def test_tensor_split_negative_and_tensor_indices():
    x = ember.arange(6)
    assert [t.tolist() for t in x.tensor_split([4, -4])] == [[0, 1, 2, 3], [], [2, 3, 4, 5]]
    assert [t.tolist() for t in x.tensor_split(ember.tensor([2]))] == [[0, 1], [2, 3, 4, 5]]
    assert [t.tolist() for t in x.tensor_split(ember.tensor(4))] == [[0, 1], [2, 3], [4], [5]]


def test_repeat_interleave_one_argument_form_and_output_size():
    assert ember.repeat_interleave(ember.tensor([1, 0, 2])).tolist() == [0, 2, 2]
    assert ember.repeat_interleave(ember.tensor([1, 2]), ember.tensor([3])).tolist() == [1, 1, 1, 2, 2, 2]
    r = ember.repeat_interleave(ember.tensor([1, 2]), ember.tensor([1, 2]), output_size=3)
    assert r.tolist() == [1, 2, 2]


def test_broadcast_shapes_and_tensors():
    assert ember.broadcast_shapes(2, (3, 1), ember.Size([1, 2])) == ember.Size([3, 2])
    a = ember.ones(2, 1, requires_grad=True)
    b = ember.ones(3)
    x, y = ember.broadcast_tensors(a, b)
    assert x.shape == y.shape == (2, 3)
    assert ember.broadcast_tensors(a, a)[0] is a


def test_flatten_returns_input_when_nothing_to_flatten():
    x = ember.ones(2, 3)
    assert x.flatten(1, 1) is x
    y = ember.ones(4)
    assert y.flatten() is y


def test_real_of_real_tensor_is_itself():
    x = ember.ones(2)
    assert x.real is x


def test_tril_and_triu_in_place_and_bool():
    x = ember.ones(3, 3)
    x.tril_()
    assert_close(x, np.tril(np.ones((3, 3))))
    b = ember.ones(2, 2, dtype=ember.bool).triu(1)
    assert b.dtype is ember.bool and b.tolist() == [[False, True], [False, False]]


def test_grad_fn_names():
    x = ember.ones(2, 3, requires_grad=True)
    c = ember.ones(2, 3, dtype=ember.complex64, requires_grad=True)
    names = {
        "ViewBackward0": x.view(6), "UnsafeViewBackward0": x.t().reshape(6), "TBackward0": x.t(),
        "TransposeBackward0": x.mT, "PermuteBackward0": x.T, "ExpandBackward0": x.expand(2, 2, 3),
        "UnsqueezeBackward0": x.unsqueeze(0), "SqueezeBackward0": x.squeeze(), "SqueezeBackward1": x.squeeze(0),
        "SqueezeBackward2": x.squeeze((0,)), "SliceBackward0": x.narrow(1, 0, 2), "SelectBackward0": x.select(0, 1),
        "UnbindBackward0": x.unbind()[0], "SplitBackward0": x.split(1)[0],
        "SplitWithSizesBackward0": x.split([1, 1])[0], "DiagonalBackward0": x.diagonal(),
        "UnfoldBackward0": x.unfold(1, 2, 1), "CatBackward0": ember.cat([x, x]),
        "StackBackward0": ember.stack([x, x]), "FlipBackward0": x.flip(0), "RollBackward0": x.roll(1),
        "RepeatBackward0": x.repeat(2, 1), "TrilBackward0": x.tril(), "TriuBackward0": x.triu(),
        "Rot90Backward0": x.rot90(), "DiagEmbedBackward0": x.diag_embed(),
        "ViewAsRealBackward0": ember.view_as_real(c), "CloneBackward0": ember.clone(x),
    }
    for name, y in names.items():
        assert y.grad_fn.name() == name, (name, y.grad_fn.name())
    assert c.real.grad_fn.name() == "SelectBackward0"


def test_T_warns_on_non_matrices():
    with pytest.warns(UserWarning, match="x.T"):
        _ = ember.ones(2, 3, 4).T
    with pytest.warns(UserWarning, match="deprecated on 0-D tensors"):
        _ = ember.tensor(1.0).T


def test_meshgrid_without_indexing_warns():
    with pytest.warns(UserWarning, match="indexing argument"):
        ember.meshgrid(ember.ones(2), ember.ones(3))


def test_view_dtype():
    x = ember.tensor([1.0, 2.0])
    y = x.view(ember.int32)
    assert y.dtype is ember.int32 and y.shape == (2,)
    assert x.view(ember.float16).shape == (4,)
    assert ember.ones(2, 4, dtype=ember.int8).view(ember.int32).shape == (2, 1)


# ----- errors in torch's words -----

def _raises(exc, match, fn):
    with pytest.raises(exc, match=match):
        fn()


ERRORS = [
    ("view_layout", RuntimeError, r"view size is not compatible with input tensor's size and stride",
     lambda: ember.ones(2, 3).t().view(6)),
    ("view_numel", RuntimeError, r"shape '\[4\]' is invalid for input of size 6", lambda: ember.ones(2, 3).view(4)),
    ("view_two_infer", RuntimeError, "only one dimension can be inferred", lambda: ember.ones(6).view(-1, -1)),
    ("view_bad_dim", RuntimeError, r"invalid shape dimension -2 at index 0 of shape \[-2, 3\]",
     lambda: ember.ones(6).view(-2, 3)),
    ("view_ambiguous", RuntimeError, "cannot reshape tensor of 0 elements into shape",
     lambda: ember.zeros(0, 3).reshape(0, -1)),
    ("view_dtype_stride", RuntimeError, r"self.stride\(-1\) must be 1 to view Float as Half",
     lambda: ember.ones(2, 3).t().view(ember.float16)),
    ("view_dtype_size", RuntimeError, r"self.size\(-1\) must be divisible by 4 to view Char as Int",
     lambda: ember.ones(3, dtype=ember.int8).view(ember.int32)),
    ("transpose_dim", IndexError, r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
     lambda: ember.ones(2, 3).transpose(0, 2)),
    ("t_3d", RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D",
     lambda: ember.ones(2, 3, 4).t()),
    ("mT_1d", RuntimeError, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.",
     lambda: ember.ones(3).mT),
    ("H_3d", RuntimeError, r"tensor.H is only supported on matrices \(2-D tensors\). Got 3-D tensor.",
     lambda: ember.ones(2, 2, 2).H),
    ("permute_dup", RuntimeError, "duplicate dims are not allowed", lambda: ember.ones(2, 3).permute(0, 0)),
    ("permute_len", RuntimeError, "number of dimensions in the tensor input does not match",
     lambda: ember.ones(2, 3).permute(0)),
    ("movedim_len", RuntimeError, "movedim: Invalid source or destination dims",
     lambda: ember.ones(2, 3).movedim((0, 1), (0,))),
    ("movedim_dup", RuntimeError, r"movedim: repeated dim in `source` \(\[0, 0\]\)",
     lambda: ember.ones(2, 3).movedim((0, 0), (0, 1))),
    ("expand_size", RuntimeError, (r"The expanded size of the tensor \(3\) must match the existing size \(2\) at "
     r"non-singleton dimension 0.  Target sizes: \[3, 3\].  Tensor sizes: \[2, 3\]"),
     lambda: ember.ones(2, 3).expand(3, 3)),
    ("expand_fewer", RuntimeError, r"expand\(ember.FloatTensor\{\[2, 3\]\}, size=\[3\]\): the number of sizes",
     lambda: ember.ones(2, 3).expand(3)),
    ("broadcast_shapes", RuntimeError, "Attempting to broadcast a dimension of length 4 at -1!",
     lambda: ember.broadcast_shapes((2, 3), (4,))),
    ("broadcast_tensors", RuntimeError, r"The size of tensor a \(3\) must match the size of tensor b \(4\)",
     lambda: ember.broadcast_tensors(ember.ones(2, 3), ember.ones(2, 4))),
    ("unsqueeze_dim", IndexError, r"expected to be in range of \[-3, 2\], but got 3",
     lambda: ember.ones(2, 3).unsqueeze(3)),
    ("narrow_len", RuntimeError, r"start \(2\) \+ length \(2\) exceeds dimension size \(3\).",
     lambda: ember.ones(2, 3).narrow(1, 2, 2)),
    ("narrow_start", IndexError, r"start out of range \(expected to be in range of \[-3, 3\], but got 4\)",
     lambda: ember.ones(2, 3).narrow(1, 4, 0)),
    ("narrow_0d", RuntimeError, "narrow\\(\\) cannot be applied to a 0-dim tensor.",
     lambda: ember.tensor(1.0).narrow(0, 0, 1)),
    ("select_index", IndexError, r"select\(\): index 3 out of range for tensor of size \[2, 3\] at dimension 1",
     lambda: ember.ones(2, 3).select(1, 3)),
    ("unbind_0d", IndexError, "Dimension specified as 0 but tensor has no dimensions",
     lambda: ember.tensor(1.0).unbind()),
    ("split_sum", RuntimeError, (r"split_with_sizes expects split_sizes to sum exactly to 3 \(input tensor's size at "
     r"dimension 1\), but got split_sizes=\[1, 1\]"), lambda: ember.ones(2, 3).split([1, 1], 1)),
    ("split_zero", RuntimeError, "split_size can only be 0 if dimension size is 0",
     lambda: ember.ones(2, 3).split(0, 1)),
    ("chunk_zero", RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0",
     lambda: ember.ones(3).chunk(0)),
    ("tensor_split_zero", RuntimeError, "number of sections must be larger than 0, got 0",
     lambda: ember.ones(3).tensor_split(0)),
    ("hsplit_uneven", RuntimeError, ("torch.hsplit attempted to split along dimension 1, but the size of the "
     "dimension 3 is not divisible by the split_size 2!"), lambda: ember.ones(2, 3).hsplit(2)),
    ("vsplit_1d", RuntimeError, "torch.vsplit requires a tensor with at least 2 dimension",
     lambda: ember.ones(3).vsplit(1)),
    ("diagonal_same", RuntimeError, "diagonal dimensions cannot be identical 1, 1",
     lambda: ember.ones(2, 3).diagonal(0, 1, 1)),
    ("unfold_size", RuntimeError, "maximum size for tensor at dimension 1 is 3 but size is 4",
     lambda: ember.ones(2, 3).unfold(1, 4, 1)),
    ("unfold_step", RuntimeError, "step is 0 but must be > 0", lambda: ember.ones(2, 3).unfold(1, 2, 0)),
    ("imag_real", RuntimeError, "imag is not implemented for tensors with non-complex dtypes.",
     lambda: ember.ones(2).imag),
    ("view_as_real_real", RuntimeError, "view_as_real is only supported for complex tensors",
     lambda: ember.view_as_real(ember.ones(2))),
    ("view_as_complex_size", RuntimeError, "Tensor must have a last dimension of size 2",
     lambda: ember.view_as_complex(ember.ones(2, 3))),
    ("view_as_complex_stride", RuntimeError, "Tensor must have a last dimension with stride 1",
     lambda: ember.view_as_complex(ember.ones(2, 2).t())),
    ("cat_empty", ValueError, r"torch.cat\(\): expected a non-empty list of Tensors", lambda: ember.cat([])),
    ("cat_sizes", RuntimeError, (r"Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 "
     r"for tensor number 1 in the list."), lambda: ember.cat([ember.ones(2, 3), ember.ones(2, 4)])),
    ("cat_ndim", RuntimeError, "Tensors must have same number of dimensions: got 2 and 3",
     lambda: ember.cat([ember.ones(2, 3), ember.ones(2, 3, 4)])),
    ("cat_0d", RuntimeError, r"zero-dimensional tensor \(at position 0\) cannot be concatenated",
     lambda: ember.cat([ember.tensor(1.0), ember.tensor(2.0)])),
    ("cat_dim", IndexError, r"expected to be in range of \[-2, 1\], but got 2",
     lambda: ember.cat([ember.ones(2, 3)], 2)),
    ("cat_tensor", TypeError, "must be tuple of Tensors, not Tensor", lambda: ember.cat(ember.ones(2))),
    ("stack_empty", RuntimeError, "stack expects a non-empty TensorList", lambda: ember.stack([])),
    ("stack_sizes", RuntimeError, (r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and "
     r"\[2, 4\] at entry 1"), lambda: ember.stack([ember.ones(2, 3), ember.ones(2, 4)])),
    ("flip_dup", RuntimeError, "dim 0 appears multiple times in the list of dims",
     lambda: ember.ones(2, 3).flip(0, 0)),
    ("fliplr_1d", RuntimeError, "Input must be >= 2-d.", lambda: ember.fliplr(ember.ones(2))),
    ("roll_align", RuntimeError, "shifts and dimensions must align. shifts: 2, dims:1",
     lambda: ember.ones(2, 3).roll((1, 2), (0,))),
    ("rot90_dims", RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
     lambda: ember.ones(2, 3).rot90(1, (0, 0))),
    ("repeat_fewer", RuntimeError, "Number of dimensions of repeat dims can not be smaller",
     lambda: ember.ones(2, 3).repeat(2)),
    ("repeat_interleave_size", RuntimeError, (r"repeats must have the same size as input along dim, but got "
     r"repeats.size\(0\) = 2 and input.size\(1\) = 3"),
     lambda: ember.repeat_interleave(ember.ones(2, 3), ember.tensor([1, 2]), dim=1)),
    ("repeat_interleave_neg", RuntimeError, "Repeats must be non-negative",
     lambda: ember.repeat_interleave(ember.ones(2), -1)),
    ("tril_1d", RuntimeError, "tril: input tensor must have at least 2 dimensions", lambda: ember.tril(ember.ones(3))),
    ("diag_3d", RuntimeError, r"diag\(\): Supports 1D or 2D tensors. Got 3D", lambda: ember.diag(ember.ones(2, 2, 2))),
    ("flatten_order", RuntimeError, "start_dim cannot come after end_dim", lambda: ember.ones(2, 3, 4).flatten(2, 1)),
    ("unflatten_sizes", RuntimeError, (r"unflatten: Provided sizes \[2, 2\] don't multiply up to the size of dim 1 "
     r"\(3\) in the input tensor"), lambda: ember.ones(2, 3).unflatten(1, (2, 2))),
    ("meshgrid_indexing", RuntimeError, 'indexing must be one of "xy" or "ij", but received: foo',
     lambda: ember.meshgrid(ember.ones(2), indexing="foo")),
]


@pytest.mark.parametrize("name,exc,match,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name, exc, match, fn):
    _raises(exc, match, fn)


def test_resize_shrinks_in_place_and_grows_with_zeros():
    a = ember.arange(6.0)
    assert a.resize_(2, 2) is a and a.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    b = ember.arange(3.0)
    v0 = b._version
    b.resize_(5)
    assert b.shape == (5,) and b[:3].tolist() == [0.0, 1.0, 2.0] and b._version == v0 + 1
    c = ember.arange(4.0).reshape(2, 2).t()  # not contiguous: the first elements in memory order
    c.resize_(3)
    assert c.tolist() == [0.0, 2.0, 1.0]
    assert ember.ones(2, 3).resize_as_(ember.ones(6)).shape == (6,)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ember.ones(2, requires_grad=True).resize_(3)


def test_size_and_dims_as_keywords():
    x = ember.arange(6.0).reshape(2, 3)
    assert x.permute(dims=(1, 0)).shape == (3, 2) and ember.permute(x, dims=(1, 0)).shape == (3, 2)
    assert x.reshape(shape=(3, 2)).shape == (3, 2) and ember.reshape(x, shape=(6,)).shape == (6,)
    assert x.view(size=(3, 2)).shape == (3, 2)
    assert ember.ones(1, 3).expand(size=(2, 3)).shape == (2, 3)
    assert [t.shape for t in x.split(split_size=1)] == [(1, 3), (1, 3)]
