"""Losses (mx.gluon.loss): MXNet 1.9's classes, arguments and call signatures over the library's
loss kinds, so they run eagerly or hybridized and under autograd.record() like any layer:

    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    with autograd.record():
        loss = loss_fn(net(x), label)      # one value per sample
    loss.backward()

Arguments left out (None) take the library's defaults, which are MXNet's.
"""
import inspect

from .. import ndarray as _nd
from ..base import error
from ..ndarray.ndarray import NDArray
from .block import HybridBlock
from .nn import _LibraryLayer

__all__ = ["Loss"]


class Loss(HybridBlock):
    """MXNet's base of the losses, for losses written in Python: subclass it and write
    hybrid_forward(self, F, pred, label, ...); _apply_weighting and _reshape_like help as in
    MXNet."""

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """loss times sample_weight (broadcast) when given, then times the number weight."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _reshape_like(F, x, y):
    """x with y's shape."""
    return x.reshape(y.shape) if F is _nd else F.reshape_like(x, y)


class _LibraryLoss(_LibraryLayer, Loss):
    """A loss of the library: call it with MXNet's forward arguments (pred, label,
    sample_weight=None, ... as the class says); a None between given arguments is MXNet's None."""

    _inputs = ()
    _num_required = 2

    def _call_general(self, args, kwargs):
        # Block.__call__ ran NDArrays given by position; the rest are bound to the inputs here.
        return HybridBlock._call_general(self, self._bind(args, kwargs), {})

    __repr__ = HybridBlock.__repr__

    def _bind(self, args, kwargs):
        name = type(self).__name__
        if len(args) > len(self._inputs):
            raise TypeError(f"{name} takes at most {len(self._inputs)} inputs "
                            f"({', '.join(self._inputs)}), got {len(args)}")
        values = dict(zip(self._inputs, args))
        for key, value in kwargs.items():
            if key not in self._inputs:
                raise TypeError(f"{name}() got an unexpected input '{key}' (inputs: "
                                f"{', '.join(self._inputs)})")
            if key in values:
                raise TypeError(f"{name}() got the input '{key}' twice")
            values[key] = value
        given = [values.get(n) for n in self._inputs]
        while given and given[-1] is None:
            given.pop()
        for index, value in enumerate(given):
            if value is None:
                given[index] = self._fill(index, given)
        return given

    def _fill(self, index, given):
        """The value standing for a None input before a given one."""
        if index < self._num_required:
            raise error("HN_ERR_INVALID_ARGUMENT",
                        f"{type(self).__name__}: the input {self._inputs[index]} is required")
        raise error("HN_ERR_UNSUPPORTED", f"{type(self).__name__}: {self._inputs[index]}=None "
                    "followed by a given input is not supported")


def _eager(loss, given, what):
    if not all(isinstance(v, NDArray) for v in given if v is not None):
        raise error("HN_ERR_UNSUPPORTED", f"{type(loss).__name__}: {what}=None followed by a "
                    "given input is supported on NDArrays only, not on symbols")


def _loss(name, arg_names, inputs, doc, base=_LibraryLoss, num_required=2):
    cls = type(name, (base,), {"_kind": name, "_arg_names": tuple(arg_names),
                               "_inputs": tuple(inputs), "_num_required": num_required,
                               "_fast_inputs": min(len(inputs), base._fast_inputs),
                               "__doc__": doc, "__module__": __name__})
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)]
    parameters += [inspect.Parameter(a, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None)
                   for a in arg_names]
    parameters += [inspect.Parameter(a, inspect.Parameter.KEYWORD_ONLY, default=None)
                   for a in ("prefix", "params")]

    signature = inspect.Signature(parameters)

    def init(self, *args, **kwargs):
        self._options = signature.bind(self, *args, **kwargs).arguments  # for __call__ to read
        _LibraryLayer.__init__(self, *args, **kwargs)

    init.__signature__ = signature
    cls.__init__ = init
    globals()[name] = cls
    __all__.append(name)
    return cls


class _SigmoidBCE(_LibraryLoss):
    def _fill(self, index, given):
        if index == 2:  # sample_weight None with a pos_weight: ones (multiplying by 1 is exact)
            _eager(self, given, "sample_weight")
            return _nd.ones(given[0].shape)
        return super()._fill(index, given)


