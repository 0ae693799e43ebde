"""In-place ops on views: torch's refusals (leaf views, multi-output views, views made in no_grad mode, views a
custom Function returned, expanded tensors) and the histories of the ones it allows."""
import numpy as np
import pytest

import ember

LEAF_VIEW = "^a view of a leaf Variable that requires grad is being used in an in-place operation.$"
MULTI = (" This view is the output of a function that returns multiple views. Such functions do not allow the output "
         "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")
NO_GRAD = ("A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
           "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the "
           "view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
           "or both outside (if you want the inplace to be tracked).")
OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")


def _message(fn):
    with pytest.raises(RuntimeError) as e:
        fn()
    return str(e.value)


def _nonleaf(n=4):
    return ember.ones(n, requires_grad=True) * 1


# ----- views of a leaf -----

def test_view_of_a_leaf_made_by_a_view_op_is_refused():
    # x is itself a view (of the arange tensor): the leaf check must look at x, not at the storage's base
    x = ember.arange(6.).reshape(2, 3).requires_grad_()
    for write in (lambda: x[0].add_(1), lambda: x.view(-1).zero_(), lambda: x.add_(1), lambda: x.t().clamp_(0),
                  lambda: x[0].copy_(ember.zeros(3))):
        with pytest.raises(RuntimeError, match=LEAF_VIEW):
            write()
    np.testing.assert_array_equal(x.detach().numpy(), [[0, 1, 2], [3, 4, 5]])
    assert x._base.grad_fn is None and not x._base.requires_grad  # no CopySlices history given to the base


def test_leaf_that_requires_grad_is_refused_and_detach_is_not_a_view():
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
        ember.ones(3).detach().requires_grad_().add_(1)
    x = ember.ones(3, requires_grad=True)
    d = x.detach()
    w = ember.full((3,), 2.0, requires_grad=True)
    d.mul_(w)
    d.mul_(w)  # d has its own history now, x keeps none
    assert x.grad_fn is None and type(d.grad_fn).__name__ == "MulBackward0"
    np.testing.assert_array_equal(x.detach().numpy(), [4, 4, 4])


def test_view_of_a_plain_tensor_gets_copy_slices_history():
    a = ember.ones(3)
    v = a[:2]
    w = ember.tensor([2.0, 3.0], requires_grad=True)
    v.mul_(w)
    assert type(a.grad_fn).__name__ == "CopySlices" and type(v.grad_fn).__name__ == "AsStridedBackward0"
    a.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1, 1])


def test_in_place_on_a_stale_view_uses_the_bases_current_history():
    leaf = ember.ones(4, requires_grad=True)
    x = leaf * 1
    v = x[:2]
    x.mul_(3)  # v's history is stale now
    v.mul_(2)
    x.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [6, 6, 3, 3])


# ----- outputs of multi-output view ops -----

@pytest.mark.parametrize("make, nr, name", [
    (lambda t: t.split(2)[0], 0, "Split"),
    (lambda t: t.split(2)[1], 1, "Split"),
    (lambda t: t.split(4)[0], 0, "Split"),
    (lambda t: ember.split(t, [1, 3])[1], 1, "SplitWithSizes"),
    (lambda t: t.split_with_sizes([1, 3])[1], 1, "SplitWithSizes"),
    (lambda t: t.chunk(2)[1], 1, "Split"),
    (lambda t: t.unbind()[2], 2, "Unbind"),
    (lambda t: list(t.reshape(2, 2))[1], 1, "Unbind"),
    (lambda t: t.split(2)[1][0], 0, "Select"),  # a view of such an output
    (lambda t: t.split(2)[1].view(2), 0, "View"),
])
def test_multi_output_views_are_not_modified_in_place(make, nr, name):
    msg = f"Output {nr} of {name} is a view and is being modified inplace." + MULTI
    assert _message(lambda: make(_nonleaf()).mul_(2)) == msg
    assert _message(lambda: make(_nonleaf()).copy_(ember.zeros(make(_nonleaf()).shape))) == msg


def test_multi_output_view_checks_come_before_the_leaf_checks():
    x = ember.ones(4, requires_grad=True)
    assert _message(lambda: x.split(2)[1].clamp_(0)) == "Output 1 of Split is a view and is being modified inplace." \
        + MULTI
    t = _nonleaf()
    p = t.split(2)[1]
    t.mul_(2)  # the view is stale: still refused
    assert _message(lambda: p.clamp_(0)) == "Output 1 of Split is a view and is being modified inplace." + MULTI


def test_multi_output_views_allowed_without_grad_and_tensor_split():
    a = ember.ones(4)
    a.split(2)[1].mul_(2)
    np.testing.assert_array_equal(a.numpy(), [1, 1, 2, 2])
    t = _nonleaf()
    with ember.no_grad():
        t.split(2)[1].mul_(2)
    np.testing.assert_array_equal(t.detach().numpy(), [1, 1, 2, 2])
    t = _nonleaf()
    t.tensor_split(2)[1].mul_(3)  # torch's tensor_split views are ordinary slices
    t.sum().backward()
    t.split(2)[1].detach().mul_(2)  # a detached output is no view


# ----- views made in no_grad mode -----

@pytest.mark.parametrize("make_base", [lambda: ember.ones(3, requires_grad=True), lambda: _nonleaf(3)])
def test_view_made_in_no_grad_mode_is_not_modified_in_place_in_grad_mode(make_base):
    for write in (lambda v: v.clamp_(0), lambda v: v.copy_(ember.zeros(2)), lambda v: v.lerp_(ember.zeros(2), 0.5)):
        x = make_base()
        with ember.no_grad():
            v = x[:2]
        assert _message(lambda write=write, v=v: write(v)) == NO_GRAD
        np.testing.assert_array_equal(x.detach().numpy(), [1, 1, 1])
    x = make_base()
    with ember.no_grad():
        parts = x.split(2)
    assert _message(lambda: parts[0].clamp_(0)) == NO_GRAD


