"""Printing tensors exactly as torch does (torch/_tensor_str.py's rules, on NumPy arrays).

# NOTE [ Printing rules ]
One formatter per tensor (two for complex: real and imaginary parts) looks at the nonzero finite values (only the
edge items when the tensor is summarized) and picks a mode: integer-valued floats print as "1.", scientific
notation when max/min > 1000, max > 1e8 or min < 1e-4, fixed point with `precision` digits otherwise. Every
element is right-aligned to the widest one; rows wrap at `linewidth`; dims nest with line breaks and indentation.
Values are formatted as Python floats (the exact double of each element), as torch's `.tolist()` gives them.
"""
import math

import numpy as np

from ._backend import host
from ._dtype import FROM_NP, default_complex, get_default_dtype, int64, legacy_type_name  # noqa: F401 (re-exported)
from ._dtype import bool as _bool

__all__ = ["get_printoptions", "legacy_type_name", "printoptions", "set_printoptions", "tensor_repr"]

class _PrintOptions:
    __slots__ = ("edgeitems", "linewidth", "precision", "sci_mode", "threshold")

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Same as `torch.set_printoptions` (like torch, every call also sets sci_mode, None by default)."""
    o = PRINT_OPTS
    if profile is not None and profile in _PROFILES:
        o.precision, o.threshold, o.edgeitems, o.linewidth = _PROFILES[profile]
    if precision is not None:
        o.precision = precision
    if threshold is not None:
        o.threshold = threshold
    if edgeitems is not None:
        o.edgeitems = edgeitems
    if linewidth is not None:
        o.linewidth = linewidth
    o.sci_mode = sci_mode


def get_printoptions():
    """Same as `torch._tensor_str.get_printoptions`."""
    return {k: getattr(PRINT_OPTS, k) for k in _PrintOptions.__slots__}


class printoptions:
    """Same as `torch._tensor_str.printoptions`: set print options inside a with-block."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs

    def __enter__(self):
        self.old = get_printoptions()
        set_printoptions(**self.kwargs)

    def __exit__(self, *exc):
        set_printoptions(**self.old)


