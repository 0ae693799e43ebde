"""PyTorch's optimizer database (torch.testing._internal.common_optimizers.optim_db) run against ember.

For each OptimizerInfo, every configuration torch generates for the CPU (float64) drives torch's optimizer and
ember's of the same name over the same parameters (a weight matrix and a bias, or the param groups the
configuration names; two embedding tables with sparse gradients for an optimizer that takes only those) for five
steps of the same loss: the parameters must agree after every step, and the state_dicts at the end (their keys, and
every tensor or number in them).

    python -m tests.compat.optiminfo_harness [name-substring]   # prints each failing optimizer and the totals
    python -m tests.compat.optiminfo_harness --write-known      # rewrites optiminfo_known_failures.py
"""
import warnings

import numpy as np

import ember

from . import opinfo_harness as ops

STEPS = 5
_RTOL = 1e-6  # float64 steps; a Tensor lr is float32 in torch's configurations, which shows at this level


def load():
    """optim_db (needs torch and expecttest)."""
    ops.load()
    from torch.testing._internal.common_optimizers import optim_db
    ops.unlock_backend_flags()
    return optim_db


def _model(lib, dtype):
    rng = np.random.default_rng(0)
    w = lib.nn.Parameter(lib.tensor(rng.standard_normal((3, 4)), dtype=dtype))
    b = lib.nn.Parameter(lib.tensor(rng.standard_normal(3), dtype=dtype))
    x = lib.tensor(rng.standard_normal((5, 4)), dtype=dtype)
    return w, b, x


def _loss(w, b, x, k):
    return ((x @ w.T + b) ** 2).sum() * (1 + 0.1 * k) + 0.1 * (w ** 4).sum()  # bounded below: line searches end


def _groups(params, spec):
    """The param list or groups of the configuration, over the model's parameters."""
    if spec is None or len(params) < 2:
        return list(params)
    groups = []
    for g in spec:  # torch's configurations name groups with their own keys; the params are ours
        g = dict(g)
        g["params"] = [params[len(groups) % 2]]
        groups.append(g)
    return groups


def _sparse_model(lib, dtype):
    """Two embedding tables and the rows each step looks up: every gradient is sparse (for SparseAdam)."""
    rng = np.random.default_rng(0)
    w = lib.nn.Parameter(lib.tensor(rng.standard_normal((10, 4)), dtype=dtype))
    b = lib.nn.Parameter(lib.tensor(rng.standard_normal((10, 1)), dtype=dtype))
    return w, b, lib.tensor(rng.integers(0, 10, (STEPS, 6)))


def _sparse_loss(w, b, rows, k):
    lib = ops.torch if isinstance(w, ops.torch.Tensor) else ember
    emb = lib.nn.functional.embedding
    return (emb(rows[k], w, sparse=True) ** 2).sum() + (emb(rows[k], b, sparse=True) ** 3).sum()


def _run(lib, cls, spec, kwargs, needs_closure, dtype, sparse=False):
    w, b, x = (_sparse_model if sparse else _model)(lib, dtype)
    params = (w,) if cls.__name__ == "Muon" else (w, b)  # Muon takes matrices only
    opt = cls(_groups(params, spec), **kwargs)
    history = []
    for k in range(STEPS):
        def closure():
            opt.zero_grad()
            loss = (_sparse_loss if sparse else _loss)(w, b, x, k)
            loss.backward()
            return loss
        if needs_closure:
            opt.step(closure)
        else:
            closure()
            opt.step()
        history.append((w.detach().clone(), b.detach().clone()))
    return history, opt.state_dict()


def _compare_state(e, t, where):
    torch = ops.torch
    if isinstance(t, dict):
        assert isinstance(e, dict) and set(map(str, e)) == set(map(str, t)), \
            f"{where}: keys {sorted(map(str, e))} vs torch {sorted(map(str, t))}"
        by_name = {str(k): v for k, v in e.items()}
        for k, v in t.items():
            _compare_state(by_name[str(k)], v, f"{where}[{k!r}]")
    elif isinstance(t, (list, tuple)) and not isinstance(t, torch.Size):
        assert isinstance(e, (list, tuple)) and len(e) == len(t), f"{where}: {e!r:.80} vs torch {t!r:.80}"
        for i, (a, c) in enumerate(zip(e, t)):
            _compare_state(a, c, f"{where}[{i}]")
    elif isinstance(t, torch.Tensor):
        ops.compare(e if isinstance(e, ember.Tensor) else ember.tensor(e), t, _RTOL, 1e-9, where)
    elif isinstance(t, float):
        same_nan = t != t and float(e) != float(e)
        assert same_nan or abs(float(e) - t) <= 1e-9 + _RTOL * abs(t), f"{where}: {e} vs torch {t}"
    elif not callable(t):
        assert e == t or str(e) == str(t), f"{where}: {e!r} vs torch {t!r}"


def check_config(info, cls, config):
    torch = ops.torch
    kwargs = ops.to_ember(dict(config.kwargs))
    needs_closure = info.step_requires_closure
    sparse = info.only_supports_sparse_grads
    t_hist, t_state = _run(torch, info.optim_cls, config.params, dict(config.kwargs), needs_closure, torch.float64,
                           sparse)
    e_hist, e_state = _run(ember, cls, config.params, kwargs, needs_closure, ember.float64, sparse)
    for k, ((ew, eb), (tw, tb)) in enumerate(zip(e_hist, t_hist)):
        ops.compare(ew, tw, _RTOL, 1e-9, f"weight after step {k + 1}")
        ops.compare(eb, tb, _RTOL, 1e-9, f"bias after step {k + 1}")
    _compare_state(e_state, t_state, "state_dict")


def check_optimizer(info):
    """'ok', 'not compared', or a one-line reason why ember fails this optimizer (the first failing config)."""
    torch = ops.torch
    name = info.optim_cls.__name__
    cls = getattr(ember.optim, name, None)
    if cls is None:
        return f"missing: ember.optim has no {name}"
    try:
        configs = info.optim_inputs_func(device="cpu", dtype=torch.float64)
    except Exception:  # noqa: BLE001 - torch's own generator failing is not ember's failure
        return "not compared"
    compared = 0
    for k, config in enumerate(configs):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check_config(info, cls, config)
            compared += 1
        except ops.NotCompared:
            continue
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            first = next((line for line in str(e).strip().splitlines() if line.strip()), "")
            return f"config {k} ({config.desc}): {type(e).__name__}: {first[:160]}"
    return "ok" if compared else "not compared"


def main(argv):
    optim_db = load()
    pattern = next((a for a in argv if not a.startswith("--")), "")
    results = {i.optim_cls.__name__: check_optimizer(i) for i in optim_db if pattern in i.optim_cls.__name__}
    bad = {k: v for k, v in results.items() if v not in ("ok", "not compared")}
    for k, v in bad.items():
        print(f"{k}: {v}")
    ok = sum(v == "ok" for v in results.values())
    nc = sum(v == "not compared" for v in results.values())
    print(f"\n{ok} of {ok + len(bad)} compared optimizers pass; {nc} not compared")
    if "--write-known" in argv:
        ops.write_known("optiminfo", "optim_db optimizers", bad)


if __name__ == "__main__":
    ops.cli(main)
