"""Graphs run by hybridnet, run again in real MXNet 1.9.1 (exit 77 = skipped when MXNet is absent).

An exporter (hn_export_op_cases: every op conformance case; hn_graph_diff --export: random whole
graphs) writes WORK_DIR/index.json and, per case, the symbol JSON (and .params) as MXNet would
hold them, the input .npy files and hybridnet's outputs:
  {"ops": [...optional: ops that must each have a checked case...],
   "cases": [{"name", "op", "symbol", "params" (optional), "inputs": [{"name", "file"}],
              "outputs": [files], "mxnet_skip", "mxnet_rtol"}]}
MXNet loads the same files and runs them on the same inputs as a hybridized Gluon block does (a
CachedOp, inference). Float outputs must agree within the case's mxnet_rtol of the largest output
magnitude, integer outputs exactly, NaN with NaN.

MXNet's pip wheel has two CPU paths that do not always agree with each other: its MKLDNN kernels
(the default) and its plain kernels (MXNET_MKLDNN_ENABLED=0). Known disagreements: SoftmaxOutput
on inputs of more than two dimensions, 1-D Deconvolution with dilation; _contrib_BatchNormWithReLU
exists only with MKLDNN. Each case runs under both; it passes when it matches either, and the
report names the cases where the two disagree and which one hybridnet follows.

When the index lists "ops", each must have at least one case MXNet checked: an op no case
reaches fails, as does a case marked mxnet_skip whose op has no other checked case.
Usage: mxnet_check.py WORK_DIR EXPORTER [ARGS...]   (runs EXPORTER ARGS... WORK_DIR, then checks)
       mxnet_check.py --worker WORK_DIR OUT_DIR     (runs every case in this process's MXNet)
"""
import json
import os
import shutil
import subprocess
import sys
import time

os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"  # whole-graph rewrites are not the op's semantics
os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "0"

try:
    import warnings
    warnings.filterwarnings("ignore")
    import numpy as np
    import mxnet as mx
except Exception as e:  # noqa: BLE001 - any import failure means "no reference here"
    print(f"SKIP: real MXNet is not importable by {sys.executable} ({e}); "
          "run scripts/setup-mxnet.sh to install mxnet==1.9.1 for the golden tests")
    sys.exit(77)

MODES = {"mkldnn": "1", "plain": "0"}


def run_worker(work, out_dir):
    """Runs every case in this process's MXNet; writes outputs or the error per case."""
    index = json.load(open(os.path.join(work, "index.json")))
    os.makedirs(out_dir, exist_ok=True)
    errors = {}
    for case in index["cases"]:
        if case["mxnet_skip"]:
            continue
        try:
            sym = mx.sym.load(os.path.join(work, case["symbol"]))
            arrays = {}
            if case.get("params"):
                loaded = mx.nd.load(os.path.join(work, case["params"]))
                for key, value in (loaded.items() if isinstance(loaded, dict) else []):
                    arrays[key.split(":", 1)[1] if ":" in key else key] = value
            for inp in case["inputs"]:
                value = np.load(os.path.join(work, inp["file"]))
                arrays[inp["name"]] = mx.nd.array(value, dtype=value.dtype)
            # A CachedOp, as a hybridized Gluon block runs the graph (nothing records: inference).
            outputs = mx.nd.CachedOp(sym)(*[arrays[n] for n in sym.list_inputs()])
            if not isinstance(outputs, (list, tuple)):
                outputs = [outputs]
            for i, o in enumerate(outputs):
                np.save(os.path.join(out_dir, f"{case['name']}-out{i}.npy"), o.asnumpy())
        except Exception as e:  # noqa: BLE001 - MXNet rejecting the case is a finding
            lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
            errors[case["name"]] = lines[-1][:300] if lines else type(e).__name__
    json.dump(errors, open(os.path.join(out_dir, "errors.json"), "w"))


