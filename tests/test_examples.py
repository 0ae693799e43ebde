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
    # the checkpoint restores the trained model: same test accuracy from a fresh one
    import ember
    checkpoint = ember.load(tmp_path / "digits_cnn.pt")
    assert checkpoint["epoch"] == 20 and set(checkpoint) == {"epoch", "model", "optimizer", "test_accuracy"}
    model = example.DigitsNet()
    model.load_state_dict(checkpoint["model"])
    _, _, x_test, y_test = example.load_data(0)
    assert example.evaluate(model, x_test, y_test)[1] == history["test_accuracy"][-1]
    assert len(checkpoint["optimizer"]["state"]) == len(list(model.parameters()))


def test_train_gpt_learns_and_samples():
    """A tiny configuration of the GPT example, run as a script: the validation loss falls and both samples print."""
    import re
    import subprocess
    import sys

    import pytest
    pytest.importorskip("tqdm")
    args = ["--steps", "60", "--n-layer", "1", "--n-embd", "32", "--n-head", "2", "--block-size", "32",
            "--batch-size", "16", "--eval-iters", "4", "--sample-len", "40"]
    cmd = [sys.executable, "-W", "error", str(EXAMPLES / "train_gpt.py"), *args]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    losses = [float(v) for v in re.findall(r"^step \d+: train loss [\d.]+, val loss ([\d.]+)$", out, re.MULTILINE)]
    assert len(losses) == 2
    # from about ln(96) = 4.56 (uniform over the vocabulary) to about 2.6 in 60 steps
    assert losses[0] > 4.0 and losses[1] < losses[0] - 1.0
    before = re.search(r"--- sample before training ---\n(.*)\nstep 0: ", out, re.DOTALL).group(1)
    after = re.search(r"--- sample after training ---\n(.*)\n\Z", out, re.DOTALL).group(1)
    for sample in (before, after):
        assert sample.startswith("def ") and len(sample) == len("def ") + 40
