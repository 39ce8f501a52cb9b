"""Random arrays (mx.nd.random), MXNet's functions over the library's random ops. normal and
uniform with number parameters draw through hn_tensor_random_normal/uniform: the same values the
C++ NDArray::RandomNormal/RandomUniform and the initializers draw after the same seed."""
import numbers
import sys

from .. import _distributions
from .._ffi import ffi, lib
from ..base import check, dtype_code
from .ndarray import OPS, NDArray, _check_context, _wrap

__all__ = list(_distributions.DISTRIBUTIONS) + ["randint", "multinomial", "shuffle", "randn"]

# normal and uniform are redefined below, over these for array parameters
_from_ops = _distributions.install(sys.modules[__name__], OPS, NDArray, imperative=True,
                                   check_context=_check_context)


def _direct(function, a, b, shape, dtype, ctx, out, kwargs):
    """The draw through the C API's generator when the parameters are numbers."""
    if kwargs or not (isinstance(a, numbers.Real) and isinstance(b, numbers.Real)):
        return _from_ops[function](a, b, shape=shape, dtype=dtype, ctx=ctx, out=out, **kwargs)
    _check_context(ctx)
    if out is not None:
        shape = out.shape
    elif shape is None:
        shape = (1,)
    elif isinstance(shape, numbers.Integral):
        shape = (shape,)
    dtype = dtype if dtype is not None else (out.dtype if out is not None else "float32")
    result = ffi.new("hn_tensor**")
    draw = lib.hn_tensor_random_normal if function == "normal" else lib.hn_tensor_random_uniform
    check(draw(dtype_code(dtype), tuple(shape), len(shape), float(a), float(b), result))
    value = _wrap(result[0])
    if out is not None:
        out[:] = value
        return out
    return value


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples of N(loc, scale^2): numbers draw `shape` values ((1,) by default, float32),
    NDArrays draw `shape` values per element (the _sample_normal op)."""
    return _direct("normal", loc, scale, shape, dtype, ctx, out, kwargs)


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """Samples of U[low, high): numbers draw `shape` values ((1,) by default, float32),
    NDArrays draw `shape` values per element (the _sample_uniform op)."""
    return _direct("uniform", low, high, shape, dtype, ctx, out, kwargs)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, **kwargs):
    """Samples of N(loc, scale^2) of shape `shape` given as separate integers."""
    return normal(loc, scale, shape or None, dtype, ctx, **kwargs)
