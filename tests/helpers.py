"""Shared checks for op tests: forward against a NumPy reference, gradcheck and gradgradcheck in float64.

An op test is a table of OpSpec rows fed through these generic checks (the shape of tinygrad's
helper_test_op): one row per op, the same checks for all.
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import ember
from ember.autograd import gradcheck, gradgradcheck


@dataclass
class OpSpec:
    """One op under test.

    fn: ember function of the input tensors; ref: NumPy function of the input arrays (None: no forward check);
    inputs: callable(rng) -> list of float64 arrays (or a list of arrays); grad: run gradcheck; gradgrad: also
    gradgradcheck; nondiff: indices of inputs that must not require grad (integer indices, masks...).
    """
    name: str
    fn: Callable
    ref: Callable | None
    inputs: Callable | list
    grad: bool = True
    gradgrad: bool = False
    atol: float = 1e-6
    rtol: float = 1e-5
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-3
    nondiff: tuple = ()
    dtypes: tuple = (np.float32, np.float64)
    kwargs: dict = field(default_factory=dict)

    def arrays(self, seed=0):
        rng = np.random.default_rng(seed)
        return [np.array(a) for a in (self.inputs(rng) if callable(self.inputs) else self.inputs)]

    def __repr__(self):
        return self.name


def _tensors(spec, arrays, dtype=None, requires_grad=False):
    out = []
    for i, a in enumerate(arrays):
        if dtype is not None and a.dtype.kind == "f":
            a = a.astype(dtype)
        t = ember.tensor(a)
        if requires_grad and i not in spec.nondiff and a.dtype.kind in "fc":
            t.requires_grad_(True)
        out.append(t)
    return out


def check_forward(spec, dtype=np.float64):
    arrays = spec.arrays()
    expected = spec.ref(*[a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays])
    got = spec.fn(*_tensors(spec, arrays, dtype))
    assert_close(got, expected, atol=spec.atol if dtype == np.float64 else max(spec.atol, 1e-5),
                 rtol=spec.rtol if dtype == np.float64 else max(spec.rtol, 1e-4))


def check_grad(spec):
    ins = _tensors(spec, spec.arrays(), np.float64, requires_grad=True)
    assert gradcheck(spec.fn, ins, atol=spec.grad_atol, rtol=spec.grad_rtol)


def check_gradgrad(spec):
    ins = _tensors(spec, spec.arrays(), np.float64, requires_grad=True)
    assert gradgradcheck(spec.fn, ins, atol=spec.grad_atol, rtol=spec.grad_rtol)


def assert_close(got, expected, atol=1e-6, rtol=1e-5):
    """got: Tensor or tuple of tensors; expected: array-like or tuple."""
    if isinstance(got, (tuple, list)):
        assert isinstance(expected, (tuple, list)) and len(got) == len(expected), (got, expected)
        for g, e in zip(got, expected):
            assert_close(g, e, atol, rtol)
        return
    assert isinstance(got, ember.Tensor), f"expected a Tensor, got {type(got).__name__}"
    e = np.asarray(expected)
    g = np.asarray(got.detach().cpu()._data if got.dtype is not ember.bfloat16 else got.detach().float()._data)
    assert g.shape == e.shape, f"shape {g.shape} != expected {e.shape}"
    if e.dtype.kind in "biu":
        np.testing.assert_array_equal(g, e)
    else:
        np.testing.assert_allclose(g, e, atol=atol, rtol=rtol, equal_nan=True)
