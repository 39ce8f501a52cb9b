"""golden.quantize: `hybridnet quantize` against MXNet 1.9.1's quantize_net.

For a small CNN (Conv+BN+relu, pooling, Conv+relu, Flatten, Dense+relu, Dense) and an MLP, with
naive and entropy calibration, auto/int8/uint8 data, excluded layers and the smart mode, real
MXNet exports the fp32 network, hybridnet quantizes the export, and:
  1. MXNet's own quantize_net on the same network, data and options writes the same graph (the
     same ops in the same order) with the same calibrated ranges: the data's range (the input
     values themselves, so no fp32 rounding differs) string for string, in naive and entropy
     mode alike (numpy's histogram, MXNet's widening of it over batches and
     _contrib_calibrate_entropy's threshold), the layer outputs' within 1e-3 (naive) or 2e-2
     (entropy): MXNet's fp32 layers (BatchNorm folded) differ from hybridnet's in the last bits;
  2. MXNet loads hybridnet's files and runs them: the int8 output is within 5 % of fp32, and
     within 1 % of MXNet's run of its own quantized files;
  3. where this build implements MXNet's int8 ops, hybridnet runs its files and gives MXNet's
     int8 outputs exactly; otherwise the run says which ops are missing.
With --int8-weights (golden.quantize.int8_weights), on zoo models instead (ResNet-18 v1,
MobileNet v2 0.25: BatchNorm folded, grouped convolutions), `hybridnet quantize --int8-weights`
against the same quantization with float weights:
  4. hybridnet's outputs of the int8-weight files equal those of the float-weight files bit for
     bit, eager and hybridized (zoo_runner run);
  5. the int8-weight params file is at most 0.3 of the float-weight one;
  6. `hybridnet info` says the file is not loadable by MXNet, and MXNet refuses to run it.
Usage: quantize_golden.py HYBRIDNET_CLI [--int8-weights ZOO_RUNNER]
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
from real_mxnet import import_or_skip  # noqa: E402
import runtime_features  # noqa: E402

np, mx = import_or_skip()
from mxnet.contrib import quantization as mxq  # noqa: E402
from mxnet.gluon import nn  # noqa: E402
from scratch import discard  # noqa: E402
from zoo_common import randomize_batchnorm, rel_err, run  # noqa: E402

CLI = sys.argv[1]
BATCH = 8


def cnn():
    net = nn.HybridSequential(prefix="cnn_")
    with net.name_scope():
        net.add(nn.Conv2D(8, 3, padding=1, in_channels=3, use_bias=False),
                nn.BatchNorm(in_channels=8), nn.Activation("relu"), nn.MaxPool2D(2),
                nn.Conv2D(8, 3, in_channels=8, activation="relu"), nn.AvgPool2D(2),
                nn.Flatten(), nn.Dense(16, activation="relu", in_units=32),
                nn.Dense(5, in_units=16))
    return net, (3, 12, 12)


def mlp():
    net = nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(nn.Dense(32, activation="relu", in_units=20), nn.Dense(16, activation="relu",
                                                                       in_units=32),
                nn.Dense(4, in_units=16))
    return net, (20,)


# (model, calib_mode, quantized_dtype, exclude_layers, exclude_layers_match, quantize_mode)
CASES = [
    ("cnn", "naive", "auto", [], [], "full"),
    ("cnn", "entropy", "auto", [], [], "full"),
    ("cnn", "naive", "int8", ["cnn_conv1_fwd"], [], "full"),
    ("cnn", "naive", "auto", ["cnn_conv1_fwd"], [], "smart"),
    ("mlp", "entropy", "uint8", [], [], "full"),
    ("mlp", "naive", "auto", [], ["dense1"], "full"),
]


def make_net(kind, seed):
    mx.random.seed(seed)
    rng = np.random.default_rng(seed)
    net, shape = {"cnn": cnn, "mlp": mlp}[kind]()
    net.initialize(mx.init.Xavier())
    randomize_batchnorm(net, rng)
    # Four calibration batches, each reaching further, so the entropy histogram is widened.
    calib = np.concatenate([rng.uniform(-1 - k, 1 + k, (BATCH,) + shape) for k in range(4)])
    return net, calib.astype(np.float32), rng.uniform(-2, 2, (4,) + shape).astype(np.float32)


def op_nodes(symbol_json):
    """The op nodes; an fp32 fused node (MXNet fuses excluded layers too) as the ops it runs."""
    nodes = []
    for n in json.loads(symbol_json)["nodes"]:
        quantized = n.get("attrs", {}).get("quantized") in ("true", "True")
        if n["op"].startswith("_sg_") and not quantized:
            nodes += [m for m in n["subgraphs"][0]["nodes"] if m["op"] != "null"]
        elif n["op"] != "null":
            nodes.append(n)
    return nodes


def ranges(nodes):
    return [(n["op"], n.get("attrs", {}).get("min_calib_range"),
             n.get("attrs", {}).get("max_calib_range")) for n in nodes]


def mxnet_run(prefix, x):
    block = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    return block(mx.nd.array(x)).asnumpy()


def check_case(tmp, kind, calib_mode, dtype, exclude, exclude_match, mode):
    label = f"{kind} {calib_mode} {dtype} exclude={exclude + exclude_match} {mode}"
    net, calib, x = make_net(kind, 7)
    if dtype == "uint8":  # uint8 data is for non-negative inputs (it clips the rest)
        calib, x = np.abs(calib), np.abs(x)
    net.hybridize()
    fp32_out = net(mx.nd.array(x)).asnumpy()
    fp32 = os.path.join(tmp, f"{kind}-fp32")
    net.export(fp32)
    calib_file = os.path.join(tmp, f"{kind}-calib.npy")
    np.save(calib_file, calib)

    ours = os.path.join(tmp, f"{kind}-{calib_mode}-{dtype}-{mode}-ours")
    args = [CLI, "quantize", fp32, "0", ours, "--calib", calib_file, "--calib-mode", calib_mode,
            "--quantized-dtype", dtype, "--quantize-mode", mode, "--batch-size", str(BATCH)]
    if exclude:
        args += ["--exclude", ",".join(exclude)]
    if exclude_match:
        args += ["--exclude-match", ",".join(exclude_match)]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, f"{label}: hybridnet quantize failed: {r.stderr}"

    # MXNet's quantize_net on the same network, data and options.
    qnet = mxq.quantize_net(net, quantized_dtype=dtype, quantize_mode=mode,
                            exclude_layers=exclude or None,
                            exclude_layers_match=exclude_match or None,
                            calib_data=mx.io.NDArrayIter(calib, batch_size=BATCH,
                                                         data_name="data"),
                            calib_mode=calib_mode, num_calib_examples=len(calib), ctx=mx.cpu())
    qnet(mx.nd.array(x))
    theirs = os.path.join(tmp, f"{kind}-{calib_mode}-{dtype}-{mode}-mxnet")
    qnet.export(theirs)

    with open(ours + "-symbol.json") as f:
        our_nodes = op_nodes(f.read())
    with open(theirs + "-symbol.json") as f:
        their_nodes = op_nodes(f.read())
    assert [n["op"] for n in our_nodes] == [n["op"] for n in their_nodes], \
        f"{label}: ops differ:\n ours   {[n['op'] for n in our_nodes]}\n MXNet's " \
        f"{[n['op'] for n in their_nodes]}"
    assert any(n["op"].startswith("_sg_mkldnn") for n in our_nodes), f"{label}: nothing fused"
    # MXNet calibrates on its fused fp32 graph (BatchNorm folded into the convolution), whose
    # layer outputs differ from hybridnet's in the last bits: min/max move as little, but the KL
    # minimum of a flat divergence curve can move by a few histogram bins.
    tolerance = 1e-3 if calib_mode == "naive" else 2e-2
    for node, (op, lo, hi), (_, their_lo, their_hi) in zip(our_nodes, ranges(our_nodes),
                                                           ranges(their_nodes)):
        assert (lo is None) == (their_lo is None), f"{label}: {op} calibrated on one side only"
        if lo is None:
            continue
        if node["name"] == "data_quantize":
            assert (lo, hi) == (their_lo, their_hi), \
                f"{label}: data range [{lo}, {hi}], MXNet's [{their_lo}, {their_hi}]"
        else:
            for ours_v, theirs_v in ((float(lo), float(their_lo)), (float(hi), float(their_hi))):
                assert abs(ours_v - theirs_v) <= tolerance * max(1.0, abs(theirs_v)), \
                    f"{label}: {op} range [{lo}, {hi}], MXNet's [{their_lo}, {their_hi}]"
    excluded = [n for n in our_nodes if n["name"] in exclude]
    assert all(n["op"] == "Convolution" for n in excluded) and len(excluded) == len(exclude), \
        f"{label}: excluded layers are not fp32"

    int8_out = mxnet_run(ours, x)
    their_out = mxnet_run(theirs, x)
    err_fp32, err_mxnet = rel_err(int8_out, fp32_out), rel_err(int8_out, their_out)
    assert err_fp32 < 0.05, f"{label}: MXNet's run of our int8 files is {err_fp32:.3g} from fp32"
    assert err_mxnet < 0.01, f"{label}: {err_mxnet:.3g} from MXNet's own int8 files"

    # hybridnet's own run, where it has the int8 ops.
    info = json.loads(subprocess.run([CLI, "info", ours + "-symbol.json", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    assert info["precision"] == "int8", f"{label}: info says {info['precision']}"
    missing = [u["op"] for u in info["unsupported_ops"]]
    if missing:
        hybridnet_run = f"hybridnet's int8 run not compared, this build lacks {missing}"
    else:
        x_file, y_file = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        np.save(x_file, x)
        subprocess.run([CLI, "run", ours, "0", "--input", f"data={x_file}", "--output", y_file],
                       capture_output=True, text=True, check=True)
        ours_run = np.load(y_file)
        assert np.array_equal(ours_run, int8_out), \
            f"{label}: hybridnet's int8 output is {rel_err(ours_run, int8_out):.3g} from MXNet's"
        hybridnet_run = "hybridnet's int8 output equals MXNet's"
    print(f"ok {label}: {len(our_nodes)} ops as MXNet's; MXNet runs ours {err_fp32:.3g} from "
          f"fp32, {err_mxnet:.3g} from its own int8 files; {hybridnet_run}")


# (zoo model, image size) of the --int8-weights cases.
INT8_WEIGHT_MODELS = [("resnet18_v1", 64), ("mobilenetv2_0.25", 64)]
MAX_PARAMS_RATIO = 0.3


def params_file(prefix):
    return prefix + "-0000.params"


def check_int8_weights(tmp, runner, model, size):
    from mxnet.gluon.model_zoo import vision
    mx.random.seed(3)
    rng = np.random.default_rng(3)
    net = vision.get_model(model)
    net.initialize(mx.init.Xavier())
    x = rng.uniform(0, 1, (2, 3, size, size)).astype(np.float32)
    net(mx.nd.array(x))  # the deferred shapes
    randomize_batchnorm(net, rng)
    net.hybridize()
    net(mx.nd.array(x))
    fp32 = os.path.join(tmp, f"{model}-fp32")
    net.export(fp32)
    calib_file = os.path.join(tmp, f"{model}-calib.npy")
    x_file = os.path.join(tmp, f"{model}-x.npy")
    np.save(calib_file, rng.uniform(0, 1, (BATCH, 3, size, size)).astype(np.float32))
    np.save(x_file, x)
    floats, int8 = os.path.join(tmp, f"{model}-q"), os.path.join(tmp, f"{model}-q8w")
    options = ["--calib", calib_file, "--batch-size", str(BATCH)]
    run(CLI, "quantize", fp32, "0", floats, *options)
    said = run(CLI, "quantize", fp32, "0", int8, *options, "--int8-weights")
    assert "not loadable by MXNet" in said, f"{model}: quantize --int8-weights says: {said}"
    discard(fp32)

    run(runner, "run", floats, floats + "-hn", f"data={x_file}")
    run(runner, "run", int8, int8 + "-hn", f"data={x_file}")
    for form in ("eager", "hybrid"):
        a, b = np.load(f"{floats}-hn-{form}-0.npy"), np.load(f"{int8}-hn-{form}-0.npy")
        assert np.ptp(a) > 0, f"{model} {form}: the float-weight output is constant"
        assert a.dtype == b.dtype and np.array_equal(a, b), \
            f"{model} {form}: int8-weight outputs differ from float-weight ones (max |diff| " \
            f"{np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))})"
    eager, hybrid = np.load(f"{int8}-hn-eager-0.npy"), np.load(f"{int8}-hn-hybrid-0.npy")
    assert np.array_equal(eager, hybrid), f"{model}: int8-weight eager differs from hybridized"

    with open(int8 + "-symbol.json") as f:
        graph = json.load(f)
    convs = [n for n in graph["nodes"] if n["op"] == "_sg_mkldnn_conv"]
    assert convs and all(n["attrs"].get("int8_weights") == "true" for n in convs), \
        f"{model}: not every quantized convolution reads int8 weights"
    assert "hybridnet_int8_weights" in graph["attrs"], f"{model}: the graph is not marked"
    ratio = os.path.getsize(params_file(int8)) / os.path.getsize(params_file(floats))
    assert ratio <= MAX_PARAMS_RATIO, f"{model}: int8-weight params are {ratio:.3f} of the float"
    info = json.loads(run(CLI, "info", int8 + "-symbol.json", "--json"))
    assert info.get("int8_weights") is True, f"{model}: info --json says {info.get('int8_weights')}"
    assert "int8 weights: not loadable by MXNet" in run(CLI, "info", int8 + "-symbol.json"), \
        f"{model}: info does not say the file is not loadable by MXNet"

    refusal = None
    try:
        mxnet_run(int8, x)
    except mx.base.MXNetError as e:
        refusal = str(e).strip().splitlines()[0]
    assert refusal is not None, f"{model}: MXNet ran the int8-weight file"
    assert "Cannot find argument 'int8_weights'" in refusal, f"{model}: MXNet says {refusal}"
    discard(os.path.join(tmp, model + "-"))  # its exports, inputs and outputs
    print(f"ok {model} --int8-weights: {len(convs)} convolutions read int8 weights; outputs "
          f"equal the float-weight files' bit for bit (eager, hybridized); params "
          f"{ratio:.3f} of the float-weight file; MXNet refuses it: {refusal}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        if sys.argv[2:3] == ["--int8-weights"]:
            if not runtime_features.enabled(CLI, "INT8_EXACT"):
                # oneDNN halves s8 weights for int8 data on such CPUs (README, int8), so int8
                # weights are not the float weights' bits there.
                print("SKIP: this CPU has no VNNI or AMX (hybridnet features: INT8_EXACT off): "
                      "int8 weights are not the float-weight files' bits here")
                sys.exit(77)
            runner = sys.argv[3]
            for model, size in INT8_WEIGHT_MODELS:
                check_int8_weights(tmp, runner, model, size)
            print(f"{len(INT8_WEIGHT_MODELS)} int8-weight models passed")
            return
        for case in CASES:
            check_case(tmp, *case)
    print(f"{len(CASES)} cases passed")


if __name__ == "__main__":
    main()
