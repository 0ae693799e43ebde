"""gradcheck / gradgradcheck: analytical gradients against central finite differences, with torch's semantics.

NOTE [ Complex gradcheck ]
torch's convention: for a real-valued s of a complex input z = x + iy, the gradient backward computes is
ds/dx + i ds/dy (the conjugate Wirtinger derivative, times two). So the numerical "Jacobian" of a complex input
is built from two real perturbations per element, ds/dx + i ds/dy. A complex output is checked as two real
functions, its real part and its imaginary part (torch's _real_and_imag_output).

Finite differences perturb the input's array in place, one element at a time (fast_mode: once, along a random
direction); the function runs with the caller's grad mode, since it may itself differentiate (gradgradcheck).
"""
import warnings

import numpy as np

from .._backend import XP

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Same as `torch.autograd.gradcheck.GradcheckError`."""


# ----- real and imaginary parts as differentiable ops (torch's convention; used on complex outputs) -----

def _part_dtype(dt):
    return np.dtype(np.float32) if dt == np.complex64 else np.dtype(np.float64)


def _complex_dtype(dt):
    return np.dtype(np.complex64) if dt in (np.float32, np.float16) else np.dtype(np.complex128)


_PART_OPS = {}


def _part(name, t):
    """real(t) or imag(t) as a differentiable op (built on first use: this module loads before the op layer)."""
    if not _PART_OPS:
        from .._ops._dispatch import Op, dispatch1
        # x -> x + 0i and x -> ix for real x: their backwards take the real and imaginary part of g
        real = Op("real", lambda z: z.real.copy(), lambda ctx, g: dispatch1(as_complex, g), node_name="RealBackward0")
        imag = Op("imag", lambda z: z.imag.copy(), lambda ctx, g: dispatch1(times_i, g), node_name="ImagBackward0")
        as_complex = Op("as_complex", lambda x: x.astype(_complex_dtype(x.dtype)), lambda ctx, g: dispatch1(real, g))
        times_i = Op("times_i", lambda x: x.astype(_complex_dtype(x.dtype)) * 1j, lambda ctx, g: dispatch1(imag, g))
        _PART_OPS.update(real=real, imag=imag, dispatch1=dispatch1)
    return _PART_OPS["dispatch1"](_PART_OPS[name], t)


def _real_and_imag_output(fn):
    def real_fn(*inputs):
        return tuple(_part("real", o) if _is_complex(o) else o for o in _as_tuple(fn(*inputs)))

    def imag_fn(*inputs):
        return tuple(_part("imag", o) if _is_complex(o) else o for o in _as_tuple(fn(*inputs)))
    return real_fn, imag_fn


# ----- small helpers -----

def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x):
    from .._tensor import Tensor  # not at the top: this module loads while ember._tensor is being imported
    return isinstance(x, Tensor)


def _is_complex(t):
    return _is_tensor(t) and t._data.dtype.kind == "c"


def _needs_grad(x):
    return _is_tensor(x) and x._requires_grad


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _needs_grad(o))


def _host(arr):
    return arr if type(arr) is np.ndarray else arr.get()


def _tensor(arr):
    from .._tensor import Tensor
    return Tensor._make(arr)


# ----- numerical Jacobians -----

def _central_difference(func, inputs, d, idx, delta):
    """f(x + delta) - f(x - delta) for every tensor output, with x = d[idx] (or all of d, idx=...)."""
    orig = d[idx].copy()
    d[idx] = orig - delta
    outa = [np.array(_host(o._data)) for o in _as_tuple(func(*inputs)) if _is_tensor(o)]
    d[idx] = orig + delta
    try:
        outb = [_host(o._data) for o in _as_tuple(func(*inputs)) if _is_tensor(o)]
        diffs = []
        for k, (a, b) in enumerate(zip(outa, outb)):
            _check_same(a, b, delta, k)
            if a.dtype == np.bool_:
                a, b = a.view(np.int8), b.view(np.int8)
            diffs.append((b - a).reshape(-1))  # in the output's own precision, as torch
    finally:
        d[idx] = orig
    return diffs


def _check_same(a, b, eps, k):
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed on "
                             f"index {k} by {eps}, but got: shapes {a.shape} and {b.shape}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed on "
                             f"index {k} by {eps}, but got: dtypes {a.dtype} and {b.dtype}.")


def _numerical_wrt(func, inputs, x, eps):
    """For input x: one (x.numel(), output numel) array per tensor output of func."""
    d = x._data
    cplx = d.dtype.kind == "c"
    jacs = None
    for k, idx in enumerate(np.ndindex(*d.shape)):
        cols = _central_difference(func, inputs, d, idx, eps)
        if cplx:  # the imaginary direction: torch's conjugate Wirtinger convention
            cols = [c + 1j * ci for c, ci in zip(cols, _central_difference(func, inputs, d, idx, eps * 1j))]
        if jacs is None:
            jacs = [np.empty((d.size, c.size), np.complex128 if (cplx or c.dtype.kind == "c") else np.float64)
                    for c in cols]
        for j, c in zip(jacs, cols):
            j[k] = c
    if jacs is None:  # an empty input: compute the output sizes once
        outs = [o for o in _as_tuple(func(*inputs)) if _is_tensor(o)]
        jacs = [np.zeros((0, o._data.size)) for o in outs]
    for j in jacs:
        j /= 2 * eps
    return jacs


def _numerical_jacobians(func, inputs, eps):
    """[input requiring grad][tensor output] -> (input numel, output numel) array."""
    return [_numerical_wrt(func, inputs, x, eps) for x in inputs if _needs_grad(x)]


# ----- analytical Jacobians -----

def _vjps(out, diff_inputs, grad_output):
    from . import grad
    return grad(out, diff_inputs, grad_output, retain_graph=True, allow_unused=True)


def _analytical_once(out, diff_inputs):
    """One backward per output element; returns (jacobians, sizes_ok, types_ok)."""
    d = out._data
    xp = XP[type(d)]
    base = xp.zeros(d.shape, d.dtype)
    flat = base.reshape(-1)
    rows = [np.zeros((d.size, x._data.size), x._data.dtype) for x in diff_inputs]  # transposed Jacobians
    sizes_ok = types_ok = True
    for k in range(d.size):
        flat[k - 1] = 0
        flat[k] = 1
        for j, (x, g) in enumerate(zip(diff_inputs, _vjps(out, diff_inputs, _tensor(base.copy())))):
            if g is None:
                continue
            if g._data.shape != x._data.shape:
                sizes_ok = False
            elif g._data.dtype != x._data.dtype:
                types_ok = False
            if g._data.size == rows[j].shape[1]:
                rows[j][k] = _host(g._data).reshape(-1)
    return [r.T for r in rows], sizes_ok, types_ok


_NONDET_NOTE = ("\n\nNOTE: If your op relies on non-deterministic operations, this failure might be expected: call "
                "gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.\n")


def _check_reentrant(j1, j2, nondet_tol):
    for a, b in zip(j1, j2):
        if a.size and np.abs(a - b).max() > nondet_tol:
            raise GradcheckError(f"Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 f"multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}."
                                 + _NONDET_NOTE)


def _analytical_jacobians(out, diff_inputs, nondet_tol, check_grad_dtypes):
    """torch's _check_analytical_jacobian_attributes: computed twice, to catch non-reentrant backwards."""
    j1, sizes_ok, types_ok = _analytical_once(out, diff_inputs)
    j2, _, _ = _analytical_once(out, diff_inputs)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    _check_reentrant(j1, j2, nondet_tol)
    return j1


