"""The same Gluon/NDArray/Symbol code, run by real MXNet 1.9.1 and by hybridnet
(compare_with_mxnet.py runs it with both and compares what each wrote):

    HN_GOLDEN_BACKEND=mxnet|hybridnet python programs.py OUT_DIR

Every program builds its model the way MXNet code does, gives every parameter the same values
(numpy, by sorted name, after a first forward completed the shapes) and writes its outputs
(.npy) and its graphs (exported -symbol.json and tojson() text, .json) to OUT_DIR.
"""
import json
import os
import sys

import numpy as np

import tiny_bert

if os.environ.get("HN_GOLDEN_BACKEND") == "mxnet":
    import mxnet as mx
else:
    import hybridnet as mx
nd, sym, nn = mx.nd, mx.sym, mx.gluon.nn

OUT = sys.argv[1]


def save(name, value):
    if isinstance(value, str):
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            f.write(value)
    else:
        np.save(os.path.join(OUT, name + ".npy"), value.asnumpy() if hasattr(value, "asnumpy")
                else np.asarray(value))


def fill(net, seed):
    """Deterministic values for every parameter (positive ones for variances)."""
    rng = np.random.RandomState(seed)
    for name, param in sorted(net.collect_params().items()):
        low, high = (0.5, 1.5) if name.endswith("var") else (-0.5, 0.5)
        param.set_data(nd.array(rng.uniform(low, high, size=param.shape).astype(np.float32)))


def save_outputs(name, outputs):
    for i, out in enumerate(outputs if isinstance(outputs, (tuple, list)) else [outputs]):
        save(f"{name}{i}", out)


def export_text(net, name):
    prefix = os.path.join(OUT, "export_" + name)
    net.export(prefix)
    with open(prefix + "-symbol.json") as f:
        save(name + "_exported", f.read())
    loaded = nd.load(prefix + "-0000.params")
    for key in sorted(loaded):
        save(f"{name}_params_{key.replace(':', '_')}", loaded[key])


def run(name, net, inputs, seed):
    """Eager, hybridized, the symbolic program and the export of `net` on `inputs`."""
    net.initialize()
    net(*inputs)
    fill(net, seed)
    save_outputs(name + "_eager", net(*inputs))
    net.hybridize()
    save_outputs(name + "_hybrid", net(*inputs))
    program = net(*[sym.var("data" if len(inputs) == 1 else f"data{i}") for i in range(len(inputs))])
    save(name + "_program", program.tojson() if not isinstance(program, tuple) else
         sym.Group(list(program)).tojson())
    export_text(net, name)


def seed_mlp():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(256, activation="relu"), nn.Dense(128, activation="relu"), nn.Dense(2))
    return net


def unscoped_mlp():
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="tanh"), nn.Dense(4, use_bias=False), nn.Activation("sigmoid"))
    return net


class HybridNet(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(HybridNet, self).__init__(**kwargs)
        with self.name_scope():
            self.fc1 = nn.Dense(10)
            self.fc2 = nn.Dense(3)
            self.gain = self.params.get("gain", shape=(1, 10))

    def hybrid_forward(self, F, x, gain):
        h = F.relu(self.fc1(x))
        h = F.broadcast_mul(h, gain) + 1
        y = self.fc2(h * 0.5)
        return F.concat(F.sigmoid(y), F.broadcast_sub(y, h.sum(axis=1, keepdims=True)), dim=1)


class TwoInputs(nn.HybridBlock):
    def __init__(self, **kwargs):
        super(TwoInputs, self).__init__(**kwargs)
        with self.name_scope():
            self.fc = nn.Dense(4, flatten=False)

    def hybrid_forward(self, F, a, b):
        return self.fc(a) * b, F.tanh(a - b)


PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_image_", "_random_")


def is_op_function(fn):
    """A function generated from the op registry (MXNet's are made with exec)."""
    code = getattr(fn, "__code__", None)
    return getattr(fn, "_hn_op", False) or (code is not None and code.co_filename == "<string>")


def op_locations(names):
    """Every place in nd and sym where each op name is an op function: "nd.contrib.box_nms"."""
    locations = {}
    for name in names:
        places = [("", name), ("_internal.", name)]
        places += [(p[1:-1] + ".", name[len(p):]) for p in PREFIXES if name.startswith(p)]
        locations[name] = sorted(
            f"{label}.{sub}{short}" for label, module in (("nd", nd), ("sym", sym))
            for sub, short in places
            if is_op_function(getattr(getattr(module, sub[:-1]) if sub else module, short, None)))
    return locations


def conv_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(2, 2), nn.Conv2D(4, (3, 3), strides=(2, 2), use_bias=False),
                nn.AvgPool2D(pool_size=2), nn.Flatten(), nn.Dense(5))
    return net


