"""ember.testing: same as torch.testing."""
import numpy as np

__all__ = ["assert_close", "make_tensor"]

# torch's default tolerances by dtype name: (rtol, atol)
_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}


def _to_tensor(x):
    from .._ops.creation import as_tensor
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return x
    return as_tensor(x)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Same as `torch.testing.assert_close` (tensors, numbers and nested sequences/mappings of them)."""
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if actual.keys() != expected.keys():
            raise AssertionError(f"The keys of the mappings do not match: {set(actual)} != {set(expected)}")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, msg=msg)
        return
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}.")
    scalars = not hasattr(actual, "shape") and not hasattr(expected, "shape")
    a, e = _to_tensor(actual), _to_tensor(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.")
    if check_dtype and not scalars and a.dtype is not e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.")
    if check_device and a.device != e.device:
        raise AssertionError(msg or f"The values for attribute 'device' do not match: {a.device} != {e.device}.")
    if rtol is None:
        rtol, atol = max((_TOLERANCES.get(t.dtype.name, (0.0, 0.0)) for t in (a, e)), key=lambda p: p[0])
    av = np.asarray(a.detach().cpu()._data, dtype=np.complex128 if a.is_complex() else np.float64) \
        if a.dtype.name != "bool" else np.asarray(a.detach()._data)
    ev = np.asarray(e.detach().cpu()._data, dtype=av.dtype)
    close = np.isclose(av, ev, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if close.all():
        return
    n_bad = int((~close).sum())
    diff = np.abs(av - ev)
    idx = np.unravel_index(int(np.argmax(np.where(close, -np.inf, diff))), av.shape) if av.ndim else ()
    kind = "Scalars" if av.ndim == 0 else "Tensor-likes"
    text = (f"{kind} are not close!\n\nMismatched elements: {n_bad} / {av.size} ({100.0 * n_bad / av.size:.1f}%)\n"
            f"Greatest absolute difference: {float(np.max(np.where(close, 0, diff)))} at index {tuple(int(i) for i in idx)} "
            f"(up to {atol} allowed)\nGreatest relative difference: "
            f"{float(np.max(np.where(close, 0, diff / np.maximum(np.abs(ev), 1e-300))))} (up to {rtol} allowed)")
    raise AssertionError(msg if isinstance(msg, str) else (msg(text) if callable(msg) else text))


def make_tensor(*shape, dtype, device="cpu", low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """Same as `torch.testing.make_tensor`: uniform values in [low, high)."""
    from .._ops.creation import size_args, tensor
    shape = size_args(shape)
    rng = np.random.default_rng()
    if dtype.name == "bool":
        arr = rng.integers(0, 2, shape).astype(bool)
    elif dtype.is_floating_point or dtype.is_complex:
        lo, hi = (-9.0 if low is None else low), (9.0 if high is None else high)
        arr = rng.uniform(lo, hi, shape)
        if dtype.is_complex:
            arr = arr + 1j * rng.uniform(lo, hi, shape)
    else:
        lo, hi = (-9 if low is None else int(low)), (10 if high is None else int(high))
        if not dtype.is_signed:
            lo = max(lo, 0)
        arr = rng.integers(lo, hi, shape)
    if exclude_zero:
        arr = np.where(arr == 0, 1, arr)
    t = tensor(arr, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t