# ----- comparing -----

def _allclose(a, n, rtol, atol):
    a = np.asarray(a)
    if a.dtype.kind not in "fc":  # bfloat16 and friends
        a = a.astype(np.float64)
    return bool(np.allclose(a, n, rtol=rtol, atol=atol))


def _mismatch_msg(a, n, out_idx, in_idx, complex_indices, test_imag):
    prefix = ""
    if complex_indices and out_idx in complex_indices:
        prefix = f"While considering the {'imaginary' if test_imag else 'real'} part of complex outputs only, "
    return (f"{prefix}Jacobian mismatch for output {out_idx:d} with respect to input {in_idx:d},\n"
            f"numerical:{_tensor(np.asarray(n))}\nanalytical:{_tensor(np.asarray(a))}\n")


def _slow_check(func, func_out, inputs, eps, rtol, atol, nondet_tol, check_grad_dtypes, complex_indices=None,
                test_imag=False):
    outs = _as_tuple(func_out)
    diff_outs = _differentiable_outputs(outs)
    numerical = _numerical_jacobians(func, inputs, eps)
    if not diff_outs:
        _expect_zero(numerical)
        return
    keep = [k for k, o in enumerate(o for o in outs if _is_tensor(o)) if _needs_grad(o)]
    diff_inputs = [x for x in inputs if _needs_grad(x)]
    for i, o in enumerate(diff_outs):
        analytical = _analytical_jacobians(o, diff_inputs, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][keep[i]]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_mismatch_msg(a, n, i, j, complex_indices, test_imag))


