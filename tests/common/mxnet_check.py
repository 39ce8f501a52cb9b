"""Graphs run by hybridnet, run again in real MXNet 1.9.1 (exit 77 = skipped when MXNet is absent).

An exporter (hn_export_op_cases: every op conformance case; hn_graph_diff --export: random whole
graphs) writes WORK_DIR/index.json and, per case, the symbol JSON (and .params) as MXNet would
hold them, the input .npy files and hybridnet's outputs:
  {"ops": [...optional: ops that must each have a checked case...],
   "cases": [{"name", "op", "symbol", "params" (optional), "inputs": [{"name", "file"}],
              "outputs": [files], "mxnet_skip", "mxnet_rtol", "is_train" (optional),
              "gradients" (optional): {"head_grads": [file or null per output],
                                       "grads": [{"name", "file"}], "rtol"}}]}
MXNet loads the same files and runs them on the same inputs as a hybridized Gluon block does (a
CachedOp, inference; its symbolic executor for the graphs a CachedOp refuses: no inputs, or ops
without a gradient). Outputs must have MXNet's dtypes and shapes; float outputs must agree within
the case's mxnet_rtol of the largest output magnitude, integer outputs exactly, NaN with NaN.
A case with "gradients" also runs backward in MXNet's autograd (recording, in the case's mode) with
the same head gradients; the gradients of MXNet's arguments (not its auxiliary states, which
MXNet never differentiates) must agree within the gradient rtol of the largest magnitude.

MXNet's pip wheel has two CPU paths that do not always agree with each other: its MKLDNN kernels
(the default) and its plain kernels (MXNET_MKLDNN_ENABLED=0). Known disagreements: SoftmaxOutput
on inputs of more than two dimensions, 1-D Deconvolution with dilation; _contrib_BatchNormWithReLU
exists only with MKLDNN. Each case runs under both; it passes when it matches either, and the
report names the cases where the two disagree and which one hybridnet follows.

When the index lists "ops", each must have at least one case MXNet checked: an op no case
reaches fails, as does a case marked mxnet_skip whose op has no other checked case.
A case that kills MXNet's process (it has segfaults and SIGFPEs of its own) fails with that as
its finding; the other cases still run.
Usage: mxnet_check.py WORK_DIR EXPORTER [ARGS...]   (runs EXPORTER ARGS... WORK_DIR, then checks)
       mxnet_check.py --worker WORK_DIR OUT_DIR [RESUME_AFTER_CASE]   (runs the cases in this
       process's MXNet)
"""
import json
import os
import shutil
import subprocess
import sys
import time

from real_mxnet import import_or_skip

os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"  # whole-graph rewrites are not the op's semantics
os.environ["MXNET_STORAGE_FALLBACK_LOG_VERBOSE"] = "0"

np, mx = import_or_skip()

MODES = {"mkldnn": "1", "plain": "0"}
MAX_CRASHES = 20
RESTART = 3  # the worker's exit code after recording an MXNet error
WORKER_TIMEOUT = 300  # seconds for one worker's run over the cases (about 20 s normally)


# What MXNet's CachedOp says when it refuses a graph its executor runs: no inputs, an op without
# FGradient or without a backward node it can build (it builds the backward graph up front: sort
# without an axis attribute writes axis="" into _backward_topk), a cross-device copy.
CACHED_OP_REFUSALS = ("There are no inputs in computation graph that require gradients",
                      "didn't register FGradient attribute", "non-differentiable", "_backward_",
                      "kAsync")


