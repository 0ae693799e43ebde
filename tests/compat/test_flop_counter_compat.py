"""utils.flop_counter against torch's: the same counts, per op name, for the same programs."""
import warnings

import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402


def _programs(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    return {
        "mlp": lambda: nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))(lib.randn(5, 8)).sum().backward(),
        "grouped conv": lambda: nn.Conv2d(4, 6, 3, padding=1, groups=2)(
            lib.randn(2, 4, 8, 8, requires_grad=True)).sum().backward(),
        "transposed conv": lambda: nn.ConvTranspose2d(3, 6, 3, stride=2)(
            lib.randn(2, 3, 5, 5, requires_grad=True)).sum().backward(),
        "conv1d/3d": lambda: (F.conv1d(lib.randn(2, 3, 9), lib.randn(4, 3, 2)).sum()
                              + F.conv3d(lib.randn(1, 2, 4, 4, 4), lib.randn(3, 2, 2, 2, 2)).sum()),
        "products": lambda: [lib.randn(3, 4, 5) @ lib.randn(5, 6), lib.randn(3, 4, 5) @ lib.randn(3, 5, 6),
                             lib.randn(5) @ lib.randn(5, 6), lib.randn(6, 5) @ lib.randn(5),
                             F.linear(lib.randn(7, 4), lib.randn(5, 4), lib.randn(5)),
                             lib.randn(2, 1, 4, 5) @ lib.randn(3, 5, 2)],
    }


@pytest.mark.parametrize("name", list(_programs(ember)))
def test_counts_match_torch(name):
    from torch.utils.flop_counter import FlopCounterMode as TorchMode

    from ember.utils.flop_counter import FlopCounterMode
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with TorchMode(display=False) as t:
            _programs(torch)[name]()
    with FlopCounterMode(display=False) as e:
        _programs(ember)[name]()
    assert e.get_flop_counts()["Global"] == {str(k): v for k, v in t.get_flop_counts().get("Global", {}).items()}
    assert e.get_total_flops() == t.get_total_flops()
