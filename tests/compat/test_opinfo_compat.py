"""PyTorch's OpInfo database against ember (tests/compat/opinfo_harness.py): each op's every float32/float64
sample, values, dtypes, shapes and float64 gradients. Ops ember fails today are listed, with the first failure, in
opinfo_known_failures.py: they are expected failures, and one that starts passing must leave the list."""
import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from . import opinfo_harness as harness  # noqa: E402
from .opinfo_known_failures import KNOWN  # noqa: E402

OPS = harness.load()


@pytest.fixture(autouse=True)
def unlocked_backend_flags():
    yield
    harness.unlock_backend_flags()


@pytest.mark.parametrize("op", [pytest.param(op, id=harness.op_id(op)) for op in OPS])
def test_op_matches_torch(op):
    result = harness.check_op(op)
    if result == "not compared":
        pytest.skip("the OpInfo's callable is not torch's function or method of its name, or no sample translates")
    harness.judge(harness.op_id(op), None if result == "ok" else result, KNOWN, "opinfo_known_failures.py")
