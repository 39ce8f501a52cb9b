"""Int8 convolutions against live MXNet 1.9.1: small Gluon nets (conv+bn+relu, a residual block
with its sum, depthwise, grouped, with and without bias) quantized by MXNet (quantize_net: fused
_sg_mkldnn_conv; quantize_model: plain _contrib_quantized_conv), int8 and uint8 data, calibrated
and not. Every int8 convolution node of each export is cut out as a one-node graph and run by
hybridnet (zoo_runner run, eager and hybridized) on the inputs MXNet gave that node; its outputs
must equal MXNet's, integers exactly. Prints, per graph form, the largest difference in
quantization steps.

Usage: int8_conv_golden.py ZOO_RUNNER WORK_DIR
"""
import json
import os
import subprocess
import sys

# The exports are quantized already: no oneDNN graph rewrite when MXNet binds them.
os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from real_mxnet import import_or_skip  # noqa: E402

np, mx = import_or_skip()
from mxnet.contrib import quantization  # noqa: E402
from mxnet.gluon import nn  # noqa: E402

INT8_CONV_OPS = ("_sg_mkldnn_conv", "_contrib_quantized_conv")


class ConvBnRelu(nn.HybridBlock):
    def __init__(self, channels, groups=1, use_bias=False, bn=True, stride=1):
        super().__init__()
        self.conv = nn.Conv2D(channels, 3, strides=stride, padding=1, groups=groups,
                              use_bias=use_bias)
        self.bn = nn.BatchNorm() if bn else None
        self.act = nn.Activation("relu")

    def hybrid_forward(self, F, x):
        y = self.conv(x)
        if self.bn is not None:
            y = self.bn(y)
        return self.act(y)


class Residual(nn.HybridBlock):
    """conv-bn-relu, conv-bn, + the block's input, relu (ResNet v1's basic block); the input comes
    from a 1x1 convolution, with a relu (a uint8 sum) or without (int8, as a downsampling
    shortcut's)."""

    def __init__(self, channels, relu_input=True):
        super().__init__()
        self.relu_input = relu_input
        self.body = ConvBnRelu(channels)
        self.conv = nn.Conv2D(channels, 3, padding=1, use_bias=False)
        self.bn = nn.BatchNorm()
        self.head = nn.Conv2D(channels, 1, use_bias=True)

    def hybrid_forward(self, F, x):
        x = self.head(x)
        if self.relu_input:
            x = F.Activation(x, act_type="relu")
        y = self.bn(self.conv(self.body(x)))
        return F.Activation(y + x, act_type="relu")


class Plain(nn.HybridBlock):
    """One convolution (what quantize_model turns into _contrib_quantized_conv; MXNet cannot run
    a second one behind its quantized relu, whose int8 output its oneDNN quantized_conv
    rejects). 32 channels in and out: with fewer, MXNet's oneDNN 2.4 picks its SSE4.1 or AVX2
    int8 kernels for _contrib_quantized_conv, whose pairwise int16 sums (pmaddubsw) saturate, so
    its integers are not the convolution's; hybridnet's are exact."""

    def __init__(self, use_bias):
        super().__init__()
        self.conv = nn.Conv2D(32, 3, strides=2, padding=1, use_bias=use_bias)

    def hybrid_forward(self, F, x):
        return self.conv(x)


def nets():
    """(name, block, input channels)."""
    return [
        ("conv_bn_relu", ConvBnRelu(16), 4),
        ("residual", Residual(8), 4),
        ("residual_int8_sum", Residual(8, relu_input=False), 4),
        ("depthwise", nn.HybridSequential(), 8),
        ("grouped_bias", ConvBnRelu(8, groups=2, use_bias=True, bn=False), 4),
        ("bias_no_bn_stride2", ConvBnRelu(8, use_bias=True, bn=False, stride=2), 4),
    ]


def make(name, block, channels):
    if name == "depthwise":
        block.add(ConvBnRelu(channels), ConvBnRelu(channels, groups=channels, use_bias=True))
    block.initialize(mx.init.Xavier(magnitude=2.0))
    block(mx.nd.zeros((1, channels, 10, 10)))  # the parameters' shapes (deferred initialization)
    # BatchNorm statistics away from the identity, as after training.
    for pname, p in block.collect_params().items():
        if pname.endswith(("running_mean", "beta")):
            p.set_data(mx.nd.random.uniform(-0.3, 0.3, p.shape))
        elif pname.endswith(("running_var", "gamma")):
            p.set_data(mx.nd.random.uniform(0.5, 1.5, p.shape))
    block.hybridize()
    return block


