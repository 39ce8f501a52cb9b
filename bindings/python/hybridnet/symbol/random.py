"""Random symbols (mx.sym.random), MXNet's functions over the library's random ops: each call
adds a node that draws anew on every run."""
import sys

from .. import _distributions
from .symbol import OPS, Symbol

__all__ = list(_distributions.DISTRIBUTIONS) + ["randint", "multinomial", "shuffle"]

_distributions.install(sys.modules[__name__], OPS, Symbol, imperative=False)
