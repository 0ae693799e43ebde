"""Samplers the distributions need beyond ember's random ops: Gamma with implicit reparameterization, binomial."""
import numpy as np

from ember._ops._dispatch import SAVE_BOTH, Op, dispatch, dispatch1, wrap
from ember._ops.random import _engine

__all__ = ["binomial", "standard_gamma"]


def _host(a):
    return a if a.__class__ is np.ndarray else a.get()


def _gamma_fwd(alpha, eng):
    x = eng.g.standard_gamma(alpha.astype(np.float64))
    tiny = np.finfo(alpha.dtype).tiny
    return eng.xp.maximum(x, tiny).astype(alpha.dtype, copy=False)


def _gamma_bwd(ctx, g):
    # NOTE [ Implicit reparameterization ]: x = F^{-1}(u; a) for the Gamma(a, 1) CDF F, so
    # dx/da = -(dF/da)(x; a) / f(x; a); dF/da is taken by a central difference of the regularized incomplete gamma.
    from scipy import special as _sp  # only backward needs it: keeps `import ember.distributions` light
    a = _host(ctx.inputs[0]._data).astype(np.float64)
    x = _host(ctx.output._data).astype(np.float64)
    h = np.maximum(a, 1e-3) * 1e-5
    dfda = (_sp.gammainc(a + h, x) - _sp.gammainc(a - h, x)) / (2 * h)
    log_pdf = (a - 1) * np.log(x) - x - _sp.gammaln(a)
    with np.errstate(over="ignore", invalid="ignore"):
        dxda = -dfda * np.exp(-log_pdf)
    dxda = np.nan_to_num(dxda, nan=0.0, posinf=0.0, neginf=0.0)
    xp = ctx.output._data.__class__
    if xp is not np.ndarray:
        import cupy
        dxda = cupy.asarray(dxda)
    return g * wrap(dxda.astype(ctx.output._data.dtype))


_GAMMA = Op("standard_gamma", _gamma_fwd, _gamma_bwd, SAVE_BOTH, node_name="StandardGammaBackward0")


def standard_gamma(alpha):
    """Gamma(alpha, 1) samples, differentiable in alpha by implicit reparameterization (as `torch._standard_gamma`)."""
    return dispatch1(_GAMMA, alpha, _engine(None, alpha.device))


_BINOMIAL = Op("binomial", lambda n, p, eng: eng.g.binomial(n.astype(np.int64), p).astype(p.dtype))


def binomial(count, prob):
    """Same as `torch.binomial`: samples, not differentiable."""
    return dispatch(_BINOMIAL, (count.detach(), prob.detach()), _engine(None, prob.device))
