"""Elementwise fusion of captured programs (NOTE [ Compiled regions ]): runs of elementwise steps become one kernel.

NOTE [ Elementwise fusion ]
A replayed program still calls one NumPy ufunc per step: about a microsecond each on small arrays, and one pass over
memory each on large ones. Where numba is installed and enabled (NOTE [ Compiled CPU kernels ]), a run of
consecutive steps that are elementwise on NumPy arrays of one shape and one float dtype (ufuncs of the table below,
the fused tanh/sigmoid backward kernels; Python numbers as the other operand) becomes ONE step: a generated loop
that computes every element of every step in registers and writes only the results something else reads (a later
step, the backward program, the outputs). The generated source performs the same float operations in the same
order as the steps (no fast-math), so + - * / agree with NumPy exactly; tanh/exp/log/sin/cos/sqrt come from the C
library instead of NumPy's SIMD loops and may differ in the last bit, which the verification of the program
(_verify in _region.py) tolerates. Kernels are cached by their source: in memory, and on disk as modules in the
user's cache directory, so that numba's own disk cache serves later processes.
"""
import hashlib
import importlib.util
import math
import os
import pathlib
import sys

import numpy as np

from .._backend import jit
from .._ops import _dispatch

__all__ = ["fuse"]

MAX_STEPS = 32  # steps per kernel: longer runs split (LLVM's compile time grows with the loop body)
DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# ufunc -> expression over operand names
_UFUNCS = {
    np.add: "({0} + {1})", np.subtract: "({0} - {1})", np.multiply: "({0} * {1})", np.true_divide: "({0} / {1})",
    np.negative: "(-{0})", np.square: "({0} * {0})", np.absolute: "abs({0})", np.tanh: "np.tanh({0})",
    np.exp: "np.exp({0})", np.log: "np.log({0})", np.sin: "np.sin({0})", np.cos: "np.cos({0})",
    np.sqrt: "np.sqrt({0})",
}
# fused backward kernels (unary.py), by op name, written as their NumPy sequences are
_NAMED = {"tanh_backward": "({0} * ({one} - {1} * {1}))", "sigmoid_backward": "({0} * (({one} - {1}) * {1}))"}


def _expr(op, nargs):
    """The expression template of op's forward, or None when op is not fusable."""
    fwd = op.fwd
    if fwd.__class__ is np.ufunc:
        return _UFUNCS.get(fwd) if fwd.nin == nargs else None
    if op.name in _NAMED and nargs == 2:
        return _NAMED[op.name]
    return None


def fuse(steps, meta, needed):
    """steps with runs of fusable elementwise steps replaced by one step each. meta: slot -> (shape, dtype, array
    class) of the first call; needed: slots read outside `steps` (outputs, gradients, the other program)."""
    if not jit.enabled():
        return steps
    reads_after = _reads_after(steps)
    out, run = [], []
    for k, step in enumerate(steps):
        key = _fusable(step, meta)
        if key is not None and run and key == run[0][1] and len(run) < MAX_STEPS:
            run.append((k, key))
            continue
        out += _flush(steps, run, meta, needed, reads_after)
        run = [(k, key)] if key is not None else []
        if key is None:
            out.append(step)
    out += _flush(steps, run, meta, needed, reads_after)
    return out


def _fusable(step, meta):
    """(shape, dtype) of a fusable step, else None."""
    op, template, reads, writes, single = step
    if not single or len(writes) != 1 or op.fwd is None:
        return None
    shape, dtype, cls = meta[writes[0]]
    if cls is not np.ndarray or dtype not in DTYPES or _expr(op, len(template)) is None:
        return None
    for pos, k, i in reads:
        if k is not None or meta[i][:3] != (shape, dtype, np.ndarray):
            return None
    read_pos = {pos for pos, _, _ in reads}
    for pos, a in enumerate(template):
        if pos not in read_pos and not (a.__class__ in (int, float, bool)):
            return None
    return shape, dtype


