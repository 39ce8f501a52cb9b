"""Every gluon.loss class and its options, run by real MXNet 1.9.1 and by hybridnet on the same
random inputs (compare_with_mxnet.py ... loss_programs.py compares what each wrote):

    HN_GOLDEN_BACKEND=mxnet|hybridnet python loss_programs.py OUT_DIR

Each case runs eagerly and hybridized under autograd.record() and writes the loss and the
gradients of its inputs (the loss's backward, head gradient ones) as CASE_MODE_loss.npy and
CASE_MODE_gradI.npy.
"""
import os
import sys

import numpy as np

if os.environ.get("HN_GOLDEN_BACKEND") == "mxnet":
    import mxnet as mx
else:
    import hybridnet as mx
autograd, loss, nd = mx.autograd, mx.gluon.loss, mx.nd
OUT = sys.argv[1]

# Losses MXNet cannot hybridize, whose eager result is the reference for both of hybridnet's
# modes: SDMLLoss reads x1.shape, which a symbol does not have, and PoissonNLLLoss with
# compute_full multiplies in place (*=), which a symbol cannot.
MXNET_EAGER_ONLY = {"sdml", "poisson_nll_rates_full"}


def u(*shape, low=-1.0, high=1.0):
    return ("uniform", shape, low, high)


def classes(*shape, count):
    return ("classes", shape, count)


def signs(*shape):
    return ("signs", shape)


def const(values):
    return ("const", values)


# name: (class, keyword arguments, inputs (None: MXNet's None), indices of the inputs whose
# gradients are compared)
CASES = {
    "l1": (loss.L1Loss, {}, [u(4, 5), u(4, 5)], [0, 1]),
    "l1_weights_batch_axis1": (loss.L1Loss, {"weight": 0.5, "batch_axis": 1},
                               [u(4, 5), u(4, 5), u(1, 5, low=0, high=2)], [0, 1]),
    "l2": (loss.L2Loss, {}, [u(4, 5), u(4, 5)], [0, 1]),
    "l2_weighted": (loss.L2Loss, {"weight": 2.0}, [u(4, 5), u(20), u(4, 1, low=0, high=2)],
                    [0, 1]),
    "sigmoid_bce": (loss.SigmoidBinaryCrossEntropyLoss, {},
                    [u(4, 5, low=-4, high=4), u(4, 5, low=0, high=1)], [0, 1]),
    "sigmoid_bce_weights": (loss.SigmoidBCELoss, {"weight": 0.7},
                            [u(4, 5, low=-4, high=4), u(4, 5, low=0, high=1),
                             u(4, 1, low=0, high=2), u(5, low=0.5, high=3)], [0, 1, 3]),
    "sigmoid_bce_pos_weight_only": (loss.SigmoidBCELoss, {},
                                    [u(4, 5, low=-4, high=4), u(4, 5, low=0, high=1), None,
                                     u(5, low=0.5, high=3)], [0, 1]),
    "sigmoid_bce_from_sigmoid": (loss.SigmoidBCELoss, {"from_sigmoid": True},
                                 [u(4, 5, low=0.05, high=0.95), u(4, 5, low=0, high=1)], [0, 1]),
    "sigmoid_bce_from_sigmoid_pos_weight": (
        loss.SigmoidBCELoss, {"from_sigmoid": True},
        [u(4, 5, low=0.05, high=0.95), u(4, 5, low=0, high=1), u(4, 1, low=0, high=2),
         u(5, low=0.5, high=3)], [0, 1, 3]),
    "sigmoid_bce_batch_axis1": (loss.SigmoidBCELoss, {"batch_axis": 1},
                                [u(4, 5, low=-4, high=4), u(4, 5, low=0, high=1)], [0, 1]),
    "softmax_ce": (loss.SoftmaxCrossEntropyLoss, {}, [u(4, 5, low=-3, high=3),
                                                     classes(4, count=5)], [0]),
    "softmax_ce_weights": (loss.SoftmaxCELoss, {"weight": 0.5},
                           [u(4, 5, low=-3, high=3), classes(4, count=5),
                            u(4, 1, low=0, high=2)], [0]),
    "softmax_ce_dense": (loss.SoftmaxCELoss, {"sparse_label": False},
                         [u(4, 5, low=-3, high=3), u(4, 5, low=0, high=1)], [0, 1]),
    "softmax_ce_from_logits": (loss.SoftmaxCELoss, {"from_logits": True},
                               [u(4, 5, low=-3, high=-0.1), classes(4, count=5)], [0]),
    "softmax_ce_axis1": (loss.SoftmaxCELoss, {"axis": 1},
                         [u(2, 3, 4, low=-3, high=3), classes(2, 4, count=3)], [0]),
    "softmax_ce_batch_axis1": (loss.SoftmaxCELoss, {"batch_axis": 1},
                               [u(4, 5, low=-3, high=3), classes(4, count=5)], [0]),
    "kldiv": (loss.KLDivLoss, {}, [u(3, 4, low=-3, high=-0.1), u(3, 4, low=0.05, high=1)],
              [0, 1]),
    "kldiv_from_scores": (loss.KLDivLoss, {"from_logits": False, "axis": 1},
                          [u(3, 4, low=-2, high=2), u(3, 4, low=0.05, high=1),
                           u(3, 1, low=0, high=2)], [0, 1]),
    "ctc": (loss.CTCLoss, {}, [u(2, 6, 5, low=-2, high=2), const([[0, 1, -1], [2, 2, 3]])], [0]),
    "ctc_tnc_tn": (loss.CTCLoss, {"layout": "TNC", "label_layout": "TN"},
                   [u(6, 2, 5, low=-2, high=2), const([[0, 2], [1, 2], [-1, 3]])], [0]),
    "ctc_lengths": (loss.CTCLoss, {"weight": 0.5},
                    [u(2, 6, 5, low=-2, high=2), const([[0, 1, 1], [2, 2, 3]]), const([6, 5]),
                     const([2, 3]), const([0.5, 2.0])], [0]),
    "ctc_pred_lengths_only": (loss.CTCLoss, {},
                              [u(2, 6, 5, low=-2, high=2), const([[0, 1, -1], [2, 2, 3]]),
                               const([4, 6])], [0]),
    "huber": (loss.HuberLoss, {}, [u(4, 5, low=-2, high=2), u(4, 5, low=-2, high=2)], [0, 1]),
    "huber_rho": (loss.HuberLoss, {"rho": 0.5, "weight": 3.0},
                  [u(4, 5, low=-2, high=2), u(4, 5, low=-2, high=2), u(4, 1, low=0, high=2)],
                  [0, 1]),
    "hinge": (loss.HingeLoss, {}, [u(4, 5, low=-2, high=2), signs(4, 5)], [0]),
    "hinge_margin": (loss.HingeLoss, {"margin": 0.7, "batch_axis": 1},
                     [u(4, 5, low=-2, high=2), signs(4, 5)], [0]),
    "squared_hinge": (loss.SquaredHingeLoss, {"margin": 1.5},
                      [u(4, 5, low=-2, high=2), signs(4, 5), u(4, 1, low=0, high=2)], [0]),
    "logistic": (loss.LogisticLoss, {}, [u(4, 5, low=-3, high=3), signs(4, 5)], [0]),
    "logistic_binary": (loss.LogisticLoss, {"label_format": "binary"},
                        [u(4, 5, low=-3, high=3), classes(4, 5, count=2)], [0]),
    "logistic_weighted": (loss.LogisticLoss, {"weight": 0.3, "batch_axis": 1},
                          [u(4, 5, low=-3, high=3), signs(4, 5), u(1, 5, low=0, high=2)], [0]),
    "triplet": (loss.TripletLoss, {}, [u(4, 5), u(4, 5), u(4, 5)], [0, 1, 2]),
    "triplet_margin": (loss.TripletLoss, {"margin": 0.3, "weight": 2.0},
                       [u(4, 5), u(4, 5), u(4, 5)], [0, 1, 2]),
    "triplet_batch_axis1": (loss.TripletLoss, {"batch_axis": 1},
                            [u(4, 5), u(4, 5), u(4, 5)], [0, 1, 2]),
    "poisson_nll": (loss.PoissonNLLLoss, {}, [u(4, 5), u(4, 5, low=0, high=3)], [0, 1]),
    "poisson_nll_rates": (loss.PoissonNLLLoss, {"from_logits": False, "weight": 2.0},
                          [u(4, 5, low=0.2, high=2), u(4, 5, low=0, high=4)], [0, 1]),
    # No gradients: MXNet's autograd refuses compute_full's in-place *= (loss_test.cc checks
    # this gradient against differences).
    "poisson_nll_rates_full": (loss.PoissonNLLLoss, {"from_logits": False, "compute_full": True},
                               [u(4, 5, low=0.2, high=2), u(4, 5, low=0.5, high=4),
                                u(4, 1, low=0, high=2)], []),
    "cosine_embedding": (loss.CosineEmbeddingLoss, {}, [u(4, 6), u(4, 6), signs(4)], [0, 1]),
    "cosine_embedding_margin": (loss.CosineEmbeddingLoss, {"margin": 0.2, "weight": 0.5},
                                [u(4, 6), u(4, 6), signs(4), u(4, 1, low=0, high=2)], [0, 1]),
    "sdml": (loss.SDMLLoss, {"smoothing_parameter": 0.2}, [u(4, 6), u(4, 6)], [0, 1]),
}


