"""SGD: stochastic gradient descent with optional momentum, dampening, Nesterov momentum and weight decay."""
import numpy as np

from .._tensor import Tensor
from . import _functional as K
from .optimizer import (
    Optimizer,
    _add_sparse_,
    _bump,
    _check_differentiable,
    _check_fused,
    _check_lr,
    _closure_loss,
    _is_sparse,
    _to_scalar,
)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Same as `torch.optim.SGD`."""
    _capture_safe = True  # no host-side state changes from step to step once the momentum buffers exist

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        _check_differentiable(differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """Same as `torch.optim.SGD.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            params, grads, bufs = [], [], []
            momentum = group["momentum"]
            state = self.state
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if _is_sparse(g):  # Embedding(sparse=True): updated here, where the gradient has entries
                    buf = _sparse_sgd(p, g, state[p].get("momentum_buffer"), group)
                    if buf is not None:
                        state[p]["momentum_buffer"] = buf
                    continue
                params.append(p)
                grads.append(g)
                if momentum != 0:
                    bufs.append(state[p].get("momentum_buffer"))
            if not params:
                continue
            sgd(params, grads, bufs, weight_decay=group["weight_decay"], momentum=momentum, lr=group["lr"],
                dampening=group["dampening"], nesterov=group["nesterov"], maximize=group["maximize"])
            if momentum != 0:
                for p, buf in zip(params, bufs):
                    state[p]["momentum_buffer"] = buf
        return loss


def _sparse_sgd(p, g, buf, group):
    """torch's SGD step for a sparse gradient: the momentum buffer is sparse too (its entries accumulate), and p
    changes only where the gradient or buffer has entries; returns the buffer (None without momentum)."""
    if group["weight_decay"] != 0:
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if group["maximize"]:
        g = -g
    momentum = group["momentum"]
    if momentum != 0:
        buf = g.clone() if buf is None else buf * momentum + g * (1 - group["dampening"])
        g = g + buf * momentum if group["nesterov"] else buf
    _add_sparse_(p, g, -_to_scalar(group["lr"]))
    return buf


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None, grad_scale=None,
        found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """Same as `torch.optim.sgd.sgd`: updates params in place; None entries of momentum_buffer_list are replaced
    by new buffers."""
    if grad_scale is not None or found_inf is not None:
        raise NotImplementedError("sgd: grad_scale and found_inf are not supported")
    lr = _to_scalar(lr)
    weight_decay = _to_scalar(weight_decay)
    consts = {}
    rows = []
    for i, p in enumerate(params):
        pa, ga = p._data, d_p_list[i]._data
        dt = K.work_dtype(pa)
        arrays = [K.real(pa), K.real(ga)]
        init = False
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = momentum_buffer_list[i] = Tensor._make(np.empty_like(ga, order="C"))
                init = True
            arrays.append(K.real(buf._data))
        key = (dt, init)
        c = consts.get(key)
        if c is None:
            c = consts[key] = (K.const(weight_decay, dt) if weight_decay != 0 else None, K.const(momentum, dt),
                               K.const(1 - dampening, dt) if dampening != 0 else None, nesterov, maximize,
                               K.const(-lr, dt), init)
        rows.append((arrays, c))
    K.run(K.sgd, rows, 2)
    for p in params:
        _bump(p, "step")
