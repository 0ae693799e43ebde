"""Whether a tiny region's replay beats eager is timing noise: the timing check of ember.compile (which keeps
slower regions eager) is taken out for these tests, so that the programs kept are deterministic. The tests of the
check itself put their own timings in."""
import pytest

from ember.compiler import _region


@pytest.fixture(autouse=True)
def _replays_always_kept(monkeypatch):
    monkeypatch.setattr(_region, "_timed", lambda fn: 0.0)
