"""PyTorch's optimizer database against ember (tests/compat/optiminfo_harness.py): every configuration, five steps
of the same loss, parameters after each step and the state_dict at the end. Optimizers ember fails today are listed
in optiminfo_known_failures.py: expected failures, and one that starts passing must leave the list."""
import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from . import optiminfo_harness as harness  # noqa: E402
from .optiminfo_known_failures import KNOWN  # noqa: E402

OPTIMIZERS = harness.load()


@pytest.fixture(autouse=True)
def unlocked_backend_flags():
    yield
    harness.ops.unlock_backend_flags()


@pytest.mark.parametrize("info", [pytest.param(i, id=i.optim_cls.__name__) for i in OPTIMIZERS])
def test_optimizer_matches_torch(info):
    result = harness.check_optimizer(info)
    if result == "not compared":
        pytest.skip("no configuration translates to ember")
    harness.ops.judge(info.optim_cls.__name__, None if result == "ok" else result, KNOWN,
                      "optiminfo_known_failures.py")