def compare(ours, ref, rtol):
    """None when ours matches MXNet's ref, else a description of the difference."""
    if ours.shape != ref.shape:
        return f"shape {ours.shape} vs MXNet {ref.shape}"
    if ours.size == 0:
        return None
    if not np.issubdtype(ref.dtype, np.floating) and not np.issubdtype(ours.dtype, np.floating):
        bad = int(np.sum(ours.astype(np.int64) != ref.astype(np.int64)))
        return None if bad == 0 else f"{bad} of {ref.size} integer elements differ"
    a = ours.astype(np.float64)
    b = ref.astype(np.float64)
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return f"NaN at different places ({int(nan_a.sum())} vs MXNet {int(nan_b.sum())})"
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    if not np.array_equal(a[inf_a | inf_b], b[inf_a | inf_b]):
        return "infinities differ"
    finite = ~(nan_a | inf_a | inf_b)
    if not finite.any():
        return None
    scale = max(float(np.max(np.abs(b[finite]))), 1e-30)
    err = float(np.max(np.abs(a[finite] - b[finite]))) / scale
    return None if err <= rtol else f"max |diff| / max |MXNet| = {err:.3g} > {rtol:g}"


def problems_against(case, work, mode_dir, errors):
    """What differs between hybridnet's outputs and one MXNet path's (empty: they match)."""
    if case["name"] in errors:
        return [f"MXNet could not run it: {errors[case['name']]}"]
    problems = []
    for i, file in enumerate(case["outputs"]):
        ref_path = os.path.join(mode_dir, f"{case['name']}-out{i}.npy")
        if not os.path.exists(ref_path):
            problems.append(f"MXNet gives no output {i}")
            continue
        d = compare(np.load(os.path.join(work, file)), np.load(ref_path), case["mxnet_rtol"])
        if d:
            problems.append(f"output {i}: {d}")
    return problems


def main(work, exporter):
    start = time.time()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r = subprocess.run(exporter + [work], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {' '.join(exporter)} {work}: {r.stderr.strip()}{r.stdout.strip()[-2000:]}")
        return 1
    index = json.load(open(os.path.join(work, "index.json")))
    errors = {}
    for mode, flag in MODES.items():
        env = dict(os.environ, MXNET_MKLDNN_ENABLED=flag)
        out_dir = os.path.join(work, "mxnet-" + mode)
        w = subprocess.run([sys.executable, __file__, "--worker", work, out_dir], env=env,
                           capture_output=True, text=True)
        if w.returncode != 0:
            print(f"FAIL: the MXNet worker ({mode}) failed: {w.stderr.strip()[-2000:]}")
            return 1
        errors[mode] = json.load(open(os.path.join(out_dir, "errors.json")))

    failures, checked, skipped, split = [], set(), {}, []
    for case in index["cases"]:
        name, op = case["name"], case["op"]
        if case["mxnet_skip"]:
            skipped.setdefault(op, []).append(f"{name}: {case['mxnet_skip']}")
            continue
        per_mode = {m: problems_against(case, work, os.path.join(work, "mxnet-" + m), errors[m])
                    for m in MODES}
        matched = [m for m, p in per_mode.items() if not p]
        if not matched:
            failures.append(name)
            detail = "; ".join(f"{m}: " + ", ".join(p) for m, p in per_mode.items())
            print(f"FAIL {name} ({op} {case.get('attrs', '')}): {detail}", flush=True)
            continue
        checked.add(op)
        if len(matched) < len(MODES):
            other = [m for m in MODES if m not in matched][0]
            split.append(name)
            print(f"NOTE {name} ({op}): MXNet's {other} path differs from its {matched[0]} path, "
                  f"which hybridnet matches ({', '.join(per_mode[other])})", flush=True)

    unchecked = [op for op in index.get("ops", []) if op not in checked]
    for op in unchecked:
        why = "; ".join(skipped.get(op, ["no conformance case"]))
        print(f"FAIL op {op} is not checked against MXNet ({why})")
    n_cases = len(index["cases"])
    n_skipped = sum(len(v) for v in skipped.values())
    print(f"{n_cases - len(failures) - n_skipped} of {n_cases} cases match MXNet {mx.__version__} "
          f"({len(split)} where its MKLDNN and plain CPU paths disagree, {n_skipped} not "
          f"comparable); {len(checked)} of {len(index.get('ops', checked))} ops checked; {len(failures)} "
          f"cases failed; {len(unchecked)} ops unchecked ({time.time() - start:.1f} s)")
    return 1 if failures or unchecked else 0


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        run_worker(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main(sys.argv[1], sys.argv[2:]))
