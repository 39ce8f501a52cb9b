"""An MXNet symbol JSON evaluated by PyTorch, node by node, with given weights: the benchmarks'
way to run the very graph hybridnet runs in PyTorch (the ONNX files of the peer benchmark, the
PyTorch side of the training-step benchmark). Covers the ops of the benchmark models.

    graph = MXNetGraph(json.load(open("m-symbol.json")), params, ["data"], trainable=True)

Inference (trainable=False): every weight is a buffer and BatchNorm uses its running statistics.
Training (trainable=True, with .train()): weights are nn.Parameters, BatchNorm's running
statistics stay buffers (MXNet's auxiliary states) and BatchNorm uses the batch statistics and
updates its running ones with MXNet's momentum, as torch.nn.BatchNorm2d does. An RNN node becomes
a torch.nn.LSTM/GRU/RNN owning the weights unpacked from MXNet's packed parameter vector, so
PyTorch runs its own fused recurrent kernels.
"""
import numpy as np
import torch
import torch.nn.functional as F


def parse_tuple(text):
    text = text.strip().strip("()[]")
    return [int(v) for v in text.split(",") if v.strip()]


def parse_bool(text):
    return text in ("True", "true", "1")


def _recurrent_layer(attrs, packed):
    """torch.nn.LSTM/GRU/RNN with the weights of MXNet's packed RNN parameter vector: every
    layer's i2h and h2h weights, then every layer's i2h and h2h biases (gates in MXNet's order,
    which is PyTorch's: i, f, g, o for LSTM; r, z, n for GRU)."""
    mode = attrs.get("mode", "lstm")
    hidden = int(attrs["state_size"])
    layers = int(attrs["num_layers"])
    if parse_bool(attrs.get("bidirectional", "False")):
        raise ValueError("bidirectional RNN is not supported by this converter")
    gates = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}[mode]
    g = gates * hidden
    # size = g*(I + H) + (L - 1) * g*(H + H) + L * 2g: solve for the input size I.
    inputs = (packed.size - 2 * g * layers - (layers - 1) * 2 * g * hidden) // g - hidden
    if mode == "lstm":
        module = torch.nn.LSTM(inputs, hidden, layers)
    elif mode == "gru":
        module = torch.nn.GRU(inputs, hidden, layers)
    else:
        module = torch.nn.RNN(inputs, hidden, layers, nonlinearity=mode[4:])
    offset = 0

    def take(count, shape):
        nonlocal offset
        value = torch.from_numpy(np.ascontiguousarray(packed[offset:offset + count]).reshape(shape))
        offset += count
        return value

    with torch.no_grad():
        for layer in range(layers):
            size = inputs if layer == 0 else hidden
            getattr(module, f"weight_ih_l{layer}").copy_(take(g * size, (g, size)))
            getattr(module, f"weight_hh_l{layer}").copy_(take(g * hidden, (g, hidden)))
        for layer in range(layers):
            getattr(module, f"bias_ih_l{layer}").copy_(take(g, (g,)))
            getattr(module, f"bias_hh_l{layer}").copy_(take(g, (g,)))
    if offset != packed.size:
        raise ValueError(f"RNN parameter vector of {packed.size} values, the layers take {offset}")
    return module


