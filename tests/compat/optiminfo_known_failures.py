"""optim_db optimizers ember fails today, with the first failure the harness saw (optiminfo_harness.py regenerates this:
python -m tests.compat.optiminfo_harness --write-known)."""

KNOWN = {
    'SparseAdam': 'missing: ember.optim has no SparseAdam',
}
