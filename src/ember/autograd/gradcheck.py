"""gradcheck / gradgradcheck: analytical gradients against central finite differences."""
import numpy as np

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Same as `torch.autograd.gradcheck.GradcheckError`."""


def _as_tuple(x):
    from .._tensor import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _differentiable_outputs(out):
    return [o for o in _as_tuple(out) if o._requires_grad]


def _numerical_jacobian(func, inputs, out_index, eps):
    """d out[out_index] / d input, one column per perturbed input element."""
    from .grad_mode import no_grad
    jacs = []
    with no_grad():
        for x in inputs:
            if not (hasattr(x, "_requires_grad") and x._requires_grad):
                jacs.append(None)
                continue
            d = x._data
            flat = d.reshape(-1) if d.flags.c_contiguous else None
            if flat is None:
                raise GradcheckError("gradcheck expects contiguous inputs")
            cols = []
            for k in range(flat.size):
                orig = flat[k].copy()
                flat[k] = orig + eps
                plus = _output_array(func(*inputs), out_index)
                flat[k] = orig - eps
                minus = _output_array(func(*inputs), out_index)
                flat[k] = orig
                cols.append(((plus - minus) / (2 * eps)).reshape(-1))
                if d.dtype.kind == "c":  # the imaginary direction, for torch's complex convention
                    flat[k] = orig + eps * 1j
                    plus = _output_array(func(*inputs), out_index)
                    flat[k] = orig - eps * 1j
                    minus = _output_array(func(*inputs), out_index)
                    flat[k] = orig
                    cols[-1] = (cols[-1], ((plus - minus) / (2 * eps)).reshape(-1))
            jacs.append(cols)
    return jacs


def _output_array(out, i):
    return np.array(_as_tuple(out)[i]._data, dtype=np.complex128 if _as_tuple(out)[i]._data.dtype.kind == "c"
                    else np.float64)


def _analytical_row(outputs, inputs, out_index, k, create_graph=False):
    from .. import autograd
    from .._ops.creation import zeros_like
    out = outputs[out_index]
    g = zeros_like(out)
    g._data.reshape(-1)[k] = 1
    diff_inputs = [x for x in inputs if hasattr(x, "_requires_grad") and x._requires_grad]
    grads = autograd.grad(out, diff_inputs, g, retain_graph=True, allow_unused=True)
    return grads


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Same as `torch.autograd.gradcheck` (backward mode, real and complex inputs)."""
    inputs = _as_tuple(inputs)
    for x in inputs:
        if hasattr(x, "_requires_grad") and x._requires_grad and x._data.dtype not in (np.float64, np.complex128):
            import warnings
            warnings.warn("Input #0 requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", UserWarning, stacklevel=2)
    outputs = _as_tuple(func(*inputs))
    diff = [x for x in inputs if hasattr(x, "_requires_grad") and x._requires_grad]
    for oi, out in enumerate(outputs):
        if not out._requires_grad:
            continue
        numerical = _numerical_jacobian(func, inputs, oi, eps)
        n_out = out._data.size
        analytical = [np.zeros((x._data.size, n_out), dtype=x._data.dtype) for x in diff]
        for k in range(n_out):
            grads = _analytical_row(outputs, inputs, oi, k)
            for j, g in enumerate(grads):
                if g is not None:
                    analytical[j][:, k] = np.asarray(g._data).reshape(-1)
        j = 0
        for x, num in zip(inputs, numerical):
            if num is None:
                continue
            a = analytical[j]
            if x._data.dtype.kind == "c" or out._data.dtype.kind == "c":
                ok = _check_complex(a, num, out, atol, rtol)
            else:
                n = np.stack(num) if num else np.zeros((0, n_out))
                ok = np.allclose(a, n, atol=atol, rtol=rtol)
                if not ok:
                    msg = (f"Jacobian mismatch for output {oi} with respect to input {j},\nnumerical:{n}\n"
                           f"analytical:{a}\n")
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
            if not ok:
                if raise_exception:
                    raise GradcheckError(f"Jacobian mismatch for output {oi} with respect to input {j} (complex)")
                return False
            j += 1
    return True


def _check_complex(a, num, out, atol, rtol):
    # torch's convention: grad = conj(dL/dz*) ; for real L, the gradient is dL/dRe + i dL/dIm
    rows = []
    for col in num:
        if isinstance(col, tuple):
            re, im = col
        else:
            re, im = col, np.zeros_like(col)
        # row k of the analytical matrix holds the vjp with unit real cotangent on output element k
        rows.append(np.conj(re) + 1j * np.conj(im) if np.iscomplexobj(re) else re + 1j * im)
    n = np.stack(rows)
    if out._data.dtype.kind != "c":
        return np.allclose(a, n.real + 1j * n.imag if np.iscomplexobj(a) else n.real, atol=atol, rtol=rtol)
    return np.allclose(a, n, atol=atol, rtol=rtol)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Same as `torch.autograd.gradgradcheck`: gradcheck of the first derivative (built with create_graph)."""
    from .. import autograd
    from .._ops.random import randn_like
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in outputs:
            from .._tensor import Tensor
            arr = rng.standard_normal(o._data.shape)
            if o._data.dtype.kind == "c":
                arr = arr + 1j * rng.standard_normal(o._data.shape)
            grad_outputs.append(Tensor._make(arr.astype(o._data.dtype)).requires_grad_(True))
    grad_outputs = list(_as_tuple(grad_outputs))
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if hasattr(x, "_requires_grad") and x._requires_grad]

    def first_derivative(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(func(*ins))
        diff = [ins[i] for i in diff_idx]
        grads = autograd.grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None and g._requires_grad)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
