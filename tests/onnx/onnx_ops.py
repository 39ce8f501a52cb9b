"""Every op conformance case exported alone to ONNX and run in ONNX Runtime (exit 77 = skipped
when the onnx/onnxruntime wheels are missing; scripts/setup-onnx.sh installs them).

hn_export_op_cases writes each conformance case (one-op symbol JSON, input .npy files, hybridnet's
outputs). For every case of an op that declares an ONNX mapping (`hybridnet ops --json`), at each
opset of OPSETS, `hybridnet convert CASE-symbol.json CASE.onnx --input NAME=FILE.npy...` writes
the model (the weights are graph inputs: a case has no parameters); onnx.checker validates it, it
may use only the ONNX ops the op declares, and ONNX Runtime must give hybridnet's outputs within
RTOL of their largest magnitude (integer outputs exactly). A case whose attributes the op
declares as not exportable must be refused with HN_ERR_UNSUPPORTED naming the node; every other
refusal fails. A valid model for which ONNX Runtime has no kernel (float64 Acos or Resize,
int32 SpaceToDepth) is listed, and its op must match in ONNX Runtime with another case. Every op with a mapping needs at least one case that exports and matches.
Usage: onnx_ops.py HN_EXPORT_OP_CASES HYBRIDNET ONNX_CHECK_PY WORK_DIR
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

OPSETS = (13, 17, 21)
RTOL = 1e-4

exporter, cli, check_py, work = sys.argv[1:5]
spec = importlib.util.spec_from_file_location("onnx_check", check_py)
onnx_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(onnx_check)
try:
    import numpy as np
    import onnx
    import onnxruntime
except Exception as e:  # noqa: BLE001 - any import failure means "no reference here"
    print(f"SKIP: onnx/onnxruntime are not importable by {sys.executable} ({e}); "
          "run scripts/setup-onnx.sh to install them for the ONNX tests")
    sys.exit(77)

start = time.time()
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
subprocess.run([exporter, work], check=True, stdout=subprocess.DEVNULL)
index = json.load(open(os.path.join(work, "index.json")))
ops = {o["name"]: o for o in json.loads(subprocess.run([cli, "ops", "--json"], check=True,
                                                        capture_output=True, text=True).stdout)}

failures = []
passed_ops = set()
refused = {}      # op -> cases refused as declared
no_kernel = {}    # op -> cases ONNX Runtime has no kernel for
not_mapped = {}   # op -> number of cases
checked = 0
worst = {}        # opset -> (rel, case)
training = []     # training-mode cases, not exported
nan_cases = set()  # cases with NaN inputs (NaN on one side only there is not a difference)
for case in index["cases"]:
    op = ops[case["op"]]
    name = case["name"]
    if not op["onnx"]["exportable"]:
        not_mapped[case["op"]] = not_mapped.get(case["op"], 0) + 1
        continue
    if case["is_train"]:
        # Its outputs use batch statistics; an export is an inference graph (the op's inference
        # cases check it).
        training.append(name)
        continue
    base = os.path.join(work, name)
    feeds = {i["name"]: np.load(os.path.join(work, i["file"])) for i in case["inputs"]}
    expected = [(f"output {k}", np.load(os.path.join(work, f))) for k, f in enumerate(case["outputs"])]
    args = [a for i in case["inputs"] for a in ("--input", f"{i['name']}={os.path.join(work, i['file'])}")]
    # ONNX leaves NaN open (Relu is "max(0, x)": ONNX Runtime keeps NaN, MXNet's Activation
    # gives 0). At a NaN element of an input of the output's shape, NaN on one side only is not
    # a difference; every other element, and both sides' numbers there, are compared.
    nan_inputs = [np.isnan(f) for f in feeds.values() if np.issubdtype(f.dtype, np.floating) and np.isnan(f).any()]
    nan_open = np.logical_or.reduce(nan_inputs) if nan_inputs and all(
        m.shape == nan_inputs[0].shape for m in nan_inputs) else None
    if nan_open is not None:
        nan_cases.add(name)
    for opset in OPSETS:
        path = f"{base}-opset{opset}.onnx"
        r = subprocess.run([cli, "convert", base + "-symbol.json", path, "--opset", str(opset)] + args,
                           capture_output=True, text=True)
        if r.returncode != 0:
            message = r.stderr.strip()
            declared = op["onnx"]["limits"] and "HN_ERR_UNSUPPORTED" in message and "(node 'node')" in message
            if declared:
                refused.setdefault(case["op"], set()).add(name)
            else:
                failures.append(f"{name} opset {opset}: convert failed: {message}")
            continue
        error = onnx_check.check_model(onnx, path)
        if error:
            failures.append(f"{name} opset {opset}: onnx.checker: {error}")
            continue
        used = {n.op_type for n in onnx.load(path).graph.node}
        undeclared = used - set(op["onnx"]["ops"])
        if undeclared:
            failures.append(f"{name} opset {opset}: emits {sorted(undeclared)}, which {case['op']} "
                            f"does not declare ({op['onnx']['ops']})")
        try:
            rows = onnx_check.compare(np, onnx_check.session(onnxruntime, path), feeds, expected, nan_open)
        except Exception as e:  # noqa: BLE001 - ONNX Runtime refusing the model is a failure
            if "NOT_IMPLEMENTED" in str(e) and "Could not find an implementation" in str(e):
                # A valid model (onnx.checker passed) for which this ONNX Runtime build has no
                # kernel (float64 Acos, Resize, ...): listed below, and the op must match in
                # ONNX Runtime with another case.
                no_kernel.setdefault(case["op"], set()).add(f"{name} ({str(e).split('for ')[-1].split(' node')[0]})")
                continue
            failures.append(f"{name} opset {opset}: ONNX Runtime: {str(e).strip()[:300]}")
            continue
        checked += 1
        for out, shape, max_abs, rel in rows:
            if rel > worst.get(opset, (-1, ""))[0]:
                worst[opset] = (rel, f"{name} {out}")
            if rel > RTOL:
                failures.append(f"{name} opset {opset} {out} {shape}: max abs {max_abs:.3g}, "
                                f"max rel {rel:.3g} > {RTOL}")
                break
        else:
            passed_ops.add(case["op"])

for op_name, names in sorted(no_kernel.items()):
    if op_name not in passed_ops:
        failures.append(f"{op_name}: ONNX Runtime has no kernel for any case ({', '.join(sorted(names))})")
for name, op in ops.items():
    if op["onnx"]["exportable"] and name not in passed_ops and name in {c["op"] for c in index["cases"]}:
        failures.append(f"{name}: declares an ONNX mapping but no case of it exported and matched")
print(f"{checked} exports checked in ONNX Runtime {onnxruntime.__version__} (onnx {onnx.__version__}), "
      f"opsets {', '.join(map(str, OPSETS))}, {len(index['cases'])} cases, {len(passed_ops)} ops")
for opset, (rel, where) in sorted(worst.items()):
    print(f"  opset {opset}: largest relative difference {rel:.3g} ({where})")
for op, names in sorted(refused.items()):
    print(f"  refused as declared ({ops[op]['onnx']['limits']}): {', '.join(sorted(names))}")
for op_name, names in sorted(no_kernel.items()):
    print(f"  valid, but ONNX Runtime {onnxruntime.__version__} has no kernel: {', '.join(sorted(names))}")
if training:
    print("  training-mode cases, not exported (an export is an inference graph): " + ", ".join(training))
if nan_cases:
    print("  NaN inputs, where NaN on one side only is not a difference (ONNX leaves NaN open): " +
          ", ".join(sorted(nan_cases)))
if not_mapped:
    print("  no ONNX mapping: " + ", ".join(f"{k} ({v} cases)" for k, v in sorted(not_mapped.items())))
for f in failures:
    print("FAIL " + f)
print(f"{len(failures)} failures in {time.time() - start:.0f}s")
sys.exit(1 if failures else 0)
