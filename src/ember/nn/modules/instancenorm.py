"""nn modules: instance norm."""
import warnings

from .. import functional as F
from .batchnorm import _NormBase
from .lazy import _LazyNormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _no_batch_dim = 0
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in self._dims:
            raise ValueError(f"expected {self._dims[0]}D or {self._dims[1]}D input (got {input.dim()}D input)")

    def _apply_instance_norm(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = self.__class__.__name__
                names = " and ".join(f'"{k}"' for k in keys)
                error_msgs.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because "
                    f"{klass} does not track running stats by default since 0.4.0. Please remove these keys from "
                    "state_dict. If the running stats are actually needed, instead set track_running_stats=True "
                    f"in {klass} to enable them. See the documentation of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Same as `torch.nn.InstanceNorm1d`."""
    _no_batch_dim = 2
    _dims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Same as `torch.nn.InstanceNorm2d`."""
    _no_batch_dim = 3
    _dims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Same as `torch.nn.InstanceNorm3d`."""
    _no_batch_dim = 4
    _dims = (4, 5)


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """Same as `torch.nn.LazyInstanceNorm1d`: num_features is inferred from the first input; like torch's, its
    affine and track_running_stats default to True."""
    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2
    _dims = (2, 3)


class LazyInstanceNorm2d(LazyInstanceNorm1d):
    """Same as `torch.nn.LazyInstanceNorm2d`: num_features is inferred from the first input."""
    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3
    _dims = (3, 4)


class LazyInstanceNorm3d(LazyInstanceNorm1d):
    """Same as `torch.nn.LazyInstanceNorm3d`: num_features is inferred from the first input."""
    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
    _dims = (4, 5)
