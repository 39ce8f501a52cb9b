"""mx.viz and Block.summary from the same Python code, run by real MXNet 1.9.1 and by hybridnet
(compare_with_mxnet.py ... viz_programs.py compares what each wrote, byte for byte):

    HN_GOLDEN_BACKEND=mxnet|hybridnet python viz_programs.py OUT_DIR

Block.summary of blocks written in Python (a HybridBlock with its own parameter, a plain Block
calling a child twice: shared parameters), of library layers and of a two-output block, and
print_summary / plot_network of a symbol using every op whose parameters MXNet counts or labels.
"""
import contextlib
import io
import os
import sys

if os.environ.get("HN_GOLDEN_BACKEND") == "mxnet":
    import mxnet as mx
else:
    import hybridnet as mx
nd, sym, nn = mx.nd, mx.sym, mx.gluon.nn
OUT = sys.argv[1]


def write(name, function, *args, **kwargs):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        function(*args, **kwargs)
    with open(os.path.join(OUT, name + ".txt"), "w") as f:
        f.write(buffer.getvalue())


def write_text(name, text):
    with open(os.path.join(OUT, name + ".txt"), "w") as f:
        f.write(text)


class Residual(nn.HybridBlock):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = nn.Dense(units, flatten=False, in_units=units)
            self.scale = self.params.get("scale", shape=(units,), init=mx.init.One())

    def hybrid_forward(self, F, x, scale):
        return F.broadcast_mul(F.relu(x + self.body(x)), scale)


class Twice(nn.Block):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = nn.Dense(8, in_units=8)

    def forward(self, x):
        return self.dense(self.dense(x))


class TwoHeads(nn.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.left = nn.Dense(3)
            self.right = nn.Dense(2, activation="tanh")

    def hybrid_forward(self, F, x):
        return self.left(x), self.right(x)


mx.random.seed(3)
net = nn.Sequential()
with net.name_scope():
    net.add(nn.Dense(8, activation="relu"), nn.BatchNorm(), Residual(8), Twice(), nn.Dropout(0.5),
            nn.Flatten(), TwoHeads())
net.initialize(mx.init.Xavier())
write("block_summary", net.summary, nd.ones((2, 4)))

conv = nn.HybridSequential()
with conv.name_scope():
    conv.add(nn.Conv2D(4, 3, padding=1, activation="relu"), nn.MaxPool2D(2), nn.Conv2D(6, 1),
             nn.GlobalAvgPool2D(), nn.Dense(3))
conv.initialize(mx.init.Xavier())
write("block_summary_conv", conv.summary, nd.ones((1, 2, 8, 8)))

data = sym.var("data")
tokens = sym.var("tokens")
c1 = sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv1")
bn = sym.BatchNorm(c1, name="bn1")
act = sym.Activation(bn, act_type="relu", name="relu1")
pool = sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
grouped = sym.Convolution(pool, kernel=(1, 1), num_filter=4, num_group=2, no_bias=True,
                          name="grouped")
leaky = sym.LeakyReLU(grouped, act_type="leaky", slope=0.1, name="leaky")
flat = sym.Flatten(leaky, name="flat")
fc = sym.FullyConnected(flat, num_hidden=6, name="fc1")
emb = sym.Embedding(tokens, input_dim=10, output_dim=6, name="embed")
emb_flat = sym.sum(emb, axis=1, name="pooled")
both = sym.Concat(fc, emb_flat, dim=1, name="concat")
fc2 = sym.FullyConnected(both, num_hidden=3, no_bias=True, name="fc2")
out = sym.softmax(fc2, name="prob")
shapes = {"data": (2, 3, 8, 8), "tokens": (2, 5)}
write("print_summary", mx.viz.print_summary, out, shape=shapes)
write("print_summary_no_shape", mx.viz.print_summary, out)
write("print_summary_layout", mx.viz.print_summary, out, shape=shapes, line_length=90,
      positions=[30, 50, 60, 90])
write_text("plot_network", mx.viz.plot_network(out, shape=shapes).source)
write_text("plot_network_options",
           mx.viz.plot_network(out, title="net", shape=shapes,
                               dtype={"data": "float32", "tokens": "float32"},
                               node_attrs={"shape": "oval", "fixedsize": "false"},
                               hide_weights=False).source)