def _reads_after(steps):
    """last[k]: the slots read by steps k+1 onwards, as one set per position (built backwards)."""
    after = [None] * len(steps)
    seen = set()
    for k in range(len(steps) - 1, -1, -1):
        after[k] = frozenset(seen)
        seen.update(i for _, _, i in steps[k][2])
    return after


def _flush(steps, run, meta, needed, reads_after):
    if len(run) < 2:
        return [steps[k] for k, _ in run]
    shape, dtype = run[0][1]
    group = [steps[k] for k, _ in run]
    later = reads_after[run[-1][0]] | needed
    written = {step[3][0] for step in group}
    inputs = []
    for step in group:
        for _, _, i in step[2]:
            if i not in written and i not in inputs:
                inputs.append(i)
    outputs = [step[3][0] for step in group if step[3][0] in later]
    if not outputs:  # nothing reads the run's results (dead code): keep it as it was
        return group
    source, name = _source(group, inputs, outputs, dtype)
    kernel = _kernel(source, name)
    return [(_fused_op(kernel, shape, dtype, len(outputs)), [None] * len(inputs),
             tuple((p, None, i) for p, i in enumerate(inputs)), tuple(outputs), len(outputs) == 1)]


def _source(group, inputs, outputs, dtype):
    """Python source of a numba kernel computing the group elementwise over flat arrays."""
    cast = "np.float32" if dtype == np.float32 else "np.float64"
    names = {i: f"a{n}[j]" for n, i in enumerate(inputs)}
    body = []
    for t, (op, template, reads, writes, _) in enumerate(group):
        args = [f"{cast}({_literal(a)})" if a is not None else None for a in template]
        for pos, _, i in reads:
            args[pos] = names[i]
        expr = _expr(op, len(template)).format(*args, one=f"{cast}(1.0)")
        body.append(f"        t{t} = {expr}")
        names[writes[0]] = f"t{t}"
    for n, i in enumerate(outputs):
        body.append(f"        o{n}[j] = {names[i]}")
    params = [f"a{n}" for n in range(len(inputs))] + [f"o{n}" for n in range(len(outputs))]
    text = "\n".join(body)
    name = "fused_" + hashlib.sha1((str(dtype) + text + str(len(inputs))).encode()).hexdigest()[:16]
    source = (f"import numpy as np\nimport numba\n\n\n@numba.njit(cache=True, nogil=True, error_model='numpy')\n"
              f"def {name}({', '.join(params)}):\n    for j in range(o0.shape[0]):\n{text}\n")
    return source, name


def _literal(a):
    """Python source for the number a."""
    a = float(a)
    if math.isnan(a):
        return "np.nan"
    if math.isinf(a):
        return "np.inf" if a > 0 else "-np.inf"
    return repr(a)


_KERNELS = {}


def _kernel(source, name):
    """The compiled kernel of source: from memory, or from a module written to the cache directory (numba caches
    its machine code next to it), or, where that cannot be written, from source executed in memory."""
    k = _KERNELS.get(name)
    if k is not None:
        return k
    try:
        path = _cache_dir() / f"{name}.py"
        if not path.exists():
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(source)
            os.replace(tmp, path)  # atomic: processes racing write the same text
        spec = importlib.util.spec_from_file_location(f"ember_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # numba's disk cache imports the kernel's module by name
        spec.loader.exec_module(module)
        k = getattr(module, name)
    except OSError:
        namespace = {}
        exec(compile(source.replace("cache=True", "cache=False"), f"<{name}>", "exec"), namespace)  # noqa: S102
        k = namespace[name]
    _KERNELS[name] = k
    return k


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = pathlib.Path(base) / "ember" / "fused"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _fused_op(kernel, shape, dtype, nout):
    def fwd(*arrays):
        outs = [np.empty(shape, dtype) for _ in range(nout)]
        kernel(*[a.reshape(-1) for a in arrays], *[o.reshape(-1) for o in outs])
        return outs[0] if nout == 1 else tuple(outs)
    return _dispatch.Op("fused_elementwise", fwd)
