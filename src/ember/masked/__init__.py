"""ember.masked: the masked reductions and normalizations of `torch.masked`, on plain tensors.

Each function takes an optional boolean `mask` that broadcasts to `input`. Masked-out elements are replaced by the
operation's identity (0 for sum and norm, 1 for prod, -inf for amax, logsumexp and softmax, nan for median, ...)
and the ordinary op runs on the result; `mean`, `var` and `std` count only the unmasked elements. Fully masked
slices give what torch gives: 0 for sum and norm, 1 for prod, -inf for amax and logsumexp, nan for mean, var,
median and the softmax family. Everything is built from differentiable ember ops, so gradients (0 at masked-out
elements) come from the ops themselves.

`torch.masked.MaskedTensor` (and the MaskedTensor inputs these functions also accept in torch) is not provided.
"""

from .. import _dtype
from .._tensor import Tensor

__all__ = [
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
    "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var",
]

_INF = float("inf")


def _ember():
    import ember
    return ember


def _cast(input, dtype):
    return input if dtype is None or input.dtype == dtype else input.to(dtype)


def _bool_mask(input, mask):
    if mask is None:
        return None
    em = _ember()
    if not isinstance(mask, Tensor):
        mask = em.tensor(mask, device=input.device)
    if mask.dtype != _dtype.bool:
        mask = mask != 0
    return em.broadcast_to(mask, input.shape)


def _filled(input, mask, value):
    """`input` with its masked-out elements set to `value`."""
    mask = _bool_mask(input, mask)
    if mask is None:
        return input
    return _ember().where(mask, input, value)


def _extreme(input, largest):
    # the identity of amin (largest) or amax (not largest) for input's dtype
    dt = input.dtype
    if dt.is_floating_point or dt.is_complex:
        return _INF if largest else -_INF
    if dt == _dtype.bool:
        return largest
    info = _dtype.iinfo(dt)
    return info.max if largest else info.min


def _dims(input, dim):
    if dim is None:
        return None
    if isinstance(dim, int):
        return (dim,)
    dims = tuple(dim)
    return dims if dims else None


