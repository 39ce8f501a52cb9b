"""Random symbols (mx.sym.random), MXNet's functions over the library's random ops: each call
adds a node that draws anew on every run."""
from .. import _distributions
from .symbol import OPS, Symbol

__all__ = list(_distributions.DISTRIBUTIONS) + ["randint", "multinomial", "shuffle"]

_functions = _distributions.make_functions(OPS, Symbol, __name__, imperative=False)
uniform = _functions["uniform"]
normal = _functions["normal"]
exponential = _functions["exponential"]
gamma = _functions["gamma"]
poisson = _functions["poisson"]
negative_binomial = _functions["negative_binomial"]
generalized_negative_binomial = _functions["generalized_negative_binomial"]
randint = _functions["randint"]
multinomial = _functions["multinomial"]
shuffle = _functions["shuffle"]
