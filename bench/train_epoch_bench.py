"""Full training epochs of hybridnet (Python and C++) against MXNet 1.9.1 hybridized and PyTorch
CPU eager, at 1 and 2 threads, within one run (issue 35's benchmark):

  digits_lenet       LeNet for scikit-learn's bundled 8x8 digits (conv 3x3 20 - max pool - conv
                     3x3 50 - max pool - dense 128 - dense 10, relu), batch 64, Adam lr 0.001
  digits_mlp         MLP 64-128-64-10 (relu) on the digits, batch 64, SGD lr 0.1 momentum 0.9
  cifar_resnet20_v1  CIFAR ResNet-20 v1 (GluonCV, the MXNet fixture's weights) on 512 random
                     3x32x32 samples of 10 classes, batch 128, SGD lr 0.01 momentum 0.9 wd 1e-4

    train_epoch_bench.py BUILD_DIR [--rounds 6] [--processes 3] [--models a,b] [--threads 1,2]
                         [--systems ...]

An epoch: every batch of a DataLoader over the samples in order (the last, shorter batch
discarded: the digits' 1797 samples give 28 batches of 64), under recording out = net(x), loss =
SoftmaxCrossEntropyLoss(out, label) (one value per sample), backward, Trainer.step(batch) (or
PyTorch's optimizer step on the mean loss: the same update). Every system starts from the same
weights: the digits networks are written once by hybridnet's Gluon (Xavier, seed 0; exported as
symbol.json + params, and as .npy), ResNet-20 by bench/make_peer_models; the Gluon systems load
them as a SymbolBlock, PyTorch through bench/peer/torch_graph.py. The check after the first epoch
(the last batch's loss and the sum of the squared weights) shows that all systems trained alike.

Systems, each in worker processes of its own, fresh per model and thread count (--processes of
them one after another, the rounds split between them):
  hybridnet          the Gluon loop below in Python, `import hybridnet as mx`; net and loss
                     hybridized with static_alloc and static_shape
  hybridnet C++      the same loop in C++ (bench/train_epoch_worker.cc: gluon::SymbolBlock,
                     data::DataLoader, SoftmaxCrossEntropyLoss, Trainer); the Python loop's time
                     over this one is the Python per-step overhead
  MXNet              the same Gluon loop, `import mxnet as mx` (1.9.1), MXNET_SUBGRAPH_BACKEND=NONE,
                     MXNET_CPU_WORKER_NTHREADS=1
  PyTorch            CPU eager (Debian python3-torch): torch.utils.data.DataLoader, cross_entropy,
                     torch.optim.SGD / Adam
Threads, pinning, rounds and medians as bench/train_step_bench.py (whose helpers this uses): each
round runs whole epochs for about --round-seconds; each process's first round warms up. Several
processes per system because one program's speed differs between its processes (two of the C++
loop measured 5 % apart): the Python over C++ target is 10 %.
Targets: hybridnet / MXNet <= 0.67, hybridnet / PyTorch <= 1.0, Python over C++ <= 10 %.
"""
import argparse
import os
import subprocess
import sys

import numpy as np

from train_step_bench import (HERE, close_enough, describe, peer_commands, run_workers, serve,
                              torch_graph_net)

THIS = os.path.abspath(__file__)
DIGITS_SAMPLES = 1797


class Model:
    def __init__(self, name, title, batch, optimizer):
        self.name = name
        self.title = title
        self.batch = batch
        self.optimizer = optimizer  # "name:key=value,...": MXNet's registry name and arguments


MODELS = [
    Model("digits_lenet", "digits LeNet 8x8, batch 64, Adam", 64, "adam:learning_rate=0.001"),
    Model("digits_mlp", "digits MLP 64-128-64-10, batch 64, SGD momentum", 64,
          "sgd:learning_rate=0.1,momentum=0.9"),
    Model("cifar_resnet20_v1", "CIFAR ResNet-20 v1, 512 random samples, batch 128, SGD momentum",
          128, "sgd:learning_rate=0.01,momentum=0.9,wd=0.0001"),
]


def parse_optimizer(spec):
    name, _, pairs = spec.partition(":")
    return name, {k: float(v) for k, v in (p.split("=") for p in pairs.split(",") if p)}


# ---- the digits networks, written once by hybridnet's Gluon (run by its venv's python) ----------

