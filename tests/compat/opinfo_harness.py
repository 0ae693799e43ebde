"""PyTorch's OpInfo database (torch.testing._internal.common_methods_invocations.op_db) run against ember.

For each OpInfo whose torch callable is `torch.<name>` (or the Tensor method `<name>`), every sample OpInfo
generates on the CPU is converted to ember and run through ember's function of the same name: outputs must agree in
type, shape, dtype and value (float32 and float64 samples), and in float64 the gradients of sum(out * w) with
respect to every input that requires grad must agree too. OpInfos whose callable is a lambda around torch's
function (einsum, the random samplers, ...) are not compared here.

    python -m tests.compat.opinfo_harness [name-substring]   # prints each failing op and the totals
    python -m tests.compat.opinfo_harness --write-known      # rewrites opinfo_known_failures.py
"""
import math
import os
import sys
import traceback
import warnings

import numpy as np

import ember

torch = None  # imported by load()
_TOL = {"float32": (1e-5, 1e-5), "float64": (1e-7, 1e-7)}
DTYPES = ("float32", "float64")


class NotCompared(Exception):
    """The sample uses something the harness does not translate (sparse layouts, generators...)."""


def load():
    """op_db (needs torch and expecttest)."""
    global torch
    import torch as _torch
    torch = _torch
    from torch.testing._internal.common_methods_invocations import op_db
    unlock_backend_flags()
    return op_db


def unlock_backend_flags():
    """torch's test internals lock torch.backends' global flags (disable_global_flags) when imported and later;
    the other compat tests in the same process set them as programs do."""
    torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True  # the flag's own module


def op_id(op):
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _resolve(root, name):
    obj = root
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def ember_callable(op):
    """ember's counterpart of the OpInfo's callable, as f(input, *args, **kwargs); None where the OpInfo's callable
    is not torch's own function or method of that name; raises AttributeError where ember lacks it."""
    if _resolve(torch, op.name) is op.op:
        fn = _resolve(ember, op.name)
        if fn is None:
            raise AttributeError(f"ember has no {op.name}")
        return fn
    method = getattr(torch.Tensor, op.name, None)
    if method is not None and op.method_variant is method:
        if getattr(ember.Tensor, op.name, None) is None:
            raise AttributeError(f"ember.Tensor has no method {op.name}")
        return lambda x, *args, **kwargs: getattr(x, op.name)(*args, **kwargs)
    return None


KEEP_STORAGE = [False]  # set while an as_strided op's samples are converted


def to_ember(v, memo=None):
    """v with torch's tensors, dtypes, devices... as ember's; a tensor passed twice becomes one ember tensor."""
    memo = {} if memo is None else memo
    if isinstance(v, torch.Tensor):
        if id(v) in memo:
            return memo[id(v)]
        if v.layout in (torch.sparse_coo, torch.sparse_csr):
            t = _sparse_to_ember(v)
            memo[id(v)] = t
            return t
        if v.layout != torch.strided:
            raise NotCompared(f"{v.layout} tensor")
        if not v.requires_grad and any(st == 0 and n > 1 for st, n in zip(v.stride(), v.shape)):
            # an expanded tensor stays one: its elements share memory (torch refuses to write into it)
            cut = tuple(slice(0, 1) if st == 0 and n > 1 else slice(None) for st, n in zip(v.stride(), v.shape))
            t = to_ember(v[cut].contiguous(), memo).expand(*v.shape)
            memo[id(v)] = t
            return t
        if KEEP_STORAGE[0] and v._base is not None and v.dtype != torch.bfloat16:
            # as_strided reads the storage around a view: the view is rebuilt on a copy of the whole storage
            storage = torch.empty(0, dtype=v.dtype).set_(v.untyped_storage()).detach().numpy().copy()
            t = ember.from_numpy(storage).as_strided(tuple(v.shape), v.stride(), v.storage_offset()).detach()
        else:
            t = ember.from_numpy(_numpy(v).copy())
        if v.requires_grad:
            t.requires_grad_(True)
        memo[id(v)] = t
        return t
    if isinstance(v, torch.dtype):
        return getattr(ember, str(v).split(".")[1])
    if isinstance(v, torch.device):
        return ember.device(str(v))
    if isinstance(v, torch.layout):
        if v != torch.strided:
            raise NotCompared(f"{v} layout")
        return ember.strided
    if isinstance(v, torch.memory_format):
        return getattr(ember, str(v).split(".")[1])
    if isinstance(v, torch.Size):
        return tuple(v)
    if isinstance(v, torch.Generator):
        raise NotCompared("generator argument")
    if isinstance(v, torch.nn.Module):
        raise NotCompared(f"torch module argument {type(v).__name__}")
    if callable(v) and hasattr(v, "__name__") and (getattr(v, "__module__", None) or "").split(".")[0] == "torch":
        fn = _resolve(ember, ".".join(v.__module__.split(".")[1:] + [v.__name__])) or getattr(ember, v.__name__, None)
        if fn is None:
            raise NotCompared(f"torch function argument {v.__name__}")
        return fn
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*[to_ember(x, memo) for x in v])
    if isinstance(v, (list, tuple)):
        return type(v)(to_ember(x, memo) for x in v)
    if isinstance(v, dict):
        return {k: to_ember(x, memo) for k, x in v.items()}
    return v


