"""Evaluation metrics with MXNet's mx.metric API; the library computes them (hn_metric_*).

    acc = mx.metric.Accuracy()
    acc.update(labels=[label], preds=[output])     # NDArrays (or numpy arrays), one per output
    acc.get()                                      # ('accuracy', 0.75)
    mx.metric.create(["acc", "f1"])                # a CompositeEvalMetric

EvalMetric, CompositeEvalMetric and CustomMetric are Python classes as in MXNet (subclass
EvalMetric for a metric of your own); the named metrics hold a library metric, so C, C++ and
every binding compute the same numbers.
"""
from collections import OrderedDict

import numpy

from . import ndarray
from ._ffi import NULL, ffi, lib
from .base import check, error, string_array

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "Loss", "CustomMetric", "create", "np", "check_label_shapes"]


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raises ValueError unless labels and preds have the same length (or shape, with `shape`);
    with `wrap`, single arrays become one-element lists."""
    got = (labels.shape, preds.shape) if shape else (len(labels), len(preds))
    if got[0] != got[1]:
        raise ValueError(f"Shape of labels {got[0]} does not match shape of predictions {got[1]}")
    if wrap:
        if isinstance(labels, ndarray.NDArray):
            labels = [labels]
        if isinstance(preds, ndarray.NDArray):
            preds = [preds]
    return labels, preds


class EvalMetric:
    """The base of every metric: running sums num_inst / sum_metric (local, cleared by
    reset_local) and global_num_inst / global_sum_metric (cleared by reset)."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self):
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """update() with dicts of named outputs, picking output_names / label_names."""
        preds = ([pred[n] for n in self.output_names] if self.output_names is not None
                 else list(pred.values()))
        labels = ([label[n] for n in self.label_names] if self.label_names is not None
                  else list(label.values()))
        self.update(labels, preds)

    def update(self, labels, preds):
        raise NotImplementedError()

    def reset(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        return _name_value_pairs(self.get())

    def get_global_name_value(self):
        if not self._has_global_stats:
            return self.get_name_value()
        return _name_value_pairs(self.get_global())


def _name_value_pairs(reading):
    name, value = reading
    names = name if isinstance(name, list) else [name]
    values = value if isinstance(value, list) else [value]
    return list(zip(names, values))


def _text(value):
    """A keyword argument as MXNet's text ("None", "True", "1e-12", "(1, 2)")."""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _new_handle(name, kwargs):
    keys = list(kwargs)
    key_array, key_buffers = string_array(keys)
    value_array, value_buffers = string_array([_text(kwargs[k]) for k in keys])
    out = ffi.new("hn_metric**")
    check(lib.hn_metric_create(name.encode(), key_array if keys else NULL,
                               value_array if keys else NULL, len(keys), out))
    del key_buffers, value_buffers
    return ffi.gc(out[0], lib.hn_metric_free)


def _as_arrays(values, what):
    if values is None:
        return []
    if isinstance(values, (ndarray.NDArray, numpy.ndarray)):
        values = [values]
    arrays = []
    for i, v in enumerate(values):
        if not isinstance(v, ndarray.NDArray):
            try:
                v = ndarray.array(numpy.asarray(v))
            except Exception as e:  # noqa: BLE001 - reported as what it is
                raise TypeError(f"{what}[{i}] is a {type(v).__name__}, not an NDArray or an "
                                f"array-like ({e})") from e
        arrays.append(v)
    return arrays


class _LibraryMetric(EvalMetric):
    """A metric the library computes: the statistics live in its hn_metric."""

    _registry_name = None

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self._h = _new_handle(self._registry_name, dict(kwargs, name=name))
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True, **kwargs)
        self.name = self._readings(False)[0][0]

    def _readings(self, use_global):
        count = ffi.new("size_t*")
        check(lib.hn_metric_get(self._h, 0, 0, NULL, NULL, count))
        names = ffi.new("const char*[]", count[0])
        values = ffi.new("double[]", count[0])
        check(lib.hn_metric_get(self._h, 1 if use_global else 0, count[0], names, values, count))
        return [(ffi.string(names[i]).decode(), values[i]) for i in range(count[0])]

    def _stats(self, use_global):
        num, total = ffi.new("double*"), ffi.new("double*")
        check(lib.hn_metric_stats(self._h, 1 if use_global else 0, num, total))
        return num[0], total[0]

    @property
    def num_inst(self):
        return self._stats(False)[0]

    @property
    def sum_metric(self):
        return self._stats(False)[1]

    @property
    def global_num_inst(self):
        return self._stats(True)[0]

    @property
    def global_sum_metric(self):
        return self._stats(True)[1]

    def update(self, labels, preds):
        label_arrays = _as_arrays(labels, "labels")
        pred_arrays = _as_arrays(preds, "preds")
        label_handles = [a._h for a in label_arrays]
        pred_handles = [a._h for a in pred_arrays]
        check(lib.hn_metric_update(
            self._h, ffi.new("hn_tensor*[]", label_handles) if label_handles else NULL,
            len(label_handles), ffi.new("hn_tensor*[]", pred_handles) if pred_handles else NULL,
            len(pred_handles)))

    def reset(self):
        check(lib.hn_metric_reset(self._h, 0))

    def reset_local(self):
        check(lib.hn_metric_reset(self._h, 1))

    def get(self):
        return self._readings(False)[0]

    def get_global(self):
        return self._readings(True)[0]


