"""One-launch LSTM time steps on a GPU: the gate arithmetic of a forward step and of a backward step as one CuPy
ElementwiseKernel each, in rnn.py's layout (NOTE [ Fused RNN kernels ] there).

On a GPU each ufunc of rnn.py's per-step chains is a kernel launch: a forward step is sixteen of them and a backward
step seven, for a few thousand elements each, so an LSTM step is bound by launches, not by the GPU. Here a step is
its recurrent GEMM plus one kernel. The arithmetic is the chains', in float (double for float64), one thread per
(row, hidden unit) handling that unit's four gates. With a projection (proj_size), and where the kernels cannot run
(see _backend/kernels.py), rnn.py keeps its chains.
"""
from ..._backend.kernels import Kernels

# G holds, per row, the gates (o, i, f, g) pre-activated as z = -a (sigmoid rows) and z = -2a (the g rows); the
# step adds the recurrent product and the bias, and leaves the activations in G for the backward.
_FORWARD = """
typedef {W} W;
const ptrdiff_t base = (ptrdiff_t)(i / H) * 4 * H + i % H;
W s[4];
for (int k = 0; k < 4; ++k) {{
    W z = (W)G[base + k * H] + (W)R[base + k * H];
    if (has_bias) z += (W)B[k * H + i % H];
    s[k] = (W)1 / ((W)1 + exp(z));
    G[base + k * H] = (T)s[k];
}}
W g = (W)G[base + 3 * H] * (W)2 - (W)1;
G[base + 3 * H] = (T)g;
c = (T)((W)G[base + 2 * H] * (W)cp + (W)G[base + H] * g);
tc = (T)((W)2 / ((W)1 + exp((W)-2 * (W)c)) - (W)1);
h = (T)((W)G[base] * (W)tc);
"""

# F holds the derivative factors of the gates (N, 4, H), K the factor of dc in dh; the step writes dZ's row and
# carries dc to the previous step (dh comes from the recurrent GEMM that follows).
_BACKWARD = """
typedef {W} W;
const ptrdiff_t base = (ptrdiff_t)(i / H) * 4 * H + i % H;
W dhv = (W)dh;
if (has_gy) dhv += (W)gy;
W dcv = (W)dc + dhv * (W)K;
dZ[base] = (T)((W)F[base] * dhv);
for (int k = 1; k < 4; ++k) dZ[base + k * H] = (T)((W)F[base + k * H] * dcv);
dc = (T)(dcv * (W)G[base + 2 * H]);
"""



def _make(xp, name, wide):
    if name == "forward":
        return xp.ElementwiseKernel("T cp, raw T R, raw T B, int32 H, bool has_bias", "raw T G, T c, T tc, T h",
                                    _FORWARD.format(W=wide), f"ember_lstm_forward_{wide}")
    return xp.ElementwiseKernel("T dh, T gy, T K, raw T F, raw T G, int32 H, bool has_gy", "T dc, raw T dZ",
                                _BACKWARD.format(W=wide), f"ember_lstm_backward_{wide}")


KERNELS = Kernels(_make)
available = KERNELS.available


def forward_step(g, r, b, cp, c, tc, h, H):
    """Gates of one step: g (n, 4H) pre-activations += r (the recurrent product) + b, activated in place; c, tc,
    h (n, H) written. False where the kernel could not be built (the caller then runs its chain)."""
    return KERNELS("forward", g, (cp, r, r if b is None else b, H, b is not None, g, c, tc, h))


def backward_step(dh, gy, K, F, G, dc, dZ, H):
    """dZ's rows of one step from dh (+ gy) and dc; dc carried back in place. False as forward_step."""
    return KERNELS("backward", dh, (dh, dh if gy is None else gy, K, F, G, H, gy is not None, dc, dZ))
