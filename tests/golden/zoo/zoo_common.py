"""What the model golden tests (zoo_golden.py, models_golden.py, gradients_golden.py) share: the
error measure, the BatchNorm statistics they give MXNet's models, MXNet's outputs as a flat list
and running hybridnet's side."""
import subprocess

import mxnet as mx
import numpy as np


def rel_err(ours, ref):
    """max |ours - ref| / max |ref| (the project's relative difference); inf on a shape mismatch."""
    ours = np.asarray(ours, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape:
        return float("inf")
    if ref.size == 0:
        return 0.0
    scale = max(float(np.max(np.abs(ref))), 1e-30)
    return float(np.max(np.abs(ours - ref))) / scale


def flatten(outputs):
    """MXNet's outputs as the export's flat list (nested tuples of NDArrays, in order)."""
    if isinstance(outputs, (mx.nd.NDArray, mx.sym.Symbol)):
        return [outputs]
    flat = []
    for o in outputs:
        flat.extend(flatten(o))
    return flat


def run(*args):
    """Runs a command; its stdout, or RuntimeError with its stderr."""
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        command = " ".join(map(str, args))
        raise RuntimeError(f"{command} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout.strip()


def randomize_batchnorm(net, rng):
    """Gives every BatchNorm non-trivial statistics so inference really exercises them (GluonCV
    names some of them moving_mean / moving_var)."""
    for name, p in net.collect_params().items():
        shape = p.shape
        if name.endswith(("running_mean", "moving_mean", "beta")):
            p.set_data(mx.nd.array(rng.normal(0, 0.1, shape)))
        elif name.endswith(("running_var", "moving_var")):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, shape)))
        elif name.endswith("gamma"):
            p.set_data(mx.nd.array(rng.uniform(0.5, 1.5, shape)))


def layer_net(name):
    """The small networks of zoo_models.LAYER_NETS, which use every conv_layers.h layer
    (zoo_runner builds the same in C++)."""
    contrib, gnn = mx.gluon.contrib.nn, mx.gluon.nn
    net = gnn.HybridSequential()
    with net.name_scope():
        if name == "layers2d":
            cat = contrib.HybridConcurrent(axis=1)
            with cat.name_scope():
                cat.add(gnn.Conv2D(4, 1), contrib.Identity(), gnn.MaxPool2D(3, 1, 1))
            net.add(gnn.Conv2D(8, 3, padding=1, activation="relu"), gnn.BatchNorm(),
                    gnn.LeakyReLU(0.1),
                    gnn.Conv2D(8, 3, strides=2, groups=2, use_bias=False, in_channels=8),
                    gnn.PReLU(), gnn.MaxPool2D(2, ceil_mode=True),
                    gnn.Conv2DTranspose(4, 3, strides=2, padding=1, output_padding=1), gnn.ELU(),
                    gnn.AvgPool2D(3, 1, 1, count_include_pad=False), gnn.SELU(), gnn.GELU(), cat,
                    gnn.GlobalAvgPool2D(), gnn.Flatten(), gnn.Dense(5))
        elif name == "layers1d":
            net.add(gnn.Conv1D(4, 3), gnn.MaxPool1D(2), gnn.AvgPool1D(2),
                    gnn.Conv1DTranspose(3, 2, strides=2), gnn.GlobalMaxPool1D())
        else:
            net.add(gnn.Conv3D(4, 3, padding=1), gnn.Conv3DTranspose(2, 2, strides=2),
                    gnn.MaxPool3D(2), gnn.BatchNorm(epsilon=0.001, scale=False),
                    gnn.GlobalAvgPool3D())
    return net
