"""gradcheck / gradgradcheck: verdicts, messages and options as torch's."""
import time

import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck
from ember.autograd.gradcheck import GradcheckError

RNG = np.random.default_rng(0)


def _t(shape, requires_grad=True, dtype=np.float64):
    return ember.tensor(RNG.standard_normal(shape).astype(dtype), requires_grad=requires_grad)


def _c(shape, requires_grad=True):
    return ember.tensor(RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape), requires_grad=requires_grad)


def _function(forward, backward):
    """A custom Function from two lambdas (to plant wrong gradients)."""
    return type("Custom", (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward)}).apply


# ----- real functions -----

def test_passes_on_correct_gradients_with_several_inputs_and_outputs():
    a, b = _t((2, 3)), _t(3)
    assert gradcheck(lambda x, y: ((x * y).exp().sum(0), x * 2), (a, b))
    assert gradcheck(lambda x: x.exp(), a)  # a bare tensor is accepted as the inputs


def test_non_tensor_and_non_differentiable_inputs_are_passed_through():
    a = _t(3)
    c = _t(3, requires_grad=False)
    assert gradcheck(lambda x, k, y, name: x * k + y, (a, 2.5, c, "tag"))


def test_mismatch_message_names_output_and_input():
    wrong = _function(lambda ctx, x, y: x * y, lambda ctx, g: (g, g))  # d(xy)/dx is y, not 1
    a, b = _t(3), _t(3, requires_grad=False)
    with pytest.raises(GradcheckError, match=r"(?s)Jacobian mismatch for output 0 with respect to input 0,\n"
                                             r"numerical:tensor\(.*\nanalytical:tensor\(") as info:
        gradcheck(wrong, (a, b))
    assert isinstance(info.value, RuntimeError)
    assert gradcheck(wrong, (a, b), raise_exception=False) is False


def test_input_index_counts_differentiable_inputs():
    wrong = _function(lambda ctx, x, y: x * y, lambda ctx, g: (g * 0 + 1, g))  # right for neither input
    ok_first = _function(lambda ctx, x, y: x * y, lambda ctx, g: (g * 2, g))
    a = ember.tensor([2.0, 2.0], dtype=ember.float64, requires_grad=True)
    b = _t(2)
    with pytest.raises(GradcheckError, match="with respect to input 0"):
        gradcheck(wrong, (a, b))
    with pytest.raises(GradcheckError, match="with respect to input 1"):
        gradcheck(ok_first, (b * 0 + 2, a))  # the first input needs no grad; the second is input 1 of two
    with pytest.raises(GradcheckError, match="with respect to input 0"):
        gradcheck(lambda x, y: ok_first(y, x), (b, a))


def test_output_index_counts_differentiable_outputs():
    wrong = _function(lambda ctx, x: (x * 2, x * 3), lambda ctx, ga, gb: ga * 2 + gb * 2)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 1 with respect to input 0"):
        gradcheck(wrong, _t(3))


def test_tolerances():
    almost = _function(lambda ctx, x: x * 2, lambda ctx, g: g * 2.001)
    x = _t(4)
    assert not gradcheck(almost, x, atol=1e-5, rtol=1e-5, raise_exception=False)
    assert gradcheck(almost, x, atol=1e-5, rtol=1e-2)
    assert gradcheck(almost, x, atol=1e-2, rtol=0)
    assert gradcheck(lambda t: t * t, x, eps=1e-3)


def test_warns_for_non_double_inputs():
    x = _t(3, dtype=np.float32)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision floating point or "
                                         "complex. This check will likely fail"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-2, atol=1e-2)


def test_needs_an_input_requiring_grad():
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient, but none "
                                         "of them have requires_grad=True."):
        gradcheck(lambda t: t * 2, (_t(3, requires_grad=False),))


def test_rejects_overlapping_inputs():
    x = ember.tensor([1.0], dtype=ember.float64).expand(3).requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda t: t * 2, (x,))


def test_non_contiguous_input_and_output_aliasing_input():
    x = _t((3, 4)).detach().t().requires_grad_()
    assert not x.is_contiguous()
    assert gradcheck(lambda t: t * t, (x,))
    assert gradcheck(lambda t: t, (x,))
    assert gradcheck(lambda t: t.t(), (x,))