def _sparse_to_ember(v):
    """A COO or CSR tensor of torch's as ember's (values requiring grad where v does)."""
    def part(p):
        return ember.from_numpy(_numpy(p).copy())

    if v.layout == torch.sparse_csr:
        t = ember.sparse_csr_tensor(part(v.crow_indices()), part(v.col_indices()), part(v.values()), tuple(v.shape))
    else:
        t = ember.sparse_coo_tensor(part(v._indices()), part(v._values()), tuple(v.shape),
                                    is_coalesced=v.is_coalesced())
    return t.requires_grad_(v.requires_grad)


def _numpy(t):
    """A torch tensor's values as NumPy (conjugate and negative bits resolved, zero tensors materialized)."""
    t = t.detach()
    if t._is_zerotensor():
        t = torch.zeros(t.shape, dtype=t.dtype)
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.resolve_conj().resolve_neg().numpy()


def _leaves(v, out):
    """Tensors requiring grad in v, in a fixed order."""
    if isinstance(v, (torch.Tensor, ember.Tensor)):
        if v.requires_grad:
            out.append(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            _leaves(x, out)
    elif isinstance(v, dict):
        for k in sorted(v, key=str):
            _leaves(v[k], out)
    return out


def _flat(v, out):
    """The leaves of v, sparse tensors (either library's) as their dense values."""
    if isinstance(v, (list, tuple)):
        for x in v:
            _flat(x, out)
    elif isinstance(v, torch.Tensor) and v.layout != torch.strided:
        out.append(v.to_dense())
    elif isinstance(v, ember.Tensor) and v.layout != ember.strided:
        out.append(v.to_dense())
    else:
        out.append(v)
    return out


def compare(e, t, rtol, atol, where="output"):
    """Raise AssertionError where ember's result e differs from torch's t (sparse ones: layout, then values)."""
    if isinstance(t, torch.Tensor) and t.layout != torch.strided:
        assert isinstance(e, ember.Tensor) and str(e.layout).split(".")[-1] == str(t.layout).split(".")[-1], \
            f"{where}: layout {getattr(e, 'layout', type(e).__name__)} vs torch {t.layout}"
        e, t = e.to_dense(), t.to_dense()
    if isinstance(t, torch.Tensor):
        assert isinstance(e, ember.Tensor), f"{where}: ember gave {type(e).__name__}, torch a Tensor"
        assert tuple(e.shape) == tuple(t.shape), f"{where}: shape {tuple(e.shape)} vs torch {tuple(t.shape)}"
        tn = str(t.dtype).split(".")[1]
        assert str(e.dtype).split(".")[1] == tn, f"{where}: dtype {e.dtype} vs torch {t.dtype}"
        want = _numpy(t)
        got = (e.float() if t.dtype == torch.bfloat16 else e).detach().numpy()
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
    elif isinstance(t, (list, tuple)):
        assert isinstance(e, (list, tuple)) and len(e) == len(t), f"{where}: {type(e).__name__} vs torch {t!r:.60}"
        for i, (a, b) in enumerate(zip(e, t)):
            compare(a, b, rtol, atol, f"{where}[{i}]")
    elif isinstance(t, (int, float, complex)) and not isinstance(t, bool):
        assert isinstance(e, (int, float, complex, bool)) or getattr(e, "ndim", 1) == 0, f"{where}: {e!r}"
        if not (isinstance(t, float) and math.isnan(t) and math.isnan(float(e))):
            assert abs(complex(e) - complex(t)) <= atol + rtol * abs(t), f"{where}: {e} vs torch {t}"
    elif isinstance(t, torch.dtype):
        assert str(e).split(".")[-1] == str(t).split(".")[-1], f"{where}: {e} vs torch {t}"
    else:
        assert e == t, f"{where}: {e!r} vs torch {t!r}"


def _random(op, fn_torch, sample):
    """Whether torch gives different results for the same sample (a sampling op): then only shapes and dtypes are
    compared."""
    torch.manual_seed(0)
    a = fn_torch(sample.input, *sample.args, **sample.kwargs)
    torch.manual_seed(1)
    b = fn_torch(sample.input, *sample.args, **sample.kwargs)
    fa, fb = _flat(a, []), _flat(b, [])
    return any(isinstance(x, torch.Tensor) and x.dtype.is_floating_point and not torch.equal(x, y)
               for x, y in zip(fa, fb))


def check_sample(op, fn, sample, dtype, grads):
    """Compare one sample; returns 'ok', or raises (AssertionError or ember's exception)."""
    torch_fn = op.op
    want = torch_fn(sample.input, *sample.args, **sample.kwargs)
    KEEP_STORAGE[0] = op.name.startswith("as_strided")
    ins = to_ember([sample.input, list(sample.args), dict(sample.kwargs)])
    got = fn(ins[0], *ins[1], **ins[2])
    rtol, atol = _TOL[dtype]
    if "empty" in op.name or _random(op, torch_fn, sample):  # empty*: values are whatever memory held
        compare_structure(got, want)
        return
    process = sample.output_process_fn_grad
    if op.name in GAUGE_FREE:  # vectors defined up to sign or phase: compared as OpInfo's gradient tests see them
        want, got = process(want), process(got)
    try:
        compare(got, want, rtol, atol)
    except AssertionError:
        if not _single_precision([sample.input, sample.args, sample.kwargs]):
            raise
        compare_accuracy(got, want, torch_fn(*_float64([sample.input, *sample.args]), **_float64(sample.kwargs)),
                         rtol, atol)
    if not grads:
        return
    if op.gradcheck_wrapper.__name__ in GRAD_WRAPPERS:  # the function OpInfo's gradient tests differentiate
        want = op.gradcheck_wrapper(torch_fn, sample.input, *sample.args, **sample.kwargs)
        got = op.gradcheck_wrapper(fn, ins[0], *ins[1], **ins[2])
        want, got = process(want), process(got)
    elif op.name not in GAUGE_FREE:
        want, got = process(want), process(got)
    try:
        compare_grads(want, got, _leaves([sample.input, list(sample.args), dict(sample.kwargs)], []),
                      _leaves(ins, []), "input")
    except AssertionError:
        if not torch_grad_known_wrong(op):
            raise
        gradcheck_ember(fn, ins, process)  # torch's gradient is off here: finite differences judge ember's


# OpInfo's gradient wrappers that work on ember's tensors as they are: ops defined on Hermitian inputs see
# A + A^H, ctc_loss sees log-probabilities (its gradient is torch's only on that simplex, pytorch#52241).
GRAD_WRAPPERS = {"gradcheck_wrapper_hermitian_input", "gradcheck_wrapper_ctc_loss"}

# Ops whose outputs hold vectors fixed only up to sign (phase): LAPACK builds differ in the choice.
GAUGE_FREE = {"linalg.eig", "linalg.eigh", "linalg.svd", "svd"}


def torch_grad_known_wrong(op):
    """Whether torch's own test suite expects torch's float64 CPU gradients of op to fail gradcheck (cov with
    float32 weights, as_strided_scatter, ...): where ember's differ from them, finite differences judge ember's."""
    import unittest
    for d in op.decorators:
        if (getattr(d, "cls_name", None), getattr(d, "test_name", None)) != ("TestBwdGradients", "test_fn_grad"):
            continue
        if unittest.expectedFailure in d.decorators and d.device_type in (None, "cpu") and d.active_if \
                and (d.dtypes is None or torch.float64 in d.dtypes):
            return True
    return False


def gradcheck_ember(fn, ins, process):
    """ember's gradients of fn at the sample ins (float64) against central differences."""
    leaves = [x for x in _leaves(ins, []) if x.dtype in (ember.float64, ember.complex128)]  # finite differences
    if not leaves:
        return

    def f(*xs):
        swap = {id(a): b for a, b in zip(leaves, xs)}
        args = _replace(ins, swap)
        out = _flat(process(fn(args[0], *args[1], **args[2])), [])
        return tuple(o for o in out if isinstance(o, ember.Tensor) and o.requires_grad)

    ember.autograd.gradcheck(f, tuple(leaves), raise_exception=True, fast_mode=True)


def _replace(v, swap):
    if isinstance(v, ember.Tensor):
        return swap.get(id(v), v)
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_replace(x, swap) for x in v)
    if isinstance(v, dict):
        return {k: _replace(x, swap) for k, x in v.items()}
    return v


