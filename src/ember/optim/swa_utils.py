"""Stochastic weight averaging and exponential moving averages of a model's weights, as torch.optim.swa_utils."""
import copy
import itertools
import math

from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param, _warn_get_lr_called_within_step

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def _is_float(t):
    return t.is_floating_point() or t.is_complex()


def get_ema_multi_avg_fn(decay=0.999):
    """Same as `torch.optim.swa_utils.get_ema_multi_avg_fn`."""
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _num_averaged):
        with no_grad():
            for e, c in zip(ema_param_list, current_param_list):
                if _is_float(e):
                    e.lerp_(c, 1 - decay)
                else:
                    e.copy_(e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """Same as `torch.optim.swa_utils.get_swa_multi_avg_fn`."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            for a, c in zip(averaged_param_list, current_param_list):
                if _is_float(a):
                    a.lerp_(c, 1 / (_scalar(num_averaged) + 1))
                else:
                    a.copy_(a + (c - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """Same as `torch.optim.swa_utils.get_ema_avg_fn`."""
    if not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Same as `torch.optim.swa_utils.get_swa_avg_fn`."""
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _scalar(n):
    return n.item() if isinstance(n, Tensor) else n


class AveragedModel(Module):
    """Same as `torch.optim.swa_utils.AveragedModel` (an equal-weight average unless avg_fn / multi_avg_fn say
    otherwise)."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        from .._ops.creation import tensor
        self.register_buffer("n_averaged", tensor(0, dtype=_long(), device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _tensors(self, model, own):
        if self.use_buffers:
            return list(itertools.chain(model.parameters(), model.buffers()))
        return list(self.parameters() if own else model.parameters())

    def update_parameters(self, model):
        """Same as `torch.optim.swa_utils.AveragedModel.update_parameters`: folds model's current weights in."""
        averaged = [p.detach() for p in self._tensors(self.module, True)]
        current = [p.detach().to(a.device) for a, p in zip(averaged, self._tensors(model, False))]
        with no_grad():
            if int(self.n_averaged) == 0:
                for a, c in zip(averaged, current):
                    a.copy_(c)
            elif self.avg_fn is not None:
                for a, c in zip(averaged, current):
                    a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            elif self.multi_avg_fn is not None:
                for group in _by_device_and_dtype(averaged, current):
                    self.multi_avg_fn(group[0], group[1], self.n_averaged.to(group[0][0].device))
            else:
                avg = get_swa_avg_fn()
                for a, c in zip(averaged, current):
                    a.copy_(avg(a, c, self.n_averaged.to(a.device)))
            if not self.use_buffers:  # buffers are not averaged: keep them equal to the source model's
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1


def _long():
    from .. import int64
    return int64


def _by_device_and_dtype(averaged, current):
    groups = {}
    for a, c in zip(averaged, current):
        g = groups.setdefault((str(a.device), a.dtype), ([], []))
        g[0].append(a)
        g[1].append(c)
    return list(groups.values())


def update_bn(loader, model, device=None):
    """Same as `torch.optim.swa_utils.update_bn`: recomputes batch-norm running statistics with one pass over
    loader (cumulative averages: momentum None)."""
    from ..nn.modules.batchnorm import _BatchNorm
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Same as `torch.optim.swa_utils.SWALR`: anneals each group's lr to swa_lr over anneal_epochs, then holds it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        # undo the last annealing step: lr = alpha * swa_lr + (1 - alpha) * initial
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        """Same as `torch.optim.swa_utils.SWALR.get_lr`."""
        _warn_get_lr_called_within_step(self)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        groups = self.optimizer.param_groups
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / span)))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def state_dict(self):
        """Same as `torch.optim.swa_utils.SWALR.state_dict`: without the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Same as `torch.optim.swa_utils.SWALR.load_state_dict`."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
