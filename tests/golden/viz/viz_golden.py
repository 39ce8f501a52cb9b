"""mx.viz and Block.summary against real MXNet 1.9.1 (exit 77 = skipped when MXNet is absent).

For every model of the golden zoo (zoo_models.MODELS), MXNet 1.9.1 builds it (gluon model zoo, Xavier
weights), prints Block.summary un-hybridized, then hybridizes and exports it and prints
mx.viz.print_summary (with and without the input shape) and draws mx.viz.plot_network (weights
hidden and shown). hybridnet must give:
  - `hybridnet summary` on the export: print_summary's text byte for byte;
  - `hybridnet dot` on the export: the same Graphviz nodes (name, label, attributes) and edges
    (tail, head, attributes), compared on the parsed DOT text;
  - zoo_runner's C++ model (the same architecture): Block.summary's text byte for byte.
Also Block.summary of the small networks using every conv_layers.h layer, and the MXNet-written mnist-lenet-0 fixture (a 2015 file) through print_summary and dot.
Usage: viz_golden.py HYBRIDNET_CLI ZOO_RUNNER FIXTURES_DIR
"""
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zoo"))
from real_mxnet import import_or_skip  # noqa: E402

np, mx = import_or_skip()
from mxnet.gluon.model_zoo import vision  # noqa: E402
from zoo_common import layer_net  # noqa: E402
from zoo_models import LAYER_NETS, MODELS  # noqa: E402

try:
    import graphviz  # noqa: F401  (plot_network needs the Python package, not the dot program)
except ImportError:
    print("SKIP: MXNet's plot_network needs the graphviz Python package "
          f"({sys.executable} -m pip install graphviz)")
    sys.exit(77)

cli, runner, fixtures = sys.argv[1], sys.argv[2], sys.argv[3]
work = tempfile.mkdtemp(prefix="hn_viz_")
failures = []
passes = 0


def check(name, ok, detail=""):
    global passes
    print(("PASS " if ok else "FAIL ") + name + (": " + detail if detail else ""), flush=True)
    if ok:
        passes += 1
    else:
        failures.append(name)


def printed(function, *args, **kwargs):
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        function(*args, **kwargs)
    return buffer.getvalue()


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({r.returncode}): {r.stderr}")
    return r.stdout


def first_difference(ours, ref):
    for i, (a, b) in enumerate(zip(ours.splitlines(), ref.splitlines())):
        if a != b:
            return f"line {i + 1}:\n  ours:  {a!r}\n  MXNet: {b!r}"
    return f"{len(ours.splitlines())} lines against MXNet's {len(ref.splitlines())}"


def same_text(name, ours, ref):
    check(name, ours == ref, "" if ours == ref else first_difference(ours, ref))


# DOT statements as graphviz writes them, one per "\n\t": "ID [a=v ...]" and "ID -> ID [a=v ...]",
# IDs and values bare or double-quoted (quotes escaped; a label's newlines are literal, and no
# label line starts with a tab).
TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|([^\s\[\]=]+)', re.S)


def tokens(text):
    return [m.group(1).replace('\\"', '"') if m.group(1) is not None else m.group(2)
            for m in TOKEN.finditer(text)]


def parse_dot(text):
    """({node: {attribute: value}}, sorted [(tail, head, attributes)])."""
    nodes, edges = {}, []
    body = text[text.index("{") + 1:text.rindex("}")]
    for statement in body.split("\n\t")[1:]:
        head, _, attrs_text = statement.rstrip("\n").partition(" [")
        values = tokens(attrs_text[:-1])
        attrs = dict(zip(values[0::2], values[1::2]))
        ids = tokens(head)
        if len(ids) == 3 and ids[1] == "->":
            edges.append((ids[0], ids[2], tuple(sorted(attrs.items()))))
        else:
            nodes[ids[0]] = attrs
    return nodes, sorted(edges)


def same_graph(name, ours, ref):
    our_nodes, our_edges = parse_dot(ours)
    ref_nodes, ref_edges = parse_dot(ref)
    detail = f"{len(ref_nodes)} nodes, {len(ref_edges)} edges"
    if our_nodes != ref_nodes:
        names = sorted(set(our_nodes) ^ set(ref_nodes))
        differ = [n for n in ref_nodes if n in our_nodes and our_nodes[n] != ref_nodes[n]]
        detail = f"nodes differ: only one side {names[:5]}, attributes {differ[:3]}"
    elif our_edges != ref_edges:
        detail = f"edges differ: {sorted(set(our_edges) ^ set(ref_edges))[:4]}"
    ok = our_nodes == ref_nodes and our_edges == ref_edges and len(ref_nodes) > 1
    check(name, ok, detail + ("" if ours == ref + "\n" else "; the texts differ"))


def compare_export(label, prefix, epoch, shape):
    sym = mx.sym.load(prefix + "-symbol.json")
    dims = ",".join(map(str, shape))
    same_text(f"{label} print_summary",
              run(cli, "summary", prefix, epoch, "--input", "data=" + dims),
              printed(mx.viz.print_summary, sym, shape={"data": shape}))
    same_text(f"{label} print_summary without shapes", run(cli, "summary", prefix, epoch),
              printed(mx.viz.print_summary, sym))
    same_graph(f"{label} plot_network", run(cli, "dot", prefix, epoch, "--input", "data=" + dims),
               mx.viz.plot_network(sym, shape={"data": shape}).source)
    same_graph(f"{label} plot_network with weights",
               run(cli, "dot", prefix, epoch, "--show-weights"),
               mx.viz.plot_network(sym, hide_weights=False).source)


try:
    sizes = dict(MODELS)
    for index, name in enumerate(sizes):  # every golden-zoo model
        shape = (1, 3, sizes[name], sizes[name])
        try:
            mx.random.seed(70 + index)
            net = vision.get_model(name)
            net.initialize(mx.init.Xavier())
            x = mx.nd.zeros(shape)
            reference = printed(net.summary, x)
            same_text(f"{name} Block.summary",
                      run(runner, "summary", name, ",".join(map(str, shape))), reference)
            net.hybridize()
            net(x)
            prefix = os.path.join(work, name)
            net.export(prefix)
            compare_export(name, prefix, "0", shape)
        except Exception as e:  # noqa: BLE001 - reported as this model's failure
            check(name, False, f"{type(e).__name__}: {e}")
    # Every conv_layers.h layer (class names such as PReLU, SELU, Identity, Conv3DTranspose).
    for name, shape in LAYER_NETS:
        try:
            net = layer_net(name)
            net.initialize(mx.init.Xavier())
            same_text(f"{name} Block.summary",
                      run(runner, "summary", name, ",".join(map(str, shape))),
                      printed(net.summary, mx.nd.zeros(shape)))
        except Exception as e:  # noqa: BLE001 - reported as this network's failure
            check(name, False, f"{type(e).__name__}: {e}")
    try:
        compare_export("mnist-lenet-0", os.path.join(fixtures, "mnist-lenet-0"), "10",
                       (1, 1, 28, 28))
    except Exception as e:  # noqa: BLE001
        check("mnist-lenet-0", False, f"{type(e).__name__}: {e}")
finally:
    shutil.rmtree(work, True)

print(f"{passes} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
