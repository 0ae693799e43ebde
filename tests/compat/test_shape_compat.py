"""Shape, view and joining ops compared with PyTorch: values, dtypes, gradients, view layouts and errors."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _arrays(specs, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        if isinstance(s, tuple):
            out.append(rng.standard_normal(s))
        elif isinstance(s, dict):  # {"shape": ..., "dtype": ...}
            a = rng.standard_normal(s["shape"])
            if np.dtype(s["dtype"]).kind == "c":
                a = a + 1j * rng.standard_normal(s["shape"])
            out.append((a * 3).astype(s["dtype"]))
        else:
            out.append(np.asarray(s))
    return out


def _both(arrays, requires_grad):
    tt, et = [], []
    for a in arrays:
        grad = requires_grad and a.dtype.kind in "fc"
        tt.append(torch.tensor(a, requires_grad=grad))
        et.append(ember.tensor(a, requires_grad=grad))
    return tt, et


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _np(t):
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach()._data)


# name, fn(lib, *inputs), input specs
CASES = [
    ("view", lambda m, x: x.view(4, -1), [(2, 3, 4)]),
    ("reshape_copy", lambda m, x: m.reshape(x.transpose(0, 1), (6, 4)), [(2, 3, 4)]),
    ("reshape_view_nc", lambda m, x: x.permute(2, 0, 1).reshape(4, 6), [(2, 3, 4)]),
    ("flatten", lambda m, x: m.flatten(x, 0, 1), [(2, 3, 4)]),
    ("flatten_nc", lambda m, x: x.mT.flatten(1), [(2, 3, 4)]),
    ("unflatten", lambda m, x: x.unflatten(-1, (2, 2)), [(2, 3, 4)]),
    ("ravel", lambda m, x: m.ravel(x.mT), [(2, 3, 4)]),
    ("transpose", lambda m, x: m.transpose(x, -1, 0), [(2, 3, 4)]),
    ("t", lambda m, x: m.t(x), [(3, 4)]),
    ("H", lambda m, x: x.H, [{"shape": (3, 2), "dtype": np.complex128}]),
    ("mH", lambda m, x: x.mH, [{"shape": (2, 3, 2), "dtype": np.complex128}]),
    ("permute", lambda m, x: x.permute(2, 0, 1), [(2, 3, 4)]),
    ("movedim", lambda m, x: m.movedim(x, (0, 2), (2, 1)), [(2, 3, 4)]),
    ("expand", lambda m, x: x.expand(2, -1, 4), [(3, 1)]),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (2, 3, 4)), [(4,)]),
    ("broadcast_tensors", lambda m, x, y: m.broadcast_tensors(x, y), [(3, 1), (2, 1, 4)]),
    ("meshgrid_ij", lambda m, x, y: m.meshgrid(x, y, indexing="ij"), [(3,), (4,)]),
    ("meshgrid_xy", lambda m, x, y: m.meshgrid(x, y, indexing="xy"), [(3,), (4,)]),
    ("squeeze", lambda m, x: m.squeeze(x), [(1, 3, 1)]),
    ("squeeze_dims", lambda m, x: x.squeeze((0, 1)), [(1, 3, 1)]),
    ("unsqueeze", lambda m, x: x.unsqueeze(-2), [(3, 4)]),
    ("atleast_3d", lambda m, x, y: m.atleast_3d(x, y), [(3,), (2, 3)]),
    ("narrow", lambda m, x: m.narrow(x, 1, -2, 2), [(2, 3, 4)]),
    ("select", lambda m, x: m.select(x, -1, 1), [(2, 3, 4)]),
    ("unbind", lambda m, x: m.unbind(x, 1), [(2, 3, 4)]),
    ("split", lambda m, x: m.split(x, 2, -1), [(2, 3, 5)]),
    ("split_sizes", lambda m, x: x.split([1, 0, 2], 1), [(2, 3, 5)]),
    ("chunk", lambda m, x: m.chunk(x, 4, 2), [(2, 3, 10)]),
    ("tensor_split", lambda m, x: m.tensor_split(x, 4, 2), [(2, 3, 10)]),
    ("tensor_split_idx", lambda m, x: x.tensor_split((2, -3, 8), dim=2), [(2, 3, 10)]),
    ("hsplit", lambda m, x: m.hsplit(x, [1, 2]), [(2, 3, 4)]),
    ("vsplit", lambda m, x: m.vsplit(x, 2), [(2, 3, 4)]),
    ("dsplit", lambda m, x: m.dsplit(x, 2), [(2, 3, 4)]),
    ("diagonal", lambda m, x: m.diagonal(x, -1, 2, 0), [(3, 2, 4)]),
    ("unfold", lambda m, x: x.unfold(-1, 3, 2), [(2, 7)]),
    ("unfold_overlap", lambda m, x: x.unfold(0, 3, 1), [(5, 2)]),
    ("real", lambda m, x: m.real(x), [{"shape": (2, 3), "dtype": np.complex128}]),
    ("imag", lambda m, x: x.imag, [{"shape": (2, 3), "dtype": np.complex128}]),
    ("view_as_real", lambda m, x: m.view_as_real(x), [{"shape": (2, 3), "dtype": np.complex128}]),
    ("view_as_complex", lambda m, x: m.view_as_complex(x), [(3, 2)]),
    ("cat", lambda m, x, y: m.cat([x, y], -1), [(2, 3), (2, 1)]),
    ("cat_empty", lambda m, x, y: m.cat([x, y]), [(0,), (2, 3)]),
    ("cat_promote", lambda m, x, y: m.cat([x, y]), [(2, 3), np.ones((1, 3), dtype=np.int64)]),
    ("concatenate", lambda m, x, y: m.concatenate((x, y), 1), [(2, 3), (2, 1)]),
    ("stack", lambda m, x, y: m.stack([x, y], -1), [(2, 3), (2, 3)]),
    ("stack_promote", lambda m, x, y: m.stack([x, y]), [np.ones(3, dtype=np.int32), np.ones(3, dtype=np.float32)]),
    ("hstack", lambda m, x, y: m.hstack([x, y]), [(2,), (3,)]),
    ("vstack", lambda m, x, y: m.vstack([x, y]), [(3,), (2, 3)]),
    ("dstack", lambda m, x, y: m.dstack([x, y]), [(3,), (1, 3)]),
    ("column_stack", lambda m, x, y: m.column_stack([x, y]), [(), (1, 2)]),
    ("flip", lambda m, x: m.flip(x, (0, -1)), [(2, 3, 4)]),
    ("fliplr", lambda m, x: m.fliplr(x), [(2, 3)]),
    ("flipud", lambda m, x: m.flipud(x), [(2, 3)]),
    ("roll", lambda m, x: m.roll(x, (1, -1), (0, 2)), [(2, 3, 4)]),
    ("roll_flat", lambda m, x: x.roll(-7), [(2, 3, 4)]),
    ("rot90", lambda m, x: m.rot90(x, 1, (1, 2)), [(2, 3, 4)]),
    ("rot90_neg", lambda m, x: m.rot90(x, -3), [(3, 4)]),
    ("rot90_2", lambda m, x: x.rot90(2, (-1, 0)), [(3, 4)]),
    ("repeat", lambda m, x: x.repeat(2, 3, 1), [(3, 2)]),
    ("tile", lambda m, x: m.tile(x, (2,)), [(3, 2)]),
    ("tile_more", lambda m, x: x.tile(2, 1, 1), [(3, 2)]),
    ("repeat_interleave", lambda m, x: m.repeat_interleave(x, 3), [(2, 2)]),
    ("repeat_interleave_dim", lambda m, x: x.repeat_interleave(2, dim=-1), [(2, 2)]),
    ("repeat_interleave_t", lambda m, x, r: m.repeat_interleave(x, r, dim=0), [(3, 2), np.array([1, 0, 3])]),
    ("tril", lambda m, x: m.tril(x, 1), [(2, 3, 4)]),
    ("triu", lambda m, x: m.triu(x, -1), [(4, 3)]),
    ("diag_vec", lambda m, x: m.diag(x, 1), [(3,)]),
    ("diag_mat", lambda m, x: m.diag(x, -1), [(3, 4)]),
    ("diag_embed", lambda m, x: m.diag_embed(x, -1, 0, 2), [(2, 3)]),
    ("diagflat", lambda m, x: m.diagflat(x, -2), [(2, 2)]),
    ("clone", lambda m, x: m.clone(x), [(2, 3)]),
]


@pytest.mark.parametrize("name,fn,specs", CASES, ids=[c[0] for c in CASES])
def test_values_dtypes_and_grads_match_torch(name, fn, specs):
    arrays = _arrays(specs)
    tt, et = _both(arrays, True)
    tout, eout = _flat(fn(torch, *tt)), _flat(fn(ember, *et))
    assert len(tout) == len(eout)
    for t, e in zip(tout, eout):
        assert tuple(t.shape) == tuple(e.shape)
        assert str(t.dtype) == str(e.dtype).replace("ember", "torch")
        np.testing.assert_allclose(_np(e), _np(t), rtol=1e-12, atol=0)
        assert t.requires_grad == e.requires_grad
        if t.grad_fn is not None:
            assert e.grad_fn.name() == t.grad_fn.name()
    # gradients with a random cotangent on every differentiable output
    rng = np.random.default_rng(1)
    tl, el = 0, 0
    for t, e in zip(tout, eout):
        if t.requires_grad:
            w = rng.standard_normal(tuple(t.shape))
            if t.is_complex():
                w = w + 1j * rng.standard_normal(tuple(t.shape))
            tl = tl + (t * torch.tensor(w)).real.sum()
            el = el + (e * ember.tensor(w)).real.sum()
    if isinstance(tl, int):
        return
    tl.backward()
    el.backward()
    for t, e in zip(tt, et):
        if t.requires_grad:
            np.testing.assert_allclose(_np(e.grad), _np(t.grad), rtol=1e-10, atol=1e-12)


# views: layouts (stride, storage offset, contiguity) and whether the result is a view
VIEW_CASES = [
    ("view", lambda x: x.view(6, 4)),
    ("view_unit_dims", lambda x: x.view(2, 1, 3, 4, 1)),
    ("view_nc_split", lambda x: x.transpose(0, 2).view(2, 2, 3, 2)),
    ("reshape_nc_view", lambda x: x.permute(2, 0, 1).reshape(4, 6)),
    ("reshape_copy", lambda x: x.transpose(0, 1).reshape(6, 4)),
    ("flatten", lambda x: x.flatten()),
    ("transpose", lambda x: x.transpose(0, 2)),
    ("permute", lambda x: x.permute(1, 2, 0)),
    ("mT", lambda x: x.mT),
    ("movedim", lambda x: x.movedim(0, -1)),
    ("expand", lambda x: x[:, :1].expand(2, 3, 4)),
    ("expand_new_dims", lambda x: x[0, 0].expand(5, 2, 4)),
    ("squeeze", lambda x: x[:1].squeeze(0)),
    ("unsqueeze_front", lambda x: x.unsqueeze(0)),
    ("unsqueeze_mid", lambda x: x.unsqueeze(2)),
    ("unsqueeze_nc_mid", lambda x: x.transpose(0, 2).unsqueeze(1)),
    ("narrow", lambda x: x.narrow(2, 1, 2)),
    ("narrow_mid", lambda x: x.narrow(1, 1, 2)),
    ("select", lambda x: x.select(1, 2)),
    ("select_last", lambda x: x.select(-1, 3)),
    ("unbind", lambda x: x.unbind(1)[2]),
    ("split", lambda x: x.split(3, 2)[1]),
    ("chunk", lambda x: x.chunk(2, 1)[1]),
    ("tensor_split", lambda x: x.tensor_split([1, 3], 2)[1]),
    ("diagonal", lambda x: x.diagonal(0, 1, 2)),
    ("diagonal_offset", lambda x: x.diagonal(2, 2, 1)),
    ("diagonal_neg", lambda x: x.diagonal(-1, 0, 2)),
    ("unfold", lambda x: x.unfold(2, 2, 1)),
    ("unfold_step", lambda x: x.unfold(1, 2, 2)),
    ("as_strided", lambda x: x.as_strided((3, 3), (2, 5), 1)),
    ("view_as_real", lambda x: torch.view_as_real(x) if isinstance(x, torch.Tensor) else ember.view_as_real(x)),
    ("real", lambda x: x.real),
    ("imag", lambda x: x.imag),
    ("view_of_view", lambda x: x.transpose(0, 1).narrow(0, 1, 2).select(2, 1)),
    ("unsqueeze_nc_end", lambda x: x[0].t().unsqueeze(2)),
    ("unsqueeze_nc_end_3d", lambda x: x.transpose(0, 2).unsqueeze(-1)),
    ("view_unit_nc", lambda x: x.transpose(0, 2).view(4, 3, 2, 1)),
    ("squeeze_nc", lambda x: x[:, :1].transpose(0, 2).squeeze()),
    ("expand_keeps_unit", lambda x: x[:, :1, :1].expand(2, 1, 4)),
    ("expand_new_unit", lambda x: x[0, :, :1].expand(1, 3, 4)),
    ("expand_nc", lambda x: x[0, :1].t().expand(2, 4, 1)),
    ("diagonal_unit", lambda x: x[:, :1].diagonal(0, 1, 2)),
    ("narrow_unit", lambda x: x.narrow(2, 0, 1)),
    ("permute_unit", lambda x: x[:1].permute(2, 0, 1)),
    ("unflatten_unit", lambda x: x.unflatten(2, (4, 1))),
    ("unfold_unit", lambda x: x.unfold(2, 1, 1)),
    ("split_unit", lambda x: x.split(1, 0)[1]),
]
_COMPLEX_VIEWS = {"view_as_real", "real", "imag"}


@pytest.mark.parametrize("name,fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_layout_matches_torch(name, fn):
    a = np.arange(24.0).reshape(2, 3, 4)
    if name in _COMPLEX_VIEWS:
        a = a + 1j * a
    tb, eb = torch.tensor(a), ember.tensor(a)
    t, e = fn(tb), fn(eb)
    assert tuple(t.shape) == tuple(e.shape)
    np.testing.assert_array_equal(_np(e), _np(t))
    assert t.is_contiguous() == e.is_contiguous()
    assert (t._base is not None) == (e._base is not None)
    if t._base is not None:
        assert t.storage_offset() == e.storage_offset()
        assert t.stride() == e.stride()


def _err(fn, lib):
    try:
        fn(lib)
    except Exception as exc:  # noqa: BLE001 - the point is comparing whatever is raised
        return type(exc), str(exc).split("\n")[0]
    return None, None


ERROR_CASES = [
    ("view_layout", lambda m: m.ones(2, 3).t().view(6)),
    ("view_numel", lambda m: m.ones(2, 3).view(4)),
    ("view_infer_two", lambda m: m.ones(2, 3).view(-1, -1)),
    ("view_bad_dim", lambda m: m.ones(2, 3).view(-2, 3)),
    ("reshape_ambiguous", lambda m: m.zeros(0, 3).reshape(0, -1)),
    ("view_dtype_stride", lambda m: m.ones(2, 3).t().view(m.float16)),
    ("view_dtype_size", lambda m: m.ones(3, dtype=m.int8).view(m.int32)),
    ("transpose_oob", lambda m: m.ones(2, 3).transpose(0, 2)),
    ("t_3d", lambda m: m.ones(2, 3, 4).t()),
    ("mT_1d", lambda m: m.ones(3).mT),
    ("H_1d", lambda m: m.ones(3).H),
    ("mH_1d", lambda m: m.ones(3).mH),
    ("adjoint_1d", lambda m: m.ones(3).adjoint()),
    ("permute_dup", lambda m: m.ones(2, 3).permute(1, 1)),
    ("permute_len", lambda m: m.ones(2, 3).permute(0)),
    ("movedim_len", lambda m: m.ones(2, 3).movedim((0, 1), (0,))),
    ("movedim_dup_src", lambda m: m.ones(2, 3).movedim((0, 0), (0, 1))),
    ("movedim_dup_dst", lambda m: m.ones(2, 3).movedim((0, 1), (1, 1))),
    ("expand_mismatch", lambda m: m.ones(2, 3).expand(3, 3)),
    ("expand_fewer", lambda m: m.ones(2, 3).expand(3)),
    ("expand_neg_lead", lambda m: m.ones(2, 3).expand(-1, 2, 3)),
    ("broadcast_to", lambda m: m.broadcast_to(m.ones(2, 3), (3, 3))),
    ("broadcast_shapes", lambda m: m.broadcast_shapes((2, 3), (4,))),
    ("broadcast_tensors", lambda m: m.broadcast_tensors(m.ones(2, 3), m.ones(2, 4))),
    ("squeeze_oob", lambda m: m.ones(2, 3).squeeze(2)),
    ("unsqueeze_oob", lambda m: m.ones(2, 3).unsqueeze(3)),
    ("narrow_len", lambda m: m.ones(2, 3).narrow(1, 2, 2)),
    ("narrow_start", lambda m: m.ones(2, 3).narrow(1, 4, 0)),
    ("narrow_neg_len", lambda m: m.ones(2, 3).narrow(1, 0, -1)),
    ("narrow_0d", lambda m: m.tensor(1.0).narrow(0, 0, 1)),
    ("select_oob", lambda m: m.ones(2, 3).select(1, 3)),
    ("select_0d", lambda m: m.tensor(1.0).select(0, 0)),
    ("unbind_0d", lambda m: m.tensor(1.0).unbind()),
    ("split_sum", lambda m: m.ones(2, 3).split([1, 1], 1)),
    ("split_neg_sizes", lambda m: m.ones(3).split([-1, 4])),
    ("split_zero", lambda m: m.ones(2, 3).split(0, 1)),
    ("split_neg", lambda m: m.ones(2, 3).split(-1, 1)),
    ("split_0d", lambda m: m.tensor(1.0).split(1)),
    ("chunk_zero", lambda m: m.ones(3).chunk(0)),
    ("chunk_0d", lambda m: m.tensor(1.0).chunk(1)),
    ("tensor_split_zero", lambda m: m.ones(3).tensor_split(0)),
    ("tensor_split_float", lambda m: m.ones(3).tensor_split(m.tensor(2.0))),
    ("tensor_split_2d", lambda m: m.ones(3).tensor_split(m.ones(1, 1, dtype=m.long))),
    ("tensor_split_0d", lambda m: m.tensor(1.0).tensor_split(1)),
    ("hsplit_0d", lambda m: m.tensor(1.0).hsplit(1)),
    ("hsplit_uneven", lambda m: m.ones(2, 3).hsplit(2)),
    ("vsplit_1d", lambda m: m.ones(3).vsplit(1)),
    ("dsplit_2d", lambda m: m.ones(3, 2).dsplit(1)),
    ("diagonal_same", lambda m: m.ones(2, 3).diagonal(0, 1, 1)),
    ("diagonal_1d", lambda m: m.ones(3).diagonal()),
    ("unfold_size", lambda m: m.ones(2, 3).unfold(1, 4, 1)),
    ("unfold_step", lambda m: m.ones(2, 3).unfold(1, 2, 0)),
    ("unfold_neg_size", lambda m: m.ones(3).unfold(0, -1, 1)),
    ("imag_real", lambda m: m.ones(2).imag),
    ("view_as_real_real", lambda m: m.view_as_real(m.ones(2))),
    ("view_as_complex_int", lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int32))),
    ("view_as_complex_0d", lambda m: m.view_as_complex(m.tensor(1.0))),
    ("view_as_complex_size", lambda m: m.view_as_complex(m.ones(2, 3))),
    ("view_as_complex_stride", lambda m: m.view_as_complex(m.ones(2, 2).t())),
    ("view_as_complex_offset", lambda m: m.view_as_complex(m.ones(7)[1:].view(3, 2))),
    ("cat_empty", lambda m: m.cat([])),
    ("cat_sizes", lambda m: m.cat([m.ones(2, 3), m.ones(2, 4)])),
    ("cat_sizes_dim1", lambda m: m.cat([m.ones(2, 3), m.ones(3, 3), m.ones(4, 3)], 1)),
    ("cat_ndim", lambda m: m.cat([m.ones(2, 3), m.ones(2, 3, 4)])),
    ("cat_0d", lambda m: m.cat([m.ones(2), m.tensor(2.0)])),
    ("cat_dim", lambda m: m.cat([m.ones(2, 3), m.ones(2, 3)], 2)),
    ("cat_tensor", lambda m: m.cat(m.ones(2))),
    ("stack_empty", lambda m: m.stack([])),
    ("stack_sizes", lambda m: m.stack([m.ones(2, 3), m.ones(2, 3), m.ones(2, 4)])),
    ("stack_dim", lambda m: m.stack([m.ones(2, 3)], 3)),
    ("flip_dup", lambda m: m.ones(2, 3).flip(0, -2)),
    ("fliplr_1d", lambda m: m.fliplr(m.ones(2))),
    ("flipud_0d", lambda m: m.flipud(m.tensor(1.0))),
    ("roll_align", lambda m: m.ones(2, 3).roll((1, 2), (0,))),
    ("roll_align_nodims", lambda m: m.ones(2, 3).roll((1, 2))),
    ("rot90_dims_len", lambda m: m.ones(2, 3).rot90(1, (0,))),
    ("rot90_same", lambda m: m.ones(2, 3).rot90(1, (0, -2))),
    ("rot90_1d", lambda m: m.rot90(m.ones(3))),
    ("repeat_fewer", lambda m: m.ones(2, 3).repeat(2)),
    ("repeat_neg", lambda m: m.ones(2, 3).repeat(-1, 2)),
    ("repeat_interleave_size", lambda m: m.repeat_interleave(m.ones(2, 3), m.tensor([1, 2]), dim=1)),
    ("repeat_interleave_neg", lambda m: m.repeat_interleave(m.ones(2), -1)),
    ("repeat_interleave_tneg", lambda m: m.repeat_interleave(m.ones(2), m.tensor([1, -1]))),
    ("repeat_interleave_2d", lambda m: m.repeat_interleave(m.ones(2), m.tensor([[1, 1]]))),
    ("repeat_interleave_outsize", lambda m: m.repeat_interleave(m.ones(2), m.tensor([1, 2]), output_size=4)),
    ("tril_1d", lambda m: m.tril(m.ones(3))),
    ("triu_1d", lambda m: m.triu(m.ones(3))),
    ("diag_3d", lambda m: m.diag(m.ones(2, 2, 2))),
    ("diag_0d", lambda m: m.diag(m.tensor(1.0))),
    ("diag_embed_same", lambda m: m.diag_embed(m.ones(3), 0, 0, -2)),
    ("flatten_order", lambda m: m.ones(2, 3, 4).flatten(2, 1)),
    ("unflatten_sizes", lambda m: m.ones(2, 3).unflatten(1, (2, 2))),
    ("unflatten_empty", lambda m: m.ones(2, 3).unflatten(1, ())),
    ("meshgrid_indexing", lambda m: m.meshgrid(m.ones(2), indexing="foo")),
    ("meshgrid_dtype", lambda m: m.meshgrid(m.ones(2), m.ones(2, dtype=m.float64), indexing="ij")),
    ("meshgrid_empty", lambda m: m.meshgrid([], indexing="ij")),
    ("broadcast_shapes_neg", lambda m: m.broadcast_shapes((-1, 2))),
]


@pytest.mark.parametrize("name,fn", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_torch(name, fn):
    t_exc, t_msg = _err(fn, torch)
    e_exc, e_msg = _err(fn, ember)
    assert t_exc is not None, "torch raised nothing"
    assert e_exc is not None, "ember raised nothing"
    assert e_exc.__name__ == t_exc.__name__
    assert e_msg == t_msg.replace("torch.FloatTensor", "ember.FloatTensor")