def _single_precision(v):
    """Whether a float32 (complex64) tensor is among v's: its results are then judged by accuracy too."""
    if isinstance(v, torch.Tensor):
        return v.dtype in (torch.float32, torch.complex64)
    if isinstance(v, (list, tuple)):
        return any(_single_precision(x) for x in v)
    if isinstance(v, dict):
        return any(_single_precision(x) for x in v.values())
    return False


def _float64(v):
    """v with torch's float32/complex64 tensors in double precision (detached): the reference of a float32 sample."""
    if isinstance(v, torch.Tensor):
        return v.detach().to({torch.float32: torch.float64, torch.complex64: torch.complex128}.get(v.dtype, v.dtype))
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_float64(x) for x in v)
    if isinstance(v, dict):
        return {k: _float64(x) for k, x in v.items()}
    return v


def compare_accuracy(e, t, ref, rtol, atol):
    """A float32 result that differs from torch's passes where it is as accurate: each element within tolerance of
    the float64 result ref, or no element further from ref than twice torch's largest float32 error (sums rounded
    in another order, ember being the more accurate one included)."""
    for i, (a, b, r) in enumerate(zip(_flat(e, []), _flat(t, []), _flat(ref, []))):
        if not isinstance(b, torch.Tensor) or not b.dtype.is_floating_point and not b.dtype.is_complex:
            continue
        got, want, exact = a.detach().numpy().astype(np.complex128), _numpy(b).astype(np.complex128), _numpy(r)
        err_e, err_t = np.abs(got - exact), np.abs(want - exact)
        ok = (err_e <= atol + rtol * np.abs(exact)) | (np.isnan(got) & np.isnan(exact))
        if not ok.all() and not (ok | (err_e <= 2 * np.nanmax(err_t, initial=0))).all():
            k = np.unravel_index(np.argmin(ok), ok.shape) if ok.ndim else ()
            raise AssertionError(f"output[{i}] at {k}: {got[k]} vs torch {want[k]}, float64 {exact[k]}")


