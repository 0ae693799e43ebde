"""View semantics: views share memory and the version counter with their base, `_base` is the root base."""
import numpy as np
import pytest

import ember
from tests.helpers import assert_close


def _base():
    return ember.arange(24.0).reshape(2, 3, 4).clone()


def _cbase():
    return ember.tensor(np.arange(12.0).reshape(3, 4) + 1j * np.arange(12.0).reshape(3, 4))


# each entry: name, base factory, view function
VIEWS = [
    ("view", _base, lambda x: x.view(6, 4)),
    ("view_as", _base, lambda x: x.view_as(ember.empty(4, 6))),
    ("view_dtype", _base, lambda x: x.view(ember.int32)),
    ("reshape_viewable", _base, lambda x: x.reshape(-1)),
    ("reshape_as", _base, lambda x: x.reshape_as(ember.empty(24))),
    ("flatten", _base, lambda x: x.flatten(1)),
    ("unflatten", _base, lambda x: x.unflatten(2, (2, 2))),
    ("ravel", _base, lambda x: x.ravel()),
    ("transpose", _base, lambda x: x.transpose(0, 2)),
    ("swapaxes", _base, lambda x: x.swapaxes(1, 2)),
    ("swapdims", _base, lambda x: x.swapdims(0, 1)),
    ("t", lambda: _base()[0], lambda x: x.t()),
    ("T", lambda: _base()[0], lambda x: x.T),
    ("mT", _base, lambda x: x.mT),
    ("H", lambda: _base()[0], lambda x: x.H),
    ("mH", _base, lambda x: x.mH),
    ("adjoint", _base, lambda x: x.adjoint()),
    ("permute", _base, lambda x: x.permute(2, 0, 1)),
    ("movedim", _base, lambda x: x.movedim(0, -1)),
    ("moveaxis", _base, lambda x: ember.moveaxis(x, (0, 1), (1, 0))),
    ("squeeze", lambda: _base()[:1], lambda x: x.squeeze()),
    ("squeeze_dims", lambda: _base()[:1], lambda x: x.squeeze((0, 1))),
    ("unsqueeze", _base, lambda x: x.unsqueeze(1)),
    ("narrow", _base, lambda x: x.narrow(2, 1, 2)),
    ("select", _base, lambda x: x.select(1, 2)),
    ("unbind", _base, lambda x: x.unbind(2)[1]),
    ("split", _base, lambda x: x.split(2, 2)[1]),
    ("split_sizes", _base, lambda x: x.split([1, 2], 1)[1]),
    ("chunk", _base, lambda x: x.chunk(2, 2)[1]),
    ("tensor_split", _base, lambda x: x.tensor_split([1, 3], 2)[1]),
    ("hsplit", _base, lambda x: x.hsplit(3)[2]),
    ("vsplit", _base, lambda x: x.vsplit(2)[1]),
    ("dsplit", _base, lambda x: x.dsplit([1])[1]),
    ("diagonal", _base, lambda x: x.diagonal(1, 1, 2)),
    ("unfold", _base, lambda x: x.unfold(2, 2, 2)),
    ("as_strided", _base, lambda x: x.as_strided((3, 2), (4, 1), 2)),
    ("real", _cbase, lambda x: x.real),
    ("imag", _cbase, lambda x: x.imag),
    ("view_as_real", _cbase, lambda x: ember.view_as_real(x)),
    ("view_as_complex", lambda: _base().view(12, 2), lambda x: ember.view_as_complex(x)),
    ("atleast_3d", lambda: _base()[0], lambda x: ember.atleast_3d(x)),
    ("view_of_view", _base, lambda x: x.transpose(0, 1).select(0, 1).unsqueeze(0)),
]

READ_ONLY_VIEWS = [
    ("expand", lambda: ember.arange(3.0).reshape(3, 1).clone(), lambda x: x.expand(2, 3, 4)),
    ("expand_as", lambda: ember.arange(4.0), lambda x: x.expand_as(ember.empty(3, 4))),
    ("broadcast_to", lambda: ember.arange(4.0), lambda x: ember.broadcast_to(x, (2, 4))),
    ("broadcast_tensors", lambda: ember.arange(4.0), lambda x: ember.broadcast_tensors(x, ember.ones(2, 1))[0]),
    ("meshgrid", lambda: ember.arange(4.0), lambda x: ember.meshgrid(x, ember.ones(3), indexing="ij")[0]),
]

