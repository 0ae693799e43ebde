"""Forward-mode AD against torch's: the same tangents for the same dual inputs (float64)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

# torch's forward_ad module scripts a helper on import, which torch 2.13 warns about
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

CASES = {
    "arith": (lambda m, a, b: (a * b - a / (b.abs() + 1) + 3 * a) ** 2, [(3, 4), (3, 4)]),
    "unary": (lambda m, a: a.exp() + a.sin() * a.cos() + a.tanh() + a.sigmoid() + (a.abs() + 1).log(), [(6,)]),
    "special": (lambda m, a: m.special.erf(a) + m.lgamma(a.abs() + 1) + m.atan(a) + m.nn.functional.gelu(a),
                [(5,)]),
    "matmul": (lambda m, a, b: m.matmul(a, b).relu(), [(2, 3, 4), (4, 5)]),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(3, 4), (2, 4), (2,)]),
    "conv2d": (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=2, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3)]),
    "max_pool": (lambda m, x: m.nn.functional.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "layer_norm": (lambda m, x, w, b: m.nn.functional.layer_norm(x, (5,), w, b), [(3, 5), (5,), (5,)]),
    "batch_norm": (lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True), [(4, 3, 2)]),
    "softmax": (lambda m, x: m.nn.functional.softmax(x, 1) + m.nn.functional.log_softmax(x, 0), [(3, 4)]),
    "losses": (lambda m, x, y: m.nn.functional.mse_loss(x, y) + m.nn.functional.smooth_l1_loss(x, y)
               + m.nn.functional.binary_cross_entropy_with_logits(x, y.sigmoid()), [(3, 4), (3, 4)]),
    "cross_entropy": (lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([1, 0, 3])), [(3, 4)]),
    "reductions": (lambda m, x: m.stack([x.sum(), x.mean(), x.std(), x.logsumexp(1).sum(), x.amax()]), [(3, 4)]),
    "shape": (lambda m, x: m.cat([x.t().reshape(2, 6), x.flip(0).reshape(2, 6)]).roll(1, 0)[1:, ::2], [(3, 4)]),
    "indexing": (lambda m, x: x[m.tensor([2, 0])].gather(1, m.tensor([[0, 1], [3, 3]])), [(3, 4)]),
    "where-clamp": (lambda m, x, y: m.where(x > y, x, y).clamp(-0.5, 0.5), [(5,), (5,)]),
    "cumulative": (lambda m, x: x.cumsum(0) * x.cumprod(1), [(3, 4)]),
    "linalg": (lambda m, a: m.linalg.inv(a @ a.mT + m.eye(3, dtype=a.dtype)) + m.linalg.det(a), [(3, 3)]),
    "lstm-cell": (lambda m, x, h, w: m.tanh(x @ w + h).sigmoid() * h, [(2, 3), (2, 3), (3, 3)]),
}


def _run(lib, fwd, f, arrays, tangents):
    with fwd.dual_level():
        duals = [fwd.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
        y = f(lib, *duals)
        p, t = fwd.unpack_dual(y)
        return p.detach().numpy(), t.detach().numpy()


@pytest.mark.parametrize("name", list(CASES))
def test_tangents_match_torch(name):
    f, shapes = CASES[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    tangents = [rng.standard_normal(s) for s in shapes]
    import torch.autograd.forward_ad as tfwd
    import ember.autograd.forward_ad as efwd
    ep, et = _run(ember, efwd, f, arrays, tangents)
    tp, tt = _run(torch, tfwd, f, arrays, tangents)
    np.testing.assert_allclose(ep, tp, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(et, tt, rtol=1e-9, atol=1e-9)
