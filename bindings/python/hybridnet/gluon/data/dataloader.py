"""DataLoader (MXNet's gluon.data.DataLoader): batches of a dataset, read in the order of a
sampler and stacked by a batchify function; num_workers > 0 reads batches on that many threads
(the library releases the GIL in its kernels), in order.

Batches of arrays' rows (an ArrayDataset of NDArrays and numpy arrays, or one such array, with
the default batchify) are taken without per-sample Python work: in order through the library's
data loader (hn_data_loader), shuffled by gathering the rows numpy's order picks (the order
MXNet's RandomSampler draws, so numpy.random.seed gives MXNet's batches)."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ... import _native
from ... import ndarray as nd
from ..._ffi import ffi, lib
from ...base import DTYPE_FROM_NUMPY, HybridnetError, check
from ...ndarray.ndarray import _from_numpy_copy, _View
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


class _Rows:
    """The arrays whose rows, stacked, are default_batchify_fn's batches of a dataset's samples
    (one batch array per array; a lone array's batch is that array, not a list)."""

    def __init__(self, arrays):
        self._arrays = arrays
        self._length = len(arrays[0])

    @staticmethod
    def of(dataset):
        """The rows of an ArrayDataset of NDArrays and numpy arrays, or of one such array; None
        for any other dataset (its samples are stacked one by one)."""
        arrays = dataset._data if type(dataset) is ArrayDataset else [dataset]
        for array in arrays:
            if type(array) is nd.NDArray:
                try:
                    dtype = np.dtype(array.dtype)
                except HybridnetError:  # no numpy dtype (bfloat16)
                    return None
            elif type(array) is np.ndarray:
                dtype = array.dtype
            else:
                return None
            if dtype not in DTYPE_FROM_NUMPY or array.ndim == 0:
                return None
        return _Rows(arrays)

    def _batch(self, fields):
        return fields[0] if len(fields) == 1 else fields

    def views(self):
        """numpy views of the arrays (an NDArray's shares its storage)."""
        return [np.asarray(_View(a)) if type(a) is nd.NDArray else a for a in self._arrays]

    def gather(self, indices, views=None):
        """The batch of the samples `indices` (an int64 array): one numpy gather and one copy
        into the library per array."""
        return self._batch([_from_numpy_copy(v[indices], v.dtype)
                            for v in (views if views is not None else self.views())])

    def _tensors(self):
        """The arrays as library tensors sharing their storage, or None when a numpy array
        cannot be shared (not C-contiguous and aligned, read-only, or empty)."""
        tensors = []
        for a in self._arrays:
            if type(a) is np.ndarray:
                flags = a.flags
                if not (flags.c_contiguous and flags.aligned and flags.writeable and a.size):
                    return None
                a = nd.from_numpy(a)
            tensors.append(a)
        return tensors

    def batches(self, batch_sampler):
        """An epoch of batch_sampler's batches (a BatchSampler over a SequentialSampler or a
        RandomSampler, which keeps any rollover): through the library's loader when in order
        from the first sample, else gathered."""
        sampler = batch_sampler._sampler
        tensors = None
        if type(sampler) is _sampler.SequentialSampler and not sampler._start and \
                len(sampler) == self._length and batch_sampler._last_batch != "rollover":
            tensors = self._tensors()
        if tensors is None or len(tensors) > _native.MAX_LOADER_FIELDS:
            return self._gathered(batch_sampler)
        # A loader per epoch: an epoch in order has no state to carry over, and epochs iterated
        # at the same time stay apart. Its batches come from C (every training step takes one).
        handles = ffi.new("hn_tensor*[]", [t._h for t in tensors])
        out = ffi.new("hn_data_loader**")
        check(lib.hn_data_loader_create(handles, len(tensors), batch_sampler._batch_size, 0,
                                        batch_sampler._last_batch.encode(), 0, out))
        loader = ffi.gc(out[0], lib.hn_data_loader_free)
        return _native.LoaderBatches(loader, len(tensors))

    def _gathered(self, batch_sampler):
        views = self.views()
        for indices in batch_sampler._index_arrays():
            yield self.gather(indices, views)


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
        self._rows = _Rows.of(dataset) if self._batchify_fn is default_batchify_fn else None
        # Batches sliced from one epoch order: samplers with _order.
        self._sliced = self._rows is not None and type(batch_sampler) is _sampler.BatchSampler \
            and type(batch_sampler._sampler) in (_sampler.SequentialSampler, _sampler.RandomSampler)

    def _batch(self, indices):
        if self._rows is not None:
            return self._rows.gather(np.asarray(indices, dtype=np.int64))
        return self._batchify_fn([self._dataset[i] for i in indices])

    def __iter__(self):
        if self._sliced:
            return self._rows.batches(self._batch_sampler)
        return self._batches()

    def _batches(self):
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
