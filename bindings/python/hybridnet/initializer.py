"""Weight initializers with MXNet's names (mx.init). An initializer is its dumps() text,
'["xavier", {"magnitude": 2.24}]', which the library parses: arguments left out take the
library's defaults (MXNet's)."""
import json

__all__ = ["Initializer", "Uniform", "Normal", "Xavier", "Zero", "One", "Constant", "spec"]


class Initializer:
    """Base class: the lower-cased class name and the keyword arguments given."""

    def __init__(self, **kwargs):
        self._kwargs = {k: v for k, v in kwargs.items() if v is not None}

    def dumps(self):
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())})"


class Uniform(Initializer):
    """U(-scale, scale); MXNet's default initializer (scale 0.07)."""

    def __init__(self, scale=None):
        super().__init__(scale=scale)


class Normal(Initializer):
    """N(0, sigma^2) (sigma 0.01 by default)."""

    def __init__(self, sigma=None):
        super().__init__(sigma=sigma)


class Xavier(Initializer):
    """Xavier/Glorot: rnd_type "uniform" or "gaussian", factor_type "avg", "in" or "out",
    magnitude (3 by default)."""

    def __init__(self, rnd_type=None, factor_type=None, magnitude=None):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)


class Zero(Initializer):
    """All zeros."""


class One(Initializer):
    """All ones."""


class Constant(Initializer):
    """Every element `value`."""

    def __init__(self, value):
        super().__init__(value=value)


def spec(init):
    """What the C API takes for an initializer argument: None, a registered name ("zeros",
    "xavier") or an Initializer's dumps() text."""
    if init is None or isinstance(init, str):
        return init
    if isinstance(init, Initializer):
        return init.dumps()
    raise TypeError(f"expected an initializer (mx.init.Xavier(), 'zeros', ...), got {init!r}")
