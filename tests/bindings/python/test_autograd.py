"""hybridnet.autograd and NDArray.attach_grad/.grad/.backward/.detach: MXNet's classic cases."""
import threading

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import autograd, nd


def test_exp_gradient_is_exp():
    x = nd.array([1.0, 2.0, -0.5])
    x.attach_grad()
    with autograd.record():
        y = nd.exp(x)
    y.backward()
    assert np.array_equal(x.grad.asnumpy(), y.asnumpy())


def test_product_and_sum():
    # z = x + x * y: dz/dx = 1 + y, dz/dy = x
    x = nd.array([1.0, 2.0, 3.0])
    y = nd.array([-1.0, 0.5, 2.0])
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        z = x + x * y
    z.backward()
    assert x.grad.asnumpy().tolist() == [0.0, 1.5, 3.0]
    assert y.grad.asnumpy().tolist() == [1.0, 2.0, 3.0]


def test_grad_req_add_doubles_with_retain_graph():
    x = nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    with autograd.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.asnumpy().tolist() == [4.0, 8.0]
    with pytest.raises(mx.InvalidArgumentError, match="retain_graph"):
        y.backward()


def test_grad_is_the_same_array_after_backward():
    x = nd.ones((2,))
    x.attach_grad()
    g = x.grad
    assert g.asnumpy().tolist() == [0.0, 0.0]
    with autograd.record():
        y = x * 3
    y.backward(out_grad=nd.array([1.0, 2.0]))
    assert g.asnumpy().tolist() == [3.0, 6.0]  # backward writes into the attached array


def test_pause_and_modes():
    assert not autograd.is_recording() and not autograd.is_training()
    with autograd.record():
        assert autograd.is_recording() and autograd.is_training()
        with autograd.pause():
            assert not autograd.is_recording() and not autograd.is_training()
        with autograd.predict_mode():
            assert autograd.is_recording() and not autograd.is_training()
    with autograd.train_mode():
        assert autograd.is_training() and not autograd.is_recording()
    assert not autograd.is_recording() and not autograd.is_training()
    with pytest.raises(KeyError, match="inside"):
        with autograd.record():
            raise KeyError("inside")
    assert not autograd.is_recording() and not autograd.is_training()  # restored on the way out
    assert autograd.set_recording(True) is False
    assert autograd.set_recording(False) is True
    seen = []
    with autograd.record():
        t = threading.Thread(target=lambda: seen.append(autograd.is_recording()))
        t.start()
        t.join()
    assert seen == [False]  # the flags belong to the thread


def test_pause_stops_recording_and_dropout_follows_the_mode():
    x = nd.ones((2000,))
    x.attach_grad()
    with autograd.record():
        y = x * 2
        with autograd.pause():
            z = nd.Dropout(x, p=0.5)  # not recorded, inference: the identity
        dropped = nd.Dropout(x, p=0.5)
    assert z.asnumpy().tolist() == x.asnumpy().tolist()
    values = set(dropped.asnumpy().tolist())
    assert values == {0.0, 2.0}
    with pytest.raises(mx.InvalidArgumentError, match="not on a recorded graph"):
        z.backward()
    y.backward()
    assert set(x.grad.asnumpy().tolist()) == {2.0}


def test_detach_and_grad():
    x = nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        y = x * 2
        z = y.detach() * x
    dx = autograd.grad(z, x, retain_graph=True)
    assert dx.asnumpy().tolist() == [2.0, 4.0, 6.0]
    assert x.grad.asnumpy().tolist() == [0.0, 0.0, 0.0]  # grad() leaves the buffer alone
    [dx] = autograd.grad([z], [x])
    assert dx.asnumpy().tolist() == [2.0, 4.0, 6.0]


def test_second_order_with_create_graph():
    # d2/dx2 x^3 = 6x through the recorded first gradient; retain_graph defaults to True.
    x = nd.array([1.0, 2.0, -0.5])
    x.attach_grad()
    with autograd.record():
        y = nd.elemwise_mul(nd.elemwise_mul(x, x), x)
        dx = autograd.grad(y, x, create_graph=True)
    assert np.allclose(dx.asnumpy(), 3 * x.asnumpy() ** 2)
    dx.backward()
    assert np.allclose(x.grad.asnumpy(), 6 * x.asnumpy())
    # A gradient op without a gradient of its own is named by the second backward.
    with autograd.record():
        z = x * x  # broadcast_mul: its gradient sums with _hn_reduce_sum_like
        dz = autograd.grad(z, x, create_graph=True)
    with pytest.raises(mx.UnsupportedError, match="_hn_reduce_sum_like"):
        dz.backward()


def test_split_heads_with_head_gradients():
    x = nd.ones((3, 5))
    dx = nd.zeros_like(x)
    autograd.mark_variables([x], [dx])
    with autograd.record():
        a, b, c = nd.split(x, axis=0, num_outputs=3, squeeze_axis=True)
    autograd.backward([a, b, c], [None, nd.array([1, 2, 3, 4, 5]), nd.array([5, 4, 3, 2, 1])])
    assert dx.asnumpy().tolist() == [[1] * 5, [1, 2, 3, 4, 5], [5, 4, 3, 2, 1]]