class _CTC(_LibraryLoss):
    def __call__(self, pred, label, pred_lengths=None, label_lengths=None, sample_weight=None):
        if label_lengths is None and sample_weight is not None:
            # Without label lengths the per-sample weights are applied here, after `weight`.
            return _nd.broadcast_mul(self(pred, label, pred_lengths), sample_weight)
        return _LibraryLoss.__call__(self, pred, label, pred_lengths, label_lengths,
                                     sample_weight)

    def _fill(self, index, given):
        if index == 2:  # every sequence at its full length: the same as no lengths
            _eager(self, given, "pred_lengths")
            shape = given[0].shape
            batch_first = (self._options.get("layout") or "NTC") == "NTC"
            return _nd.full((shape[0 if batch_first else 1],), shape[1 if batch_first else 0])
        return super()._fill(index, given)


class _PoissonNLL(_LibraryLoss):
    def __call__(self, pred, target, sample_weight=None, epsilon=1e-08):
        made_with = self._options.get("epsilon") or 1e-08
        if epsilon != made_with:
            raise error("HN_ERR_UNSUPPORTED", f"PoissonNLLLoss: epsilon={epsilon} at the call; "
                        f"this loss was made with epsilon={made_with} (pass "
                        "PoissonNLLLoss(epsilon=...) to change it)")
        return _LibraryLoss.__call__(self, pred, target, sample_weight)


_SAMPLE = ["pred", "label", "sample_weight"]
_loss("L2Loss", ["weight", "batch_axis"], _SAMPLE,
      "weight / 2 * (label - pred)^2, the mean per sample.")
_loss("L1Loss", ["weight", "batch_axis"], _SAMPLE, "|label - pred|, the mean per sample.")
_loss("SigmoidBinaryCrossEntropyLoss", ["from_sigmoid", "weight", "batch_axis"],
      _SAMPLE + ["pos_weight"],
      "Binary cross entropy of logits (or probabilities with from_sigmoid=True); pos_weight "
      "scales the positive term.", base=_SigmoidBCE)
_loss("SoftmaxCrossEntropyLoss", ["axis", "sparse_label", "from_logits", "weight", "batch_axis"],
      _SAMPLE, "-log softmax(pred)[label] (class indices, or distributions with "
      "sparse_label=False), the mean per sample.")
_loss("KLDivLoss", ["from_logits", "axis", "weight", "batch_axis"], _SAMPLE,
      "label * (log(label) - pred) with pred log probabilities, the sum per sample.")
_loss("CTCLoss", ["layout", "label_layout", "weight"],
      ["pred", "label", "pred_lengths", "label_lengths", "sample_weight"],
      "Connectionist temporal classification; the last class is the blank, labels are padded "
      "with -1.", base=_CTC)
_loss("HuberLoss", ["rho", "weight", "batch_axis"], _SAMPLE,
      "Squared error below rho, absolute error above it, the mean per sample.")
_loss("HingeLoss", ["margin", "weight", "batch_axis"], _SAMPLE,
      "max(0, margin - pred * label) for labels -1/1, the mean per sample.")
_loss("SquaredHingeLoss", ["margin", "weight", "batch_axis"], _SAMPLE,
      "max(0, margin - pred * label)^2 for labels -1/1, the mean per sample.")
_loss("LogisticLoss", ["weight", "batch_axis", "label_format"], _SAMPLE,
      "log(1 + exp(-pred * label)) for 'signed' (-1/1) or 'binary' (0/1) labels.")
_loss("TripletLoss", ["margin", "weight", "batch_axis"], ["pred", "positive", "negative"],
      "max(0, |pred - positive|^2 - |pred - negative|^2 + margin) per sample.",
      num_required=3)
_loss("PoissonNLLLoss", ["weight", "from_logits", "batch_axis", "compute_full", "epsilon"],
      ["pred", "target", "sample_weight"],
      "Poisson negative log likelihood, the mean over every element.", base=_PoissonNLL)
_loss("CosineEmbeddingLoss", ["weight", "batch_axis", "margin"],
      ["input1", "input2", "label", "sample_weight"],
      "1 - cos(input1, input2) for label 1, max(0, cos - margin) for label -1; shape (N, 1).",
      num_required=3)
_loss("SDMLLoss", ["smoothing_parameter", "weight", "batch_axis"], ["x1", "x2"],
      "Smoothed deep metric learning over the batch's (x1[i], x2[j]) pairs.")

SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss  # noqa: F821 - made by _loss
SoftmaxCELoss = SoftmaxCrossEntropyLoss  # noqa: F821 - made by _loss
__all__ += ["SigmoidBCELoss", "SoftmaxCELoss"]
