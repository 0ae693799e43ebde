"""ember.signal.windows against torch.signal.windows: values and dtypes for every window, both symmetries."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 2.0}), ("gaussian", {"std": 1.5}),
           ("general_cosine", {"a": [0.5, 0.3, 0.2]}), ("general_hamming", {"alpha": 0.6}), ("hamming", {}),
           ("hann", {}), ("kaiser", {"beta": 8.0}), ("nuttall", {})]


@pytest.mark.parametrize("name, kwargs", WINDOWS, ids=[w[0] for w in WINDOWS])
@pytest.mark.parametrize("M", [0, 1, 6, 9])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_as_torch(name, kwargs, M, sym, dtype):
    t = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **kwargs)
    e = getattr(ember.signal.windows, name)(M, sym=sym, dtype=getattr(ember, dtype), **kwargs)
    assert e.dtype == getattr(ember, dtype) and e.shape == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6 if dtype == "float32" else 1e-12, atol=1e-7)
