"""ember.utils.benchmark: Timer runs the statement as asked, Measurement's statistics, Compare's table."""
import pytest

import ember
from ember.utils import benchmark as B


def test_timeit_runs_the_statement_number_times_after_setup():
    calls = []
    m = B.Timer("f()", setup="calls.clear()", globals={"f": lambda: calls.append(1), "calls": calls},
                label="L", sub_label="s", description="d").timeit(50)
    assert len(calls) == 50  # setup runs before the timed loop (after the warm-up call)
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.times[0] == m.raw_times[0] / 50
    assert (m.title, m.label, m.sub_label, m.description, m.as_row_name) == ("L: s", "L", "s", "d", "s")


def test_measurement_statistics_and_repr():
    spec = B.TaskSpec(stmt="x + 1", setup="x = 1", label="add")
    m = B.Measurement(10, [1e-5, 2e-5, 3e-5, 4e-5, 5e-5], spec)  # per run: 1, 2, 3, 4, 5 us
    assert m.median == pytest.approx(3e-6) and m.mean == pytest.approx(3e-6)
    assert m.iqr == pytest.approx(2e-6)  # quartiles 2 and 4 us
    assert not m.meets_confidence(0.1) and m.has_warnings
    text = repr(m).splitlines()
    assert text[1:4] == ["add", "setup: x = 1", "  Median: 3.00 us"]
    assert text[4] == "  IQR:    2.00 us (2.00 to 4.00)"
    assert text[5] == "  5 measurements, 10 runs per measurement, 1 thread"
    assert "WARNING: Interquartile range is 66.7% of the median measurement." in repr(m)
    merged = B.Measurement.merge([m, B.Measurement(1, [6e-6], spec)])
    assert len(merged) == 1 and len(merged[0].times) == 6


def test_autoranges_and_threads():
    previous = ember.get_num_threads()
    m = B.Timer("sum(range(50))", num_threads=1).blocked_autorange(min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05 and m.num_threads == 1 and m.number_per_run >= 1
    a = B.Timer("sum(range(50))").adaptive_autorange(max_run_time=0.5)
    assert len(a.times) >= 1 and a.median > 0
    assert ember.get_num_threads() == previous


def test_compare_table():
    spec = {"label": "ops", "num_threads": 1}
    results = [B.Measurement(1, [2e-6], B.TaskSpec("a", "pass", sub_label="small", description="add", **spec)),
               B.Measurement(1, [4e-6], B.TaskSpec("b", "pass", sub_label="small", description="mul", **spec)),
               B.Measurement(1, [8e-6], B.TaskSpec("c", "pass", sub_label="large", description="add", **spec))]
    lines = str(B.Compare(results)).splitlines()
    assert lines[0].startswith("[") and " ops " in lines[0]
    assert "add" in lines[1] and "mul" in lines[1] and lines[2].startswith("1 threads: ")
    assert lines[3].split() == ["small", "|", "2.0", "|", "4.0"] and lines[4].split() == ["large", "|", "8.0", "|"]
    assert "Times are in microseconds (us)." in lines


def test_units_and_errors():
    assert B.select_unit(2e-6) == ("us", 1e-6) and B.select_unit(5e-10)[0] == "ns" and B.select_unit(3.0)[0] == "s"
    assert B.trim_sigfig(123.456, 2) == 120.0 and B.trim_sigfig(0.012345, 3) == pytest.approx(0.0123)
    with pytest.raises(ValueError, match="only a `str` stmt"):
        B.Timer(lambda: 1)
    with pytest.raises(NotImplementedError, match="Python statements only"):
        B.Timer("1", language=B.Language.CPP)
    with pytest.raises(NotImplementedError):
        B.Timer("1").repeat()
