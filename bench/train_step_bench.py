"""One training step (forward + backward, no optimizer update) of hybridnet against MXNet 1.9.1
hybridized and PyTorch CPU eager, at 1 and 2 threads, within one run (issue 34's benchmark):

  resnet18_v1        ResNet-18 v1 (gluon model zoo), batch 32, 3x224x224, 1000 classes
  cifar_resnet20_v1  CIFAR ResNet-20 v1 (GluonCV), batch 128, 3x32x32, 10 classes
  seed_mlp           the seed MLP 512-256(relu)-128(relu)-2, batch 256
  lstm_lm            2-layer LSTM language model as MXNet's word_language_model example sizes it:
                     vocabulary 10000, embedding 200, hidden 200, 35 steps x batch 20, no dropout

    train_step_bench.py BUILD_DIR [--rounds 9] [--heavy-rounds 5] [--models a,b] [--threads 1,2]

Every system runs the same graph with the same weights: bench/make_peer_models writes each model
(MXNet's symbol.json + params, and the parameters as .npy), hybridnet runs it as a SymbolBlock
(train_step_worker), MXNet as SymbolBlock.imports, PyTorch through bench/peer/torch_graph.py (the
graph's ops as torch functions, weights as nn.Parameters, RNN as torch.nn.LSTM). Inputs and
one-hot labels are the same .npy files. The step: under recording, out = net(inputs); loss =
-sum(log_softmax(out, -1) * onehot, -1) per sample; backward of the loss (head gradient ones),
every weight's gradient written (BatchNorm in training mode: batch statistics). The hybridized
systems (hybridnet and MXNet) compute the loss in a loss block of their own (HybridBlock,
hybridized with static_alloc and static_shape, as Gluon users hybridize their loss and as
train_epoch_bench.py does); hybridnet eager and PyTorch compute it op by op.

Systems, each in a worker process of its own, fresh per model and thread count:
  hybridnet          hybridized (static_alloc, static_shape), autograd::Record + Backward; the
                     loss a hybridized block too
  hybridnet eager    the same blocks not hybridized (op by op on the tape)
  MXNet              1.9.1 SymbolBlock and loss block hybridized with static_alloc=True,
                     static_shape=True, MXNET_SUBGRAPH_BACKEND=NONE, MXNET_CPU_WORKER_NTHREADS=1
  MXNet ops loss     the same, but the loss op by op (mx.nd) as scripts often write it: MXNet
                     1.9.1 runs the LSTM LM's step faster this way, so hn/MXNet is taken against
                     the faster of the two MXNet systems
  PyTorch            CPU eager (Debian python3-torch), gradients set to None before each step
  FMA floor          networks of dense layers only (the seed MLP): the multiply-adds of the step's
                     matrix products at the CPU's FMA peak, fused multiply-adds of its widest
                     vectors in registers, no memory traffic (train_step_worker --fma-floor):
                     floor/MXNet is the least hn/MXNet any framework could reach on this CPU
Threads: OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = MKL_NUM_THREADS = n for everyone, plus
hybridnet::SetNumThreads(n) and torch.set_num_threads(n); at 1 thread every worker is pinned to
the same CPU. Rounds alternate the systems (the order rotates each round), each turn after a pause
of SETTLE_SECONDS for the last worker's threads to stop spinning; each round runs enough steps for
about --round-seconds; the first round warms up. Figures are medians over rounds.
Memory: each worker's peak resident set (VmHWM) after warm-up and every round, and its growth
over the resident set it had before its first step (the model and inputs loaded).
Targets: hybridnet / MXNet <= 0.67, hybridnet / PyTorch <= 1.0, peak memory <= MXNet's.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
THIS = os.path.abspath(__file__)


class Model:
    def __init__(self, name, title, inputs, classes, rounds_key="rounds", dense=False):
        self.name = name
        self.title = title
        self.inputs = inputs  # [(name, shape, kind)]: kind "normal", "tokens" or "zeros"
        self.classes = classes
        self.rounds_key = rounds_key
        self.dense = dense  # dense layers only: the FMA floor is measured

    def output_shape(self):
        data = self.inputs[0][1]
        return tuple(data[:2]) + (self.classes,) if self.inputs[0][2] == "tokens" else (
            data[0], self.classes)


VOCAB, EMBED, HIDDEN, LAYERS, STEPS, BATCH = 10000, 200, 200, 2, 35, 20  # make_peer_models' lstm_lm
MODELS = [
    Model("resnet18_v1", "ResNet-18 v1, batch 32, 3x224x224",
          [("data", (32, 3, 224, 224), "normal")], 1000, "heavy_rounds"),
    Model("cifar_resnet20_v1", "CIFAR ResNet-20 v1, batch 128, 3x32x32",
          [("data", (128, 3, 32, 32), "normal")], 10),
    Model("seed_mlp", "seed MLP 512-256-128-2, batch 256", [("data", (256, 512), "normal")], 2,
          dense=True),
    Model("lstm_lm", f"LSTM LM {LAYERS}x{HIDDEN}, vocab {VOCAB}, seq {STEPS} x batch {BATCH}",
          [("data", (STEPS, BATCH), "tokens"), ("state", (LAYERS, BATCH, HIDDEN), "zeros"),
           ("state_cell", (LAYERS, BATCH, HIDDEN), "zeros")], VOCAB),
]


# ---- workers: MXNet and PyTorch (the hybridnet one is bench/train_step_worker.cc) ---------------
# Protocol, on stdout: "name=<system>", then "check <key>=<value>... first_ms=<first step>"
# after a first step (here loss=<sum of the losses> grad_sq=<sum of the squared gradients>), or
# "error=<why>" and exit; then, for each line "N" on stdin, N steps and their mean in
# milliseconds; for "mem", the peak and the starting resident set in kB. bench/train_epoch_bench.py
# serves epochs the same way (and bench/train_worker_common.h in C++).

def memory_kb():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                fields[key] = int(value.split()[0])
    return fields["VmHWM"], fields["VmRSS"]


def kernel_libraries():
    """The BLAS, oneDNN and OpenMP libraries this process has loaded (their file names)."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            base = os.path.basename(path)
            kinds = ("blas", "dnnl", "mkldnn", "omp", "mkl_")
            if base.startswith("lib") and any(k in base for k in kinds):
                found.add(base)
    return ", ".join(sorted(found)) or "none found"