def main():
    mx.random.seed(1)
    rng = np.random.RandomState(0)
    x = nd.array(rng.standard_normal((2, 512)).astype(np.float32))
    run("seed_mlp", seed_mlp(), [x], 1)
    run("unscoped", unscoped_mlp(), [nd.array(rng.standard_normal((3, 7)).astype(np.float32))], 2)
    run("hybridnet", HybridNet(), [nd.array(rng.standard_normal((2, 6)).astype(np.float32))], 3)
    a = nd.array(rng.standard_normal((2, 3, 4)).astype(np.float32))
    b = nd.array(rng.standard_normal((2, 3, 4)).astype(np.float32))
    run("two_inputs", TwoInputs(), [a, b], 4)
    run("conv", conv_net(), [nd.array(rng.standard_normal((2, 3, 12, 12)).astype(np.float32))], 5)
    zoo = mx.gluon.model_zoo.vision.get_model("resnet18_v1", classes=10, thumbnail=True)
    run("resnet18_v1", zoo, [nd.array(rng.uniform(size=(1, 3, 32, 32)).astype(np.float32))], 6)

    run("tinybert", tiny_bert.model(mx)(), tiny_bert.inputs(mx), 7)

    # where nd and sym put the ops: hybridnet's registry, and the same names in MXNet
    if os.environ.get("HN_GOLDEN_BACKEND") == "mxnet":
        with open(os.environ["HN_GOLDEN_OP_NAMES"]) as f:
            names = f.read().split()
    else:
        names = sorted(n for info in mx._op.list_ops() for n in [info.name] + info.aliases)
        with open(os.path.join(OUT, "op_names.txt"), "w") as f:
            f.write("\n".join(names))
    with open(os.path.join(OUT, "op_locations.txt"), "w") as f:
        json.dump(op_locations(names), f, indent=0, sort_keys=True)
    save("random_symbols", sym.Group([sym.random.uniform(0, 2, shape=(2, 3)),
                                      sym.random.normal(sym.var("mu"), sym.var("sigma"), shape=4),
                                      sym.random.exponential(2, shape=(3,)),
                                      sym.contrib.arange_like(sym.var("x"), axis=0)]).tojson())

    # symbols built by hand
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=8, name="fc1")
    act = sym.Activation(fc, act_type="relu", name="relu1")
    out = sym.SoftmaxOutput(sym.FullyConnected(act, num_hidden=3, name="fc2"), name="softmax")
    save("symbol_json", out.tojson())
    save("symbol_arguments", "\n".join(out.list_arguments()))
    shapes = out.infer_shape(data=(4, 6))
    save("symbol_shapes", repr([[tuple(int(d) for d in s) for s in group] for group in shapes]))

    # imperative ops on fixed inputs
    m = nd.array(rng.standard_normal((3, 4)).astype(np.float32))
    w = nd.array(rng.standard_normal((5, 4)).astype(np.float32))
    save("op_relu", nd.relu(m))
    save("op_softmax", nd.softmax(m, axis=1))
    save("op_dot", nd.dot(m, w, transpose_b=True))
    save("op_broadcast", m + nd.array([1, 2, 3, 4]) * 2 - 1)
    save("op_sum", nd.sum(m, axis=1, keepdims=True))
    save("op_transpose", nd.transpose(m))
    save("op_concat", nd.concat(m, m * m, dim=1))
    save("op_fc", nd.FullyConnected(m, w, nd.ones((5,)), num_hidden=5))
    img = nd.array(rng.standard_normal((1, 2, 6, 6)).astype(np.float32))
    kernel = nd.array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32))
    save("op_conv", nd.Convolution(img, kernel, kernel=(3, 3), num_filter=3, no_bias=True))
    save("op_pool", nd.Pooling(img, kernel=(2, 2), stride=(2, 2), pool_type="avg"))
    save("op_reshape", m.reshape((2, -1)))


if __name__ == "__main__":
    main()