def run_graph(sym, arrays, is_train=False):
    """The graph's outputs in MXNet: a CachedOp, as a hybridized Gluon block runs it (nothing
    records: inference, or the training-mode forward when is_train); where MXNet's CachedOp
    refuses the graph, its symbolic executor with grad_req='null', as Module runs it. Ops that must write into their first input
    (_scatter_set_nd checks that output and lhs share memory, which no graph input can) run as
    MXNet's NDArray API runs them, with out= that input."""
    node = json.loads(sym.tojson())["nodes"][-1]
    if node["op"].startswith(("multi_", "preloaded_multi_")) and node["op"].endswith("_update"):
        # MXNet infers the multi-weight update ops' output shapes only from out=, which its
        # optimizers always pass (the weights): run them so, on copies of the inputs (the
        # preloaded_ ones end with lrs and wds).
        inputs = [arrays[n].copy() for n in sym.list_inputs()]
        count = int(node["attrs"]["num_weights"])
        preloaded = node["op"].startswith("preloaded_")
        stride = (len(inputs) - (2 if preloaded else 0)) // count
        targets = [inputs[k * stride].copy() for k in range(count)]
        getattr(mx.nd, node["op"])(*inputs, out=targets, **node["attrs"])
        return targets
    try:
        op = mx.nd.CachedOp(sym)
        args = [arrays[n] for n in sym.list_inputs()]
        if is_train:
            with mx.autograd.train_mode():
                outputs = op(*args)
        else:
            outputs = op(*args)
        return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    except mx.base.MXNetError as cached_error:
        if not any(reason in str(cached_error) for reason in CACHED_OP_REFUSALS):
            raise
        refusal = cached_error
    args = {n: arrays[n] for n in sym.list_arguments()}
    aux = {n: arrays[n] for n in sym.list_auxiliary_states()}
    try:
        executor = sym.bind(mx.cpu(), args=args, aux_states=aux, grad_req="null")
        outputs = executor.forward(is_train=is_train)
        for o in outputs:
            o.wait_to_read()
        return outputs
    except mx.base.MXNetError as e:
        if "outputs[0].dptr_" not in str(e):
            raise refusal from None
    inputs = [arrays[n] for n in sym.list_inputs()]
    fn = getattr(mx.nd._internal, node["op"], None) or getattr(mx.nd, node["op"])
    target = inputs[0].copy()
    fn(target, *inputs[1:], out=target, **node.get("attrs", {}))
    return [target]


def run_backward(sym, arrays, gradients, work, train):
    """MXNet autograd's gradients of the graph's inputs named in `gradients`, given its outputs'
    head gradients, recorded in training mode when `train`: {input name: numpy array}. When MXNet
    refuses the gradient of some input (a label, Embedding's indices), each input is tried
    alone and those it refuses are left out."""
    wanted = [g["name"] for g in gradients["grads"] if g["name"] in sym.list_arguments()]
    try:
        return backward_of(sym, arrays, gradients, work, train, set(wanted))
    except mx.base.MXNetError:
        if len(wanted) < 2:
            raise
    grads = {}
    for name in wanted:
        try:
            grads.update(backward_of(sym, arrays, gradients, work, train, {name}))
        except mx.base.MXNetError:
            pass  # MXNet takes no gradient of this input
    if not grads:
        raise RuntimeError("MXNet refuses the gradient of every input")
    return grads


def backward_of(sym, arrays, gradients, work, train, wanted):
    names = sym.list_inputs()
    args = [arrays[n].copy() for n in names]
    for name, arg in zip(names, args):
        if name in wanted:
            arg.attach_grad()
    op = mx.nd.CachedOp(sym)
    with mx.autograd.record(train_mode=train):
        outputs = op(*args)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    heads, head_grads = [], []
    for output, file in zip(outputs, gradients["head_grads"]):
        if file:
            heads.append(output)
            head_grads.append(mx.nd.array(np.load(os.path.join(work, file)), dtype=output.dtype))
    mx.autograd.backward(heads, head_grads, train_mode=train)
    return {n: a.grad.asnumpy() for n, a in zip(names, args) if n in wanted}


def run_worker(work, out_dir, resume_after):
    """Runs the cases (those after `resume_after`, when given) in this process's MXNet; writes
    each one's outputs, or its error as a line of errors.jsonl. The case under way is named in
    current.txt, so that the parent knows which one a crash of MXNet's process was in. After an
    error the process exits (RESTART): MXNet's state after some errors makes later cases crash
    or hang, so the parent resumes in a fresh process."""
    index = json.load(open(os.path.join(work, "index.json")))
    os.makedirs(out_dir, exist_ok=True)
    names = [c["name"] for c in index["cases"]]
    first = names.index(resume_after) + 1 if resume_after else 0
    for case in index["cases"][first:]:
        if case["mxnet_skip"]:
            continue
        with open(os.path.join(out_dir, "current.txt"), "w") as f:
            f.write(case["name"])
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
            outputs = run_graph(sym, arrays, case.get("is_train", False))
            for i, o in enumerate(outputs):
                np.save(os.path.join(out_dir, f"{case['name']}-out{i}.npy"), o.asnumpy())
        except Exception as e:  # noqa: BLE001 - MXNet rejecting the case is a finding
            record_error(out_dir, case["name"], last_line(e))
            sys.exit(RESTART)
        if not case.get("gradients"):
            continue
        try:
            grads = run_backward(sym, arrays, case["gradients"], work, case.get("is_train", False))
            for name, g in grads.items():
                np.save(os.path.join(out_dir, f"{case['name']}-grad-{name}.npy"), g)
        except Exception as e:  # noqa: BLE001 - MXNet rejecting the backward is a finding
            record_error(out_dir, case["name"], "backward: " + last_line(e))
            sys.exit(RESTART)
    os.remove(os.path.join(out_dir, "current.txt"))


