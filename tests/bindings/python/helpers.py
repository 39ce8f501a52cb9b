"""Shared helpers of the Python tests."""
import numpy as np

import hybridnet as mx


def mlp(units=(16, 4), activation="relu"):
    """HybridSequential of Dense layers, named in its name_scope as MXNet code does."""
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        for i, u in enumerate(units):
            net.add(mx.gluon.nn.Dense(u, activation=activation if i < len(units) - 1 else None))
    return net


def same_bits(a, b):
    a = a.asnumpy() if hasattr(a, "asnumpy") else np.asarray(a)
    b = b.asnumpy() if hasattr(b, "asnumpy") else np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()
