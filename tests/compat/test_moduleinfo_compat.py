"""PyTorch's ModuleInfo database against ember (tests/compat/moduleinfo_harness.py): every module input, float32 and
float64, training and evaluation, outputs, buffers and float64 gradients of inputs and parameters. Modules ember
fails today are listed, with the first failure, in moduleinfo_known_failures.py: they are expected failures, and
one that starts passing must leave the list. (CTCLoss is there by design: ember's gradient with respect to
log_probs is the exact one, torch's adds exp(log_probs) * grad, which a log_softmax before it cancels.)"""
import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from . import moduleinfo_harness as harness  # noqa: E402
from .moduleinfo_known_failures import KNOWN  # noqa: E402

MODULES = harness.load()


@pytest.fixture(autouse=True)
def unlocked_backend_flags():
    yield
    harness.ops.unlock_backend_flags()


@pytest.mark.parametrize("info", [pytest.param(i, id=harness.module_id(i)) for i in MODULES])
def test_module_matches_torch(info):
    result = harness.check_module(info)
    if result == "not compared":
        pytest.skip("no module input translates to ember")
    harness.ops.judge(harness.module_id(info), None if result == "ok" else result, KNOWN,
                      "moduleinfo_known_failures.py")
