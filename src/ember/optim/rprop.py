"""Rprop: resilient backpropagation."""
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

__all__ = ["Rprop", "rprop"]


class Rprop(Optimizer):
    """Same as `torch.optim.Rprop`."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        lr = _to_scalar(group["lr"])
        return {"step": _step_tensor(), "prev": _zeros_state(p),
                "step_size": _zeros_state(p, complex(lr, lr) if p.is_complex() else lr)}

    def step(self, closure=None):
        """Same as `torch.optim.Rprop.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (prevs, step_sizes, state_steps) = self._gather(
                group, ("prev", "step_size", "step"))
            if params:
                etaminus, etaplus = group["etas"]
                step_size_min, step_size_max = group["step_sizes"]
                rprop(params, grads, prevs, step_sizes, state_steps, step_size_min=step_size_min,
                      step_size_max=step_size_max, etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"])
        return loss


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False, maximize=False,
          differentiable=False, has_complex=False, *, step_size_min, step_size_max, etaminus, etaplus):
    """Same as `torch.optim.rprop.rprop`."""
    rows = []
    for i, p in enumerate(params):
        _inc(state_steps[i])
        c = (maximize, etaplus, etaminus, step_size_min, step_size_max)
        rows.append(([K.real(p._data), K.real(grads[i]._data), K.real(prevs[i]._data), K.real(step_sizes[i]._data)],
                     c))
    K.run(K.rprop, rows, 2)
    for p in params:
        _bump(p, "step")
