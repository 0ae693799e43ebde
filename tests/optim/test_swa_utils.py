"""ember.optim.swa_utils: AveragedModel (SWA and EMA), SWALR, update_bn."""
import numpy as np
import pytest

import ember
from ember.optim import swa_utils as S


def _model(value):
    m = ember.nn.Linear(2, 1)
    with ember.no_grad():
        m.weight.fill_(value)
        m.bias.fill_(-value)
    return m


def test_swa_is_the_running_mean_of_the_updates():
    m = _model(1.0)
    avg = S.AveragedModel(m)
    assert int(avg.n_averaged) == 0 and avg.n_averaged.dtype == ember.int64
    for v in (1.0, 2.0, 6.0):
        with ember.no_grad():
            m.weight.fill_(v)
        avg.update_parameters(m)
    assert int(avg.n_averaged) == 3
    np.testing.assert_allclose(avg.module.weight.detach().numpy(), [[3.0, 3.0]])
    np.testing.assert_allclose(avg(ember.ones(1, 2)).detach().numpy(), [[5.0]])  # 3 + 3 - 1
    assert list(avg.state_dict()) == ["n_averaged", "module.weight", "module.bias"]


def test_ema_multi_avg_fn_and_avg_fn():
    m = _model(0.0)
    ema = S.AveragedModel(m, multi_avg_fn=S.get_ema_multi_avg_fn(0.9))
    ema2 = S.AveragedModel(m, avg_fn=S.get_ema_avg_fn(0.5))
    ema.update_parameters(m)   # first update copies
    ema2.update_parameters(m)
    with ember.no_grad():
        m.weight.fill_(10.0)
    ema.update_parameters(m)
    ema2.update_parameters(m)
    np.testing.assert_allclose(ema.module.weight.detach().numpy(), [[1.0, 1.0]], rtol=1e-6)  # 0.9*0 + 0.1*10
    np.testing.assert_allclose(ema2.module.weight.detach().numpy(), [[5.0, 5.0]])
    with pytest.raises(ValueError, match=r"Invalid decay value 2 provided. Please provide a value in \[0,1\] range."):
        S.get_ema_multi_avg_fn(2)


def test_swalr_anneals_linearly_to_swa_lr_and_round_trips():
    p = ember.nn.Parameter(ember.ones(1))
    opt = ember.optim.SGD([p], lr=1.0)
    sched = S.SWALR(opt, swa_lr=0.2, anneal_epochs=4, anneal_strategy="linear")
    lrs = []
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(lrs, [0.8, 0.6, 0.4, 0.2, 0.2, 0.2])  # 1 - 0.8 t for t = step / 4, up to 1
    sd = sched.state_dict()
    assert "anneal_func" not in sd and sd["_anneal_strategy"] == "linear" and sd["anneal_epochs"] == 4
    with pytest.raises(ValueError, match="^anneal_strategy must be one of 'cos' or 'linear', instead got exp$"):
        S.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="^anneal_epochs must be equal or greater than 0, got -1$"):
        S.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)


def test_update_bn_recomputes_running_statistics():
    model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))
    with ember.no_grad():
        model[0].weight.copy_(ember.eye(2))
        model[0].bias.zero_()
    model.eval()
    batches = [ember.tensor([[0.0, 2.0], [2.0, 4.0]]), ember.tensor([[4.0, 6.0], [6.0, 8.0]])]
    S.update_bn([(b, None) for b in batches], model)
    np.testing.assert_allclose(model[1].running_mean.numpy(), [3.0, 5.0])  # mean of the two batch means
    assert model[1].momentum == 0.1 and not model.training
