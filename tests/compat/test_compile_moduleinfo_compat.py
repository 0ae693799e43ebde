"""ember.compile over PyTorch's ModuleInfo database: every ember.nn module, built from each of its first float32
module inputs (training and evaluation), gives the same outputs, buffers and parameter gradients compiled (the
first call captures, the second replays, or both run eagerly where the capture gives up) as an identical module run
eagerly, with the same random state."""
import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import ember  # noqa: E402

from . import moduleinfo_harness as M  # noqa: E402
from . import opinfo_harness as H  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


COMPARED, SKIPPED = [], []  # (module) per input compared; (module, input) eager refused


def _step(m, ins, seed):
    """(outputs, buffers, parameter gradients of sum(out * w)) of one forward and backward of module m."""
    ember.manual_seed(seed)
    out = m(*ins[0], **ins[1])
    floats = [o for o in H._flat(out, []) if isinstance(o, ember.Tensor) and o.requires_grad]
    params = [p for p in m.parameters() if p.requires_grad]
    grads = []
    if floats and params:
        rng = np.random.default_rng(0)
        loss = sum((o * ember.tensor(rng.standard_normal(tuple(o.shape)).astype(np.float32))).sum() for o in floats)
        grads = ember.autograd.grad(loss, params, allow_unused=True)
    return H._flat(out, []), [b.clone() for b in m.buffers() if b is not None], list(grads)


def _same(got, want, what):
    assert len(got) == len(want), f"{what}: {len(got)} vs {len(want)}"
    for i, (a, b) in enumerate(zip(got, want)):
        if isinstance(b, ember.Tensor):
            assert isinstance(a, ember.Tensor) and tuple(a.shape) == tuple(b.shape), f"{what} {i}"
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5,
                                       equal_nan=True, err_msg=f"{what} {i}")
        elif b is not None:
            assert a == b, f"{what} {i}"


def _result(info):
    try:
        cls = M.ember_class(info)
    except AttributeError:
        return None
    if "float32" not in {str(d).split(".")[1] for d in info.dtypes}:
        return None
    torch.manual_seed(0)
    for training in (True, False):
        try:
            inputs = list(info.module_inputs_func(info, device="cpu", dtype=torch.float32, requires_grad=False,
                                                  training=training))[:3]
        except Exception:  # noqa: BLE001 - torch's own input generator failing is not ember's failure
            continue
        for k, mi in enumerate(inputs):
            try:
                c_args, c_kwargs = H.to_ember([list(mi.constructor_input.args), dict(mi.constructor_input.kwargs)])
                ins = H.to_ember([list(mi.forward_input.args), dict(mi.forward_input.kwargs)])
                ember.manual_seed(0)
                eager = cls(*c_args, **c_kwargs).train(training)
                compiled = ember.compile(copy.deepcopy(eager))
                want = [_step(eager, ins, seed) for seed in (1, 2)]
            except H.NotCompared:
                return None
            except Exception:  # noqa: BLE001 - what eager refuses is the ModuleInfo harness's business
                SKIPPED.append((M.module_id(info), k))
                continue
            COMPARED.append(M.module_id(info))
            try:
                got = [_step(compiled, ins, seed) for seed in (1, 2)]  # capture, then replay
                for call, (g, w) in enumerate(zip(got, want)):
                    for part, a, b in zip(("outputs", "buffers", "gradients"), g, w):
                        _same(a, b, f"call {call + 1} {part}")
            except Exception as e:  # noqa: BLE001 - reported with the module's name
                mode = "train" if training else "eval"
                return f"{mode} input {k} ({mi.desc}): {type(e).__name__}: {str(e).strip()[:300]}"
    return "ok"


def test_compiled_modules_match_eager_over_moduleinfo():
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for info in M.load():
            r = _result(info)
            if r is not None:
                results[M.module_id(info)] = r
    bad = {k: v for k, v in results.items() if v != "ok"}
    assert not bad, bad
    assert len(set(COMPARED)) > 100 and len(COMPARED) > 400
