"""ember.optim.lr_scheduler: each schedule against hand-written values, state_dict, warnings and errors."""
import math
import warnings

import pytest

import ember
from ember import optim
from ember.optim import lr_scheduler as S


def _opt(lr=0.1, groups=1, cls=optim.SGD, **kwargs):
    params = [{"params": [ember.zeros(1, requires_grad=True)], "lr": lr * (i + 1)} for i in range(groups)]
    return cls(params, lr=lr, **kwargs)


def _lrs(opt, sched, n, group=0, key="lr"):
    """The group's value of `key` at epoch 0 (after construction) and after each of n scheduler steps."""
    out = [opt.param_groups[group][key]]
    for _ in range(n):
        opt.step()
        sched.step()
        out.append(opt.param_groups[group][key])
    return out


def _approx(seq):
    return pytest.approx(seq, rel=1e-12, abs=1e-15)


def test_lambda_lr():
    opt = _opt(groups=2)
    s = S.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: e + 1])
    assert _lrs(opt, s, 4) == _approx([0.1, 0.05, 0.025, 0.0125, 0.00625])
    assert opt.param_groups[1]["lr"] == pytest.approx(0.2 * 5)
    assert s.get_last_lr() == _approx([0.00625, 1.0])
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.LambdaLR(opt, [lambda e: 1.0])


def test_multiplicative_lr():
    opt = _opt()
    s = S.MultiplicativeLR(opt, lambda e: 0.9)
    assert _lrs(opt, s, 3) == _approx([0.1, 0.09, 0.081, 0.0729])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got int"):
        S.MultiplicativeLR(_opt(), 3)


def test_step_lr():
    opt = _opt()
    assert _lrs(opt, S.StepLR(opt, step_size=2, gamma=0.1), 5) == _approx([0.1, 0.1, 0.01, 0.01, 0.001, 0.001])


def test_multi_step_lr():
    opt = _opt(lr=1.0)
    s = S.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.5)
    assert _lrs(opt, s, 6) == _approx([1.0, 1.0, 0.5, 0.5, 0.5, 0.125, 0.125])


def test_constant_lr():
    opt = _opt()
    s = S.ConstantLR(opt, factor=0.5, total_iters=3)
    assert _lrs(opt, s, 4) == _approx([0.05, 0.05, 0.05, 0.1, 0.1])
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1."):
        S.ConstantLR(_opt(), factor=2.0)


