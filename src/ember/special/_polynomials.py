"""Orthogonal polynomials of ember.special as array kernels (NumPy or CuPy): the three-term recurrences and the
closed forms torch uses, with its special cases, evaluated elementwise for a per-element degree n.

# NOTE [ Polynomial degree ]
torch computes in the result dtype and converts n to int64 with a C cast: 2.7 is 2, -0.5 is 0, and nan, inf or an
out-of-range degree (undefined behaviour in C, INT64_MIN on x86) count as negative, where every polynomial is 0.
The recurrence loops run to the largest degree of the elements that need it (torch loops per element); elements
that reach nan stay nan, as in torch's loops, which stop at nan.
"""
import numpy as np

from .._backend import xp_of

__all__ = ["KERNELS"]

_INT64_LIMIT = 9.2e18


def _degree(xp, n):
    """n as int64 per NOTE [ Polynomial degree ]."""
    ok = xp.isfinite(n) & (xp.abs(n) < _INT64_LIMIT)
    return xp.where(ok, xp.trunc(xp.where(ok, n, 0)), -1).astype(np.int64)


def _recur(xp, q0, q1, n, step):
    """Degree-n value of a recurrence q_{j+1} = step(j, q_{j-1}, q_j) with q_0 = q0 and q_1 = q1 (n >= 1)."""
    p, q = q0, q1
    last = int(n.max()) if n.size else 0
    for j in range(1, last):
        r = step(j, p, q)
        more = j < n
        p, q = xp.where(more, q, p), xp.where(more, r, q)
        if j % 64 == 0 and bool(xp.all(~more | xp.isnan(q))):
            break
    return q


def _evaluate(x, nf, closed, q1, step, limit=None):
    """closed(x, n, nf) -> [(mask, value), ...] in torch's order of precedence; the recurrence elsewhere."""
    xp = xp_of(x)
    x, nf = xp.broadcast_arrays(x, nf.astype(x.dtype, copy=False))
    n = _degree(xp, nf)
    one = x.dtype.type(1)
    out = xp.ones(x.shape, x.dtype)
    todo = n >= 1
    cases = [(n < 0, x.dtype.type(0))] + closed(xp, x, n)
    if limit is not None:  # hermite: nan beyond a degree torch refuses to loop to
        cases.append((n > limit[x.dtype.char], x.dtype.type(np.nan)))
    taken = xp.zeros(x.shape, bool)
    values = []
    for mask, value in cases:
        mask = mask & ~taken
        taken |= mask
        values.append((mask, value))
    todo &= ~taken
    if bool(todo.any()):
        xs, ns = x[todo], n[todo]
        out[todo] = _recur(xp, xp.full(xs.shape, one), q1(xs), ns, lambda j, p, q: step(xs, j, p, q))
    for mask, value in reversed(values):
        out = xp.where(mask, value, out)
    return out


def _nn(n, x):
    """n in x's dtype, as torch converts the int64 degree in its closed forms."""
    return n.astype(x.dtype)


# ---------------- Chebyshev polynomials on [-1, 1] and shifted to [0, 1] ----------------
def _parity(xp, n, even, odd):
    return xp.where(n % 2 == 0, even, odd)


