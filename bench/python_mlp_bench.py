"""The Python package against the C API, PyTorch eager and real MXNet 1.9.1, in one run: the seed
MLP (512 -> 256 relu -> 128 relu -> 2) at batch 1, the same weights and input everywhere.

    python_mlp_bench.py BUILD_DIR [--rounds 9] [--forwards 2000] [--mxnet PYTHON]

Run with the Python that has the hybridnet wheel (build/bindings/python/venv). Every system runs
in turn, round after round (the C API, PyTorch and MXNet in worker processes of their own, fed
through a pipe), and medians of the rounds are compared: ratios within one run. One thread
everywhere, and one core: every process is pinned to the same CPU. Targets: Python Predictor
<= C + 3 us, hybridized HybridSequential <= C + 6 us, faster than PyTorch eager, >= 5x faster
than MXNet hybridized.
"""
import argparse
import atexit
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

THIS = os.path.abspath(__file__)
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# ---- workers: PyTorch and MXNet, each in a process of its own ---------------------------------

def torch_worker(folder):
    import torch

    torch.set_num_threads(1)
    weights = np.load(os.path.join(folder, "weights.npz"))
    layers = []
    for i, units in enumerate((256, 128, 2)):
        linear = torch.nn.Linear(weights[f"w{i}"].shape[1], units)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(weights[f"w{i}"]))
            linear.bias.copy_(torch.from_numpy(weights[f"b{i}"]))
        layers += [linear, torch.nn.ReLU()] if i < 2 else [linear]
    net = torch.nn.Sequential(*layers).eval()
    x = torch.from_numpy(np.load(os.path.join(folder, "x.npy")))
    with torch.no_grad():
        y = net(x).numpy()
        serve(f"PyTorch {torch.__version__}", y, lambda: net(x), lambda: None)


def mxnet_worker(folder):
    import mxnet as mx

    net = mx.gluon.SymbolBlock.imports(os.path.join(folder, "mlp-symbol.json"), ["data"],
                                       os.path.join(folder, "mlp-0000.params"))
    net.hybridize()
    x = mx.nd.array(np.load(os.path.join(folder, "x.npy")))
    serve(f"MXNet {mx.__version__}", net(x).asnumpy(), lambda: net(x), mx.nd.waitall)


def serve(name, y, forward, wait):
    print(f"name={name}")
    print("output=%.9g,%.9g" % tuple(y.reshape(-1)[:2]), flush=True)
    for line in sys.stdin:
        count = int(line)
        wait()
        start = time.perf_counter()
        for _ in range(count):
            forward()
        wait()
        print("%.4f" % ((time.perf_counter() - start) * 1e6 / count), flush=True)


