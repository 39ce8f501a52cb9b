"""Quantized dense layers against real MXNet 1.9.1: an MLP quantized by MXNet itself, in both of the
graph forms MXNet writes, exported, then run by hybridnet (zoo_runner run, eagerly and
hybridized) on the same input:

  - quantize_net_v2 (the oneDNN subgraph backend): _contrib_quantize_v2 and
    _sg_mkldnn_fully_connected layers, requantized to the calibrated ranges (relu layers to
    uint8) and a float last layer; calibration naive and entropy, weights tensor-wise and
    channel-wise;
  - quantize_model on the plain symbol: _contrib_quantize_v2, _contrib_quantized_fully_connected,
    _contrib_requantize and _contrib_dequantize.

Each layer's int8/uint8/int32 output is compared too (the graph cut after that layer, run by
both). Both run the sums in oneDNN's int8 inner product with the same scales, so every output has
been bit-identical to MXNet's; the check allows one level (a sum whose float scaling lands on a
rounding tie computed in another order), for integers one integer and for the float output one
unit of the last layer's product (per output channel for channel-wise weights). Prints, per model
and layer, exact or how many values differ and by how many levels.

Usage: quantized_fc_golden.py ZOO_RUNNER WORKDIR
Exits 77 (skip) when MXNet is not importable."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from real_mxnet import import_or_skip  # noqa: E402

np, mx = import_or_skip()
from zoo_common import run  # noqa: E402

BATCH, FEATURES = 16, 20


def mlp():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(32, activation="relu"), mx.gluon.nn.Dense(16),
            mx.gluon.nn.Dense(10, activation="relu"), mx.gluon.nn.Dense(4))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    return net


def calibration(x):
    return mx.gluon.data.DataLoader(
        mx.gluon.data.ArrayDataset(x, mx.nd.zeros((x.shape[0],))), batch_size=x.shape[0])


def subgraph_model(net, x, calib_mode, granularity, prefix):
    """quantize_net_v2's graph, exported; its symbol and params."""
    q = mx.contrib.quantization.quantize_net_v2(
        net, quantized_dtype="auto", quantize_granularity=granularity, calib_mode=calib_mode,
        calib_data=calibration(x), num_calib_examples=x.shape[0], ctx=mx.cpu())
    q.hybridize(static_alloc=True, static_shape=True)
    q(x)
    q.export(prefix)
    return prefix


def plain_model(net, x, calib_mode, prefix):
    """quantize_model's graph of the plain symbol (no subgraph backend), saved as an export."""
    net.export(prefix + "-fp32")
    sym, args, auxs = mx.model.load_checkpoint(prefix + "-fp32", 0)
    it = mx.io.NDArrayIter(x.asnumpy(), batch_size=x.shape[0], data_name="data")
    qsym, qargs, qauxs = mx.contrib.quantization.quantize_model(
        sym, args, auxs, ctx=mx.cpu(), calib_mode=calib_mode, calib_data=it,
        num_calib_examples=x.shape[0], quantized_dtype="auto", quantize_mode="full")
    qsym.save(prefix + "-symbol.json")
    saved = {"arg:" + k: v for k, v in qargs.items()}
    saved.update({"aux:" + k: v for k, v in qauxs.items()})
    mx.nd.save(prefix + "-0000.params", saved)
    return prefix


def cut_after(prefix, node_name, out_prefix):
    """The export's graph with the given node's output 0 as its one output."""
    sym = mx.sym.load(prefix + "-symbol.json")
    internals = sym.get_internals()
    names = internals.list_outputs()
    want = node_name + "_output"
    if want not in names:
        want = node_name + "_output0"
    cut = internals[names.index(want)]
    cut.save(out_prefix + "-symbol.json")
    params = mx.nd.load(prefix + "-0000.params")
    used = set(cut.list_arguments()) | set(cut.list_auxiliary_states())
    mx.nd.save(out_prefix + "-0000.params",
               {k: v for k, v in params.items() if k.split(":", 1)[1] in used})
    return out_prefix


def mxnet_outputs(prefix, x):
    params = prefix + "-0000.params"
    block = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], params, ctx=mx.cpu())
    out = block(x)
    return [o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])]


def hybridnet_outputs(runner, prefix, x_file, workdir):
    out = os.path.join(workdir, os.path.basename(prefix) + "-hn")
    run(runner, "run", prefix, out, "data=" + x_file)
    eager = np.load(out + "-eager-0.npy")
    hybrid = np.load(out + "-hybrid-0.npy")
    return eager, hybrid