def _cheb_closed(kind, shifted):
    """torch's special cases of the Chebyshev polynomial of the given kind; y is x mapped to [-1, 1]."""
    big_n = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
             ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}[(kind, shifted)]

    def closed(xp, x, n):
        dt = x.dtype.type
        nf = _nn(n, x)
        y = x + x - dt(1) if shifted else x
        if shifted:
            hi, lo = x == 1, x == 0  # y = 1 and y = -1
        else:
            hi, lo = x == 1, x == -1
        two_n1 = nf + nf + dt(1)
        end = {"t": (dt(1), _parity(xp, n, dt(1), dt(-1))),
               "u": (nf + dt(1), _parity(xp, n, nf + dt(1), -(nf + dt(1)))),
               "v": (dt(1), _parity(xp, n, two_n1, -two_n1)),
               "w": (two_n1, _parity(xp, n, dt(1), dt(-1)))}[kind]
        inside = (n > big_n) & (xp.abs(y) < 1)
        a = xp.arccos(xp.where(inside, y, dt(0)))
        if kind == "t":
            trig = xp.cos(nf * a)
        elif kind == "u":
            s = xp.sin(a)
            trig = xp.where(s != 0, xp.sin((nf + dt(1)) * a) / s, (nf + dt(1)) * xp.cos((nf + dt(1)) * a) / y)
        elif kind == "v":
            trig = xp.where(xp.sin(a / dt(2)) != 1, xp.cos((nf + dt(0.5)) * a) / xp.cos(a / dt(2)),
                            _parity(xp, n, two_n1, -two_n1))
        else:
            fallback = xp.where(x > 0, two_n1, _parity(xp, n, dt(1), dt(-1))) if not shifted else \
                _parity(xp, n, dt(1), dt(-1))
            trig = xp.where(xp.cos(a / dt(2)) != 1, xp.sin((nf + dt(0.5)) * a) / xp.sin(a / dt(2)), fallback)
        return [(hi, end[0]), (lo, end[1]), (inside, trig)]
    return closed


def _chebyshev(kind, shifted):
    first = {"t": lambda y: y, "u": lambda y: y + y, "v": lambda y: y + y - y.dtype.type(1),
             "w": lambda y: y + y + y.dtype.type(1)}[kind]

    def kernel(x, n):
        if shifted:
            # torch's shifted recurrence: (2x - 1 + (2x - 1)) q - p, with q_1 computed from y = 2x - 1
            return _evaluate(x, n, _cheb_closed(kind, True), lambda xs: first(xs + xs - xs.dtype.type(1)),
                             lambda xs, j, p, q: (xs + xs - xs.dtype.type(1) + (xs + xs - xs.dtype.type(1))) * q - p)
        return _evaluate(x, n, _cheb_closed(kind, False), first, lambda xs, j, p, q: (xs + xs) * q - p)
    return kernel


# ---------------- Hermite, Laguerre, Legendre ----------------
_HERMITE_LIMIT = {"f": 128, "d": 512}


def _no_closed(xp, x, n):
    return []


def _hermite_h(x, n):
    return _evaluate(x, n, _no_closed, lambda xs: xs + xs, lambda xs, j, p, q: (xs + xs) * q - xs.dtype.type(2 * j) * p,
                     _HERMITE_LIMIT)


def _hermite_he(x, n):
    return _evaluate(x, n, _no_closed, lambda xs: xs, lambda xs, j, p, q: xs * q - xs.dtype.type(j) * p,
                     _HERMITE_LIMIT)


def _laguerre_closed(xp, x, n):
    return [(x == 0, x.dtype.type(1))]


def _laguerre(x, n):
    def step(xs, j, p, q):
        dt = xs.dtype.type
        return ((dt(j + j) + (dt(1) - xs)) * q - dt(j) * p) / dt(j + 1)
    return _evaluate(x, n, _laguerre_closed, lambda xs: xs.dtype.type(1) - xs, step)


def _legendre_closed(xp, x, n):
    dt = x.dtype.type
    return [(x == 1, dt(1)), (x == -1, _parity(xp, n, dt(1), dt(-1)))]


def _legendre(x, n):
    def step(xs, j, p, q):
        dt = xs.dtype.type
        return (dt(j + j + 1) * xs * q - dt(j) * p) / dt(j + 1)
    return _evaluate(x, n, _legendre_closed, lambda xs: xs, step)


KERNELS = {
    "chebyshev_polynomial_t": _chebyshev("t", False),
    "chebyshev_polynomial_u": _chebyshev("u", False),
    "chebyshev_polynomial_v": _chebyshev("v", False),
    "chebyshev_polynomial_w": _chebyshev("w", False),
    "shifted_chebyshev_polynomial_t": _chebyshev("t", True),
    "shifted_chebyshev_polynomial_u": _chebyshev("u", True),
    "shifted_chebyshev_polynomial_v": _chebyshev("v", True),
    "shifted_chebyshev_polynomial_w": _chebyshev("w", True),
    "hermite_polynomial_h": _hermite_h,
    "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}
