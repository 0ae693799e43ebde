"""SparseAdam: Adam over the rows a sparse gradient holds (nn.Embedding(sparse=True))."""
import math

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _closure_loss, _to_scalar, _zeros_state

__all__ = ["SparseAdam", "sparse_adam"]


class SparseAdam(Optimizer):
    """Same as `torch.optim.SparseAdam`: the moments and parameters are updated only where the (sparse)
    gradient stores values; a dense gradient is an error."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for k in (0, 1):
            if not 0.0 <= betas[k] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {k}: {betas[k]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        for kind, test, why in (("Sparse", lambda p: p.is_sparse, "SparseAdam requires dense parameter tensors"),
                                ("Complex", lambda p: p.is_complex(),
                                 "SparseAdam does not support complex parameters")):
            where = [[i, j] for i, g in enumerate(self.param_groups) for j, p in enumerate(g["params"]) if test(p)]
            if where:
                raise ValueError(f"{kind} params at indices {where}: {why}")

    _group_defaults = {"maximize": False}

    def _sparse_grad(self, p, g):
        pass  # what it is for

    def _init_state(self, p, group):
        return {"step": 0, "exp_avg": _zeros_state(p), "exp_avg_sq": _zeros_state(p)}

    def step(self, closure=None):
        """Same as `torch.optim.SparseAdam.step`."""
        loss = _closure_loss(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None and not p._grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
            params, grads, (exp_avgs, exp_avg_sqs) = self._gather(group, ("exp_avg", "exp_avg_sq"))
            steps = []
            for p in params:
                self.state[p]["step"] += 1
                steps.append(self.state[p]["step"])
            beta1, beta2 = group["betas"]
            sparse_adam(params, grads, exp_avgs, exp_avg_sqs, steps, eps=group["eps"], beta1=beta1, beta2=beta2,
                        lr=group["lr"], maximize=group["maximize"])
        return loss


def sparse_adam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, eps, beta1, beta2, lr, maximize):
    """Same as `torch.optim._functional.sparse_adam`: each gradient coalesced, then at its indices
    m += (g - m)(1 - beta1), v += (g^2 - v)(1 - beta2), p -= lr sqrt(1 - beta2^t) / (1 - beta1^t) m / (sqrt(v) + eps)."""
    lr = _to_scalar(lr)
    with no_grad():
        for p, grad, exp_avg, exp_avg_sq, step in zip(params, grads, exp_avgs, exp_avg_sqs, state_steps):
            grad = grad.coalesce()
            values = grad._values()
            if values.numel() == 0:
                continue
            if maximize:
                values = -values
            at = tuple(grad._indices())  # one index tensor per sparse dim; coalesced: each position once
            old_avg, old_sq = exp_avg[at], exp_avg_sq[at]
            avg = old_avg + (values - old_avg) * (1 - beta1)
            sq = old_sq + (values * values - old_sq) * (1 - beta2)
            exp_avg.index_put_(at, avg)
            exp_avg_sq.index_put_(at, sq)
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            p.index_put_(at, p[at] + -step_size * (avg / (sq.sqrt() + eps)))
