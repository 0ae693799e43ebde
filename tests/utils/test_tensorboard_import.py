"""ember.utils.tensorboard's optional dependency: imported only with the module, a clear error without it."""
import subprocess
import sys

import pytest


def run(code):
    return subprocess.run([sys.executable, "-W", "error", "-c", code], check=False, capture_output=True, text=True, timeout=120)


def test_import_ember_does_not_import_tensorboard():
    r = run("import sys, ember, ember.utils, ember.utils.data; print('tensorboard' in sys.modules)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_missing_package_says_how_to_install():
    r = run("import sys; sys.modules['tensorboard'] = None\n"
            "try:\n    from ember.utils.tensorboard import SummaryWriter\n"
            "except ImportError as e:\n    print(e)")
    assert r.returncode == 0, r.stderr
    assert "pip install tensorboard" in r.stdout


def test_too_old_package_is_refused():
    r = run("import sys, types; sys.modules['tensorboard'] = types.SimpleNamespace(__version__='2.16.2')\n"
            "try:\n    import ember.utils.tensorboard\n"
            "except ImportError as e:\n    print(e)")
    assert r.returncode == 0, r.stderr
    assert "tensorboard>=2.17.1" in r.stdout and "2.16.2" in r.stdout


@pytest.mark.parametrize("name", ["SummaryWriter", "FileWriter"])
def test_public_names(name):
    pytest.importorskip("tensorboard")
    import ember.utils.tensorboard as tb

    assert name in tb.__all__ and getattr(tb, name).__module__ == "ember.utils.tensorboard.writer"
