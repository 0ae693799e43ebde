"""Adafactor: second moments kept as row and column factors for matrices (sublinear memory)."""
import math

import ml_dtypes
import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _closure_loss, _inc, _is_sparse, _step_tensor, _to_scalar

__all__ = ["Adafactor", "adafactor"]


class Adafactor(Optimizer):
    """Same as `torch.optim.Adafactor`."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    _group_defaults = {"foreach": None, "maximize": False}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        g = p.grad
        if g.dim() > 1:  # factored along the last two dimensions
            return {"step": _step_tensor(), "row_var": g.new_zeros(g.shape[:-1] + (1,)),
                    "col_var": g.new_zeros(g.shape[:-2] + (1, g.shape[-1]))}
        return {"step": _step_tensor(), "variance": g.new_zeros(g.shape)}

    def step(self, closure=None):
        """Same as `torch.optim.Adafactor.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, rows, cols, variances, steps = [], [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                if _is_sparse(p.grad):
                    self._sparse_grad(p, p.grad)
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                state = self.state[p]
                if not state:
                    state.update(self._init_state(p, group))
                params.append(p)
                grads.append(p.grad)
                rows.append(state.get("row_var"))
                cols.append(state.get("col_var"))
                variances.append(state.get("variance"))
                steps.append(state["step"])
            eps1, eps2 = group["eps"]
            adafactor(params, grads, rows, cols, variances, steps, d=group["d"], lr=group["lr"],
                      beta2_decay=group["beta2_decay"], weight_decay=group["weight_decay"], eps1=eps1, eps2=eps2,
                      maximize=group["maximize"])
        return loss


def adafactor(params, grads, row_vars, col_vars, variances, state_steps, foreach=None, grad_scale=None,
              found_inf=None, has_complex=False, *, d, lr, beta2_decay, weight_decay, eps1, eps2, maximize):
    """Same as `torch.optim._adafactor.adafactor` (the single-tensor algorithm)."""
    lr = _to_scalar(lr)
    with no_grad():
        for i, p in enumerate(params):
            g = -grads[i] if maximize else grads[i]
            e1 = float(ml_dtypes.finfo(p._data.dtype).eps) if eps1 is None else eps1
            t = _inc(state_steps[i])
            beta2_weight = t ** beta2_decay  # 1 - beta2_t: the new estimate's weight
            rho = min(lr, 1 / math.sqrt(t))
            alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
            if weight_decay != 0:
                p.mul_(1 - lr * weight_decay)
            var = _second_moment(g, row_vars[i], col_vars[i], variances[i], beta2_weight, e1)
            update = var.clamp_(min=e1 * e1).rsqrt_().mul_(g)
            # clip the update's RMS to d
            denom = max(1.0, update.norm(2).item() / (math.sqrt(update.numel()) * d))
            p.add_(update, alpha=-alpha / denom)


def _second_moment(g, row_var, col_var, variance, weight, eps1):
    """The running estimate of E[g^2]: the outer product of row and column means for matrices."""
    if g.dim() > 1:
        row_var.lerp_(g.norm(dim=-1, keepdim=True).square_().div_(g.shape[-1]), weight)
        col_var.lerp_(g.norm(dim=-2, keepdim=True).square_().div_(g.shape[-2]), weight)
        return (row_var @ col_var).div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
    variance.lerp_(g * g, weight)
    return variance.clone()
