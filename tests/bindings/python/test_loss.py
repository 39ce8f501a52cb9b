"""hybridnet.gluon.loss in MXNet's shape: the classes and their arguments, weighting, eager and
hybridized under autograd, MXNet's None inputs, and bad input. Values against MXNet itself:
golden/loss_programs.py (CTest python.golden_losses)."""
import numpy as np
import pytest

import hybridnet as mx
from hybridnet import autograd, gluon, nd

MXNET_LOSSES = ["L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
                "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
                "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
                "CosineEmbeddingLoss", "SDMLLoss"]


def uniform(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.RandomState(seed).uniform(low, high, size=shape).astype(np.float32)


def test_every_mxnet_loss_is_there_with_its_repr():
    for name in MXNET_LOSSES:
        assert name in gluon.loss.__all__
        assert issubclass(getattr(gluon.loss, name), gluon.HybridBlock)
    assert gluon.loss.SigmoidBCELoss is gluon.loss.SigmoidBinaryCrossEntropyLoss
    assert repr(gluon.loss.L2Loss()) == "L2Loss(batch_axis=0, w=1.0)"
    assert repr(gluon.loss.L1Loss(0.5, 1)) == "L1Loss(batch_axis=1, w=0.5)"
    assert repr(gluon.loss.HingeLoss()) == "HingeLoss(batch_axis=0, w=None)"


def test_softmax_ce_value_and_gradient_eager_and_hybridized():
    pred, label = uniform(3, 4, low=-2, high=2), np.array([1, 0, 3], np.float32)
    logp = pred - np.log(np.exp(pred).sum(axis=1, keepdims=True))
    want = -logp[np.arange(3), label.astype(int)]
    want_grad = np.exp(logp)
    want_grad[np.arange(3), label.astype(int)] -= 1
    results = []
    for hybridize in (False, True):
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        if hybridize:
            loss_fn.hybridize()
        x = nd.array(pred)
        x.attach_grad()
        with autograd.record():
            loss = loss_fn(x, nd.array(label))
        loss.backward()
        np.testing.assert_allclose(loss.asnumpy(), want, rtol=1e-5)
        np.testing.assert_allclose(x.grad.asnumpy(), want_grad, rtol=1e-5, atol=1e-6)
        results.append((loss.asnumpy(), x.grad.asnumpy()))
    assert np.array_equal(results[0][0], results[1][0])
    assert np.array_equal(results[0][1], results[1][1])


def test_weight_sample_weight_and_batch_axis():
    pred, label = uniform(4, 5, seed=1), uniform(4, 5, seed=2)
    sample_weight = uniform(1, 5, seed=3, low=0, high=2)
    loss = gluon.loss.L1Loss(weight=0.5, batch_axis=1)(pred, label, sample_weight)
    want = (np.abs(label - pred) * sample_weight * 0.5).mean(axis=0)
    np.testing.assert_allclose(loss.asnumpy(), want, rtol=1e-6)
    loss = gluon.loss.L2Loss(weight=3.0)(nd.array(pred), nd.array(label.reshape(20)))
    np.testing.assert_allclose(loss.asnumpy(), (1.5 * (label - pred) ** 2).mean(axis=1),
                               rtol=1e-6)


def test_gradient_through_a_network_and_its_loss():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    x, label = nd.array(uniform(6, 5, seed=4)), nd.array([0, 1, 2, 0, 1, 2])
    x.attach_grad()
    loss_fn = gluon.loss.SoftmaxCELoss()
    grads = []
    for hybridize in (False, True):
        net.hybridize(hybridize)
        loss_fn.hybridize(hybridize)
        with autograd.record():
            loss = loss_fn(net(x), label)
        loss.backward()
        grads.append(x.grad.asnumpy().copy())
    assert np.abs(grads[0]).sum() > 0
    assert np.array_equal(grads[0], grads[1])


def test_none_between_inputs_as_mxnet():
    pred, label = nd.array(uniform(2, 3, seed=5, low=-3, high=3)), nd.array(uniform(2, 3, seed=6))
    pos_weight = nd.array([0.5, 2.0, 3.0])
    bce = gluon.loss.SigmoidBCELoss()
    assert np.array_equal(bce(pred, label, None, pos_weight).asnumpy(),
                          bce(pred, label, nd.ones((2, 3)), pos_weight).asnumpy())
    ctc = gluon.loss.CTCLoss()
    scores = nd.array(uniform(2, 5, 4, seed=7, low=-2, high=2))
    labels = nd.array([[0, 1, -1], [2, 2, 1]])
    full = ctc(scores, labels)
    assert np.array_equal(ctc(scores, labels, None, nd.array([2, 3])).asnumpy(), full.asnumpy())
    weighted = ctc(scores, labels, label_lengths=nd.array([2, 3]),
                   sample_weight=nd.array([0.5, 2.0]))
    np.testing.assert_allclose(weighted.asnumpy(), full.asnumpy() * [0.5, 2.0], rtol=1e-6)


def test_bad_input_is_a_clear_error():
    pred = nd.zeros((2, 3))
    with pytest.raises(mx.InvalidArgumentError,
                       match=r"L2Loss: label has shape \(2, 4\) \(8 elements\) but pred has shape "
                             r"\(2, 3\) \(6\)"):
        gluon.loss.L2Loss()(pred, nd.zeros((2, 4)))
    hybrid = gluon.loss.HuberLoss()
    hybrid.hybridize()
    with pytest.raises(mx.InvalidArgumentError, match="HuberLoss: label has shape"):
        hybrid(pred, nd.zeros((3, 3)))
    with pytest.raises(TypeError, match="margin"):
        gluon.loss.L2Loss(margin=1)
    with pytest.raises(TypeError, match="SoftmaxCrossEntropyLoss takes at most 3 inputs"):
        gluon.loss.SoftmaxCELoss()(pred, pred, pred, pred)
    with pytest.raises(mx.InvalidArgumentError, match="the input label is required"):
        gluon.loss.L1Loss()(pred, None, pred)
    with pytest.raises(mx.InvalidArgumentError, match="label_format must be signed or binary"):
        gluon.loss.LogisticLoss(label_format="bool")
    with pytest.raises(mx.InvalidArgumentError, match="layout must be NTC or TNC"):
        gluon.loss.CTCLoss(layout="NCT")
    with pytest.raises(mx.UnsupportedError, match="epsilon"):
        gluon.loss.PoissonNLLLoss()(pred, pred, None, 1e-3)
    with pytest.raises(mx.InvalidArgumentError, match="SDMLLoss: x1 and x2 must both be"):
        gluon.loss.SDMLLoss()(nd.zeros((2, 3)), nd.zeros((3, 3)))


def test_a_loss_written_in_python_as_in_mxnet():
    class HalfSquare(gluon.loss.Loss):
        def __init__(self, weight=1.0, batch_axis=0, **kwargs):
            super().__init__(weight, batch_axis, **kwargs)

        def hybrid_forward(self, F, pred, label, sample_weight=None):
            label = gluon.loss._reshape_like(F, label, pred)
            loss = gluon.loss._apply_weighting(F, F.square(label - pred), self._weight / 2,
                                               sample_weight)
            return F.mean(loss, axis=self._batch_axis, exclude=True)

    pred, label = nd.array(uniform(3, 4, seed=8)), nd.array(uniform(12, seed=9))
    want = gluon.loss.L2Loss()(pred, label).asnumpy()
    mine = HalfSquare()
    assert repr(mine) == "HalfSquare(batch_axis=0, w=1.0)"
    np.testing.assert_allclose(mine(pred, label).asnumpy(), want, rtol=1e-6)
    mine.hybridize()
    np.testing.assert_allclose(mine(pred, label).asnumpy(), want, rtol=1e-6)


def test_a_loss_inside_a_traced_python_block():
    class WithLoss(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.fc = gluon.nn.Dense(3)
                self.loss = gluon.loss.SoftmaxCELoss()

        def hybrid_forward(self, F, x, label):
            return self.loss(self.fc(x), label)

    net = WithLoss()
    net.initialize()
    x, label = nd.array(uniform(4, 5, seed=10)), nd.array([0, 1, 2, 1])
    x.attach_grad()
    results = []
    for hybridize in (False, True):
        net.hybridize(hybridize)
        with autograd.record():
            loss = net(x, label)
        loss.backward()
        results.append((loss.asnumpy(), x.grad.asnumpy().copy()))
    assert results[0][0].shape == (4,)
    assert np.abs(results[0][1]).sum() > 0
    assert np.array_equal(results[0][0], results[1][0])
    assert np.array_equal(results[0][1], results[1][1])
