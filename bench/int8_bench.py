"""int8 inference of hybridnet against ONNX Runtime, batch 1, 3x224x224, at 1 and 2 threads
within one run (issue 37's benchmark):

  resnet50_v1      ResNet-50 v1 (gluon model zoo)
  mobilenetv2_1.0  MobileNet v2 1.0 (gluon model zoo)

    int8_bench.py BUILD_DIR [--rounds 9] [--round-seconds 1] [--models a,b] [--threads 1,2]

The models (written once into BUILD_DIR/bench_models/int8, rewritten when this file changes):
MXNet 1.9.1 builds each model (seeded Xavier weights, random BatchNorm statistics), exports it in
fp32 and quantizes it with mx.contrib.quantization.quantize_net (naive calibration on 16 seeded
images in [0, 1), dtype auto): the fused _sg_mkldnn_* export hybridnet runs. The same fp32
weights go to ONNX through bench/peer/onnx_from_mxnet.py (PyTorch's exporter over the MXNet graph,
as the peer benchmark does); onnxruntime.quantization.quantize_static turns that file into int8
(QDQ format, MinMax calibration over the same 16 images, per tensor: what MXNet's naive
calibration computes; activations uint8 (ORT's U8S8, --ort-activation int8 for S8S8), weights
int8, after quant_pre_process).

Systems, each a worker process (bench/train_step_bench.py's protocol and run_workers: pinned to
one CPU at 1 thread, rounds alternating in a rotating order after a warm-up round; medians):
  hybridnet int8   the quantized export through the Python package's Predictor (the C API's)
  hybridnet fp32   the fp32 export, the same way
  ORT int8         onnxruntime InferenceSession of the QDQ model (all graph optimizations)
  ORT fp32         the fp32 ONNX file, the same way
Threads: hybridnet.set_num_threads(n), ORT's intra_op_num_threads = n (inter_op 1, sequential),
OMP_NUM_THREADS = n for both. Before timing, each output is compared (top-1 and max difference
relative to the second's max): hybridnet int8 against MXNet's int8 output of the same export,
int8 against the same system's fp32, hybridnet fp32 against ORT fp32 (the same weights give the
same numbers).
Targets: hybridnet int8 <= 0.9x ORT int8's time, and >= 2.5x faster than hybridnet fp32.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from train_step_bench import ROOT, describe, run_workers, serve

THIS = os.path.abspath(__file__)
MODELS = ["resnet50_v1", "mobilenetv2_1.0"]
SHAPE = (1, 3, 224, 224)
CALIB_IMAGES = 16


def fp32_onnx(prefix):
    """The fp32 ONNX file onnx_from_mxnet.py writes for the model at PREFIX."""
    return f"{prefix}-{'x'.join(map(str, SHAPE))}.onnx"
TARGET_VS_ORT, TARGET_VS_FP32 = 0.9, 2.5


# ---- preparation: MXNet (its venv) and ONNX Runtime (the ONNX venv) ------------------------------

def prepare_mxnet(folder, names):
    """MXNet's side: per model, the fp32 export (NAME-fp32), its weights as NAME.npy/ and
    NAME-symbol.json for onnx_from_mxnet.py, and the quantized export (NAME-int8); the input and
    calibration images."""
    import warnings
    warnings.filterwarnings("ignore")
    os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"  # per-layer calibration statistics
    import mxnet as mx
    from mxnet.contrib import quantization
    from mxnet.gluon.model_zoo import vision
    sys.path.insert(0, os.path.join(ROOT, "tests", "golden", "zoo"))
    from zoo_common import randomize_batchnorm

    rng = np.random.RandomState(37)
    x = rng.uniform(0, 1, SHAPE).astype(np.float32)
    calib = rng.uniform(0, 1, (CALIB_IMAGES,) + SHAPE[1:]).astype(np.float32)
    np.save(os.path.join(folder, "input.npy"), x)
    np.save(os.path.join(folder, "calib.npy"), calib)
    for index, name in enumerate(names):
        mx.random.seed(index)
        net = vision.get_model(name)
        net.initialize(mx.init.Xavier())
        net.hybridize()
        net(mx.nd.array(x))
        randomize_batchnorm(net, rng)
        prefix = os.path.join(folder, name)
        net.export(prefix + "-fp32", 0)
        os.replace(prefix + "-fp32-symbol.json", prefix + "-symbol.json")
        os.symlink(name + "-symbol.json", prefix + "-fp32-symbol.json")
        os.makedirs(prefix + ".npy", exist_ok=True)
        for key, value in mx.nd.load(prefix + "-fp32-0000.params").items():
            np.save(os.path.join(prefix + ".npy", key.split(":", 1)[1] + ".npy"), value.asnumpy())
        calib_iter = mx.io.NDArrayIter(calib, batch_size=4, data_name="data")
        qnet = quantization.quantize_net(net, quantized_dtype="auto", calib_mode="naive",
                                         calib_data=calib_iter, num_calib_examples=CALIB_IMAGES,
                                         ctx=mx.cpu())
        np.save(f"{prefix}-out-MXNet_int8.npy", qnet(mx.nd.array(x)).asnumpy())
        qnet.export(prefix + "-int8", 0)
        print(f"MXNet {mx.__version__}: wrote {prefix}-fp32 and {prefix}-int8", flush=True)


def prepare_ort(folder, names, activation):
    """ONNX Runtime's side: NAME-int8.onnx from the fp32 file, calibrated on calib.npy."""
    import onnxruntime
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    calib = np.load(os.path.join(folder, "calib.npy"))

    class Images(CalibrationDataReader):
        def __init__(self):
            self.images = iter(calib[i:i + 1] for i in range(len(calib)))

        def get_next(self):
            image = next(self.images, None)
            return None if image is None else {"data": image}

    for name in names:
        prefix = os.path.join(folder, name)
        prepared = prefix + "-fp32-prepared.onnx"
        quant_pre_process(fp32_onnx(prefix), prepared, skip_symbolic_shape=True)  # fixed shapes
        quantize_static(prepared, prefix + "-int8.onnx", Images(), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QUInt8 if activation == "uint8" else
                        QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=False,
                        calibrate_method=CalibrationMethod.MinMax)
        print(f"ONNX Runtime {onnxruntime.__version__}: wrote {prefix}-int8.onnx "
              f"(QDQ, {activation} activations, int8 weights)", flush=True)


