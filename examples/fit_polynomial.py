"""Fit y = sin(x) on [-pi, pi] with a cubic polynomial, using ember tensors and autograd.

This is PyTorch's own autograd tutorial program: with `import ember as torch` it runs unchanged.
"""
import math

import ember as torch


def main(steps=2000, learning_rate=1e-6):
    torch.manual_seed(0)
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=torch.float64)
    y = torch.sin(x)
    a, b, c, d = (torch.randn((), dtype=torch.float64, requires_grad=True) for _ in range(4))
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 400 == 399:
            print(f"step {t + 1:5d}  loss {loss.item():10.4f}")
        loss.backward()
        with torch.no_grad():
            for p in (a, b, c, d):
                p -= learning_rate * p.grad
                p.grad = None
    print(f"Result: y = {a.item():.4f} + {b.item():.4f} x + {c.item():.4f} x^2 + {d.item():.4f} x^3")
    return loss.item()


if __name__ == "__main__":
    main()