def serve(name, step, wait, checks):
    print(f"name={name}; loaded: {kernel_libraries()}", flush=True)
    base_kb = memory_kb()[1]
    try:
        start = time.perf_counter()
        step()
        wait()
        first_ms = (time.perf_counter() - start) * 1e3
        figures = " ".join(f"{key}={value:.9g}" for key, value in checks().items())
    except Exception as e:  # noqa: BLE001 - reported to the driver, which shows it in the table
        print(f"error={type(e).__name__}: " + " ".join(str(e).split()), flush=True)
        sys.exit(3)
    print(f"check {figures} first_ms={first_ms:.3f}", flush=True)
    for line in sys.stdin:
        if line.strip() == "mem":
            print(f"{memory_kb()[0]} {base_kb}", flush=True)
            continue
        count = int(line)
        wait()
        start = time.perf_counter()
        for _ in range(count):
            step()
        wait()
        print("%.4f" % ((time.perf_counter() - start) * 1e3 / count), flush=True)


def load_inputs(folder, names):
    return [np.load(os.path.join(folder, n + ".npy")) for n in names], np.load(
        os.path.join(folder, "label.npy"))


def torch_graph_net(prefix, names, threads):
    """The export PREFIX (its parameters as PREFIX.npy/*.npy) as a trainable PyTorch module in
    training mode (peer/torch_graph.py), with PyTorch on `threads` threads."""
    import json

    import torch

    sys.path.insert(0, os.path.join(HERE, "peer"))
    from torch_graph import MXNetGraph

    torch.set_num_threads(threads)
    torch.set_num_interop_threads(1)
    npy = prefix + ".npy"
    params = {f[:-4]: np.load(os.path.join(npy, f)) for f in os.listdir(npy)}
    with open(prefix + "-symbol.json") as f:
        return MXNetGraph(json.load(f), params, names, trainable=True).train()


def torch_worker(prefix, folder, names, threads):
    import torch
    import torch.nn.functional as F

    net = torch_graph_net(prefix, names, threads)
    weights = list(net.parameters())
    arrays, label = load_inputs(folder, names)
    inputs = [torch.from_numpy(a) for a in arrays]
    onehot = torch.from_numpy(label)
    state = {}

    def step():
        for w in weights:
            w.grad = None
        loss = -(F.log_softmax(net(*inputs), -1) * onehot).sum(-1)
        loss.sum().backward()
        state["loss"] = loss

    def checks():
        return {"loss": float(state["loss"].detach().sum()),
                "grad_sq": float(sum((w.grad.double() ** 2).sum() for w in weights))}

    capability = [line.split(":", 1)[1].strip() for line in torch.__config__.show().splitlines()
                  if "CPU capability usage" in line]
    serve(f"PyTorch {torch.__version__} eager (oneDNN {torch.backends.mkldnn.is_available()}, "
          f"CPU capability {capability[0] if capability else '?'})", step, lambda: None, checks)