def calib_loader(x_all):
    dataset = mx.gluon.data.ArrayDataset(x_all, mx.nd.zeros((x_all.shape[0],)))
    return mx.gluon.data.DataLoader(dataset, batch_size=4)


def entry_arrays(sym, params, feed):
    """Every output of every node of `sym` run on `feed`: {(node name, output index): array}."""
    internals = sym.get_internals()
    names = [internals[i].name for i in range(len(internals.list_outputs()))]
    args = {k: v for k, v in params.items()}
    args.update(feed)
    outs = {}
    group = mx.sym.Group([internals[i] for i in range(len(names))])
    arg_names = group.list_arguments()
    aux_names = group.list_auxiliary_states()
    exe = group.bind(mx.cpu(), args={k: args[k] for k in arg_names},
                     aux_states={k: args[k] for k in aux_names}, grad_req="null")
    results = exe.forward(is_train=False)
    counts = {}
    for name, arr in zip(names, results):
        k = counts.get(name, 0)
        counts[name] = k + 1
        outs[(name, k)] = arr.asnumpy()
    return outs


def one_node_graph(graph, nid):
    """The node `nid` of JSON graph `graph` alone: its inputs become variables (parameters keep
    their names, computed inputs are named in0, in1, ...). Returns (json, [(variable, producer
    name, producer output, is_parameter)])."""
    node = graph["nodes"][nid]
    nodes, inputs = [], []
    for k, (pid, pidx, _) in enumerate(node["inputs"]):
        producer = graph["nodes"][pid]
        is_param = producer["op"] == "null" and producer["name"] != "data"
        var = producer["name"] if is_param else "in%d" % k
        nodes.append({"op": "null", "name": var, "inputs": []})
        inputs.append((var, producer["name"], pidx, is_param))
    fused = dict(node)
    fused["inputs"] = [[k, 0, 0] for k in range(len(nodes))]
    nodes.append(fused)
    n_out = 3 if node["op"] == "_contrib_quantized_conv" or \
        node.get("attrs", {}).get("quantized") == "true" else 1
    heads = [[len(nodes) - 1, i, 0] for i in range(n_out)]
    row_ptr = list(range(len(nodes) + 1))
    row_ptr[-1] = row_ptr[-2] + n_out
    return {"nodes": nodes, "arg_nodes": list(range(len(nodes) - 1)), "heads": heads,
            "node_row_ptr": row_ptr, "attrs": {"mxnet_version": ["int", 10901]}}, inputs


def check_export(runner, work, tag, sym, params, x, summary):
    graph = json.loads(sym.tojson())
    values = entry_arrays(sym, params, {"data": mx.nd.array(x)})
    checked = 0
    for nid, node in enumerate(graph["nodes"]):
        if node["op"] not in INT8_CONV_OPS:
            continue
        one, inputs = one_node_graph(graph, nid)
        prefix = os.path.join(work, "%s_%d" % (tag, nid))
        with open(prefix + "-symbol.json", "w") as f:
            json.dump(one, f)
        save = {}
        feeds = []
        for var, producer, pidx, is_param in inputs:
            arr = values[(producer, pidx)] if not is_param else params[producer].asnumpy()
            if is_param:
                save["arg:" + var] = mx.nd.array(arr, dtype=arr.dtype)
            else:
                path = "%s-%s.npy" % (prefix, var)
                np.save(path, arr)
                feeds.append("%s=%s" % (var, path))
        mx.nd.save(prefix + "-0000.params", save)
        subprocess.run([runner, "run", prefix, prefix + "-out"] + feeds, check=True,
                       stdout=subprocess.DEVNULL)
        n_out = len(one["heads"])
        want = [values[(node["name"], k)] for k in range(n_out)]
        for mode in ("eager", "hybrid"):
            got = [np.load("%s-out-%s-%d.npy" % (prefix, mode, k)) for k in range(n_out)]
            for k in range(n_out):
                if got[k].dtype != want[k].dtype or got[k].shape != want[k].shape:
                    raise AssertionError("%s node %s output %d (%s): hybridnet gives %s %s, "
                                         "MXNet %s %s" % (tag, node["name"], k, mode, got[k].dtype,
                                                          got[k].shape, want[k].dtype,
                                                          want[k].shape))
            diff = np.abs(got[0].astype(np.float64) - want[0].astype(np.float64))
            integer = np.issubdtype(want[0].dtype, np.integer)
            # Integers: in steps; a float output: in its own units.
            worst = float(diff.max()) if diff.size else 0.0
            ranges_equal = all(np.array_equal(got[k], want[k]) for k in range(1, n_out))
            form = "%s (%s out, %s)" % (node["op"], want[0].dtype,
                                        "calibrated" if "min_calib_range" in node.get("attrs", {})
                                        else "not calibrated")
            summary.setdefault(form, []).append((worst, float((diff > 0).mean()), integer))
            if not ranges_equal:
                raise AssertionError("%s node %s (%s): output ranges differ: hybridnet %s, MXNet %s"
                                     % (tag, node["name"], mode, [g.tolist() for g in got[1:]],
                                        [w.tolist() for w in want[1:]]))
            if integer and worst > 1:
                raise AssertionError("%s node %s (%s): %d steps from MXNet's output" %
                                     (tag, node["name"], mode, worst))
        checked += 1
    return checked