def compare_grads(want, got, t_leaves, e_leaves, what):
    """The gradients of sum(out * w) (w random, complex for complex outputs) over every output that requires grad,
    with respect to the leaves t_leaves (torch) and e_leaves (ember), must agree; unused leaves count as zero."""
    pairs = [(o_t, o_e) for o_t, o_e in zip(_flat(want, []), _flat(got, []))
             if isinstance(o_t, torch.Tensor) and o_t.requires_grad]
    if not t_leaves or not pairs:
        return
    assert all(isinstance(o_e, ember.Tensor) and o_e.requires_grad for _, o_e in pairs), \
        "ember's output does not require grad"
    rng = np.random.default_rng(0)
    loss_t, loss_e = 0, 0
    for o_t, o_e in pairs:
        w = rng.standard_normal(tuple(o_t.shape))
        if o_t.is_complex():
            w = w + 1j * rng.standard_normal(tuple(o_t.shape))
        loss_t = loss_t + (o_t * torch.from_numpy(np.asarray(w)).to(o_t.dtype)).sum().real
        loss_e = loss_e + (o_e * ember.from_numpy(np.asarray(w)).to(o_e.dtype)).sum().real
    g_t = torch.autograd.grad(loss_t, t_leaves, allow_unused=True)
    g_e = ember.autograd.grad(loss_e, e_leaves, allow_unused=True)
    for i, (a, b) in enumerate(zip(g_e, g_t)):
        if b is None:
            b = torch.zeros_like(t_leaves[i])
        if a is None:
            a = ember.zeros_like(e_leaves[i])
        compare(a, b, 1e-6, 1e-6, f"gradient of {what} {i}")


