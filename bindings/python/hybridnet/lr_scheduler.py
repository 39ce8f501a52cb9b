"""Learning-rate schedulers with MXNet's mx.lr_scheduler API, computed by the library.

    sched = lr_scheduler.FactorScheduler(step=100, factor=0.5, base_lr=0.1)
    opt = optimizer.SGD(learning_rate=0.1, lr_scheduler=sched)
    sched(250)     # 0.025

A scheduler keeps state between calls (FactorScheduler lowers its base_lr as update counts pass
its steps), as MXNet's does; an optimizer given one shares it.
"""
import ast

from ._ffi import ffi, lib
from .base import Handle, c_str, check, new_string, string_array

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


def py_literal(value):
    """A keyword value as the Python literal the library reads ("0.1", "True", "None")."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    return repr(float(value))


def parse_params(text):
    """The library's "name=value" lines as a dict of Python values."""
    params = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def keyword_arrays(kwargs):
    """char*[] of keys and of values (Python literals), with the buffers they point to."""
    keys, key_buffers = string_array(list(kwargs))
    values, value_buffers = string_array([py_literal(v) for v in kwargs.values()])
    return keys, values, (key_buffers, value_buffers)


class LRScheduler(Handle):
    """Base class: the learning rate as a function of the update count (MXNet's LRScheduler)."""

    __slots__ = ()
    _free = lib.hn_lr_scheduler_free
    _kind = None

    def __init__(self, **kwargs):
        if self._kind is None:
            raise TypeError("LRScheduler is abstract: use FactorScheduler, MultiFactorScheduler, "
                            "PolyScheduler or CosineScheduler")
        keys, values, _keep = keyword_arrays(kwargs)
        out = ffi.new("hn_lr_scheduler**")
        check(lib.hn_lr_scheduler_create(c_str(self._kind), keys, values, len(kwargs), out))
        super().__init__(out[0])

    def __call__(self, num_update):
        lr = ffi.new("float*")
        check(lib.hn_lr_scheduler_get(self._h, int(num_update), lr))
        return lr[0]

    def _params(self):
        return parse_params(new_string(lib.hn_lr_scheduler_params, self._h))

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        params = self._params()
        if name in params:
            return params[name]
        raise AttributeError(f"{type(self).__name__} has no attribute '{name}'")

    def __repr__(self):
        return f"{type(self).__name__}({self._params()})"


def _keywords(names, args, kwargs):
    """MXNet's positional arguments, in its constructor's order, joined to the keywords."""
    if len(args) > len(names):
        raise TypeError(f"at most {len(names)} positional arguments, got {len(args)}")
    merged = dict(zip(names, args))
    for key, value in kwargs.items():
        if key in merged:
            raise TypeError(f"argument '{key}' given twice")
        merged[key] = value
    return merged


_WARMUP = ("base_lr", "warmup_steps", "warmup_begin_lr", "warmup_mode")


class FactorScheduler(LRScheduler):
    """base_lr * factor^(floor((num_update - 1) / step)), not below stop_factor_lr."""

    __slots__ = ()
    _kind = "factor"

    def __init__(self, *args, **kwargs):
        super().__init__(**_keywords(("step", "factor", "stop_factor_lr") + _WARMUP, args, kwargs))


class MultiFactorScheduler(LRScheduler):
    """base_lr lowered by factor as the update count passes each of the increasing steps."""

    __slots__ = ()
    _kind = "multifactor"

    def __init__(self, *args, **kwargs):
        super().__init__(**_keywords(("step", "factor") + _WARMUP, args, kwargs))


class PolyScheduler(LRScheduler):
    """final_lr + (base_lr - final_lr) * (1 - t / max_update)^pwr after warmup."""

    __slots__ = ()
    _kind = "poly"

    def __init__(self, *args, **kwargs):
        names = ("max_update", "base_lr", "pwr", "final_lr", "warmup_steps", "warmup_begin_lr",
                 "warmup_mode")
        super().__init__(**_keywords(names, args, kwargs))


class CosineScheduler(LRScheduler):
    """final_lr + (base_lr - final_lr) * (1 + cos(pi t / max_update)) / 2 after warmup."""

    __slots__ = ()
    _kind = "cosine"

    def __init__(self, *args, **kwargs):
        names = ("max_update", "base_lr", "final_lr", "warmup_steps", "warmup_begin_lr",
                 "warmup_mode")
        super().__init__(**_keywords(names, args, kwargs))