def test_linear_lr():
    opt = _opt()
    s = S.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=3)
    assert _lrs(opt, s, 5) == _approx([0.025, 0.05, 0.075, 0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        S.LinearLR(_opt(), start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor expected to be between 0 and 1."):
        S.LinearLR(_opt(), end_factor=1.5)


def test_exponential_lr():
    opt = _opt()
    assert _lrs(opt, S.ExponentialLR(opt, gamma=0.5), 3) == _approx([0.1, 0.05, 0.025, 0.0125])


def test_polynomial_lr():
    opt = _opt()
    s = S.PolynomialLR(opt, total_iters=4, power=2.0)
    assert _lrs(opt, s, 6) == _approx([0.1 * (1 - e / 4) ** 2 for e in range(5)] + [0.0, 0.0])


def test_cosine_annealing_lr():
    opt = _opt()
    s = S.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
    expected = [0.01 + (0.1 - 0.01) * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(9)]
    assert _lrs(opt, s, 8) == pytest.approx(expected, rel=1e-10, abs=1e-14)


def test_cosine_annealing_warm_restarts():
    opt = _opt(lr=1.0)
    s = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    c = lambda t_cur, t_i: (1 + math.cos(math.pi * t_cur / t_i)) / 2
    expected = [c(0, 2), c(1, 2), c(0, 4), c(1, 4), c(2, 4), c(3, 4), c(0, 8)]
    assert _lrs(opt, s, 6) == _approx(expected)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        S.CosineAnnealingWarmRestarts(_opt(), T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        S.CosineAnnealingWarmRestarts(_opt(), T_0=2, T_mult=0)


def test_cosine_annealing_warm_restarts_fractional_epochs():
    opt = _opt(lr=1.0)
    s = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.1)
    lr = lambda t_cur, t_i: 0.1 + 0.9 * (1 + math.cos(math.pi * t_cur / t_i)) / 2
    for epoch, (t_cur, t_i) in [(0.5, (0.5, 2)), (2.5, (0.5, 4)), (7.0, (1.0, 8)), (1.0, (1.0, 2))]:
        opt.step()
        s.step(epoch)  # this scheduler takes epochs without the deprecation warning, as in torch
        assert opt.param_groups[0]["lr"] == pytest.approx(lr(t_cur, t_i), rel=1e-12)
        assert s.last_epoch == math.floor(epoch)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        s.step(-1)


def test_cyclic_lr_triangular_with_momentum():
    opt = _opt(momentum=0.9)
    s = S.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2)
    assert _lrs(opt, s, 8) == _approx([0.1, 0.55, 1.0, 0.55, 0.1, 0.55, 1.0, 0.55, 0.1])
    opt = _opt(momentum=0.9)
    s = S.CyclicLR(opt, base_lr=0.1, max_lr=1.0, step_size_up=2)
    assert _lrs(opt, s, 4, key="momentum") == _approx([0.9, 0.85, 0.8, 0.85, 0.9])


def test_cyclic_lr_triangular2_and_exp_range():
    opt = _opt(momentum=0.9)
    s = S.CyclicLR(opt, 0.1, 1.0, step_size_up=2, mode="triangular2")
    assert _lrs(opt, s, 8) == _approx([0.1, 0.55, 1.0, 0.55, 0.1, 0.325, 0.55, 0.325, 0.1])
    opt = _opt(momentum=0.9)
    s = S.CyclicLR(opt, 0.1, 1.0, step_size_up=2, step_size_down=1, mode="exp_range", gamma=0.5)
    # x = position in the cycle; up for 2 iterations, down for 1
    heights = [0.0, 0.5, 1.0, 0.0, 0.5, 1.0]
    assert _lrs(opt, s, 5) == _approx([0.1 + 0.9 * h * 0.5 ** e for e, h in enumerate(heights)])
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        S.CyclicLR(_opt(momentum=0.9), 0.1, 1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1 with `cycle_momentum` option"):
        S.CyclicLR(_opt(cls=optim.Adagrad), 0.1, 1.0)


def test_cyclic_lr_on_adam_cycles_beta1():
    opt = _opt(cls=optim.Adam)
    s = S.CyclicLR(opt, 0.1, 1.0, step_size_up=1)
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    opt.step()
    s.step()
    assert opt.param_groups[0]["betas"] == pytest.approx((0.8, 0.999))


def test_one_cycle_lr_cos():
    opt = _opt(momentum=0.9)
    s = S.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3)
    initial, min_lr = 1.0 / 25, 1.0 / 25 / 1e4

    def cos(start, end, pct):
        return end + (start - end) / 2 * (1 + math.cos(math.pi * pct))
    # phase 1 ends at step 0.3 * 10 - 1 = 2, phase 2 at step 9
    expected = [cos(initial, 1.0, e / 2) for e in range(3)] + [cos(1.0, min_lr, (e - 2) / 7) for e in range(3, 11)]
    assert _lrs(opt, s, 10) == _approx(expected)
    assert opt.param_groups[0]["momentum"] == pytest.approx(cos(0.85, 0.95, 8 / 7))
    with pytest.raises(ValueError, match="Tried to step 11 times. The specified number of total steps is 10"):
        opt.step()
        s.step()


def test_one_cycle_lr_linear_three_phase():
    opt = _opt(momentum=0.9)
    s = S.OneCycleLR(opt, max_lr=2.0, epochs=2, steps_per_epoch=5, pct_start=0.25, anneal_strategy="linear",
                     three_phase=True, div_factor=4.0, final_div_factor=10.0)
    lin = lambda start, end, pct: (end - start) * pct + start
    # phase ends: 0.25 * 10 - 1 = 1.5, 2 * 0.25 * 10 - 2 = 3.0, 9
    expected = [lin(0.5, 2.0, e / 1.5) for e in (0, 1)] + [lin(2.0, 0.5, (e - 1.5) / 1.5) for e in (2, 3)] + \
        [lin(0.5, 0.05, (e - 3.0) / 6) for e in range(4, 10)]
    assert _lrs(opt, s, 9) == _approx(expected)


def test_one_cycle_lr_errors():
    with pytest.raises(ValueError, match="You must define either total_steps OR \\(epochs AND steps_per_epoch\\)"):
        S.OneCycleLR(_opt(momentum=0.9), max_lr=1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        S.OneCycleLR(_opt(momentum=0.9), max_lr=1.0, total_steps=0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start, but got 1.5"):
        S.OneCycleLR(_opt(momentum=0.9), max_lr=1.0, total_steps=5, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        S.OneCycleLR(_opt(momentum=0.9), max_lr=1.0, total_steps=5, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        S.OneCycleLR(_opt(momentum=0.9), max_lr=[1.0, 2.0], total_steps=5)


def test_sequential_lr():
    opt = _opt()
    s = S.SequentialLR(opt, [S.ConstantLR(opt, factor=0.5, total_iters=2), S.ExponentialLR(opt, gamma=0.5)],
                       milestones=[3])
    assert _lrs(opt, s, 5) == _approx([0.05, 0.05, 0.1, 0.1, 0.05, 0.025])
    with pytest.raises(ValueError, match="Sequential Schedulers expects number of schedulers provided to be one more"):
        S.SequentialLR(opt, [S.StepLR(opt, 2)], milestones=[3])
    with pytest.raises(ValueError, match="SequentialLR does not support `ReduceLROnPlateau`"):
        S.SequentialLR(opt, [S.StepLR(opt, 2), S.ReduceLROnPlateau(opt)], milestones=[3])
    with pytest.raises(ValueError, match="SequentialLR expects at least one scheduler"):
        S.SequentialLR(opt, [], milestones=[])


def test_chained_scheduler():
    opt = _opt()
    s = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=2), S.ExponentialLR(opt, gamma=0.9)])
    assert _lrs(opt, s, 4) == _approx([0.05, 0.045, 0.081, 0.0729, 0.06561])
    assert s.get_last_lr() == _approx([0.06561])
    other = _opt()
    with pytest.raises(ValueError, match="ChainedScheduler expects all schedulers to belong to the same optimizer"):
        S.ChainedScheduler([S.StepLR(opt, 2), S.StepLR(other, 2)])


def test_reduce_lr_on_plateau():
    opt = _opt()
    s = S.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    lrs = []
    for metric in [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.49999]:
        s.step(metric)
        lrs.append(opt.param_groups[0]["lr"])
    # improvements must beat best * (1 - 1e-4); two bad epochs in a row (> patience) halve the lr
    assert lrs == _approx([0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025])
    assert s.get_last_lr() == _approx([0.025])


def test_reduce_lr_on_plateau_options():
    opt = _opt(groups=2)
    s = S.ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, threshold=0.5, threshold_mode="abs",
                            cooldown=1, min_lr=[0.005, 0.0])
    lrs = []
    for metric in [1.0, 1.2, 1.2, 1.2, 2.0, 2.1]:
        s.step(metric)
        lrs.append([g["lr"] for g in opt.param_groups])
    # not better than best + 0.5 -> reduce at once (patience 0), then one cooldown epoch; min_lr clamps group 0
    assert lrs == [_approx(x) for x in ([0.1, 0.2], [0.01, 0.02], [0.01, 0.02], [0.005, 0.002], [0.005, 0.002],
                                        [0.005, 0.0002])]
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        S.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        S.ReduceLROnPlateau(opt, mode="avg")
    with pytest.raises(ValueError, match="threshold mode pct is unknown!"):
        S.ReduceLROnPlateau(opt, threshold_mode="pct")
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        S.ReduceLROnPlateau(opt, min_lr=[0.1])


def test_reduce_lr_on_plateau_eps():
    opt = _opt(lr=1e-8)
    s = S.ReduceLROnPlateau(opt, patience=0)
    s.step(1.0)
    s.step(1.0)  # the reduction (1e-8 -> 1e-9) is below eps: the lr stays
    assert opt.param_groups[0]["lr"] == 1e-8


def test_state_dict_round_trip():
    opt = _opt()
    s = S.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        s.step()
    sd = s.state_dict()
    assert "optimizer" not in sd
    assert sd["last_epoch"] == 3 and sd["_step_count"] == 4 and sd["_last_lr"] == _approx([0.05])
    opt2 = _opt()
    opt2.load_state_dict(opt.state_dict())
    s2 = S.StepLR(opt2, step_size=5)
    s2.load_state_dict(sd)
    assert s2.step_size == 2
    opt.step()
    opt2.step()
    s.step()
    s2.step()
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"] == pytest.approx(0.025)


def test_lambda_state_dict_keeps_callable_objects_state():
    class Scale:
        def __init__(self):
            self.factor = 0.5

        def __call__(self, epoch):
            return self.factor ** epoch

    opt = _opt()
    s = S.LambdaLR(opt, Scale())
    s.lr_lambdas[0].factor = 0.25
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"factor": 0.25}]
    s2 = S.LambdaLR(_opt(), Scale())
    s2.load_state_dict(sd)
    assert s2.lr_lambdas[0].factor == 0.25
    assert S.LambdaLR(_opt(), lambda e: 1.0).state_dict()["lr_lambdas"] == [None]


