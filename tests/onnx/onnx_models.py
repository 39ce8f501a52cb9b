"""Whole models exported to ONNX and checked in ONNX Runtime (exit 77 = skipped when the
onnx/onnxruntime wheels are missing; scripts/setup-onnx.sh installs them).

Every model of the golden zoo (tests/golden/zoo/zoo_models.py: the model-zoo networks, the
layer networks and the JSON-only variants), built in C++ by zoo_runner with random weights and
random BatchNorm statistics, and every MXNet-written model of tests/data/mxnet (with its
parameters, or with random weights as graph inputs when only the symbol is stored) goes through
`hybridnet convert ... OUT.onnx --check`: onnx.checker (full check) must accept the file and
ONNX Runtime must give hybridnet's outputs within 1e-4 of their largest magnitude. Each model
is exported at opset 17 with and without a dynamic batch axis (checked at two batch sizes); the
layer networks and the fixtures also at opsets 13 and 21.
Usage: onnx_models.py ZOO_RUNNER HYBRIDNET FIXTURES_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "zoo"))
from scratch import discard  # noqa: E402
from zoo_models import FIXTURES, JSON_ONLY, LAYER_NETS, MODELS  # noqa: E402

try:
    import numpy as np
    import onnx  # noqa: F401 - the check script imports it; fail early with the skip message
    import onnxruntime  # noqa: F401
except Exception as e:  # noqa: BLE001 - any import failure means "no reference here"
    print(f"SKIP: onnx/onnxruntime are not importable by {sys.executable} ({e}); "
          "run scripts/setup-onnx.sh to install them for the ONNX tests")
    sys.exit(77)

TOLERANCE = 1e-4
runner, cli, fixtures, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.environ["HYBRIDNET_ONNX_PYTHON"] = sys.executable
start = time.time()
failures = []
figures = []  # (model, variant, output, shape, max abs, max rel)
ROW = re.compile(r"^  (.+):$|^    (\S+) (\(.*\)): max abs (\S+), max rel (\S+) (ok|EXCEEDS TOLERANCE)$")


def convert(label, source, shapes, opset, dynamic):
    variant = f"opset {opset}" + (", dynamic batch" if dynamic else "")
    out = os.path.join(work, re.sub(r"[^A-Za-z0-9_.-]", "_", f"{label}-{opset}-{int(dynamic)}") + ".onnx")
    args = [cli, "convert", source, out, "--opset", str(opset), "--check",
            "--tolerance", str(TOLERANCE)]
    for name, shape in shapes.items():
        args += ["--input", f"{name}=" + ",".join(map(str, shape))]
    if dynamic:
        args.append("--dynamic-batch")
    t0 = time.time()
    r = subprocess.run(args, capture_output=True, text=True)
    run = ""
    for line in r.stdout.splitlines():
        m = ROW.match(line)
        if m and m.group(1):
            run = m.group(1)
        elif m:
            figures.append((label, f"{variant}, {run}", m.group(2), m.group(3), float(m.group(4)),
                            float(m.group(5))))
    valid = "onnx.checker: valid" in r.stdout
    ok = r.returncode == 0 and valid and "parity: PASS" in r.stdout
    print(("PASS " if ok else "FAIL ") + f"{label} ({variant}) {time.time() - t0:.1f}s", flush=True)
    if ok:
        discard(out)
    else:
        failures.append(f"{label} ({variant}): rc {r.returncode}\n{r.stdout}{r.stderr}")


# ---- the golden zoo, built in C++ ------------------------------------------------------------
zoo = [(name, (1, 3, size, size)) for name, size in MODELS + JSON_ONLY] + LAYER_NETS
for name, shape in zoo:
    prefix = os.path.join(work, "zoo_" + name)
    x_path = prefix + "_x.npy"
    np.save(x_path, np.random.RandomState(0).uniform(0, 1, shape).astype(np.float32))
    subprocess.run([runner, "build", name, prefix, x_path, "random-batchnorm"], check=True,
                   stdout=subprocess.DEVNULL)
    source = f"{prefix}-symbol.json,{prefix}-0000.params"
    layer_net = name in dict(LAYER_NETS)
    for opset in (13, 17, 21) if layer_net else (17,):
        convert(name, source, {"data": shape}, opset, False)
    convert(name, source, {"data": shape}, 17, True)
    discard(prefix)

# ---- MXNet-written models --------------------------------------------------------------------
SYMBOL_ONLY = [("resnet-152-symbol.json", (1, 3, 224, 224)), ("test-symbol.json.ref", (2, 20)),
               ("save_000800.json", (2, 30)),
               ("test_mkldnn_test_mkldnn_model_model1.json", (1, 3, 64, 64))]
models = [(p, f"{p}-symbol.json,{os.path.join(fixtures, p)}-{e:04d}.params", s) for p, e, s in FIXTURES]
models += [(f, f, s) for f, s in SYMBOL_ONLY]
for label, files, shape in models:
    source = os.path.join(fixtures, files)
    for opset in (13, 17, 21):
        convert(label, source, {"data": shape}, opset, False)
    convert(label, source, {"data": shape}, 17, True)

print(f"\n{'model':<44} {'export, inputs':<52} {'output':<36} {'max abs':>9} {'max rel':>9}")
for label, variant, out, shape, max_abs, rel in figures:
    print(f"{label:<44} {variant:<52} {out + ' ' + shape:<36} {max_abs:9.2g} {rel:9.2g}")
print(f"largest relative difference: {max(f[5] for f in figures):.3g}" if figures else "")
for f in failures:
    print("FAIL " + f)
print(f"{len(figures)} outputs compared, {len(failures)} failures in {time.time() - start:.0f}s")
sys.exit(1 if failures or not figures else 0)
