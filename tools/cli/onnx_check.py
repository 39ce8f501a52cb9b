"""The ONNX parity check of `hybridnet convert ... OUT.onnx --check` (embedded in the CLI; the
ONNX tests import it too).

    python onnx_check.py MANIFEST.json

MANIFEST (written by the CLI):
    {"model": "m.onnx", "tolerance": 1e-4,
     "runs": [{"label": "batch 2", "inputs": {"data": "x.npy"},
               "outputs": [{"name": "fc_output", "file": "y.npy"}]}]}
The inputs and hybridnet's outputs of each run are .npy files. onnx.checker validates the model
(full check, with shape inference); ONNX Runtime runs it on each run's inputs (those the graph
declares: a SoftmaxOutput label is not one) and every output is compared with hybridnet's:
max |ort - ours| and that divided by max |ours| (the relative difference). Exit status: 0 when
the model is valid and every relative difference is within the tolerance, 1 otherwise, 3 when
onnx or onnxruntime cannot be imported.
"""
import json
import sys

MISSING_TOOLS = 3


def import_tools():
    """(onnx, onnxruntime, numpy), or exits with MISSING_TOOLS naming what is missing."""
    try:
        import numpy
        import onnx
        import onnxruntime
    except Exception as e:  # noqa: BLE001 - any import failure means "not installed here"
        print(f"onnx check: cannot import onnx/onnxruntime with {sys.executable}: {e}")
        sys.exit(MISSING_TOOLS)
    return onnx, onnxruntime, numpy


def check_model(onnx, path):
    """onnx.checker with shape inference; returns an error text or ''."""
    try:
        onnx.checker.check_model(path, full_check=True)
    except Exception as e:  # noqa: BLE001 - the checker raises several exception types
        return str(e).strip() or type(e).__name__
    return ""


def session(onnxruntime, path):
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def differences(numpy, got, want):
    """(max abs difference, relative difference) of two arrays; inf when the shapes differ."""
    got = numpy.asarray(got, dtype=numpy.float64)
    want = numpy.asarray(want, dtype=numpy.float64)
    if got.shape != want.shape:
        return float("inf"), float("inf")
    if got.size == 0:
        return 0.0, 0.0
    same_nan = numpy.isnan(got) & numpy.isnan(want)
    diff = numpy.where(same_nan, 0.0, numpy.abs(got - want))
    worst = float(numpy.max(diff)) if not numpy.isnan(diff).any() else float("inf")
    scale = float(numpy.max(numpy.abs(numpy.where(numpy.isnan(want), 0.0, want))))
    return worst, worst / max(scale, 1e-30)


def compare(numpy, sess, feeds, expected, nan_open=None):
    """Runs `sess` on `feeds` (name -> array; names the graph does not declare are dropped) and
    compares its outputs, in order, with `expected` [(name, array)]. `nan_open`, when given, is a
    boolean array of the outputs' shape marking elements whose NaN handling ONNX leaves open:
    there, NaN on one side only is not a difference. Returns [(name, shape, max_abs, rel)]."""
    declared = {i.name for i in sess.get_inputs()}
    got = sess.run(None, {k: v for k, v in feeds.items() if k in declared})
    if len(got) != len(expected):
        raise RuntimeError(f"ONNX Runtime gave {len(got)} outputs, hybridnet {len(expected)}")
    rows = []
    for (name, want), value in zip(expected, got):
        if nan_open is not None and numpy.shape(value) == numpy.shape(nan_open):
            value = numpy.where(nan_open & (numpy.isnan(value) != numpy.isnan(want)), want, value)
        worst, rel = differences(numpy, value, want)
        rows.append((name, tuple(numpy.shape(want)), worst, rel))
    return rows


def shape_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def main(manifest_path):
    onnx, onnxruntime, numpy = import_tools()
    with open(manifest_path) as f:
        manifest = json.load(f)
    model, tolerance = manifest["model"], float(manifest["tolerance"])
    ok = True
    error = check_model(onnx, model)
    print("onnx.checker: " + ("valid (full check)" if not error else "INVALID: " + error))
    ok = ok and not error
    sess = session(onnxruntime, model)
    print(f"ONNX Runtime {onnxruntime.__version__} vs hybridnet, per output: max |difference|, "
          f"relative to max |hybridnet| (tolerance {tolerance:g})")
    for run in manifest["runs"]:
        feeds = {name: numpy.load(path) for name, path in run["inputs"].items()}
        expected = [(o["name"], numpy.load(o["file"])) for o in run["outputs"]]
        print(f"  {run['label']}:")
        for name, shape, worst, rel in compare(numpy, sess, feeds, expected):
            verdict = "ok" if rel <= tolerance else "EXCEEDS TOLERANCE"
            ok = ok and rel <= tolerance
            print(f"    {name} {shape_text(shape)}: max abs {worst:.3g}, max rel {rel:.3g} {verdict}")
    print("parity: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: onnx_check.py MANIFEST.json")
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