def _reduce(op, input, dim, keepdim, mask, fill, dtype):
    x = _filled(_cast(input, dtype), mask, fill)
    dims = _dims(x, dim)
    if dims is None:
        return op(x, tuple(range(x.dim())), keepdim=True) if keepdim else op(x)
    return op(x, dims, keepdim=bool(keepdim))


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Sum of the unmasked elements of `input` over `dim` (all dims when None); masked-out elements count as 0."""
    return _reduce(_ember().sum, input, dim, keepdim, mask, 0, dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Product of the unmasked elements of `input` over `dim`; masked-out elements count as 1."""
    em = _ember()
    x = _filled(_cast(input, dtype), mask, 1)
    dims = _dims(x, dim)
    if x.dim() == 0:
        return em.prod(x)
    # torch's prod reduces one dim at a time
    dims = sorted({d % x.dim() for d in (range(x.dim()) if dims is None else dims)}, reverse=True)
    for d in dims:
        x = em.prod(x, d, keepdim=bool(keepdim))
    return x


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Largest unmasked element over `dim`; -inf (the dtype's minimum for integers) where all are masked."""
    x = _cast(input, dtype)
    return _reduce(_ember().amax, x, dim, keepdim, mask, _extreme(x, False), None)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Smallest unmasked element over `dim`; inf (the dtype's maximum for integers) where all are masked."""
    x = _cast(input, dtype)
    return _reduce(_ember().amin, x, dim, keepdim, mask, _extreme(x, True), None)


def _arg(op, largest, input, dim, keepdim, dtype, mask):
    x = _filled(input, mask, _extreme(input, not largest))
    return op(x, dim, keepdim=bool(keepdim)).to(input.dtype if dtype is None else dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the largest unmasked element over `dim`, as torch.masked gives it: in `dtype` (input's dtype)."""
    return _arg(_ember().argmax, True, input, dim, keepdim, dtype, mask)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Index of the smallest unmasked element over `dim`, in `dtype` (input's dtype when None)."""
    return _arg(_ember().argmin, False, input, dim, keepdim, dtype, mask)


def _count(x, mask, dim, keepdim):
    em = _ember()
    m = _bool_mask(x, mask)
    if m is None:
        m = em.ones(x.shape, dtype=_dtype.bool, device=x.device)
    return _reduce(em.sum, m, dim, keepdim, None, None, None).to(x.dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Mean of the unmasked elements over `dim` (nan where all are masked)."""
    x = _cast(input, dtype)
    return sum(x, dim, keepdim=keepdim, mask=mask) / _count(x, mask, dim, keepdim)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """Median (the lower of the two middle values) of the unmasked elements along `dim`; nan where all are masked.

    Floating-point inputs only, like torch. `dim=None` takes the median of all elements."""
    em = _ember()
    x = _filled(_cast(input, dtype), mask, float("nan"))
    if dim is None:
        out = em.nanmedian(x)
        return out.reshape([1] * x.dim()) if keepdim else out
    return em.nanmedian(x, dim, keepdim=bool(keepdim)).values


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    """Vector `ord`-norm of the unmasked elements over `dim` (masked-out elements count as 0; inf for ord=-inf)."""
    if ord is None:
        ord = 2.0
    x = _filled(_cast(input, dtype), mask, _INF if ord == -_INF else 0)
    return _ember().linalg.vector_norm(x, ord, _dims(x, dim), keepdim=bool(keepdim))


def _correction(unbiased, correction):
    if correction is not None:
        if unbiased is not None:
            raise RuntimeError("var(): only one of 'unbiased' and 'correction' can be given")
        return correction
    return 1 if unbiased is None or unbiased else 0


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Variance of the unmasked elements over `dim`, divided by (count - correction), the default correction 1."""
    em = _ember()
    c = _correction(unbiased, correction)
    x = _cast(input, dtype)
    m = _bool_mask(x, mask)
    mu = mean(x, dim, keepdim=True, mask=m)
    d = x - mu
    sq = d * d.conj() if x.dtype.is_complex else d * d
    total = sum(sq, dim, keepdim=keepdim, mask=m)
    count = _count(x, m, dim, keepdim)
    if c:
        count = em.clamp_min(count - c, 0)
    return total / count


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    """Square root of `var`."""
    return _ember().sqrt(var(input, dim, unbiased, correction=correction, keepdim=keepdim, dtype=dtype, mask=mask))


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    """log(sum(exp)) of the unmasked elements over `dim`; -inf where all are masked."""
    x = _filled(_cast(input, dtype), mask, -_INF)
    dims = _dims(x, dim)
    return _ember().logsumexp(x, tuple(range(x.dim())) if dims is None else dims, keepdim=bool(keepdim))


def cumsum(input, dim, *, dtype=None, mask=None):
    """Cumulative sum along `dim`, masked-out elements counting as 0."""
    return _ember().cumsum(_filled(_cast(input, dtype), mask, 0), dim)


def cumprod(input, dim, *, dtype=None, mask=None):
    """Cumulative product along `dim`, masked-out elements counting as 1."""
    return _ember().cumprod(_filled(_cast(input, dtype), mask, 1), dim)


def softmax(input, dim, *, dtype=None, mask=None):
    """Softmax along `dim` over the unmasked elements: 0 where masked, nan in fully masked slices."""
    return _ember().softmax(_filled(_cast(input, dtype), mask, -_INF), dim)


def log_softmax(input, dim, *, dtype=None, mask=None):
    """Log-softmax along `dim` over the unmasked elements: -inf where masked, nan in fully masked slices."""
    return _ember().log_softmax(_filled(_cast(input, dtype), mask, -_INF), dim)


def softmin(input, dim, *, dtype=None, mask=None):
    """Softmin along `dim` over the unmasked elements: 0 where masked, nan in fully masked slices."""
    return _ember().softmax(-_filled(_cast(input, dtype), mask, _INF), dim)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    """`input` divided by its masked `ord`-norm along `dim` (at least `eps`); 0 at masked-out elements."""
    em = _ember()
    x = _cast(input, dtype)
    nrm = norm(x, ord, dim, keepdim=True, mask=mask)
    denom = em.maximum(nrm, em.full((), eps, dtype=nrm.dtype, device=nrm.device))
    return _filled(x, mask, 0) / denom


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    """logaddexp of `input` and `other`, each masked-out element counting as -inf."""
    a = _filled(_cast(input, dtype), input_mask, -_INF)
    b = _filled(_cast(other, dtype), other_mask, -_INF)
    return _ember().logaddexp(a, b)