def _expect_zero(numerical, tol=0.0):
    for per_input in numerical:
        for j in per_input:
            if j.size and np.abs(j).max() > tol:
                raise GradcheckError("Numerical gradient for function expected to be zero")


# ----- fast mode: v^T J u against finite differences along u -----

def _unit_vector(rng, n, dt):
    v = rng.random(n)
    norm = np.sqrt((v * v).sum())
    return (v / norm if norm else v).astype(dt)


def _fast_check(func, func_out, inputs, eps, rtol, atol, nondet_tol, check_grad_dtypes, complex_indices=None,
                test_imag=False):
    rng = np.random.default_rng(0)
    diff_inputs = [x for x in inputs if _needs_grad(x)]
    all_u = []
    for x in diff_inputs:
        real_dt = _part_dtype(x._data.dtype) if x._data.dtype.kind == "c" else x._data.dtype
        ur = _unit_vector(rng, x._data.size, real_dt)
        all_u.append((ur, _unit_vector(rng, x._data.size, real_dt)) if x._data.dtype.kind == "c" else ur)
    outs = _as_tuple(func_out)
    diff_outs = _differentiable_outputs(outs)
    all_v = [_unit_vector(rng, o._data.size, o._data.dtype) for o in diff_outs]
    keep = [k for k, o in enumerate(o for o in outs if _is_tensor(o)) if _needs_grad(o)]
    numerical = [_numerical_ju(func, inputs, x, u, eps) for x, u in zip(diff_inputs, all_u)]
    if not diff_outs:
        _expect_zero([[np.asarray(c) for c in per] for per in numerical], nondet_tol)
        return
    for i, (o, v) in enumerate(zip(diff_outs, all_v)):
        vj1 = _vjps(o, diff_inputs, _tensor(_to_like(v.reshape(o._data.shape), o._data)))
        vj2 = _vjps(o, diff_inputs, _tensor(_to_like(v.reshape(o._data.shape), o._data)))
        _check_reentrant([_flat(g, x) for g, x in zip(vj1, diff_inputs)],
                         [_flat(g, x) for g, x in zip(vj2, diff_inputs)], nondet_tol)
        for j, (x, u, g) in enumerate(zip(diff_inputs, all_u, vj1)):
            a = _dot_u(_flat(g, x), u)
            n = np.dot(v.astype(np.float64), numerical[j][keep[i]])
            if not _allclose(a, n, rtol, _adjusted_atol(atol, u, v)):
                raise GradcheckError(_mismatch_msg(a, n, i, j, complex_indices, test_imag)
                                     + _slow_report(func, inputs, x, o, i, rtol, atol, eps))


def _to_like(arr, like):
    return arr if type(like) is np.ndarray else XP[type(like)].asarray(arr)


def _flat(g, x):
    if g is None:
        return np.zeros(x._data.size, x._data.dtype)
    return _host(g._data).reshape(-1)


def _dot_u(vj, u):
    if isinstance(u, tuple):
        return np.dot(vj.real, u[0]) + 1j * np.dot(vj.imag, u[1])
    return np.dot(vj, u)


def _adjusted_atol(atol, u, v):
    su = float(u[0].sum() + u[1].sum()) if isinstance(u, tuple) else float(u.sum())
    return atol * su * float(v.sum())


def _numerical_ju(func, inputs, x, u, eps):
    """J u for every tensor output, by one central difference along u (two for a complex input)."""
    d = x._data
    if isinstance(u, tuple):
        dx = _central_difference(func, inputs, d, Ellipsis, _to_like(u[0].reshape(d.shape) * eps, d))
        dy = _central_difference(func, inputs, d, Ellipsis, _to_like(u[1].reshape(d.shape) * (eps * 1j), d))
        return [(a + 1j * b) / (2 * eps) for a, b in zip(dx, dy)]
    diffs = _central_difference(func, inputs, d, Ellipsis, _to_like(u.reshape(d.shape) * eps, d))
    return [c.astype(np.complex128 if c.dtype.kind == "c" else np.float64) / (2 * eps) for c in diffs]


