"""ember.testing: same as torch.testing."""
import cmath
import collections.abc
import warnings

import numpy as np

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# torch's default tolerances by dtype name: (rtol, atol)
_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Failure(Exception):
    """A comparison failure: the exception type to raise, its message and the path of the failing item."""

    def __init__(self, kind, text, path=()):
        super().__init__(text)
        self.kind, self.text, self.path = kind, text, path

    def error(self, msg):
        if isinstance(msg, str):  # a string replaces the whole message
            return self.kind(msg)
        text = self.text
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([p]) for p in self.path)
        return self.kind(msg(text) if callable(msg) else text)


def _check_tolerance_args(rtol, atol, path):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                                   f"{'rtol' if rtol is None else 'atol'}.", path)


def _tolerances(names, rtol, atol):
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_text(kind, equal, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    lines = [f"{kind} are not {'equal' if equal else 'close'}!", "", extra]
    for name, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol), ("relative", rel_diff, rel_idx, rtol)):
        line = f"{name.title()} difference: {diff}" if idx is None else \
            f"Greatest {name} difference: {diff} at index {idx}"
        lines.append(line if equal else f"{line} (up to {tol} allowed)")
    return "\n".join(lines)


def _scalar_text(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_text("Scalars", rtol == 0 and atol == 0, f"Expected {expected} but got {actual}.",
                          abs_diff, None, atol, rel_diff, None, rtol)


# ----- the leaf comparisons: None, bools, numbers, tensor-likes -----

def _compare_none(a, e, path, opts):
    if not (a is None and e is None):
        raise _Failure(AssertionError, f"None mismatch: {a} is not {e}", path)


def _compare_bools(a, e, path, opts):
    a, e = bool(a), bool(e)
    if a is not e:
        raise _Failure(AssertionError, f"Booleans mismatch: {a} is not {e}", path)


def _compare_numbers(a, e, path, opts):
    a = a.item() if isinstance(a, np.number) else a
    e = e.item() if isinstance(e, np.number) else e
    rtol, atol = _tolerances([_NUMBER_DTYPES.get(type(a)), _NUMBER_DTYPES.get(type(e))], opts["rtol"], opts["atol"])
    if opts["check_dtype"] and type(a) is not type(e):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.", path)
    if a == e or (opts["equal_nan"] and cmath.isnan(a) and cmath.isnan(e)):
        return
    diff = abs(a - e)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(e):
        return
    raise _Failure(AssertionError, _scalar_text(a, e, rtol, atol), path)


def _as_tensor(x):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return x
    from .._ops.creation import as_tensor
    return as_tensor(x)


def _compare_tensors(a, e, path, opts):
    rtol, atol = _tolerances([a.dtype.name, e.dtype.name], opts["rtol"], opts["atol"])

    def differ(attr, x, y):
        raise _Failure(AssertionError, f"The values for attribute '{attr}' do not match: {x} != {y}.", path)
    if a.shape != e.shape:
        differ("shape", a.shape, e.shape)
    if opts["check_stride"] and a.stride() != e.stride():
        differ("stride()", a.stride(), e.stride())
    if opts["check_device"] and a.device != e.device:
        differ("device", a.device, e.device)
    if opts["check_dtype"] and a.dtype is not e.dtype:
        differ("dtype", a.dtype, e.dtype)
    av, ev = a.detach().cpu()._data, e.detach().cpu()._data
    if av.dtype != ev.dtype:
        from .._dtype import promote_types
        common = promote_types(a.dtype, e.dtype)
        av, ev = a.detach().cpu().to(common)._data, e.detach().cpu().to(common)._data
    matches = _isclose(av, ev, rtol, atol, opts["equal_nan"])
    if matches.all():
        return
    if av.ndim == 0:
        raise _Failure(AssertionError, _scalar_text(av.item(), ev.item(), rtol, atol), path)
    raise _Failure(AssertionError, _tensor_text(av, ev, matches, rtol, atol), path)


def _isclose(av, ev, rtol, atol, equal_nan):
    # torch.isclose: equal values (infinities included) match; otherwise both finite and within tolerance
    if av.dtype.kind in "biu":
        av, ev = av.astype(np.float64), ev.astype(np.float64)
    with np.errstate(all="ignore"):
        close = (av == ev) | (np.abs(av - ev) <= atol + rtol * np.abs(ev)) & np.isfinite(av) & np.isfinite(ev)
        if equal_nan:
            close |= np.isnan(av) & np.isnan(ev)
    return close


def _tensor_text(av, ev, matches, rtol, atol):
    """torch's report: counts, and the greatest differences computed in the tensors' own dtype."""
    shape, n, bad = matches.shape, matches.size, int(matches.size - matches.sum())
    av, ev, matches = av.reshape(-1), ev.reshape(-1), matches.reshape(-1)
    integral = av.dtype.kind in "biu"
    if integral:  # torch widens to int64; the relative difference is then in the default float dtype
        av, ev = av.astype(np.int64), ev.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(av - ev)
        abs_diff[matches] = 0
        if integral:
            from .._dtype import get_default_dtype
            fdt = get_default_dtype().name
            rel_diff = abs_diff.astype(fdt) / np.abs(ev).astype(fdt)
        else:
            rel_diff = abs_diff / np.abs(ev)
        rel_diff[matches] = 0
    i, j = int(np.argmax(abs_diff)), int(np.argmax(rel_diff))  # the first greatest (or first NaN), as torch.max

    def index(flat):
        return tuple(int(k) for k in np.unravel_index(flat, shape))
    return _mismatch_text("Tensor-likes", rtol == 0 and atol == 0,
                          f"Mismatched elements: {bad} / {n} ({bad / n:.1%})", abs_diff[i].item(), index(i), atol,
                          rel_diff[j].item(), index(j), rtol)


def _leaf_comparison(a, e, allow_subclasses):
    """The comparison for a pair of leaves, tried in torch's order, or None when none handles them."""
    from .._tensor import Tensor
    if a is None or e is None:
        return _compare_none
    if isinstance(a, (bool, np.bool_)) and isinstance(e, (bool, np.bool_)):
        return _compare_bools
    numbers = (int, float, complex, np.number)
    if isinstance(a, numbers) and isinstance(e, numbers) and not isinstance(a, Tensor) and not isinstance(e, Tensor):
        return _compare_numbers
    if not (isinstance(a, type(e)) or isinstance(e, type(a))):
        return None
    if not allow_subclasses and type(a) is not type(e):
        return None
    return _compare_tensors


def _collect(a, e, path, opts, out):
    """Flatten nested sequences and mappings into (comparison, actual, expected, path) leaves, as torch does."""
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if isinstance(a, seq) and not isinstance(a, str) and isinstance(e, seq) and not isinstance(e, str):
        if len(a) != len(e):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(a)} != {len(e)}", path)
        for i in range(len(a)):
            _collect(a[i], e[i], path + (i,), opts, out)
        return
    if isinstance(a, mapping) and isinstance(e, mapping):
        ka, ke = set(a.keys()), set(e.keys())
        if ka != ke:
            raise _Failure(AssertionError, "The keys of the mappings do not match:\nMissing keys in the actual "
                                           f"mapping: {sorted(ke - ka)}\nAdditional keys in the actual mapping: "
                                           f"{sorted(ka - ke)}", path)
        try:
            keys = sorted(ka)
        except Exception:  # noqa: BLE001 - unorderable keys keep their order, as in torch
            keys = list(ka)
        for k in keys:
            _collect(a[k], e[k], path + (k,), opts, out)
        return
    compare = _leaf_comparison(a, e, opts["allow_subclasses"])
    if compare is _compare_tensors:
        try:
            a, e = _as_tensor(a), _as_tensor(e)
        except Exception:  # noqa: BLE001 - whatever as_tensor refuses is "no comparison pair"
            compare = None
    if compare is not None and compare is not _compare_none and compare is not _compare_bools:
        _check_tolerance_args(opts["rtol"], opts["atol"], path)  # a lone rtol or atol fails before any comparison
    if compare is None:
        raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(a)} and {type(e)}.",
                       path)
    out.append((compare, a, e, path))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Same as `torch.testing.assert_close` (tensors, array-likes, numbers, None and nested sequences/mappings)."""
    opts = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
            "check_device": check_device, "check_dtype": check_dtype, "check_stride": check_stride}
    leaves = []
    try:
        _collect(actual, expected, (), opts, leaves)
        for compare, a, e, path in leaves:
            compare(a, e, path, opts)
    except _Failure as failure:
        raise failure.error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Same as `torch.testing.assert_allclose` (deprecated there too)."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
                  "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from .._ops.creation import tensor
    from .._tensor import Tensor
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        loose = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
        pairs = [loose.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """Same as `torch.testing.make_tensor`: uniform values in [low, high) (not the numbers torch draws)."""
    from .._ops.creation import size_args, tensor
    shape = size_args(shape)
    if low is not None and high is not None and low > high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
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
        arr = rng.integers(lo, max(hi, lo + 1), shape)
    if exclude_zero:
        arr = np.where(arr == 0, 1, arr)
    t = tensor(arr, dtype=dtype, device=device)
    if noncontiguous and t.numel() > 1:  # every other element of a twice-as-long last dim, as torch does
        wide = t.repeat_interleave(2, dim=-1)
        t = wide[..., ::2]
    if requires_grad:
        t.requires_grad_(True)
    return t
