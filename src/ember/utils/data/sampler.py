"""Index samplers (same as `torch.utils.data.sampler`)."""
import itertools

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


def _ember():
    import ember
    return ember


class Sampler:
    """Same as `torch.utils.data.Sampler`."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):  # Sampler[int] in type hints
        return cls


class SequentialSampler(Sampler):
    """Same as `torch.utils.data.SequentialSampler`."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator():
    """A generator seeded from the default one, as torch does when a sampler is given no generator."""
    ember = _ember()
    seed = int(ember.empty((), dtype=ember.int64).random_().item())
    return ember.Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """Same as `torch.utils.data.RandomSampler`."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        ember = _ember()
        n = len(self.data_source)
        g = self.generator if self.generator is not None else _fresh_generator()
        k = self.num_samples
        if self.replacement:
            # drawn in chunks of 32 so that a short loop does not pay for a huge draw
            for _ in range(k // 32):
                yield from ember.randint(high=n, size=(32,), dtype=ember.int64, generator=g).tolist()
            yield from ember.randint(high=n, size=(k % 32,), dtype=ember.int64, generator=g).tolist()
        else:
            for _ in range(k // n):
                yield from ember.randperm(n, generator=g).tolist()
            yield from ember.randperm(n, generator=g).tolist()[:k % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """Same as `torch.utils.data.SubsetRandomSampler`."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _ember().randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Same as `torch.utils.data.WeightedRandomSampler`."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            msg = f"replacement should be a boolean value, but got replacement={replacement}"
            raise ValueError(msg)  # noqa: TRY004  (torch's type)
        ember = _ember()
        w = ember.as_tensor(weights, dtype=ember.float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = _ember().multinomial(self.weights, self.num_samples, self.replacement, generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Same as `torch.utils.data.BatchSampler`."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")  # noqa: TRY004
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            # zip stops at the first incomplete batch, which is exactly the one to drop
            for batch in zip(*[it] * self.batch_size):
                yield list(batch)
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
