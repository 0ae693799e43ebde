"""The README's main job runs and learns."""
import importlib.util
import pathlib

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fit_polynomial_reduces_the_loss(capsys):
    example = _load("fit_polynomial")
    first = example.main(steps=1)
    final = example.main(steps=2000)
    assert final < 20 and final < first / 10
    assert "Result: y =" in capsys.readouterr().out


def test_train_digits_reaches_97_percent(tmp_path):
    import pytest
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    example = _load("train_digits")
    history = example.main(out_dir=tmp_path, plot=False)
    assert history["test_accuracy"][-1] >= 0.97
    assert history["train_loss"][-1] < history["train_loss"][0] / 10
