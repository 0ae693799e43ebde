"""Higher-level differentiation of functions: jacobian, hessian, vjp, jvp, hvp, vhp (same as
`torch.autograd.functional`).

Results mirror the structure of inputs and outputs: a Tensor where the user passed a Tensor, a tuple where the
user passed a tuple. jvp and hvp use the double-vjp trick (ember has no forward-mode AD): the vjp with a dummy
cotangent u, g(u) = J^T u, is linear in u, so differentiating <g(u), v> with respect to u gives J v.
`vectorize` is accepted and ignored (one backward per row of the Jacobian either way).
"""
from .._tensor import Tensor
from .grad_mode import GRAD, enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ----- argument handling -----

def _as_tuple(x, arg_name, fn_name):
    """(was it a tuple, the tuple): torch accepts a Tensor or a tuple of Tensors."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the {where} has type {type(el)}.")
    return is_tuple, items


def _unpack(res, is_tuple):
    return res if is_tuple else res[0]


def _unpack2(res, is_outer_tuple, is_inner_tuple):
    if not is_inner_tuple:
        res = tuple(r[0] for r in res)
    return res if is_outer_tuple else res[0]


def _preprocess(inputs, create_graph, need_graph):
    """Fresh tensors to differentiate with respect to: the caller's graph is kept only with create_graph."""
    res = []
    for x in inputs:
        if create_graph and x._requires_grad:
            res.append(x.view_as(x))
        else:
            res.append(x.detach().requires_grad_(need_graph))
    return tuple(res)


def _postprocess(res, create_graph):
    if res and isinstance(res[0], Tensor):
        return res if create_graph else tuple(r.detach() for r in res)
    return tuple(_postprocess(r, create_graph) for r in res)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.shape != b.shape:
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {b.size()} but got {a.size()}.")


_NOT_REQUIRING = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed "
               "in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. "
               "This is not allowed in strict mode. You should ensure that your function is thrice differentiable "
               "and that the hessian depends on the inputs.",
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               f"allowed in strict mode.")
        if not t._requires_grad:
            raise RuntimeError(_NOT_REQUIRING[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; all None when none does."""
    from . import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o._requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True, create_graph=create_graph,
                retain_graph=retain_graph)


_ZERO_FILL_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Missing gradients are zeros (strict mode refuses them)."""
    from .._ops.creation import zeros_like
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_FILL_ERRORS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g._requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               f"allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare(func, inputs, v, create_graph, strict, fn_name, v_like_outputs):
    """Run func on fresh inputs under grad mode; returns (is_inputs_tuple, inputs, v, is_outputs_tuple, outputs)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _preprocess(inputs, create_graph, True)
        if v is not None:
            _, v = _as_tuple(v, "v", fn_name)
            v = _preprocess(v, create_graph, False)
        if not v_like_outputs:
            _check_v(v, inputs, is_inputs_tuple)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
        _check_requires_grad(outputs, "outputs", strict)
        if v_like_outputs:
            _check_v(v, outputs, is_outputs_tuple, user_function=True)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs


def _check_v(v, other, is_other_tuple, user_function=False):
    if v is not None:
        _validate_v(v, other, is_other_tuple)
    elif len(other) != 1 or other[0].numel() != 1:
        if user_function:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")


def _check_scalar_output(outputs, is_outputs_tuple, fn_name):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")


# ----- the public functions -----

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Same as `torch.autograd.functional.vjp`: (func(inputs), v^T J)."""
    is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "vjp",
                                                                     True)
    with set_grad_enabled(True if create_graph else GRAD[0]):
        res = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(res, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Same as `torch.autograd.functional.jvp`: (func(inputs), J v), by the double-vjp trick."""
    from .._ops.creation import zeros_like
    _, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "jvp", False)
    with enable_grad():
        dummies = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else GRAD[0]):
        res = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        res = _fill_in_zeros(res, outputs, strict, create_graph, "back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(res, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """Same as `torch.autograd.functional.jacobian`: J[i][j] has shape outputs[i].shape + inputs[j].shape.
    strategy="forward-mode" gives the same values, computed in reverse mode."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        _check_forward_mode(create_graph, strict, vectorize)
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph, True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        jac = tuple(_jacobian_of_output(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
    return _unpack2(_postprocess(jac, create_graph), is_outputs_tuple, is_inputs_tuple)


def _check_forward_mode(create_graph, strict, vectorize):
    if create_graph:
        raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                  '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                  '`create_graph=False` or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")


def _jacobian_of_output(i, out, inputs, create_graph, strict):
    """One backward per element of out; the rows stacked per input."""
    from .._ops.creation import zeros_like
    from .._ops.join import stack
    rows = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.numel()):
        vj = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. This "
                                       f"is not allowed in strict mode.")
                g = zeros_like(x)
            elif strict and create_graph and not g._requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   f"is not allowed in strict mode when create_graph=True.")
            rows[j].append(g)
    res = []
    for x, r in zip(inputs, rows):
        if r:
            res.append(stack(r, 0).view(out.shape + x.shape))
        else:  # an empty output
            res.append(x.new_zeros(out.shape + x.shape))
    return tuple(res)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """Same as `torch.autograd.functional.hessian`: H[i][j] has shape inputs[i].shape + inputs[j].shape."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        _check_scalar_output(t_out, is_out_tuple, "hessian")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    # with a tuple of inputs, both jacobians are tuples of tuples
    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack2(res, is_inputs_tuple, is_inputs_tuple)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Same as `torch.autograd.functional.vhp`: (func(inputs), v^T H)."""
    is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "vhp",
                                                                     False)
    _check_scalar_output(outputs, is_outputs_tuple, "vhp")
    with enable_grad():
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else GRAD[0]):
        res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(res, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Same as `torch.autograd.functional.hvp`: (func(inputs), H v), by the double-vjp trick."""
    from .._ops.creation import zeros_like
    is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _prepare(func, inputs, v, create_graph, strict, "hvp",
                                                                     False)
    _check_scalar_output(outputs, is_outputs_tuple, "hvp")
    with enable_grad():
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else GRAD[0]):
        res = _grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(res, create_graph), is_inputs_tuple))
