"""python -m ember.run / ember.run: unmodified PyTorch programs with `import torch` resolving to ember."""
import importlib.util
import os
import subprocess
import sys
import textwrap
import types

import pytest

import ember.run

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

PROGRAM = textwrap.dedent('''
    import argparse
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch import optim
    from torch.utils.data import DataLoader, TensorDataset
    from torch.nn.modules.activation import MultiheadAttention
    import ember
    import sibling  # next to the script, as `python program.py` finds it

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
    opt = optim.Adam(model.parameters(), lr=0.05)
    x = torch.randn(64, 4)
    y = (x[:, 0] > 0).long()
    data = DataLoader(TensorDataset(x, y), batch_size=16, shuffle=True)
    for _ in range(args.epochs):
        for xb, yb in data:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
    acc = (model(x).argmax(1) == y).float().mean().item()
    print("same", torch is ember, nn is ember.nn, F is ember.nn.functional, optim is ember.optim)
    print("mha", MultiheadAttention is ember.nn.MultiheadAttention, sibling.VALUE)
    print(f"epochs {args.epochs} accuracy {acc:.2f}")
    try:
        import torch._inductor
    except ImportError as e:
        print("missing", type(e).__name__, e.name)
''')


def _run(args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [SRC, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.fixture
def program(tmp_path):
    (tmp_path / "train.py").write_text(PROGRAM)
    (tmp_path / "sibling.py").write_text("VALUE = 42\n")
    return tmp_path


def test_runs_an_unmodified_program_with_its_arguments(program, tmp_path):
    r = _run(["-m", "ember.run", str(program / "train.py"), "--epochs", "20"], cwd=tmp_path.parent)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "same True True True True"
    assert lines[1] == "mha True 42"
    assert lines[2].startswith("epochs 20 accuracy ") and float(lines[2].split()[-1]) >= 0.9
    assert lines[3] == "missing ModuleNotFoundError torch._inductor"
    # a real torch, where installed, is named as not used (never shadowed silently)
    assert ("the installed torch is not used" in r.stderr) == (importlib.util.find_spec("torch") is not None)


def test_runs_a_module_as_python_dash_m_does(program):
    r = _run(["-m", "ember.run", "-m", "train", "--epochs", "2"], cwd=program)
    assert r.returncode == 0, r.stderr
    assert "epochs 2 accuracy" in r.stdout


def test_without_a_program_prints_usage(tmp_path):
    r = _run(["-m", "ember.run"], cwd=tmp_path)
    assert r.returncode == 2 and "usage: python -m ember.run" in r.stderr


def test_errors_of_the_program_surface(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\nraise SystemExit(torch.tensor([3]).item())\n")
    assert _run(["-m", "ember.run", str(tmp_path / "bad.py")], cwd=tmp_path).returncode == 3


def test_install_and_uninstall_in_process(tmp_path):
    code = textwrap.dedent('''
        import sys, ember, ember.run
        ember.run.install()
        import torch, torch.linalg
        assert torch is ember and torch.linalg is ember.linalg and ember.run.installed()
        ember.run.uninstall()
        assert not ember.run.installed() and "torch" not in sys.modules
        print("ok")
    ''')
    r = _run(["-c", code], cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_refuses_when_a_torch_is_already_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    with pytest.raises(RuntimeError, match="torch is already imported"):
        ember.run.install()
    assert not ember.run.installed()
