"""Adam (and, with decoupled_weight_decay=True, AdamW)."""
from .._tensor import Tensor
from . import _functional as K
from .optimizer import (
    Optimizer,
    _bump,
    _check_differentiable,
    _check_fused,
    _check_lr,
    _closure_loss,
    _inc,
    _step_tensor,
    _to_scalar,
    _zeros_state,
)

__all__ = ["Adam", "adam"]


def _check_betas(betas, eps, weight_decay):
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    """Same as `torch.optim.Adam`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_lr(lr)
        _check_betas(betas, eps, weight_decay)
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")  # noqa: TRY004 (torch's type)
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        _check_differentiable(differentiable)

    _group_defaults = {"amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                       "differentiable": False, "decoupled_weight_decay": False, "fused": None}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        state = {"step": _step_tensor(), "exp_avg": _zeros_state(p), "exp_avg_sq": _zeros_state(p)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = _zeros_state(p)
        return state

    def _sparse_grad(self, p, g):
        raise RuntimeError("Adam does not support sparse gradients, please consider SparseAdam instead")

    def step(self, closure=None):
        """Same as `torch.optim.Adam.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps) = self._gather(
                group, ("exp_avg", "exp_avg_sq", "max_exp_avg_sq" if group["amsgrad"] else None, "step"))
            if not params:
                continue
            beta1, beta2 = group["betas"]
            adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad=group["amsgrad"],
                 beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
         differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False,
         decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """Same as `torch.optim.adam.adam`: one Adam step on lists of tensors, in place."""
    if grad_scale is not None or found_inf is not None:
        raise NotImplementedError("adam: grad_scale and found_inf are not supported")
    lr, beta1, beta2, weight_decay = map(_to_scalar, (lr, beta1, beta2, weight_decay))
    consts = {}
    rows = []
    for i, p in enumerate(params):
        step = _inc(state_steps[i])
        pa = p._data
        dt = K.work_dtype(pa)
        c = consts.get((step, dt))
        if c is None:
            c = consts[(step, dt)] = _adam_consts(step, dt, lr, beta1, beta2, weight_decay, eps, maximize, amsgrad,
                                                  decoupled_weight_decay)
        arrays = [K.real(pa), K.real(grads[i]._data), K.real(exp_avgs[i]._data), K.real(exp_avg_sqs[i]._data)]
        if amsgrad:
            arrays.append(K.real(max_exp_avg_sqs[i]._data))
        rows.append((arrays, c))
    K.run(K.adam, rows, 2)
    for p in params:
        _bump(p, "step")


def _adam_consts(step, dt, lr, beta1, beta2, weight_decay, eps, maximize, amsgrad, decoupled):
    bc1 = 1 - beta1 ** step
    bc2_sqrt = (1 - beta2 ** step) ** 0.5
    step_size = lr / bc1
    if weight_decay == 0:
        wd = None
    else:
        wd = K.const(1 - lr * weight_decay if decoupled else weight_decay, dt)
    return (wd, decoupled, maximize, K.const(beta1, dt), K.const(1 - beta1, dt), K.const(beta2, dt),
            K.const(1 - beta2, dt), K.const(eps * bc2_sqrt, dt), K.const(-step_size * bc2_sqrt, dt), amsgrad)
