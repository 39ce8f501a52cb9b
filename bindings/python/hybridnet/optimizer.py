"""Optimizers with MXNet's mx.optimizer API, run by the library (hn_optimizer_*).

    opt = optimizer.create("sgd", learning_rate=0.1, momentum=0.9, wd=1e-4)
    state = opt.create_state_multi_precision(0, weight)       # the momentum, as MXNet's
    opt.update_multi_precision(0, weight, grad, state)        # weight and state in place

Each update runs the fused op MXNet's optimizer runs (sgd_mom_update, adam_update, ...) with
MXNet's hyper-parameters, learning rates and update counts; states nest as MXNet's do (None, an
array, or tuples of them), so code that reads them keeps working.
"""
import ast

from ._ffi import NULL, ffi, lib
from .base import Handle, c_str, check, error, new_string
from .lr_scheduler import LRScheduler, keyword_arrays, parse_params

__all__ = ["Optimizer", "create", "SGD", "NAG", "Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl",
           "Adamax", "Nadam", "Signum", "FTML", "LAMB", "LARS", "DCASGD", "SGLD", "ccSGD", "Test"]

# Keywords of MXNet's base constructor that this binding takes itself.
_BINDING_KEYWORDS = ("lr_scheduler", "param_dict", "param_idx2name", "sym")