def test_errors_are_clear():
    x = nd.array([1.0, 2.0])
    assert x.grad is None
    with pytest.raises(mx.InvalidArgumentError, match="grad_req 'sum'"):
        x.attach_grad(grad_req="sum")
    with pytest.raises(mx.UnsupportedError, match="stype"):
        x.attach_grad(stype="row_sparse")
    with pytest.raises(mx.DtypeError):
        nd.array([1, 2], dtype="int32").attach_grad()
    x.attach_grad(grad_req="null")
    with autograd.record():
        y = x * 2
    with pytest.raises(mx.InvalidArgumentError, match="grad_req null"):
        y.backward()
    x.attach_grad()
    with autograd.record():
        y = nd.argsort(x)
    with pytest.raises(mx.UnsupportedError, match="backward reached op argsort"):
        y.backward()


def test_dense_layer_gradient_through_the_c_api():
    # Dense(2) as ops: y = x W^T + b; d/dx sum(y) = sum over rows of W.
    x = nd.array([[1.0, 2.0, 3.0]])
    w = nd.array([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])
    b = nd.array([0.5, -0.5])
    for v in (x, w, b):
        v.attach_grad()
    with autograd.record():
        loss = nd.sum(nd.FullyConnected(x, w, b, num_hidden=2))
    loss.backward()
    assert x.grad.asnumpy().tolist() == [[3.0, 1.0, -1.0]]
    assert w.grad.asnumpy().tolist() == [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    assert b.grad.asnumpy().tolist() == [1.0, 1.0]


def test_hybridized_block_is_recorded():
    from hybridnet.gluon import nn
    net = nn.HybridSequential()
    net.add(nn.Dense(3, activation="tanh"), nn.Dense(1))
    net.initialize()
    x = nd.array([[0.5, -1.0]])
    x.attach_grad()
    grads = []
    for hybridized in (False, True):
        net.hybridize(hybridized)
        with autograd.record():
            y = net(x)
        y.backward()
        grads.append(x.grad.asnumpy().copy())
    assert np.abs(grads[0]).sum() > 0
    assert np.array_equal(grads[0], grads[1])


def test_indexing_is_recorded():
    x = nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    x.attach_grad()
    with autograd.record():
        y = x[1] * 2 + x[0, 1:].sum() + x[:, ::2].sum() * 10
    assert y.shape == (3,)
    y.backward()
    assert x.grad.asnumpy().tolist() == [[30.0, 3.0, 33.0], [32.0, 2.0, 32.0]]
    with autograd.record():
        with pytest.raises(mx.UnsupportedError, match="integers and slices"):
            x[nd.array([0])]
    assert x[1].asnumpy().tolist() == [4.0, 5.0, 6.0]  # outside record(): a view, as before


def test_hybridized_block_trains_as_one_graph():
    # Hybridized, the block's Python forward runs once (the trace); every recorded step after it
    # runs the planned forward and backward graphs, with the unhybridized gradients bit for bit.
    from hybridnet.gluon import nn

    class Net(nn.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.fc1 = nn.Dense(8, activation="relu")
                self.fc2 = nn.Dense(3)

        def hybrid_forward(self, F, x):
            calls.append(x)
            h = self.fc1(x)
            return self.fc2(F.broadcast_add(F.tanh(h) * h,
                                            F.sum(F.sigmoid(x), axis=1, keepdims=True)))

    calls = []
    net = Net()
    net.initialize()
    rng = np.random.RandomState(0)
    x = nd.array(rng.uniform(-1, 1, (4, 5)).astype(np.float32))
    head = nd.array(rng.uniform(-1, 1, (4, 3)).astype(np.float32))
    x.attach_grad()
    results = []
    for hybridized in (False, True):
        net.hybridize(hybridized)
        del calls[:]
        for _ in range(3):
            with autograd.record():
                y = net(x)
            y.backward(head)
        results.append((len(calls), y.asnumpy(), x.grad.asnumpy().copy()))
    (eager_calls, eager_y, eager_grad), (hybrid_calls, hybrid_y, hybrid_grad) = results
    assert eager_calls == 3 and hybrid_calls == 1
    assert np.abs(eager_grad).sum() > 0
    assert np.array_equal(eager_y, hybrid_y)
    assert np.array_equal(eager_grad, hybrid_grad)


def test_backward_takes_its_arguments_by_name_and_refuses_other_objects():
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * x
    y.backward(None, retain_graph=True, train_mode=False)
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 4.0])
    y.backward(out_grad=nd.array([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, -4.0])
    with pytest.raises(TypeError, match="NDArray"):
        nd.NDArray.backward(object())
    with pytest.raises(TypeError, match="unexpected|invalid keyword"):
        y.backward(head=None)
