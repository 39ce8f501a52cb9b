"""gluon.Trainer and the parameters' gradients in MXNet's shape: the checks MXNet's
test_gluon_trainer makes (stale gradients, grad_req, lr_mult, save/load states, optimizer
instances), and bad input."""
import threading

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import autograd, gluon, nd


def make_net(hybridize=False):
    net = gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(gluon.nn.Dense(4, activation="tanh", in_units=3), gluon.nn.Dense(2, in_units=4))
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    return net


def step(net, trainer, x, batch_size=2):
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(batch_size)


def values(net):
    return {k: p.data().asnumpy().copy() for k, p in net.collect_params().items()}


X = nd.array(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize("hybridize", [False, True])
def test_sgd_step_is_lr_times_grad_over_batch(hybridize):
    net = make_net(hybridize)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    with autograd.record():
        loss = net(X).sum()
    loss.backward()
    before = values(net)
    grads = {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}
    trainer.step(2)
    for k, p in net.collect_params().items():
        np.testing.assert_allclose(p.data().asnumpy(), before[k] - 0.5 * grads[k] / 2, rtol=1e-6)
    assert trainer.learning_rate == pytest.approx(0.5)
    trainer.set_learning_rate(0.1)
    assert trainer.learning_rate == pytest.approx(0.1)


def test_step_before_backward_names_the_stale_parameter():
    net = make_net()
    trainer = gluon.Trainer(net.collect_params(), "adam")
    net(X)  # a forward outside record(): no gradient
    before = values(net)
    with pytest.raises(mx.base.HybridnetError, match="net_dense0_bias.*has not been updated"):
        trainer.step(2)
    trainer.step(2, ignore_stale_grad=True)  # skips them all
    for k, v in values(net).items():
        assert np.array_equal(v, before[k])


def test_step_takes_mxnet_arguments_and_frees_the_tree_after_an_error():
    net = make_net()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    with pytest.raises(TypeError, match="batch_size"):
        trainer.step()
    with pytest.raises(TypeError, match="batch_size must be a number, not str"):
        trainer.step("two")
    with pytest.raises(OverflowError, match="batch_size"):
        trainer.step(2 ** 40)
    with pytest.raises(mx.base.HybridnetError, match="has not been updated"):
        trainer.step(2)  # no backward yet
    with autograd.record():
        loss = net(X).sum()
    loss.backward()
    before = values(net)
    grads = {k: p.grad().asnumpy().copy() for k, p in net.collect_params().items()}
    done = []
    other = threading.Thread(target=lambda: done.append(trainer.step(batch_size=4.0,
                                                                     ignore_stale_grad=False)))
    other.start()
    other.join(timeout=60)  # tree_lock was released after the errors; 4.0 is taken as int(4.0)
    assert done == [None]
    for k, p in net.collect_params().items():
        np.testing.assert_allclose(p.data().asnumpy(), before[k] - 0.5 * grads[k] / 4, rtol=1e-6)


def test_frozen_parameters_keep_their_values():
    net = make_net()
    net.collect_params(".*dense0.*").setattr("grad_req", "null")
    assert [p.grad_req for p in net.collect_params().values()] == ["null", "null", "write",
                                                                  "write"]
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    before = values(net)
    step(net, trainer, X)
    after = values(net)
    for k in before:
        assert np.array_equal(after[k], before[k]) == ("dense0" in k), k
    with pytest.raises(mx.base.HybridnetError, match="grad_req is 'null'"):
        net.collect_params()["net_dense0_weight"].grad()


def test_lr_mult_zero_and_wd_mult():
    net = make_net()
    params = net.collect_params()
    params["net_dense1_weight"].lr_mult = 0.0
    params["net_dense0_bias"].wd_mult = 0.0
    assert params["net_dense1_weight"].lr_mult == 0.0
    trainer = gluon.Trainer(params, "sgd", {"learning_rate": 0.1, "wd": 0.5})
    before = values(net)
    step(net, trainer, X)
    assert np.array_equal(values(net)["net_dense1_weight"], before["net_dense1_weight"])


def test_grad_req_add_and_zero_grad():
    net = make_net()
    params = net.collect_params()
    params.setattr("grad_req", "add")
    for _ in range(2):
        with autograd.record():
            loss = net(X).sum()
        loss.backward()
    w = params["net_dense0_weight"]
    once = make_net()
    for k, p in once.collect_params().items():
        p.set_data(params[k].data())
    with autograd.record():
        loss = once(X).sum()
    loss.backward()
    np.testing.assert_allclose(w.grad().asnumpy(),
                               2 * once.collect_params()["net_dense0_weight"].grad().asnumpy(),
                               rtol=1e-6)
    params.zero_grad()
    assert not w.grad().asnumpy().any()


def test_optimizer_instance_and_list_of_params():
    net = make_net()
    params = list(net.collect_params().values())
    opt = mx.optimizer.Adam(learning_rate=0.01)
    trainer = gluon.Trainer(params, opt)
    assert trainer.optimizer is opt
    with pytest.raises(ValueError, match="optimizer_params must be None"):
        gluon.Trainer(params, opt, {"learning_rate": 0.1})
    step(net, trainer, X)


@pytest.mark.parametrize("name", ["sgd", "adam", "rmsprop", "adagrad"])
def test_save_and_load_states_resume_exactly(tmp_path, name):
    kwargs = {"learning_rate": 0.01, "momentum": 0.9} if name == "sgd" else {"learning_rate": 0.01}
    a, b = make_net(), make_net(hybridize=True)
    ta = gluon.Trainer(a.collect_params(), name, kwargs)
    tb = gluon.Trainer(b.collect_params(), name, kwargs)
    for i in range(3):
        step(a, ta, X + i)
    path = tmp_path / f"{name}.states"
    ta.save_states(path)
    for k, p in b.collect_params().items():
        p.set_data(a.collect_params()[k].data())
    tb.load_states(path)
    step(a, ta, X * 2)
    step(b, tb, X * 2)
    for k, v in values(a).items():
        np.testing.assert_array_equal(values(b)[k], v)


def test_bad_input_is_a_clear_error(tmp_path):
    net = make_net()
    with pytest.raises(mx.base.HybridnetError, match="unknown optimizer 'sgdd'"):
        gluon.Trainer(net.collect_params(), "sgdd")
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        gluon.Trainer(net, "sgd")
    trainer = gluon.Trainer(net.collect_params(), "adam")
    step(net, trainer, X)
    sgd = gluon.Trainer(net.collect_params(), "sgd")
    step(net, sgd, X)
    path = tmp_path / "sgd.states"
    sgd.save_states(path)
    with pytest.raises(mx.base.HybridnetError, match="SGD optimizer"):
        trainer.load_states(path)
    junk = tmp_path / "junk.states"
    junk.write_bytes(b"\x80\x04garbage")
    with pytest.raises(mx.base.HybridnetError, match="junk.states"):
        trainer.load_states(junk)
    loss = gluon.loss.L2Loss()
    with pytest.raises(mx.base.HybridnetError):
        loss(nd.ones((2, 3)), nd.ones((4, 5)))
    step(net, trainer, X)  # still works
