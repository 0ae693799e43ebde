"""Adamax: Adam with the infinity norm."""
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

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Same as `torch.optim.Adamax`."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_betas(betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        return {"step": _step_tensor(), "exp_avg": _zeros_state(p), "exp_inf": _zeros_state(p)}

    def step(self, closure=None):
        """Same as `torch.optim.Adamax.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_infs, state_steps) = self._gather(
                group, ("exp_avg", "exp_inf", "step"))
            if params:
                beta1, beta2 = group["betas"]
                adamax(params, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"], beta1=beta1, beta2=beta2,
                       lr=group["lr"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, differentiable=False,
           capturable=False, has_complex=False, *, eps, beta1, beta2, lr, weight_decay):
    """Same as `torch.optim.adamax.adamax`."""
    lr = _to_scalar(lr)
    consts = {}
    rows = []
    for i, p in enumerate(params):
        step = _inc(state_steps[i])
        pa = p._data
        dt = K.work_dtype(pa)
        c = consts.get((step, dt))
        if c is None:
            clr = lr / (1 - beta1 ** step)
            c = consts[(step, dt)] = (K.const(weight_decay, dt) if weight_decay != 0 else None, maximize,
                                      K.const(beta1, dt), K.const(1 - beta1, dt), K.const(beta2, dt),
                                      K.const(eps, dt), K.const(-clr, dt))
        rows.append(([K.real(pa), K.real(grads[i]._data), K.real(exp_avgs[i]._data), K.real(exp_infs[i]._data)], c))
    K.run(K.adamax, rows, 2)
    for p in params:
        _bump(p, "step")
