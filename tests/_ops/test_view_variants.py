"""The *_copy and *_scatter forms of the view ops: values, fresh memory, gradients (gradcheck) and errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def _x():
    return ember.arange(6.0, dtype=ember.float64).view(2, 3).requires_grad_()


@pytest.mark.parametrize("make, want", [
    (lambda x: ember.slice_copy(x, 1, 0, 2), [[0, 1], [3, 4]]),
    (lambda x: ember.slice_copy(x, 0, None, None, 2), [[0, 1, 2]]),
    (lambda x: ember.permute_copy(x, (1, 0)), [[0, 3], [1, 4], [2, 5]]),
    (lambda x: ember.t_copy(x), [[0, 3], [1, 4], [2, 5]]),
    (lambda x: ember.transpose_copy(x, 0, 1), [[0, 3], [1, 4], [2, 5]]),
    (lambda x: ember.as_strided_copy(x, (2, 2), (1, 2)), [[0, 2], [1, 3]]),
    (lambda x: ember.diagonal_copy(x), [0, 4]),
    (lambda x: ember.narrow_copy(x, 1, 1, 2), [[1, 2], [4, 5]]),
    (lambda x: x.narrow_copy(1, 1, 2), [[1, 2], [4, 5]]),
    (lambda x: ember.select_copy(x, 1, 2), [2, 5]),
    (lambda x: ember.squeeze_copy(x.view(1, 6)), [0, 1, 2, 3, 4, 5]),
    (lambda x: ember.unsqueeze_copy(x, 0), [[[0, 1, 2], [3, 4, 5]]]),
    (lambda x: ember.unfold_copy(x, 1, 2, 1), [[[0, 1], [1, 2]], [[3, 4], [4, 5]]]),
    (lambda x: ember.view_copy(x, [3, 2]), [[0, 1], [2, 3], [4, 5]]),
    (lambda x: ember.split_copy(x, 1)[1], [[3, 4, 5]]),
    (lambda x: ember.split_with_sizes_copy(x, [1, 2], 1)[1], [[1, 2], [4, 5]]),
    (lambda x: ember.unbind_copy(x, 1)[2], [2, 5]),
])
def test_copies_hold_the_views_values_in_fresh_contiguous_memory(make, want):
    x = _x()
    y = make(x)
    assert y.tolist() == want
    assert y.is_contiguous() and y._base is None
    assert not np.shares_memory(y.detach().numpy(), x.detach().numpy())
    assert gradcheck(lambda t: make(t), (x,))


def test_complex_views_and_detach_copies():
    x = _x()
    assert ember.view_as_real_copy(x.detach().to(ember.complex128))[1].tolist() == [[3, 0], [4, 0], [5, 0]]
    assert ember.view_as_complex_copy(x.detach().view(3, 2)).tolist() == [1j, 2 + 3j, 4 + 5j]
    d = ember.detach_copy(x)  # a detached copy (torch marks it requires_grad, then cannot differentiate it)
    assert d.tolist() == x.tolist() and not d.requires_grad and d._base is None
    out = ember.empty(2, 2, dtype=ember.float64)
    assert ember.permute_copy(x.detach()[:, :2], (1, 0), out=out) is out and out.tolist() == [[0, 3], [1, 4]]


@pytest.mark.parametrize("make, want", [
    (lambda z, s: ember.diagonal_scatter(z, s), [[1, 0, 0], [0, 2, 0], [0, 0, 3]]),
    (lambda z, s: ember.diagonal_scatter(z, s[:2], 1), [[0, 1, 0], [0, 0, 2], [0, 0, 0]]),
    (lambda z, s: ember.select_scatter(z, s, 0, 1), [[0, 0, 0], [1, 2, 3], [0, 0, 0]]),
    (lambda z, s: ember.slice_scatter(z, s.view(1, 3).expand(2, 3), 0, 1), [[0, 0, 0], [1, 2, 3], [1, 2, 3]]),
    (lambda z, s: z.slice_scatter(s.view(3, 1), 1, 1, 2), [[0, 1, 0], [0, 2, 0], [0, 3, 0]]),
    (lambda z, s: ember.as_strided_scatter(z, s[:2], (2,), (1,)), [[1, 2, 0], [0, 0, 0], [0, 0, 0]]),
])
def test_scatters_write_src_into_a_copy(make, want):
    z = ember.zeros(3, 3, dtype=ember.float64, requires_grad=True)
    s = ember.arange(1.0, 4.0, dtype=ember.float64, requires_grad=True)
    y = make(z, s)
    assert y.tolist() == want
    assert z.tolist() == [[0.0] * 3] * 3  # the input is left as it was
    w = ember.arange(9.0, dtype=ember.float64).view(3, 3)
    (y * w).sum().backward()
    written = np.array(want) != 0
    assert_grad = np.where(written, 0.0, w.numpy())  # the input's gradient is zero where src was written
    np.testing.assert_array_equal(z.grad.numpy(), assert_grad)
    zz, ss = ember.randn(3, 3, dtype=ember.float64, requires_grad=True), ember.randn(3, dtype=ember.float64,
                                                                                    requires_grad=True)
    assert gradcheck(make, (zz, ss)) and gradgradcheck(make, (zz, ss))


def test_scatter_src_of_another_size_is_refused_as_torch():
    with pytest.raises(RuntimeError, match=r"expected src to have a size equal to the slice of self. src size = "
                                           r"\[3\], slice size = \[2\]"):
        ember.select_scatter(ember.zeros(2, 2), ember.ones(3), 0, 0)
    with pytest.raises(RuntimeError, match=r"src size = \[3, 2\], slice size = \[2, 2\]"):
        ember.slice_scatter(ember.zeros(2, 2), ember.ones(3, 2), 0)
