"""Trains a LeNet-like network on scikit-learn's bundled 8x8 digits, MXNet Gluon style.

The training code below is MXNet 1.9 Gluon code: it runs unchanged with real MXNet when the
script is given --mxnet (only the import differs). Hybridized network, Adam, DataLoader,
mx.metric.Accuracy, fixed seeds, an 80/20 train/test split of the 1797 images (no download:
the data ships with scikit-learn).

    python3 train_digits.py [--mxnet] [--epochs N] [--min-accuracy A] [--export PREFIX]
    python3 train_digits.py --write-data DIR

--min-accuracy fails the run (exit 1) below that test accuracy. --export writes
PREFIX-symbol.json and PREFIX-0000.params, plus PREFIX-x.npy (test images) and PREFIX-y.npy (the
trained network's outputs on them), which the other languages' loaders compare to.
--write-data writes the split as DIR/digits_{train,test}_{images,labels}.npy and the network's
initial parameters (Xavier, seed 42) as DIR/lenet_init.params, and trains nothing: the inputs of
the other languages' digits examples, which start from those parameters.
"""
import argparse
import os
import sys
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
args = parser.parse_args()


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


def write_data(directory):
    """The split as .npy files and the initial parameters, for the C++, Java, Scala and R
    examples (which have no scikit-learn)."""
    os.makedirs(directory, exist_ok=True)
    for part, (images, labels) in zip(("train", "test"), digits_split()):
        np.save(os.path.join(directory, f"digits_{part}_images.npy"), images)
        np.save(os.path.join(directory, f"digits_{part}_labels.npy"), labels)
    mx.random.seed(42)
    net = lenet()
    net.initialize(mx.init.Xavier())
    net(mx.nd.zeros((1, 1, 8, 8)))  # the Dense layers' shapes come from the first forward
    net.save_parameters(os.path.join(directory, "lenet_init.params"))
    print(f"wrote the digits split and lenet_init.params to {directory}")


def evaluate(net, loader):
    metric = mx.metric.Accuracy()
    for data, label in loader:
        metric.update(labels=[label], preds=[net(data)])
    return metric.get()[1]


def main():
    mx.random.seed(42)
    np.random.seed(42)  # DataLoader's shuffling draws from numpy's generator
    (x_train, y_train), (x_test, y_test) = digits_split()
    train_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_train, y_train),
                                         batch_size=args.batch_size, shuffle=True)
    test_loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x_test, y_test),
                                        batch_size=100, shuffle=False)

    net = lenet()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.002})
    metric = mx.metric.Accuracy()

    library = "mxnet" if args.mxnet else "hybridnet"
    epoch_times = []
    for epoch in range(args.epochs):
        metric.reset()
        total_loss, start = 0.0, time.perf_counter()
        for data, label in train_loader:
            with autograd.record():
                output = net(data)
                loss = loss_fn(output, label)
            loss.backward()
            trainer.step(data.shape[0])
            total_loss += loss.sum().asscalar()
            metric.update(labels=[label], preds=[output])
        epoch_times.append(time.perf_counter() - start)
        print(f"[{library}] epoch {epoch + 1}: loss {total_loss / len(x_train):.4f}, "
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
    if accuracy < args.min_accuracy:
        print(f"[{library}] FAIL: test accuracy {accuracy:.4f} is below {args.min_accuracy}")
        return 1
    return 0


if __name__ == "__main__":
    if args.write_data:
        write_data(args.write_data)
        sys.exit(0)
    sys.exit(main())
