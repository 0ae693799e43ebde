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
    name = harness.ops.op_id(op)
    n, raised, _, first = harness.check_op(op)
    if n == 0:
        pytest.skip("ember lacks the op, or no bad input translates")
    if name in KNOWN:
        if first is None:
            pytest.fail(f"{name} rejects every bad input now: remove it from tests/compat/errorinputs_known_failures.py")
        pytest.xfail(KNOWN[name])
    assert first is None, first
