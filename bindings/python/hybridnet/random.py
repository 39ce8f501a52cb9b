"""The library's global random generator (mx.random): seed() makes nd.random draws and weight
initialization reproducible, the same sequence as in C++, Java and R for the same seed."""
from ._ffi import lib
from .base import check
from .ndarray.random import normal, randn, uniform

__all__ = ["seed", "normal", "uniform", "randn"]


def seed(seed_state, ctx="all"):
    """Seeds the generator nd.random and the initializers draw from."""
    check(lib.hn_seed(int(seed_state)))
