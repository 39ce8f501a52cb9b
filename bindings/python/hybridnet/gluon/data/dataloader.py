"""DataLoader (MXNet's gluon.data.DataLoader): batches of a dataset, read in the order of a
sampler and stacked by a batchify function; num_workers > 0 reads batches on that many threads
(the library releases the GIL in its kernels), in order."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ... import ndarray as nd
from . import sampler as _sampler
from .dataset import ArrayDataset

__all__ = ["DataLoader", "default_batchify_fn"]


def default_batchify_fn(data):
    """MXNet's stacking: NDArray samples are stacked on a new first axis, tuple samples are
    stacked element by element (a list), anything else goes through numpy.asarray."""
    if isinstance(data[0], nd.NDArray):
        return nd.stack(*data)
    if isinstance(data[0], tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    array = np.asarray(data)
    return nd.array(array, dtype=array.dtype)


class DataLoader:
    """Batches of `dataset`: batch_size samples at a time, in order or shuffled (or as
    `sampler` / `batch_sampler` say), the last batch kept, discarded or rolled over
    (`last_batch`), each batch made by batchify_fn (default_batchify_fn)."""

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None, last_batch=None,
                 batch_sampler=None, batchify_fn=None, num_workers=0, pin_memory=False,
                 pin_device_id=0, prefetch=None, thread_pool=False, timeout=120,
                 auto_reload=False):
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, given {timeout}")
        self._dataset = dataset
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is specified")
            if sampler is None:
                sampler = (_sampler.RandomSampler(len(dataset)) if shuffle
                           else _sampler.SequentialSampler(len(dataset)))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch or "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be specified "
                             "if batch_sampler is specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = max(0, int(num_workers))
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._batchify_fn = batchify_fn or default_batchify_fn

    def _batch(self, indices):
        if self._batchify_fn is default_batchify_fn and type(self._dataset) is ArrayDataset:
            batch = self._dataset._gather(np.asarray(indices, dtype=np.int64))
            if batch is not None:
                return batch
        return self._batchify_fn([self._dataset[i] for i in indices])

    def __iter__(self):
        if self._num_workers == 0:
            for indices in self._batch_sampler:
                yield self._batch(indices)
            return
        # Up to num_workers + prefetch batches in flight; results are yielded in sampler order.
        window = self._num_workers + self._prefetch
        with ThreadPoolExecutor(self._num_workers) as pool:
            pending = []
            for indices in self._batch_sampler:
                pending.append(pool.submit(self._batch, indices))
                if len(pending) > window:
                    yield pending.pop(0).result(timeout=self._timeout)
            for future in pending:
                yield future.result(timeout=self._timeout)

    def __len__(self):
        return len(self._batch_sampler)
