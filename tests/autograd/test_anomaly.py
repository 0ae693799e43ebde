"""Anomaly detection: NaN in backward is reported with the node's name; a warning says where its forward ran."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import Function
from ember.autograd.anomaly_mode import is_anomaly_check_nan_enabled, set_anomaly_enabled

_WARNING = "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for " \
           "debugging."


@pytest.fixture(autouse=True)
def _reset():
    yield
    assert not ember.autograd.is_anomaly_enabled(), "a test left anomaly detection on"
    set_anomaly_enabled(False)


def _nan_backward():
    a = ember.tensor([1.0], requires_grad=True)
    b = ember.tensor([0.0], requires_grad=True)
    y = a / b  # the line the error must point at
    (y * 0).sum().backward()  # DivBackward0: 0 / 0 for a's gradient


def test_detect_anomaly_reports_nan_and_forward_traceback():
    with pytest.warns(UserWarning, match=_WARNING):
        ctx = ember.autograd.detect_anomaly()
    with ctx:
        assert ember.autograd.is_anomaly_enabled()
        # as torch: a warning with the forward traceback, then the error
        with pytest.warns(UserWarning, match="Error detected in DivBackward0. Traceback of forward call that caused "
                                             "the error:") as rec:
            with pytest.raises(RuntimeError, match=r"^Function 'DivBackward0' returned nan values in its 0th "
                                                   r"output\.$"):
                _nan_backward()
    msg = str(rec[0].message)
    assert "test_anomaly.py" in msg and "y = a / b" in msg
    assert rec[0].filename == __file__  # the warning points at the user's backward call
    assert not ember.autograd.is_anomaly_enabled()


def test_anomaly_warning_for_any_backward_error_and_for_nodes_recorded_before():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    early = (x / 0 * 0).sum()  # recorded before anomaly mode: no forward trace
    with pytest.warns(UserWarning, match=_WARNING):
        ctx = ember.autograd.detect_anomaly()
    with ctx:
        with pytest.warns(UserWarning, match="Error detected in DivBackward0. No forward pass information available. "
                                             "Enable detect anomaly during forward pass for more information."):
            with pytest.raises(RuntimeError, match="returned nan values"):
                early.backward()
        y = x.exp()
        y.add_(1)
        with pytest.warns(UserWarning, match="Error detected in ExpBackward0"):
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()


def test_without_anomaly_mode_nan_passes_silently():
    a = ember.tensor([1.0], requires_grad=True)
    b = ember.tensor([0.0], requires_grad=True)
    (a / b * 0).sum().backward()
    assert np.isnan(a.grad.numpy()).all()


def test_detect_anomaly_as_decorator():
    with pytest.warns(UserWarning, match=_WARNING):
        @ember.autograd.detect_anomaly()
        def run():
            assert ember.autograd.is_anomaly_enabled()
            _nan_backward()

    with pytest.warns(UserWarning, match="Error detected in DivBackward0"), \
            pytest.raises(RuntimeError, match="DivBackward0"):
        run()
    assert not ember.autograd.is_anomaly_enabled()


def test_custom_function_nan_names_the_function():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = ember.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning, match=_WARNING):
        ctx = ember.autograd.detect_anomaly()
    with ctx:
        y = Bad.apply(x)  # recorded while anomaly mode is on: its trace is kept
        with pytest.warns(UserWarning, match="Error detected in BadBackward") as rec, \
                pytest.raises(RuntimeError, match=r"Function 'BadBackward' returned nan values in its 0th output\."):
            y.sum().backward()
    assert "y = Bad.apply(x)" in str(rec[0].message)


def test_set_detect_anomaly_plain_call_and_context():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # set_detect_anomaly does not warn
        ember.autograd.set_detect_anomaly(True)
        assert ember.autograd.is_anomaly_enabled()
        ember.autograd.set_detect_anomaly(False)
        assert not ember.autograd.is_anomaly_enabled()
        with ember.autograd.set_detect_anomaly(True, check_nan=False):
            assert ember.autograd.is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        assert not ember.autograd.is_anomaly_enabled() and is_anomaly_check_nan_enabled()


def test_check_nan_flag_follows_detect_anomaly_argument():
    with pytest.warns(UserWarning, match=_WARNING):
        ctx = ember.autograd.detect_anomaly(check_nan=False)
    with ctx:
        assert not is_anomaly_check_nan_enabled()
    assert is_anomaly_check_nan_enabled()


def test_check_nan_false_does_not_raise():
    with pytest.warns(UserWarning, match=_WARNING):
        ctx = ember.autograd.detect_anomaly(check_nan=False)
    with ctx:
        _nan_backward()


def test_no_false_alarm_on_finite_backward():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match=_WARNING):
        ctx = ember.autograd.detect_anomaly()
    with ctx:
        (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])
