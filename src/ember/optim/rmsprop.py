"""RMSprop."""
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

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """Same as `torch.optim.RMSprop`."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _group_defaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False, "differentiable": False,
                       "capturable": False}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        state = {"step": _step_tensor(), "square_avg": _zeros_state(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_state(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_state(p)
        return state

    def step(self, closure=None):
        """Same as `torch.optim.RMSprop.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (square_avgs, grad_avgs, momentum_buffer_list, state_steps) = self._gather(
                group, ("square_avg", "grad_avg" if group["centered"] else None,
                        "momentum_buffer" if group["momentum"] > 0 else None, "step"))
            if params:
                rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, lr=group["lr"],
                        alpha=group["alpha"], eps=group["eps"], weight_decay=group["weight_decay"],
                        momentum=group["momentum"], centered=group["centered"], maximize=group["maximize"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None, maximize=False,
            differentiable=False, capturable=False, has_complex=False, *, lr, alpha, eps, weight_decay, momentum,
            centered):
    """Same as `torch.optim.rmsprop.rmsprop`."""
    lr = _to_scalar(lr)
    consts = {}
    rows = []
    for i, p in enumerate(params):
        _inc(state_steps[i])
        pa = p._data
        dt = K.work_dtype(pa)
        c = consts.get(dt)
        if c is None:
            c = consts[dt] = (K.const(weight_decay, dt) if weight_decay != 0 else None, maximize, K.const(alpha, dt),
                              K.const(1 - alpha, dt), K.const(eps, dt),
                              K.const(momentum, dt) if momentum > 0 else None, centered, K.const(-lr, dt))
        arrays = [K.real(pa), K.real(grads[i]._data), K.real(square_avgs[i]._data)]
        if momentum > 0:
            arrays.append(K.real(momentum_buffer_list[i]._data))
        if centered:
            arrays.append(K.real(grad_avgs[i]._data))
        rows.append((arrays, c))
    K.run(K.rmsprop, rows, 2)
    for p in params:
        _bump(p, "step")
