"""Regenerate tests/cuda/cupy_api.py: what the installed CuPy has, as data for the fake CuPy of the tests.

Run with CuPy installed (no GPU needed): python3 tests/cuda/make_cupy_api.py

Names and signatures come from introspection. Behaviours that are decided before a kernel launches (which ufunc
methods exist, which dtypes ufunc.at takes, which dtypes an array may have, which methods warn, the messages of
the errors) are observed by calling CuPy on arrays whose "device" memory is host memory, through a custom
allocator: CuPy checks those things before it touches the GPU, so no GPU or driver is needed.
"""
import inspect
import os
import pprint
import re
import warnings

import cupy
import cupyx
import cupyx.scipy.special
import ml_dtypes
import numpy as np
from cupy.cuda import memory

HERE = os.path.dirname(os.path.abspath(__file__))
_KEEP = []


def _host_alloc(size):
    buf = np.empty(max(size, 1) + 256, np.uint8)
    _KEEP.append(buf)
    return memory.MemoryPointer(memory.UnownedMemory(buf.ctypes.data, size, buf, device_id=0), 0)


def _outcome(fn):
    """('ok' | exception class name, message, [warning messages]) of calling fn; a failure to reach the GPU
    counts as 'ok': CuPy accepted the call and went on to launch a kernel."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            fn()
            kind, msg = "ok", ""
        except Exception as e:  # noqa: BLE001 - every outcome is data here
            kind, msg = type(e).__name__, str(e)
            if kind in ("CUDARuntimeError", "CUDADriverError") or "libcu" in msg:
                kind, msg = "ok", ""
    return kind, msg, [f"{x.category.__name__}: {x.message}" for x in w]


def _params_of_signature(sig):
    """Accepted keyword names of a signature, or None when it takes **kwargs (anything goes)."""
    names = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.append(p.name)
    return tuple(n for n in names if n != "self")


def _params_of_docstring(fn):
    """Cython methods carry their signature on the docstring's first line: 'ndarray.sum(self, axis=None, ...)'."""
    doc = (getattr(fn, "__doc__", None) or "").strip().splitlines()
    m = re.match(r"[\w.]*\((.*)\)", doc[0]) if doc else None
    if m is None:
        return None
    names = []
    for part in m.group(1).split(","):
        part = part.split("=")[0].strip()
        if not part or part.startswith("*") and not part.startswith("**"):
            continue
        if part.startswith("**"):
            return None
        names.append(part.split()[-1])  # 'int axis' -> 'axis'
    return tuple(n for n in names if n != "self")


def _params(fn):
    try:
        return _params_of_signature(inspect.signature(fn))
    except (TypeError, ValueError):
        return _params_of_docstring(fn)


def functions(mod):
    """name -> accepted keyword names (None: any) of the public callables of a module; ufuncs map to 'ufunc'."""
    out = {}
    for name in sorted(dir(mod)):
        obj = getattr(mod, name)
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        if isinstance(obj, cupy.ufunc):
            out[name] = "ufunc"
        elif isinstance(obj, type):
            out[name] = "type"
        elif callable(obj):
            out[name] = _params(obj)
    return out


def ndarray_api():
    """cupy.ndarray's public methods (name -> keyword names) and its other attributes."""
    methods, attrs = {}, []
    for name in sorted(dir(cupy.ndarray)):
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        obj = inspect.getattr_static(cupy.ndarray, name)
        if name.startswith("__"):
            attrs.append(name)
        elif callable(obj) and not isinstance(obj, (property, type)) and type(obj).__name__ != "getset_descriptor":
            methods[name] = _params(getattr(cupy.ndarray, name))
        else:
            attrs.append(name)
    return methods, attrs