IDS = [v[0] for v in VIEWS]


def _root(x):
    return x._base if x._base is not None else x


@pytest.mark.parametrize("name,make,fn", VIEWS, ids=IDS)
def test_view_shares_memory_both_ways(name, make, fn):
    base = make()
    v = fn(base)
    assert np.shares_memory(v.numpy(), base.numpy())
    before = base.numpy().copy()
    v.numpy()[...] = 0  # a write through the view is seen by the base ...
    assert not np.array_equal(base.numpy(), before)
    base.numpy()[...] = 7 + 7j if base.is_complex() else 7  # ... and a write to the base by the view
    assert v.numpy().all()


@pytest.mark.parametrize("name,make,fn", VIEWS + READ_ONLY_VIEWS, ids=IDS + [v[0] for v in READ_ONLY_VIEWS])
def test_view_base_is_the_root_base(name, make, fn):
    base = make()
    v = fn(base)
    assert v._base is _root(base)
    assert np.shares_memory(v.numpy(), base.numpy())


@pytest.mark.parametrize("name,make,fn", VIEWS, ids=IDS)
def test_in_place_on_view_bumps_the_shared_version(name, make, fn):
    base = make()
    v = fn(base)
    other = base.view(base.shape)
    before = base._version
    v.mul_(1)
    assert base._version == v._version == other._version == before + 1
    base.mul_(1)
    assert v._version == other._version == before + 2


@pytest.mark.parametrize("name,make,fn", READ_ONLY_VIEWS, ids=[v[0] for v in READ_ONLY_VIEWS])
def test_expanded_views_see_writes_to_the_base(name, make, fn):
    base = make()
    v = fn(base)
    base.add_(1)
    assert v._version == base._version == 1
    expected = np.broadcast_to(base.numpy(), v.shape) if name != "meshgrid" else \
        np.broadcast_to(base.numpy()[:, None], v.shape)
    assert np.array_equal(v.numpy(), expected)


def test_in_place_through_view_is_seen_by_base_values():
    base = ember.zeros(3, 4)
    base.t().select(0, 1).add_(5)
    assert_close(base[:, 1], [5.0, 5.0, 5.0])
    base.diagonal().fill_(2)
    assert_close(ember.diagonal(base), [2.0, 2.0, 2.0])
    for row in base.unbind(0):
        row.mul_(2)
    assert base.numpy()[0, 0] == 4.0 and base.numpy()[0, 1] == 10.0


def test_reshape_copies_exactly_where_view_raises():
    x = ember.arange(6.0).reshape(2, 3)
    y = x.t()
    with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
        y.view(6)
    r = y.reshape(6)
    assert r._base is None and not np.shares_memory(r.numpy(), x.numpy())
    assert_close(r, [0.0, 3.0, 1.0, 4.0, 2.0, 5.0])
    # splitting or merging contiguous dims of a non-contiguous tensor is still a view
    z = ember.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
    assert z.view(4, 6)._base is z._base
    assert z.reshape(2, 2, 6)._base is z._base


def test_view_raises_where_torch_raises():
    x = ember.arange(24.0).reshape(2, 3, 4)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.transpose(0, 1).view(-1)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x[:, :, :2].view(12)
    x[:, :2].view(2, 8)  # merging dims that are contiguous with each other is fine
    x.transpose(1, 2).view(2, 4, 3, 1)


def test_contiguous_views_and_strides():
    x = ember.arange(24.0).reshape(2, 3, 4)
    assert x.is_contiguous() and x.stride() == (12, 4, 1) and x.storage_offset() == 0
    t = x.transpose(0, 2)
    assert not t.is_contiguous() and t.stride() == (1, 4, 12)
    s = x.select(1, 2)
    assert s.stride() == (12, 1) and s.storage_offset() == 8
    n = x.narrow(2, 1, 2)
    assert n.stride() == (12, 4, 1) and n.storage_offset() == 1 and not n.is_contiguous()
    d = x.diagonal(1, 1, 2)
    assert d.stride() == (12, 5) and d.storage_offset() == 1
    u = x.unfold(2, 2, 1)
    assert u.shape == (2, 3, 3, 2) and u.stride() == (12, 4, 1, 1)
    e = ember.ones(3, 1).expand(2, 3, 4)
    assert e.stride() == (0, 1, 0)


