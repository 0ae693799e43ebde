"""NAdam: Adam with Nesterov momentum (and momentum decay)."""
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

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """Same as `torch.optim.NAdam`."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check_betas(betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    _group_defaults = {"maximize": False, "foreach": None, "capturable": False, "differentiable": False,
                       "decoupled_weight_decay": False}
    _tensor_state = ("step", "mu_product")

    def _init_state(self, p, group):
        return {"step": _step_tensor(), "mu_product": _step_tensor(1.0), "exp_avg": _zeros_state(p),
                "exp_avg_sq": _zeros_state(p)}

    def step(self, closure=None):
        """Same as `torch.optim.NAdam.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (exp_avgs, exp_avg_sqs, mu_products, state_steps) = self._gather(
                group, ("exp_avg", "exp_avg_sq", "mu_product", "step"))
            if params:
                beta1, beta2 = group["betas"]
                nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1, beta2=beta2,
                      lr=group["lr"], weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
                      eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
                      maximize=group["maximize"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False,
          foreach=None, capturable=False, differentiable=False, has_complex=False, maximize=False, *, beta1, beta2,
          lr, weight_decay, momentum_decay, eps):
    """Same as `torch.optim.nadam.nadam`."""
    lr = _to_scalar(lr)
    rows = []
    for i, p in enumerate(params):
        step = _inc(state_steps[i])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mp = mu_products[i]._data
        mp *= mu  # the product is kept in float32, as torch keeps it
        mu_product = float(mp)
        pa = p._data
        dt = K.work_dtype(pa)
        if weight_decay == 0:
            wd = None
        else:
            wd = K.const(1 - lr * weight_decay if decoupled_weight_decay else weight_decay, dt)
        c = (wd, decoupled_weight_decay, maximize, K.const(beta1, dt), K.const(1 - beta1, dt), K.const(beta2, dt),
             K.const(1 - beta2, dt), K.const(1 - beta2 ** step, dt), K.const(eps, dt),
             K.const(-lr * (1.0 - mu) / (1.0 - mu_product), dt),
             K.const((-lr * mu_next) / (1.0 - mu_product * mu_next), dt))
        rows.append(([K.real(pa), K.real(grads[i]._data), K.real(exp_avgs[i]._data), K.real(exp_avg_sqs[i]._data)],
                     c))
    K.run(K.nadam, rows, 3)
    for p in params:
        _bump(p, "step")