class Optimizer(Handle):
    """An optimizer by MXNet's registry name and keyword arguments (MXNet's Optimizer)."""

    __slots__ = ("lr_scheduler", "param_dict", "_lr_mult", "_wd_mult")
    _free = lib.hn_optimizer_free
    _registry_name = None

    def __init__(self, name=None, **kwargs):
        name = name or self._registry_name
        if name is None:
            raise TypeError("Optimizer needs a name: use optimizer.create(name, ...) or a class "
                            "such as optimizer.SGD")
        lr_scheduler = kwargs.pop("lr_scheduler", None)
        param_dict = kwargs.pop("param_dict", None)
        for key in ("param_idx2name", "sym"):
            if kwargs.pop(key, None):
                raise error("HN_ERR_UNSUPPORTED", f"optimizer: '{key}' is not supported; set "
                            "lr_mult and wd_mult by index (set_lr_mult, set_wd_mult) or pass "
                            "param_dict")
        keys, values, _keep = keyword_arrays(kwargs)
        out = ffi.new("hn_optimizer**")
        check(lib.hn_optimizer_create(c_str(name), keys, values, len(kwargs), out))
        super().__init__(out[0])
        self.lr_scheduler = None
        self.param_dict = param_dict or {}
        self._lr_mult = {}
        self._wd_mult = {}
        if lr_scheduler is not None:
            self._set_scheduler(lr_scheduler)

    @classmethod
    def _wrap(cls, handle, like):
        """An object for `handle`, an optimizer the library made (a Trainer's load_states), of
        the class of `like`, which it replaces. Its scheduler runs in the library; the Python
        object of the old one is not attached."""
        obj = object.__new__(type(like))
        Handle.__init__(obj, handle)
        obj.lr_scheduler = None
        obj.param_dict = like.param_dict
        obj._lr_mult = dict(like._lr_mult)
        obj._wd_mult = dict(like._wd_mult)
        return obj

    def _set_scheduler(self, scheduler):
        if not isinstance(scheduler, LRScheduler):
            raise error("HN_ERR_INVALID_ARGUMENT", "lr_scheduler: expected an "
                        f"lr_scheduler.LRScheduler, got {type(scheduler).__name__}")
        check(lib.hn_optimizer_set_lr_scheduler(self._h, scheduler.handle))
        self.lr_scheduler = scheduler

    # ---- hyper-parameters ------------------------------------------------------------------
    def _params(self):
        return parse_params(new_string(lib.hn_optimizer_params, self._h))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        params = self._params()
        if name in params:
            return params[name]
        raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")

    def __repr__(self):
        return f"{self._params().get('class', 'Optimizer')}({self._params()})"

    @property
    def learning_rate(self):
        lr = ffi.new("float*")
        check(lib.hn_optimizer_get_learning_rate(self._h, lr))
        return lr[0]

    def set_learning_rate(self, lr):
        """Sets the learning rate (an error when a scheduler is set, as MXNet's)."""
        check(lib.hn_optimizer_set_learning_rate(self._h, float(lr)))

    @property
    def rescale_grad(self):
        value = ffi.new("float*")
        check(lib.hn_optimizer_get_rescale_grad(self._h, value))
        return value[0]

    @rescale_grad.setter
    def rescale_grad(self, value):
        check(lib.hn_optimizer_set_rescale_grad(self._h, float(value)))

    @property
    def num_update(self):
        return self._counts(0)[0]

    def _counts(self, index):
        num_update, count = ffi.new("int*"), ffi.new("int*")
        check(lib.hn_optimizer_update_count(self._h, int(index), num_update, count))
        return num_update[0], count[0]

    def _set_mults(self, function, mults, what):
        for key in mults:
            if not isinstance(key, int):
                raise error("HN_ERR_INVALID_ARGUMENT", f"{what}: keys are parameter indices "
                            f"(int), got {key!r}")
        indices = ffi.new("int[]", list(mults))
        values = ffi.new("float[]", [float(v) for v in mults.values()])
        check(function(self._h, indices, values, len(mults)))

    def set_lr_mult(self, args_lr_mult):
        """Learning-rate multipliers by parameter index (MXNet's set_lr_mult by index)."""
        self._lr_mult = dict(args_lr_mult)
        self._set_mults(lib.hn_optimizer_set_lr_mult, self._lr_mult, "set_lr_mult")

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by parameter index (MXNet's set_wd_mult by index)."""
        self._wd_mult = dict(args_wd_mult)
        self._set_mults(lib.hn_optimizer_set_wd_mult, self._wd_mult, "set_wd_mult")

    def _sync_param_dict(self):
        """Parameters' lr_mult / wd_mult (param_dict: index -> gluon Parameter) win, as MXNet's."""
        if not self.param_dict:
            return
        lr = dict(self._lr_mult)
        wd = dict(self._wd_mult)
        for index, param in self.param_dict.items():
            lr[index] = getattr(param, "lr_mult", 1.0)
            wd[index] = getattr(param, "wd_mult", 1.0)
        self._set_mults(lib.hn_optimizer_set_lr_mult, lr, "lr_mult")
        self._set_mults(lib.hn_optimizer_set_wd_mult, wd, "wd_mult")

    # ---- states and updates ----------------------------------------------------------------
    def create_state_multi_precision(self, index, weight):
        """The state MXNet makes for `weight` (with a float32 master copy when multi_precision
        and the weight is float16)."""
        from .ndarray.ndarray import _wrap

        structure = new_string(lambda h, out: lib.hn_optimizer_state_structure(h, weight.handle,
                                                                               out), self._h)
        outs, count = ffi.new("hn_tensor*[]", 8), ffi.new("size_t*")
        check(lib.hn_optimizer_create_state(self._h, int(index), weight.handle, 8, outs, count))
        arrays = [_wrap(outs[i]) for i in range(count[0])]
        return _nest(ast.literal_eval(structure), arrays)

    create_state = create_state_multi_precision

    def update_multi_precision(self, index, weight, grad, state):
        """Updates `weight` (and `state`) in place; index, weight, grad and state may be lists,
        as MXNet's Updater passes them (the SGD family then updates them together)."""
        if isinstance(index, (list, tuple)):
            indices, weights, grads, states = list(index), list(weight), list(grad), list(state)
        else:
            indices, weights, grads, states = [index], [weight], [grad], [state]
        if not len(indices) == len(weights) == len(grads) == len(states):
            raise error("HN_ERR_INVALID_ARGUMENT", f"update: {len(indices)} indices, "
                        f"{len(weights)} weights, {len(grads)} grads, {len(states)} states")
        self._sync_param_dict()
        flat, counts = [], []
        for s in states:
            arrays = _flatten(s)
            flat.extend(arrays)
            counts.append(len(arrays))
        handles = ffi.new("hn_tensor*[]", [a.handle for a in flat]) if flat else NULL
        check(lib.hn_optimizer_update(
            self._h, ffi.new("int[]", [int(i) for i in indices]),
            ffi.new("hn_tensor*[]", [w.handle for w in weights]),
            ffi.new("hn_tensor*[]", [g.handle for g in grads]), len(indices), handles,
            ffi.new("size_t[]", counts)))

    update = update_multi_precision

    def _get_lr(self, index):
        return self.learning_rate * self._lr_mult.get(index, 1.0)


def _flatten(state):
    if state is None:
        return []
    if isinstance(state, (list, tuple)):
        return [a for s in state for a in _flatten(s)]
    return [state]


def _nest(structure, arrays):
    if structure is None:
        return None
    if isinstance(structure, int):
        return arrays[structure]
    return tuple(_nest(s, arrays) for s in structure)


def create(name, **kwargs):
    """The optimizer MXNet registers as `name` (case-insensitive) with these keywords."""
    cls = _CLASSES.get(name.lower())
    return cls(**kwargs) if cls is not None else Optimizer(name, **kwargs)


def _optimizer_class(class_name, registry_name, doc):
    def __init__(self, **kwargs):
        Optimizer.__init__(self, registry_name, **kwargs)

    return type(class_name, (Optimizer,), {"__slots__": (), "__doc__": doc,
                                           "_registry_name": registry_name,
                                           "__init__": __init__})


SGD = _optimizer_class("SGD", "sgd", "SGD with momentum and weight decay (multi_sgd_* ops).")
NAG = _optimizer_class("NAG", "nag", "Nesterov accelerated SGD (nag_mom_update).")
Adam = _optimizer_class("Adam", "adam", "Adam, bias correction folded into lr (adam_update).")
AdaGrad = _optimizer_class("AdaGrad", "adagrad", "AdaGrad (dense arithmetic, as MXNet's).")
RMSProp = _optimizer_class("RMSProp", "rmsprop", "RMSProp, centered or not.")
AdaDelta = _optimizer_class("AdaDelta", "adadelta", "AdaDelta (no learning rate).")
Ftrl = _optimizer_class("Ftrl", "ftrl", "FTRL-proximal (ftrl_update).")
Adamax = _optimizer_class("Adamax", "adamax", "Adamax, Adam's infinity-norm variant.")
Nadam = _optimizer_class("Nadam", "nadam", "Nesterov Adam with a momentum schedule.")
Signum = _optimizer_class("Signum", "signum", "signSGD with momentum (signum_update).")
FTML = _optimizer_class("FTML", "ftml", "Follow the Moving Leader (ftml_update).")
LAMB = _optimizer_class("LAMB", "lamb", "LAMB (lamb_update_phase1/2).")
LARS = _optimizer_class("LARS", "lars", "SGD with layer-wise adaptive rates.")
DCASGD = _optimizer_class("DCASGD", "dcasgd", "Delay-compensated SGD.")
SGLD = _optimizer_class("SGLD", "sgld", "Stochastic gradient Langevin dynamics.")
ccSGD = _optimizer_class("ccSGD", "ccsgd", "MXNet's alias of SGD.")
Test = _optimizer_class("Test", "test", "MXNet's test optimizer: weight += rescaled grad.")

_CLASSES = {c._registry_name: c for c in (SGD, NAG, Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, Adamax,
                                           Nadam, Signum, FTML, LAMB, LARS, DCASGD, SGLD, ccSGD,
                                           Test)}
Optimizer.create_optimizer = staticmethod(create)
