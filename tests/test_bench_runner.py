"""bench/'s runner: a benchmark timed in processes of its own per library (the default) prints its row."""
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_isolated_run_prints_the_row():
    out = subprocess.run([sys.executable, "-m", "bench", "overhead/add_16", "--min-time", "0.01", "--isolated", "1"],
                         cwd=ROOT, capture_output=True, text=True, check=True, timeout=300).stdout
    row = next(line for line in out.splitlines() if line.startswith("overhead/add_16 "))
    ember_ms = float(row.split("|")[2])
    assert 0 < ember_ms < 1  # milliseconds per call of a 16-element add
