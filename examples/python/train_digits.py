"""Trains a LeNet-like network on scikit-learn's bundled 8x8 digits, MXNet Gluon style.

The training code below is MXNet 1.9 Gluon code: it runs unchanged with real MXNet when the
script is given --mxnet (only the import differs). Hybridized network, Adam, DataLoader,
mx.metric.Accuracy, fixed seeds, an 80/20 train/test split of the 1797 images (no download:
the data ships with scikit-learn).

    python3 train_digits.py [--mxnet] [--epochs N] [--min-accuracy A] [--export PREFIX]
                            [--data DIR] [--steps N] [--optimizer adam|sgd] [--no-shuffle]
                            [--out PREFIX] [--int8-max-drop D]
    python3 train_digits.py --write-data DIR

--min-accuracy fails the run (exit 1) below that test accuracy. --export writes
PREFIX-symbol.json and PREFIX-0000.params, plus PREFIX-x.npy (test images) and PREFIX-y.npy (the
trained network's outputs on them), which the other languages' loaders compare to.
--write-data writes the split as DIR/digits_{train,test}_{images,labels}.npy and the network's
initial parameters (Xavier, seed 42) as DIR/lenet_init.params, and trains nothing: the inputs of
the other languages' digits examples, which start from those parameters.

--data DIR trains on that split from DIR/lenet_init.params instead, as the C++, Java, Scala and
R examples do (issue 36's digits protocol): with --no-shuffle every language sees the same
batches and computes the same losses and parameters bit for bit. --steps stops after N steps
(crossing epochs); --optimizer sgd is SGD with momentum 0.9 and learning rate 0.1 instead of
Adam's 0.002. --out writes PREFIX-losses.txt (each step's summed loss as the 8 hex digits of its
float32 bits), PREFIX.params (save_parameters) and the export PREFIX-symbol.json,
PREFIX-0000.params.

--int8-max-drop D then quantizes the trained network to int8 as MXNet users do
(contrib.quantization.quantize_net, entropy calibration over the training images) and fails if
its test accuracy is more than D below the float network's (hybridnet's quantizer; MXNet's own
quantize_net wants its calibration batches in another form).
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_digits

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--mxnet", action="store_true", help="train with real MXNet instead")
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--min-accuracy", type=float, default=0.0)
parser.add_argument("--export", metavar="PREFIX")
parser.add_argument("--write-data", metavar="DIR", help="only write the split as .npy files")
parser.add_argument("--data", metavar="DIR", help="train on DIR's split from DIR/lenet_init.params")
parser.add_argument("--steps", type=int, default=0, help="stop after N steps (crossing epochs)")
parser.add_argument("--optimizer", choices=("adam", "sgd"), default="adam")
parser.add_argument("--no-shuffle", action="store_true", help="batches in the data's order")
parser.add_argument("--out", metavar="PREFIX", help="write the step losses, parameters, export")
parser.add_argument("--int8-max-drop", type=float, metavar="D",
                    help="then quantize to int8 (entropy calibration on the training split) and "
                         "fail if the test accuracy drops by more than D (0.005: half a point)")
args = parser.parse_args()
if args.epochs < 1:
    parser.error("--epochs takes a positive number")
if args.steps < 0:
    parser.error("--steps takes a positive number")


def digits_split():
    """The digits as (N, 1, 8, 8) float32 in [0, 1] and their labels (float32, as the losses
    take them), split 80/20 by a fixed permutation."""
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    labels = digits.target.astype(np.float32)
    order = np.random.RandomState(0).permutation(len(labels))
    cut = len(labels) * 4 // 5
    train, test = order[:cut], order[cut:]
    return (images[train], labels[train]), (images[test], labels[test])


if args.mxnet:
    import mxnet as mx
else:
    import hybridnet as mx
autograd, gluon, nn = mx.autograd, mx.gluon, mx.gluon.nn


def lenet():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(32, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Conv2D(64, kernel_size=3, padding=1, activation="relu"),
                nn.MaxPool2D(pool_size=2),
                nn.Flatten(),
                nn.Dense(128, activation="relu"),
                nn.Dense(10))
    return net


PARTS, FIELDS = ("train", "test"), ("images", "labels")
INITIAL_PARAMS = "lenet_init.params"  # in the --write-data folder: every language's start


def split_file(directory, part, field):
    """Where --write-data puts one array of the split."""
    return os.path.join(directory, f"digits_{part}_{field}.npy")


def write_data(directory):
    """The split as .npy files and the initial parameters, for the C++, Java, Scala and R
    examples (which have no scikit-learn)."""
    os.makedirs(directory, exist_ok=True)
    for part, arrays in zip(PARTS, digits_split()):
        for field, array in zip(FIELDS, arrays):
            np.save(split_file(directory, part, field), array)
    mx.random.seed(42)
    net = lenet()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 1, 8, 8)))  # the Dense layers' shapes come from the first forward
    net.save_parameters(os.path.join(directory, INITIAL_PARAMS))
    print(f"wrote the digits split and lenet_init.params to {directory}")


def read_data(directory):
    """The split --write-data wrote to directory."""
    files = [split_file(directory, part, field) for part in PARTS for field in FIELDS]
    for path in files + [os.path.join(directory, INITIAL_PARAMS)]:
        if not os.path.isfile(path):
            parser.error(f"--data {directory}: {path} is missing (--write-data DIR writes it)")
    return tuple(tuple(np.load(split_file(directory, part, field)) for field in FIELDS)
                 for part in PARTS)


OPTIMIZERS = {"adam": {"learning_rate": 0.002},
              "sgd": {"learning_rate": 0.1, "momentum": 0.9}}


def evaluate(net, loader):
    metric = mx.metric.Accuracy()
    for data, label in loader:
        metric.update(labels=[label], preds=[net(data)])
    return metric.get()[1]


def main():
    mx.random.seed(42)
    np.random.seed(42)  # DataLoader's shuffling draws from numpy's generator
    (x_train, y_train), (x_test, y_test) = read_data(args.data) if args.data else digits_split()
    train_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_train, y_train),
                                         batch_size=args.batch_size,
                                         shuffle=not args.no_shuffle)
    test_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_test, y_test),
                                        batch_size=100, shuffle=False)

    net = lenet()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    if args.data:
        net(mx.nd.zeros((1, 1, 8, 8)))  # the Dense layers' shapes, then the shared start
        net.load_parameters(os.path.join(args.data, INITIAL_PARAMS))
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), args.optimizer, OPTIMIZERS[args.optimizer])
    metric = mx.metric.Accuracy()

    library = "mxnet" if args.mxnet else "hybridnet"
    epoch_times, step_losses = [], []
    epoch = 0
    while (len(step_losses) < args.steps) if args.steps else (epoch < args.epochs):
        metric.reset()
        total_loss, start = 0.0, time.perf_counter()
        for data, label in train_loader:
            with autograd.record():
                output = net(data)
                loss = loss_fn(output, label)
            loss.backward()
            trainer.step(data.shape[0])
            step_losses.append(loss.sum().asscalar())  # float32, as every language reads it
            total_loss += float(step_losses[-1])
            metric.update(labels=[label], preds=[output])
            if len(step_losses) == args.steps:
                break
        epoch += 1
        epoch_times.append(time.perf_counter() - start)
        print(f"[{library}] epoch {epoch}: loss {total_loss / len(x_train):.6f}, "
              f"train accuracy {metric.get()[1]:.4f}, {epoch_times[-1]:.3f} s")

    accuracy = evaluate(net, test_loader)
    print(f"[{library}] test accuracy {accuracy:.4f} ({len(x_test)} images); "
          f"mean epoch time {np.mean(epoch_times):.3f} s")
    if args.export:
        net.export(args.export)
        x = x_test[:50]
        np.save(args.export + "-x.npy", x)
        np.save(args.export + "-y.npy", net(mx.nd.array(x)).asnumpy())
        print(f"[{library}] exported {args.export}-symbol.json, {args.export}-0000.params")
    if args.out:
        with open(args.out + "-losses.txt", "w") as losses_file:
            for value in step_losses:
                losses_file.write(f"{np.float32(value).view(np.uint32):08x}\n")
        net.save_parameters(args.out + ".params")
        net.export(args.out, 0)
        print(f"[{library}] wrote {args.out}-losses.txt, {args.out}.params and the export")
    if accuracy < args.min_accuracy:
        print(f"[{library}] FAIL: test accuracy {accuracy:.4f} is below {args.min_accuracy}")
        return 1
    if args.int8_max_drop is not None:
        return check_int8(net, x_train, test_loader, accuracy, library)
    return 0


def check_int8(net, x_train, test_loader, accuracy, library):
    """Quantizes the trained net as MXNet users do (quantize_net, entropy calibration over the
    training images) and compares the int8 net's test accuracy with the float one's."""
    calib_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_train), batch_size=64)
    start = time.perf_counter()
    qnet = mx.contrib.quantization.quantize_net(net, quantized_dtype="auto",
                                                calib_mode="entropy", calib_data=calib_loader,
                                                num_calib_examples=len(x_train), ctx=mx.cpu())
    qnet.hybridize()
    int8_accuracy = evaluate(qnet, test_loader)
    drop = accuracy - int8_accuracy
    with tempfile.TemporaryDirectory() as tmp:  # what runs in int8: the export's quantized ops
        qnet.export(os.path.join(tmp, "lenet-int8"))
        with open(os.path.join(tmp, "lenet-int8-symbol.json")) as f:
            ops = [n["op"] for n in json.load(f)["nodes"]]
    int8_ops = [op for op in ops if op.startswith(("_sg_mkldnn_", "_contrib_quantized_"))]
    print(f"[{library}] int8 test accuracy {int8_accuracy:.4f} (float {accuracy:.4f}, drop "
          f"{drop:+.4f}); {len(int8_ops)} int8 layers ({', '.join(sorted(set(int8_ops)))}); "
          f"quantized in {time.perf_counter() - start:.2f} s")
    if not int8_ops:
        print(f"[{library}] FAIL: quantize_net left no layer in int8")
        return 1
    if drop > args.int8_max_drop:
        print(f"[{library}] FAIL: int8 loses {drop:.4f} of accuracy, more than "
              f"{args.int8_max_drop}")
        return 1
    return 0


if __name__ == "__main__":
    if args.write_data:
        write_data(args.write_data)
        sys.exit(0)
    sys.exit(main())