def test_inputs_are_restored_exactly():
    x = _t((2, 2))
    before = x.detach().numpy().copy()
    version = x._version
    gradcheck(lambda t: t.exp(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == version and x.grad is None


def test_no_differentiable_outputs():
    x = _t(3)
    assert gradcheck(lambda t: ember.ones(2, dtype=ember.float64), (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,))


def test_non_reentrant_backward_and_nondet_tol():
    noise = iter(RNG.standard_normal(10000) * 1e-9)
    jitter = _function(lambda ctx, x: x * 2, lambda ctx, g: g * (2 + next(noise)))
    with pytest.raises(GradcheckError, match="Backward is not reentrant, i.e., running backward with same input and "
                                             "grad_output multiple times gives different values"):
        gradcheck(jitter, _t(3))
    assert gradcheck(jitter, _t(3), nondet_tol=1e-6)


def test_backward_not_multiplied_by_grad_output():
    class Ignores(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return ember.ones(3, dtype=ember.float64)  # right only where g == 1

    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(Ignores.apply, _t(3))


class InventsGradient(Function):
    """Two outputs; when the only gradient that arrived is zero, backward invents a non-zero one."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, ga, gb):
        if ga is None and gb is None:
            return None
        if gb is None:
            return ga * 2 if bool((ga != 0).any()) else ga + 1
        if ga is None:
            return gb * 3
        return ga * 2 + gb * 3


def test_check_undefined_grad():
    x = _t(3)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking"):
        with pytest.raises(GradcheckError, match="Expected all input grads to be undefined or zero when all output "
                                                 "grads are undefined or zero"):
            gradcheck(InventsGradient.apply, (x,))
    assert gradcheck(InventsGradient.apply, (x,), check_undefined_grad=False)


def test_backward_failing_on_a_missing_gradient_fails_gradcheck():
    class NoUndefined(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            return ga * 2 + gb * 3

    with pytest.raises(TypeError):  # raised by the backward itself, as in torch
        gradcheck(NoUndefined.apply, (_t(3),))


def test_option_flags():
    x = _t(3)
    assert gradcheck(lambda t: t * 2, (x,), check_batched_grad=True, check_grad_dtypes=True, masked=False)
    assert gradcheck(lambda t: (t * 2).sin(), (x,), check_forward_ad=True)
    assert gradcheck(lambda t: (t * 2).sin(), (x,), check_forward_ad=True, check_backward_ad=False)
    with pytest.raises(AssertionError, match="Expected at least one of check_forward_ad or check_backward_ad"):
        gradcheck(lambda t: t * 2, (x,), check_backward_ad=False)
    with pytest.raises(AssertionError, match="check_batched_grad=True requires check_backward_ad"):
        gradcheck(lambda t: t * 2, (x,), check_batched_grad=True, check_backward_ad=False, check_forward_ad=True)


# ----- fast mode -----

def test_fast_mode():
    a, b = _t((3, 4)), _t(4)
    assert gradcheck(lambda x, y: (x * y).exp().sum(0), (a, b), fast_mode=True)
    wrong = _function(lambda ctx, x: x * x, lambda ctx, g: g)
    with pytest.raises(GradcheckError, match=r"(?s)Jacobian mismatch for output 0 with respect to input 0,.*computed "
                                             r"\nin fast mode.*Numerical:.*Analytical:"):
        gradcheck(wrong, (a,), fast_mode=True)
    assert gradcheck(lambda z: z * z, (_c(3),), fast_mode=True)
    assert not gradcheck(_function(lambda ctx, z: z * z, lambda ctx, g: g * ctx_conj_missing(g)), (_c(3),),
                         fast_mode=True, raise_exception=False)


def ctx_conj_missing(g):
    return 2.0  # not 2 * conj(z): wrong for a holomorphic square


# ----- complex -----

@pytest.mark.parametrize("fn", [
    lambda z: z * z,                      # holomorphic
    lambda z: (z * z).sum(),              # C -> C scalar
    lambda z: z * z.conj(),               # real-valued, not holomorphic
    lambda z: z.abs(),                    # C -> R
    lambda z: (z.real * 2, z.imag * z.real),
], ids=["square", "sum", "abs2", "abs", "parts"])
def test_complex_inputs_pass(fn):
    assert gradcheck(fn, (_c(3),))


def test_real_input_complex_output():
    c = ember.tensor([1 + 2j, -0.5j, 3.0])
    assert gradcheck(lambda t: t * c, (_t(3),))
    assert gradcheck(lambda t: (t * c).sum(), (_t(3),))


def test_multiplication_by_complex_python_scalar():
    assert gradcheck(lambda t: t * (1 + 2j), (_t(3),))


def test_complex_output_mismatch_names_the_part():
    # the gradient of z*z under torch's convention is g * conj(2z); conj dropped here
    wrong = _function(lambda ctx, z: _save(ctx, z) * z, lambda ctx, g: g * 2 * ctx.z)
    with pytest.raises(GradcheckError, match="While considering the imaginary part of complex outputs only, Jacobian "
                                             "mismatch for output 0 with respect to input 0"):
        gradcheck(wrong, (_c(3),))
    right = _function(lambda ctx, z: _save(ctx, z) * z, lambda ctx, g: g * 2 * ctx.z.conj())
    assert gradcheck(right, (_c(3),))


def _save(ctx, z):
    ctx.z = z
    return z


# ----- gradgradcheck -----

def test_gradgradcheck_passes():
    a, b = _t((2, 3)), _t(3)
    assert gradgradcheck(lambda x, y: (x * y).exp().sum(0), (a, b))
    assert gradgradcheck(lambda x, y: (x * y).exp(), (a, b), gen_non_contig_grad_outputs=True)
    assert gradgradcheck(lambda x: x * x * x, (_t(3),), grad_outputs=(_t(3),))
    assert gradgradcheck(lambda z: z * z * z, (_c(3),))


def test_gradgradcheck_catches_wrong_second_derivative():
    class DetachedBackward(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() * x.detach()  # right value, but no second derivative

    x = _t(3)
    assert gradcheck(DetachedBackward.apply, (x,))
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradgradcheck(DetachedBackward.apply, (x,))
    assert gradgradcheck(DetachedBackward.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_flags():
    with pytest.raises(AssertionError, match="Expected at least one of check_fwd_over_rev or check_rev_over_rev"):
        gradgradcheck(lambda t: t * t, (_t(2),), check_rev_over_rev=False)


# ----- speed -----

def test_large_input_is_not_absurdly_slow():
    x = _t((20, 20))
    start = time.perf_counter()
    assert gradcheck(lambda t: (t * t).exp(), (x,))
    assert time.perf_counter() - start < 5.0
    start = time.perf_counter()
    assert gradcheck(lambda t: (t * t).exp(), (_t((100, 100)),), fast_mode=True)
    assert time.perf_counter() - start < 1.0