def prepare(folder, names, args):
    stamp = os.path.join(folder, "done")
    wanted = f"{' '.join(names)} {args.ort_activation} {os.path.getmtime(THIS)}"
    if os.path.exists(stamp) and open(stamp).read() == wanted:
        return True
    subprocess.run(["rm", "-rf", folder], check=True)
    os.makedirs(folder)
    steps = [
        ("MXNet 1.9.1", [args.mxnet, THIS, "--prepare-mxnet", folder] + names),
        ("PyTorch (the ONNX export)", [args.torch_python, os.path.join(ROOT, "bench", "peer",
                                                                       "onnx_from_mxnet.py"),
                                       folder] + [f"{n}={','.join(map(str, SHAPE))}"
                                                  for n in names]),
        ("ONNX Runtime", [args.onnx_python, THIS, "--prepare-ort", folder, args.ort_activation]
         + names),
    ]
    for what, command in steps:
        if not os.path.exists(command[0]):
            print(f"SKIPPED: {what} is missing ({command[0]})")
            return False
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bench", "peer"))
        r = subprocess.run(command, capture_output=True, text=True, env=env)
        if r.returncode != 0:
            print(f"SKIPPED: preparing the models with {what} failed: "
                  f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")
            return False
    open(stamp, "w").write(wanted)
    return True


# ---- workers (protocol: bench/train_step_bench.py's serve) --------------------------------------

def checks_of(output, out_path):
    def checks():
        np.save(out_path, output[0])
        return {"top1": float(np.argmax(output[0]))}
    return checks


def hybridnet_worker(prefix, x_path, out_path, threads):
    import hybridnet

    hybridnet.set_num_threads(int(threads))
    predictor = hybridnet.Model.load(prefix, 0).predictor()
    x = np.load(x_path)
    output = [None]

    def step():
        output[0] = predictor(data=x)

    serve(f"hybridnet {hybridnet.__version__} Predictor of {os.path.basename(prefix)}", step,
          lambda: None, checks_of(output, out_path))


def ort_worker(path, x_path, out_path, threads):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = int(threads)
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    x = np.load(x_path)
    output = [None]

    def step():
        output[0] = session.run(None, {"data": x})[0]

    serve(f"ONNX Runtime {ort.__version__} on {os.path.basename(path)}", step, lambda: None,
          checks_of(output, out_path))


# ---- driver ----------------------------------------------------------------------------------

def compare(folder, name, a, b):
    """(top-1 agrees, max |a - b| / max |b|) of systems a and b's outputs, or None."""
    paths = [os.path.join(folder, f"{name}-out-{s.replace(' ', '_')}.npy") for s in (a, b)]
    if not all(os.path.exists(p) for p in paths):
        return None
    ya, yb = (np.load(p).astype(np.float64) for p in paths)
    if ya.shape != yb.shape:
        return False, float("inf")
    scale = max(float(np.max(np.abs(yb))), 1e-30)
    return bool(np.argmax(ya) == np.argmax(yb)), float(np.max(np.abs(ya - yb))) / scale


def report(folder, name, threads, results):
    print(f"  1-minute load average {results['load']} (start-end); {results['rounds']} rounds "
          "after a warm-up round")
    for system in ("hybridnet int8", "hybridnet fp32", "ORT int8", "ORT fp32"):
        r = results.get(system)
        if r is None:
            continue
        if "error" in r:
            label = "not yet" if system.startswith("hybridnet") else "failed"
            print(f"  {system:15s} {label}: {r['error']}")
            continue
        print(f"  {system:15s} {r['median_ms']:9.3f} ms/forward ({r['steps']} a round)  "
              f"peak RSS {r['hwm_mb']:5.0f} MB  {r['name']}")
    for a, b in (("hybridnet int8", "MXNet int8"), ("hybridnet int8", "hybridnet fp32"),
                 ("ORT int8", "ORT fp32"),
                 ("hybridnet fp32", "ORT fp32"), ("hybridnet int8", "ORT int8")):
        c = compare(folder, name, a, b)
        if c is not None:
            print(f"  {a} vs {b}: top-1 {'agrees' if c[0] else 'DIFFERS'}, max |diff| / max "
                  f"|{b}| = {c[1]:.3g}")


def ratio(results, a, b):
    ra, rb = results.get(a), results.get(b)
    if not ra or not rb or "error" in ra or "error" in rb:
        return None
    return ra["median_ms"] / rb["median_ms"]


def summary(all_results):
    print("\n== summary (median ms per forward; ratios of medians)")
    print(f"{'model':16s} {'thr':>3s} {'hn int8':>9s} {'hn fp32':>9s} {'ORT int8':>9s} "
          f"{'ORT fp32':>9s} {'int8/ORT8':>10s} {'fp32/int8':>10s}  targets")
    for name, threads, results in all_results:
        def ms(system):
            r = results.get(system)
            return "-" if not r or "error" in r else f"{r['median_ms']:.3f}"
        vs_ort = ratio(results, "hybridnet int8", "ORT int8")
        speedup = ratio(results, "hybridnet fp32", "hybridnet int8")
        verdict = []
        if vs_ort is not None:
            verdict.append(f"vs ORT {'OK' if vs_ort <= TARGET_VS_ORT else 'ABOVE'}")
        if speedup is not None:
            verdict.append(f"vs fp32 {'OK' if speedup >= TARGET_VS_FP32 else 'BELOW'}")
        print(f"{name:16s} {threads:3d} {ms('hybridnet int8'):>9s} {ms('hybridnet fp32'):>9s} "
              f"{ms('ORT int8'):>9s} {ms('ORT fp32'):>9s} "
              f"{'-' if vs_ort is None else f'{vs_ort:.3f}':>10s} "
              f"{'-' if speedup is None else f'{speedup:.2f}x':>10s}  {', '.join(verdict)}")
    print(f"(targets: hybridnet int8 / ORT int8 <= {TARGET_VS_ORT}; hybridnet fp32 / hybridnet "
          f"int8 >= {TARGET_VS_FP32})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--round-seconds", type=float, default=1.0)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--ort-activation", choices=("uint8", "int8"), default="uint8")
    parser.add_argument("--mxnet",
                        default=os.path.expanduser("~/.cache/hybridnet/mxnet-1.9.1/bin/python"))
    parser.add_argument("--onnx-python",
                        default=os.path.expanduser("~/.cache/hybridnet/onnx/bin/python"))
    parser.add_argument("--torch-python", default="/usr/bin/python3")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")

    describe(build)
    hn_python = os.path.join(build, "bindings", "python", "venv", "bin", "python")
    folder = os.path.join(build, "bench_models", "int8")
    if not prepare(folder, names, args):
        return
    print(f"models: hybridnet int8 = MXNet 1.9.1 quantize_net export (fused, naive, dtype auto); "
          f"ORT int8 = quantize_static QDQ, {args.ort_activation} activations, int8 weights, per "
          f"tensor, MinMax; both calibrated on the same {CALIB_IMAGES} images")
    x_path = os.path.join(folder, "input.npy")
    all_results = []
    for name in names:
        prefix = os.path.join(folder, name)
        commands = {}  # system -> (command, extra environment)
        if os.path.exists(hn_python):
            for kind in ("int8", "fp32"):
                commands[f"hybridnet {kind}"] = (
                    [hn_python, THIS, "--worker", "hybridnet", f"{prefix}-{kind}"], {})
        else:
            print(f"hybridnet: SKIPPED (no {hn_python}; ninja -C {args.build} hybridnet_python "
                  "builds the Python package)")
        for kind, path in (("int8", f"{prefix}-int8.onnx"), ("fp32", fp32_onnx(prefix))):
            commands[f"ORT {kind}"] = ([args.onnx_python, THIS, "--worker", "ort", path], {})
        for system, (command, _) in commands.items():
            command.append(x_path)
            command.append(os.path.join(folder, f"{name}-out-{system.replace(' ', '_')}.npy"))
        for threads in (int(t) for t in args.threads.split(",")):
            print(f"\n== {name}, batch 1, 3x224x224: {threads} thread(s)", flush=True)
            results = run_workers(commands, [str(threads)], threads, args.rounds,
                                  args.round_seconds)
            report(folder, name, threads, results)
            all_results.append((name, threads, results))
    summary(all_results)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--prepare-mxnet":
        prepare_mxnet(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--prepare-ort":
        prepare_ort(sys.argv[2], sys.argv[4:], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "--worker":
        {"hybridnet": hybridnet_worker, "ort": ort_worker}[sys.argv[2]](*sys.argv[3:])
    else:
        main()