def last_line(error):
    lines = [ln for ln in str(error).strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else type(error).__name__


def record_error(out_dir, name, message):
    with open(os.path.join(out_dir, "errors.jsonl"), "a") as f:
        f.write(json.dumps({"name": name, "error": message}) + "\n")


def run_mode(work, mode, flag):
    """Every case in one MXNet CPU path; a case that crashes MXNet's process is recorded as such
    and the run resumes after it. Returns {case: error}, or None when the worker fails."""
    env = dict(os.environ, MXNET_MKLDNN_ENABLED=flag)
    out_dir = os.path.join(work, "mxnet-" + mode)
    resume_after = ""
    crashes = 0
    while True:
        try:
            w = subprocess.run([sys.executable, __file__, "--worker", work, out_dir, resume_after],
                               env=env, capture_output=True, text=True, timeout=WORKER_TIMEOUT)
            outcome, stderr = f"died (exit code {w.returncode})", w.stderr
        except subprocess.TimeoutExpired as e:  # MXNet can hang after a crash of its own
            outcome, stderr = f"hung ({WORKER_TIMEOUT} s)", str(e.stderr)
        current = os.path.join(out_dir, "current.txt")
        if outcome == "died (exit code 0)" and not os.path.exists(current):
            break
        if not os.path.exists(current):
            print(f"FAIL: the MXNet worker ({mode}) failed: {stderr.strip()[-2000:]}")
            return None
        resume_after = open(current).read()
        os.remove(current)
        if outcome == f"died (exit code {RESTART})":
            continue  # the error is recorded; go on in a fresh process
        record_error(out_dir, resume_after, f"MXNet's process {outcome}")
        crashes += 1
        if crashes > MAX_CRASHES:
            print(f"FAIL: the MXNet worker ({mode}) crashed more than {MAX_CRASHES} times")
            return None
    errors = {}
    path = os.path.join(out_dir, "errors.jsonl")
    if os.path.exists(path):
        for line in open(path):
            entry = json.loads(line)
            errors[entry["name"]] = entry["error"]
    return errors


def compare(ours, ref, rtol):
    """None when ours matches MXNet's ref, else a description of the difference."""
    if ours.shape != ref.shape:
        return f"shape {ours.shape} vs MXNet {ref.shape}"
    if ours.dtype != ref.dtype:
        return f"dtype {ours.dtype} vs MXNet {ref.dtype}"
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
    gradients = case.get("gradients") or {"grads": []}
    for g in gradients["grads"]:
        ref_path = os.path.join(mode_dir, f"{case['name']}-grad-{g['name']}.npy")
        if not os.path.exists(ref_path):
            continue  # an auxiliary state, or an input MXNet refuses to differentiate
        d = compare(np.load(os.path.join(work, g["file"])), np.load(ref_path), gradients["rtol"])
        if d:
            problems.append(f"gradient of {g['name']}: {d}")
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
        errors[mode] = run_mode(work, mode, flag)
        if errors[mode] is None:
            return 1

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
    n_gradients = sum(1 for c in index["cases"] if c.get("gradients") and c["name"] not in failures)
    n_skipped = sum(len(v) for v in skipped.values())
    print(f"{n_cases - len(failures) - n_skipped} of {n_cases} cases match MXNet {mx.__version__} "
          f"({n_gradients} of them with their gradients) "
          f"({len(split)} where its MKLDNN and plain CPU paths disagree, {n_skipped} not "
          f"comparable); {len(checked)} of {len(index.get('ops', checked))} ops checked; {len(failures)} "
          f"cases failed; {len(unchecked)} ops unchecked ({time.time() - start:.1f} s)")
    return 1 if failures or unchecked else 0


if __name__ == "__main__":
    if sys.argv[1] == "--worker":
        run_worker(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
    else:
        sys.exit(main(sys.argv[1], sys.argv[2:]))
