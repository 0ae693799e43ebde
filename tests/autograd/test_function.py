"""ember.autograd.Function: custom forward/backward recorded and differentiated like built-in ops."""
import gc
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck
from ember.autograd.function import FunctionCtx, once_differentiable
from ember.autograd.graph import Node


def _x(*values, dtype=ember.float64):
    return ember.tensor(list(values), dtype=dtype, requires_grad=True)


class Scale(Function):
    """y = x * k with a non-tensor k."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


class Cube(Function):
    """y = x^3, saving the input; backward written with ember ops (so it is differentiable again)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


class Exp(Function):
    """Saves its output."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


# ----- the basics -----

def test_forward_backward_and_grad_fn_name():
    x = _x(1.0, 2.0, 3.0)
    y = Scale.apply(x, 2.5)
    np.testing.assert_allclose(y.detach().numpy(), [2.5, 5.0, 7.5])
    assert y.grad_fn.name() == "ScaleBackward"
    assert type(y.grad_fn).__name__ == "ScaleBackward"
    assert isinstance(y.grad_fn, Node) and isinstance(y.grad_fn, FunctionCtx)
    assert y.requires_grad and not y.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.5, 2.5, 2.5])


def test_ctx_is_the_grad_fn_and_keeps_attributes():
    x = _x(1.0)
    y = Scale.apply(x, 4.0)
    assert y.grad_fn.k == 4.0
    fn, nr = y.grad_fn.next_functions[0]
    assert fn.variable is x and nr == 0
    assert len(y.grad_fn.next_functions) == 1  # only tensor arguments get an edge


def test_forward_runs_without_grad_and_needs_input_grad():
    seen = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen["grad"] = ember.is_grad_enabled()
            seen["needs"] = ctx.needs_input_grad
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            seen["bwd_needs"] = ctx.needs_input_grad
            return g, None, None

    x = _x(1.0)
    out = Probe.apply(x, ember.tensor([2.0], dtype=ember.float64), 3)
    assert seen == {"grad": False, "needs": (True, False, False)}
    out.sum().backward()
    assert seen["bwd_needs"] == (True, False, False)
    with ember.no_grad():  # torch reports requires_grad even under no_grad
        Probe.apply(x, x, 1)
    assert seen["needs"] == (True, True, False)


def test_custom_function_gradcheck_and_gradgradcheck():
    x = ember.tensor(np.random.default_rng(0).standard_normal(5), requires_grad=True)
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))


def test_double_backward_through_custom_backward():
    x = _x(2.0)
    (g,) = ember.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [12.0])
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [12.0])  # d2(x^3) = 6x


def test_saved_output_is_rebuilt_with_this_node_as_history():
    x = _x(1.0, 2.0)
    y = Exp.apply(x)
    (s,) = y.grad_fn.saved_tensors
    assert s.grad_fn is y.grad_fn and s.requires_grad
    np.testing.assert_allclose(s.detach().numpy(), np.exp([1.0, 2.0]))
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), np.exp([1.0, 2.0]))


def test_composes_with_builtin_ops_both_sides():
    x = _x(0.5, -1.0)
    w = _x(2.0, 3.0)
    loss = (Cube.apply(x * w) + w).sum()
    loss.backward()
    xw = np.array([1.0, -3.0])
    np.testing.assert_allclose(x.grad.numpy(), 3 * xw ** 2 * [2.0, 3.0])
    np.testing.assert_allclose(w.grad.numpy(), 3 * xw ** 2 * [0.5, -1.0] + 1)


def test_function_vjp_alias_and_vjp_only():
    assert Function.vjp is Function.backward

    class ByVjp(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = _x(1.0)
    (g,) = ember.autograd.grad(ByVjp.apply(x).sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0])

    class Both(ByVjp):
        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(x).sum().backward()


def test_missing_forward_or_backward():
    class NoForward(Function):
        pass

    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        NoForward.apply(_x(1.0))

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="You must implement either the backward or vjp method"):
        NoBackward.apply(_x(1.0)).sum().backward()


def test_instantiating_warns_and_calling_raises():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        fn = Scale()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method"):
        fn(_x(1.0))


# ----- setup_context style and arguments -----

class MulSC(Function):
    @staticmethod
    def forward(x, k=3.0):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.save_for_backward(x, output)

    @staticmethod
    def backward(ctx, g):
        _, out = ctx.saved_tensors
        assert out.grad_fn is ctx
        return g * ctx.k, None


def test_setup_context_style_with_defaults_and_keywords():
    x = _x(1.0, 2.0)
    y = MulSC.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), [3.0, 6.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    x.grad = None
    MulSC.apply(x, k=5.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_keyword_arguments_of_classic_forward():
    x = _x(1.0)
    y = Scale.apply(x, k=7.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [7.0])


def test_non_tensor_argument_gradient_must_be_none():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2, but the "
                                           "corresponding forward input was not a Variable"):
        Bad.apply(_x(1.0), 2.0).sum().backward()


@pytest.mark.parametrize("returned, expected_msg", [
    (lambda g: g, r"function BadBackward returned an incorrect number of gradients \(expected 2, got 1\)"),
    (lambda g: (g, None, g), (r"function BadBackward returned an incorrect number of gradients \(expected 2, "
                              r"got 3\)")),
])
def test_wrong_number_of_gradients(returned, expected_msg):
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return returned(g)

    with pytest.raises(RuntimeError, match=expected_msg):
        Bad.apply(_x(1.0), 2.0).sum().backward()


def test_extra_trailing_none_gradients_are_allowed():
    class Extra(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = _x(1.0)
    Extra.apply(x, 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0])


def test_gradient_of_wrong_type_or_shape():
    class Float(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 3.0

    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got float\)"):
        Float.apply(_x(1.0)).sum().backward()

    class Shape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match=r"Function ShapeBackward returned an invalid gradient at index 0 - got "
                                           r"\[\] but expected shape compatible with \[2\]"):
        Shape.apply(_x(1.0, 2.0)).backward()


def test_broadcast_gradient_is_summed_and_cast_like_builtins():
    class Broad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g.expand(3, 2).double()

    x = ember.tensor([1.0, 2.0], requires_grad=True)
    Broad.apply(x).backward()
    assert x.grad.dtype is ember.float32
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_save_for_backward_rejects_non_tensors_and_allows_none():
    class BadSave(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        BadSave.apply(_x(1.0))

    class SaveNone(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(None, x * 5)  # an intermediate, neither input nor output
            return x * 2

        @staticmethod
        def backward(ctx, g):
            none, t = ctx.saved_tensors
            assert none is None
            return g * t

    x = _x(1.0, 2.0)
    SaveNone.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 10.0])


# ----- saved tensors: versions and freeing -----

def test_saved_tensors_after_backward_raise_torch_error():
    x = _x(1.0)
    y = Cube.apply(x)
    assert y.grad_fn.saved_tensors[0] is x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = y.grad_fn.saved_tensors
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def test_retain_graph_keeps_saved_tensors():
    x = _x(1.0)
    y = Cube.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_saved_tensors_are_empty_during_forward():
    class Peek(Function):
        @staticmethod
        def forward(ctx, x):
            assert ctx.saved_tensors == ()
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    Peek.apply(_x(1.0))


def test_modified_saved_input_raises_version_error():
    x = _x(1.0, 2.0)
    h = x * 1
    y = Cube.apply(h)
    h.mul_(2)
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been modified "
                                           "by an inplace operation: .* is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_modified_saved_output_raises_version_error():
    x = _x(1.0, 2.0)
    y = Exp.apply(x)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()


# ----- outputs: several, non-differentiable, inputs returned, dirty -----

class Split(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        return ga * 2 + gb * 3


def test_multiple_outputs_and_output_nr():
    x = _x(1.0, 2.0)
    a, b = Split.apply(x)
    assert a.grad_fn is b.grad_fn
    assert (a.output_nr, b.output_nr) == (0, 1)
    (a * 10 + b).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [23.0, 23.0])


def test_unused_output_gets_zeros_or_none_without_materialization():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(gb)
            return ga * 2, None

    x = _x(1.0, 2.0)
    Two.apply(x, True)[0].sum().backward()
    np.testing.assert_array_equal(seen[-1].numpy(), [0.0, 0.0])
    assert seen[-1].dtype is ember.float64
    Two.apply(x, False)[0].sum().backward()
    assert seen[-1] is None


def test_non_tensor_and_integer_outputs():
    seen = []

    class Mixed(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3, (x * 2).long(), 5, None

        @staticmethod
        def backward(ctx, *grads):
            seen.append(grads)
            return grads[0] * 3

    x = _x(1.0, 2.0)
    y, i, five, nothing = Mixed.apply(x)
    assert five == 5 and nothing is None
    assert y.requires_grad and not i.requires_grad and i.grad_fn is None
    y.sum().backward()
    _, g1, g2, g3 = seen[0]
    np.testing.assert_array_equal(g1.numpy(), [0, 0])
    assert g1.dtype is ember.int64 and g2 is None and g3 is None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_mark_non_differentiable():
    seen = []

    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            idx = x * 0
            ctx.mark_non_differentiable(idx)
            return y, idx

        @staticmethod
        def backward(ctx, gy, gidx):
            seen.append(gidx)
            return gy * 2

    x = _x(1.0, 2.0)
    y, idx = Sort.apply(x)
    assert not idx.requires_grad and idx.grad_fn is None
    assert y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(seen[0].numpy(), [0.0, 0.0])


def test_input_returned_as_is_becomes_a_view():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x, y

        @staticmethod
        def backward(ctx, gx, gy):
            return gx * 2, gy

    x = _x(1.0, 2.0)
    other = ember.tensor([3.0, 4.0], dtype=ember.float64)
    a, b = Ident.apply(x, other)
    assert a is not x and a._base is x and a.grad_fn.name() == "IdentBackward"
    assert b._base is other and b.requires_grad  # an output of a recorded call requires grad, as in torch
    assert a.data_ptr() == x.data_ptr()
    a.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    with ember.no_grad():
        a, _ = Ident.apply(x, other)
    assert a is not x and a.grad_fn is None and a.data_ptr() == x.data_ptr()


class AddOne(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 5


def test_mark_dirty_gives_the_input_new_history():
    x = _x(1.0, 2.0)
    h = x * 1
    y = AddOne.apply(h)
    assert y is h
    assert h.grad_fn.name() == "AddOneBackward"
    assert h._version == 2  # add_ in forward, then mark_dirty's bump, as in torch
    np.testing.assert_allclose(h.detach().numpy(), [2.0, 3.0])
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_mark_dirty_leaf_raises_like_torch():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place "
                                           "operation."):
        AddOne.apply(_x(1.0))


def test_mark_dirty_without_returning_raises():
    class Hidden(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward method were not "
                                           "returned as output"):
        Hidden.apply(_x(1.0) * 1)


def test_mark_dirty_input_not_requiring_grad_joins_the_graph():
    class AddInto(Function):
        @staticmethod
        def forward(ctx, acc, x):
            acc.add_(x)
            ctx.mark_dirty(acc)
            return acc

        @staticmethod
        def backward(ctx, g):
            return g, g * 3

    acc = ember.zeros(2, dtype=ember.float64)
    x = _x(1.0, 2.0)
    out = AddInto.apply(acc, x)
    assert out is acc and acc.requires_grad and acc.grad_fn.name() == "AddIntoBackward"
    acc.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_mark_dirty_on_a_view_updates_the_base():
    x = _x(1.0, 2.0, 3.0)
    base = x * 1
    view = base[:2]
    AddOne.apply(view)
    np.testing.assert_allclose(base.detach().numpy(), [2.0, 3.0, 3.0])
    base.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0, 1.0])


def test_no_graph_when_nothing_requires_grad_or_in_no_grad():
    x = ember.tensor([1.0], dtype=ember.float64)
    y = Cube.apply(x)
    assert y.grad_fn is None and not y.requires_grad
    with ember.no_grad():
        y = Cube.apply(_x(1.0))
    assert y.grad_fn is None and not y.requires_grad
    np.testing.assert_allclose(y.numpy(), [1.0])


# ----- once_differentiable -----

class OnceCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        assert not ember.is_grad_enabled()
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


def test_once_differentiable_first_order_works():
    x = _x(2.0)
    OnceCube.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [12.0])
    (g,) = ember.autograd.grad(OnceCube.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad  # the incoming gradient did not require grad


def test_once_differentiable_second_order_raises():
    x = _x(2.0)
    y = OnceCube.apply(x)
    go = ember.ones(1, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(y, x, go, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "DelayedError"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()


# ----- hooks and memory -----

def test_node_hooks_on_custom_function():
    x = _x(1.0, 2.0)
    y = Scale.apply(x, 2.0)
    calls = []
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: calls.append(("post", gi[0].tolist(), go[0].tolist())))
    y.register_hook(lambda g: calls.append(("tensor", g.tolist())))
    y.sum().backward()
    assert calls == [("tensor", [1.0, 1.0]), ("pre", [1.0, 1.0]), ("post", [2.0, 2.0], [1.0, 1.0])]


def test_graph_is_freed_without_reference_cycles():
    x = _x(1.0, 2.0)
    y = Exp.apply(x)  # saves its own output: must not keep its node alive through a cycle
    node = weakref.ref(y.grad_fn)
    gc.disable()
    try:
        y.sum().backward()
        del y
        assert node() is None
    finally:
        gc.enable()


def test_subclass_of_a_function_gets_its_own_node_class():
    class Cube2(Cube):
        pass

    y = Cube2.apply(_x(1.0))
    assert y.grad_fn.name() == "Cube2Backward"
