"""geqrf, linalg.householder_product (orgqr) and ormqr: against NumPy's QR and explicit reflector products, float64
gradchecks, torch's errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def reflectors(a, tau):
    """Q = H_1 ... H_k as a dense m x m NumPy matrix, from geqrf's compact form."""
    m = a.shape[0]
    q = np.eye(m)
    for i in range(len(tau)):
        v = np.zeros(m)
        v[i] = 1
        v[i + 1:] = a[i + 1:, i]
        q = q @ (np.eye(m) - tau[i] * np.outer(v, v))
    return q


@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6), (2, 4, 3), (5, 0), (0, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_geqrf_is_a_qr_decomposition(shape, dtype):
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    a, tau = ember.geqrf(ember.tensor(x))
    assert a.dtype == tau.dtype == ember.tensor(x).dtype
    assert a.shape == shape and tau.shape == shape[:-2] + (min(shape[-2:]),)
    for i in np.ndindex(*shape[:-2]):
        ai, ti = a.numpy()[i].astype(np.float64), tau.numpy()[i].astype(np.float64)
        q = reflectors(ai, ti)
        np.testing.assert_allclose(q @ np.triu(ai), x[i], atol=1e-5 if dtype == np.float32 else 1e-12)


def test_geqrf_has_no_derivative_and_refuses_bad_input():
    a, _ = ember.geqrf(ember.ones(3, 2, dtype=ember.float64, requires_grad=True) + ember.eye(3, 2))
    with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not implemented"):
        a.sum().backward()
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        ember.geqrf(ember.ones(3))
    with pytest.raises(NotImplementedError, match="\"geqrf_cpu\" not implemented for 'Long'"):
        ember.geqrf(ember.ones(3, 3, dtype=ember.int64))


@pytest.mark.parametrize("m,n,k", [(5, 5, 5), (6, 4, 4), (6, 4, 2), (4, 1, 1)])
def test_householder_product_is_q(m, n, k):
    rng = np.random.default_rng(1)
    a, tau = rng.standard_normal((m, n)), rng.standard_normal(k)
    q = ember.linalg.householder_product(ember.tensor(a), ember.tensor(tau))
    np.testing.assert_allclose(q.numpy(), reflectors(a, tau)[:, :n], atol=1e-12)
    np.testing.assert_array_equal(ember.orgqr(ember.tensor(a), ember.tensor(tau)).numpy(), q.numpy())
    # the reflectors of a geqrf give the Q of NumPy's QR (up to the signs of its columns, which match here)
    x = rng.standard_normal((m, n))
    qa, ta = ember.geqrf(ember.tensor(x))
    np.testing.assert_allclose(ember.linalg.householder_product(qa, ta).numpy(), np.linalg.qr(x)[0], atol=1e-12)


def test_householder_product_batched_and_gradients():
    rng = np.random.default_rng(2)
    a = ember.tensor(rng.standard_normal((2, 5, 3)), requires_grad=True)
    tau = ember.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    q = ember.linalg.householder_product(a, tau)
    for i in range(2):
        np.testing.assert_allclose(q.detach().numpy()[i], reflectors(a.detach().numpy()[i],
                                                                     tau.detach().numpy()[i])[:, :3], atol=1e-12)
    assert gradcheck(ember.linalg.householder_product, (a, tau))
    assert gradgradcheck(ember.linalg.householder_product, (a, tau))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_multiplies_by_q(left, transpose):
    rng = np.random.default_rng(3)
    a, tau = rng.standard_normal((5, 3)), rng.standard_normal(3)
    c = rng.standard_normal((5, 2) if left else (4, 5))
    q = reflectors(a, tau)
    q = q.T if transpose else q
    want = q @ c if left else c @ q
    args = [ember.tensor(v, requires_grad=True) for v in (a, tau, c)]
    got = ember.ormqr(*args, left=left, transpose=transpose)
    np.testing.assert_allclose(got.detach().numpy(), want, atol=1e-12)
    assert gradcheck(lambda x, t, y: ember.ormqr(x, t, y, left, transpose), args)


@pytest.mark.parametrize("call,message", [
    (lambda: ember.linalg.householder_product(ember.ones(3), ember.ones(1)), "at least 2 dimensions"),
    (lambda: ember.linalg.householder_product(ember.ones(2, 3), ember.ones(1)),
     r"input.shape\[-2\] must be greater than or equal to input.shape\[-1\]"),
    (lambda: ember.linalg.householder_product(ember.ones(3, 2), ember.ones(3)),
     r"input.shape\[-1\] must be greater than or equal to tau.shape\[-1\]"),
    (lambda: ember.linalg.householder_product(ember.ones(2, 5, 3), ember.ones(3, 3)),
     r"Expected batch dimensions of tau to be equal to input.shape\[:-2\], but got \[3\]"),
    (lambda: ember.linalg.householder_product(ember.ones(5, 3), ember.ones(3, dtype=ember.float64)),
     "tau dtype Double does not match input dtype Float"),
    (lambda: ember.ormqr(ember.ones(5, 3), ember.ones(3), ember.ones(5)), "other must have at least 2 dimensions"),
    (lambda: ember.ormqr(ember.ones(5, 3), ember.ones(3), ember.ones(4, 5)),
     r"other.shape\[-2\] must be equal to input.shape\[-2\]"),
    (lambda: ember.ormqr(ember.ones(5, 3), ember.ones(2), ember.ones(5, 5)),
     r"tau.shape\[-1\] must be equal to min\(other.shape\[-2\], input.shape\[-1\]\)"),
    (lambda: ember.ormqr(ember.ones(5, 3), ember.ones(3), ember.ones(5, 5, dtype=ember.float64)),
     "Expected input and other to have the same dtype"),
])
def test_errors(call, message):
    with pytest.raises(RuntimeError, match=message):
        call()
