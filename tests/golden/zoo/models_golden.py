"""Whole GluonCV / GluonNLP / gluon.rnn models, exported by real MXNet 1.9.1, run in hybridnet
(exit 77 = skipped when MXNet, GluonCV or GluonNLP is missing; scripts/setup-mxnet.sh installs
them).

For every model of gluon_models.MODELS: MXNet builds it (pretrained=False, random Xavier weights,
random BatchNorm statistics scaled to each layer's input, see scale_batchnorm), hybridizes it,
runs it on fixed random inputs and exports
OUT_DIR/NAME-symbol.json + NAME-0000.params, with the inputs (NAME-input-K.npy) and its outputs
(NAME-mxnet-K.npy). hybridnet (zoo_runner run) imports the same files and runs them eagerly and
hybridized, and through `hybridnet run` (the CLI, with every input named) when it has several
inputs or outputs: every output must be within RTOL of MXNet's (relative to its largest magnitude,
dtypes and shapes equal, NaN where MXNet has NaN); eager, hybridized and the CLI must agree bit
for bit.
Outputs are compared in MXNet's order: detections are sorted by MXNet's own box_nms, which
hybridnet follows, ties included. The final detections (ids, scores, boxes) of every detector are
compared like any other output; the scaled BatchNorm statistics keep the class scores distinct.
OUT_DIR/results.json holds each model's figures; OUT_DIR/models.txt lists the exports for the
cross-language test (a line per model: NAME runs|fails NUM_OUTPUTS INPUT.npy...). The README's
compatibility section is checked against the results: same models, families, sources and
statuses, and each listed difference within a factor of 10 of the measured one (the figures move
in their last digits between MXNet builds). `--write-readme` rewrites that section instead.
A model of KNOWN_FAILURES must fail with its reason given; one that passes fails the run, so the
list cannot go stale.
Usage: models_golden.py ZOO_RUNNER OUT_DIR README.md [--write-readme] [--only NAME ...]
"""
import json
import math
import os
import re
import sys
import time

os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"  # MXNet's plain graph is the reference

missing = []
try:
    import warnings
    warnings.filterwarnings("ignore")
    import numpy as np
    import mxnet as mx
except Exception as e:  # noqa: BLE001 - any import failure means "no reference here"
    missing.append(f"mxnet ({e})")
for module in ("gluoncv", "gluonnlp"):
    try:
        if not missing:
            __import__(module)
    except Exception as e:  # noqa: BLE001
        missing.append(f"{module} ({e})")
if missing:
    print(f"SKIP: {sys.executable} cannot import {', '.join(missing)}; run "
          "scripts/setup-mxnet.sh to install mxnet==1.9.1, gluoncv==0.10.5.post0 and "
          "gluonnlp==0.10.0 for the golden tests")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from gluon_models import MODELS  # noqa: E402
from mxnet_check import compare  # noqa: E402
from zoo_common import flatten, randomize_batchnorm, rel_err, run  # noqa: E402

RTOL = 1e-4
# Models that do not run yet, with the reason (the README's status says the same); none today.
KNOWN_FAILURES = {}
README_BEGIN = "<!-- models_golden.py: begin -->"
README_END = "<!-- models_golden.py: end -->"


class RandomWeights(mx.init.Xavier):
    """Xavier, and uniform [0.5, 1.5) for the vectors GluonCV routes to the weight initializer
    (its SSD's moving_mean / moving_var / gamma / beta; randomize_batchnorm and scale_batchnorm
    set them after)."""

    def _init_weight(self, name, arr):
        if len(arr.shape) < 2:
            arr[:] = mx.nd.random.uniform(0.5, 1.5, arr.shape)
        else:
            super()._init_weight(name, arr)


def scale_batchnorm(net, feeds):
    """Scales each BatchNorm's random moving statistics (randomize_batchnorm's, made for inputs
    of magnitude 1) to the magnitude of that layer's input on `feeds` ({input name: NDArray}):
    the mean by the input's root mean square, the variance by its mean square, as training
    would match them. In graph order, so each layer sees its predecessors already scaled.
    Unscaled, the layers shrink the signal (Xavier's fan average under-scales depthwise
    convolutions) until the BatchNorm shift dominates: SSD's channels end up dead or constant
    over the image and many anchors get equal class scores. One factor per layer, not per
    channel: normalising each channel would blow up the rounding of channels whose sum nearly
    cancels (and of 1x1 feature maps, whose variance is 0), beyond what float32 can compare."""
    sym = mx.sym.Group(flatten(net(*[mx.sym.var(n) for n in feeds])))
    nodes = json.loads(sym.tojson())["nodes"]
    internals = sym.get_internals()
    entries = internals.list_outputs()
    params = net.collect_params()
    for node in nodes:
        if node["op"] != "BatchNorm":
            continue
        source, index = node["inputs"][0][:2]
        name = nodes[source]["name"]
        if nodes[source]["op"] != "null":
            name = [e for e in entries if e.startswith(name + "_output")][index]
        data = internals[entries.index(name)]
        values = {**{n: p.data() for n, p in params.items()}, **feeds}
        x = mx.nd.CachedOp(data)(*[values[n] for n in data.list_inputs()])
        x = (x[0] if isinstance(x, (list, tuple)) else x).asnumpy().astype(np.float64)
        square = float(np.mean(np.square(x)))
        mean, var = (params[nodes[node["inputs"][k][0]]["name"]] for k in (3, 4))
        mean.set_data(mean.data() * math.sqrt(square))
        var.set_data(var.data() * square)


