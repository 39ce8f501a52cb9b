"""ONNX files for the peer benchmark, with the very graph and weights hybridnet runs.

For each model written by make_peer_models (DIR/<name>-symbol.json and DIR/<name>.npy/), this
builds a PyTorch module that evaluates the MXNet graph node by node with those weights and
exports it with torch.onnx.export (opset 13, fixed input shape): same architecture, identical
weights. (When hybridnet's own ONNX exporter exists, the benchmark can read its files instead.)

Usage: onnx_from_mxnet.py DIR NAME=N,C,H,W [NAME=...]
       writes DIR/<name>-<shape>.onnx, e.g. resnet18_v1-1x3x224x224.onnx
Needs PyTorch (Debian python3-torch); run with the system python3.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F


def parse_tuple(text):
    text = text.strip().strip("()[]")
    return [int(v) for v in text.split(",") if v.strip()]


def parse_bool(text):
    return text in ("True", "true", "1")


class MXNetGraph(torch.nn.Module):
    """Runs an MXNet symbol JSON, the ops these benchmark models use."""

    def __init__(self, symbol, params):
        super().__init__()
        self.nodes = symbol["nodes"]
        self.heads = symbol["heads"]
        self.names = {}
        for i, node in enumerate(self.nodes):
            if node["op"] == "null" and node["name"] in params:
                key = "p%d" % i
                self.register_buffer(key, torch.from_numpy(params[node["name"]]))
                self.names[i] = key

    def forward(self, data):
        values = {}
        for i, node in enumerate(self.nodes):
            op, attrs = node["op"], node.get("attrs", {})
            if op == "null":
                values[(i, 0)] = getattr(self, self.names[i]) if i in self.names else data
                continue
            x = [values[(e[0], e[1])] for e in node["inputs"]]
            values[(i, 0)] = self.run(op, attrs, x)
        outputs = [values[(h[0], h[1])] for h in self.heads]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    @staticmethod
    def run(op, a, x):
        if op == "Convolution":
            nd = len(parse_tuple(a["kernel"]))
            stride = parse_tuple(a.get("stride", "()")) or [1] * nd
            pad = parse_tuple(a.get("pad", "()")) or [0] * nd
            dilate = parse_tuple(a.get("dilate", "()")) or [1] * nd
            bias = None if parse_bool(a.get("no_bias", "False")) else x[2]
            return F.conv2d(x[0], x[1], bias, stride, pad, dilate, int(a.get("num_group", "1")))
        if op == "BatchNorm":
            gamma = torch.ones_like(x[1]) if parse_bool(a.get("fix_gamma", "True")) else x[1]
            return F.batch_norm(x[0], x[3], x[4], gamma, x[2], False, 0.0,
                                float(a.get("eps", "0.001")))
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
        if op == "Dropout":
            return x[0]
        raise ValueError("op " + op + " is not supported by this converter")


def main(directory, specs):
    for spec in specs:
        name, shape_text = spec.split("=")
        shape = [int(v) for v in shape_text.split(",")]
        symbol = json.load(open(os.path.join(directory, name + "-symbol.json")))
        npy_dir = os.path.join(directory, name + ".npy")
        params = {f[:-4]: np.load(os.path.join(npy_dir, f)) for f in os.listdir(npy_dir)}
        model = MXNetGraph(symbol, params).eval()
        out = os.path.join(directory, "%s-%s.onnx" % (name, "x".join(map(str, shape))))
        with torch.no_grad():
            torch.onnx.export(model, torch.zeros(shape), out, input_names=["data"],
                              output_names=["output"], opset_version=13)
        print("wrote %s (PyTorch %s)" % (out, torch.__version__))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