def ufunc_methods():
    """For each ufunc method, the ufuncs on which CuPy implements it (NotImplementedError elsewhere); for 'at',
    the dtypes it takes."""
    names = sorted(n for n in dir(cupy) if isinstance(getattr(cupy, n), cupy.ufunc))
    a = cupy.ndarray((3,), np.float64)
    i = cupy.ndarray((3,), np.int64)
    found = {"reduce": [], "accumulate": [], "reduceat": [], "outer": [], "at": {}}
    for name in names:
        uf = getattr(cupy, name)
        if uf.nin != 2 or uf.nout != 1:
            continue
        calls = {"reduce": lambda: uf.reduce(a), "accumulate": lambda: uf.accumulate(a),
                 "reduceat": lambda: uf.reduceat(a, i), "outer": lambda: uf.outer(a, a)}
        for method, call in calls.items():
            if _outcome(call)[0] != "NotImplementedError":
                found[method].append(name)
        if _outcome(lambda: uf.at(a, i, a))[0] == "NotImplementedError":
            continue
        dtypes = []
        for dt in OK_DTYPES:
            x = cupy.ndarray((3,), _dtype(dt))
            if _outcome(lambda: uf.at(x, i, x))[0] == "ok":
                dtypes.append(dt)
        found["at"][name] = dtypes
    return found


DTYPE_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
               "float32", "float64", "complex64", "complex128", "bfloat16", "float8_e4m3fn", "float8_e5m2",
               "float8_e4m3fnuz", "float8_e5m2fnuz", "int4", "uint4", "longdouble", "object", "str_",
               "datetime64"]


_ODD_DTYPES = {"object": object, "str_": "U2", "datetime64": "M8[s]", "longdouble": np.longdouble}


def _dtype(name):
    return np.dtype(_ODD_DTYPES.get(name) or getattr(ml_dtypes, name, None) or getattr(np, name))


OK_DTYPES = []


def dtypes():
    """The dtypes a CuPy array may have, and CuPy's message for the others."""
    ok, rejected = OK_DTYPES, {}
    for name in DTYPE_NAMES:
        kind, msg, _ = _outcome(lambda: cupy.ndarray((2,), _dtype(name)))
        if kind == "ok":
            ok.append(name)
        else:
            rejected[name] = f"{kind}: {msg}"
    return ok, rejected


def ufunc_keywords():
    """The keyword arguments a ufunc call takes."""
    a = cupy.ndarray((3,), np.float64)
    values = {"out": a, "dtype": np.float64, "casting": "same_kind", "where": cupy.ndarray((3,), np.bool_),
              "_where": cupy.ndarray((3,), np.bool_), "order": "C", "subok": True, "signature": None}
    return [k for k, v in values.items() if _outcome(lambda: cupy.add(a, a, **{k: v}))[0] == "ok"]


def float_atomic_minmax():
    """The C function CuPy's float and double atomicMax/atomicMin (maximum.at, minimum.at) compare with: fmaxf
    and fminf take floats, so float64 values are rounded to float32, and NaN loses to any number."""
    with open(os.path.join(os.path.dirname(cupy.__file__), "_core", "include", "cupy", "atomics.cuh")) as f:
        src = f.read()
    out = {}
    for op in ("Max", "Min"):
        for typ in ("float", "double"):
            body = re.search(rf"__device__ {typ} atomic{op}\({typ}\* address.*?\n}}", src, re.S)
            call = re.search(r"\b(f(?:max|min)f?|max|min)\(", body.group(0)) if body else None
            out[f"{op.lower()} {typ}"] = call.group(1) if call else None
    return out


def _bf16_result(uf):
    """The dtype CuPy's ufunc uf answers for bfloat16 operands: that of its first loop whose operand types bfloat16
    casts to safely (bool and int64 operands, such as where's condition or round's decimals, are not bfloat16)."""
    bf16 = np.dtype(ml_dtypes.bfloat16)
    for loop in uf.types:
        ins, outs = loop.split("->")
        floats = [c for c in ins if c not in "?q"]
        if floats and all(np.can_cast(bf16, np.dtype(c)) for c in floats):
            return np.dtype(outs[0]).name
    return None


def bfloat16_gaps():
    """The routines whose kernels have no bfloat16 loop, so that CuPy computes bfloat16 operands in a wider loop and
    answers that loop's dtype (float32, say): the public ufuncs, and the functions and methods built on a private
    one."""
    from cupy._core import _routines_math, core
    from cupy._logic import comparison
    from cupy._sorting import search
    ufuncs = {n: getattr(cupy, n) for n in dir(cupy) if isinstance(getattr(cupy, n), cupy.ufunc)}
    ufuncs.update({"where": search._where_ufunc, "clip": _routines_math._clip, "around": core._round_ufunc,
                   "round": core._round_ufunc, "isclose": comparison._is_close})
    gaps = {}
    for name, uf in sorted(ufuncs.items()):
        if not any("E" in loop for loop in uf.types):
            result = _bf16_result(uf)
            if result is not None and result != "bool":
                gaps[name] = result
    # Python routines that answer cupy.where(...) of their input (tril, triu) inherit where's widening
    for name in sorted(dir(cupy)):
        fn = getattr(cupy, name)
        if name != "where" and inspect.isfunction(fn) and re.search(r"return cupy\.where\(", inspect.getsource(fn)):
            gaps[name] = gaps["where"]
    return gaps


