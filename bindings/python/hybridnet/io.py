"""Data iterators (mx.io): DataBatch, DataDesc, DataIter and NDArrayIter, with MXNet 1.9's
batching, padding and shuffling (numpy's global generator, as MXNet)."""
from collections import OrderedDict, namedtuple

import numpy as np

from . import ndarray as nd

__all__ = ["DataDesc", "DataBatch", "DataIter", "NDArrayIter"]

_LAST_BATCH_HANDLES = ("pad", "discard", "roll_over")


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """The name, shape, dtype and layout of one input of a batch."""

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        dtypes = dict(types) if types is not None else None
        return [DataDesc(name, shape, dtypes[name]) if dtypes else DataDesc(name, shape)
                for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label NDArrays, and `pad`, the number of samples at its end
    that repeat earlier ones."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError("Data must be list of NDArrays")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError("Label must be list of NDArrays")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [lab.shape for lab in self.label] if self.label else None
        return (f"{self.__class__.__name__}: data shapes: {data_shapes} label shapes: "
                f"{label_shapes}")


class DataIter:
    """The iterator protocol of mx.io: reset(), next() / __next__, iter_next(), getdata(),
    getlabel(), getpad(), getindex()."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        pass

    def next(self):
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        raise NotImplementedError

    def getdata(self):
        raise NotImplementedError

    def getlabel(self):
        raise NotImplementedError

    def getindex(self):
        return None

    def getpad(self):
        raise NotImplementedError


def _named_arrays(data, allow_empty, default_name):
    """[(name, numpy array)] sorted by name, from an array, a list or a dict of arrays."""
    if data is None:
        if not allow_empty:
            raise ValueError("NDArrayIter: data must be given")
        data = []
    if isinstance(data, (np.ndarray, nd.NDArray)):
        data = [data]
    if isinstance(data, list):
        if not data and not allow_empty:
            raise ValueError("NDArrayIter: data is an empty list")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict((f"_{i}_{default_name}", d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise TypeError("Input must be NDArray, numpy.ndarray, a list of them or dict with them "
                        "as values")
    named = []
    for name, value in data.items():
        if isinstance(value, nd.NDArray):
            value = value.asnumpy()
        else:
            try:
                value = nd.array(value).asnumpy()
            except Exception as e:  # noqa: BLE001 - reported with its input's name
                raise TypeError(f"Invalid type '{type(value)}' for {name}, should be NDArray "
                                f"or numpy.ndarray") from e
        named.append((name, value))
    return sorted(named, key=lambda item: item[0])


class NDArrayIter(DataIter):
    """Batches of in-memory arrays (MXNet's mx.io.NDArrayIter). The last, shorter batch is
    filled up from the start ("pad", batch.pad says how many), dropped ("discard") or completed
    with the first samples of the next epoch ("roll_over")."""

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        if last_batch_handle not in _LAST_BATCH_HANDLES:
            raise ValueError(f"last_batch_handle must be one of 'pad', 'discard' or 'roll_over', "
                             f"got '{last_batch_handle}'")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
        self.layout = layout
        self._axis = DataDesc.get_batch_axis(layout)
        if self._axis < 0:
            raise ValueError(f"layout '{layout}' has no batch axis 'N'")
        self.data = _named_arrays(data, False, data_name)
        self.label = _named_arrays(label, True, label_name)
        self.num_data = self.data[0][1].shape[self._axis]
        for name, value in self.data + self.label:
            if value.shape[self._axis] != self.num_data:
                raise ValueError(f"NDArrayIter: '{name}' has {value.shape[self._axis]} samples, "
                                 f"'{self.data[0][0]}' has {self.num_data}")
        self.idx = np.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = int(batch_size)
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None
        self.reset()

    def _descs(self, named):
        descs = []
        for name, value in named:
            shape = list(value.shape)
            shape[self._axis] = self.batch_size
            descs.append(DataDesc(name, tuple(shape), value.dtype, layout=self.layout))
        return descs

    @property
    def provide_data(self):
        return self._descs(self.data)

    @property
    def provide_label(self):
        return self._descs(self.label)

    def hard_reset(self):
        """Back to the first batch, forgetting a rolled-over remainder."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        if self.shuffle:
            self._shuffle_data()
        # roll_over: the next epoch starts early by the size of the remainder kept in the cache.
        if (self.last_batch_handle == "roll_over"
                and self.num_data - self.batch_size < self.cursor < self.num_data):
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self._axis] != self.batch_size:
            # Only the remainder of discard / roll_over gets here: kept for roll_over.
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _take(self, named, indices):
        return [nd.array(np.take(value, indices, axis=self._axis), dtype=value.dtype)
                for _, value in named]

    def _batchify(self, named, cache):
        if self.cursor >= self.num_data:
            raise ValueError("NDArrayIter needs reset()")
        end = self.cursor + self.batch_size
        if self.last_batch_handle == "roll_over" and self.cursor < 0:
            if cache is None:
                raise ValueError("NDArrayIter: the next epoch has no rolled-over data")
            head = self._take(named, np.arange(0, end))
            return [nd.concat(c, h, dim=self._axis) for c, h in zip(cache, head)]
        if self.last_batch_handle == "pad" and end > self.num_data:
            indices = np.concatenate([np.arange(self.cursor, self.num_data),
                                      np.arange(end - self.num_data) % self.num_data])
            return self._take(named, indices)
        return self._take(named, np.arange(self.cursor, min(end, self.num_data)))

    def getdata(self):
        data = self._batchify(self.data, self._cache_data)
        self._cache_data = None
        return data

    def getlabel(self):
        label = self._batchify(self.label, self._cache_label)
        self._cache_label = None
        return label

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _shuffle_data(self):
        np.random.shuffle(self.idx)
        self.data = [(name, value[self.idx]) for name, value in self.data]
        self.label = [(name, value[self.idx]) for name, value in self.label]
