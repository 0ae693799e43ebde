"""PyTorch's bad-input cases (every OpInfo's error_inputs, tests/compat/errorinputs_harness.py) against ember: each
must raise with torch's exception type. Ops with a case ember does not reject as torch does are listed, with the
first such case, in errorinputs_known_failures.py: expected failures, and one that starts passing must leave the
list."""
import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

from . import errorinputs_harness as harness  # noqa: E402
from .errorinputs_known_failures import KNOWN  # noqa: E402

OPS = harness.load()


@pytest.fixture(autouse=True)
def unlocked_backend_flags():
    yield
    harness.ops.unlock_backend_flags()


@pytest.mark.parametrize("op", [pytest.param(op, id=harness.ops.op_id(op)) for op in OPS])
def test_bad_inputs_raise_as_torch(op):
    n, _, _, first = harness.check_op(op)
    if n == 0:
        pytest.skip("ember lacks the op, or no bad input translates")
    harness.ops.judge(harness.ops.op_id(op), first, KNOWN, "errorinputs_known_failures.py")