def mxnet_worker(prefix, folder, names, threads, loss_by_ops=False):
    import warnings

    warnings.filterwarnings("ignore")
    import mxnet as mx

    class OneHotCrossEntropy(mx.gluon.HybridBlock):
        """-sum(log_softmax(out, -1) * onehot, -1) per sample: train_step_worker.cc's loss
        block."""

        def hybrid_forward(self, F, out, onehot):
            return -F.sum(F.log_softmax(out, axis=-1) * onehot, axis=-1)

    net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", names, prefix + "-0000.params")
    net.hybridize(static_alloc=True, static_shape=True)
    loss_block = OneHotCrossEntropy()
    loss_block.hybridize(static_alloc=True, static_shape=True)
    weights = [p for p in net.collect_params().values() if p.grad_req != "null"]
    arrays, label = load_inputs(folder, names)
    inputs = [mx.nd.array(a) for a in arrays]
    onehot = mx.nd.array(label)
    state = {}

    def step():
        with mx.autograd.record():
            out = net(*inputs)
            loss = (-(mx.nd.log_softmax(out, axis=-1) * onehot).sum(axis=-1) if loss_by_ops
                    else loss_block(out, onehot))
        loss.backward()
        state["loss"] = loss

    def checks():
        return {"loss": float(state["loss"].sum().asscalar()),
                "grad_sq": float(sum((w.grad().astype("float64") ** 2).sum().asscalar()
                                     for w in weights))}

    features = mx.runtime.Features()
    kernels = ", ".join(f for f in ("MKLDNN", "BLAS_OPEN", "BLAS_MKL") if features.is_enabled(f))
    serve(f"MXNet {mx.__version__} hybridized static_alloc/static_shape ({kernels}; "
          f"OMP threads {threads})", step, mx.nd.waitall, checks)


# ---- the driver ---------------------------------------------------------------------------------

class WorkerError(Exception):
    pass


class Worker:
    """A process that runs `count` steps when asked and answers with milliseconds per step."""

    def __init__(self, command, threads, cpus, env=None):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads), **(env or {}))
        self.stderr = tempfile.TemporaryFile("w+")  # a file: a pipe nobody reads could fill up
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr, text=True, env=env,
                                        preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        self.name = command[0]
        self.check = None
        for line in self.process.stdout:
            line = line.strip()
            if line.startswith("name="):
                self.name = line[5:]
            elif line.startswith("error="):
                self.close()
                raise WorkerError(line[6:])
            elif line.startswith("check "):
                self.check = {k: float(v) for k, v in (f.split("=") for f in line[6:].split())}
                break
        if self.check is None:
            raise self.died()

    def died(self):
        """The error of a worker that stopped answering."""
        self.process.kill()
        code = self.process.wait()
        self.stderr.seek(0)
        err = self.stderr.read().strip().splitlines()
        self.stderr.close()
        return WorkerError(f"exit {code}" + (f": {err[-1]}" if err else ""))

    def ask(self, line):
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise self.died() from None
        answer = self.process.stdout.readline()
        if not answer:
            raise self.died()
        return answer

    def run(self, count):
        return float(self.ask(str(count)))

    def memory_mb(self):
        hwm, base = (int(v) for v in self.ask("mem").split())
        return hwm / 1024, (hwm - base) / 1024

    def close(self):
        self.process.stdin.close()
        self.process.wait()
        self.stderr.close()


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def isa_flags():
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    wanted = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16",
              "amx_int8")
    return " ".join(f"{w}{'+' if w in flags else '-'}" for w in wanted)


def make_models(build, folder):
    maker = os.path.join(build, "bin", "make_peer_models")
    stamp = os.path.join(folder, "done")
    if os.path.exists(stamp) and (not os.path.exists(maker)
                                  or os.path.getmtime(stamp) >= os.path.getmtime(maker)):
        return
    subprocess.run([maker, folder, os.path.join(ROOT, "tests", "data", "mxnet")] +
                   [m.name for m in MODELS], check=True, stdout=subprocess.DEVNULL)
    open(stamp, "w").close()


