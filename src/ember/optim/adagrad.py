"""Adagrad."""
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import _functional as K
from .optimizer import (
    Optimizer,
    _bump,
    _check_differentiable,
    _check_fused,
    _check_lr,
    _closure_loss,
    _inc,
    _is_sparse,
    _step_tensor,
    _to_scalar,
    _zeros_state,
)

__all__ = ["Adagrad", "adagrad"]


def _sum_state(p, initial_accumulator_value):
    v = initial_accumulator_value
    return _zeros_state(p, complex(v, v) if p.is_complex() else v)


class Adagrad(Optimizer):
    """Same as `torch.optim.Adagrad`."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        _check_differentiable(differentiable)
        # unlike the other optimizers, Adagrad creates its state up front, for every parameter
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor()
                state["sum"] = _sum_state(p, initial_accumulator_value)

    def share_memory(self):
        """Same as `torch.optim.Adagrad.share_memory`: the state sums move to shared memory."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    _group_defaults = {"foreach": None, "maximize": False, "differentiable": False, "fused": None}
    _tensor_state = ("step",)

    def _init_state(self, p, group):
        return {"step": _step_tensor(), "sum": _sum_state(p, self.defaults["initial_accumulator_value"])}

    def _sparse_grad(self, p, g):
        pass  # Adagrad updates sparse gradients where they have entries (adagrad below)

    def step(self, closure=None):
        """Same as `torch.optim.Adagrad.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, (state_sums, state_steps) = self._gather(
                group, ("sum", "step"))
            if params:
                adagrad(params, grads, state_sums, state_steps, lr=group["lr"], weight_decay=group["weight_decay"],
                        lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr, weight_decay,
            lr_decay, eps, maximize):
    """Same as `torch.optim.adagrad.adagrad`."""
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")
    lr = _to_scalar(lr)
    consts = {}
    rows = []
    for i, p in enumerate(params):
        step = _inc(state_steps[i])
        if _is_sparse(grads[i]):
            _sparse_adagrad(p, grads[i], state_sums[i], lr / (1 + (step - 1) * lr_decay), weight_decay, eps,
                            maximize)
            continue
        pa = p._data
        dt = K.work_dtype(pa)
        c = consts.get((step, dt))
        if c is None:
            clr = lr / (1 + (step - 1) * lr_decay)
            c = consts[(step, dt)] = (K.const(weight_decay, dt) if weight_decay != 0 else None, maximize,
                                      K.const(eps, dt), K.const(-clr, dt))
        rows.append(([K.real(pa), K.real(grads[i]._data), K.real(state_sums[i]._data)], c))
    if rows:
        K.run(K.adagrad, rows, 2)
    for p in params:
        _bump(p, "step")


def _sparse_adagrad(p, g, state_sum, clr, weight_decay, eps, maximize):
    """torch's Adagrad step for a sparse gradient: the sum of squares and p change only at its (coalesced)
    indices."""
    if weight_decay != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    g = g.coalesce()
    at, values = tuple(g._indices()), g._values()
    if maximize:
        values = -values
    with no_grad():
        state_sum.index_put_(at, values * values, accumulate=True)
        p.index_put_(at, values / (state_sum[at].sqrt() + eps) * -clr, accumulate=True)
