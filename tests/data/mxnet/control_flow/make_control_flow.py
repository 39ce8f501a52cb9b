"""Writes the control-flow fixtures of this folder with real MXNet 1.9.1 (run by hand; the tests
only read the files): gluon blocks hybridized with F.contrib.foreach / while_loop / cond, exported
(symbol JSON with "subgraphs" + .params), with an input and MXNet's outputs as .npy.
Usage: python make_control_flow.py OUT_DIR   (MXNET_SUBGRAPH_BACKEND=NONE is set here)
"""
import os
import sys

os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet import gluon  # noqa: E402

out = sys.argv[1]
mx.random.seed(7)
np.random.seed(7)


class ForeachLSTM(gluon.HybridBlock):
    """An LSTM cell unrolled over axis 0 with foreach; returns the outputs and both states."""
    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.cell = gluon.rnn.LSTMCell(8, input_size=4)

    def hybrid_forward(self, F, x, h, c):
        outs, states = F.contrib.foreach(lambda d, s: self.cell(d, s), x, [h, c])
        return outs, states[0], states[1]


class WhileLoop(gluon.HybridBlock):
    """Doubles x and counts down c while c > 0, at most 4 steps."""
    def hybrid_forward(self, F, x, c):
        def cond(x, c):
            return F.sum(c) > 0

        def func(x, c):
            return x * 2, (x * 2, c - 1)

        outs, (x_final, c_final) = F.contrib.while_loop(cond, func, [x, c], max_iterations=4)
        return outs, x_final, c_final


class Cond(gluon.HybridBlock):
    """relu(a) + b when sum(a) > 0, else a * b."""
    def hybrid_forward(self, F, a, b):
        return F.contrib.cond(F.sum(a) > 0, lambda: F.relu(a) + b, lambda: a * b)


def export(name, net, inputs):
    net.initialize(mx.init.Normal(0.5))
    net.hybridize()
    outputs = net(*[mx.nd.array(v) for v in inputs])
    outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    net.export(os.path.join(out, name))
    for i, v in enumerate(inputs):
        np.save(os.path.join(out, f"{name}-in{i}.npy"), v)
    for i, o in enumerate(outputs):
        np.save(os.path.join(out, f"{name}-out{i}.npy"), o.asnumpy())


f32 = np.float32
export("foreach_lstm", ForeachLSTM(),
       [np.random.uniform(-1, 1, (5, 2, 4)).astype(f32),
        np.random.uniform(-1, 1, (2, 8)).astype(f32), np.random.uniform(-1, 1, (2, 8)).astype(f32)])
export("while_loop", WhileLoop(),
       [np.random.uniform(-1, 1, (2, 3)).astype(f32), np.array([2.5], dtype=f32)])
export("cond_then", Cond(),
       [np.random.uniform(0.1, 1, (2, 3)).astype(f32), np.random.uniform(-1, 1, (2, 3)).astype(f32)])
export("cond_else", Cond(),
       [np.random.uniform(-1, -0.1, (2, 3)).astype(f32), np.random.uniform(-1, 1, (2, 3)).astype(f32)])