def test_contiguous_returns_self_or_copy():
    x = ember.ones(2, 3)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.is_contiguous() and y._base is None


def test_view_of_requires_grad_tensor_flows_gradient_to_base():
    w = ember.ones(2, 3, requires_grad=True)
    v = w.view(3, 2).t().select(0, 1)
    assert v._base is w and v.requires_grad
    (v * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert_close(w.grad, [[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])


def test_views_in_no_grad_do_not_require_grad():
    w = ember.ones(2, 3, requires_grad=True)
    with ember.no_grad():
        v = w.view(6)
    assert not v.requires_grad and v._base is w


def test_multi_output_views_get_gradients_for_unused_outputs_as_zeros():
    x = ember.arange(6.0).requires_grad_()
    _a, b, _c = x.split(2)
    (b * 3).sum().backward()
    assert_close(x.grad, [0.0, 0.0, 3.0, 3.0, 0.0, 0.0])
    y = ember.arange(6.0).reshape(3, 2).requires_grad_()
    rows = y.unbind(0)
    rows[2].sum().backward()
    assert_close(y.grad, [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])


def test_iteration_uses_unbind_views():
    x = ember.arange(6.0).reshape(3, 2)
    rows = list(x)
    assert len(rows) == 3 and all(r._base is x._base for r in rows)
    rows[1].add_(10)
    assert_close(x[1], [12.0, 13.0])


def test_saved_view_modified_in_place_is_detected():
    w = ember.ones(3, requires_grad=True)
    base = w * 1
    y = base.exp()  # exp saves its output
    with ember.no_grad():
        y.view(3).mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("name,args,shape,stride", [
    ("squeeze_", (), (3,), (1,)),
    ("unsqueeze_", (0,), (1, 3, 1), (3, 1, 1)),
    ("t_", (), (1, 3), (1, 1)),
    ("transpose_", (0, 1), (1, 3), (1, 1)),
    ("swapdims_", (0, 1), (1, 3), (1, 1)),
    ("swapaxes_", (0, 1), (1, 3), (1, 1)),
    ("as_strided_", ((2,), (2,)), (2,), (2,)),
])
def test_in_place_view_ops_change_layout_and_bump_version(name, args, shape, stride):
    x = ember.arange(3.0).reshape(3, 1).clone()
    assert getattr(x, name)(*args) is x
    assert x.shape == shape and x.stride() == stride and x._version == 1


def test_in_place_view_op_keeps_history_and_refuses_leaves():
    w = ember.ones(2, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w.squeeze_()
    y = w * 2
    y.t_()
    assert y.shape == (1, 2) and y.grad_fn.name() == "TBackward0"
    (y * ember.tensor([[1.0, 2.0]])).sum().backward()
    assert_close(w.grad, [[2.0], [4.0]])


def test_expanded_views_are_read_only():
    x = ember.ones(3, 1)
    for v in (x.expand(3, 4), x.expand(2, 3, 1), ember.ones(3).expand(1, 3)):
        assert not v.numpy().flags.writeable


def test_copy_errors_name_the_mismatch():
    with pytest.raises(RuntimeError, match="The size of tensor a \\(3\\) must match the size of tensor b \\(2\\) at "
                                           "non-singleton dimension 1"):
        ember.zeros(2, 3).copy_(ember.ones(2))
    with pytest.raises(RuntimeError, match="output with shape \\[2\\] doesn't match the broadcast shape \\[3, 2\\]"):
        ember.zeros(2).copy_(ember.ones(3, 2))
    with pytest.raises(TypeError, match="copy_\\(\\): argument 'other' \\(position 1\\) must be Tensor, not "
                                        "numpy.ndarray"):
        ember.zeros(2).copy_(np.ones(2))
    w = ember.ones(3, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="output with shape \\[2\\] doesn't match the broadcast shape \\[3, 2\\]"):
        ember.zeros(2).copy_(w)  # the recorded (differentiable) copy reports the same
