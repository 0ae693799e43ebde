"""The regularized lower incomplete gamma function (Gamma's cdf), differentiable in x as torch's igamma."""
import numpy as np

import ember
from ember._ops._dispatch import SAVE_INPUTS, Op, dispatch

__all__ = ["gammainc"]


def _gammainc_fwd(a, x):
    if a.__class__ is np.ndarray:
        from scipy import special as sp
    else:  # CuPy arrays: the same function from cupyx
        import cupyx.scipy.special as sp
    return sp.gammainc(a, x).astype(np.result_type(a.dtype, x.dtype), copy=False)


def _gammainc_bwd(ctx, g):
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); torch does not differentiate in a either
    a, x = ctx.inputs
    return None, g * ember.exp((a - 1) * ember.log(x) - x - ember.lgamma(a))


_GAMMAINC = Op("igamma", _gammainc_fwd, _gammainc_bwd, SAVE_INPUTS)


def gammainc(a, x):
    """Same as `torch.special.gammainc` (no gradient in a, as torch)."""
    a, x = ember.broadcast_tensors(a, x)
    return dispatch(_GAMMAINC, (a, x))