def test_view_made_in_no_grad_mode_allowed_in_no_grad_mode_and_detached():
    x = _nonleaf(3)
    with ember.no_grad():
        v = x[:2]
    with ember.no_grad():
        v.clamp_(max=0.5)
    np.testing.assert_array_equal(x.detach().numpy(), [0.5, 0.5, 1])
    v.detach().clamp_(max=0.25)
    np.testing.assert_array_equal(x.detach().numpy(), [0.25, 0.25, 1])
    a = ember.ones(3)
    with ember.no_grad():
        u = a[:2]
    u.clamp_(max=0.5)  # the base needs no grad: nothing to refuse
    np.testing.assert_array_equal(a.numpy(), [0.5, 0.5, 1])


def test_view_made_before_its_base_got_a_history_is_refused_as_a_leaf():
    leaf = ember.ones(4, requires_grad=True)
    a = ember.ones(4)
    v = a[:3]
    a[2:].mul_(leaf[2:])
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place"):
        v.clamp_(0)


def test_view_of_a_leaf_made_before_an_optimizer_step():
    p = ember.ones(3, requires_grad=True)
    v = p.view(-1)
    with ember.no_grad():
        p.mul_(2)
    with pytest.raises(RuntimeError, match=LEAF_VIEW):
        v.clamp_(0)


# ----- custom Function outputs -----

def test_input_returned_by_a_custom_function_is_not_modified_in_place():
    class Identity(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    y = Identity.apply(_nonleaf(3))
    assert _message(lambda: y.mul_(2)) == (
        "Output 0 of Identity is a view and is being modified inplace. This view was created inside a custom "
        "Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would "
        "override the custom backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function.")
    z = Identity.apply(_nonleaf(3)).clone()
    z.mul_(2)
    np.testing.assert_array_equal(z.detach().numpy(), [2, 2, 2])


# ----- expanded tensors -----

@pytest.mark.parametrize("write", [
    lambda t: t.add_(1), lambda t: t.clamp_(0), lambda t: t.copy_(ember.zeros(3)), lambda t: t.lerp_(t, 0.5),
    lambda t: t.mul_(ember.ones(3, requires_grad=True)),
])
@pytest.mark.parametrize("make", [
    lambda: ember.ones(1).expand(3), lambda: _nonleaf(1).expand(3), lambda: _nonleaf(1).expand(2, 3)[0],
])
def test_in_place_write_into_an_expanded_tensor(make, write):
    t = make()
    assert _message(lambda: write(t)) == OVERLAP
    np.testing.assert_array_equal(t.detach().numpy(), [1, 1, 1])


def test_expanded_view_of_a_leaf_reports_the_leaf_first():
    with pytest.raises(RuntimeError, match=LEAF_VIEW):
        ember.ones(1, requires_grad=True).expand(3).clamp_(0)


def test_multi_output_view_whose_base_changed_cannot_be_used():
    msg = ("Output 1 of Split is a view and its base or another view of its base has been modified inplace." + MULTI)
    t = _nonleaf()
    p = t.split(2)[1]
    t.mul_(2)
    assert _message(lambda: p.sum()) == msg
    assert _message(lambda: p.grad_fn) == msg
    t = _nonleaf()
    a, b = t.split(2)
    t[:2].mul_(3)  # another view of the base
    assert _message(lambda: b * 1) == msg
    t = _nonleaf()
    a, b = t.split(2)
    (a * b).sum().backward()  # unchanged outputs stay usable
    c = t.split(2)[0]
    with ember.no_grad():
        t.mul_(2)
    assert _message(lambda: c * 1) == msg.replace("Output 1", "Output 0")


def test_views_of_a_detached_tensor_are_not_views_of_its_source():
    p = ember.ones(3, requires_grad=True)
    d = p.detach()
    assert d._base is None
    d[0].clamp_(max=0.5)  # a view of d, which needs no grad: allowed in grad mode
    d.view(3)[1:].mul_(ember.full((2,), 2.0, requires_grad=True))
    np.testing.assert_array_equal(p.detach().numpy(), [0.5, 2, 2])
    assert p.grad_fn is None and p._version == 2 and type(d.grad_fn).__name__ == "CopySlices"
    x = ember.arange(4.)
    dv = x[1:].detach()  # as_strided still reads the storage from its start
    np.testing.assert_array_equal(dv.as_strided((2,), (1,), 1).numpy(), [1, 2])


@pytest.mark.parametrize("write", [
    lambda v: v.zero_(), lambda v: v.fill_(2.0), lambda v: v.fill_(ember.tensor(2.0)), lambda v: v.normal_(),
    lambda v: v.uniform_(), lambda v: v.bernoulli_(), lambda v: v.exponential_(),
    lambda v: v.__setitem__(0, 5.0), lambda v: v.__setitem__(ember.tensor([True, False, True]), 5.0),
], ids=["zero_", "fill_", "fill_tensor", "normal_", "uniform_", "bernoulli_", "exponential_", "setitem",
        "setitem_mask"])
def test_fills_samplers_and_setitem_refuse_a_no_grad_view_in_grad_mode(write):
    x = ember.ones(4, requires_grad=True)
    with ember.no_grad():
        v = x[:3]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        write(v)
    assert x.tolist() == [1.0, 1.0, 1.0, 1.0]   # nothing written
    with ember.no_grad():                # the same write inside no_grad is fine
        write(v)
    w = ember.zeros(2, 3)                # views of tensors outside the graph take the plain path
    write(w[0])
    assert w[1].tolist() == [0.0, 0.0, 0.0]