class Worker:
    """A process that runs `count` forwards when asked and answers with microseconds each."""

    def __init__(self, label, command, env=None):
        self.label = label
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env=dict(os.environ, **ONE_THREAD, **(env or {})))
        self.name = label
        self.output = None
        for line in self.process.stdout:
            if line.startswith("name="):
                self.name = line[5:].strip()
            if line.startswith("output="):
                self.output = [float(v) for v in line[7:].split(",")]
                break
        if self.output is None:
            self.process.wait()
            raise RuntimeError(f"{label} did not start (exit {self.process.returncode})")

    def run(self, count):
        self.process.stdin.write(f"{count}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait()


# ---- the machine ------------------------------------------------------------------------------

def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    try:
        openblas = ctypes.CDLL("libopenblas.so.0")
        openblas.openblas_get_config.restype = ctypes.c_char_p
        config = openblas.openblas_get_config().decode()
    except OSError:
        config = "libopenblas.so.0 not found"
    coretype = os.environ.get("OPENBLAS_CORETYPE", "unset")
    return f"CPU: {model}, {os.cpu_count()} logical; OPENBLAS_CORETYPE={coretype}; {config}"


def median(values):
    return sorted(values)[len(values) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--forwards", type=int, default=2000)
    parser.add_argument("--mxnet", default=os.path.expanduser("~/.cache/hybridnet/mxnet-1.9.1/bin/python"))
    args = parser.parse_args()
    os.environ.update(ONE_THREAD)
    # One core for every system, the workers inherit it: MXNet's engine runs each op on a worker
    # thread of its own, which on an idle second core would overlap with Python's frontend and
    # turn "1 thread" into two (3.5x instead of 7.4x on a quiet 2-core machine).
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})

    import hybridnet as mx
    from hybridnet import gluon, nd

    mx.set_num_threads(1)
    print(machine())
    print(f"hybridnet {mx.__version__} (Python {sys.version.split()[0]}, numpy {np.__version__}); "
          f"1 thread everywhere, every process pinned to CPU {core}")
    folder = tempfile.mkdtemp(prefix="hn_python_bench_")
    atexit.register(shutil.rmtree, folder, True)
    mx.random.seed(3)
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(256, activation="relu"), gluon.nn.Dense(128, activation="relu"),
                gluon.nn.Dense(2))
    net.initialize(mx.init.Xavier())
    x_np = nd.random.normal(shape=(1, 512)).asnumpy()
    np.save(os.path.join(folder, "x.npy"), x_np)
    x = nd.array(x_np)
    eager_y = net(x).asnumpy()
    net.hybridize()
    net(x)
    net.export(os.path.join(folder, "mlp"))
    net.save_parameters(os.path.join(folder, "mlp.params"))
    dense = [net[i] for i in range(3)]
    np.savez(os.path.join(folder, "weights.npz"),
             **{f"w{i}": d.weight.data().asnumpy() for i, d in enumerate(dense)},
             **{f"b{i}": d.bias.data().asnumpy() for i, d in enumerate(dense)})

    predictor = mx.Model.load(os.path.join(folder, "mlp"), 0).predictor()
    worker = os.path.join(args.build, "bin", "python_capi_worker")
    systems = {  # name -> (how, run(count) -> us per forward)
        "C predictor": ("C API: set_input + forward + get_output",
                        Worker("C predictor", [worker, "predictor", os.path.join(folder, "mlp"),
                                               os.path.join(folder, "x.npy")])),
        "Python predictor": ("Python: Predictor(x), numpy in and out", None),
        "C block": ("C API: hn_block_forward, hybridized HybridSequential",
                    Worker("C block", [worker, "block", os.path.join(folder, "mlp.params"),
                                       os.path.join(folder, "x.npy")])),
        "Python gluon": ("Python: hybridized HybridSequential net(x)", None),
        "Python eager": ("Python: HybridSequential net(x), not hybridized", None),
    }
    peers = {}
    try:
        import torch  # noqa: F401 - only to know it is there; it runs in a worker
        peers["PyTorch eager"] = Worker("PyTorch", [sys.executable, THIS, "--worker", "torch", folder])
    except ImportError:
        print("PyTorch eager: skipped (Debian's python3-torch is not installed; make bench "
              "installs it)")
    if os.path.exists(args.mxnet):
        try:
            peers["MXNet hybridized"] = Worker("MXNet", [args.mxnet, THIS, "--worker", "mxnet", folder],
                                               {"MXNET_SUBGRAPH_BACKEND": "NONE"})
        except RuntimeError as e:
            print(f"MXNet hybridized: skipped ({e})")
    else:
        print(f"MXNet hybridized: skipped (no {args.mxnet}; scripts/setup-mxnet.sh installs it)")

    eager_net = gluon.nn.HybridSequential()
    with eager_net.name_scope():
        eager_net.add(*[gluon.nn.Dense(u, activation=a) for u, a in ((256, "relu"), (128, "relu"), (2, None))])
    eager_net.load_parameters(os.path.join(folder, "mlp.params"))

    def timed(forward, count):
        start = time.perf_counter()
        for _ in range(count):
            forward()
        return (time.perf_counter() - start) * 1e6 / count

    local = {"Python predictor": lambda: predictor(x_np), "Python gluon": lambda: net(x),
             "Python eager": lambda: eager_net(x)}
    # Every system computes the same numbers.
    reference = net(x).asnumpy().reshape(-1)
    for label, (_, w) in systems.items():
        if w is not None and not np.allclose(w.output, reference[:2], rtol=1e-5, atol=1e-6):
            raise SystemExit(f"{label} computes {w.output}, not {reference[:2]}")
    for label, w in peers.items():
        if not np.allclose(w.output, reference[:2], rtol=1e-4, atol=1e-5):
            raise SystemExit(f"{label} computes {w.output}, not {reference[:2]}")
    assert np.allclose(predictor(x_np).reshape(-1), reference) and np.allclose(eager_y.reshape(-1), reference)

    results = {label: [] for label in list(systems) + list(peers)}
    for round_index in range(-1, args.rounds):  # round -1 warms up
        for label, (_, w) in systems.items():
            us = w.run(args.forwards) if w is not None else timed(local[label], args.forwards)
            if round_index >= 0:
                results[label].append(us)
        for label, w in peers.items():
            us = w.run(args.forwards)
            if round_index >= 0:
                results[label].append(us)
    for w in [w for _, w in systems.values() if w is not None] + list(peers.values()):
        w.close()

    m = {label: median(v) for label, v in results.items()}
    print(f"\nmedians of {args.rounds} interleaved rounds x {args.forwards} forwards, microseconds "
          "per forward (seed MLP, batch 1):")
    for label, (how, _) in systems.items():
        print(f"  {how:58s} {m[label]:8.2f}")
    for label, w in peers.items():
        print(f"  {w.name + ' (Python), ' + label.split()[-1]:58s} {m[label]:8.2f}")
    checks = [
        ("Python Predictor over the C API", m["Python predictor"] - m["C predictor"], "us", "<= 3 us",
         m["Python predictor"] - m["C predictor"] <= 3),
        ("hybridized gluon call over the C API", m["Python gluon"] - m["C block"], "us", "<= 6 us",
         m["Python gluon"] - m["C block"] <= 6),
    ]
    if "PyTorch eager" in m:
        ratio = m["PyTorch eager"] / m["Python gluon"]
        checks.append(("PyTorch eager / hybridized gluon", ratio, "x", "> 1", ratio > 1))
    if "MXNet hybridized" in m:
        ratio = m["MXNet hybridized"] / m["Python gluon"]
        checks.append(("MXNet hybridized / hybridized gluon", ratio, "x", ">= 5", ratio >= 5))
    print("\ntargets:")
    for what, value, unit, target, ok in checks:
        shown = f"+{value:.2f} {unit}" if unit == "us" else f"{value:.2f}{unit}"
        print(f"  {what:40s} {shown:>10s}   target {target:8s} {'met' if ok else 'NOT met'}")
    print(f"  (eager gluon / hybridized gluon: {m['Python eager'] / m['Python gluon']:.2f}x)")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        {"torch": torch_worker, "mxnet": mxnet_worker}[sys.argv[2]](sys.argv[3])
    else:
        main()
