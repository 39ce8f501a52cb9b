"""hybridnet.metric: MXNet's mx.metric API over the library's metrics (values checked by hand
here; python.golden_metrics_data compares them with MXNet 1.9.1)."""
import math

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import nd


def test_accuracy_local_and_global():
    acc = mx.metric.Accuracy()
    pred = nd.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    acc.update([nd.array([1, 1, 1])], [pred])
    assert acc.get() == ("accuracy", pytest.approx(2 / 3))
    assert (acc.num_inst, acc.sum_metric) == (3, 2)
    acc.reset_local()
    assert math.isnan(acc.get()[1])
    assert acc.get_global() == ("accuracy", pytest.approx(2 / 3))
    acc.update(nd.array([0, 0, 0]), pred)  # single arrays are wrapped, as in MXNet
    assert acc.get_global_name_value() == [("accuracy", pytest.approx(3 / 6))]
    acc.reset()
    assert math.isnan(acc.get_global()[1])


def test_create_names_aliases_lists_and_functions():
    assert isinstance(mx.metric.create("acc"), mx.metric.Accuracy)
    assert isinstance(mx.metric.create("CE"), mx.metric.CrossEntropy)
    assert mx.metric.create("top_k_acc", 4).top_k == 4  # positional arguments, as MXNet
    top = mx.metric.create("top_k_accuracy", top_k=3)
    assert isinstance(top, mx.metric.TopKAccuracy) and top.name == "top_k_accuracy_3"
    composite = mx.metric.create(["acc", "mse"])
    assert isinstance(composite, mx.metric.CompositeEvalMetric)
    composite.update([nd.array([1, 0])], [nd.array([[0.2, 0.8], [0.3, 0.7]])])
    names, values = composite.get()
    assert names == ["accuracy", "mse"] and values[0] == 0.5
    acc = mx.metric.Accuracy()
    assert mx.metric.create(acc) is acc

    def half_sum(label, pred):
        return float((label + pred).sum()) / 2

    custom = mx.metric.create(half_sum)
    custom.update([nd.array([1, 2])], [nd.array([3, 4])])
    assert custom.get() == ("half_sum", 5.0)
    np_metric = mx.metric.np(lambda label, pred: (float(np.abs(label - pred).sum()), label.size))
    np_metric.update([nd.array([1, 2])], [nd.array([2, 4])])
    assert np_metric.get()[1] == 1.5


def test_f1_perplexity_pearson_loss():
    f1 = mx.metric.F1(average="micro")
    f1.update([nd.array([1, 1, 0, 1])], [nd.array([[0, 1], [0, 1], [0, 1], [1, 0]])])
    assert f1.get()[1] == pytest.approx(2 / 3)
    ppl = mx.metric.Perplexity(ignore_label=None)
    ppl.update([nd.array([0, 1])], [nd.array([[0.5, 0.5], [0.75, 0.25]])])
    assert ppl.get()[1] == pytest.approx(math.exp(-(math.log(0.5) + math.log(0.25)) / 2))
    pearson = mx.metric.PearsonCorrelation()
    pearson.update([nd.array([1, 2, 3])], [nd.array([2, 4, 6.5])])
    assert pearson.get()[1] == pytest.approx(np.corrcoef([2, 4, 6.5], [1, 2, 3])[0, 1])
    loss = mx.metric.Loss()
    loss.update(None, [nd.array([1.0, 3.0])])
    assert loss.get() == ("loss", 2.0)


def test_subclassing_eval_metric_keeps_python_sums():
    class Count(mx.metric.EvalMetric):
        def __init__(self):
            super().__init__("count")

        def update(self, labels, preds):
            self.sum_metric += len(preds)
            self.num_inst += 1

    m = Count()
    m.update([], [1, 2])
    assert m.get() == ("count", 2.0)


def test_bad_input_is_a_clear_error():
    with pytest.raises(mx.NotFoundError, match="unknown metric 'acuracy'; known metrics:"):
        mx.metric.create("acuracy")
    with pytest.raises(mx.InvalidArgumentError, match="Accuracy: 1 label arrays but 2 prediction"):
        mx.metric.Accuracy().update([nd.array([1])], [nd.array([[0, 1]]), nd.array([[0, 1]])])
    with pytest.raises(mx.ShapeError, match="3 labels"):
        mx.metric.Accuracy().update([nd.array([1, 0, 1])], [nd.array([[0, 1], [1, 0]])])
    with pytest.raises(mx.InvalidArgumentError, match="binary classification only"):
        mx.metric.F1().update([nd.array([0, 1, 2])], [nd.array(np.ones((3, 2)))])
    with pytest.raises(mx.InvalidArgumentError, match="'average' is 'weighted'"):
        mx.metric.F1(average="weighted")
    with pytest.raises(mx.InvalidArgumentError, match="use Accuracy"):
        mx.metric.TopKAccuracy(top_k=1)