def file_name(name):
    return re.sub(r"[^A-Za-z0-9_.]+", "_", name).strip("_")


def export(name, build, inputs, index, out_dir):
    """MXNet's side: the export files, the inputs and MXNet's outputs. Returns
    (prefix, [(input name, file)], [output files])."""
    rng = np.random.RandomState(1000 + index)
    mx.random.seed(1000 + index)
    net = build()
    net.initialize(RandomWeights())
    net.hybridize()
    arrays, feeds = [], []
    prefix = os.path.join(out_dir, file_name(name))
    for k, (input_name, shape, low, high, integral) in enumerate(inputs):
        value = rng.uniform(low, high, shape)
        value = (np.floor(value) if integral else value).astype(np.float32)
        path = f"{prefix}-input-{k}.npy"
        np.save(path, value)
        arrays.append(mx.nd.array(value))
        feeds.append((input_name, path))
    net(*arrays)  # deferred initialization
    randomize_batchnorm(net, rng)
    scale_batchnorm(net, {n: a for (n, _), a in zip(feeds, arrays)})
    outputs = [o.asnumpy() for o in flatten(net(*arrays))]
    net.export(prefix)
    files = []
    for k, o in enumerate(outputs):
        files.append(f"{prefix}-mxnet-{k}.npy")
        np.save(files[-1], o)
    return prefix, feeds, files


def check_model(runner, prefix, feeds, mxnet_files):
    """hybridnet's side. Returns (eager rel err, hybridized rel err, problems)."""
    out = prefix + "-hn"
    run(runner, "run", prefix, out, *[f"{n}={f}" for n, f in feeds])
    problems, errs = [], {"eager": 0.0, "hybrid": 0.0}
    for k, ref_file in enumerate(mxnet_files):
        ref = np.load(ref_file)
        ours = {m: f"{out}-{m}-{k}.npy" for m in errs}
        if not os.path.exists(ours["eager"]):
            problems.append(f"output {k}: hybridnet gives {k} outputs, MXNet {len(mxnet_files)}")
            break
        values = {m: np.load(f) for m, f in ours.items()}
        for mode, value in values.items():
            d = compare(value, ref, RTOL)
            if d:
                problems.append(f"output {k} {mode}: {d}")
            finite = np.isfinite(ref) & np.isfinite(value) if value.shape == ref.shape else None
            errs[mode] = max(errs[mode], rel_err(value[finite], ref[finite])
                             if finite is not None else math.inf)
        if not np.array_equal(values["eager"], values["hybrid"], equal_nan=True):
            problems.append(f"output {k}: eager and hybridized differ")
    extra = f"{out}-eager-{len(mxnet_files)}.npy"
    if os.path.exists(extra):
        problems.append(f"hybridnet gives more outputs than MXNet's {len(mxnet_files)}")
    return errs["eager"], errs["hybrid"], problems


def check_cli(cli, prefix, feeds, num_outputs):
    """`hybridnet run` (the C API's predictor) with every input named: each output, written by
    --outputs DIR as <output name>.npy, must equal zoo_runner's hybridized one bit for bit. Both
    run on one thread: on CPUs without AVX-512, dense layers run on OpenBLAS, whose products can
    differ in the last bit between thread counts."""
    out_dir = prefix + "-cli"
    inputs = [a for n, f in feeds for a in ("--input", f"{n}={f}")]
    run(cli, "run", prefix, 0, *inputs, "--outputs", out_dir, "--threads", 1)
    names = mx.sym.load(prefix + "-symbol.json").list_outputs()
    problems = []
    for k, output in enumerate(names[:num_outputs]):
        path = os.path.join(out_dir, re.sub(r"[/\\:]", "_", output) + ".npy")
        ours = np.load(f"{prefix}-hn-hybrid-{k}.npy")
        if not os.path.exists(path) or not np.array_equal(np.load(path), ours, equal_nan=True):
            problems.append(f"`hybridnet run` output {k} ({output}) differs from the "
                            "hybridized block's")
    return problems


def figure(value):
    return "0" if value == 0 else f"{value:.0e}"


def readme_rows(results):
    rows = ["| model | family | source | max rel. difference to MXNet (eager / hybridized) "
            "| status |", "|---|---|---|---|---|"]
    for r in results:
        diff = (f"{figure(r['eager'])} / {figure(r['hybrid'])}"
                if r["eager"] is not None else "–")
        rows.append(f"| {r['name']} | {r['family']} | {r['source']} | {diff} | {r['status']} |")
    return rows