def behaviours():
    """CuPy's answers to the misuses the fake reproduces (exception class and message, or warnings)."""
    a = cupy.ndarray((3,), np.float64)
    i = cupy.ndarray((3,), np.int64)
    checks = {
        "np.asarray(device array)": lambda: np.asarray(a),
        "np.array([device 0-d, device 0-d])": lambda: np.array([cupy.ndarray((), np.float64)] * 2),
        "a.fill(non-scalar numpy array)": lambda: a.fill(np.ones(3)),
        "a[1:] = non-scalar numpy array": lambda: a.__setitem__(slice(1, None), np.ones(2)),
        "a[1:] = list": lambda: a.__setitem__(slice(1, None), [1.0, 2.0]),
        "a[index array] = numpy array": lambda: a.__setitem__(i, np.ones(3)),
        "cupy.where(Python bool, x, y)": lambda: cupy.where(True, a, a),
        "cupy.where(Python int, x, y)": lambda: cupy.where(1, a, a),
        "cupy.where(numpy bool, x, y)": lambda: cupy.where(np.True_, a, a),
        "operator.index(device 0-d)": lambda: [0][cupy.ndarray((), np.int64)],
        "a.scatter_add": lambda: a.scatter_add(i, a),
        "a.scatter_max": lambda: a.scatter_max(i, a),
        "a.scatter_min": lambda: a.scatter_min(i, a),
        "cupyx.scatter_add": lambda: cupyx.scatter_add(a, i, a),
        "cupy.multiply.at": lambda: cupy.multiply.at(a, i, a),
        "cupy.maximum.accumulate": lambda: cupy.maximum.accumulate(a),
    }
    return {k: _outcome(f) for k, f in checks.items()}


def main():
    memory.set_allocator(_host_alloc)
    methods, attrs = ndarray_api()
    ok_dtypes, rejected = dtypes()  # first: ufunc_methods tries each dtype CuPy takes
    data = {
        "VERSION": cupy.__version__,
        "FUNCTIONS": {
            "cupy": functions(cupy),
            "cupy.linalg": functions(cupy.linalg),
            "cupy.fft": functions(cupy.fft),
            "cupy.random": functions(cupy.random),
            "cupy.lib.stride_tricks": functions(cupy.lib.stride_tricks),
            "cupyx": functions(cupyx),
            "cupyx.scipy.special": functions(cupyx.scipy.special),
        },
        "CONSTANTS": [n for n in sorted(dir(cupy)) if not n.startswith("_") and not callable(getattr(cupy, n))
                      and not inspect.ismodule(getattr(cupy, n))],
        "RANDOM_STATE_METHODS": {n: _params(getattr(cupy.random.RandomState, n))
                                 for n in sorted(dir(cupy.random.RandomState)) if not n.startswith("_")},
        "NDARRAY_METHODS": methods,
        "NDARRAY_ATTRIBUTES": attrs,
        "UFUNC_METHODS": ufunc_methods(),
        "UFUNC_KEYWORDS": ufunc_keywords(),
        "FLOAT_ATOMIC_MINMAX": float_atomic_minmax(),
        "DTYPES": ok_dtypes,
        "REJECTED_DTYPES": rejected,
        "BEHAVIOURS": behaviours(),
        "NO_BFLOAT16_LOOP": bfloat16_gaps(),
    }
    lines = [f'"""What CuPy {cupy.__version__} has (the cupy-cuda12x wheel, introspected and probed without a GPU).',
             "", "Generated by tests/cuda/make_cupy_api.py: do not edit. The fake CuPy of the tests follows it.", '"""',
             ""]
    for key, value in data.items():
        text = pprint.pformat(value, width=114, compact=True, sort_dicts=False)
        lines += [f"{key} = (", *("    " + line for line in text.splitlines()), ")", ""]
    with open(os.path.join(HERE, "cupy_api.py"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