def make_input(spec, rng):
    if spec is None:
        return None
    kind = spec[0]
    if kind == "uniform":
        values = rng.uniform(spec[2], spec[3], size=spec[1])
    elif kind == "classes":
        values = rng.randint(0, spec[2], size=spec[1])
    elif kind == "signs":
        values = rng.randint(0, 2, size=spec[1]) * 2 - 1
    else:
        values = np.array(spec[1])
    return nd.array(values.astype(np.float32))


def run_case(name, hybridize):
    cls, kwargs, specs, grads = CASES[name]
    rng = np.random.RandomState(sum(map(ord, name)))
    inputs = [make_input(spec, rng) for spec in specs]
    for i in grads:
        inputs[i].attach_grad()
    fn = cls(**kwargs)
    if hybridize:
        fn.hybridize()
    if not grads:
        return fn(*inputs), []
    with autograd.record():
        value = fn(*inputs)
    value.backward()
    return value, [inputs[i].grad for i in grads]


def save(name, value):
    np.save(os.path.join(OUT, name + ".npy"), value.asnumpy())


def main():
    mxnet = os.environ.get("HN_GOLDEN_BACKEND") == "mxnet"
    for name in CASES:
        for mode in ("eager", "hybridized"):
            hybridize = mode == "hybridized" and not (mxnet and name in MXNET_EAGER_ONLY)
            value, grads = run_case(name, hybridize)
            save(f"{name}_{mode}_loss", value)
            for i, grad in zip(CASES[name][3], grads):
                save(f"{name}_{mode}_grad{i}", grad)


if __name__ == "__main__":
    main()
