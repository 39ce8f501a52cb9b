"""hybridnet.optimizer and hybridnet.lr_scheduler: MXNet's API over the library (the numbers of
every optimizer against MXNet 1.9.1 are golden.optimizers')."""
import numpy as np
import pytest

import hybridnet as mx
from hybridnet import lr_scheduler, nd, optimizer


def test_create_by_name_and_class():
    sgd = optimizer.create("SGD", learning_rate=0.1, momentum=0.9)
    assert isinstance(sgd, optimizer.SGD)
    assert sgd.momentum == 0.9 and sgd.lr == 0.1 and sgd.wd == 0.0
    assert optimizer.Adam().learning_rate == pytest.approx(0.001)
    with pytest.raises(mx.HybridnetError, match="adam"):
        optimizer.create("sgdd")
    with pytest.raises(mx.HybridnetError, match="momentum"):
        optimizer.SGD(momentun=0.9)


def test_states_nest_as_mxnet():
    w = nd.ones((2, 3))
    assert optimizer.SGD().create_state(0, w) is None
    assert isinstance(optimizer.SGD(momentum=0.9).create_state(0, w), nd.NDArray)
    mean, var = optimizer.Adam().create_state(0, w)
    assert mean.shape == var.shape == (2, 3)
    w16 = nd.ones((2, 3), dtype="float16")
    mom, master = optimizer.SGD(momentum=0.9, multi_precision=True).create_state(0, w16)
    assert master.dtype == np.float32 and mom.dtype == np.float32
    master, (mean, var) = optimizer.Adam(multi_precision=True).create_state(0, w16)
    assert master.dtype == np.float32 and mean.dtype == np.float32


def test_sgd_momentum_matches_the_formula():
    rng = np.random.RandomState(0)
    w0, g = rng.normal(size=(4,)).astype(np.float32), rng.normal(size=(4,)).astype(np.float32)
    opt = optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5)
    w, grad = nd.array(w0), nd.array(g)
    state = opt.create_state(0, w)
    want_w, want_mom = w0.astype(np.float64), np.zeros(4)
    for _ in range(3):
        opt.update(0, w, grad, state)
        want_mom = 0.9 * want_mom - 0.1 * (0.01 * want_w + 0.5 * g)
        want_w = want_w + want_mom
    np.testing.assert_allclose(w.asnumpy(), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), want_mom, rtol=1e-5, atol=1e-6)
    assert opt.num_update == 3


def test_lr_mult_and_scheduler():
    sched = lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = optimizer.SGD(learning_rate=0.2, lr_scheduler=sched)
    assert sched.base_lr == pytest.approx(0.2)  # the optimizer's learning_rate wins, as MXNet's
    with pytest.raises(mx.HybridnetError, match="lr_scheduler"):
        opt.set_learning_rate(0.1)
    a, b = nd.zeros((2,)), nd.zeros((2,))
    g = nd.ones((2,))
    opt.set_lr_mult({1: 0.0})
    for _ in range(3):
        opt.update([0, 1], [a, b], [g, g], [None, None])
    np.testing.assert_allclose(a.asnumpy(), [-0.5, -0.5], rtol=1e-6)  # 0.2 + 0.2 + 0.1
    np.testing.assert_allclose(b.asnumpy(), [0, 0])
    assert opt.learning_rate == pytest.approx(0.1)


def test_schedulers():
    poly = lr_scheduler.PolyScheduler(12, base_lr=1.0, pwr=2, warmup_steps=2,
                                      warmup_begin_lr=0.5)
    assert poly(1) == pytest.approx(0.75)
    assert poly(7) == pytest.approx(0.25)
    cosine = lr_scheduler.CosineScheduler(10, base_lr=2.0, final_lr=1.0)
    assert cosine(5) == pytest.approx(1.5)
    multi = lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
    assert [multi(t) for t in (1, 3, 5)] == pytest.approx([1.0, 0.1, 0.01])
    with pytest.raises(mx.HybridnetError, match="warmup_mode"):
        lr_scheduler.FactorScheduler(5, warmup_mode="cubic")
    with pytest.raises(TypeError):
        lr_scheduler.LRScheduler()
