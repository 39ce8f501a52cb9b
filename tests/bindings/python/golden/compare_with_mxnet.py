"""The same Python code run by real MXNet 1.9.1 and by hybridnet (CTest python.golden_mxnet):
programs.py runs under both interpreters; every output must agree (relative 1e-5) and every
graph text (tojson(), exported -symbol.json) and printed text (.txt: summaries, DOT sources) must
be identical. Exit 77 (skipped) when MXNet is
not installed.

    python compare_with_mxnet.py MXNET_PYTHON WORK [PROGRAM]

PROGRAM (default programs.py, the only one that also compares where ops are placed) is another
script of this folder written the same way, e.g. loss_programs.py (CTest python.golden_losses).

Graphs are compared without node_row_ptr: MXNet's MKLDNN builds (the pip wheels) count a
hidden workspace output of max Pooling there that other builds do not (the golden zoo test does
the same).
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

TOLERANCE = 1e-5
HERE = os.path.dirname(os.path.abspath(__file__))


def run(python, program, backend, out, extra_env=None):
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, HN_GOLDEN_BACKEND=backend, **(extra_env or {}))
    done = subprocess.run([python, os.path.join(HERE, program), out], env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL: {program} under {backend} exited {done.returncode}:\n{done.stderr[-3000:]}")
        sys.exit(1)
    # A program says where it compares statistics rather than values, and why.
    for line in done.stdout.splitlines():
        if backend == "hybridnet" and line.startswith("NOTE:"):
            print(line)


def normalized(text):
    return re.sub(r'"node_row_ptr": \[[^\]]*\], ', "", text)


def compare_op_locations(ours, theirs):
    """Every op name both registries have must be at the same places in nd and sym; the number
    of places that differ."""
    with open(ours) as f:
        our_places = json.load(f)
    with open(theirs) as f:
        their_places = json.load(f)
    common = [n for n in sorted(our_places) if their_places.get(n)]
    differ = [n for n in common if our_places[n] != their_places[n]]
    for name in differ:
        print(f"FAIL op {name}: at {our_places[name]}, in MXNet at {their_places[name]}")
    unplaced = [n for n in sorted(our_places) if not our_places[n]]
    for name in unplaced:
        print(f"FAIL op {name}: no function of hybridnet's nd/sym")
    print(f"op functions: {len(common)} of hybridnet's {len(our_places)} op names and aliases "
          f"are MXNet's too; {len(differ)} at other places than MXNet's")
    return len(differ) + len(unplaced)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: compare_with_mxnet.py MXNET_PYTHON WORK [PROGRAM]")
    mxnet_python, work = sys.argv[1], sys.argv[2]
    program = sys.argv[3] if len(sys.argv) == 4 else "programs.py"
    probe = subprocess.run([mxnet_python, "-c", "import mxnet; print(mxnet.__version__)"],
                           capture_output=True, text=True) if os.path.exists(mxnet_python) else None
    if probe is None or probe.returncode != 0:
        print(f"SKIP: real MXNet is not importable from {mxnet_python} "
              "(scripts/setup-mxnet.sh installs it)")
        return 77
    ours, theirs = os.path.join(work, "hybridnet"), os.path.join(work, "mxnet")
    run(sys.executable, program, "hybridnet", ours)
    run(mxnet_python, program, "mxnet", theirs,
        {"MXNET_SUBGRAPH_BACKEND": "NONE",
         "HN_GOLDEN_OP_NAMES": os.path.join(ours, "op_names.txt")})
    failures = 0
    if program == "programs.py":
        failures += compare_op_locations(os.path.join(ours, "op_locations.txt"),
                                         os.path.join(theirs, "op_locations.txt"))
    compared_above = {"op_names.txt", "op_locations.txt"}  # the registry's, not a program's
    names = sorted(n for n in set(os.listdir(ours)) | set(os.listdir(theirs))
                   if n.endswith((".npy", ".json", ".txt")) and n not in compared_above)
    arrays, texts = 0, 0
    for name in names:
        a, b = os.path.join(ours, name), os.path.join(theirs, name)
        if not (os.path.exists(a) and os.path.exists(b)):
            print(f"FAIL {name}: written by {'hybridnet' if os.path.exists(a) else 'MXNet'} only")
            failures += 1
        elif name.endswith(".npy"):
            arrays += 1
            x, y = np.load(a), np.load(b)
            if x.shape != y.shape or x.dtype != y.dtype:
                print(f"FAIL {name}: {x.shape} {x.dtype} vs MXNet's {y.shape} {y.dtype}")
                failures += 1
                continue
            scale = max(float(np.max(np.abs(y))) if y.size else 0.0, 1e-3)
            diff = float(np.max(np.abs(x.astype(np.float64) - y))) if y.size else 0.0
            if diff > TOLERANCE * scale:
                print(f"FAIL {name}: max |hybridnet - mxnet| = {diff:.3g} (scale {scale:.3g})")
                failures += 1
        else:
            texts += 1
            with open(a) as fa, open(b) as fb:
                if normalized(fa.read()) != normalized(fb.read()):
                    print(f"FAIL {name}: the text differs from MXNet's (diff {a} {b})")
                    failures += 1
    print(f"MXNet {probe.stdout.strip()} and hybridnet ran the same code: {arrays} outputs, "
          f"{texts} graph and printed texts compared, {failures} differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