def digits_network(mx, name):
    nn = mx.gluon.nn
    net = nn.HybridSequential(prefix=name + "_")
    with net.name_scope():
        if name == "digits_lenet":
            net.add(nn.Conv2D(20, kernel_size=3, padding=1, activation="relu"),
                    nn.MaxPool2D(pool_size=2, strides=2),
                    nn.Conv2D(50, kernel_size=3, padding=1, activation="relu"),
                    nn.MaxPool2D(pool_size=2, strides=2),
                    nn.Flatten(),
                    nn.Dense(128, activation="relu"),
                    nn.Dense(10))
        else:
            net.add(nn.Dense(128, activation="relu"), nn.Dense(64, activation="relu"),
                    nn.Dense(10))
    return net


def export_digits_networks(folder):
    import hybridnet as mx

    for name in ("digits_lenet", "digits_mlp"):
        mx.random.seed(0)
        net = digits_network(mx, name)
        net.initialize(mx.init.Xavier())
        net.hybridize()
        net(mx.nd.zeros((1, 1, 8, 8)))
        prefix = os.path.join(folder, name)
        net.export(prefix)
        os.makedirs(prefix + ".npy", exist_ok=True)
        for key, param in net.collect_params().items():
            np.save(os.path.join(prefix + ".npy", key + ".npy"), param.data().asnumpy())


# ---- workers (the C++ one is bench/train_epoch_worker.cc) ---------------------------------------
# Their protocol is train_step_bench.serve's with one run an epoch; the check figures: loss=<the
# last batch's losses summed> weight_sq=<the squared weights summed>.

def load_samples(folder):
    return np.load(os.path.join(folder, "data.npy")), np.load(os.path.join(folder, "label.npy"))


def gluon_worker(mx, system, prefix, folder, optimizer, batch):
    """The Gluon training loop, the same text for hybridnet and MXNet (`mx` is either)."""
    net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    loss_fn.hybridize(static_alloc=True, static_shape=True)
    data, label = load_samples(folder)
    loader = mx.gluon.data.DataLoader(mx.gluon.data.ArrayDataset(mx.nd.array(data),
                                                                 mx.nd.array(label)),
                                      batch_size=batch, shuffle=False, last_batch="discard")
    name, kwargs = parse_optimizer(optimizer)
    trainer = mx.gluon.Trainer(net.collect_params(), name, kwargs)
    weights = [p for p in net.collect_params().values() if p.grad_req != "null"]
    state = {}

    def epoch():
        for x, y in loader:
            with mx.autograd.record():
                loss = loss_fn(net(x), y)
            loss.backward()
            trainer.step(batch)
        state["loss"] = loss

    def checks():  # in NumPy's float64
        return {"loss": float(state["loss"].asnumpy().astype(np.float64).sum()),
                "weight_sq": float(sum((w.data().asnumpy().astype(np.float64) ** 2).sum()
                                       for w in weights))}

    serve(system, epoch, mx.nd.waitall, checks)


def hybridnet_worker(prefix, folder, optimizer, batch, threads):
    import hybridnet as mx

    mx.set_num_threads(threads)
    gluon_worker(mx, f"hybridnet {mx.__version__} Python, hybridized static_alloc/static_shape",
                 prefix, folder, optimizer, batch)


def mxnet_worker(prefix, folder, optimizer, batch, threads):
    import warnings

    warnings.filterwarnings("ignore")
    import mxnet as mx

    features = mx.runtime.Features()
    kernels = ", ".join(f for f in ("MKLDNN", "BLAS_OPEN", "BLAS_MKL") if features.is_enabled(f))
    gluon_worker(mx, f"MXNet {mx.__version__} hybridized static_alloc/static_shape ({kernels}; "
                 f"OMP threads {threads})", prefix, folder, optimizer, batch)


