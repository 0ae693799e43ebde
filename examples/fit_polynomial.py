"""Fit a cubic polynomial to sin(x) on [-pi, pi] with ember tensors and autograd (plain gradient descent)."""
import math

import numpy as np

import ember as torch


def main(steps=2000, lr=1e-6):
    torch.manual_seed(0) if hasattr(torch, "manual_seed") else None
    x = torch.from_numpy(np.linspace(-math.pi, math.pi, 2000))
    y = torch.from_numpy(np.sin(np.linspace(-math.pi, math.pi, 2000)))
    a, b, c, d = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.1, -0.2, 0.3, -0.1))
    for step in range(steps):
        pred = a + b * x + c * x * x + d * x * x * x
        loss = ((pred - y) * (pred - y)).sum()
        if step % 400 == 399:
            print(f"step {step + 1:5d}  loss {loss.item():10.3f}")
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    print(f"result: y = {a.item():.4f} + {b.item():.4f} x + {c.item():.4f} x^2 + {d.item():.4f} x^3")
    return loss.item()


if __name__ == "__main__":
    main()
