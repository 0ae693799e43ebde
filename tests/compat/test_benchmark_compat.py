"""ember.utils.benchmark against torch.utils.benchmark: the same statistics and repr for the same raw times."""
import pytest

from ember.utils import benchmark as eb

torch = pytest.importorskip("torch")
tb = pytest.importorskip("torch.utils.benchmark")


@pytest.mark.parametrize("raw", [[3e-6], [1e-5, 2e-5, 3e-5, 4e-5, 5e-5], [1e-3, 1.1e-3, 0.9e-3, 1.05e-3]])
def test_same_statistics_and_repr(raw):
    kw = dict(stmt="x + 1", setup="x = 1", label="add", sub_label="int", description="d")
    e = eb.Measurement(10, raw, eb.TaskSpec(**kw))
    t = tb.Measurement(10, raw, tb.utils.common.TaskSpec(**kw))
    assert (e.median, e.mean, e.iqr) == pytest.approx((t.median, t.mean, t.iqr))
    assert e.meets_confidence() == t.meets_confidence() and e.has_warnings == t.has_warnings
    assert repr(e).splitlines()[1:] == repr(t).splitlines()[1:]


@pytest.mark.parametrize("value", [5e-9, 2e-6, 3e-4, 2.5])
def test_units(value):
    assert eb.select_unit(value) == tb.select_unit(value)
    assert eb.trim_sigfig(value * 1234.5, 3) == pytest.approx(tb.trim_sigfig(value * 1234.5, 3))
