"""nn.DataParallel: a wrapper that runs its module once, with torch's state_dict prefix and repr."""
import numpy as np

import ember
from ember import nn
from tests.helpers import assert_close


def test_data_parallel_wraps_module():
    inner = nn.Linear(2, 3)
    dp = nn.DataParallel(inner)
    assert dp.module is inner
    assert nn.parallel.DataParallel is nn.DataParallel
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    assert repr(dp) == "DataParallel(\n  (module): Linear(in_features=2, out_features=3, bias=True)\n)"
    x = ember.randn(4, 2)
    assert_close(dp(x).detach(), inner(x).detach())
    if not ember.cuda.is_available():
        assert dp.device_ids == []


def test_data_parallel_trains_the_wrapped_parameters():
    dp = nn.DataParallel(nn.Linear(2, 1, bias=False))
    with ember.no_grad():
        dp.module.weight.fill_(1.0)
    dp(ember.tensor([[1.0, 2.0]])).sum().backward()
    assert_close(dp.module.weight.grad, np.array([[1.0, 2.0]], np.float32))
    assert [n for n, _ in dp.named_parameters()] == ["module.weight"]