def test_sequential_state_dict_nests_children():
    opt = _opt()
    s = S.SequentialLR(opt, [S.ConstantLR(opt, 0.5, total_iters=1), S.ExponentialLR(opt, 0.5)], milestones=[2])
    sd = s.state_dict()
    assert list(sd) == ["_milestones", "last_epoch", "_last_lr", "_schedulers"]
    assert sd["_schedulers"][1]["gamma"] == 0.5


def test_warning_when_scheduler_steps_first():
    opt = _opt()
    s = S.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    opt = _opt()
    s = S.StepLR(opt, 2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()


def test_warning_when_optimizer_step_replaced():
    opt = _opt()
    s = S.StepLR(opt, 2)
    opt.step = lambda closure=None: None
    with pytest.warns(UserWarning, match="Seems like `optimizer.step\\(\\)` has been overridden"):
        s.step()


def test_get_lr_outside_step_warns():
    opt = _opt()
    s = S.ExponentialLR(opt, 0.5)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()


def test_verbose_is_deprecated():
    with pytest.warns(UserWarning, match="The verbose parameter is deprecated"):
        S.StepLR(_opt(), 2, verbose=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S.StepLR(_opt(), 2)


def test_closed_form_with_epoch():
    opt = _opt()
    s = S.StepLR(opt, step_size=2, gamma=0.5)
    opt.step()
    with pytest.warns(UserWarning, match="The epoch parameter"):
        s.step(5)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5 ** 2)


def test_initial_lr_and_resume():
    opt = _opt()
    S.StepLR(opt, 2)
    assert opt.param_groups[0]["initial_lr"] == 0.1
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        S.StepLR(_opt(), 2, last_epoch=3)
    s = S.StepLR(opt, 2, gamma=0.5, last_epoch=3)  # resuming: the next epoch is 4, a multiple of step_size
    assert s.last_epoch == 4 and opt.param_groups[0]["lr"] == pytest.approx(0.05)


def test_not_an_optimizer():
    with pytest.raises(TypeError, match="int is not an Optimizer"):
        S.StepLR(3, 2)


def test_tensor_lr_is_updated_in_place():
    p = ember.zeros(1, requires_grad=True)
    lr = ember.tensor(0.1)
    opt = optim.SGD([p], lr=lr)
    s = S.ExponentialLR(opt, 0.5)
    opt.step()
    s.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == pytest.approx(0.05)
    assert isinstance(s.get_last_lr()[0], ember.Tensor)


def test_lr_scheduler_base_aliases():
    assert issubclass(S._LRScheduler, S.LRScheduler)
    with pytest.raises(NotImplementedError):
        S.LRScheduler(_opt())
