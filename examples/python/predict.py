"""Runs an export (hybridnet's or real MXNet's) on .npy inputs and writes its outputs as .npy.

    python3 predict.py PREFIX EPOCH INPUT.npy[,INPUT.npy...] OUTPUT.npy

PREFIX-symbol.json and PREFIX-EEEE.params are read; the inputs feed the model's data inputs in
order (their shapes are taken from the files, so any batch size works). OUTPUT.npy holds the
first output, OUTPUT.K.npy output K of a model with several.
"""
import sys

import numpy as np

import hybridnet as mx


def main(argv):
    if len(argv) != 5:
        print("usage: predict.py PREFIX EPOCH INPUT.npy[,INPUT.npy...] OUTPUT.npy", file=sys.stderr)
        return 2
    prefix, epoch, input_paths, output_path = argv[1:]
    try:
        epoch = int(epoch)
    except ValueError:
        print(f"predict.py: EPOCH must be a number, got '{epoch}'", file=sys.stderr)
        return 2
    try:
        model = mx.Model.load(prefix, epoch)
        xs = [np.load(path) for path in input_paths.split(",")]
        outputs = model.predictor()(*xs)
        ys = outputs if isinstance(outputs, list) else [outputs]
        for k, y in enumerate(ys):
            path = output_path if k == 0 else output_path[:-len(".npy")] + f".{k}.npy"
            np.save(path, y)
            print(f"wrote {model.output_names[k]} {list(y.shape)} to {path}")
    except (mx.HybridnetError, OSError, ValueError) as e:
        print(f"predict.py: {e}", file=sys.stderr)
        return 1
    print(f"inputs {model.input_names} <- {[list(x.shape) for x in xs]} from {input_paths}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
