"""Weight initializers with MXNet's names, keyword arguments and dumps() text (mx.init). An
initializer is its dumps() text, '["xavier", {"rnd_type": "uniform", "factor_type": "avg",
"magnitude": 3}]', which the library's table of initializers parses and runs. The random ones
draw from MXNet's CPU streams, so after hybridnet.random.seed(s) they give the weights
mx.random.seed(s) gives in MXNet 1.9.1; Orthogonal draws the same matrix but orthonormalizes it
differently (see its docstring)."""
import json
import os
import tempfile

from ._ffi import lib
from .base import c_str, check

__all__ = ["InitDesc", "Initializer", "Zero", "One", "Constant", "Uniform", "Normal",
           "Orthogonal", "Xavier", "MSRAPrelu", "Bilinear", "LSTMBias", "Mixed", "Load", "create",
           "spec"]


class InitDesc(str):
    """A parameter's name with its attributes (MXNet's InitDesc); attrs["__init__"] holds the
    parameter's own initializer."""

    def __new__(cls, name, attrs=None, global_init=None):
        desc = super().__new__(cls, name)
        desc.attrs = attrs or {}
        desc.global_init = global_init
        return desc


class Initializer:
    """Base class: the lower-cased class name and the keyword arguments, MXNet's defaults
    included, in MXNet's order."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def dumps(self):
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Fills NDArray `arr` in place for the parameter `desc` (an InitDesc or a name) as
        MXNet's Initializer.__call__: the desc's own "__init__" initializer when it has one, else
        by the name's ending ("weight": this initializer; "bias", "beta", "min": zeros; "gamma",
        "max": ones)."""
        own = getattr(desc, "attrs", {}).get("__init__", "")
        text, weight_rule = (spec(own), 1) if own else (self.dumps(), 0)
        check(lib.hn_initializer_fill(c_str(text), c_str(str(desc)), weight_rule, arr._h))

    def __eq__(self, other):
        return isinstance(other, Initializer) and self.dumps() == other.dumps()

    def __hash__(self):
        return hash(self.dumps())

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self._kwargs.items())})"


class Zero(Initializer):
    """All zeros (registered as "zeros" too)."""


class One(Initializer):
    """All ones (registered as "ones" too)."""


class Constant(Initializer):
    """Every element `value` (a number)."""

    def __init__(self, value):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"Constant takes a number, got {value!r}")
        super().__init__(value=value)


class Uniform(Initializer):
    """U(-scale, scale); MXNet's default initializer."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)


class Normal(Initializer):
    """N(0, sigma^2)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)


class Orthogonal(Initializer):
    """scale times a (semi-)orthogonal matrix made from a rand_type ("uniform" or "normal")
    draw. The draw is MXNet's; MXNet then keeps a factor of numpy's SVD, hybridnet the
    Gram-Schmidt factor, so the values differ from MXNet's (both are orthogonal)."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)


class Xavier(Initializer):
    """Xavier/Glorot: rnd_type "uniform" or "gaussian", factor_type "avg", "in" or "out"."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)


class MSRAPrelu(Initializer):
    """He et al.: Xavier("gaussian", factor_type, 2 / (1 + slope ** 2))."""

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__(factor_type=factor_type, slope=slope)


class Bilinear(Initializer):
    """The bilinear upsampling kernel (4-D weights)."""


class LSTMBias(Initializer):
    """Zeros except forget_bias on the forget gate's quarter of an LSTM bias."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)


class Mixed(Initializer):
    """The initializer of the first regular expression matching the start of the name."""

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ValueError(f"Mixed: {len(patterns)} patterns but {len(initializers)} "
                             "initializers")
        super().__init__(patterns=list(patterns),
                         initializers=[spec(i) for i in initializers])


class Load(Initializer):
    """Values by name from a .params file or a dict of NDArrays ("arg:"/"aux:" prefixes
    dropped); other names use default_init."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, dict):
            from .ndarray import save

            # The library reads the values when the initializer is used: keep them in a file
            # that lives as long as this object.
            self._file = tempfile.NamedTemporaryFile(suffix=".params", delete=False)
            self._file.close()
            save(self._file.name, param)
            param = self._file.name
        elif not isinstance(param, (str, os.PathLike)):
            raise TypeError(f"Load takes a file name or a dict of NDArrays, got {param!r}")
        super().__init__(param=os.fspath(param),
                         default_init=spec(default_init) if default_init is not None else None)
        self.verbose = verbose

    def __del__(self):
        path = getattr(getattr(self, "_file", None), "name", None)
        if path and os.path.exists(path):
            os.remove(path)


_BY_NAME = {"zeros": Zero, "ones": One}
_BY_NAME.update({c.__name__.lower(): c for c in (Zero, One, Constant, Uniform, Normal,
                                                 Orthogonal, Xavier, MSRAPrelu, Bilinear,
                                                 LSTMBias)})


def create(init, **kwargs):
    """An initializer from an instance, a registered name ("xavier", "zeros") with keyword
    arguments, or dumps() text (MXNet's mx.init.create)."""
    if isinstance(init, Initializer):
        return init
    if isinstance(init, str) and init.startswith("["):
        name, args = json.loads(init)
        return create(name, **args)
    if isinstance(init, str) and init.lower() in _BY_NAME:
        return _BY_NAME[init.lower()](**kwargs)
    raise ValueError(f"unknown initializer {init!r} (known: {', '.join(sorted(_BY_NAME))})")


def spec(init):
    """What the C API takes for an initializer argument: None, a registered name ("zeros",
    "xavier") or an Initializer's dumps() text."""
    if init is None or isinstance(init, str):
        return init
    if isinstance(init, Initializer):
        return init.dumps()
    raise TypeError(f"expected an initializer (mx.init.Xavier(), 'zeros', ...), got {init!r}")