def make_inputs(model, folder):
    """The model's inputs and one-hot labels as .npy files, the same for every system."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(7)
    for name, shape, kind in model.inputs:
        if kind == "normal":
            value = rng.standard_normal(shape, dtype=np.float32)
        elif kind == "tokens":
            value = rng.integers(0, model.classes, shape).astype(np.float32)
        else:
            value = np.zeros(shape, np.float32)
        np.save(os.path.join(folder, name + ".npy"), value)
    shape = model.output_shape()
    labels = rng.integers(0, model.classes, shape[:-1])
    np.save(os.path.join(folder, "label.npy"), np.eye(model.classes, dtype=np.float32)[labels])


def close_enough(a, b, rtol):
    return abs(a - b) <= rtol * max(abs(a), abs(b), 1e-30)


def bench_model(model, threads, args, commands, folder):
    """Runs every system on `model` at `threads`; returns {system: result dict}."""
    inputs = os.path.join(folder, "inputs", model.name)
    make_inputs(model, inputs)
    names = ",".join(n for n, _, _ in model.inputs)
    prefix = os.path.join(folder, model.name)
    commands = {s: c for s, c in commands.items() if s != FLOOR or model.dense}
    return run_workers(commands, [prefix, inputs, names, str(threads)], threads,
                       getattr(args, model.rounds_key), args.round_seconds)


# The pause before each system's turn: the worker that ran before leaves its threads spinning for
# a while (PyTorch's at 2 threads slowed the next system's round by 14 %).
SETTLE_SECONDS = 0.5


def run_rounds(workers, results, rounds, round_seconds):
    """A warm-up round, which plans the runs a round of about round_seconds takes, then `rounds`
    timed rounds of `workers`, taking turns in a rotating order; appends to results[system]["ms"]
    and sets "steps" (runs a round), or "error"."""
    counts = {s: max(1, round(round_seconds * 1e3 / w.check["first_ms"]))
              for s, w in workers.items()}
    order = list(workers)
    for round_index in range(-1, rounds):  # round -1 warms up
        shift = round_index % max(1, len(order))
        for system in order[shift:] + order[:shift]:
            if "error" in results[system]:
                continue
            time.sleep(SETTLE_SECONDS)
            try:
                ms = workers[system].run(counts[system])
            except WorkerError as e:
                results[system] = {"error": str(e)}
                continue
            if round_index >= 0:
                results[system]["ms"].append(ms)
            else:  # runs per round from the warm-up round: the first run also plans
                counts[system] = max(1, round(round_seconds * 1e3 / ms))
                results[system]["steps"] = counts[system]


def run_workers(commands, worker_args, threads, rounds, round_seconds, processes=1):
    """Starts a worker per system (its command + worker_args; all pinned to one CPU at one
    thread), times `rounds` rounds of about `round_seconds` each, the systems taking turns in a
    rotating order after a warm-up round, and closes them. With `processes` > 1 the rounds are
    split between that many sets of workers started one after another: one program's speed
    differs between two of its processes (where their memory lands; two processes of the same
    C++ training loop, alternating, measured 5 % apart on a Zen 5), so medians over several
    processes compare systems rather than placements. Returns {system: result dict} (the name,
    check figures, per-round milliseconds, their median, runs a round, peak memory; or the
    error), "load" and "rounds"."""
    cpus = {min(os.sched_getaffinity(0))} if threads == 1 else os.sched_getaffinity(0)
    results = {"load_start": load_average().split()[0]}
    per_set = -(-rounds // processes)
    for first_round in range(0, rounds, per_set):
        workers = {}
        for system, (command, env) in commands.items():
            if "error" in results.get(system, {}):
                continue
            try:
                workers[system] = Worker(command + worker_args, threads, cpus, env)
            except WorkerError as e:
                results[system] = {"error": str(e)}
                continue
            results.setdefault(system, {"name": workers[system].name,
                                        "check": workers[system].check, "ms": [], "hwm_mb": 0,
                                        "grew_mb": 0})
        run_rounds(workers, results, min(per_set, rounds - first_round), round_seconds)
        for system, w in workers.items():
            r = results[system]
            if "error" not in r:
                hwm_mb, grew_mb = w.memory_mb()
                r["hwm_mb"], r["grew_mb"] = max(r["hwm_mb"], hwm_mb), max(r["grew_mb"], grew_mb)
            w.close()
    for system in commands:
        r = results.get(system)
        if r is not None and "error" not in r:
            r["median_ms"] = float(np.median(r["ms"]))
    results["load"] = f"{results['load_start']}-{load_average().split()[0]}"
    results["rounds"], results["processes"] = rounds, -(-rounds // per_set)
    return results


def describe(build):
    print("== machine")
    describe_tool = os.path.join(build, "bin", "peer_bench")
    if os.path.exists(describe_tool):
        subprocess.run([describe_tool, "--describe"], check=False)
    else:
        print(f"(no {describe_tool}: OpenBLAS/oneDNN settings not printed)")
    print(f"ISA flags: {isa_flags()}")
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}; "
          f"{os.cpu_count()} logical CPUs; load average {load_average()} (other processes share "
          "them)")


def peer_commands(script, mxnet_python, torch_python):
    """The MXNet and PyTorch workers (`script --worker mxnet|torch`), system -> (command, extra
    environment), for the Pythons that import them; a SKIPPED line for each that does not."""
    def imports(python, module):
        return os.path.exists(python) and subprocess.run(
            [python, "-c", "import " + module], capture_output=True).returncode == 0

    commands = {}
    if imports(mxnet_python, "mxnet"):
        mxnet_env = {"MXNET_SUBGRAPH_BACKEND": "NONE", "MXNET_CPU_WORKER_NTHREADS": "1"}
        commands["MXNet"] = ([mxnet_python, script, "--worker", "mxnet"], mxnet_env)
        commands["MXNet ops loss"] = ([mxnet_python, script, "--worker", "mxnet-ops-loss"],
                                      mxnet_env)
    else:
        print(f"MXNet 1.9.1: SKIPPED (not importable by {mxnet_python}; scripts/setup-mxnet.sh "
              "installs it)")
    if imports(torch_python, "torch"):
        commands["PyTorch"] = ([torch_python, script, "--worker", "torch"], {})
    else:
        print(f"PyTorch: SKIPPED (not importable by {torch_python}; Debian's python3-torch, "
              "which make bench installs)")
    return commands


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--heavy-rounds", type=int, default=5,
                        help="rounds for ResNet-18 (one step takes seconds on 2 cores)")
    parser.add_argument("--round-seconds", type=float, default=1.0)
    parser.add_argument("--models", default=",".join(m.name for m in MODELS))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--systems",
                        default=f"hybridnet,hybridnet eager,MXNet,MXNet ops loss,PyTorch,{FLOOR}")
    parser.add_argument("--mxnet",
                        default=os.path.expanduser("~/.cache/hybridnet/mxnet-1.9.1/bin/python"))
    parser.add_argument("--torch-python", default="/usr/bin/python3")
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    wanted = args.systems.split(",")

    describe(build)
    folder = os.path.join(build, "bench_models", "train")
    make_models(build, folder)
    worker = os.path.join(build, "bin", "train_step_worker")
    commands = {}  # system -> (command, extra environment)
    if os.path.exists(worker):
        commands["hybridnet"] = ([worker], {})
        commands["hybridnet eager"] = ([worker, "--eager"], {})
        commands[FLOOR] = ([worker, "--fma-floor"], {})
    else:
        print(f"hybridnet: SKIPPED (no {worker}; ninja -C {args.build} train_step_worker "
              "builds it)")
    commands.update(peer_commands(THIS, args.mxnet, args.torch_python))
    commands = {s: c for s, c in commands.items() if s in wanted}

    models = [m for m in MODELS if m.name in args.models.split(",")]
    all_results = []
    for model in models:
        for threads in (int(t) for t in args.threads.split(",")):
            print(f"\n== {model.title}: {threads} thread(s)", flush=True)
            results = bench_model(model, threads, args, commands, folder)
            report(model, threads, results)
            all_results.append((model, threads, results))
    summary(all_results)


DESCRIBED = set()  # (system, threads) whose description report() printed
FLOOR = "FMA floor"  # train_step_worker --fma-floor, for networks of dense layers


def report(model, threads, results):
    print(f"  1-minute load average {results['load']} (start-end); {results['rounds']} rounds "
          "after a warm-up round")
    reference = None
    for system in ("MXNet", "MXNet ops loss", "PyTorch", "hybridnet", "hybridnet eager", FLOOR):
        r = results.get(system)
        if r is None:
            continue
        if "error" in r:
            label = "not yet" if system.startswith("hybridnet") else "failed"
            print(f"  {system:16s} {label}: {r['error']}")
            continue
        c = r["check"]
        agrees = ""
        if system == FLOOR:
            agrees = "  (the chains' own figures)"
        elif reference is None:
            reference = (system, c)
        elif not (close_enough(c["loss"], reference[1]["loss"], 1e-3)
                  and close_enough(c["grad_sq"], reference[1]["grad_sq"], 1e-2)):
            agrees = f"  DIFFERS from {reference[0]}"
        print(f"  {system:16s} {r['median_ms']:10.2f} ms/step ({r['steps']} step(s) a round)  "
              f"peak RSS {r['hwm_mb']:7.0f} MB (+{r['grew_mb']:.0f} MB over loaded)  "
              f"loss {c['loss']:.6g} |grad|^2 {c['grad_sq']:.6g}{agrees}")
        if (system, threads) not in DESCRIBED:
            DESCRIBED.add((system, threads))
            print(f"  {'':16s} {r['name']}")


def summary(all_results):
    def cell(results, system, key, fmt):
        r = results.get(system)
        if r is None:
            return "-"
        if "error" in r:
            return "not yet" if system.startswith("hybridnet") else "failed"
        return fmt % r[key]

    def ratio(results, a, b, key="median_ms"):
        ra, rb = results.get(a), results.get(b)
        if not ra or not rb or "error" in ra or "error" in rb:
            return "-"
        return "%.3f" % (ra[key] / rb[key])

    def faster_mxnet(results):
        """The faster of the two MXNet systems: hn/MXNet is taken against it."""
        timed = [s for s in ("MXNet", "MXNet ops loss")
                 if results.get(s) and "error" not in results[s]]
        return min(timed, key=lambda s: results[s]["median_ms"]) if timed else "MXNet"

    print("\n== training step (forward + backward), medians in ms; memory: peak RSS in MB")
    print(f"{'model':18s} {'thr':>3s} {'hybridnet':>10s} {'hn eager':>10s} {'MXNet':>10s} "
          f"{'MX ops':>10s} {'PyTorch':>10s} {'hn/MXNet':>9s} {'hn/PyTorch':>10s} "
          f"{'RSS hn':>7s} {'RSS MX':>7s} {'hn/MX mem':>9s} {'(step)':>7s} {'floor':>7s} "
          f"{'floor/MX':>8s}  load 1-min")
    for model, threads, res in all_results:
        mx = faster_mxnet(res)
        print(f"{model.name:18s} {threads:3d} {cell(res, 'hybridnet', 'median_ms', '%.2f'):>10s} "
              f"{cell(res, 'hybridnet eager', 'median_ms', '%.2f'):>10s} "
              f"{cell(res, 'MXNet', 'median_ms', '%.2f'):>10s} "
              f"{cell(res, 'MXNet ops loss', 'median_ms', '%.2f'):>10s} "
              f"{cell(res, 'PyTorch', 'median_ms', '%.2f'):>10s} "
              f"{ratio(res, 'hybridnet', mx):>9s} {ratio(res, 'hybridnet', 'PyTorch'):>10s} "
              f"{cell(res, 'hybridnet', 'hwm_mb', '%.0f'):>7s} "
              f"{cell(res, mx, 'hwm_mb', '%.0f'):>7s} "
              f"{ratio(res, 'hybridnet', mx, 'hwm_mb'):>9s} "
              f"{ratio(res, 'hybridnet', mx, 'grew_mb'):>7s} "
              f"{cell(res, FLOOR, 'median_ms', '%.2f'):>7s} {ratio(res, FLOOR, mx):>8s}  "
              f"{res['load']}")
    print("(hybridnet: hybridized; MXNet: net and loss hybridized; MX ops: MXNet with the loss op "
          "by op;\n hn/MXNet and the memory ratios against the faster of the two; RSS: peak "
          "resident set (VmHWM)\n of each worker process; (step): the same ratio of the peaks' "
          "growth over the resident set before\n the first step; floor: the multiply-adds of "
          "the dense networks' matrix products at the\n CPU's FMA peak (no memory, bias, "
          "activation, loss or framework), floor/MX: the least hn/MXNet\n any framework could "
          "reach on this CPU; targets: hn/MXNet <= 0.67, hn/PyTorch <= 1.0, hn/MX mem <= 1.0)")
    for model, threads, res in all_results:
        r = res.get("hybridnet")
        if r and "error" in r:
            print(f"  {model.name} at {threads} thread(s), hybridnet not yet: {r['error']}")


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "--worker":
        kind, prefix, folder, names, threads = sys.argv[2:]
        workers = {"torch": torch_worker, "mxnet": mxnet_worker,
                   "mxnet-ops-loss": lambda *a: mxnet_worker(*a, loss_by_ops=True)}
        workers[kind](prefix, folder, names.split(","), int(threads))
    else:
        main()
