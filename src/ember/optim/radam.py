"""RAdam: Adam with a rectified adaptive learning rate."""
from . import _functional as K
from .adam import _check_betas
from .optimizer import (
    Optimizer,
    _bump,
    _check_differentiable,
    _check_lr,
    _closure_loss,
    _inc,
    _step_tensor,
    _to_scalar,
    _zeros_state,
)

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    """Same as `torch.optim.RAdam`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_betas(betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable, "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "decoupled_weight_decay": False,
                       "capturable": False}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        return {"step": _step_tensor(), "exp_avg": _zeros_state(p), "exp_avg_sq": _zeros_state(p)}

    def step(self, closure=None):
        """Same as `torch.optim.RAdam.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_avg_sqs, state_steps) = self._gather(
                group, ("exp_avg", "exp_avg_sq", "step"))
            if params:
                beta1, beta2 = group["betas"]
                radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, beta1=beta1, beta2=beta2, lr=group["lr"],
                      weight_decay=group["weight_decay"], eps=group["eps"], maximize=group["maximize"],
                      decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          differentiable=False, capturable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, eps):
    """Same as `torch.optim.radam.radam`."""
    lr = _to_scalar(lr)
    consts = {}
    rows = []
    for i, p in enumerate(params):
        step = _inc(state_steps[i])
        pa = p._data
        dt = K.work_dtype(pa)
        c = consts.get((step, dt))
        if c is None:
            c = consts[(step, dt)] = _radam_consts(step, dt, lr, beta1, beta2, weight_decay, eps, maximize,
                                                   decoupled_weight_decay)
        rows.append(([K.real(pa), K.real(grads[i]._data), K.real(exp_avgs[i]._data), K.real(exp_avg_sqs[i]._data)],
                     c))
    K.run(K.radam, rows, 2)
    for p in params:
        _bump(p, "step")


def _radam_consts(step, dt, lr, beta1, beta2, weight_decay, eps, maximize, decoupled):
    bc1 = 1 - beta1 ** step
    bc2 = 1 - beta2 ** step
    # the length of the approximated simple moving average; the variance is tractable when it exceeds 5
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
    rectified = rho_t > 5.0
    if rectified:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        coef = -lr * rect * bc2 ** 0.5 / bc1
    else:
        coef = -lr / bc1
    if weight_decay == 0:
        wd = None
    else:
        wd = K.const(1 - lr * weight_decay if decoupled else weight_decay, dt)
    return (wd, decoupled, maximize, K.const(beta1, dt), K.const(1 - beta1, dt), K.const(beta2, dt),
            K.const(1 - beta2, dt), K.const(eps, dt), rectified, K.const(coef, dt))