def quantized_layers(prefix):
    """(name, op) of every quantized layer whose output is an integer tensor."""
    graph = json.load(open(prefix + "-symbol.json"))
    layers = []
    for n in graph["nodes"]:
        attrs = n.get("attrs", {})
        if n["op"] == "_sg_mkldnn_fully_connected" and attrs.get("enable_float_output") != "True":
            layers.append((n["name"], n["op"]))
        elif n["op"] in ("_contrib_quantized_fully_connected", "_contrib_requantize"):
            layers.append((n["name"], n["op"]))
    return layers


def compare(label, ours, ref, integer, step=None):
    """Prints the comparison and returns whether it holds."""
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        print(f"FAIL {label}: hybridnet {ours.dtype}{ours.shape}, MXNet {ref.dtype}{ref.shape}")
        return False
    diff = np.abs(ours.astype(np.float64) - ref.astype(np.float64))
    worst = float(diff.max()) if diff.size else 0.0
    if worst == 0.0:
        print(f"ok   {label}: exact ({ref.dtype}, {ref.size} values)")
        return True
    levels = worst if integer else float(np.max(diff / step))
    differing = int(np.count_nonzero(diff))
    ok = levels <= 1.0 + 1e-6
    print(f"{'ok  ' if ok else 'FAIL'} {label}: {differing} of {ref.size} values differ, "
          f"at most {levels:.3g} level(s) ({ref.dtype})")
    return ok


def last_layer_step(prefix):
    """One level of the float output of the last layer: one step of its data times one of its
    weights (the product's least significant unit), per output channel for channel-wise
    weights."""
    graph = json.load(open(prefix + "-symbol.json"))
    params = mx.nd.load(prefix + "-0000.params")
    nodes = graph["nodes"]
    last = [n for n in nodes if n["op"] == "_sg_mkldnn_fully_connected"][-1]
    data = nodes[last["inputs"][0][0]]
    data_attrs = data.get("attrs", {})
    lo, hi = float(data_attrs["min_calib_range"]), float(data_attrs["max_calib_range"])
    levels = 255.5 if lo >= 0 else 127.5
    step = max(abs(lo), abs(hi)) / levels
    weight = nodes[last["inputs"][1][0]]["name"]
    if "arg:" + weight + "_min" in params:
        wmin = params["arg:" + weight + "_min"].asscalar()
        wmax = params["arg:" + weight + "_max"].asscalar()
        return step * max(abs(wmin), abs(wmax)) / 127.5
    # Channel-wise: one step per output channel, from that channel's float weights.
    w = params["arg:" + weight].asnumpy()
    return step * np.max(np.abs(w), axis=1) / 127.5


def main():
    runner, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    mx.random.seed(7)
    np.random.seed(7)
    net = mlp()
    x = mx.nd.array(np.random.uniform(-1, 1, (BATCH, FEATURES)).astype(np.float32))
    net(x)
    x_file = os.path.join(workdir, "mlp-data.npy")
    np.save(x_file, x.asnumpy())
    ok = True
    models = []
    for calib in ("naive", "entropy"):
        for granularity in ("tensor-wise", "channel-wise"):
            prefix = os.path.join(workdir, f"mlp-sg-{calib}-{granularity}")
            models.append((subgraph_model(net, x, calib, granularity, prefix), True))
        models.append((plain_model(net, x, calib, os.path.join(workdir, f"mlp-plain-{calib}")),
                       False))
    for prefix, subgraph in models:
        name = os.path.basename(prefix)
        ref = mxnet_outputs(prefix, x)[0]
        eager, hybrid = hybridnet_outputs(runner, prefix, x_file, workdir)
        step = last_layer_step(prefix) if subgraph else None
        for label, ours in (("eager", eager), ("hybridized", hybrid)):
            if subgraph:
                ok &= compare(f"{name} output {label}", ours, ref, False, step)
            else:
                ok &= compare(f"{name} output {label}", ours, ref, False,
                              float(np.max(np.abs(ref))) / 127.0)
        for layer, op in quantized_layers(prefix):
            cut = cut_after(prefix, layer, os.path.join(workdir, f"{name}-{layer}"))
            ref_layer = mxnet_outputs(cut, x)[0]
            ours, _ = hybridnet_outputs(runner, cut, x_file, workdir)
            ok &= compare(f"{name} {op} {layer}", ours, ref_layer, True)
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
