"""Samplers: the order in which a DataLoader reads a dataset's samples, and how it groups them
into batches (MXNet's gluon.data samplers; RandomSampler draws from numpy's global generator,
so numpy.random.seed gives MXNet's order)."""
import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler"]

_LAST_BATCH_MODES = ("keep", "discard", "rollover")


class Sampler:
    """Yields sample indices (or batches of them)."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """start, start + 1, ..., start + length - 1."""

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def _order(self):
        """The indices __iter__ yields, as one int64 array."""
        return np.arange(self._start, self._start + self._length, dtype=np.int64)

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """0 .. length - 1 in a new random order each epoch."""

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        return iter(self._order())

    def _order(self):
        """A new epoch's order (one draw of numpy's global generator), as one int64 array."""
        indices = np.arange(self._length, dtype=np.int64)
        np.random.shuffle(indices)
        return indices

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of `dataset` for which fn(sample) is true."""

    def __init__(self, fn, dataset):
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


class BatchSampler(Sampler):
    """Lists of batch_size indices from `sampler`. The last, shorter batch is yielded ("keep"),
    dropped ("discard") or carried to the front of the next epoch ("rollover")."""

    def __init__(self, sampler, batch_size, last_batch="keep"):
        if last_batch not in _LAST_BATCH_MODES:
            raise ValueError(f"last_batch must be one of 'keep', 'discard', or 'rollover', but "
                             f"got {last_batch}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be a positive integer, but got {batch_size}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def _index_arrays(self):
        """The batches __iter__ yields, as int64 arrays sliced from one epoch order, for a
        sampler with _order (SequentialSampler, RandomSampler): no per-index Python work."""
        order = self._sampler._order()
        if self._prev:
            order = np.concatenate([np.asarray(self._prev, dtype=np.int64), order])
        self._prev = []
        size = self._batch_size
        full = len(order) - len(order) % size
        for start in range(0, full, size):
            yield order[start:start + size]
        if full < len(order):
            if self._last_batch == "keep":
                yield order[full:]
            elif self._last_batch == "rollover":
                self._prev = order[full:].tolist()

    def __len__(self):
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size
