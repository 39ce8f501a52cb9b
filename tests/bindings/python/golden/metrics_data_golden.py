"""mx.metric, gluon.data, mx.io.NDArrayIter, gluon.utils and mx.recordio of hybridnet against
real MXNet 1.9.1 (CTest python.golden_metrics_data): metrics_data_programs.py runs under both interpreters
and every recorded value must agree (relative 1e-5; NaN where MXNet reads NaN). Exit 77
(skipped) when MXNet is not installed.

    python metrics_data_golden.py MXNET_PYTHON WORK

Left out on purpose, because MXNet 1.9.1 gets them wrong: F1 and MCC with (N, 1) labels (MXNet
broadcasts them against (N,) predictions into an N x N count), TopKAccuracy on 1-D
predictions, and PearsonCorrelation's get_global() with average="micro" (MXNet reads sums it
never fills); hybridnet flattens the labels, rejects 1-D predictions and reads the pooled
correlation.
"""
import json
import math
import os
import subprocess
import sys

TOLERANCE = 1e-5
HERE = os.path.dirname(os.path.abspath(__file__))


def run(python, backend, out):
    env = dict(os.environ, HN_GOLDEN_BACKEND=backend,
               HN_RECORDIO_WRITTEN=os.path.join(os.path.dirname(out), "hybridnet_written"))
    done = subprocess.run([python, os.path.join(HERE, "metrics_data_programs.py"), out],
                          env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL: metrics_data_programs.py under {backend} exited {done.returncode}:\n"
              f"{done.stderr[-3000:]}")
        sys.exit(1)
    with open(out) as f:
        return json.load(f)


def differences(ours, theirs, where):
    """Descriptions of every place where the two values differ."""
    if isinstance(theirs, float) or isinstance(ours, float):
        if not isinstance(ours, (int, float)) or not isinstance(theirs, (int, float)):
            return [f"{where}: {ours!r} vs MXNet {theirs!r}"]
        if math.isnan(theirs) or math.isnan(ours):
            return [] if math.isnan(theirs) and math.isnan(ours) else [
                f"{where}: {ours} vs MXNet {theirs}"]
        if abs(ours - theirs) > TOLERANCE * max(1.0, abs(theirs)):
            return [f"{where}: {ours} vs MXNet {theirs}"]
        return []
    if isinstance(theirs, list):
        if not isinstance(ours, list) or len(ours) != len(theirs):
            return [f"{where}: {ours!r:.200} vs MXNet {theirs!r:.200}"]
        found = []
        for i, (a, b) in enumerate(zip(ours, theirs)):
            found += differences(a, b, f"{where}[{i}]")
        return found
    if isinstance(theirs, dict):
        if not isinstance(ours, dict) or sorted(ours) != sorted(theirs):
            return [f"{where}: keys {sorted(ours) if isinstance(ours, dict) else ours} vs "
                    f"MXNet {sorted(theirs)}"]
        found = []
        for key in theirs:
            found += differences(ours[key], theirs[key], f"{where}.{key}")
        return found
    return [] if ours == theirs else [f"{where}: {ours!r} vs MXNet {theirs!r}"]


def main():
    mxnet_python, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    probe = subprocess.run([mxnet_python, "-c", "import mxnet"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: real MXNet is not importable by {mxnet_python}; run "
              "scripts/setup-mxnet.sh to install mxnet==1.9.1 for the golden tests")
        return 77
    ours = run(sys.executable, "hybridnet", os.path.join(work, "hybridnet.json"))
    theirs = run(mxnet_python, "mxnet", os.path.join(work, "mxnet.json"))
    failures = 0
    for case in sorted(theirs):
        found = differences(ours.get(case), theirs[case], case)
        failures += bool(found)
        for line in found[:5]:
            print(f"FAIL {line}")
    print(f"{len(theirs) - failures} of {len(theirs)} cases agree with MXNet 1.9.1")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
