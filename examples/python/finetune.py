"""Fine-tunes a model-zoo network as GluonCV's fine-tuning tutorial does.

A mobilenet0.25 from the model zoo stands for the pretrained network (no download: its weights
are initialized, saved and loaded back, the path a user's downloaded .params takes); its
features are frozen with grad_req 'null', its output Dense layer is initialized anew, and a few
Trainer steps on scikit-learn's 8x8 digits (upsampled to 32x32, three channels) train the
output alone. The run checks what fine-tuning promises and exits 1 otherwise: the frozen
weights did not move, the output did, and the loss went down. The parts are selected by
parameter name: hybridnet's zoo networks are library blocks without the `features` and `output`
attributes the tutorial uses (docs/migrating-from-mxnet.md).

    python3 finetune.py [--mxnet] [--steps N] [--work DIR]

--mxnet runs the same code with real MXNet 1.9.1.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
from sklearn.datasets import load_digits

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("--mxnet", action="store_true", help="run with real MXNet instead")
parser.add_argument("--steps", type=int, default=40)
parser.add_argument("--work", help="folder for the saved parameters (default: a temporary one)")
args = parser.parse_args()

if args.mxnet:
    import mxnet as mx
else:
    import hybridnet as mx
autograd, gluon = mx.autograd, mx.gluon
from_zoo = mx.gluon.model_zoo.vision.get_model


def digits_32x32():
    """The digits as (N, 3, 32, 32) float32 images (each pixel repeated 4x4, gray in three
    channels) and their labels."""
    digits = load_digits()
    images = np.kron(digits.images / 16.0, np.ones((4, 4)))[:, None, :, :]
    return np.repeat(images, 3, axis=1).astype(np.float32), digits.target.astype(np.float32)


def snapshot(params):
    return {name: p.data().asnumpy().copy() for name, p in params.items()}


def changed(params, before):
    """The names of `params` whose values differ from the snapshot `before`."""
    return [name for name, value in snapshot(params).items()
            if not np.array_equal(value, before[name])]


def main(work):
    mx.random.seed(7)
    np.random.seed(7)
    images, labels = digits_32x32()
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(images, labels), batch_size=32,
                                   shuffle=True, last_batch="discard")

    # The "pretrained" network: its weights saved as a downloaded model's would be.
    pretrained = from_zoo("mobilenet0.25", classes=10)
    pretrained.initialize(mx.init.Xavier())
    pretrained(mx.nd.array(images[:1]))
    params_file = os.path.join(work, "mobilenet0.25-pretrained.params")
    pretrained.save_parameters(params_file)

    finetune_net = from_zoo("mobilenet0.25", classes=10)
    finetune_net.load_parameters(params_file)
    # The zoo names parameters as MXNet 1.x does, by prefix (mobilenet1_conv0_weight, ...): the
    # output is the network's one Dense layer, the features are everything else.
    output = finetune_net.collect_params(".*dense")
    features = finetune_net.collect_params("(?!.*dense)")
    output.initialize(mx.init.Xavier(), force_reinit=True)  # a new output for the new task
    features.setattr("grad_req", "null")
    finetune_net.hybridize()

    # Batch normalization's running statistics follow the batches in training mode whatever
    # grad_req says (as in MXNet); the frozen promise is about the learned weights.
    frozen = {name: p for name, p in features.items()
              if not name.endswith(("running_mean", "running_var"))}
    trained = dict(output.items())
    frozen_before, trained_before = snapshot(frozen), snapshot(trained)

    trainer = gluon.Trainer(finetune_net.collect_params(), "sgd",
                            {"learning_rate": 0.01, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    losses, step = [], 0
    while step < args.steps:
        for data, label in loader:
            with autograd.record():
                loss = loss_fn(finetune_net(data), label)
            loss.backward()
            trainer.step(data.shape[0])
            losses.append(loss.mean().asscalar())
            step += 1
            if step == args.steps:
                break

    frozen_moved = changed(frozen, frozen_before)
    trained_moved = changed(trained, trained_before)
    first, last = np.mean(losses[:10]), np.mean(losses[-10:])
    print(f"{len(frozen)} frozen parameters, {len(frozen_moved)} changed; "
          f"{len(trained)} output parameters, {len(trained_moved)} changed")
    print(f"loss: mean of the first 10 steps {first:.4f}, of the last 10 steps {last:.4f}")
    problems = []
    if frozen_moved:
        problems.append(f"frozen parameters changed: {frozen_moved}")
    if len(trained_moved) != len(trained) or not trained:
        problems.append("not every output parameter changed")
    if not last < first:
        problems.append("the loss did not decrease")
    for problem in problems:
        print(f"FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    if args.work:
        os.makedirs(args.work, exist_ok=True)
        sys.exit(main(args.work))
    with tempfile.TemporaryDirectory() as folder:
        sys.exit(main(folder))
