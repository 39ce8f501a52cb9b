"""ONNX files for the peer benchmark, with the very graph and weights hybridnet runs.

For each model written by make_peer_models (DIR/<name>-symbol.json and DIR/<name>.npy/), this
builds a PyTorch module that evaluates the MXNet graph node by node with those weights
(torch_graph.py) and exports it with torch.onnx.export (opset 13, fixed input shape): same
architecture, identical weights. (When hybridnet's own ONNX exporter exists, the benchmark can
read its files instead.)

Usage: onnx_from_mxnet.py DIR NAME=N,C,H,W [NAME=...]
       writes DIR/<name>-<shape>.onnx, e.g. resnet18_v1-1x3x224x224.onnx
Needs PyTorch (Debian python3-torch); run with the system python3.
"""
import json
import os
import sys

import numpy as np
import torch

from torch_graph import MXNetGraph


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