_FAST_FAIL_SLOW_OK = ("\nFast gradcheck failed but element-wise differences are small. This means that the\ntest "
                      "might've passed in slow_mode!\n\nIf the test manually invokes gradcheck/gradgradcheck, then call "
                      "gradcheck/gradgradcheck\nwith `fast_mode=False` as a keyword argument.")


def _slow_report(func, inputs, x, out, out_idx, rtol, atol, eps):
    """Recompute the failing Jacobian in slow mode, for the message."""
    k = [i for i, t in enumerate(inputs) if _needs_grad(t)].index(next(i for i, t in enumerate(inputs) if t is x))
    outs = [o for o in _as_tuple(func(*inputs)) if _is_tensor(o)]
    n = _numerical_wrt(func, inputs, x, eps)[[i for i, o in enumerate(outs) if _needs_grad(o)][out_idx]]
    diff_inputs = [t for t in inputs if _needs_grad(t)]
    a = _analytical_once(out, diff_inputs)[0][k]
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \nin fast mode. "
           "Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {_tensor(n)}\nAnalytical:\n{_tensor(a)}\n\n"
           f"The max per-element difference (slow mode) is: {np.abs(n - a).max() if n.size else 0.0}.\n")
    if _allclose(a, n, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK
    return msg


# ----- the other backward checks -----

def _check_inputs(inputs):
    any_grad = False
    for idx, x in enumerate(inputs):
        if not _needs_grad(x):
            continue
        if x._data.dtype not in (np.float64, np.complex128):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                          f"This check will likely fail if all the inputs are not of double precision floating point "
                          f"or complex. ", stacklevel=4)
        if any(st == 0 and sz > 1 for st, sz in zip(x.stride(), x._data.shape)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                               f"that are non-overlapping to be able to compute the numerical gradients correctly. "
                               f"You should call .contiguous on the input before passing it to gradcheck.")
        any_grad = True
    if not any_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _test_backward_mul_by_grad_output(outputs, inputs):
    from . import grad
    diff_inputs = [x for x in inputs if _needs_grad(x)]
    zeros = [_tensor(XP[type(o._data)].zeros(o._data.shape, o._data.dtype)) for o in outputs]
    for gi, x in zip(grad(outputs, diff_inputs, zeros, allow_unused=True), diff_inputs):
        if gi is None:
            continue
        if (_host(gi._data) != 0).any():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi._data.dtype != x._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != x.device:
            raise GradcheckError("grad is incorrect device")
        if gi._data.shape != x._data.shape:
            raise GradcheckError("grad is incorrect size")


_UNDEFINED_NOTE = 'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"'


def _test_undefined_backward_mode(func, n_outputs, inputs):
    """Backward must cope with outputs that received no gradient (None reaches the node, as in torch's engine):
    each differentiable output in turn gets none while the others get zeros."""
    from .engine import run_backward
    if n_outputs < 2:
        return  # a single output with no gradient never reaches its backward in ember's engine
    diff_inputs = [x for x in inputs if _needs_grad(x)]
    for undefined in range(n_outputs):
        outs = _differentiable_outputs(func(*inputs))
        grads = [None if k == undefined else _tensor(XP[type(o._data)].zeros(o._data.shape, o._data.dtype))
                 for k, o in enumerate(outs)]
        try:
            res = run_backward(outs, grads, False, False, inputs=diff_inputs, accumulate=False)
        except (RuntimeError, TypeError, AttributeError) as e:
            _warn_bc_breaking()
            raise GradcheckError("Expected backward function to handle undefined output grads. " + _UNDEFINED_NOTE) \
                from e
        for gi in res:
            if gi is not None and (_host(gi._data) != 0).any():
                _warn_bc_breaking()
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                     "undefined or zero. " + _UNDEFINED_NOTE)


def _warn_bc_breaking():
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
                  "but it may break existing callers of this function. If this is true for you, you can call this "
                  'function with "check_undefined_grad=False" to disable the feature', stacklevel=2)


def _run_checks(check, func, func_out, inputs, eps, rtol, atol, nondet_tol, check_grad_dtypes):
    outs = _as_tuple(func_out)
    if any(_is_complex(o) for o in outs):
        complex_indices = [i for i, o in enumerate(_differentiable_outputs(outs)) if _is_complex(o)]
        real_fn, imag_fn = _real_and_imag_output(func)
        check(imag_fn, imag_fn(*inputs), inputs, eps, rtol, atol, nondet_tol, check_grad_dtypes, complex_indices,
              True)
        check(real_fn, real_fn(*inputs), inputs, eps, rtol, atol, nondet_tol, check_grad_dtypes, complex_indices)
    else:
        check(func, func_out, inputs, eps, rtol, atol, nondet_tol, check_grad_dtypes)


