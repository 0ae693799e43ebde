"""Sampler that gives each distributed replica its own shard (same as `torch.utils.data.distributed`)."""
import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _dist_settings():
    """(world_size, rank) of the default process group, or torch's error when there is none."""
    try:
        from ... import distributed as dist
    except ImportError:
        dist = None
    if dist is None or not getattr(dist, "is_available", lambda: False)():
        raise RuntimeError("Requires distributed package to be available")
    if not dist.is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler):
    """Same as `torch.utils.data.distributed.DistributedSampler`."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _dist_settings()[0]
        if rank is None:
            rank = _dist_settings()[1]
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % num_replicas:
            # every replica gets the same count: drop the tail instead of padding
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            import ember
            g = ember.Generator().manual_seed(self.seed + self.epoch)
            indices = ember.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            pad = self.total_size - len(indices)
            indices += (indices * math.ceil(pad / len(indices)))[:pad] if pad > len(indices) else indices[:pad]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Same as `torch.utils.data.distributed.DistributedSampler.set_epoch`."""
        self.epoch = epoch
