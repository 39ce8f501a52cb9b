"""Golden checks against real MXNet 1.9.1 (skipped, exit 77, when MXNet is not importable).

1. MXNet exports the seed MLP; hybridnet loads it and gives MXNet's numbers (eager and
   hybridized), and re-saves MXNet's symbol JSON byte for byte.
2. hybridnet exports the seed MLP; MXNet loads it and gives hybridnet's numbers.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from real_mxnet import import_or_skip  # noqa: E402

np, mx = import_or_skip()

TOLERANCE = 1e-5
runner = sys.argv[1]
work = tempfile.mkdtemp(prefix="hn_golden_")
atexit.register(shutil.rmtree, work, True)
failures = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + (": " + detail if detail else ""))
    if not ok:
        failures.append(name)


def max_diff(a, b):
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


# 1. MXNet -> hybridnet
mx.random.seed(7)
net = mx.gluon.nn.HybridSequential()
with net.name_scope():
    net.add(mx.gluon.nn.Dense(256, activation="relu"), mx.gluon.nn.Dense(128, activation="relu"),
            mx.gluon.nn.Dense(2))
net.initialize()
net.hybridize()
x = mx.nd.random.normal(shape=(3, 512))
y = net(x).asnumpy()
prefix = os.path.join(work, "mx_mlp")
net.export(prefix)
np.save(os.path.join(work, "mx_input.npy"), x.asnumpy())
subprocess.run([runner, "import", prefix, os.path.join(work, "mx_input.npy"),
                os.path.join(work, "hn")], check=True)
for mode in ("eager", "hybrid"):
    ours = np.load(os.path.join(work, f"hn-{mode}.npy"))
    d = max_diff(ours, y)
    check(f"MXNet export runs in hybridnet ({mode})", ours.shape == y.shape and d <= TOLERANCE,
          f"max |diff| = {d:.3g}")
with open(prefix + "-symbol.json", "rb") as f:
    mx_json = f.read()
with open(os.path.join(work, "hn-resaved.json"), "rb") as f:
    hn_json = f.read()
check("hybridnet re-saves MXNet's symbol JSON byte for byte", mx_json == hn_json,
      f"{len(mx_json)} vs {len(hn_json)} bytes")

# 2. hybridnet -> MXNet
prefix = os.path.join(work, "hn_mlp")
subprocess.run([runner, "export", prefix], check=True)
block = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
x = np.load(prefix + "-input.npy")
ours = np.load(prefix + "-output.npy")
theirs = block(mx.nd.array(x)).asnumpy()
d = max_diff(ours, theirs)
check("hybridnet export runs in MXNet", ours.shape == theirs.shape and d <= TOLERANCE,
      f"max |diff| = {d:.3g}")
sym = mx.sym.load(prefix + "-symbol.json")
with open(prefix + "-symbol.json") as f:
    check("MXNet re-saves hybridnet's symbol JSON unchanged", sym.tojson() == f.read())

passed = 5 - len(failures)
print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
