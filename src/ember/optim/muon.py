"""Muon: momentum whose update is orthogonalized by a Newton-Schulz iteration (2-D parameters only)."""
import math

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, _closure_loss, _is_sparse, _to_scalar

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """A quintic Newton-Schulz iteration towards the orthogonal factor of grad (U V^T of its SVD), in bfloat16 as
    torch runs it: it converges only roughly (singular values land near 1, not on it), which is what Muon wants."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = _bf16(grad.float())
    if tall:
        x = x.T
    x = _bf16(x / _bf16(x.norm()).clamp(min=eps))
    for _ in range(ns_steps):  # each product accumulated in float32 and rounded once, as bfloat16 GEMMs do
        gram = _bf16(x @ x.T)
        x = _bf16(_bf16(gram @ gram * c + gram * b) @ x + x * a)
    return (x.T if tall else x).to(_dtype.bfloat16)


def _bf16(t):
    """t rounded to bfloat16, kept in float32."""
    return t.to(_dtype.bfloat16).float()


def _adjust_lr(lr, adjust_lr_fn, shape):
    """The learning rate scaled so that orthogonalized updates of any matrix shape have a similar RMS."""
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, A / B))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(A, B))
    return lr


class Muon(Optimizer):
    """Same as `torch.optim.Muon`."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS, ns_steps=DEFAULT_NS_STEPS,
                 adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        """Same as `torch.optim.Muon.step`."""
        loss = _closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr = _to_scalar(group["lr"])
                momentum = group["momentum"]
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if _is_sparse(g):
                        self._sparse_grad(p, g)
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    state = self.state[p]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = g.new_zeros(g.shape)
                    buf = state["momentum_buffer"]
                    buf.lerp_(g, 1 - momentum)
                    update = g.lerp(buf, momentum) if group["nesterov"] else buf
                    update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                                         group["eps"])
                    p.mul_(1 - lr * group["weight_decay"])
                    p.add_(update.to(p.dtype), alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