def readme_problems(readme, results):
    """What in the README's compatibility table disagrees with these results."""
    text = open(readme).read()
    if README_BEGIN not in text or README_END not in text:
        return [f"{readme} has no section between {README_BEGIN} and {README_END}"]
    body = text.split(README_BEGIN)[1].split(README_END)[0]
    listed = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("model", "---"):
            listed[cells[0]] = cells
    problems = []
    for r in results:
        row = listed.pop(r["name"], None)
        if row is None:
            problems.append(f"{r['name']} is not in the README's table")
            continue
        if row[1:3] != [r["family"], r["source"]] or row[4] != r["status"]:
            problems.append(f"{r['name']}: README says {row}, the run {r}")
            continue
        if r["eager"] is None:
            continue
        try:
            shown = [float(v) for v in row[3].split("/")]
        except ValueError:
            problems.append(f"{r['name']}: README's difference '{row[3]}' is not two numbers")
            continue
        for value, measured in zip(shown, (r["eager"], r["hybrid"])):
            if not (measured <= 10 * value + 1e-12 and value <= 10 * measured + 1e-12):
                problems.append(f"{r['name']}: README's difference {value:g} vs measured "
                                f"{measured:.2g}")
    problems += [f"README lists {n}, which the run does not have" for n in listed]
    return problems


def write_readme(readme, results):
    text = open(readme).read()
    head, rest = text.split(README_BEGIN)
    tail = rest.split(README_END)[1]
    table = "\n".join(readme_rows(results))
    open(readme, "w").write(f"{head}{README_BEGIN}\n{table}\n{README_END}{tail}")


def main(argv):
    runner, out_dir, readme = argv[:3]
    cli = os.path.join(os.path.dirname(runner), "hybridnet")
    options = argv[3:]
    only = options[options.index("--only") + 1:] if "--only" in options else []
    os.makedirs(out_dir, exist_ok=True)
    start = time.time()
    failures, results, manifest = [], [], []
    for index, (name, family, source, build, inputs) in enumerate(MODELS):
        if only and name not in only:
            continue
        t0 = time.time()
        result = {"name": name, "family": family, "source": source, "eager": None,
                  "hybrid": None}
        problems, feeds = [], None
        try:
            prefix, feeds, mxnet_files = export(name, build, inputs, index, out_dir)
            t_mx = time.time() - t0
            try:
                result["eager"], result["hybrid"], problems = check_model(
                    runner, prefix, feeds, mxnet_files)
                if not problems and (len(feeds) > 1 or len(mxnet_files) > 1):
                    problems = check_cli(cli, prefix, feeds, len(mxnet_files))
                    result["cli"] = not problems
            except RuntimeError as e:  # zoo_runner's error, without the command line
                problems = [str(e).split("zoo_runner: ", 1)[-1]]
        except Exception as e:  # noqa: BLE001 - MXNet failing to export is a finding too
            problems, t_mx = [f"MXNet could not export it: {e}"], time.time() - t0
        if feeds is not None:
            manifest.append(" ".join([os.path.basename(prefix), "fails" if problems else "runs",
                                      str(len(mxnet_files))] +
                                     [os.path.basename(f) for _, f in feeds]))
        result["seconds"] = round(time.time() - t0, 1)
        result["problems"] = problems
        known = KNOWN_FAILURES.get(name)
        result["status"] = "runs" if not problems else f"fails: {known or problems[0]}"
        results.append(result)
        figures = (f"rel err eager/hybrid {result['eager']:.2g}/{result['hybrid']:.2g}"
                   if result["eager"] is not None else "no figures")
        timing = f"{result['seconds']:.1f}s, {t_mx:.1f}s in MXNet"
        if not problems and known:
            failures.append(name)
            print(f"FAIL {name}: runs, but KNOWN_FAILURES says '{known}': drop it from the list "
                  f"({figures}; {timing})", flush=True)
        elif problems and known:
            print(f"KNOWN {name}: {known} ({'; '.join(problems)}; {timing})", flush=True)
        elif problems:
            failures.append(name)
            print(f"FAIL {name}: {'; '.join(problems)} ({figures}; {timing})", flush=True)
        else:
            cli_note = ", `hybridnet run` the same" if result.get("cli") else ""
            print(f"PASS {name} ({family}, {source}): {figures}, eager == hybridized{cli_note} "
                  f"({timing})", flush=True)

    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(out_dir, "models.txt"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    if not only:
        if "--write-readme" in options:
            write_readme(readme, results)
            print(f"wrote the compatibility table of {readme}")
        for p in readme_problems(readme, results):
            failures.append("README")
            print(f"FAIL README: {p} (models_golden.py --write-readme rewrites the table)")
    print(f"{len(results) - len(set(failures) - {'README'})} of {len(results)} models checked "
          f"({len([r for r in results if r['status'] == 'runs'])} run with MXNet's numbers) in "
          f"{time.time() - start:.0f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