class MXNetGraph(torch.nn.Module):
    """Runs an MXNet symbol JSON (see the module comment)."""

    def __init__(self, symbol, params, input_names=("data",), trainable=False):
        super().__init__()
        self.nodes = symbol["nodes"]
        self.heads = symbol["heads"]
        self.input_names = list(input_names)
        self.recurrent = torch.nn.ModuleDict()
        aux = set()  # BatchNorm's running mean and variance (MXNet's auxiliary states)
        packed = set()  # RNN parameter vectors, owned by their torch.nn.LSTM/GRU/RNN
        for i, node in enumerate(self.nodes):
            if node["op"] == "BatchNorm":
                aux.update(e[0] for e in node["inputs"][3:5])
            if node["op"] == "RNN":
                source = node["inputs"][1][0]
                packed.add(source)
                self.recurrent[str(i)] = _recurrent_layer(node.get("attrs", {}),
                                                          params[self.nodes[source]["name"]])
        self.names = {}
        for i, node in enumerate(self.nodes):
            if node["op"] != "null" or node["name"] in self.input_names or i in packed:
                continue
            key = "p%d" % i
            value = torch.from_numpy(np.array(params[node["name"]], dtype=np.float32))
            if trainable and i not in aux:
                self.register_parameter(key, torch.nn.Parameter(value))
            else:
                self.register_buffer(key, value)
            self.names[i] = key

    def forward(self, *inputs):
        values = {}
        for i, node in enumerate(self.nodes):
            op, attrs = node["op"], node.get("attrs", {})
            if op == "null":
                if i in self.names:
                    values[(i, 0)] = getattr(self, self.names[i])
                elif node["name"] in self.input_names:
                    values[(i, 0)] = inputs[self.input_names.index(node["name"])]
                else:  # an RNN's parameter vector: its torch.nn.LSTM/GRU/RNN owns the weights
                    values[(i, 0)] = None
                continue
            x = [values[(e[0], e[1])] for e in node["inputs"]]
            if op == "RNN":
                states = tuple(x[2:4]) if attrs.get("mode", "lstm") == "lstm" else x[2]
                values[(i, 0)] = self.recurrent[str(i)](x[0], states)[0]
            else:
                values[(i, 0)] = self.run(op, attrs, x, self.training)
        outputs = [values[(h[0], h[1])] for h in self.heads]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    @staticmethod
    def run(op, a, x, training=False):
        if op == "Convolution":
            nd = len(parse_tuple(a["kernel"]))
            stride = parse_tuple(a.get("stride", "()")) or [1] * nd
            pad = parse_tuple(a.get("pad", "()")) or [0] * nd
            dilate = parse_tuple(a.get("dilate", "()")) or [1] * nd
            bias = None if parse_bool(a.get("no_bias", "False")) else x[2]
            return F.conv2d(x[0], x[1], bias, stride, pad, dilate, int(a.get("num_group", "1")))
        if op == "BatchNorm":
            gamma = torch.ones_like(x[1]) if parse_bool(a.get("fix_gamma", "True")) else x[1]
            batch_stats = training and not parse_bool(a.get("use_global_stats", "False"))
            return F.batch_norm(x[0], x[3], x[4], gamma, x[2], batch_stats,
                                1.0 - float(a.get("momentum", "0.9")), float(a.get("eps", "0.001")))
        if op == "Activation":
            act = a["act_type"]
            if act == "relu":
                return F.relu(x[0])
            if act == "sigmoid":
                return torch.sigmoid(x[0])
            if act == "tanh":
                return torch.tanh(x[0])
            raise ValueError("activation " + act)
        if op == "relu":
            return F.relu(x[0])
        if op == "clip":
            return torch.clamp(x[0], float(a["a_min"]), float(a["a_max"]))
        if op in ("elemwise_add", "_plus", "_Plus", "_add"):
            return x[0] + x[1]
        if op == "Pooling":
            pool = a.get("pool_type", "max")
            if parse_bool(a.get("global_pool", "False")):
                return (F.adaptive_avg_pool2d(x[0], 1) if pool == "avg"
                        else F.adaptive_max_pool2d(x[0], 1))
            kernel = parse_tuple(a["kernel"])
            stride = parse_tuple(a.get("stride", "()")) or [1] * len(kernel)
            pad = parse_tuple(a.get("pad", "()")) or [0] * len(kernel)
            ceil = a.get("pooling_convention", "valid") == "full"
            if pool == "max":
                return F.max_pool2d(x[0], kernel, stride, pad, ceil_mode=ceil)
            return F.avg_pool2d(x[0], kernel, stride, pad, ceil_mode=ceil,
                                count_include_pad=parse_bool(a.get("count_include_pad", "True")))
        if op == "Flatten":
            return torch.flatten(x[0], 1)
        if op == "FullyConnected":
            data = torch.flatten(x[0], 1) if parse_bool(a.get("flatten", "True")) else x[0]
            bias = None if parse_bool(a.get("no_bias", "False")) else x[2]
            return F.linear(data, x[1], bias)
        if op == "Embedding":
            return F.embedding(x[0].long(), x[1])
        if op == "Dropout":
            if training and float(a.get("p", "0.5")) > 0:
                raise ValueError("Dropout in training mode is not supported by this converter")
            return x[0]
        raise ValueError("op " + op + " is not supported by this converter")