def torch_worker(prefix, folder, optimizer, batch, threads):
    import torch
    import torch.nn.functional as F

    net = torch_graph_net(prefix, ["data"], threads)
    data, label = load_samples(folder)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(data), torch.from_numpy(label).long()),
        batch_size=batch, shuffle=False, drop_last=True)
    name, kwargs = parse_optimizer(optimizer)
    if name == "adam":
        opt = torch.optim.Adam(net.parameters(), lr=kwargs["learning_rate"])
    else:
        opt = torch.optim.SGD(net.parameters(), lr=kwargs["learning_rate"],
                              momentum=kwargs.get("momentum", 0), weight_decay=kwargs.get("wd", 0))
    state = {}

    def epoch():
        for x, y in loader:
            opt.zero_grad(set_to_none=True)
            loss = F.cross_entropy(net(x), y, reduction="none")
            loss.mean().backward()
            opt.step()
        state["loss"] = loss

    def checks():
        return {"loss": float(state["loss"].detach().sum()),
                "weight_sq": float(sum((w.detach().double() ** 2).sum()
                                       for w in net.parameters()))}

    serve(f"PyTorch {torch.__version__} eager", epoch, lambda: None, checks)


# ---- the driver ---------------------------------------------------------------------------------

def write_samples(model, folder):
    """The model's samples and class indices as .npy files, the same for every system."""
    os.makedirs(folder, exist_ok=True)
    if model.name.startswith("digits"):
        from sklearn.datasets import load_digits

        digits = load_digits()
        data = (digits.images / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
        label = digits.target.astype(np.float32)
    else:
        rng = np.random.default_rng(7)
        data = rng.standard_normal((512, 3, 32, 32), dtype=np.float32)
        label = rng.integers(0, 10, 512).astype(np.float32)
    np.save(os.path.join(folder, "data.npy"), data)
    np.save(os.path.join(folder, "label.npy"), label)
    return len(label) // model.batch


def write_models(build, folder, hybridnet_python):
    """The digits networks (by hybridnet's Gluon) and ResNet-20 (make_peer_models), once."""
    stamp = os.path.join(folder, "done")
    sources = [THIS, os.path.join(build, "bin", "make_peer_models")]
    if os.path.exists(stamp) and all(os.path.getmtime(stamp) >= os.path.getmtime(s)
                                     for s in sources if os.path.exists(s)):
        return
    os.makedirs(folder, exist_ok=True)
    subprocess.run([os.path.join(build, "bin", "make_peer_models"), folder,
                    os.path.join(HERE, "..", "tests", "data", "mxnet"), "cifar_resnet20_v1"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([hybridnet_python, THIS, "--export", folder], check=True)
    open(stamp, "w").close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--round-seconds", type=float, default=2.0)
    parser.add_argument("--models", default=",".join(m.name for m in MODELS))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--systems", default="hybridnet,hybridnet C++,MXNet,PyTorch")
    parser.add_argument("--mxnet",
                        default=os.path.expanduser("~/.cache/hybridnet/mxnet-1.9.1/bin/python"))
    parser.add_argument("--torch-python", default="/usr/bin/python3")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    wanted = args.systems.split(",")

    describe(build)
    hn_python = os.path.join(build, "bindings", "python", "venv", "bin", "python")
    worker = os.path.join(build, "bin", "train_epoch_worker")
    for needed, how in ((hn_python, "the Python package (ninja hybridnet_python)"),
                        (worker, "ninja train_epoch_worker"),
                        (os.path.join(build, "bin", "make_peer_models"), "ninja make_peer_models")):
        if not os.path.exists(needed):
            print(f"SKIPPED: no {needed} ({how} builds it)")
            return
    folder = os.path.join(build, "bench_models", "train_epoch")
    write_models(build, folder, hn_python)

    commands = {"hybridnet": ([hn_python, THIS, "--worker", "hybridnet"], {}),
                "hybridnet C++": ([worker], {})}
    commands.update(peer_commands(THIS, args.mxnet, args.torch_python))
    commands = {s: c for s, c in commands.items() if s in wanted}

    models = [m for m in MODELS if m.name in args.models.split(",")]
    try:
        import sklearn  # noqa: F401 - the digits' source
    except ImportError:
        print("digits models: SKIPPED (scikit-learn is not importable by this python; Debian's "
              "python3-sklearn)")
        models = [m for m in models if not m.name.startswith("digits")]
    all_results = []
    for model in models:
        samples = os.path.join(folder, "samples", model.name)
        steps = write_samples(model, samples)
        for threads in (int(t) for t in args.threads.split(",")):
            print(f"\n== {model.title}, {steps} steps an epoch: {threads} thread(s)", flush=True)
            results = run_workers(commands, [os.path.join(folder, model.name), samples,
                                             model.optimizer, str(model.batch), str(threads)],
                                  threads, args.rounds, args.round_seconds,
                                  max(1, min(args.processes, args.rounds)))
            report(results, steps)
            all_results.append((model, threads, steps, results))
    summary(all_results)


SYSTEMS = ("MXNet", "PyTorch", "hybridnet", "hybridnet C++")


def report(results, steps):
    print(f"  1-minute load average {results['load']} (start-end); {results['rounds']} rounds "
          f"in {results['processes']} process(es) per system, each after a warm-up round")
    reference = None
    for system in SYSTEMS:
        r = results.get(system)
        if r is None:
            continue
        if "error" in r:
            print(f"  {system:14s} failed: {r['error']}")
            continue
        c = r["check"]
        agrees = ""
        if reference is None:
            reference = (system, c)
        elif not (close_enough(c["loss"], reference[1]["loss"], 1e-2)
                  and close_enough(c["weight_sq"], reference[1]["weight_sq"], 1e-3)):
            agrees = f"  DIFFERS from {reference[0]}"
        print(f"  {system:14s} {r['median_ms']:9.1f} ms/epoch {r['median_ms'] / steps:8.3f} "
              f"ms/step ({r['steps']} epoch(s) a round)  peak RSS {r['hwm_mb']:5.0f} MB  "
              f"after epoch 1: loss {c['loss']:.6g} |w|^2 {c['weight_sq']:.6g}{agrees}")
        print(f"  {'':14s} {r['name']}")


def summary(all_results):
    def ms(res, system):
        r = res.get(system)
        return r["median_ms"] if r and "error" not in r else None

    def cell(value, fmt):
        return "-" if value is None else fmt % value

    def ratio(a, b):
        return None if a is None or b is None else a / b

    print("\n== training epoch (DataLoader, forward, loss, backward, Trainer.step), medians in ms")
    print(f"{'model':18s} {'thr':>3s} {'hybridnet':>10s} {'hn C++':>9s} {'MXNet':>9s} "
          f"{'PyTorch':>9s} {'hn/MXNet':>9s} {'hn/PyTorch':>10s} {'Py/C++':>7s}  load 1-min")
    verdicts = []
    for model, threads, steps, res in all_results:
        hn, cxx, mxnet, torch = (ms(res, s) for s in ("hybridnet", "hybridnet C++", "MXNet",
                                                     "PyTorch"))
        vs_mxnet, vs_torch, py_cxx = ratio(hn, mxnet), ratio(hn, torch), ratio(hn, cxx)
        print(f"{model.name:18s} {threads:3d} {cell(hn, '%.1f'):>10s} {cell(cxx, '%.1f'):>9s} "
              f"{cell(mxnet, '%.1f'):>9s} {cell(torch, '%.1f'):>9s} {cell(vs_mxnet, '%.3f'):>9s} "
              f"{cell(vs_torch, '%.3f'):>10s} {cell(py_cxx, '%.3f'):>7s}  {res['load']}")
        for label, value, target in (("hn/MXNet", vs_mxnet, 0.67), ("hn/PyTorch", vs_torch, 1.0),
                                     ("Py/C++", py_cxx, 1.10)):
            where = f"  {model.name} at {threads} thread(s): {label}"
            if value is None:
                verdicts.append(f"{where} not measured (a system failed or was skipped)")
            elif value > target:
                verdicts.append(f"{where} {value:.3f} ABOVE TARGET {target}")
    print("(hybridnet: the Python Gluon loop; hn C++: the same loop in C++; Py/C++: their ratio,\n"
          " 1 + the Python per-step overhead; targets: hn/MXNet <= 0.67, hn/PyTorch <= 1.0,\n"
          " Py/C++ <= 1.10)")
    print("\n".join(verdicts) if verdicts else "all ratios within their targets")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--export":
        export_digits_networks(sys.argv[2])
    elif len(sys.argv) == 8 and sys.argv[1] == "--worker":
        kind, prefix, folder, optimizer, batch, threads = sys.argv[2:]
        {"hybridnet": hybridnet_worker, "mxnet": mxnet_worker, "torch": torch_worker}[kind](
            prefix, folder, optimizer, int(batch), int(threads))
    else:
        main()