class Accuracy(_LibraryMetric):
    """The fraction of predictions equal to the labels; predictions with a class axis (`axis`)
    are argmax'ed first."""

    _registry_name = "accuracy"

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names, axis=axis)
        self.axis = axis


class TopKAccuracy(_LibraryMetric):
    """The fraction of labels among the top_k (> 1) highest predictions of their row."""

    _registry_name = "top_k_accuracy"

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names, top_k=top_k)
        self.top_k = top_k


class F1(_LibraryMetric):
    """F1 score of a binary classifier (class 1 positive); average "macro" (per update) or
    "micro" (over all updates)."""

    _registry_name = "f1"

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average=average)
        self.average = average


class MCC(_LibraryMetric):
    """Matthews correlation coefficient of a binary classifier; average as F1."""

    _registry_name = "mcc"

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average=average)
        self._average = average


class Perplexity(_LibraryMetric):
    """exp of the mean negative log-probability of the labels (classes along `axis`); labels
    equal to ignore_label are left out."""

    _registry_name = "perplexity"

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, output_names, label_names, ignore_label=ignore_label, axis=axis)
        self.ignore_label = ignore_label
        self.axis = axis


class MAE(_LibraryMetric):
    """Mean absolute error, averaged over updates."""

    _registry_name = "mae"

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


class MSE(_LibraryMetric):
    """Mean squared error, averaged over updates."""

    _registry_name = "mse"

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


class RMSE(_LibraryMetric):
    """Root mean squared error, averaged over updates."""

    _registry_name = "rmse"

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


class CrossEntropy(_LibraryMetric):
    """Mean of -log(p[label] + eps) over the rows of probability predictions."""

    _registry_name = "ce"

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names, eps=eps)
        self.eps = eps


class NegativeLogLikelihood(_LibraryMetric):
    """Mean of -log(p[label] + eps) over the rows of probability predictions."""

    _registry_name = "nll_loss"

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names, eps=eps)
        self.eps = eps


class PearsonCorrelation(_LibraryMetric):
    """Pearson correlation of predictions and labels: per update averaged ("macro") or over all
    values since the last reset ("micro")."""

    _registry_name = "pearsonr"

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average=average)
        self.average = average


class Loss(_LibraryMetric):
    """The mean of the predictions, which are losses (the labels are not read)."""

    _registry_name = "loss"

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    def update(self, _, preds):
        super().update(None, preds)


class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; get() lists every child's readings."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        if not 0 <= index < len(self.metrics):
            raise ValueError(f"Metric index {index} is out of range 0 and {len(self.metrics)}")
        return self.metrics[index]

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict(i for i in labels.items() if i[0] in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict(i for i in preds.items() if i[0] in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def _collect(self, read):
        names, values = [], []
        for metric in self.metrics:
            name, value = read(metric)
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def get_config(self):
        config = super().get_config()
        config.update({"metrics": [m.get_config() for m in self.metrics]})
        return config


class CustomMetric(EvalMetric):
    """A metric computed by feval(label, pred) on numpy arrays, returning a value or a
    (sum_metric, num_inst) pair."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            result = self._feval(label.asnumpy(), pred.asnumpy())
            total, count = result if isinstance(result, tuple) else (result, 1)
            self.sum_metric += total
            self.global_sum_metric += total
            self.num_inst += count
            self.global_num_inst += count

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A CustomMetric from a function of numpy (label, pred)."""

    def feval(label, pred):
        return numpy_feval(label, pred)

    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


def create(metric, *args, **kwargs):
    """A metric from a registry name or alias ("acc", "top_k_accuracy", "f1", "ce", ...), a
    function (a CustomMetric), a metric (returned as it is) or a list of these (a composite)."""
    if isinstance(metric, EvalMetric):
        return metric
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a name, a function, a metric or a list; got "
                        f"{type(metric).__name__}")
    # The library's registry resolves the name; the class of the same name takes the arguments.
    kind_out = ffi.new("const char**")
    check(lib.hn_metric_kind_of(metric.encode(), kind_out))
    kind = ffi.string(kind_out[0]).decode()
    cls = globals().get(kind)
    if cls is None:
        raise error("HN_ERR_INTERNAL", f"metric '{metric}' is a {kind}, which hybridnet.metric "
                    "does not wrap")
    return cls(*args, **kwargs)
