"""The Python side of the cross-language export check (run with the hybridnet wheel installed):
    python xlang_export.py PREFIX SEED IN.npy
The same steps as xlang_cpp export, XlangExport.java and xlang_export.R: the seed MLP (built
in its name_scope, as MXNet code does), seeded initialize, hybridize, one forward on IN, export.
"""
import sys

import numpy as np

import hybridnet as mx
from hybridnet.gluon import nn


def main(prefix, seed, input_path):
    mx.set_num_threads(1)
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    mx.random.seed(seed)
    net.initialize(mx.init.Uniform())
    net.hybridize()
    net(mx.nd.array(np.load(input_path)))
    net.export(prefix)
    print(f"Python wrote {prefix}-symbol.json and {prefix}-0000.params")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