def compare_structure(e, t):
    for a, b in zip(_flat(e, []), _flat(t, [])):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, ember.Tensor) and tuple(a.shape) == tuple(b.shape), "random op: shape"
            assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1], "random op: dtype"


def check_op(op):
    """'ok', 'not compared', or a one-line reason why ember fails this op (the first failing sample)."""
    try:
        fn = ember_callable(op)
    except AttributeError as e:
        return f"missing: {e}"
    if fn is None:
        return "not compared"
    supported = {str(d).split(".")[1] for d in op.supported_dtypes("cpu")}
    compared = 0
    torch.manual_seed(0)  # the generated samples are random: the same ones every run
    for dtype in DTYPES:
        if dtype not in supported:
            continue
        grads = dtype == "float64" and op.supports_autograd
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                samples = list(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=grads))
        except Exception:  # noqa: BLE001 - torch's own sample generator failing is not ember's failure
            continue
        for k, sample in enumerate(samples):
            try:
                with warnings.catch_warnings():  # values are compared here; warnings (torch's too) are not
                    warnings.simplefilter("ignore")
                    check_sample(op, fn, sample, dtype, grads)
                compared += 1
            except NotCompared:
                continue
            except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
                msg = str(e).strip().splitlines()
                first = next((line for line in msg if line.strip()), "")
                return f"{dtype} sample {k}: {type(e).__name__}: {first[:200]}"
    return "ok" if compared else "not compared"


def main(argv):
    op_db = load()
    pattern = next((a for a in argv if not a.startswith("--")), "")
    results = {}
    for op in op_db:
        if pattern in op_id(op):
            results[op_id(op)] = check_op(op)
    bad = {k: v for k, v in results.items() if v not in ("ok", "not compared")}
    for k, v in bad.items():
        print(f"{k}: {v}")
    ok = sum(v == "ok" for v in results.values())
    nc = sum(v == "not compared" for v in results.values())
    print(f"\n{ok} of {ok + len(bad)} compared ops pass ({100 * ok / max(ok + len(bad), 1):.1f}%); "
          f"{nc} not compared")
    if "--write-known" in argv:
        write_known("opinfo", "OpInfo ops", bad)


def write_known(harness, what, bad):
    """Rewrite <harness>_known_failures.py next to this file: {name: first failure} for everything in bad."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{harness}_known_failures.py")
    with open(path, "w") as f:
        f.write(f'"""{what} ember fails today, with the first failure the harness saw.\nRegenerated by '
                f'python -m tests.compat.{harness}_harness --write-known."""\n\nKNOWN = {{\n')
        for k, v in sorted(bad.items()):
            f.write(f"    {k!r}: {v!r},\n")
        f.write("}\n")


def judge(name, failure, known, known_file):
    """pytest's verdict on one entry of a harness (failure: None when it passes): an expected failure where it is
    listed in known, a failure where a listed one passes now (it must leave the list)."""
    import pytest
    if name in known:
        if failure is None:
            pytest.fail(f"{name} passes now: remove it from tests/compat/{known_file}")
        pytest.xfail(known[name])
    assert failure is None, failure


def cli(main):
    """Run a harness's main on the command line; a crash of the harness itself exits 1."""
    try:
        main(sys.argv[1:])
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)


if __name__ == "__main__":
    cli(main)
