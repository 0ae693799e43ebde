"""ASGD: averaged stochastic gradient descent."""
import numpy as np

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

__all__ = ["ASGD", "asgd"]


class ASGD(Optimizer):
    """Same as `torch.optim.ASGD`."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _tensor_state = ("step", "eta", "mu")

    def _init_state(self, p, group):
        return {"step": _step_tensor(), "eta": _step_tensor(_to_scalar(group["lr"])), "mu": _step_tensor(1.0),
                "ax": _zeros_state(p)}

    def step(self, closure=None):
        """Same as `torch.optim.ASGD.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (mus, axs, etas, state_steps) = self._gather(
                group, ("mu", "ax", "eta", "step"))
            if params:
                asgd(params, grads, axs, mus, etas, state_steps, lambd=group["lambd"], lr=group["lr"],
                     t0=group["t0"], alpha=group["alpha"], weight_decay=group["weight_decay"],
                     maximize=group["maximize"])
        return loss


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, differentiable=False,
         capturable=False, has_complex=False, *, lambd, lr, t0, alpha, weight_decay):
    """Same as `torch.optim.asgd.asgd`."""
    lr = _to_scalar(lr)
    rows = []
    for i, p in enumerate(params):
        step = _inc(state_steps[i])
        eta_t, mu_t = etas[i]._data, mus[i]._data
        eta, mu = float(eta_t), float(mu_t)
        pa = p._data
        dt = K.work_dtype(pa)
        c = (K.const(weight_decay, dt) if weight_decay != 0 else None, maximize, K.const(1 - lambd * eta, dt),
             K.const(-eta, dt), K.const(mu, dt) if mu != 1 else None)
        rows.append(([K.real(pa), K.real(grads[i]._data), K.real(axs[i]._data)], c))
        # the next step's rates, rounded to float32 as torch rounds them (even into float64 state)
        eta_t[()] = np.float32(lr / ((1 + lambd * lr * step) ** alpha))
        mu_t[()] = np.float32(1 / max(1, step - t0))
    K.run(K.asgd, rows, 2)
    for p in params:
        _bump(p, "step")