class _Formatter:
    """Chooses int/fixed/scientific mode and the column width from a tensor's values (see NOTE above)."""
    __slots__ = ("floating", "int_mode", "max_width", "sci_mode")

    def __init__(self, arr, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in arr.ravel().tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = arr.ravel().astype(np.float64)
        vals = vals[np.isfinite(vals) & (vals != 0)]
        if vals.size == 0:
            return
        self._choose(vals)

    def _choose(self, vals):
        absv = np.abs(vals)
        vmin, vmax = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        sci = PRINT_OPTS.sci_mode
        self.sci_mode = (vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4) if sci is None else sci
        p = PRINT_OPTS.precision
        # the widest value decides the column width; checking the extremes and signs is not enough for
        # fixed point (rounding may add a digit), so every value is formatted, as torch does
        if self.sci_mode:
            fmt, extra = f"{{:.{p}e}}", 0
        elif self.int_mode:
            fmt, extra = "{:.0f}", 1
        else:
            fmt, extra = f"{{:.{p}f}}", 0
        width = max(len(fmt.format(v)) for v in vals.tolist()) + extra
        self.max_width = max(self.max_width, width)

    def format(self, value):
        if self.floating:
            if self.sci_mode:
                ret = "{:{}.{}e}".format(value, self.max_width, PRINT_OPTS.precision)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = "{:.{}f}".format(value, PRINT_OPTS.precision)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _format_complex(v, f1, f2):
    real = f1.format(v.real)
    imag = (f2.format(v.imag) + "j").lstrip()
    # a sign is already there for negative numbers and for +/-0.0
    if imag[0] == "+" or imag[0] == "-":
        return real + imag
    return real + "+" + imag


def _format_value(v, f1, f2):
    return f1.format(v) if f2 is None else _format_complex(v, f1, f2)


def _vector_str(arr, indent, summarize, f1, f2):
    elem_len = f1.max_width + 2
    if f2 is not None:
        elem_len += f2.max_width + 1  # the imaginary part and its "j"
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / elem_len))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = ([_format_value(v, f1, f2) for v in arr[:e].tolist()] + [" ..."]
                + [_format_value(v, f1, f2) for v in arr[-e:].tolist()])
    else:
        data = [_format_value(v, f1, f2) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nd_str(arr, indent, summarize, f1, f2):
    ndim = arr.ndim
    if ndim == 0:
        return _format_value(arr.item(), f1, f2)
    if ndim == 1:
        return _vector_str(arr, indent, summarize, f1, f2)
    n = arr.shape[0]
    e = PRINT_OPTS.edgeitems
    if summarize and n > 2 * e:
        rows = list(range(e)) + [None] + list(range(n - e, n))
    else:
        rows = range(n)
    parts = ["..." if i is None else _nd_str(arr[i], indent + 1, summarize, f1, f2) for i in rows]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _summarized(arr):
    """The edge items torch's formatter looks at when a tensor is summarized."""
    if arr.ndim == 0:
        return arr
    e = PRINT_OPTS.edgeitems
    if arr.ndim == 1:
        # torch takes x[:e] and x[-e:]; for e == 0, x[-0:] is the whole vector
        return np.concatenate((arr[:e], arr[-e:])) if arr.shape[0] > 2 * e else arr
    if not e:
        return arr[(slice(0, 0),) * arr.ndim]
    for axis in range(arr.ndim):
        n = arr.shape[axis]
        if n > 2 * e:
            arr = np.take(arr, list(range(e)) + list(range(n - e, n)), axis=axis)
    return arr


def _to_printable(arr):
    if arr.__class__ is not np.ndarray:
        arr = host(arr)
    if arr.dtype.kind == "V":  # bfloat16 (ml_dtypes): exact in float32
        arr = arr.astype(np.float32)
    return arr


def _tensor_str(arr, indent):
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    shown = _summarized(arr) if summarize else arr
    if arr.dtype.kind == "c":
        f1 = _Formatter(shown.real, True)
        f2 = _Formatter(shown.imag, True)
        return _nd_str(arr, indent, summarize, f1, f2)
    f1 = _Formatter(shown, arr.dtype.kind == "f")
    return _nd_str(arr, indent, summarize, f1, None)


def _add_suffixes(text, suffixes, indent):
    out = [text]
    last_len = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last_len + len(s) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last_len = indent + len(s)
        else:
            out.append(", " + s)
            last_len += len(s) + 2
    out.append(")")
    return "".join(out)


def _class_names(cls):
    return [c.__name__ for c in cls.__mro__ if c.__module__.startswith("ember")]


def tensor_repr(t, *, tensor_contents=None):
    """Same as torch's Tensor.__repr__, with "ember." where torch prints "torch."."""
    from ._tensor import Tensor
    cls = type(t)
    plain = cls is Tensor or (cls.__name__ == "Parameter" and cls.__module__.startswith("ember"))
    prefix = "tensor(" if plain else cls.__name__ + "("
    indent = len(prefix)
    suffixes = []
    dev = t.device
    if dev.type != "cpu":  # torch shows the device unless it is the default ("cpu")
        suffixes.append(f"device='{dev}'")
    dt = FROM_NP[t._data.dtype]
    default = get_default_dtype()
    arr = t._data
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if dt is not default:
            suffixes.append(f"dtype={dt}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if dt not in (default, default_complex(), int64, _bool):
            suffixes.append(f"dtype={dt}")
        body = _tensor_str(_to_printable(arr), indent)
    if tensor_contents is not None:
        body = tensor_contents
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name().rsplit('::', 1)[-1]}>")  # torch shows the class name
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    text = _add_suffixes(prefix + body, suffixes, indent)
    if not plain and "Parameter" in _class_names(cls):
        text = f"Parameter({text})"
    return text
