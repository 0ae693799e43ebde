"""Adadelta."""
from . import _functional as K
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

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Same as `torch.optim.Adadelta`."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                    "capturable": capturable, "foreach": foreach, "differentiable": differentiable}
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        return {"step": _step_tensor(), "square_avg": _zeros_state(p), "acc_delta": _zeros_state(p)}

    def step(self, closure=None):
        """Same as `torch.optim.Adadelta.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (square_avgs, acc_deltas, state_steps) = self._gather(
                group, ("square_avg", "acc_delta", "step"))
            if params:
                adadelta(params, grads, square_avgs, acc_deltas, state_steps, lr=group["lr"], rho=group["rho"],
                         eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    """Same as `torch.optim.adadelta.adadelta`."""
    lr = _to_scalar(lr)
    consts = {}
    rows = []
    for i, p in enumerate(params):
        _inc(state_steps[i])
        pa = p._data
        dt = K.work_dtype(pa)
        c = consts.get(dt)
        if c is None:
            c = consts[dt] = (K.const(weight_decay, dt) if weight_decay != 0 else None, maximize, K.const(rho, dt),
                              K.const(1 - rho, dt), K.const(eps, dt), K.const(-lr, dt))
        rows.append(([K.real(pa), K.real(grads[i]._data), K.real(square_avgs[i]._data),
                      K.real(acc_deltas[i]._data)], c))
    K.run(K.adadelta, rows, 3)
    for p in params:
        _bump(p, "step")
