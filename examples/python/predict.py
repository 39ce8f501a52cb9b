"""Runs an export (hybridnet's or real MXNet's) on a .npy input and writes the first output.

    python3 predict.py PREFIX EPOCH INPUT.npy OUTPUT.npy

PREFIX-symbol.json and PREFIX-EEEE.params are read; the input feeds the model's first data input
(its shape is taken from the file, so any batch size works).
"""
import sys

import numpy as np

import hybridnet as mx


def main(argv):
    if len(argv) != 5:
        print("usage: predict.py PREFIX EPOCH INPUT.npy OUTPUT.npy", file=sys.stderr)
        return 2
    prefix, epoch, input_path, output_path = argv[1:]
    try:
        epoch = int(epoch)
    except ValueError:
        print(f"predict.py: EPOCH must be a number, got '{epoch}'", file=sys.stderr)
        return 2
    try:
        model = mx.Model.load(prefix, epoch)
        x = np.load(input_path)
        outputs = model.predictor()(x)
        y = outputs[0] if isinstance(outputs, list) else outputs
        np.save(output_path, y)
    except (mx.HybridnetError, OSError, ValueError) as e:
        print(f"predict.py: {e}", file=sys.stderr)
        return 1
    print(f"inputs {model.input_names} <- {list(x.shape)} from {input_path}")
    print(f"wrote {model.output_names[0]} {list(y.shape)} to {output_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