def main():
    runner, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    mx.random.seed(7)
    np.random.seed(7)
    summary = {}
    total = 0
    for name, block, channels in nets():
        net = make(name, block, channels)
        for data_kind in ("int8", "uint8"):
            lo = -1.0 if data_kind == "int8" else 0.0
            x_all = mx.nd.random.uniform(lo, 1.0, (8, channels, 10, 10))
            x = x_all[:1].asnumpy()
            net(mx.nd.array(x))
            for calib in ("naive", "none"):
                tag = "%s_%s_%s" % (name, data_kind, calib)
                qnet = quantization.quantize_net(
                    net, quantized_dtype="auto", calib_mode=calib,
                    calib_data=calib_loader(x_all) if calib != "none" else None,
                    data_shapes=[mx.io.DataDesc("data", x.shape)] if calib == "none" else None,
                    num_calib_examples=8, ctx=mx.cpu())
                qnet(mx.nd.array(x))
                prefix = os.path.join(work, tag + "_export")
                qnet.export(prefix)
                sym, args, auxs = mx.model.load_checkpoint(prefix, 0)
                params = dict(args)
                params.update(auxs)
                total += check_export(runner, work, tag, sym, params, x, summary)
    # The plain graph: quantize_model on the float symbol (uint8 data, as MXNet's oneDNN
    # quantized_conv requires).
    for use_bias in (False, True):
        plain = Plain(use_bias)
        plain.initialize(mx.init.Xavier(magnitude=2.0))
        plain.hybridize()
        x_all = mx.nd.random.uniform(0.0, 1.0, (8, 32, 10, 10))
        x = x_all[:1].asnumpy()
        plain(mx.nd.array(x))
        prefix = os.path.join(work, "plain_%d" % use_bias)
        plain.export(prefix)
        sym, args, auxs = mx.model.load_checkpoint(prefix, 0)
        calib_iter = mx.io.NDArrayIter(x_all, batch_size=4)
        qsym, qargs, qauxs = quantization.quantize_model(
            sym, args, auxs, ctx=mx.cpu(), calib_mode="naive", calib_data=calib_iter,
            num_calib_examples=8, quantized_dtype="uint8", label_names=None)
        params = dict(qargs)
        params.update(qauxs)
        total += check_export(runner, work, "plain_bias%d" % use_bias, qsym, params, x, summary)
    for form, rows in sorted(summary.items()):
        worst = max(r[0] for r in rows)
        share = max(r[1] for r in rows)
        exact = "exact" if worst == 0 else "within %g %s" % (worst,
                                                             "step(s)" if rows[0][2] else "")
        print("%-70s %3d runs: %s (largest share of elements differing %.4f)" %
              (form, len(rows), exact, share))
    print("%d int8 convolution nodes checked, eager and hybridized" % total)
    if total == 0:
        raise AssertionError("no int8 convolution node in the exports")


if __name__ == "__main__":
    main()
