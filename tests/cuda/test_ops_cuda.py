"""The core op tables run on 'cuda' and compared with the CPU: values, gradients, and results kept on the device.

On a machine without a GPU they run on the fake CuPy of tests/cuda/fake_cupy.py (NumPy underneath, but as strict
as CuPy about host arrays), which tests ember's device plumbing; on a GPU they run on real CuPy.
"""
import numpy as np
import pytest

import ember
from ember._device import DEFAULT_DEVICES
from tests._ops import test_binary, test_index, test_linalg, test_reduce, test_shape, test_sort, test_unary, test_views
from tests.helpers import OpSpec
from tests.linalg import test_linalg as test_linalg_pkg

TABLES = {
    "unary": test_unary.SPECS + test_unary.COMPLEX_SPECS,
    "binary": test_binary.SPECS,
    "reduce": test_reduce.SPECS,
    "shape": test_shape.VIEW_SPECS + test_shape.COPY_SPECS,
    "index": test_index.SPECS,
    "sort": test_sort.SPECS,
    "matmul": test_linalg.SPECS,
    "linalg": test_linalg_pkg.SPECS,
}
CASES = [pytest.param(spec, id=f"{family}-{spec.name}") for family, specs in TABLES.items() for spec in specs
         if isinstance(spec, OpSpec)]


def _flat(out):
    if isinstance(out, ember.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _inputs(spec, arrays, dev):
    out = []
    for i, a in enumerate(arrays):
        t = ember.tensor(a, device=dev)
        if spec.grad and i not in spec.nondiff and a.dtype.kind in "fc":
            t.requires_grad_(True)
        out.append(t)
    return out


def _run(spec, arrays, dev):
    """The op's outputs and the gradients of a fixed weighted sum of them (as host arrays), on one device."""
    ins = _inputs(spec, arrays, dev)
    if dev == "cpu":
        outs = _flat(spec.fn(*ins))
    else:
        DEFAULT_DEVICES.append(ember.device(dev))  # tensors the op's lambda creates itself go to the device too
        try:
            outs = _flat(spec.fn(*ins))
        finally:
            DEFAULT_DEVICES.pop()
    rng = np.random.default_rng(1)
    diff = [o for o in outs if isinstance(o, ember.Tensor) and o.requires_grad]
    weights = [rng.standard_normal(o.shape) + (1j * rng.standard_normal(o.shape) if o.is_complex() else 0)
               for o in diff]
    wanted = [t for t in ins if t.requires_grad]
    grads = []
    if diff and wanted:
        ws = [ember.tensor(w, dtype=o.dtype, device=dev) for w, o in zip(weights, diff)]
        grads = ember.autograd.grad(diff, wanted, ws, allow_unused=True)
    return ins, outs, grads


def _check_on_device(t, cp):
    assert type(t._data) is cp.ndarray, f"result is a {type(t._data).__name__}, not a device array"
    assert t.device.type == "cuda"


def _host(x):
    return x.detach().cpu().numpy() if isinstance(x, ember.Tensor) else x


def _tols(gpu, dtype):
    """The fake device computes with NumPy itself: results must agree to rounding. A real GPU sums and
    multiplies in other orders (cuBLAS, CuPy reductions)."""
    if getattr(gpu, "IS_FAKE", False):
        return {"rtol": 1e-7, "atol": 1e-9} if dtype == np.float64 else {"rtol": 1e-6, "atol": 1e-6}
    return {"rtol": 1e-6, "atol": 1e-8} if dtype == np.float64 else {"rtol": 1e-4, "atol": 1e-5}


def _compare(cpu, dev, gpu, tol):
    assert len(cpu) == len(dev)
    for c, d in zip(cpu, dev):
        assert (c is None) == (d is None)
        if isinstance(c, ember.Tensor):
            _check_on_device(d, gpu)
            assert d.dtype == c.dtype and d.shape == c.shape
            np.testing.assert_allclose(_host(d), _host(c), equal_nan=True, **tol)
        elif c is not None:
            assert d == c


@pytest.mark.parametrize("spec", CASES)
def test_op_matches_cpu(spec, gpu):
    """float64 forward values and gradients."""
    arrays = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in spec.arrays()]
    _, cpu_outs, cpu_grads = _run(spec, arrays, "cpu")
    _, dev_outs, dev_grads = _run(spec, arrays, "cuda")
    _compare(cpu_outs, dev_outs, gpu, _tols(gpu, np.float64))
    _compare(list(cpu_grads), list(dev_grads), gpu, _tols(gpu, np.float64))


@pytest.mark.parametrize("spec", [c for c in CASES if np.float32 in c.values[0].dtypes])
def test_op_matches_cpu_float32(spec, gpu):
    """float32 forward values."""
    arrays = [a.astype(np.float32) if a.dtype.kind == "f" else a for a in spec.arrays()]
    with ember.no_grad():
        cpu_outs = _flat(spec.fn(*_inputs(spec, arrays, "cpu")))
        DEFAULT_DEVICES.append(ember.device("cuda"))
        try:
            dev_outs = _flat(spec.fn(*_inputs(spec, arrays, "cuda")))
        finally:
            DEFAULT_DEVICES.pop()
    _compare(cpu_outs, dev_outs, gpu, _tols(gpu, np.float32))


def test_cross_device_error(gpu):
    a = ember.ones(3)
    b = ember.ones(3, device="cuda")
    msg = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    with pytest.raises(RuntimeError, match=msg):
        b + a
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a * b
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ember.matmul(b.reshape(1, 3), a.reshape(3, 1))


@pytest.mark.parametrize("name, make_base, view", test_views.VIEWS, ids=test_views.IDS)
def test_views_share_device_memory(name, make_base, view, gpu):
    """A view of a device tensor is a device view: writing through it changes the base; gradients flow back."""
    expected = view(make_base()).clone()
    DEFAULT_DEVICES.append(ember.device("cuda"))
    try:
        base = make_base()
        v = view(base)
        _check_on_device(v, gpu)
        np.testing.assert_array_equal(_host(v), _host(expected))
        before = float(base.abs().sum())
        v.zero_()
        assert float(v.abs().sum()) == 0
        assert float(base.abs().sum()) < before or float(expected.abs().sum()) == 0
        leaf = make_base().requires_grad_()
        out = view(leaf * 1)
        if out.requires_grad:
            (out * 2).abs().sum().backward()
            _check_on_device(leaf.grad, gpu)
    finally:
        DEFAULT_DEVICES.pop()
