"""gluon.Trainer in MXNet's shape, run by the library (hn_trainer_*).

    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.001})
    with autograd.record():
        loss = loss_fn(net(x), y)
    loss.backward()
    trainer.step(batch_size)          # gradients scaled by 1/batch_size
    trainer.save_states("net.states")  # MXNet's .states file: MXNet's Trainer loads it too
"""
from .. import _native
from .. import optimizer as opt
from .._ffi import ffi, lib
from ..base import c_str, check, error, tree_lock
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]

# MXNet's kvstore choices that mean "this process, these devices": one CPU context here.
_LOCAL_KVSTORES = (None, "device", "local")


class Trainer(_native.TrainerBase):
    """Applies an optimizer to parameters (MXNet's gluon.Trainer on one CPU context)."""

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got "
                             f"{type(params)}.")
        for param in params:
            if not isinstance(param, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got "
                                 f"list of {type(param)}.")
        if kvstore not in _LOCAL_KVSTORES and not hasattr(kvstore, "type"):
            raise error("HN_ERR_UNSUPPORTED", f"Trainer: kvstore '{kvstore}' is not supported; "
                        "hybridnet trains on one CPU context ('device', 'local' or None)")
        if compression_params:
            raise error("HN_ERR_UNSUPPORTED", "Trainer: gradient compression needs a "
                        "distributed kvstore, which hybridnet does not have")
        if update_on_kvstore:
            raise error("HN_ERR_UNSUPPORTED", "Trainer: update_on_kvstore=True needs a kvstore; "
                        "updates run in the trainer")
        optimizer_params = dict(optimizer_params or {})
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise ValueError("optimizer_params must be None if optimizer is an instance of "
                                 "Optimizer instead of str")
        else:
            optimizer = opt.create(optimizer, **optimizer_params)
        self._params = list(params)
        self._optimizer = optimizer
        blocks = [p._block._h for p in self._params]
        names = [ffi.new("char[]", p.name.encode()) for p in self._params]
        out = ffi.new("hn_trainer**")
        with tree_lock:
            check(lib.hn_trainer_create(blocks, names, len(names), optimizer._h, out))
        self._h = ffi.gc(out[0], lib.hn_trainer_free)

    @property
    def learning_rate(self):
        lr = ffi.new("float*")
        check(lib.hn_trainer_get_learning_rate(self._h, lr))
        return lr[0]

    def set_learning_rate(self, lr):
        """Sets a new learning rate (an error when the optimizer has a scheduler)."""
        check(lib.hn_trainer_set_learning_rate(self._h, float(lr)))

    @property
    def optimizer(self):
        return self._optimizer

    def allreduce_grads(self):
        """Sums gradients over devices: one context here, so nothing to sum."""
        check(lib.hn_trainer_allreduce_grads(self._h))

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of step (after allreduce_grads and your changes to the gradients)."""
        with tree_lock:
            check(lib.hn_trainer_update(self._h, int(batch_size), int(ignore_stale_grad)))

    def save_states(self, fname):
        """Writes the optimizer and its states as MXNet 1.9.1's .states file."""
        check(lib.hn_trainer_save_states(self._h, c_str(str(fname))))

    def load_states(self, fname):
        """Reads a .states file of MXNet 1.9.1 or save_states (same optimizer, same
        parameters); the optimizer becomes the one the file holds."""
        with tree_lock:
            check(lib.hn_trainer_load_states(self._h, c_str(str(fname))))
        out = ffi.new("hn_optimizer**")
        check(lib.hn_trainer_optimizer(self._h, out))
        self._optimizer = opt.Optimizer._wrap(out[0], self._optimizer)