def _check_forward_ad(func, inputs, eps, rtol, atol):
    """Each input element's direction (1, and 1j for complex inputs) through forward-mode AD against the central
    difference of func along it (NOTE [ Forward-mode AD ])."""
    from ..autograd import forward_ad as fwAD
    for i, x in enumerate(inputs):
        if not _needs_grad(x):
            continue
        base = x.detach()
        xp = XP[type(base._data)]
        for k in range(base.numel()):
            for step in ((1.0, 1j) if _is_complex(x) else (1.0,)):
                v = xp.zeros(base._data.shape, base._data.dtype)
                v.reshape(-1)[k] = step
                # the inputs keep requiring grad: func may differentiate them itself (gradgradcheck)
                plus = _float_outputs(func(*_replaced(inputs, i, _leaf(base._data + eps * v))))
                minus = _float_outputs(func(*_replaced(inputs, i, _leaf(base._data - eps * v))))
                with fwAD.dual_level():
                    outs = _float_outputs(func(*_replaced(inputs, i, fwAD.make_dual(_leaf(base._data), _tensor(v)))))
                    tangents = [fwAD.unpack_dual(o).tangent for o in outs]
                for j, (p, m, t) in enumerate(zip(plus, minus, tangents)):
                    numerical = (_host(p._data) - _host(m._data)) / (2 * eps)
                    analytical = np.zeros_like(numerical) if t is None else _host(t._data)
                    if not np.allclose(analytical, numerical, rtol=rtol, atol=atol):
                        raise GradcheckError(f"Jacobian computed with forward mode mismatch for output {j} with "
                                             f"respect to input {i},\nnumerical:{numerical}\nanalytical:{analytical}\n")


def _leaf(arr):
    t = _tensor(arr.copy())
    t._requires_grad = True
    return t


def _float_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o._data.dtype.kind in "fc")


def _replaced(inputs, i, value):
    return inputs[:i] + (value,) + inputs[i + 1:]


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
               check_forward_ad, check_backward_ad, fast_mode):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    if check_forward_ad:
        _check_forward_ad(func, inputs, eps, rtol, atol)
    if not check_backward_ad:
        return True
    _run_checks(_fast_check if fast_mode else _slow_check, func, func_out, inputs, eps, rtol, atol, nondet_tol,
                check_grad_dtypes)
    outputs = _differentiable_outputs(func_out)
    if outputs:
        _test_backward_mul_by_grad_output(outputs, inputs)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, len(outputs), inputs)
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Same as `torch.autograd.gradcheck` (backward mode; real and complex inputs and outputs).
    check_batched_grad is accepted and not run (ember has no vmap); check_forward_ad=True compares forward-mode AD
    (autograd.forward_ad) with central differences along each input element."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                          check_forward_ad, check_backward_ad, fast_mode)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _random_grad_output(rng, x, noncontiguous):
    """Uniform in [-1, 1) like torch.testing.make_tensor(low=-1, high=1), requiring grad."""
    d = x._data
    dt = d.dtype if d.dtype.kind in "fc" else np.dtype(np.float64)
    shape = d.shape
    if noncontiguous and d.size > 1:
        shape = shape[:-1] + (shape[-1] * 2,) if shape else shape
    arr = rng.uniform(-1, 1, shape)
    if dt.kind == "c":
        arr = arr + 1j * rng.uniform(-1, 1, shape)
    arr = arr.astype(dt)
    if noncontiguous and d.size > 1 and d.shape:
        arr = arr[..., ::2]
    arr = _to_like(arr, d)
    t = _tensor(arr)
    t._requires_grad = True
    return t


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Same as `torch.autograd.gradgradcheck`: gradcheck of the first derivative, built with create_graph=True.
    Random grad_outputs come from a fixed seed (torch draws them from its global generator)."""
    from . import grad
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_random_grad_output(rng, o, gen_non_contig_grad_outputs)
                             for o in _differentiable_outputs(func(*inputs)))
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_idx = [i for i, x in enumerate(inputs) if _needs_grad(x)]

    def first_derivative(*args):
        ins = args[:len(args) - n_out]
        outs = _differentiable_outputs(func(*ins))
        grads = grad(outs, [ins[i] for i in diff_idx], args[len(args) - n_out:], create_graph=True,
                     allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
