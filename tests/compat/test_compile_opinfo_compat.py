"""ember.compile over PyTorch's OpInfo database: for every op ember has, its first float32 samples run through a
compiled function (captured on one input, replayed on another) give eager's outputs and gradients. Where the
capture cannot reproduce an op (host reads, results that are not tensors) the function runs eagerly, which must
give the same results too."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import ember  # noqa: E402

from . import opinfo_harness as H  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

KNOWN = {}
UNDEFINED = ("empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided")  # values undefined


def _floats(out):
    return [o for o in H._flat(out, []) if isinstance(o, ember.Tensor) and o.dtype.is_floating_point]


def _run(f, x, args, kwargs, seed):
    """(outputs, gradient of sum(out * w) w.r.t. x or None) of f on a fresh copy of x."""
    x = x.detach().clone().requires_grad_(x.requires_grad)
    ember.manual_seed(seed)
    out = f(x, *args, **kwargs)
    floats = [o for o in _floats(out) if o.requires_grad]
    grad = None
    if floats:
        rng = np.random.default_rng(0)
        loss = sum((o * ember.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32))).sum() for o in floats)
        (grad,) = ember.autograd.grad(loss, [x], allow_unused=True)
    return H._flat(out, []), grad


def _same(a, b, what):
    if isinstance(b, ember.Tensor):
        assert isinstance(a, ember.Tensor) and tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype, what
        x, y = a.detach().numpy(), b.detach().numpy()
        if y.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5, equal_nan=True, err_msg=what)
        else:
            np.testing.assert_array_equal(x, y, err_msg=what)
    else:
        assert a == b or (isinstance(b, float) and math.isnan(b) and math.isnan(a)), what


def _check(fn, sample, k):
    args, kwargs = H.to_ember([list(sample.args), dict(sample.kwargs)])
    x0 = sample.input.detach().numpy().copy()
    grad = x0.dtype.kind == "f"
    x = ember.tensor(x0, requires_grad=grad)
    compiled = ember.compile(lambda t, *a, **kw: fn(t, *a, **kw))
    noise = np.random.default_rng(k).standard_normal(x0.shape) * 0.1 if grad else 0
    x2 = ember.tensor((x0 + noise).astype(x0.dtype), requires_grad=grad)
    try:
        _run(fn, x, args, kwargs, k)
        want, want_g = _run(fn, x2, args, kwargs, k + 1)
    except Exception:  # noqa: BLE001 - inputs eager refuses are the OpInfo harness's business
        return
    _run(compiled, x, args, kwargs, k)  # the first call: capture and checks
    got, got_g = _run(compiled, x2, args, kwargs, k + 1)  # a replay (or eager, where the capture gave up)
    assert len(got) == len(want), "number of outputs"
    for i, (a, b) in enumerate(zip(got, want)):
        _same(a, b, f"output {i}")
    if want_g is not None:
        _same(got_g, want_g, "gradient")


def _result(op):
    try:
        fn = H.ember_callable(op)
    except AttributeError:
        return None
    if fn is None or op.name in UNDEFINED or "float32" not in {str(d).split(".")[1]
                                                               for d in op.supported_dtypes("cpu")}:
        return None
    torch.manual_seed(0)
    try:
        samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))[:3]
    except Exception:  # noqa: BLE001 - torch's own sample generator failing is not ember's failure
        return None
    for k, s in enumerate(samples):
        if not isinstance(s.input, torch.Tensor) or s.input.layout != torch.strided:
            continue
        try:
            _check(fn, s, k)
        except H.NotCompared:
            return None
        except Exception as e:  # noqa: BLE001 - reported with the op's name
            return f"sample {k}: {type(e).__name__}: {str(e).strip()[:300]}"
    return "ok"


def test_compiled_ops_match_eager_over_opinfo():
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in H.load():
            r = _result(op)
            if r is not None:
                results[H.op_id(op)] = r
    bad = {k: v for k, v in results.items() if v != "ok" and k not in KNOWN}
    assert not bad, bad
    assert len(results) > 400
