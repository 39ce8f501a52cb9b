"""Real MXNet 1.9.1 on the cross-language exports (exit 77, skipped, when MXNet is missing).

  python xlang_mxnet.py IN.npy PREFIX=OURS.npy ... [--input IN2.npy PREFIX=OURS.npy ...]

Each PREFIX-symbol.json + PREFIX-0000.params is imported with mx.gluon.SymbolBlock.imports and
run on IN.npy; its output must be within 1e-5 of OURS.npy (hybridnet's output, any language).
"""
import sys
import warnings

try:
    import numpy as np
    import mxnet as mx
except Exception as e:  # noqa: BLE001 - any import failure means "no reference here"
    print(f"SKIP: real MXNet is not importable ({type(e).__name__}: {e}); "
          "scripts/setup-mxnet.sh installs it")
    sys.exit(77)

TOLERANCE = 1e-5
warnings.filterwarnings("ignore", message="Cannot decide type")


def main():
    x = mx.nd.array(np.load(sys.argv[1]))
    failures = 0
    args = iter(sys.argv[2:])
    for pair in args:
        if pair == "--input":
            x = mx.nd.array(np.load(next(args)))
            continue
        prefix, ours = pair.split("=", 1)
        net = mx.gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
        ref = net(x).asnumpy()
        got = np.load(ours)
        diff = float(np.max(np.abs(ref - got))) if ref.shape == got.shape else float("inf")
        ok = diff <= TOLERANCE
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} MXNet {mx.__version__} on {prefix}: max |mxnet - hybridnet| = {diff:.3g}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
