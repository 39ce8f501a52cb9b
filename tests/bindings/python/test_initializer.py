"""mx.init: MXNet's classes, dumps() text, InitDesc calls, Mixed and Load, the seeded values the
C++ table draws; Parameter.cast / Block.cast and reset_ctx. (tests/bindings/python/golden/
init_programs.py compares every initializer with MXNet 1.9.1 itself.)"""
import json

import numpy as np
import pytest

import hybridnet as mx
from hybridnet import init, nd
from hybridnet.base import HybridnetError
from hybridnet.gluon import nn


def test_dumps_is_mxnets_text_with_defaults():
    assert init.Xavier(factor_type="in", magnitude=2.34).dumps() == (
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]')
    assert init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    assert init.Orthogonal().dumps() == '["orthogonal", {"scale": 1.414, "rand_type": "uniform"}]'
    assert init.LSTMBias().dumps() == '["lstmbias", {"forget_bias": 1.0}]'
    assert init.Uniform().dumps() == '["uniform", {"scale": 0.07}]'
    assert init.Zero().dumps() == '["zero", {}]'
    assert init.create("xavier", magnitude=2) == init.Xavier(magnitude=2)
    assert init.create(init.Normal(0.5).dumps()) == init.Normal(0.5)
    with pytest.raises(ValueError, match="unknown initializer"):
        init.create("nosuch")


def test_a_seed_repeats_mxnets_uniform_stream():
    # MXNet 1.9.1 prints these after mx.random.seed(3) for uniform(-1, 1) of 4 values.
    mx.random.seed(3)
    net = nn.Dense(2, in_units=2, weight_initializer=init.Uniform(1.0))
    net.initialize()
    np.testing.assert_array_equal(
        net.weight.data().asnumpy().ravel(),
        np.array([0.17060446739196777, -0.15668493509292603, -0.11721783876419067,
                  -0.3449457287788391], dtype=np.float32))


def test_every_initializer_initializes_a_layer():
    for initializer in (init.Uniform(), init.Normal(2), init.Xavier("gaussian", "out"),
                        init.MSRAPrelu("in", 0.1), init.Orthogonal(rand_type="normal"),
                        init.Constant(0.5), init.One(), init.Zero(), "xavier", "msraprelu"):
        net = nn.Dense(4, in_units=3)
        net.initialize(initializer)
        assert net.weight.data().shape == (4, 3)
    net = nn.Dense(3, in_units=2, weight_initializer=init.Orthogonal(2.0))
    net.initialize()
    w = net.weight.data().asnumpy().astype(np.float64)
    np.testing.assert_allclose(w.T @ w, 4 * np.eye(2), atol=1e-5)


def test_call_with_initdesc_follows_names_and_own_init():
    arr = nd.ones((4,))
    init.Normal(0.5)(init.InitDesc("fc_bias"), arr)
    assert (arr.asnumpy() == 0).all()
    init.Zero()(init.InitDesc("bn_gamma"), arr)
    assert (arr.asnumpy() == 1).all()
    init.Zero()(init.InitDesc("fc_bias", {"__init__": init.Constant(3).dumps()}), arr)
    assert (arr.asnumpy() == 3).all()
    init.LSTMBias(2.0)(init.InitDesc("lstm_bias", {"__init__": init.LSTMBias(2.0)}), arr)
    assert arr.asnumpy().tolist() == [0, 2, 0, 0]
    with pytest.raises(HybridnetError, match="unknown initialization pattern for 'odd'"):
        init.Uniform()(init.InitDesc("odd"), arr)


def test_mixed_and_load():
    mixed = init.Mixed(["dense", ".*"], [init.Constant(2), init.Constant(5)])
    net = nn.Dense(2, in_units=2, prefix="dense_")
    net.initialize(mixed)
    assert (net.weight.data().asnumpy() == 2).all()
    other = nn.Dense(2, in_units=2, prefix="fc_")
    other.initialize(mixed)
    assert (other.weight.data().asnumpy() == 5).all()
    with pytest.raises(ValueError, match="2 patterns but 1"):
        init.Mixed(["a", "b"], [init.One()])

    loader = init.Load({"arg:fc_weight": nd.array([[1, 2], [3, 4]])}, default_init=init.One())
    fresh = nn.Dense(2, in_units=2, prefix="fc_")
    fresh.initialize(loader)
    assert fresh.weight.data().asnumpy().tolist() == [[1, 2], [3, 4]]
    assert (fresh.bias.data().asnumpy() == 0).all()  # its own "zeros"
    bad = nn.Dense(3, in_units=2, prefix="fc_")
    with pytest.raises(HybridnetError, match="shape"):
        bad.initialize(init.Load({"fc_weight": nd.ones((2, 2))}))
    with pytest.raises(HybridnetError, match="no default initializer"):
        nn.Dense(2, in_units=2, prefix="g_").initialize(init.Load({"x": nd.ones((1,))}))
    json.loads(loader.dumps())


def test_cast_keeps_values_and_reset_ctx_is_cpu_only():
    net = nn.Dense(2, in_units=3, weight_initializer=init.Constant(0.5))
    net.initialize()
    net.hybridize()
    assert net(nd.ones((1, 3))).asnumpy().tolist() == [[1.5, 1.5]]
    net.weight.grad()
    net.cast("float64")
    assert net.weight.dtype == np.float64 and net.bias.dtype == np.float64
    assert net.weight.data().dtype == np.float64
    assert (net.weight.data().asnumpy() == 0.5).all()
    assert net.weight.grad().dtype == np.float64
    out = net(nd.ones((1, 3), dtype="float64"))  # FullyConnected has a float64 kernel
    assert out.dtype == np.float64 and out.asnumpy().tolist() == [[1.5, 1.5]]
    net.cast("float32")
    assert net.weight.data().dtype == np.float32 and net.weight.grad().dtype == np.float32
    assert net(nd.ones((1, 3))).asnumpy().tolist() == [[1.5, 1.5]]
    net.weight.cast("float16")
    assert net.weight.dtype == np.float16 and net.bias.dtype == np.float32
    with pytest.raises(HybridnetError):
        net.cast("no_such_dtype")
    net.weight.reset_ctx(mx.cpu())
    net.collect_params().reset_ctx([mx.cpu(0)])
    with pytest.raises(Exception, match="gpu"):
        net.weight.reset_ctx(mx.gpu(0))
